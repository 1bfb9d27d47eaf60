#!/bin/sh
# The launcher's gate (build/graphcheck): it never passes a run it did not check.
# - --error-exitcode counts every process that recorded an error, however it ended: _exit,
#   exec into another program, Python multiprocessing workers (os._exit) (issue 12 row 1);
# - a program the loader will not preload into (statically linked, also behind interpreter
#   scripts; run in secure mode) is refused, not run unchecked; the launcher works from a
#   directory whose path has a space or a colon, which LD_PRELOAD would split (row 2); a
#   launcher under another passes its errors up;
# - SIGTERM/SIGHUP sent to the launcher reach the program, the run directory goes, and the
#   launcher dies of the same signal (row 13); a signal the program catches (SIGUSR1, a
#   SIGTERM answered with exit 0) gives the program's status, no program left behind;
# - relative log paths are the launcher's, not the program's cwd at its first CUDA call (row 17).
# Usage: sh tests/reliability/gate.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
[ "$TSAN" = 1 ] && skip_suite "under TSan: the launcher runs programs not built with TSan (true, sh, python3), where the TSan-built object cannot load"

GC=$(cd "$BUILD" && pwd)/graphcheck
RELA=$(cd "$BUILD/reliability" && pwd)/rel_prog
# Under ASan the runtime must be in the program before the object: the launcher appends
# the caller's LD_PRELOAD to its own.
ASANRT=
[ "$ASAN" = 1 ] && ASANRT=${PRE%:*}
launch() {
	if [ "$ASAN" = 1 ]; then LD_PRELOAD=${PRE%:*} "$@"; else "$@"; fi
}

# gate NAME EXPECTED CMD...: the launcher's status must be EXPECTED.
gate() {
	name=$1 want=$2
	shift 2
	launch timeout 60 "$@" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	[ $rc -eq "$want" ] && ok "$name: status $rc" ||
		{ bad "$name: status $rc, want $want"; sed 's/^/    /' "$tmp/err" | head -5; }
}

# ---- row 1: every ending counts ---------------------------------------------------------
gate "_exit after 3 errors" 9 "$GC" --error-exitcode=9 --log-file=/dev/null -- "$RELA" die _exit 3
grep -q 'ended without an exit summary' "$tmp/err" &&
	ok "_exit: the launcher says a process ended without its summary" ||
	bad "_exit: no note about the missing summary"
# The launcher's stderr a pipe whose reader is gone (`2>&1 | head -1`): its note about the
# missing summary must not kill it (SIGPIPE) before it has the status and removed its run
# directory.
rm -f "$tmp/rd" "$tmp/rc"
{ launch "$GC" --error-exitcode=9 --log-file=/dev/null -- \
	sh -c 'echo "$GRAPHCHECK_RUN_DIR" > "$0"; exec "$1" die _exit 3' "$tmp/rd" "$RELA" 2>&1
  echo $? > "$tmp/rc"; } | true
rd=$(cat "$tmp/rd" 2>/dev/null)
[ "$(cat "$tmp/rc")" = 9 ] && [ -n "$rd" ] && [ ! -e "$rd" ] &&
	ok "stderr a closed pipe: status 9, run directory removed" ||
	bad "stderr a closed pipe: status '$(cat "$tmp/rc")' (want 9), run directory '$rd' left: $([ -e "$rd" ] && echo yes)"
gate "SIGKILL after 3 errors" 9 "$GC" --error-exitcode=9 --log-file=/dev/null -- "$RELA" die kill 3
gate "exec into /bin/true after an error" 9 "$GC" --error-exitcode=9 --log-file=/dev/null -- "$RELA" exec /bin/true
gate "exit() after 3 errors" 9 "$GC" --error-exitcode=9 --log-file=/dev/null -- "$RELA" die exit 3
# The program clears its whole environment before its first CUDA call: the settings it was
# started with still hold (its run directory: the errors count; its JSON log is written).
rm -f "$tmp/clear.json"
gate "environment cleared, then 2 errors" 9 "$GC" --error-exitcode=9 --log-file=/dev/null \
	--json-file="$tmp/clear.json" -- "$RELA" clearenv exit 2
[ "$(grep -c '"rule":"double-free"' "$tmp/clear.json" 2>/dev/null)" = 2 ] &&
	ok "environment cleared: the JSON log has both records" ||
	bad "environment cleared: JSON log: $(head -c 200 "$tmp/clear.json" 2>&1)"
# Cleared, then one option set by the program: its settings are its own, but the run
# directory stays the launcher's (the gate passed the error before: this session's review).
gate "environment cleared, an option set, then 2 errors" 9 "$GC" --error-exitcode=9 \
	--log-file=/dev/null -- "$RELA" clearenv exit 2 set
# The program's own failure (exit 3), replaced by the gate's status, is said.
grep -qx "graphcheck: the program exited with status 3; the gate's status 9 is returned, as errors were recorded" "$tmp/err" &&
	ok "exit 3 replaced by the gate's 9: said" || bad "exit 3 replaced by the gate's 9: $(tr '\n' ' ' < "$tmp/err")"
# A process still running when the program ends (a background job): its error so far
# counts, and it is said to be running, not to have ended without its summary.
gate "a background process with an error, still running" 9 "$GC" --error-exitcode=9 \
	--log-file=/dev/null -- sh -c '"$1" die linger 1 > /dev/null & sleep 1' sh "$RELA"
grep -q "1 process is still running after the program ended: its errors so far are counted" "$tmp/err" &&
	! grep -q "ended without an exit summary" "$tmp/err" &&
	ok "a background process: said to be still running" || bad "a background process: $(tr '\n' ' ' < "$tmp/err")"
# A background job whose CUDA process starts after the launcher ended (its run directory
# gone): it runs as it would, and writes no line about the launcher's summary file onto the
# terminal (it did before session 19).
gate "a background process starting after the run" 0 "$GC" --log-file=/dev/null -- \
	sh -c '(sleep 1; exec "$1" plain > /dev/null) & exit 0' sh "$RELA"
sleep 3
grep -q "summary file" "$tmp/err" && bad "a late background process: $(grep 'summary file' "$tmp/err")" ||
	ok "a late background process: no line about the summary file"
# A process that took every fd, or gave up root (the run directory is the launcher's), after
# its first CUDA call: its error is still counted (written into the file it opened then).
gate "an error after the program took every fd" 9 "$GC" --error-exitcode=9 --log-file=/dev/null \
	-- "$RELA" fd-full
