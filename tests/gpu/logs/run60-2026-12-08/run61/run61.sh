#!/bin/sh
# run61: corpus programs under eeca5b8's object (the new batch hooks exported): no record
set -u
O=$OUT/run61
mkdir -p "$O"
cp "$0" "$O/"
exec > "$O/console.txt" 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -s build/libgraphcheck.so build/graphcheck > "$O/build.txt" 2>&1 || cat "$O/build.txt"
L=$(ldconfig -p | awk '/libcuda.so.1 / { print $NF; exit }')
nm -D "$L" | grep -E "cuMemcpy3DBatchAsync|cuMemcpyBatchAsync"
names="torch_train_cudaMallocAsync jax_cuda_async torch_graph_cudaMallocAsync cupy_async_graph"
CORPUS_ONLY="$names" timeout 200 sh tests/gpu/corpus/run.sh "$O/corpus" > "$O/corpus.txt" 2>&1; echo "exit $?"; grep -E "^(ok|FAIL|skip)|passed" "$O/corpus.txt" | head -30
date -u
cd "$OUT" && tar czf run61.tgz run61 && rm -rf run61
