#!/bin/sh
# run50 (H200): session 15, allocations made before a second stream watched when the stream
# model turns on, and the wake at a use on another stream (a launch that forgot its stream).
# The misuse suite (forgot-stream now expected, stream-created-later new), the corpus (no
# record expected), the gpu suite.
set -u
O=$OUT/run50
mkdir -p "$O"
cp "$0" "$O/run50.sh"
exec > "$O/console.txt" 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -s build/libgraphcheck.so build/graphcheck > "$O/build.txt" 2>&1 || cat "$O/build.txt"
GC=build/graphcheck
echo "== misuse suite"
OUT=$O timeout 240 sh tests/gpu/misuse/run.sh > "$O/misuse.txt" 2>&1; echo "exit $?"; grep -E "DIFF|GAP|COMPILE" "$O/misuse.txt"; echo "match: $(grep -c ' match ' "$O/misuse.txt")"
grep -E "forgot|created-later" "$O/misuse.txt"
date -u
echo "== corpus"
timeout 300 sh tests/gpu/corpus/run.sh "$O/corpus" > "$O/corpus.txt" 2>&1; echo "exit $?"; tail -8 "$O/corpus.txt"
date -u
echo "== H200 suite"
timeout 200 sh tests/gpu/run.sh "$O/gpu" > "$O/gpu.txt" 2>&1; echo "exit $?"; tail -8 "$O/gpu.txt"
date -u
cd "$OUT" && tar czf run50.tgz run50 && rm -rf run50
