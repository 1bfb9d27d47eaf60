#!/bin/sh
# fork: a child that goes on using CUDA logs to its own %p files (its own records, its own
# summary); a child that only execs leaves no trace of graphcheck (no extra log files, same
# exit); forks while other threads are inside intercepted calls do not deadlock the child.
# Usage: sh tests/reliability/fork.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
# The writer is what is tested here: every record written to the text log, repeats too.
export GRAPHCHECK_WRITE_REPEATS=1
[ "$TSAN" = 1 ] && skip_suite "under TSan: the fork+exec children exec programs not built with TSan (the object cannot load there) and TSan does not support fork while threads start up"

# pid_run DIR MODE [ARGS...]: rel_prog MODE ARGS under graphcheck, each process logging to
# DIR/%p.json and DIR/%p.txt (DIR made); its stdout in gc.out, stderr in gc.err; sets rc (its
# status) and ppid (the parent's pid, as rel_prog wrote it).
pid_run() {
	d=$1
	shift
	mkdir -p "$d"
	GRAPHCHECK_JSON_FILE=$d/%p.json GRAPHCHECK_LOG_FILE=$d/%p.txt \
		timeout 60 env REL_PID_FILE=$tmp/pid LD_PRELOAD="$PRE" "$REL" "$@" > "$tmp/gc.out" 2> "$tmp/gc.err"
	rc=$?
	ppid=$(cat "$tmp/pid")
}

# ---- a child that goes on using CUDA ------------------------------------------------------
"$REL" fork-cuda > "$tmp/native.out" 2>&1
d=$tmp/cuda
mkdir -p "$d"
GRAPHCHECK_JSON_FILE=$d/%p.json GRAPHCHECK_LOG_FILE=$d/%p.txt GRAPHCHECK_SUMMARY_FILE=$d/summary \
	timeout 60 env REL_PID_FILE=$tmp/pid LD_PRELOAD="$PRE" "$REL" fork-cuda > "$tmp/gc.out" 2> "$tmp/gc.err"
rc=$?
ppid=$(cat "$tmp/pid")
[ $rc -eq 0 ] && cmp -s "$tmp/native.out" "$tmp/gc.out" && [ ! -s "$tmp/gc.err" ] &&
	ok "fork-cuda: same output and status, nothing on stderr" ||
	{ bad "fork-cuda: rc $rc, output or stderr differ"; diff "$tmp/native.out" "$tmp/gc.out" | head -5; head -c 300 "$tmp/gc.err"; }
njson=$(ls "$d" | grep -c '\.json$')
ntxt=$(ls "$d" | grep -c '\.txt$')
cpid=$(ls "$d" | sed -n 's/^\([0-9]*\)\.json$/\1/p' | grep -vx "$ppid" | head -n 1)
[ "$njson" -eq 2 ] && [ "$ntxt" -eq 2 ] && [ -n "$cpid" ] && [ -f "$d/$ppid.json" ] &&
	ok "fork-cuda: two JSON and two text logs, one per process" ||
	bad "fork-cuda: files: $(ls "$d" | tr '\n' ' ')"
# check_log PID ERRORS: the JSON log of PID holds start, ERRORS double frees and the summary,
# every line its own pid; the text log ends with its own summary line.
check_log() {
	f=$d/$1.json
	if ! valid_jsonl "$f"; then
		bad "pid $2: $f malformed or missing"
		return
	fi
	types=$(jq -r '.type' "$f" | tr '\n' ' ')
	want="start $(i=0; while [ $i -lt $2 ]; do printf 'violation '; i=$((i + 1)); done)summary "
	pids=$(jq -r '.pid' "$f" | sort -u)
	s=$(jq -c 'select(.type == "summary") | [.errors, .warnings, .records]' "$f")
	[ "$types" = "$want" ] && [ "$pids" = "$1" ] && [ "$s" = "[$2,0,$2]" ] &&
		[ "$(violations "$f")" = "$2 double-free" ] &&
		ok "$3 $1: start, $2 double-free, summary [$2,0,$2], all lines its own pid" ||
		bad "$3 $1: lines '$types', pids '$(echo $pids)', summary '$s'"
	last=$(tail -n 1 "$d/$1.txt" 2>/dev/null)
	[ "$last" = "==graphcheck== graphcheck: $2 errors, 0 warnings" ] &&
		[ "$(grep -c '^==graphcheck== error: double-free' "$d/$1.txt")" -eq "$2" ] &&
		ok "$3 $1: text log has its $2 records and its own summary line" ||
		bad "$3 $1: text log ends '$last'"
}
check_log "$ppid" 2 parent
[ -n "$cpid" ] && check_log "$cpid" 3 child
sum=$(sort "$d/summary" 2>/dev/null | tr '\n' ' ')
want=$(printf '%s 2 0\n%s 3 0\n' "$ppid" "$cpid" | sort | tr '\n' ' ')
[ "$sum" = "$want" ] && ok "GRAPHCHECK_SUMMARY_FILE: one line each ($sum)" || bad "summary file: '$sum', want '$want'"

