#!/bin/sh
# exit() from a signal handler that interrupted graphcheck (issue 12 row 3): the program's
# SIGUSR1 handler calls exit(7) while its main thread allocates and frees without end, so
# the signal lands inside graphcheck's own code most of the time, now and then while it
# holds a ledger lock. 20 runs: none may hang (the exit handler would wait on the lock the
# interrupted code holds), each exits 7 as without graphcheck with its summary written; a
# run that ended inside graphcheck says the leak check was skipped and why.
# Usage: sh tests/reliability/exit_signal.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
[ "$TSAN" = 1 ] && skip_suite "under TSan: TSan reports the program's own exit() in its signal handler (exit 66, natively too)"

"$REL" exit-in-signal 20 > "$tmp/native.out" 2> /dev/null
nrc=$?
runs=20 hung=0 wrong=0 nosum=0 skipped=0
for i in $(seq $runs); do
	rm -f "$tmp/gc.json" "$tmp/gc.txt"
	GRAPHCHECK_JSON_FILE=$tmp/gc.json GRAPHCHECK_LOG_FILE=$tmp/gc.txt \
		timeout 10 env LD_PRELOAD="$PRE" "$REL" exit-in-signal 20 > "$tmp/gc.out" 2> /dev/null
	rc=$?
	if [ $rc -eq 124 ]; then hung=$((hung + 1)); continue; fi
	[ $rc -eq $nrc ] && cmp -s "$tmp/native.out" "$tmp/gc.out" || wrong=$((wrong + 1))
	# the summary in both logs: normal, or naming why the leak check was skipped
	if grep -q '"type":"summary"' "$tmp/gc.json" &&
		grep -q '^==graphcheck== graphcheck: [0-9]* errors, [0-9]* warnings' "$tmp/gc.txt"; then
		grep -q '"leak_check_skipped":"exit() from a signal handler' "$tmp/gc.json" &&
			grep -q 'exit() from a signal handler that interrupted graphcheck: no leak check)$' "$tmp/gc.txt" &&
			skipped=$((skipped + 1))
	else
		nosum=$((nosum + 1))
	fi
done
[ $nrc -eq 7 ] && [ $hung -eq 0 ] && [ $wrong -eq 0 ] && [ $nosum -eq 0 ] &&
	ok "exit() from a SIGUSR1 handler, $runs runs: none hung, each exit 7 with the same output and a summary ($skipped inside graphcheck: leak check skipped, said why)" ||
	bad "exit() from a SIGUSR1 handler, $runs runs: $hung hung, $wrong with another status or output (native $nrc), $nosum without a summary"
finish
