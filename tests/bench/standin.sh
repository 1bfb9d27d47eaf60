#!/bin/sh
# graphcheck's added cost per call through the stand-in driver (tests/fakecuda), CPU only.
# Runs `prog_linked threads T OPS` (alloc/free pairs) and `prog_bench event T OPS` (an event
# record and a stream wait per op) natively, under LD_PRELOAD=libgraphcheck.so, and the same
# with GRAPHCHECK_ALLOC_BACKTRACE_DEPTH=8, rounds interleaved; each also with OPS=0, so that
# start-up and the fixed per-thread calls cancel out:
#   added ns/call = ((gc[OPS] - gc[0]) - (native[OPS] - native[0])) / (2 * T * OPS)
# The stand-in's own cost (a table and a mutex-guarded tally per call) is not the real
# driver's, so native ns/call here says nothing about the GPU; the added figure is
# graphcheck's hooks, ledger and backtraces. Usage: sh tests/bench/standin.sh [BUILD]
set -u
B=${1:-build}
. "$(dirname "$0")/lib.sh"
ROUNDS=${GRAPHCHECK_BENCH_ROUNDS:-5}
LIB=$(pwd)/$B/libgraphcheck.so
for p in prog_linked prog_bench; do
	[ -x "$B/fakecuda/$p" ] && [ -f "$LIB" ] ||
		{ echo "standin.sh: build first: make $B/libgraphcheck.so $B/fakecuda/$p" >&2; exit 1; }
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM

# one VARIANT WORKLOAD THREADS OPS: one run; its wall ns go to $T/VARIANT.WORKLOAD.THREADS.OPS
one() {
	v=$1 w=$2; shift 2
	case $w in
	threads) set -- "$B/fakecuda/prog_linked" threads "$@" ;;
	*) set -- "$B/fakecuda/prog_bench" "$w" "$@" ;;
	esac
	t0=$(now_ns)
	case $v in
	native) "$@" ;;
	gc) GRAPHCHECK_LOG_FILE=/dev/null GRAPHCHECK_LEAK_CHECK=0 LD_PRELOAD=$LIB "$@" ;;
	gc-bt8) GRAPHCHECK_ALLOC_BACKTRACE_DEPTH=8 GRAPHCHECK_LOG_FILE=/dev/null GRAPHCHECK_LEAK_CHECK=0 \
		LD_PRELOAD=$LIB "$@" ;;
	esac > /dev/null 2>&1 || echo "standin.sh: $v $w $* failed" >&2
	t1=$(now_ns)
	echo $((t1 - t0)) >> "$T/$v.$w.$3.$4"
}

echo "stand-in driver, $ROUNDS rounds, medians (the stand-in is not the real driver): prog_linked threads T OPS (alloc/free pairs), prog_bench event T OPS (record + wait)"
printf '%-8s %7s %7s %-8s %10s %10s %14s %14s\n' workload threads ops variant "run ms" "OPS=0 ms" "ns/call" "added ns/call"
for cfg in "threads 1 200000" "threads 16 20000" "event 1 200000" "event 16 20000"; do
	set -- $cfg
	w=$1 n=$2 ops=$3
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		for v in native gc gc-bt8; do one $v "$w" "$n" "$ops"; one $v "$w" "$n" 0; done
		r=$((r + 1))
	done
	calls=$((2 * n * ops))
	base=$(calc 'a - b' "$(median "$T/native.$w.$n.$ops")" "$(median "$T/native.$w.$n.0")")
	for v in native gc gc-bt8; do
		full=$(median "$T/$v.$w.$n.$ops") empty=$(median "$T/$v.$w.$n.0")
		work=$(calc 'a - b' "$full" "$empty")
		percall=$(FORMAT=%.1f calc 'a / b' "$work" "$calls")
		added=$(FORMAT=%.1f calc '(a - b) / c' "$work" "$base" "$calls")
		[ $v = native ] && added=-
		printf '%-8s %7s %7s %-8s %10s %10s %14s %14s\n' "$w" "$n" "$ops" $v "$(FORMAT=%.1f calc 'a / b' "$full" 1e6)" \
			"$(FORMAT=%.1f calc 'a / b' "$empty" 1e6)" "$percall" "$added"
		[ $v = native ] || echo "standin_$w $n ops $ops variant $v added_ns_per_call $added" >> "$T/summary"
	done
done
cat "$T/summary"