# The trace (%p) as well: one per process, and nothing said on stderr.
d=$tmp/trace
mkdir -p "$d"
GRAPHCHECK_TRACE_FILE=$d/%p.trace GRAPHCHECK_LOG_FILE=$d/log.txt \
	timeout 60 env LD_PRELOAD="$PRE" "$REL" fork-cuda > "$tmp/gc.out" 2> "$tmp/gc.err"
n=$(ls "$d" | grep -c '\.trace$')
if [ "$n" -eq 2 ] && [ ! -s "$tmp/gc.err" ]; then
	ok "fork-cuda: GRAPHCHECK_TRACE_FILE=%p gives one trace per process"
else
	bug "fork-cuda: GRAPHCHECK_TRACE_FILE=%p: $n trace file(s), stderr: '$(head -c 200 "$tmp/gc.err")' (trace.c: gc_trace_reopen_child passes pattern_copy to gc_trace_open, which snprintf's it onto itself)"
fi

# ---- a fork after the summary was written --------------------------------------------------
# An atexit handler that runs after graphcheck's (registered before the first CUDA call)
# forks; the child dies of SIGTERM. The child is a process of its own: it writes its own
# summary (its pid, "signal":"SIGTERM") to the shared log and the summary file.
rm -f "$tmp/late.json" "$tmp/late.summary"
GRAPHCHECK_JSON_FILE=$tmp/late.json GRAPHCHECK_SUMMARY_FILE=$tmp/late.summary GRAPHCHECK_LOG_FILE=/dev/null \
	timeout 60 env REL_PID_FILE=$tmp/pid LD_PRELOAD="$PRE" "$REL" fork-after-summary > "$tmp/gc.out" 2>&1
rc=$?
ppid=$(cat "$tmp/pid")
sums=$(jq -r 'select(.type == "summary") | "\(.pid == '"$ppid"') \(.signal // "-")"' "$tmp/late.json" 2>/dev/null | tr '\n' ' ')
lines=$(awk -v p="$ppid" '{ print ($1 == p) }' "$tmp/late.summary" 2>/dev/null | tr '\n' ' ')
[ $rc -eq 0 ] && grep -q '^child: signal 15$' "$tmp/gc.out" && [ "$sums" = "true - false SIGTERM " ] &&
	[ "$lines" = "1 0 " ] &&
	ok "fork after the summary (from a later atexit handler): the child writes its own summary (SIGTERM), the summary file one line each" ||
	bad "fork after the summary: rc $rc, summaries (parent? signal): '$sums', summary file lines (parent?): '$lines'"

