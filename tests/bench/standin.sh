#!/bin/sh
# graphcheck's added cost per call through the stand-in driver (tests/fakecuda), CPU only.
# Runs `prog_linked threads T OPS` natively, under LD_PRELOAD=libgraphcheck.so, and the same
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
PROG=$B/fakecuda/prog_linked
LIB=$(pwd)/$B/libgraphcheck.so
[ -x "$PROG" ] && [ -f "$LIB" ] || { echo "standin.sh: build first: make $B/libgraphcheck.so $PROG" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM

# one VARIANT THREADS OPS: one run; its wall ns go to $T/VARIANT.THREADS.OPS
one() {
	v=$1; shift
	t0=$(now_ns)
	case $v in
	native) "$PROG" threads "$@" ;;
	gc) GRAPHCHECK_LOG_FILE=/dev/null GRAPHCHECK_LEAK_CHECK=0 LD_PRELOAD=$LIB "$PROG" threads "$@" ;;
	gc-bt8) GRAPHCHECK_ALLOC_BACKTRACE_DEPTH=8 GRAPHCHECK_LOG_FILE=/dev/null GRAPHCHECK_LEAK_CHECK=0 \
		LD_PRELOAD=$LIB "$PROG" threads "$@" ;;
	esac > /dev/null 2>&1 || echo "standin.sh: $v threads $* failed" >&2
	t1=$(now_ns)
	echo $((t1 - t0)) >> "$T/$v.$1.$2"
}

echo "stand-in driver, prog_linked threads T OPS, $ROUNDS rounds, medians (the stand-in is not the real driver)"
printf '%7s %7s %-8s %10s %10s %14s %14s\n' threads ops variant "run ms" "OPS=0 ms" "ns/call" "added ns/call"
for cfg in "1 200000" "16 20000"; do
	set -- $cfg
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		for v in native gc gc-bt8; do one $v "$1" "$2"; one $v "$1" 0; done
		r=$((r + 1))
	done
	calls=$((2 * $1 * $2))
	base=$(calc 'a - b' "$(median "$T/native.$1.$2")" "$(median "$T/native.$1.0")")
	for v in native gc gc-bt8; do
		full=$(median "$T/$v.$1.$2") empty=$(median "$T/$v.$1.0")
		work=$(calc 'a - b' "$full" "$empty")
		percall=$(FORMAT=%.1f calc 'a / b' "$work" "$calls")
		added=$(FORMAT=%.1f calc '(a - b) / c' "$work" "$base" "$calls")
		[ $v = native ] && added=-
		printf '%7s %7s %-8s %10s %10s %14s %14s\n' "$1" "$2" $v "$(FORMAT=%.1f calc 'a / b' "$full" 1e6)" \
			"$(FORMAT=%.1f calc 'a / b' "$empty" 1e6)" "$percall" "$added"
		[ $v = native ] || echo "standin_threads $1 ops $2 variant $v added_ns_per_call $added" >> "$T/summary"
	done
done
cat "$T/summary"
