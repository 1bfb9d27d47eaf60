#!/bin/sh
# graphcheck's stderr. (1) A pipe whose reader is gone: graphcheck's records, notes and exit
# summary there raise no SIGPIPE, so a program that never writes to stderr is not killed by
# graphcheck's writes (it was: status 141); the program's own write still gets its SIGPIPE,
# and a program that blocks SIGPIPE is not left with one pending. (2) A program that puts its
# own file at fd 2 (dup2, or stderr closed at the start and its file opened there): no record
# lands in that file; records go to the stderr the process started with, kept from the
# first CUDA call on.
# Usage: sh tests/reliability/stderr.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

# broken: fd 5 becomes a pipe's write end with no reader (a FIFO opened read-write, then
# that end closed): every write to it fails with EPIPE, at once and every time.
broken() {
	rm -f "$tmp/fifo"
	mkfifo "$tmp/fifo"
	exec 4<> "$tmp/fifo" 5> "$tmp/fifo" 4<&-
}
# rel CMD...: CMD with stderr on the broken pipe; sets rc and out (its stdout). The
# redirection is made by an inner sh that execs CMD: this shell, which says "Terminated"
# on its own stderr when CMD dies by a signal, keeps its stderr.
rel() {
	broken
	timeout 20 sh -c 'exec "$@" 2>&5 5>&-' sh "$@" > "$tmp/out"
	rc=$?
	exec 5>&-
	out=$(cat "$tmp/out")
}

# ---- (1) stderr a pipe whose reader is gone ----------------------------------------------------
rel "$REL" plain; nrc=$rc; nout=$out
rel env LD_PRELOAD="$PRE" "$REL" plain
[ $rc -eq $nrc ] && [ "$out" = "$nout" ] &&
	ok "records on a stderr pipe with no reader: the program lives, status $rc as native" ||
	bad "records on a stderr pipe with no reader: status $rc (native $nrc; 141 is SIGPIPE)"

rel env GRAPHCHECK_LOG_FILE="$tmp/no/such/dir/log" GRAPHCHECK_HISTORY=lots GRAPHCHECK_NOSUCH=1 \
	GRAPHCHECK_VERBOSE=1 LD_PRELOAD="$PRE" "$REL" plain
[ $rc -eq $nrc ] && [ "$out" = "$nout" ] &&
	ok "notes (a bad value, an unknown name, the options, a log path that fails) on that pipe: status $rc" ||
	bad "notes on a stderr pipe with no reader: status $rc (native $nrc)"

rel "$REL" die term 0; nrc=$rc
rel env LD_PRELOAD="$PRE" "$REL" die term 0
[ $rc -eq $nrc ] && [ $rc -eq 143 ] &&
	ok "the summary written from the SIGTERM handler to that pipe: still dies of SIGTERM ($rc)" ||
	bad "summary from the SIGTERM handler on a broken pipe: status $rc (native $nrc)"

rel "$REL" pipe-blocked; nrc=$rc; nout=$out
rel env LD_PRELOAD="$PRE" "$REL" pipe-blocked
[ $rc -eq $nrc ] && [ "$out" = "$nout" ] &&
	ok "a program that blocks SIGPIPE: no SIGPIPE of graphcheck's left pending ($(echo "$out" | tail -n 1))" ||
	bad "SIGPIPE blocked by the program: status $rc (native $nrc), '$(echo "$out" | tail -n 1)' (native '$(echo "$nout" | tail -n 1)')"

rel "$REL" stderr-own; nrc=$rc; nout=$out
rel env LD_PRELOAD="$PRE" "$REL" stderr-own
[ $rc -eq $nrc ] && [ $rc -eq 141 ] && [ "$out" = "$nout" ] &&
	ok "the program's own write to that pipe still gets its SIGPIPE ($rc), after graphcheck's records" ||
	bad "the program's own write to a broken stderr: status $rc (native $nrc)"

# ---- (2) the program's own file at fd 2 --------------------------------------------------------
# data: what the program wrote to its file at fd 2 (one line); err: what the stderr it
# started with holds.
for when in late early closed; do
	mode=$when; [ $when = closed ] && mode=early
	rm -f "$tmp/data" "$tmp/err"
	if [ $when = closed ]; then
		timeout 20 env LD_PRELOAD="$PRE" "$REL" stderr-data "$tmp/data" $mode > "$tmp/out" 2>&-
	else
		timeout 20 env LD_PRELOAD="$PRE" "$REL" stderr-data "$tmp/data" $mode > "$tmp/out" 2> "$tmp/err"
	fi
	rc=$?
	data=$(tr '\n' '|' < "$tmp/data")
	recs=0; [ -f "$tmp/err" ] && recs=$(grep -c '^==graphcheck== error: double-free' "$tmp/err")
	want=0; [ $when = late ] && want=2
	case $when in
	late) what="dup2 over fd 2 after the first CUDA call: both records on the stderr it started with" ;;
	early) what="dup2 over fd 2 before any CUDA call: no record written (the stderr it started with is not kept)" ;;
	closed) what="stderr closed at the start, its file opened at fd 2: no record written" ;;
	esac
	[ $rc -eq 0 ] && [ "$data" = "data line|" ] && [ "$recs" -eq $want ] &&
		ok "$what; the file holds only its line" ||
		bad "$when: status $rc, its file '$(printf %s "$data" | head -c 200)', $recs records on the original stderr (want $want)"
done

finish