# ---- a child that only execs --------------------------------------------------------------
for prog in /bin/true /bin/false; do
	"$REL" fork-exec $prog > "$tmp/native.out" 2>&1
	nrc=$?
	pid_run "$tmp/exec$(basename $prog)" fork-exec $prog
	grc=$rc
	[ $nrc -eq $grc ] && cmp -s "$tmp/native.out" "$tmp/gc.out" && [ ! -s "$tmp/gc.err" ] &&
		ok "fork+exec $prog: same output and exit ($grc), nothing on stderr" ||
		bad "fork+exec $prog: rc $nrc vs $grc, or output differs"
	extra=$(ls "$d" | grep -v "^$ppid\.")
	if [ -z "$extra" ] && [ -f "$d/$ppid.json" ]; then
		ok "fork+exec $prog: no log file but the parent's"
	else
		bug "fork+exec $prog: extra files for the child: $(echo $extra) ($(for f in $extra; do printf '%s: %s bytes; ' $f $(wc -c < "$d/$f"); done)) (log.c: gc_log_reopen_child opens %p logs at fork, before the child uses CUDA)"
	fi
done
# Without %p the child's exec adds nothing to the shared log either.
GRAPHCHECK_JSON_FILE=$tmp/shared.json GRAPHCHECK_LOG_FILE=$tmp/shared.txt \
	timeout 60 env LD_PRELOAD="$PRE" "$REL" fork-exec /bin/true > /dev/null 2>&1
types=$(jq -r '.type' "$tmp/shared.json" 2>/dev/null | tr '\n' ' ')
[ "$types" = "start violation summary " ] && ok "fork+exec, one shared log: only the parent's lines" ||
	bad "fork+exec, one shared log: '$types'"

# A child that makes no CUDA call and leaves through exit(), while the parent holds an
# allocation it frees later: the child has nothing to report.
"$REL" fork-idle > "$tmp/native.out" 2>&1
pid_run "$tmp/idle" fork-idle
[ $rc -eq 0 ] && cmp -s "$tmp/native.out" "$tmp/gc.out" && [ -z "$(violations "$d/$ppid.json")" ] &&
	ok "fork, child without CUDA exits: same output, no record in the parent" ||
	bad "fork, child without CUDA exits: rc $rc, parent records: $(violations "$d/$ppid.json" | tr '\n' ' ')"
extra=$(ls "$d" | grep -v "^$ppid\.")
if [ -z "$extra" ]; then
	ok "fork, child without CUDA exits: no log file for the child"
else
	crec=$(cat $(for f in $extra; do case $f in *.json) echo "$d/$f" ;; esac; done) | jq -r 'select(.type == "violation") | "\(.rule) (\(.leak_count // "") allocation)"' | tr '\n' ' ')
	bug "fork, child without CUDA exits: child files $(echo $extra); its records: ${crec:-none} (the child inherits the parent's ledger and reports the parent's live allocation as its own leak at exit; log.c opens its %p logs at fork)"
fi

# A child that detaches (a daemon: setsid, fds 0-2 closed, 3 s asleep): whoever reads the
# program's output (a shell's $(...), a pipe) has it at the parent's end, as without
# graphcheck; the child held graphcheck's copy of stderr before, and the reader waited 3 s.
# (The launcher's case not under ASan: its runtime would have to come first in LD_PRELOAD.)
hows=preload
[ "$ASAN" = 0 ] && hows="preload launcher"
for how in $hows; do
	start=$(date +%s%N)
	if [ $how = preload ]; then
		out=$(timeout 60 env LD_PRELOAD="$PRE" "$REL" fork-detach 2>&1)
	else
		out=$(timeout 60 "$BUILD/graphcheck" -- "$REL" fork-detach 2>&1)
	fi
	ms=$((($(date +%s%N) - start) / 1000000))
	case $out in *"forked yes"*double-free* | *double-free*"forked yes"*) rec=yes ;; *) rec=no ;; esac
	[ $ms -lt 2500 ] && [ $rec = yes ] &&
		ok "fork, a detaching child ($how): the program's output read to its end in $ms ms, the record in it" ||
		bad "fork, a detaching child ($how): $ms ms (the child sleeps 3000), record in the output: $rec"
done

