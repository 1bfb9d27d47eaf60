#!/bin/sh
# An error the program never sees is not reported (issue 16): the CUDA runtime's first call
# on a thread it has not bound gets CUDA_ERROR_INVALID_CONTEXT (201), binds its primary
# context and makes the same call again. Through the stand-in driver with
# FAKECUDA_STRICT_CONTEXT=1 (201 on a thread without a current context), the calls made
# from the program itself, as nvcc's default static runtime makes them:
# - retried and succeeded: no record, status 0 under --error-exitcode, noted in verbose;
# - not retried (the thread gives up): api-error, with the failed call's details and frames,
#   written at exit; also when a fatal signal ends the program;
# - followed by another call: api-error for the failed call;
# - the replay of each trace gives the live run's records.
# Usage: sh tests/noise/retry.sh BUILD_DIR
. tests/reliability/lib.sh
[ "$TSAN" = 1 ] && skip_suite "under TSan: its checks read the failed call's frames and the SIGTERM ending, which TSan's interceptors and signal handling change; its threads run under TSan in run_fake.sh"
GC=$BUILD/graphcheck
PROG=$BUILD/noise/ctx_prog
REPORT=$BUILD/graphcheck-report
export FAKECUDA_STRICT_CONTEXT=1
launch() { if [ "$ASAN" = 1 ]; then LD_PRELOAD=${PRE%:*} "$@"; else "$@"; fi; }

# run MODE [ARG] [-- LAUNCHER OPTIONS]: under the launcher with the gate; status in $rc.
run() {
	mode=$1 arg=${2:-}
	shift; [ $# -gt 0 ] && shift
	rm -f "$tmp/$mode".*
	launch timeout 60 "$GC" --error-exitcode=9 --log-file="$tmp/$mode.txt" \
		--json-file="$tmp/$mode.json" --trace-file="$tmp/$mode.trace" "$@" -- \
		"$PROG" $mode $arg > "$tmp/$mode.out" 2> "$tmp/$mode.err"
	rc=$?
}
# records FILE: "rule call result size" of each record, sorted.
records() {
	jq -r 'select(.type == "violation") | "\(.rule) \(.call) \(.result) \(.size)"' "$1" |
		LC_ALL=C sort
}
# replays MODE: the replay of its trace gives the live run's records.
replays() {
	"$REPORT" --replay --format=json "$tmp/$1.trace" > "$tmp/$1.replay" 2> "$tmp/$1.replay.err"
	live=$(records "$tmp/$1.json") again=$(records "$tmp/$1.replay")
	[ "$live" = "$again" ] && ok "$1: the replay agrees: {$(echo $again)}" ||
		bad "$1: the replay gives {$(echo $again)}, the live run {$(echo $live)}"
}

# ---- retried and succeeded ----------------------------------------------------------------
run retry "" --verbose
grep -q 'cuMemAllocAsync(2560) -> 201' "$tmp/retry.out" &&
	grep -q 'cuMemAllocAsync(2560) again -> 0' "$tmp/retry.out" &&
	ok "retry: the stand-in answered 201, then 0 to the same call after the bind" ||
	bad "retry: the stand-in did not give 201 then 0: $(tr '\n' ' ' < "$tmp/retry.out")"
[ "$rc" -eq 0 ] && ok "retry: status 0 under --error-exitcode" || bad "retry: status $rc, want 0"
[ -z "$(violations "$tmp/retry.json")" ] && ok "retry: no record" ||
	bad "retry: records: $(violations "$tmp/retry.json" | tr '\n' ' ')"
grep -q 'graphcheck: 1 call(s) failed with CUDA_ERROR_INVALID_CONTEXT' "$tmp/retry.err" &&
	ok "retry: the dropped error is noted in verbose output" ||
	bad "retry: no verbose note: $(head -c 300 "$tmp/retry.err")"
replays retry

# ---- not retried: the thread gives up and ends ------------------------------------------
run giveup
[ "$rc" -eq 9 ] && ok "giveup: status 9 under --error-exitcode=9" || bad "giveup: status $rc, want 9"
[ "$(records "$tmp/giveup.json")" = "api-error cuMemAllocAsync 201 2560" ] &&
	ok "giveup: one api-error for cuMemAllocAsync (201, 2560 bytes)" ||
	bad "giveup: records {$(records "$tmp/giveup.json" | tr '\n' ' ')}"
# Written at exit, from the main thread, yet about the failed call: its thread and frames.
# (The first frame in the program: under ASan the frames start in libasan and graphcheck.)
jq 'select(.type == "violation") | .tid != .pid and
	([.backtrace[] | select(.module | endswith("/ctx_prog"))][0].symbol == "giveup")' \
	"$tmp/giveup.json" | grep -qx true &&
	ok "giveup: the record has the failed call's thread and frames (giveup's)" ||
	bad "giveup: wrong thread or frames: $(jq -c 'select(.type == "violation") | [.pid, .tid, .backtrace[0]]' "$tmp/giveup.json")"
replays giveup
# Without the leak check no exit event reaches the ledger: the exit path takes what is held.
run giveup "" --no-leak-check
[ "$rc" -eq 9 ] && [ "$(records "$tmp/giveup.json")" = "api-error cuMemAllocAsync 201 2560" ] &&
	ok "giveup --no-leak-check: the held api-error is written at exit, status 9" ||
	bad "giveup --no-leak-check: status $rc, records {$(records "$tmp/giveup.json" | tr '\n' ' ')}"
replays giveup

# The same, ended by a fatal signal before exit: the held record is written from the handler.
run giveup kill
[ "$rc" -eq 9 ] && ok "giveup + SIGTERM: status 9" || bad "giveup + SIGTERM: status $rc, want 9"
[ "$(records "$tmp/giveup.json")" = "api-error cuMemAllocAsync 201 2560" ] &&
	grep -q '"signal":"SIGTERM"' "$tmp/giveup.json" &&
	ok "giveup + SIGTERM: the held api-error is written before the signal's summary" ||
	bad "giveup + SIGTERM: records {$(records "$tmp/giveup.json" | tr '\n' ' ')}"
# From the handler the record is built without printf, scratch or frames (its own writer).
grep -q "no frames: written from a fatal signal's handler" "$tmp/giveup.txt" &&
	[ "$(jq -c 'select(.type == "violation") | [.backtrace, .message != ""]' "$tmp/giveup.json")" = '[[],true]' ] &&
	ok "giveup + SIGTERM: the handler's own record, text and JSON, without frames" ||
	bad "giveup + SIGTERM: not the handler's record: $(grep -c . "$tmp/giveup.txt") text lines, $(jq -c 'select(.type == "violation") | .backtrace | length' "$tmp/giveup.json") frames"

# ---- followed by another call on that thread -----------------------------------------------
run other
[ "$rc" -eq 9 ] && ok "other: status 9" || bad "other: status $rc, want 9"
[ "$(records "$tmp/other.json")" = "api-error cuMemAllocAsync 201 2560" ] &&
	ok "other: api-error for the failed call (2560 bytes), released by the next call" ||
	bad "other: records {$(records "$tmp/other.json" | tr '\n' ' ')}"
replays other

# ---- the program's output is the same with and without graphcheck -------------------------
for m in retry giveup other; do
	"$PROG" $m > "$tmp/native.out" 2>&1
	gc "$PROG" $m > "$tmp/gc.out" 2> /dev/null
	cmp -s "$tmp/native.out" "$tmp/gc.out" && ok "$m: same output under graphcheck" ||
		bad "$m: output changed under graphcheck"
done
finish
