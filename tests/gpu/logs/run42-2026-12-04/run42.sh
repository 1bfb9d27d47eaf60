#!/bin/sh
# run42 (H200): the seven sample-pattern corpus programs, natively and under the launcher;
# their text logs kept.
set -u
O=$OUT/run42
mkdir -p "$O"
cp "$0" "$O/run42.sh"
exec > "$O/console.txt" 2>&1
date -u
make -s build/libgraphcheck.so build/graphcheck > "$O/build.txt" 2>&1 || cat "$O/build.txt"
CORPUS_ONLY="sample_graph_memory_nodes sample_graph_memory_footprint sample_stream_ordered_allocation sample_graph_conditional_nodes sample_simple_cuda_graphs sample_jacobi_graphs sample_graphs_perf_scaling" timeout 400 sh tests/gpu/corpus/run.sh "$O/corpus" > "$O/corpus.txt" 2>&1; echo "exit $?"; cat "$O/corpus.txt"
for f in "$O"/corpus/sample_*.txt; do echo "== $f"; grep '^==graphcheck== [a-z]*:' "$f" | sort | uniq -c; done
date -u
