#!/bin/sh
# run38 (H200): make bench on session 12's tree, as session 10's (two halves in one call).
set -u
O=$OUT/run38
mkdir -p "$O"
cp "$0" "$O/run38.sh"
date -u > "$O/start.txt"
make -s build/libgraphcheck.so build/graphcheck > "$O/build.txt" 2>&1
git log --oneline -1 > "$O/tree.txt" 2>&1 || true
GRAPHCHECK_BENCH_VARIANTS="native gc" GRAPHCHECK_BENCH_ROUNDS=7 GRAPHCHECK_BENCH_TORCH_STEPS=1000 \
GRAPHCHECK_BENCH_ONLY="seed_fixed_loop alloc_free_pairs graph_launches threads_pairs" \
	timeout 290 sh tests/bench/run.sh build > "$O/h200-session12-a.txt" 2>&1
echo "a exit $?" >> "$O/start.txt"
GRAPHCHECK_BENCH_VARIANTS="native gc" GRAPHCHECK_BENCH_ROUNDS=7 GRAPHCHECK_BENCH_TORCH_STEPS=1000 \
GRAPHCHECK_BENCH_ONLY="kernel_launches kernel_launches_dead graph_kernels torch_eager" \
GRAPHCHECK_BENCH_LEDGER=0 \
	timeout 250 sh tests/bench/run.sh build > "$O/h200-session12-b.txt" 2>&1
echo "b exit $?" >> "$O/start.txt"
date -u >> "$O/start.txt"