if [ "$(id -u)" = 0 ]; then
	gate "an error after the program gave up root" 9 "$GC" --error-exitcode=9 \
		--log-file=/dev/null -- "$RELA" drop-rights
	# The order servers use more: root given up before the first CUDA call (the marker is
	# opened at load).
	gate "an error after the program gave up root before its first CUDA call" 9 "$GC" \
		--error-exitcode=9 --log-file=/dev/null -- "$RELA" drop-rights-early
	# A prefork server: the master (no CUDA call) forks a worker that gives up root, then
	# uses CUDA: it cannot make files in the run directory; it marks its parent's (0 before).
	gate "a forked worker gives up root, then an error" 9 "$GC" \
		--error-exitcode=9 --log-file=/dev/null -- "$RELA" fork-drop-rights
else
	echo "skip a program giving up root (not root)"
fi
# The run's marker costs the program no fd where /tmp overwrites in place (mapped at load,
# its fd closed): a program that counts or closes its fds sees what it would see without
# graphcheck (one more before). Elsewhere (overlayfs, btrfs: kept open) one more, said.
nfd=$(sh -c 'ls /proc/$$/fd' | wc -l)
gfd=$(launch "$GC" --log-file=/dev/null -- sh -c 'ls /proc/$$/fd' 2> /dev/null | wc -l)
case $(stat -f -c %t /tmp 2> /dev/null) in
ef53 | 1021994 | 58465342) extra=0 ;;
*) extra=1; echo "note: /tmp is $(stat -f -c %T /tmp 2> /dev/null): the marker is kept open there (one fd)" ;;
esac
[ "$gfd" -eq $((nfd + extra)) ] && ok "fds open in a program under the launcher: $gfd (natively $nfd, $extra of graphcheck's on this /tmp)" ||
	bad "fds open in a program under the launcher: $gfd, natively $nfd, $extra expected of graphcheck's"
gate "an error after the program closed every fd >= 3" 9 "$GC" --error-exitcode=9 \
	--log-file=/dev/null -- "$RELA" close-fds "$tmp/closed.data" one
rm -f "$tmp/closed.data"
# A full /tmp (the run directory's file system): the marker cannot be given its 2 bytes, so it
# is not mapped (a store into a page the file system has no room for would be a SIGBUS in
# the program: "Bus error", 135, before); the error still counts through error.PID. Needs
# root and a mount namespace of its own (unshare -m), else skipped. The programs run are
# copied out of /tmp first (to /var/tmp, the same layout): a build under /tmp (a CI clone)
# would be hidden by the mount.
out=$(mktemp -d -p /var/tmp gc-gate.XXXXXX 2> /dev/null)
if [ "$(id -u)" = 0 ] && command -v unshare > /dev/null && [ -n "$out" ] &&
	unshare -m sh -c 'mount -t tmpfs -o size=256k tmpfs /tmp' 2> /dev/null; then
	chmod 755 "$out"  # rel_prog's drop-rights modes run on as nobody
	mkdir -p "$out/b/reliability" "$out/b/fakecuda"
	cp "$GC" "$BUILD/libgraphcheck.so" "$out/b/" && cp "$RELA" "$out/b/reliability/" &&
		cp -P "$BUILD/fakecuda/"libcuda.so* "$out/b/fakecuda/"
	OGC=$out/b/graphcheck ORELA=$out/b/reliability/rel_prog
	gate "a full /tmp: the program runs, its error counted" 9 unshare -m sh -c \
		'mount -t tmpfs -o size=256k tmpfs /tmp && { dd if=/dev/zero of=/tmp/fill bs=1k 2> /dev/null; exec "$@"; }' \
		sh "$OGC" --error-exitcode=9 --log-file=/dev/null -- "$ORELA" plain
	grep -q "nothing was checked" "$tmp/err" && bad "a full /tmp: an error counted, yet 'nothing was checked' said" ||
		ok "a full /tmp: no 'nothing was checked' beside the counted error"
	gate "a /tmp that fills after the run directory is made: the program runs, its error counted" 9 \
		unshare -m sh -c 'mount -t tmpfs -o size=256k tmpfs /tmp && exec "$@"' sh "$OGC" \
		--error-exitcode=9 --log-file=/dev/null -- sh -c 'dd if=/dev/zero of=/tmp/fill bs=1k 2> /dev/null; exec "$0" "$@"' "$ORELA" plain
	# A /tmp with one inode left, which the run directory takes: no process could make its
	# marker or error file, so the run is refused, not run unchecked (it passed with status
	# 0 before session 19).
	gate "a /tmp out of inodes: refused, status 2" 2 unshare -m sh -c \
		'mount -t tmpfs -o nr_inodes=8 tmpfs /tmp && { i=0; while touch /tmp/f$i 2> /dev/null; do i=$((i+1)); done; rm -f /tmp/f0; exec "$@"; }' \
		sh "$OGC" --error-exitcode=9 --log-file=/dev/null -- "$ORELA" plain
	grep -q "not run unchecked" "$tmp/err" && ! grep -q "double frees refused" "$tmp/out" &&
		ok "a /tmp out of inodes: said, the program not run" ||
		bad "a /tmp out of inodes: $(head -c 300 "$tmp/err") / $(head -c 100 "$tmp/out")"
	# A /tmp whose file system is not known to overwrite in place (ramfs here; btrfs, ZFS,
	# NFS alike): the marker is written through an fd at each mark, not mapped.
	gate "a /tmp on a file system the marker is not mapped on: the program's error counted" 9 \
		unshare -m sh -c 'mount -t ramfs ramfs /tmp && exec "$@"' sh "$OGC" \
		--error-exitcode=9 --log-file=/dev/null -- "$ORELA" plain
	gate "the same, a program with no error (a leak, a warning): checked, status 0" 0 \
		unshare -m sh -c 'mount -t ramfs ramfs /tmp && exec "$@"' sh "$OGC" \
		--error-exitcode=9 --log-file=/dev/null -- "$ORELA" leak-only
	grep -q "nothing was checked" "$tmp/err" && bad "ramfs /tmp: the clean run was taken as unchecked" || ok "ramfs /tmp: the clean run counted as started"
	# There the file is kept open from load: an error after the program gave up root (before
	# or after its first CUDA call) or took every fd still counts (0 with a mark written
	# through an fd opened for it).
	for mode in drop-rights drop-rights-early fd-full fork-drop-rights; do
		gate "ramfs /tmp, $mode: the error counted" 9 \
			unshare -m sh -c 'mount -t ramfs ramfs /tmp && exec "$@"' sh "$OGC" \
			--error-exitcode=9 --log-file=/dev/null -- "$ORELA" $mode
	done
else
	echo "skip a full /tmp (needs root, /var/tmp and unshare -m with a tmpfs mount)"