# The child lets that copy go only while it is the copy (a program that closed every fd and
# put its own file at the number: the child lost the program's fd, a review's program) and
# while fd 2 is still that stderr (one that moved fd 2 before forking: the child's record
# was lost, in neither file).
out=$(ulimit -n 1024; timeout 60 env LD_PRELOAD="$PRE" "$REL" fork-fd-reuse "$tmp/fdreuse.txt" 2>/dev/null)
case $out in
*"child: 0 of the program's fds gone"*) ok "fork after the program took graphcheck's fd number: the child keeps the program's fd" ;;
*) bad "fork after the program took graphcheck's fd number: $(echo "$out" | head -3 | tr '\n' ' ')" ;;
esac
timeout 60 env LD_PRELOAD="$PRE" "$REL" fork-stderr-moved "$tmp/moved.txt" > /dev/null 2> "$tmp/moved.err"
grep -q "error: double-free" "$tmp/moved.err" && ! grep -q "error:" "$tmp/moved.txt" &&
	ok "fork after fd 2 was moved: the child's record on the stderr the program started with" ||
	bad "fork after fd 2 was moved: stderr has $(grep -c 'error:' "$tmp/moved.err") records, the moved-to file $(grep -c 'error:' "$tmp/moved.txt")"

# A child whose first CUDA call is a kernel launch (a use, no event: only the stream tag is
# read), then an alloc and a free: it used CUDA, so its %p logs are opened and end with its
# own summary, as a child whose first call is an event.
pid_run "$tmp/launch" fork-launch
cpid=$(ls "$d" | sed -n 's/^\([0-9]*\)\.txt$/\1/p' | grep -vx "$ppid" | head -n 1)
[ $rc -eq 0 ] && grep -qx "child: 0" "$tmp/gc.out" && [ -n "$cpid" ] &&
	[ "$(tail -n 1 "$d/$cpid.txt")" = "==graphcheck== graphcheck: 0 errors, 0 warnings" ] &&
	[ "$(jq -r '.type' "$d/$cpid.json" | tr '\n' ' ')" = "start summary " ] &&
	ok "fork, child's first call a launch: its own text and JSON logs, each with its summary" ||
	bad "fork, child's first call a launch: rc $rc, files: $(ls "$d" | tr '\n' ' '); $(head -c 200 "$tmp/gc.err")"

