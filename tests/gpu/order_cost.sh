#!/bin/sh
# order_cost.cu natively and under graphcheck, 5 rounds interleaved, on a GPU machine from
# the repo root after `make build/libgraphcheck.so build/graphcheck`; prints each run's
# figures and the medians' difference (graphcheck's added ns per call).
# Usage: sh tests/gpu/order_cost.sh OUT_FILE
set -u
OUT=${1:-/dev/stdout}
BIN=/tmp/graphcheck-order-cost
nvcc -O2 -o "$BIN" tests/gpu/order_cost.cu || exit 2
: > /tmp/order_cost.native; : > /tmp/order_cost.gc
for r in 1 2 3 4 5; do
	"$BIN" >> /tmp/order_cost.native
	build/graphcheck --log-file=/dev/null -- "$BIN" >> /tmp/order_cost.gc
done
med() { grep "^$1" "$2" | awk '{ print $NF }' | sort -n | sed -n 3p; }
{
	echo "native:"; cat /tmp/order_cost.native
	echo "graphcheck:"; cat /tmp/order_cost.gc
	for k in "record+wait" "own-stream launch"; do
		n=$(med "$k" /tmp/order_cost.native) g=$(med "$k" /tmp/order_cost.gc)
		echo "$k: native median $n ns, graphcheck $g ns, added $(awk -v g="$g" -v n="$n" "BEGIN { printf \"%.1f\", g - n }") ns per call"
	done
} > "$OUT"
