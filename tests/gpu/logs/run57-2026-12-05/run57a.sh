#!/bin/sh
# run57a (H200): legacy_sync_probe; the new pair unordered-free-legacy-sync natively, under
# graphcheck and under 3eb72cb; then the corpus programs with stream-ordered memory and graphs.
set -u
O=$OUT/run57
mkdir -p "$O"
cp "$0" "$O/"
exec > "$O/console-a.txt" 2>&1
date -u; git log --oneline -1
make -s build/libgraphcheck.so build/graphcheck > "$O/build-a.txt" 2>&1 || cat "$O/build-a.txt"
echo "== legacy_sync_probe"
nvcc -arch=sm_90 -o /tmp/lsp tests/gpu/legacy_sync_probe.cu > "$O/nvcc.txt" 2>&1 || cat "$O/nvcc.txt"
/tmp/lsp 2>&1 | tee "$O/legacy_sync_probe.txt"
for n in unordered-free-legacy-sync unordered-free-teardown-stream unordered-free-graph-replay; do
echo "== $n"
nvcc -arch=sm_90 -g -o /tmp/$n tests/gpu/misuse/$n.cu >> "$O/nvcc.txt" 2>&1 || cat "$O/nvcc.txt"
for m in "" --clean; do
	/tmp/$n $m > "$O/$n$m.native.out" 2>&1; echo "native $m exit $?"
	rm -f "$O/$n$m.json"
	build/graphcheck --json-file=$O/$n$m.json --log-file=$O/$n$m.txt -- /tmp/$n $m > "$O/$n$m.gc.out" 2>&1; echo "graphcheck $m exit $?"
	cmp "$O/$n$m.native.out" "$O/$n$m.gc.out" && echo "same output"
	echo "rules: $(grep -o '"rule":"[a-z-]*"' "$O/$n$m.json" | sort | uniq -c | tr '\n' ' ')"
	rm -f "$O/s16-$n$m.json"
	GRAPHCHECK_JSON_FILE=$O/s16-$n$m.json GRAPHCHECK_LOG_FILE=/dev/null LD_PRELOAD=$PWD/.diag/s16/libgraphcheck.so /tmp/$n $m > /dev/null 2>&1
	echo "under 3eb72cb: $(grep -o '"rule":"[a-z-]*"' "$O/s16-$n$m.json" | sort | uniq -c | tr '\n' ' ')"
done
done
echo "== corpus: the programs with stream-ordered memory and graphs"
names="graph_memory_ok torch_graph_train_cudaMallocAsync torch_graph_cudaMallocAsync torch_train_cudaMallocAsync torch_streams_cudaMallocAsync cupy_graph cupy_async_graph cupy_streams jax_cuda_async streams_ok flags_ok threads_pool_ok"
CORPUS_ONLY="$names" timeout 400 sh tests/gpu/corpus/run.sh "$O/corpus-a" > "$O/corpus-a.txt" 2>&1; echo "exit $?"; grep -E "^(ok|FAIL|skip)|passed" "$O/corpus-a.txt" | head -30
date -u
cd "$OUT" && tar czf run57a.tgz run57 && rm -rf run57