fi
[ -n "$out" ] && rm -rf "$out"
# A file size limit (ulimit -f 0): graphcheck's own writes (the marker, the summary, the log)
# fail instead of raising SIGXFSZ, whose default killed the program: `true` died of it at
# load (153), a program with an error at its summary.
gate "ulimit -f 0, a program without CUDA: runs" 0 sh -c 'ulimit -f 0; exec "$@"' sh "$GC" -- true
gate "ulimit -f 0, a program with an error: runs, its error counted" 9 sh -c 'ulimit -f 0; exec "$@"' sh \
	"$GC" --error-exitcode=9 --log-file="$tmp/fsize.log" -- "$RELA" plain
grep -q "died of signal" "$tmp/err" && bad "ulimit -f 0: the program died of a signal: $(grep 'died of' "$tmp/err")" ||
	ok "ulimit -f 0: the program was not killed by graphcheck's writes"
rm -f "$tmp/fsize.log"
# Run directories left by launchers killed with SIGKILL: a later launcher removes each one
# untouched for 10 minutes whose summary no launcher holds locked; one held, or recent, stays
# (175 were left on the dev VM before session 19).
if command -v flock > /dev/null && command -v touch > /dev/null; then
	s1=$(mktemp -d /tmp/graphcheck-run-XXXXXX) s2=$(mktemp -d /tmp/graphcheck-run-XXXXXX)
	s3=$(mktemp -d /tmp/graphcheck-run-XXXXXX)
	s4=$(mktemp -d /tmp/graphcheck-run-XXXXXX) s5=$(mktemp -d /tmp/graphcheck-run-XXXXXX)
	: > "$s1/lock"; : > "$s1/summary"; : > "$s1/started.1"; : > "$s2/lock"; : > "$s3/lock"
	mkfifo "$s4/lock"  # not a run's lock: left, and no launcher blocks on it
	: > "$s5/summary"  # an older graphcheck's (no lock file): its launcher may be alive
	flock "$s2/lock" sleep 10 & holder=$!
	sleep 0.5  # its lock taken
	touch -d '20 minutes ago' "$s1" "$s2" "$s4" "$s5"
	gate "a launcher after others were killed" 0 "$GC" -- true
	[ ! -e "$s1" ] && [ -f "$s2/lock" ] && [ -f "$s3/lock" ] && [ -p "$s4/lock" ] && [ -f "$s5/summary" ] &&
		ok "stale run directories: the unlocked old one removed; the held, the recent, a FIFO's and an older graphcheck's kept" ||
		bad "stale run directories: old unlocked $([ -e "$s1" ] && echo kept || echo removed), held $([ -e "$s2" ] && echo kept || echo removed), recent $([ -e "$s3" ] && echo kept || echo removed)"
	kill "$holder" 2> /dev/null; wait "$holder" 2> /dev/null
	rm -rf "$s1" "$s2" "$s3" "$s4" "$s5"
	# A launcher's own run, however long untouched, is not taken from it by another's.
	rm -f "$tmp/rd"
	launch "$GC" -- sh -c 'echo "$GRAPHCHECK_RUN_DIR" > "$0"; sleep 3' "$tmp/rd" 2> /dev/null &
	first=$!
	sleep 1
	rd=$(cat "$tmp/rd" 2> /dev/null)
	[ -n "$rd" ] && touch -d '20 minutes ago' "$rd"
	gate "a launcher beside a long run" 0 "$GC" -- true
	[ -n "$rd" ] && [ -f "$rd/lock" ] && ok "a live launcher's old run directory kept" ||
		bad "a live launcher's old run directory '$rd' removed by another launcher"
	wait "$first"
fi
gate "no CUDA at all (true)" 0 "$GC" --error-exitcode=9 -- true
grep -q 'no process of this run made a CUDA driver call under graphcheck, so nothing was checked' "$tmp/err" &&
	ok "no CUDA at all: the launcher says nothing was checked" ||
	bad "no CUDA at all: no note, stderr '$(head -c 200 "$tmp/err")'"
# Options' values as the next argument, as well as after '='; a bad value says the range.
rm -f "$tmp/sep.log"
gate "--log-file FILE --error-exitcode N (values as next arguments)" 9 "$GC" --log-file "$tmp/sep.log" \
	--error-exitcode 9 -- "$RELA" die exit 3
[ -s "$tmp/sep.log" ] && ok "--log-file FILE: the log went to FILE" || bad "--log-file FILE: no log at $tmp/sep.log"
gate "--backtrace-depth=100: refused" 2 "$GC" --backtrace-depth=100 -- true
grep -q "bad value for --backtrace-depth: '100' (a whole number in 0..64)" "$tmp/err" &&
	ok "--backtrace-depth=100: the message gives the range" ||
	bad "--backtrace-depth=100: message '$(head -c 200 "$tmp/err")'"
gate "--log-file without a value: usage" 2 "$GC" --log-file
gate "--log-file= with an empty value: usage" 2 "$GC" --log-file= -- true
# A blank before a number is no number (strtol passes over it: ' 3' ran with 3 before); a
# program named as --suppressions (its value forgotten) is refused, not run as its argument.
gate "--error-exitcode=' 3': refused" 2 "$GC" --error-exitcode=' 3' -- true
gate "--suppressions PROGRAM ARG: refused" 2 "$GC" --suppressions "$RELA" true
grep -q "is a program, not taken for suppressions" "$tmp/err" &&
	ok "--suppressions PROGRAM: said" || bad "--suppressions PROGRAM: '$(head -c 200 "$tmp/err")'"
# refused OPT MSG: the launcher refuses OPT with the one line MSG, and the program does not run.
refused() {
	rm -f "$tmp/ran"
	gate "$1: refused" 2 "$GC" "$1" -- sh -c ": > '$tmp/ran'"
	[ ! -e "$tmp/ran" ] && [ "$(cat "$tmp/err")" = "graphcheck: $2" ] &&
		ok "$1: one line, the program not run" ||
		bad "$1: ran: $([ -e "$tmp/ran" ] && echo yes || echo no), stderr '$(head -c 300 "$tmp/err")'"
}
# A log or suppressions the run could not use is refused before the program runs (its
# records would otherwise go to stderr, or nothing be suppressed), with one line saying why.
mkdir -p "$tmp/logdir"
: > "$tmp/plainfile"
for c in "--log-file=$tmp/nodir/x.log|the log file '$tmp/nodir/x.log': its directory '$tmp/nodir': No such file or directory" \
	"--json-file=$tmp/logdir|the JSON file '$tmp/logdir' is a directory" \
	"--trace-file=$tmp/plainfile/t|the trace file '$tmp/plainfile/t': '$tmp/plainfile' is not a directory" \
	"--suppressions=$tmp/nosupp|cannot read the suppressions '$tmp/nosupp': No such file or directory"; do
	refused "${c%%|*}" "${c#*|}"
