#!/bin/sh
# run52 (H200): the misuse suite after run51 (a copy from pageable memory is no host wait;
# unordered-use-stream-created-later's result copied to page-locked memory).
set -u
O=$OUT/run52
mkdir -p "$O"
cp "$0" "$O/run52.sh"
exec > "$O/console.txt" 2>&1
date -u
make -s build/libgraphcheck.so build/graphcheck > "$O/build.txt" 2>&1 || cat "$O/build.txt"
echo "== misuse suite"
OUT=$O timeout 240 sh tests/gpu/misuse/run.sh > "$O/misuse.txt" 2>&1; echo "exit $?"; grep -E "DIFF|GAP|COMPILE" "$O/misuse.txt"; echo "match: $(grep -c ' match ' "$O/misuse.txt")"
grep -E "created-later|forgot" "$O/misuse.txt"
date -u
cd "$OUT" && tar czf run52.tgz run52 && rm -rf run52
