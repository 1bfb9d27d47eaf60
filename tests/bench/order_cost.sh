#!/bin/sh
# Instructions graphcheck adds per kernel launch (and per event record + wait) for stream
# order, through the stand-in driver, by callgrind: `prog_linked order-cost MODE N` run with
# N and with 0, natively and preloaded; added = ((gc[N] - gc[0]) - (native[N] - native[0])) / N.
# Modes: see order_cost in tests/fakecuda/progs/scenarios.c. Usage: sh tests/bench/order_cost.sh [BUILD]
set -u
B=${1:-build}
N=${ORDER_COST_N:-20000}
PROG=$B/fakecuda/prog_linked
LIB=$(pwd)/$B/libgraphcheck.so
command -v valgrind >/dev/null || { echo "order_cost.sh: valgrind not installed" >&2; exit 1; }
[ -x "$PROG" ] && [ -f "$LIB" ] || { echo "order_cost.sh: build first" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM

# ir PRELOAD MODE N: the run's total instructions
ir() {
	GRAPHCHECK_LOG_FILE=/dev/null GRAPHCHECK_LEAK_CHECK=0 LD_PRELOAD=$1 \
		valgrind -q --tool=callgrind --callgrind-out-file="$T/cg" "$PROG" order-cost "$2" "$3" \
		> /dev/null 2>&1 || echo "order_cost.sh: $2 $3 failed" >&2
	callgrind_annotate "$T/cg" 2>/dev/null | tr -d , | awk '/PROGRAM TOTALS/ { print $1; exit }'
}

echo "stand-in driver, instructions added per op by graphcheck (callgrind, N=$N)"
for mode in one own cross events; do
	n1=$(ir "" $mode $N) n0=$(ir "" $mode 0) g1=$(ir "$LIB" $mode $N) g0=$(ir "$LIB" $mode 0)
	printf '  %-7s %8.1f\n' $mode "$(echo "(($g1 - $g0) - ($n1 - $n0)) / $N" | bc -l)"
done