done
# What the object would not open or read (outfile.c opens with O_NOFOLLOW and takes only a
# file of its user's with one name, or a device; suppress.c reads only a regular file of at
# most 4 MiB) is refused by the launcher too, and a FIFO does not hang it.
ln -s "$tmp/plainfile" "$tmp/link.log"
mkfifo "$tmp/fifo.log" "$tmp/fifo.supp"
: > "$tmp/one.log"
ln "$tmp/one.log" "$tmp/two.log"
: > "$tmp/theirs.log"
chown 65534 "$tmp/theirs.log" 2> /dev/null || rm -f "$tmp/theirs.log"
: > "$tmp/big.supp"
truncate -s 5M "$tmp/big.supp"
for c in "--log-file=$tmp/link.log|the log file '$tmp/link.log' is a symbolic link, which graphcheck does not follow" \
	"--log-file=/dev/stdout|the log file '/dev/stdout' is a symbolic link, which graphcheck does not follow" \
	"--trace-file=/dev/stderr|the trace file '/dev/stderr' is a symbolic link, which graphcheck does not follow" \
	"--json-file=$tmp/fifo.log|the JSON file '$tmp/fifo.log' is not a file or a device" \
	"--log-file=$tmp/two.log|the log file '$tmp/two.log' is a hard link (the file has other names)" \
	"--log-file=$tmp/theirs.log|the log file '$tmp/theirs.log' belongs to another user" \
	"--suppressions=$tmp/fifo.supp|the suppressions '$tmp/fifo.supp' is not a regular file" \
	"--suppressions=$tmp/big.supp|the suppressions '$tmp/big.supp' is larger than 4 MiB"; do
	case $c in *theirs*) [ -e "$tmp/theirs.log" ] || continue ;; esac  # chown needs root
	refused "${c%%|*}" "${c#*|}"
done
# The paths the object accepts run: "%%" is a '%' (log.c), /dev/stderr is the log's own
# default (no note that it cannot be opened), /dev/null a device.
mkdir -p "$tmp/a%b"
gate "--log-file with %% in its directory" 9 "$GC" --error-exitcode=9 --log-file="$tmp/a%%b/x.log" \
	-- "$RELA" die exit 3
[ -s "$tmp/a%b/x.log" ] && ok "--log-file with %%: the log went to '$tmp/a%b/x.log'" ||
	bad "--log-file with %%: no log at '$tmp/a%b/x.log'; $(head -c 200 "$tmp/err")"
gate "--log-file=/dev/stderr" 9 "$GC" --error-exitcode=9 --log-file=/dev/stderr -- "$RELA" die exit 3
grep -q '^==graphcheck== error: double-free' "$tmp/err" && ! grep -q 'cannot open' "$tmp/err" &&
	ok "--log-file=/dev/stderr: records on stderr, no note" ||
	bad "--log-file=/dev/stderr: stderr '$(head -c 300 "$tmp/err")'"
# As a user who is not root (only where the test runs as root and has setpriv): a device
# anyone may write is taken (the object takes a device; its directory, /dev, is not
# writable), a file of the user's that it may not write is refused.
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null 2>&1; then
	nd=$tmp/nobody
	mkdir -p "$nd"
	chmod 755 "$tmp"
	chmod 777 "$nd"  # the directory writable: only the file is not
	: > "$nd/ro.log"
	chmod 444 "$nd/ro.log"
	chown 65534 "$nd/ro.log"
	as_nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
	gate "as nobody, --log-file=/dev/zero: taken" 0 $as_nobody "$GC" --log-file=/dev/zero -- true
	gate "as nobody, --log-file of a read-only file: refused" 2 $as_nobody "$GC" \
		--log-file="$nd/ro.log" -- true
	[ "$(cat "$tmp/err")" = "graphcheck: the log file '$nd/ro.log': cannot write to it: Permission denied" ] &&
		ok "as nobody, a read-only log file: one line" || bad "as nobody, read-only: '$(head -c 300 "$tmp/err")'"
fi
launch "$GC" --log-file=/dev/null -- "$RELA" die exit 3 > /dev/null 2>&1
native_rc=$?
gate "--error-exitcode=0 after 3 errors: the program's status, as valgrind's" "$native_rc" \
	"$GC" --error-exitcode=0 --log-file=/dev/null -- "$RELA" die exit 3
gate "a directory as the program: 126, as a shell" 126 "$GC" -- "$tmp"
gate "a program that is not there: 127" 127 "$GC" -- "$tmp/no-such-program"
# (abort, not a segfault: ASan turns a segfault into an exit of its own)
gate "abort() after 2 errors, gated" 9 "$GC" --error-exitcode=9 --log-file=/dev/null -- "$RELA" die abort 2
grep -q "the program died of signal 6 (Aborted); the gate's status 9 is returned" "$tmp/err" &&
	ok "abort() after errors, gated: the launcher says the program died of it" ||
	bad "abort() after errors, gated: stderr '$(head -c 300 "$tmp/err")'"
gate "without --error-exitcode: the program's status" 0 "$GC" --log-file=/dev/null -- "$RELA" exec /bin/true

if python3 -c 'import ctypes, multiprocessing' 2> /dev/null && [ "$ASAN" = 0 ]; then
	cat > "$tmp/mp.py" << 'PY'
import ctypes, multiprocessing, sys
def work(i):
    cu = ctypes.CDLL(sys.argv[1])
    dev, ctx, s, p = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_uint64()
    assert cu.cuInit(0) == 0 and cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
    assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0 and cu.cuCtxSetCurrent(ctx) == 0
    assert cu.cuStreamCreate(ctypes.byref(s), 1) == 0
    cu.cuMemAllocAsync(ctypes.byref(p), ctypes.c_size_t(256), s)
    cu.cuMemFreeAsync(p, s)
    return cu.cuMemFreeAsync(p, s)
if __name__ == "__main__":
    with multiprocessing.Pool(2) as pool:
        print(pool.map(work, range(4)))
PY
	FAKE=$(cd "$BUILD/fakecuda" && pwd)/libcuda.so.1
	good=0
	for k in 1 2 3 4 5 6; do
		launch timeout 60 "$GC" --error-exitcode=9 --log-file=/dev/null -- python3 "$tmp/mp.py" "$FAKE" > "$tmp/mp.out" 2>&1
		[ $? -eq 9 ] && grep -qx '\[1, 1, 1, 1\]' "$tmp/mp.out" && good=$((good + 1))
	done
	[ $good -eq 6 ] && ok "multiprocessing.Pool workers double-free: status 9 in 6 of 6 runs" ||
		bad "multiprocessing.Pool workers double-free: status 9 in only $good of 6 runs"
