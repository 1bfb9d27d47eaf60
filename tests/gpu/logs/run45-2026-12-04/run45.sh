#!/bin/sh
# run45 (H200): session 13's final tree after the second review (execs and captures in
# slabs, the guarded writes, the marker held or kept): the gpu suite and the misuse suite.
set -u
O=$OUT/run45
mkdir -p "$O"
cp "$0" "$O/run45.sh"
exec > "$O/console.txt" 2>&1
date -u
git log --oneline -1 2>/dev/null
make -s build/libgraphcheck.so build/graphcheck > "$O/build.txt" 2>&1 || cat "$O/build.txt"
echo "== H200 suite"
timeout 150 sh tests/gpu/run.sh "$O/gpu" > "$O/gpu.txt" 2>&1; echo "exit $?"; grep -E "passed|FAIL" "$O/gpu.txt" | tail -5
date -u
echo "== misuse"
OUT=$O timeout 120 sh tests/gpu/misuse/run.sh > "$O/misuse.txt" 2>&1; echo "exit $?"; grep -E "DIFF|GAP|COMPILE" "$O/misuse.txt"; grep -c " match " "$O/misuse.txt"
date -u
