#!/bin/sh
# run53 (H200): session 15's final tree: the probe (now with cuPointerGetAttributes), the
# misuse suite (a new pair: a copy to page-locked memory does not order, to pageable does),
# the corpus and the gpu suite.
set -u
O=$OUT/run53
mkdir -p "$O"
cp "$0" "$O/run53.sh"
exec > "$O/console.txt" 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -s build/libgraphcheck.so build/graphcheck > "$O/build.txt" 2>&1 || cat "$O/build.txt"
echo "== pageable_copy_probe (native), the pointer queries"
nvcc -g -o /tmp/pageable_copy_probe tests/gpu/pageable_copy_probe.cu -lcuda > "$O/nvcc.txt" 2>&1 || cat "$O/nvcc.txt"
/tmp/pageable_copy_probe > "$O/pageable_copy_probe.native.out" 2>&1; grep -E "cuPointer" "$O/pageable_copy_probe.native.out"
echo "== misuse suite"
OUT=$O timeout 240 sh tests/gpu/misuse/run.sh > "$O/misuse.txt" 2>&1; echo "exit $?"; grep -E "DIFF|GAP|COMPILE" "$O/misuse.txt"; echo "match: $(grep -c ' match ' "$O/misuse.txt")"
grep -E "pinned-copy|created-later|forgot" "$O/misuse.txt"
date -u
echo "== corpus"
timeout 300 sh tests/gpu/corpus/run.sh "$O/corpus" > "$O/corpus.txt" 2>&1; echo "exit $?"; tail -1 "$O/corpus.txt"; grep -E "^(FAIL|not ok)" "$O/corpus.txt" | head
date -u
echo "== H200 suite"
timeout 200 sh tests/gpu/run.sh "$O/gpu" > "$O/gpu.txt" 2>&1; echo "exit $?"; grep -E "passed|failed" "$O/gpu.txt" | tail -2
date -u
cd "$OUT" && tar czf run53.tgz run53 && rm -rf run53