else
	echo "skip multiprocessing (no python3, or ASan: its runtime is not in python3)"
fi

# The run directory is private and removed.
launch "$GC" -- sh -c 'echo "$GRAPHCHECK_RUN_DIR" > "$0"; stat -c %a "$GRAPHCHECK_RUN_DIR" >> "$0"' "$tmp/rundir" > /dev/null 2>&1
rd=$(head -n 1 "$tmp/rundir")
[ -n "$rd" ] && [ "$(sed -n 2p "$tmp/rundir")" = 700 ] && [ ! -e "$rd" ] &&
	ok "run directory $rd: mode 700 while the program runs, removed after" ||
	bad "run directory '$rd': mode $(sed -n 2p "$tmp/rundir"), still there: $([ -e "$rd" ] && echo yes)"

# ---- row 2: no unchecked run ------------------------------------------------------------
for d in "x y" "a:b"; do
	mkdir -p "$tmp/$d"
	cp "$GC" "$BUILD/libgraphcheck.so" "$tmp/$d/"
	rm -f "$tmp/p2.json"
	gate "launcher in '$d'" 9 "$tmp/$d/graphcheck" --error-exitcode=9 --log-file=/dev/null \
		--json-file="$tmp/p2.json" -- "$RELA" plain
	[ "$(violations "$tmp/p2.json" | tr '\n' ' ')" = "1 double-free 1 leak-at-exit " ] &&
		! grep -q 'cannot be preloaded' "$tmp/err" &&
		ok "launcher in '$d': the program was checked (1 double-free, 1 leak)" ||
		bad "launcher in '$d': records '$(violations "$tmp/p2.json" | tr '\n' ' ')'; $(head -c 200 "$tmp/err")"
done
STATIC=
for p in /sbin/ldconfig /usr/sbin/ldconfig; do
	[ -x "$p" ] && file -L "$p" 2> /dev/null | grep -q 'static' && STATIC=$p && break
done
if [ -n "$STATIC" ]; then
	gate "statically linked $STATIC: refused" 2 "$GC" --error-exitcode=9 -- "$STATIC" -p
	grep -q 'statically linked.*not run unchecked' "$tmp/err" && [ ! -s "$tmp/out" ] &&
		ok "static program: a clear message, and it did not run" ||
		bad "static program: message '$(head -c 200 "$tmp/err")', output $(wc -c < "$tmp/out") bytes"
else
	echo "skip static program (no statically linked ldconfig here)"
fi
# A script reaches the static program through scripts: the kernel follows up to 5
# interpreters, and an interpreter path written relative is the working directory's.
if [ -n "$STATIC" ]; then
	mkdir -p "$tmp/sb"
	ln -sf "$STATIC" "$tmp/sb/stat"
	printf '#!%s\n' "$tmp/sb/inner.sh" > "$tmp/sb/outer.sh"
	printf '#!%s -p\n' "$tmp/sb/stat" > "$tmp/sb/inner.sh"
	printf '#!stat -p\n' > "$tmp/sb/rel.sh"
	chmod +x "$tmp/sb/outer.sh" "$tmp/sb/inner.sh" "$tmp/sb/rel.sh"
	gate "a script whose interpreter is a script of a static program: refused" 2 \
		"$GC" --error-exitcode=9 -- "$tmp/sb/outer.sh"
	gate "a script whose interpreter is a relative path to a static program: refused" 2 \
		sh -c 'cd "$1" && exec "$2" --error-exitcode=9 -- ./rel.sh' sh "$tmp/sb" "$GC"
	printf '#!%s -p\n' "$tmp/sb/stat" > "$tmp/sb/d1"
	for k in 2 3 4 5; do printf '#!%s\n' "$tmp/sb/d$((k - 1))" > "$tmp/sb/d$k"; done
	chmod +x "$tmp/sb"/d?
	gate "5 scripts deep to a static program (the kernel runs it): refused" 2 \
		"$GC" --error-exitcode=9 -- "$tmp/sb/d5"
	# Found by a PATH search as execvp searches: past a directory of the same name, and in
	# the working directory for an empty PATH or an empty entry (each ran unchecked before).
	mkdir -p "$tmp/sp/d1/sprog" "$tmp/sp/d2"
	cp "$STATIC" "$tmp/sp/d2/sprog"
	gate "a static program found in PATH past a directory of its name: refused" 2 \
		env PATH="$tmp/sp/d1:$tmp/sp/d2:/usr/bin:/bin" "$GC" --error-exitcode=9 -- sprog -p
	gate "a static program in the working directory, PATH empty: refused" 2 \
		sh -c 'cd "$1" && PATH= exec "$2" --error-exitcode=9 -- sprog -p' sh "$tmp/sp/d2" "$GC"
	gate "a static program in the working directory, an empty PATH entry: refused" 2 \
		sh -c 'cd "$1" && PATH=/nonexistent:: exec "$2" --error-exitcode=9 -- sprog -p' sh \
		"$tmp/sp/d2" "$GC"
fi
# Secure mode, as ld.so decides it: a set-user-ID program whose owner is not the caller is
# refused (root too: exec makes its effective id the owner's); one whose owner is the caller
# runs checked. Needs root, to give a copy of the program away.
if [ "$(id -u)" = 0 ] && [ "$ASAN" != 1 ] && id nobody > /dev/null 2>&1; then
	cp "$RELA" "$tmp/sb/suid_prog" 2> /dev/null || { mkdir -p "$tmp/sb" && cp "$RELA" "$tmp/sb/suid_prog"; }
	chown nobody "$tmp/sb/suid_prog" && chmod 4755 "$tmp/sb/suid_prog"
	gate "root, a set-user-ID program owned by nobody: refused" 2 "$GC" --error-exitcode=9 \
		--log-file=/dev/null -- "$tmp/sb/suid_prog" plain
	grep -q 'secure mode.*not run unchecked' "$tmp/err" && ok "set-user-ID: the message says secure mode" ||
		bad "set-user-ID: message '$(head -c 200 "$tmp/err")'"
	chown root "$tmp/sb/suid_prog" && chmod 4755 "$tmp/sb/suid_prog"
	gate "root, a set-user-ID program owned by root: checked (1 double-free)" 9 env \
		LD_LIBRARY_PATH="$(cd "$BUILD/fakecuda" && pwd)" "$GC" --error-exitcode=9 \
		--log-file=/dev/null -- "$tmp/sb/suid_prog" plain  # (the copy's RPATH finds nothing)
	# set-group-ID is the kernel's only with group execute (without, it marks mandatory
	# locking): a program of another group with 2745 runs checked, with 2755 is refused.
	chown root:nogroup "$tmp/sb/suid_prog" 2> /dev/null || chown root:65534 "$tmp/sb/suid_prog"
	chmod 2755 "$tmp/sb/suid_prog"
	gate "root, a set-group-ID program of another group: refused" 2 "$GC" --error-exitcode=9 \
		--log-file=/dev/null -- "$tmp/sb/suid_prog" plain
	chmod 2745 "$tmp/sb/suid_prog"
	gate "root, set-group-ID without group execute: checked (1 double-free)" 9 env \
		LD_LIBRARY_PATH="$(cd "$BUILD/fakecuda" && pwd)" "$GC" --error-exitcode=9 \
		--log-file=/dev/null -- "$tmp/sb/suid_prog" plain
	# A launcher whose effective id is not its real one: every exec keeps that, so the loader
	# runs any program in secure mode.
	if command -v setpriv > /dev/null; then
		gate "a launcher with an effective uid not its real one: refused" 2 \
			setpriv --euid=65534 "$GC" --error-exitcode=9 --log-file=/dev/null -- "$RELA" plain
	fi
