#!/bin/sh
# run40 (H200): make bench's second half (kernel launches, graph kernels, PyTorch eager) on
# session 12's tree, 5 rounds (run38's 7 ran past its limit).
set -u
O=$OUT/run40
mkdir -p "$O"
cp "$0" "$O/run40.sh"
make -s build/libgraphcheck.so build/graphcheck > "$O/build.txt" 2>&1
GRAPHCHECK_BENCH_VARIANTS="native gc" GRAPHCHECK_BENCH_ROUNDS=5 GRAPHCHECK_BENCH_TORCH_STEPS=1000 \
GRAPHCHECK_BENCH_ONLY="kernel_launches kernel_launches_dead graph_kernels torch_eager" \
GRAPHCHECK_BENCH_LEDGER=0 \
	timeout 330 sh tests/bench/run.sh build > "$O/h200-session12-b.txt" 2>&1
echo "b exit $?" >> "$O/h200-session12-b.txt"
