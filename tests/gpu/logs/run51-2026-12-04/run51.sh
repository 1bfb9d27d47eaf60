#!/bin/sh
# run51 (H200): session 15 after the review's fixes: async copies to or from pageable host
# memory (the probe: do they wait for the stream; what cuPointerGetAttribute says of pageable
# and pinned memory), then the misuse suite, the corpus and the gpu suite on the final tree.
set -u
O=$OUT/run51
mkdir -p "$O"
cp "$0" "$O/run51.sh"
exec > "$O/console.txt" 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -s build/libgraphcheck.so build/graphcheck > "$O/build.txt" 2>&1 || cat "$O/build.txt"
GC=build/graphcheck
echo "== pageable_copy_probe (native)"
nvcc -g -o /tmp/pageable_copy_probe tests/gpu/pageable_copy_probe.cu -lcuda > "$O/nvcc.txt" 2>&1 || cat "$O/nvcc.txt"
/tmp/pageable_copy_probe | tee "$O/pageable_copy_probe.native.out"
echo "== misuse suite"
OUT=$O timeout 240 sh tests/gpu/misuse/run.sh > "$O/misuse.txt" 2>&1; echo "exit $?"; grep -E "DIFF|GAP|COMPILE" "$O/misuse.txt"; echo "match: $(grep -c ' match ' "$O/misuse.txt")"
date -u
echo "== corpus"
timeout 300 sh tests/gpu/corpus/run.sh "$O/corpus" > "$O/corpus.txt" 2>&1; echo "exit $?"; tail -3 "$O/corpus.txt"; grep -c "^ok" "$O/corpus.txt"; grep -v "^ok" "$O/corpus.txt" | grep -E "^(FAIL|not ok)" | head
date -u
echo "== H200 suite"
timeout 200 sh tests/gpu/run.sh "$O/gpu" > "$O/gpu.txt" 2>&1; echo "exit $?"; grep -E "passed|failed" "$O/gpu.txt" | tail -3
date -u
cd "$OUT" && tar czf run51.tgz run51 && rm -rf run51