else
	echo "skip set-user-ID programs (needs root, and not under ASan)"
fi
# A launcher run under another (a CI step wrapping a script that calls graphcheck): the inner
# run's errors reach the outer gate; a clean inner run passes it.
gate "graphcheck inside graphcheck, the inner run with errors" 9 "$GC" --error-exitcode=9 \
	--log-file=/dev/null -- "$GC" --log-file=/dev/null -- "$RELA" plain
gate "graphcheck inside graphcheck, the inner run without a CUDA call" 0 "$GC" --error-exitcode=9 \
	-- "$GC" -- true

# Two outputs at one path (relative for one, absolute for the other): refused, as the object
# would interleave text and JSON lines in the file. (A hard link is refused for each already.)
rm -f "$tmp/one.log" "$tmp/two.log" "$tmp/two.json"
gate "--log-file and --json-file at one path: refused" 2 sh -c 'cd "$1" && exec "$2" --log-file=one.log --json-file="$1/one.log" -- true' sh "$tmp" "$GC"
grep -q "are one file" "$tmp/err" && ok "refused with the reason" || bad "one file for two outputs: no reason given: $(head -c 200 "$tmp/err")"
# set through the environment instead: the refusal names the variables too
gate "GRAPHCHECK_LOG_FILE and GRAPHCHECK_JSON_FILE at one path: refused" 2 env \
	GRAPHCHECK_LOG_FILE="$tmp/one.log" GRAPHCHECK_JSON_FILE="$tmp/one.log" "$GC" -- true
grep -q "(GRAPHCHECK_LOG_FILE) '$tmp/one.log' and --json-file (GRAPHCHECK_JSON_FILE)" "$tmp/err" &&
	ok "the refusal names the variables set" || bad "one file through the environment: $(head -c 200 "$tmp/err")"
mkdir -p "$tmp/sub"
gate "--log-file and --json-file at one new file spelled two ways (./, ..): refused" 2 \
	"$GC" --log-file="$tmp/one.log" --json-file="$tmp/sub/.././one.log" -- true
gate "--json-file and --trace-file at one new file spelled two ways: refused" 2 \
	"$GC" --json-file="$tmp/sub/one.json" --trace-file="$tmp/./sub/one.json" -- true
# 300 processes that make no CUDA call (a script's commands) leave no marker each in the
# run directory (they did: one file each, until the run ended); one that does keeps its own,
# and its error still fails the gate.
gate "300 processes without a CUDA call, then one with an error" 9 "$GC" --error-exitcode=9 \
	--log-file=/dev/null -- sh -c 'i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i + 1)); done
		"$1" plain; ls "$GRAPHCHECK_RUN_DIR" | grep -c "^started\." > "$2"' sh "$RELA" "$tmp/markers"
[ "$(cat "$tmp/markers")" -le 4 ] && ok "markers left by 301 processes: $(cat "$tmp/markers") (the shell, ls, grep, the CUDA one)" ||
	bad "markers left by 301 processes: $(cat "$tmp/markers")"
# Patterns as the object opens them: "%%" is one '%' (a%%b and a%b are one file); "%p" is
# each process's id, never a literal name (a%p and a%%p are two).
gate "--log-file a%%b and --json-file a%b: refused" 2 "$GC" --log-file="$tmp/a%%b" --json-file="$tmp/a%b" -- true
gate "--log-file a%p.log and --json-file a%%p.log: runs" 0 "$GC" --log-file="$tmp/a%p.log" --json-file="$tmp/a%%p.log" -- true
gate "--log-file and --json-file both /dev/null: runs" 0 "$GC" --log-file=/dev/null --json-file=/dev/null -- true
gate "--log-file and --json-file at two files: runs" 0 "$GC" --log-file="$tmp/two.log" --json-file="$tmp/two.json" -- true
rm -f "$tmp/one.log" "$tmp/two.log" "$tmp/two.json"

# A log named again by the next run is emptied first, as valgrind's: a CI job reusing one
# name must not gate on the last run's records (they were appended to: 2 start lines).
rm -f "$tmp/again.json"
for k in 1 2; do
	launch "$GC" --json-file="$tmp/again.json" --log-file=/dev/null -- "$RELA" plain > /dev/null 2>&1
done
[ "$(grep -c '"type":"start"' "$tmp/again.json")" = 1 ] &&
	ok "a log named by two runs in turn: the second run's records alone" ||
	bad "a log named by two runs: $(grep -c '"type":"start"' "$tmp/again.json") start lines"
# An executable where a log is named (a missing '=': `--log-file ./app2 ./app`): refused,
# never emptied.
cp "$RELA" "$tmp/app2"
gate "--log-file naming an executable: refused" 2 "$GC" --log-file "$tmp/app2" "$RELA" plain
cmp -s "$RELA" "$tmp/app2" && ok "the executable left as it was" || bad "the executable named as a log was changed"
rm -f "$tmp/again.json" "$tmp/app2"
# A program that cannot run: the shell's status (127 not found), the reason once; a script
# whose #! interpreter does not exist is said so (its own name was blamed: "No such file"),
# and no "nothing was checked" note after it (the program never ran).
printf '#!/nonexistent/interp\necho hi\n' > "$tmp/badi.sh" && chmod +x "$tmp/badi.sh"
gate "a script whose interpreter does not exist: 127" 127 "$GC" -- "$tmp/badi.sh"
grep -q "cannot run '$tmp/badi.sh': its interpreter '/nonexistent/interp' does not exist" "$tmp/err" &&
	! grep -q "nothing was checked" "$tmp/err" &&
	ok "a missing interpreter: named, no note after it" || bad "a missing interpreter: $(tr '\n' ' ' < "$tmp/err")"
