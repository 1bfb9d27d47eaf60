#!/bin/sh
# run58g (H200): the two probes, the pattern under graphcheck, the whole misuse suite
# and the corpus programs most exposed to sessions 19-21's stream-order changes.
set -u
O=$OUT/run58
mkdir -p "$O"
cp "$0" "$O/"
exec > "$O/console-g.txt" 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -s build/libgraphcheck.so build/graphcheck > "$O/build-g.txt" 2>&1 || cat "$O/build-f.txt"
L=$(ldconfig -p | awk '/libcuda.so.1 / { print $NF; exit }')
nm -D "$L" | grep -E "ExternalSemaphores|cuMemcpyBatchAsync|cuGraphUpload" > "$O/nm-libcuda.txt"; cat "$O/nm-libcuda.txt"
echo "== batch during probe"
nvcc -O2 -o /tmp/batch_during_probe tests/gpu/batch_during_probe.cu > "$O/batch-nvcc.txt" 2>&1 || cat "$O/batch-nvcc.txt"
timeout 30 /tmp/batch_during_probe > "$O/batch_during_probe.txt" 2>&1; cat "$O/batch_during_probe.txt"
timeout 30 build/graphcheck --error-exitcode=1 --log-file="$O/batch_during_pattern.gc.txt" -- /tmp/batch_during_probe --pattern > "$O/batch_during_pattern.out" 2>&1; echo "pattern under graphcheck: exit $?"; cat "$O/batch_during_pattern.out"; grep -E "error:|errors" "$O/batch_during_pattern.gc.txt"
echo "== htod return probe"
nvcc -O2 -o /tmp/htod_return_probe tests/gpu/htod_return_probe.cu > "$O/htod-nvcc.txt" 2>&1 && timeout 40 /tmp/htod_return_probe > "$O/htod_return_probe.txt" 2>&1; cat "$O/htod_return_probe.txt"
echo "== misuse suite"
OUT=$O timeout 250 sh tests/gpu/misuse/run.sh > "$O/misuse.txt" 2>&1; echo "exit $?"; grep -E "DIFF|GAP|COMPILE" "$O/misuse.txt"; echo "match: $(grep -c ' match ' "$O/misuse.txt")"
grep -E "legacy-free-chain|launch-completion|pageable-upload|batch-copy" "$O/misuse.txt"; tail -3 "$O/misuse.txt"
date -u
echo "== corpus (exposed)"
names="torch_train_cudaMallocAsync jax_cuda_async torch_graph_cudaMallocAsync cupy_async_graph"
CORPUS_ONLY="$names" timeout 160 sh tests/gpu/corpus/run.sh "$O/corpus-g" > "$O/corpus-g.txt" 2>&1; echo "exit $?"; grep -E "^(ok|FAIL|skip)|passed" "$O/corpus-g.txt" | head -30
date -u
cd "$OUT" && tar czf run58g.tgz run58 && rm -rf run58
