#!/bin/sh
# run37 (H200): the session's launcher changes and probes on the real driver.
set -u
O=$OUT/run37
mkdir -p "$O"
cp "$0" "$O/run37.sh"
exec > "$O/console.txt" 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
id
make -s build/libgraphcheck.so build/graphcheck > "$O/build.txt" 2>&1 || { cat "$O/build.txt"; }
GC=build/graphcheck
B=/tmp/r37bin; mkdir -p "$B"
nvcc -g -o "$B/drop_root" tests/gpu/drop_root.cu > "$O/nvcc.txt" 2>&1
nvcc -g -std=c++17 -o "$B/alloc_wait_probe" tests/gpu/alloc_wait_probe.cu >> "$O/nvcc.txt" 2>&1
echo "== drop_root (root gives up root before its first CUDA call)"
for a in --clean ""; do
	"$B/drop_root" $a > "$O/drop_root$a.native.out" 2>&1; echo "native $a: exit $?"
	$GC --error-exitcode=9 --log-file="$O/drop_root$a.gc.txt" -- "$B/drop_root" $a > "$O/drop_root$a.gc.out" 2>&1
	echo "graphcheck $a: exit $?"; cat "$O/drop_root$a.gc.out"
	grep '^==graphcheck== [a-z]*:' "$O/drop_root$a.gc.txt"
done
echo "== alloc_wait_probe"
"$B/alloc_wait_probe" > "$O/alloc_wait_probe.native.out" 2>&1; echo "exit $?"; cat "$O/alloc_wait_probe.native.out"
echo "== H200 suite (tests/gpu/run.sh)"
timeout 240 sh tests/gpu/run.sh "$O/gpu" > "$O/gpu.txt" 2>&1; echo "exit $?"; tail -25 "$O/gpu.txt"
echo "== misuse suite"
OUT=$O timeout 200 sh tests/gpu/misuse/run.sh > "$O/misuse.txt" 2>&1; echo "exit $?"; tail -30 "$O/misuse.txt"
echo "== setup-graph-never-launched x3, native and graphcheck"
for k in 1 2 3; do
	/tmp/m2bin/setup-graph-never-launched > "$O/sgnl.native.$k.out" 2>&1; echo "native $k: exit $?  $(tail -1 "$O/sgnl.native.$k.out")"
	$GC --log-file="$O/sgnl.gc.$k.txt" -- /tmp/m2bin/setup-graph-never-launched > "$O/sgnl.gc.$k.out" 2>&1
	echo "graphcheck $k: exit $?  $(tail -1 "$O/sgnl.gc.$k.out")  rules: $(grep -o '^==graphcheck== [a-z]*: [a-z-]*' "$O/sgnl.gc.$k.txt" | sort | uniq -c | tr '\n' ' ')"
done
echo "== corpus"
timeout 240 sh tests/gpu/corpus/run.sh "$O/corpus" > "$O/corpus.txt" 2>&1; echo "exit $?"; tail -30 "$O/corpus.txt"
date -u