gate "a program that does not exist: 127" 127 "$GC" -- "$tmp/no-such-program"
[ "$(grep -c . "$tmp/err")" = 1 ] && ok "a missing program: one line" || bad "a missing program: $(tr '\n' ' ' < "$tmp/err")"
rm -f "$tmp/badi.sh"
# A cut ELF program, and a file with only ELF's magic: the kernel's refusal, 126, as from a
# shell (they were "statically linked", and run by /bin/sh as a script: 127).
cp "$RELA" "$tmp/cut.bin" && truncate -s 100 "$tmp/cut.bin"
printf '\177ELF junk' > "$tmp/magic.bin" && chmod +x "$tmp/cut.bin" "$tmp/magic.bin"
for b in cut magic; do
	gate "a $b ELF file: 126" 126 "$GC" -- "$tmp/$b.bin"
	grep -q "cannot run '$tmp/$b.bin': Exec format error" "$tmp/err" && ok "a $b ELF file: Exec format error" ||
		bad "a $b ELF file: $(tr '\n' ' ' < "$tmp/err")"
done
rm -f "$tmp/cut.bin" "$tmp/magic.bin"
# A misspelt option: refused, with the one it is nearest.
gate "a misspelt option: refused" 2 "$GC" --logfile=x.log -- true
grep -q "unknown option '--logfile=x.log' (did you mean --log-file?)" "$tmp/err" &&
	ok "a misspelt option: did you mean --log-file" || bad "a misspelt option: $(head -1 "$tmp/err")"
# --leak-check in valgrind's words (full: every site; no and summary), -v for --verbose; a
# word it does not take is refused.
for w in full:full no:0 summary:1 yes:full; do
	gate "--leak-check=${w%%:*}" 0 "$GC" -v --leak-check="${w%%:*}" --log-file=/dev/null -- "$RELA" plain
	grep -q "^graphcheck: GRAPHCHECK_LEAK_CHECK=${w#*:}\$" "$tmp/err" &&
		ok "--leak-check=${w%%:*} -v: GRAPHCHECK_LEAK_CHECK=${w#*:}" ||
		bad "--leak-check=${w%%:*}: $(grep LEAK_CHECK "$tmp/err")"
done
# --gen-suppressions=yes and =all as valgrind spells them: the entries are printed.
gate "--gen-suppressions=yes" 0 "$GC" --gen-suppressions=yes -- "$RELA" plain
grep -q '^   graphcheck:double-free$' "$tmp/err" && ok "--gen-suppressions=yes: an entry printed" ||
	bad "--gen-suppressions=yes: no entry"
gate "--leak-check=everything: refused" 2 "$GC" --leak-check=everything -- "$RELA" plain
grep -q "^graphcheck: --leak-check takes no, summary, yes or full, not 'everything'\$" "$tmp/err" &&
	ok "--leak-check=everything: the words it takes" || bad "--leak-check=everything: $(head -1 "$tmp/err")"
# A value it does not take is said to be the value (an unknown option, 'did you mean
# --gen-suppressions?', before).
gate "--gen-suppressions=maybe: refused" 2 "$GC" --gen-suppressions=maybe -- "$RELA" plain
grep -q "^graphcheck: --gen-suppressions takes yes, all or no, not 'maybe'\$" "$tmp/err" &&
	ok "--gen-suppressions=maybe: the words it takes" || bad "--gen-suppressions=maybe: $(head -1 "$tmp/err")"
# `--log-file -- prog`: the value forgotten, not a log named "--" (one was made before).
gate "--log-file followed by --: needs a value" 2 sh -c 'cd "$1" && exec "$2" --log-file -- true' sh "$tmp" "$GC"
[ ! -e "$tmp/--" ] && ok "no file named -- made" || { bad "a log named -- was made"; rm -f -- "$tmp/--"; }

# ---- row 13: signals to the launcher ------------------------------------------------------
# (SIGINT cannot be shown from here: sh starts background jobs with it ignored, and the
# launcher then leaves it ignored for the program, as without graphcheck.)
# A signal ignored when the suite started (nohup ignores SIGHUP) stays ignored for everything
# it runs, as it would without graphcheck: not shown then.
ignored=$(awk '/^SigIgn:/ { print substr($2, length($2)) }' /proc/$$/status 2> /dev/null)
# start_program SCRIPT [ARGS]: the launcher in the background running sh -c SCRIPT, its $0
# "$tmp/child.pid" (where the script writes its pid); sets lpid and cpid.
start_program() {
	rm -f "$tmp/child.pid"
	script=$1
	shift
	env ${ASANRT:+LD_PRELOAD=$ASANRT} "$GC" -- sh -c "$script" "$tmp/child.pid" "$@" > /dev/null 2>&1 &
	lpid=$!
	for k in $(seq 100); do [ -s "$tmp/child.pid" ] && break; sleep 0.05; done
	cpid=$(cat "$tmp/child.pid")
}
# signal_and_wait SIG: SIG to the launcher, its status in lrc; alive=yes when the program
# still runs (then killed). A zombie (State Z) is dead: here no init may reap it.
signal_and_wait() {
	kill -$1 $lpid
	wait $lpid 2> /dev/null
	lrc=$?
	sleep 0.2
	alive=no
	grep -q '^State:.*[RSD]' /proc/"$cpid"/status 2> /dev/null && alive=yes && kill -KILL "$cpid"
}
for sig in TERM:143 HUP:129; do
	want=${sig#*:} sig=${sig%:*}
	case $sig:$ignored in HUP:[13579bdf])
		echo "skip SIGHUP to the launcher (ignored by whoever started the tests: nohup?)"
		continue ;;
	esac
	start_program 'echo $$ > "$0"; exec sleep 30'
	rd=$(ls -d /proc/"$cpid" > /dev/null 2>&1 && tr '\0' '\n' < /proc/"$cpid"/environ | sed -n 's/^GRAPHCHECK_RUN_DIR=//p')
	signal_and_wait $sig
	[ $lrc -eq $want ] && [ $alive = no ] && [ -n "$rd" ] && [ ! -e "$rd" ] &&
		ok "SIG$sig to the launcher: the program got it too, run directory removed, launcher status $lrc" ||
		bad "SIG$sig to the launcher: status $lrc (want $want), program still running: $alive, run directory '$rd' left: $([ -e "$rd" ] && echo yes)"
done

