#!/bin/sh
# graphcheck on small thread stacks (issue 12 row 4): a thread with a 32 KiB or 16 KiB stack
# (legal; PTHREAD_STACK_MIN is 16 KiB) commits double frees (records with backtraces) and
# makes graphcheck start there (`first`). Same output and status as without graphcheck;
# the stack one record-producing call used below its caller (graphcheck with the libc it
# calls, and the stand-in driver, measured by painting) stays under 4 KiB, and under 6 KiB
# for the call that starts graphcheck (options, opening the files).
# Not under ASan (its redzones make every frame several times larger).
# Usage: sh tests/reliability/stack.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
[ "$TSAN" = 1 ] && skip_suite "under TSan: its instrumentation changes the stack use being measured"
if [ "$ASAN" = 1 ]; then skip_suite "under ASan (its frames are not the program's)"; fi

for kib in 32 16; do
	for first in "" first; do
		"$REL" small-stack $kib $first > "$tmp/native.out" 2> "$tmp/native.err"
		nrc=$?
		native=$(sed -n 's/^stack used by one double free: \([0-9]*\) bytes$/\1/p' "$tmp/native.err")
		GRAPHCHECK_BACKTRACE_DEPTH=64 GRAPHCHECK_ALLOC_BACKTRACE_DEPTH=64 GRAPHCHECK_JSON_FILE=$tmp/gc.json \
			GRAPHCHECK_TRACE_FILE=$tmp/gc.trace timeout 60 env LD_PRELOAD="$PRE" "$REL" small-stack $kib $first > "$tmp/gc.out" 2> "$tmp/gc.err"
		grc=$?
		used=$(sed -n 's/^stack used by one double free: \([0-9]*\) bytes$/\1/p' "$tmp/gc.err")
		n=$(grep -c '^==graphcheck== error: double-free' "$tmp/gc.err")
		want=4 limit=4096; [ -n "$first" ] && want=3 limit=6144
		[ $grc -eq $nrc ] && cmp -s "$tmp/native.out" "$tmp/gc.out" && [ "$n" -eq $want ] &&
			[ -n "$used" ] && [ "$used" -lt $limit ] &&
			ok "${kib} KiB stack${first:+, graphcheck started there}: same output, $n records; one double free used $used bytes of stack (without graphcheck $native)" ||
			bad "${kib} KiB stack${first:+ (first)}: status $grc (native $nrc), $n records of $want, stack used '${used:-?}' bytes (native $native)"
	done
done
finish
