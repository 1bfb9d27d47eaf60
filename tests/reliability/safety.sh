#!/bin/sh
# Safety: a symlink planted at a log path is not followed (its target untouched, the
# records go to stderr); a FIFO planted there does not hang the program; programs that never
# use CUDA (make, cc, python3, sh, a make -j2 of a small multi-file project) behave exactly
# the same with the object preloaded and leave no file behind, even with every GRAPHCHECK_* path and GRAPHCHECK_VERBOSE set.
# Usage: sh tests/reliability/safety.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
[ "$TSAN" = 1 ] && skip_suite "under TSan: it preloads the object into make, sh, cc and python3, which are not built with TSan (the object cannot load there)"

"$REL" plain > "$tmp/native.out" 2> /dev/null
nrc=$?

# ---- symlinks at the log paths -----------------------------------------------------------
mkdir -p "$tmp/s"
printf 'precious\n' > "$tmp/target"
cp "$tmp/target" "$tmp/target.orig"
for var in LOG_FILE JSON_FILE TRACE_FILE SUMMARY_FILE; do
	for kind in existing dangling; do
		rm -f "$tmp/s/link" "$tmp/gone"
		if [ $kind = existing ]; then ln -s "$tmp/target" "$tmp/s/link"; else ln -s "$tmp/gone" "$tmp/s/link"; fi
		others="GRAPHCHECK_LOG_FILE=$tmp/s/log.txt"
		[ $var = LOG_FILE ] && others="GRAPHCHECK_JSON_FILE=$tmp/s/log.json"
		rm -f "$tmp/s/log.txt" "$tmp/s/log.json"
		timeout 60 env "GRAPHCHECK_$var=$tmp/s/link" "$others" LD_PRELOAD="$PRE" "$REL" plain \
			> "$tmp/gc.out" 2> "$tmp/gc.err"
		grc=$?
		untouched=no
		if [ $kind = existing ]; then
			cmp -s "$tmp/target" "$tmp/target.orig" && untouched=yes
		else
			[ ! -e "$tmp/gone" ] && untouched=yes
		fi
		[ -L "$tmp/s/link" ] || untouched="no (the link was replaced)"
		case $var in
		LOG_FILE) where=$(grep -c '^==graphcheck== error: double-free' "$tmp/gc.err") ;;
		JSON_FILE) where=$(grep -c '^{"type":"violation".*"rule":"double-free"' "$tmp/gc.err") ;;
		*) where=1 ;;  # the trace is dropped, the summary file is skipped: nothing to redirect
		esac
		msgs=$(grep -c '^graphcheck: ' "$tmp/gc.err")
		want_msgs=1  # one message each, the summary file too
		[ $grc -eq $nrc ] && cmp -s "$tmp/native.out" "$tmp/gc.out" && [ "$untouched" = yes ] &&
			[ "$where" -eq 1 ] && [ "$msgs" -eq $want_msgs ] &&
			ok "GRAPHCHECK_$var at a symlink ($kind target): not followed, target untouched, $msgs message(s)$( [ $var = LOG_FILE ] || [ $var = JSON_FILE ] && echo ', records on stderr')" ||
			bad "GRAPHCHECK_$var at a symlink ($kind): rc $nrc/$grc, target untouched: $untouched, records on stderr: $where, messages: $msgs"
	done
done
rm -f "$tmp/s/link"

# ---- a FIFO at the log path: nobody reads it ------------------------------------------------
if mkfifo "$tmp/s/fifo" 2>/dev/null; then
	for var in LOG_FILE JSON_FILE; do
		timeout 2 env "GRAPHCHECK_$var=$tmp/s/fifo" LD_PRELOAD="$PRE" "$REL" plain > "$tmp/gc.out" 2> "$tmp/gc.err"
		grc=$?
		if [ $grc -eq 124 ]; then
			bug "GRAPHCHECK_$var at a FIFO nobody reads: the program hangs at its first CUDA call (log.c open_log: open(O_WRONLY) of a FIFO blocks until a reader comes; O_NONBLOCK, or refusing what is not a regular file or character device, would not)"
		elif [ $grc -eq $nrc ] && cmp -s "$tmp/native.out" "$tmp/gc.out"; then
			ok "GRAPHCHECK_$var at a FIFO nobody reads: the program runs on"
		else
			bad "GRAPHCHECK_$var at a FIFO: rc $nrc/$grc"
		fi
	done
fi

# ---- programs that never use CUDA -----------------------------------------------------------
mkdir -p "$tmp/proj" "$tmp/out"
unset MAKEFLAGS MAKELEVEL MFLAGS  # the inner make is not a sub-make of `make test`
cat > "$tmp/proj/hello.c" <<'EOF'
#include <stdio.h>
int main(void) { puts("hello from a program without CUDA"); return 3; }
EOF
# multi: what a build of this project does, small: parallel compiles with dependency files,
# a generated header, an archive, a sub-make, a link, the program run (-s: parallel jobs
# print in any order).
mkdir -p "$tmp/proj/sub"
for i in 1 2 3 4; do
	printf '#include "gen.h"\nint f%s(void) { return GEN + %s; }\n' $i $i > "$tmp/proj/sub/f$i.c"