# A signal pending as the launcher forks (sent just before; passed on at once after): the
# program gets it, by its default action before its handler is set, or its handler after;
# it was lost before in about 3 runs of 10 (the child still had the launcher's handler, with
# no program to pass it to): the program then ran to its end (status 0).
SHIM=$BUILD/reliability/fork_signal_shim.so
if [ -f "$SHIM" ] && [ "$ASAN" != 1 ]; then
	lost=0 other=0
	for k in 1 2 3 4 5 6 7 8 9 10; do
		GC_TEST_FORK_SIGNAL=10 LD_PRELOAD=$SHIM "$GC" -- sh -c 'trap "exit 5" USR1; sleep 0.5 & wait' > /dev/null 2>&1
		case $? in 0) lost=$((lost + 1)) ;; 5 | 138) ;; *) other=$((other + 1)) ;; esac
	done
	[ $lost = 0 ] && [ $other = 0 ] &&
		ok "SIGUSR1 pending as the launcher forks, 10 runs: the program got it each time (exit 5 or died of it)" ||
		bad "SIGUSR1 pending as the launcher forks: lost in $lost of 10 runs, another status in $other"
else
	echo "skip a signal pending at the launcher's fork (no shim: a sanitizer build)"
fi

# A process one fd short of its limit (ulimit -n 4: the run directory and its marker file
# cannot both be open; with a log file at fd 3, not even one): its errors still fail the
# gate (status 6 and 3, the program's, before: "no process of this run made a CUDA call").
# (Not under ASan: its runtime needs fds of its own.)
if [ "$ASAN" != 1 ]; then
	gate "ulimit -n 4, _exit after 3 errors" 9 \
		"$GC" --error-exitcode=9 -- sh -c "ulimit -n 4; exec \"\$0\" die _exit 3" "$RELA"
	gate "ulimit -n 4, a log file, exit after 3 errors" 9 "$GC" --error-exitcode=9 \
		--log-file="$tmp/l4.txt" -- sh -c "ulimit -n 4; exec \"\$0\" die exit 3" "$RELA"
fi

# graphcheck's start out of memory (its ledger's blocks refused): checking is off, which
# the gate must not pass as a clean run (it did: status 0, the process marked as checked).
OOM=$BUILD/reliability/oom_shim.so
if [ -f "$OOM" ] && [ "$ASAN" != 1 ]; then
	gate "graphcheck out of memory at start-up: the gate fails the unchecked run" 9 \
		env LD_PRELOAD="$OOM" "$GC" --error-exitcode=9 -- "$RELA" plain
	grep -q "out of memory at start-up; checking is off" "$tmp/err" &&
		ok "... and says why" || bad "no word of the start-up's failure: $(cat "$tmp/err")"
else
	echo "skip graphcheck out of memory at start-up (no shim: a sanitizer build)"
fi

# The program's own signal to its parent (a readiness signal): not sent back to it (it
# died of its own SIGUSR2 before, 140).
gate "the program signals its parent (SIGUSR2): not passed back" 0 "$GC" -- sh -c 'kill -USR2 $PPID; sleep 0.3'

# SIGKILL to the launcher (Python's subprocess timeout, timeout -k) takes the program with
# it, as killing the program would have (it ran on alone before).
start_program 'echo $$ > "$0"; exec sleep 30'
signal_and_wait KILL
[ $alive = no ] && ok "SIGKILL to the launcher: the program ends with it" ||
	bad "SIGKILL to the launcher: the program still runs"

# A signal the program handles: the launcher ends as the program did, as its caller would
# have seen without graphcheck. SIGUSR1 (a job scheduler's warning before its time limit)
# used to end the launcher alone (status 138), the program left running on its own; SIGTERM
# caught and answered with exit 0 gave 143 instead of 0.
for sig in USR1:5 TERM:0 USR2:7 XCPU:3 36:4; do  # 36: a real-time signal (SIGRTMIN+2)
	want=${sig#*:} sig=${sig%:*}
	start_program 'trap "kill \$!; exit $1" '$sig'; echo $$ > "$0"; sleep 30 & wait' $want
	signal_and_wait $sig
	[ $lrc -eq $want ] && [ $alive = no ] &&
		ok "SIG$sig to the launcher, caught by the program (exit $want): the launcher's status $lrc, no program left behind" ||
		bad "SIG$sig to the launcher, caught by the program: status $lrc (want $want), program still running: $alive"
done

# A program that dies of a signal: the launcher dies of the same one (what the caller would
# have seen without graphcheck; a shell cannot tell that from exit 128+N, Python can), and
# leaves no core of its own. The gate's status still wins when the program recorded errors.
if command -v python3 > /dev/null; then
	status_of() {
		launch python3 -c 'import subprocess, sys
print(subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode)' "$@"
	}
	# The launcher in l/, the program in p/: the program's core there shows that cores are
	# written here at all (core_pattern, the hard limit), so that none in l/ means something.
	mkdir -p "$tmp/l" "$tmp/p"
	st=$(cd "$tmp/l" && ulimit -c unlimited 2> /dev/null; status_of "$GC" --log-file=/dev/null -- \
		sh -c 'cd "$1" && shift && exec "$@"' sh "$tmp/p" "$RELA" die abort 0)
	[ "$st" = -6 ] && [ -z "$(ls "$tmp/l" | grep core)" ] &&
		ok "abort() in the program: the launcher dies of SIGABRT too (returncode $st), no core of its own" ||
		bad "abort() in the program: launcher returncode '$st' (want -6), launcher's files: $(ls "$tmp/l" | tr '\n' ' ')"
	[ -n "$(ls "$tmp/p" | grep core)" ] || echo "skip the launcher's core: no core file written here by the program either (core_pattern or limits)"
	rm -rf "$tmp/l" "$tmp/p"
	st=$(status_of "$GC" --error-exitcode=9 --log-file=/dev/null -- "$RELA" die segv 2)
	[ "$st" = 9 ] && ok "a segfault after 2 errors under --error-exitcode=9: status $st" ||
		bad "a segfault after 2 errors under --error-exitcode=9: status '$st', want 9"
else
	echo "skip signal pass-through (no python3)"
fi

# ---- row 17: relative log paths -----------------------------------------------------------
mkdir -p "$tmp/rel/sub"
(cd "$tmp/rel" && GRAPHCHECK_LOG_FILE=t.txt launch "$GC" --json-file=j-%p.json -- \
	sh -c 'cd sub && exec "$0" plain' "$RELA" > /dev/null 2>&1)
[ -s "$tmp/rel/t.txt" ] && ls "$tmp/rel"/j-*.json > /dev/null 2>&1 && [ -z "$(ls "$tmp/rel/sub")" ] &&
	ok "relative --json-file and GRAPHCHECK_LOG_FILE: in the launcher's directory, not the program's" ||
	bad "relative log paths: launcher's dir has '$(ls "$tmp/rel" | tr '\n' ' ')', program's dir '$(ls "$tmp/rel/sub" | tr '\n' ' ')'"
finish
