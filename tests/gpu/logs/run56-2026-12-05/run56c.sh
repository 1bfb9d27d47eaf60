#!/bin/sh
# run56c (H200): the corpus programs run56b's 280 s did not reach (flags_ok, threads_pool_ok,
# torch_streams, cupy_streams, the samples), and threads_pool_ok under the object at 3eb72cb.
set -u
O=$OUT/run56
mkdir -p "$O"
cp "$0" "$O/run56c.sh"
exec > "$O/console-c.txt" 2>&1
date -u
make -s build/libgraphcheck.so build/graphcheck > "$O/build-c.txt" 2>&1 || cat "$O/build-c.txt"
names="flags_ok threads_pool_ok torch_streams_cudaMallocAsync torch_streams_native cupy_streams"
for s in stream_ordered_allocation graph_memory_nodes graph_memory_footprint simple_cuda_graphs graphs_perf_scaling jacobi_graphs graph_conditional_nodes; do names="$names sample_$s"; done
CORPUS_ONLY="$names" timeout 400 sh tests/gpu/corpus/run.sh "$O/corpus-c" > "$O/corpus-c.txt" 2>&1; echo "exit $?"; cat "$O/corpus-c.txt" | grep -E "^(ok|FAIL|skip)|passed" | head -30
for k in 1 2 3 4 5; do
	rm -f "$O/s16-threads_pool_ok.$k.json"
	GRAPHCHECK_JSON_FILE=$O/s16-threads_pool_ok.$k.json GRAPHCHECK_LOG_FILE=/dev/null LD_PRELOAD=$PWD/.diag/s16/libgraphcheck.so /tmp/graphcheck-corpus-bin/threads_pool_ok > /dev/null 2>&1
	echo "threads_pool_ok under 3eb72cb, run $k: $(grep -o '"rule":"[a-z-]*"' "$O/s16-threads_pool_ok.$k.json" 2>/dev/null | sort | uniq -c | tr '\n' ' ')"
done
date -u
cd "$OUT" && tar czf run56c.tgz run56 && rm -rf run56
