#!/bin/sh
# run39 (H200): session 12's final tree: an A/B of the pairs cost (session 10's object against
# this one), the gpu suite, the corpus (cuMemAlloc no longer a wait), the misuse suite,
# setup-graph-never-launched --late natively.
set -u
O=$OUT/run39
mkdir -p "$O"
cp "$0" "$O/run39.sh"
exec > "$O/console.txt" 2>&1
date -u
make -s build/libgraphcheck.so build/graphcheck > "$O/build.txt" 2>&1 || cat "$O/build.txt"
GC=build/graphcheck
B=/tmp/r39bin; mkdir -p "$B"
nvcc -O2 -o "$B/alloc_free_pairs" tests/bench/alloc_free_pairs.cu -lcuda
echo "== A/B: alloc_free_pairs 1000000, 7 rounds, pinned 0-15; elapsed_s of the timed section"
echo "   old: 9d381f7 (session 10's end) built on the dev VM; new: this tree built on the dev VM; dev: this tree built here"
for r in 1 2 3 4 5 6 7; do
	line="round $r:"
	for v in native old new dev; do
		case $v in native) L= ;; old) L=$PWD/.diag/ab/old.so ;; new) L=$PWD/.diag/ab/new.so ;; dev) L=$PWD/build/libgraphcheck.so ;; esac
		e=$(GRAPHCHECK_LOG_FILE=/dev/null GRAPHCHECK_LEAK_CHECK=0 LD_PRELOAD=$L taskset -c 0-15 "$B/alloc_free_pairs" 1000000 2>&1 | sed -n 's/^elapsed_s *\([0-9.]*\).*/\1/p; s/^elapsed \([0-9.]*\).*/\1/p' | head -1)
		line="$line $v $e"
	done
	echo "$line"
done
echo "== H200 suite"
timeout 200 sh tests/gpu/run.sh "$O/gpu" > "$O/gpu.txt" 2>&1; echo "exit $?"; grep -E "passed|FAIL" "$O/gpu.txt" | tail -5
echo "== misuse"
OUT=$O timeout 150 sh tests/gpu/misuse/run.sh > "$O/misuse.txt" 2>&1; echo "exit $?"; grep -E "DIFF|GAP|COMPILE" "$O/misuse.txt"; grep -c " match " "$O/misuse.txt"
echo "== setup-graph-never-launched --late, natively x3; and as before natively x3"
for k in 1 2 3; do
	/tmp/m2bin/setup-graph-never-launched --late > "$O/sgnl.late.$k.out" 2>&1
	echo "late $k: exit $?  $(grep -c ' -> 700' "$O/sgnl.late.$k.out") calls 700; $(grep 'out\[128\]' "$O/sgnl.late.$k.out")"
	/tmp/m2bin/setup-graph-never-launched > "$O/sgnl.plain.$k.out" 2>&1
	echo "plain $k: exit $?  $(grep -c ' -> 700' "$O/sgnl.plain.$k.out") calls 700; $(grep 'out\[128\]' "$O/sgnl.plain.$k.out")"
done
echo "== corpus"
timeout 250 sh tests/gpu/corpus/run.sh "$O/corpus" > "$O/corpus.txt" 2>&1; echo "exit $?"; tail -22 "$O/corpus.txt"
date -u