# ---- forks while other threads are in the middle of calls ---------------------------------
# NFORKS forks from the main thread while 4 threads alloc/free (and make records) without
# pause. Each child makes one intercepted call (an api-error record) and exits through
# graphcheck's atexit summary. A child stuck on a lock dies of SIGALRM after 20 s.
NFORKS=${REL_FORKS:-100}
[ "$ASAN" = 1 ] && NFORKS=${REL_FORKS:-40}  # fork is slow with the shadow memory mapped
for depth in 0 8; do
	d=$tmp/busy$depth
	mkdir -p "$d"
	GRAPHCHECK_JSON_FILE=$d/%p.json GRAPHCHECK_LOG_FILE=$d/%p.txt GRAPHCHECK_ALLOC_BACKTRACE_DEPTH=$depth \
		timeout 120 env REL_PID_FILE=$tmp/pid LD_PRELOAD="$PRE" "$REL" fork-busy $NFORKS 4 > "$tmp/gc.out" 2> "$tmp/gc.err"
	rc=$?
	ppid=$(cat "$tmp/pid")
	out=$(cat "$tmp/gc.out")
	[ $rc -eq 0 ] && [ "$out" = "forks $NFORKS: exited $NFORKS, hung 0, other 0" ] &&
		ok "fork under load (alloc backtrace depth $depth): $NFORKS children exited, none hung" ||
		bad "fork under load (depth $depth): rc $rc, '$out'"
	n=$(ls "$d" | grep -c '\.json$')
	# One jq over all the children's logs (jq starts slowly): per file, the lines that
	# parse, the api-error records, other records but leaks, the summary's error count.
	mv "$d/$ppid.json" "$tmp/parent.json"
	lines=$(cat "$d"/*.json | wc -l)
	jq -r '[input_filename, .type, (.rule // "-"), (.call // "-"), (.result // "-"),
	        (.errors // "-"), (.leak_count // 0)] | map(tostring) | join(" ")' "$d"/*.json \
		> "$tmp/busy.tab" 2> "$tmp/busy.err"
	parsed=$(wc -l < "$tmp/busy.tab")
	good=$(awk '
		{ seen[$1] = 1 }
		$2 == "violation" && $3 == "api-error" && $4 == "cuMemAllocAsync" && $5 == "1" { api[$1]++ }
		$2 == "violation" && $3 != "leak-at-exit" && $3 != "api-error" { other[$1]++ }
		$2 == "summary" && $6 == "1" { sum[$1]++ }
		$3 == "leak-at-exit" { leaks += $7 }
		END { for (f in seen) if (api[f] == 1 && !other[f] && sum[f] == 1) g++
		      print g + 0, leaks + 0 }' "$tmp/busy.tab")
	leaks=${good#* }
	good=${good% *}
	[ "$n" -eq $((NFORKS + 1)) ] && [ "$good" -eq "$NFORKS" ] && [ "$lines" -eq "$parsed" ] &&
		[ ! -s "$tmp/busy.err" ] &&
		ok "fork under load (depth $depth): $NFORKS child logs, whole lines, each with its one api-error and its summary" ||
		bad "fork under load (depth $depth): $n logs, $good children as expected, $parsed of $lines lines parse"
	mv "$tmp/parent.json" "$d/$ppid.json"
	echo "     (children reported $leaks leak(s) in total: the parent threads' allocations live at the fork)"
	valid_jsonl "$d/$ppid.json" && [ "$(jq -r 'select(.type == "summary") | .warnings' "$d/$ppid.json")" = 0 ] &&
		ok "fork under load (depth $depth): parent log whole, no leak in the parent" ||
		bad "fork under load (depth $depth): parent log"
done

# A fork while another thread is inside one of graphcheck's calls into the loader
# (dl_iterate_phdr, dladdr, the unwinder: its lock is not reset in a child): the program's
# own dl_iterate_phdr holds that lock 200 us a call, and its threads make a record at every
# iteration, so most forks land inside one. Before graphcheck's fork handler waited for
# them, 8 children of 10 hung (and 3 in 13,500 forks of fork-busy under load, once in CI).
# Not in sanitizer builds: rel_prog cannot replace dl_iterate_phdr under their runtimes.
if [ "$ASAN" = 0 ] && [ "$TSAN" = 0 ]; then
	d=$tmp/loader
	mkdir -p "$d"
	out=$(GRAPHCHECK_JSON_FILE=$d/%p.json GRAPHCHECK_LOG_FILE=$d/%p.txt \
		timeout 300 env LD_PRELOAD="$PRE" "$REL" fork-in-loader 10 4 2>&1)
	[ "$out" = "forks 10: exited 10, hung 0, other 0" ] &&
		ok "fork while a thread is in the loader for graphcheck: 10 children exited, none hung" ||
		bad "fork while a thread is in the loader: '$out'"
fi

# A fork while other threads make the process's first intercepted calls (graphcheck's lazy
# start may be under way): one process per try, the child makes one call and exits.
# Not under ASan: GCC 12's libasan allocator is not fork-safe while threads start up.
if [ "$ASAN" = 0 ]; then
	TRIES=${REL_INIT_FORKS:-40}
	d=$tmp/init
	mkdir -p "$d"
	i=0 hung=0
	while [ $i -lt $TRIES ]; do
		out=$(GRAPHCHECK_JSON_FILE=$d/%p.json GRAPHCHECK_LOG_FILE=$d/%p.txt \
			timeout 60 env LD_PRELOAD="$PRE" "$REL" fork-init 4 2>&1)
		[ "$out" = "child: exited" ] || hung=$((hung + 1))
		i=$((i + 1))
	done
	n=$(ls "$d" | grep -c '\.json$')
	sums=$(jq -r 'select(.type == "summary") | input_filename' "$d"/*.json | sort | uniq -c | awk '$1 != 1' | wc -l)
	[ $hung -eq 0 ] && [ "$n" -eq $((2 * TRIES)) ] && [ "$sums" -eq 0 ] &&
		ok "fork during graphcheck's start-up ($TRIES processes): every child ran and exited, one summary per log" ||
		bad "fork during start-up: $hung of $TRIES children did not exit as expected, $n logs, $sums logs without exactly one summary"
fi
finish