done
cat > "$tmp/proj/sub/Makefile" <<'EOF'
OBJS := f1.o f2.o f3.o f4.o
libf.a: $(OBJS)
	$(AR) rcs $@ $(OBJS)
gen.h:
	echo '#define GEN 10' > $@
$(OBJS): gen.h
%.o: %.c
	$(CC) -O1 -MMD -MP -c -o $@ $<
-include $(OBJS:.o=.d)
EOF
cat > "$tmp/proj/Makefile" <<'EOF'
all: hello
	@echo "make: built $$(ls hello)"; cat hello.c | wc -l; sh -c 'echo sub-shell $$0' x
	-./hello
hello: hello.c
	$(CC) -O0 -o $@ hello.c
multi:
	$(MAKE) -C sub libf.a
	printf 'int f1(void);\nint main(void) { return f1() - 11; }\n' > m.c
	$(CC) -O0 -o m m.c sub/libf.a
	./m && echo "multi: ran"
clean:
	rm -f hello m m.c sub/*.o sub/*.d sub/*.a sub/gen.h
EOF
all_set="GRAPHCHECK_LOG_FILE=$tmp/out/%p.log GRAPHCHECK_JSON_FILE=$tmp/out/%p.json GRAPHCHECK_TRACE_FILE=$tmp/out/%p.trace GRAPHCHECK_SUMMARY_FILE=$tmp/out/summary GRAPHCHECK_VERBOSE=1"
# same_without_cuda NAME CMD...: output, stderr and status equal, and no file appears.
same_without_cuda() {
	name=$1
	shift
	(cd "$tmp/proj" && make -s clean > /dev/null 2>&1)
	(cd "$tmp/proj" && timeout 120 "$@") > "$tmp/a.out" 2> "$tmp/a.err"
	a=$?
	(cd "$tmp/proj" && make -s clean > /dev/null 2>&1)
	(cd "$tmp/proj" && timeout 120 env $all_set LD_PRELOAD="$PRE" "$@") > "$tmp/b.out" 2> "$tmp/b.err"
	b=$?
	files=$(ls -A "$tmp/out")
	if [ $a -eq $b ] && cmp -s "$tmp/a.out" "$tmp/b.out" && cmp -s "$tmp/a.err" "$tmp/b.err" && [ -z "$files" ]; then
		ok "preloaded into '$name': same output, stderr and status ($a), no log file (every GRAPHCHECK_* path set)"
	else
		bad "preloaded into '$name': status $a vs $b, files: '$(echo $files)'"
		diff "$tmp/a.out" "$tmp/b.out" | head -3
		diff "$tmp/a.err" "$tmp/b.err" | head -3
	fi
	rm -rf "$tmp/out"/* "$tmp/out"/.[!.]* 2>/dev/null
}
same_without_cuda "make (cc, sh, cat, a program)" make
same_without_cuda "make -n" make -n
same_without_cuda "make -s -j2 (sub-make, parallel compiles, dependency files, ar, a link)" make -s -j2 multi
same_without_cuda "python3 -c pass" python3 -c pass
same_without_cuda "python3 -c 'import ctypes; print(...)'" python3 -c 'import ctypes, sys; ctypes.CDLL(None); print(sys.version_info[0])'
same_without_cuda "sh -c 'exit 7'" sh -c 'ls hello.c; exit 7'
# Linked with libcuda, loads it, never calls it (its usage message, exit 2).
same_without_cuda "rel_prog without arguments (libcuda loaded, never called)" "$(cd "$(dirname "$REL")" && pwd)/rel_prog"

# An ASan-built program with its leak checker on (the default): graphcheck's own objects stay
# reachable to LeakSanitizer (execs and captures in slabs, not behind the hash tables' tagged
# links alone), so a program that leaves a graph exec or a capture behind exits as it would
# without graphcheck (status 1 and "Direct leak ... gc_exec_instantiated" before).
if [ "$ASAN" = 1 ]; then
	PL=$BUILD/fakecuda/prog_linked
	for sc in graph-memory rules; do
		ASAN_OPTIONS=detect_leaks=1:verify_asan_link_order=0 "$PL" $sc > /dev/null 2>&1
		n=$?
		ASAN_OPTIONS=detect_leaks=1:verify_asan_link_order=0 GRAPHCHECK_LOG_FILE=/dev/null \
			LD_PRELOAD="$PRE" "$PL" $sc > "$tmp/lsan.out" 2>&1
		g=$?
		[ $g -eq $n ] && ! grep -q "leak of" "$tmp/lsan.out" &&
			ok "LeakSanitizer on, prog_linked $sc: status $g as natively, no leak of graphcheck's" ||
			bad "LeakSanitizer on, prog_linked $sc: status $g (native $n): $(grep -m1 -A2 'leak of' "$tmp/lsan.out" | tr '\n' ' ')"
	done
else
	echo "skip LeakSanitizer with graphcheck's objects (an ASan build's check)"
fi

finish
