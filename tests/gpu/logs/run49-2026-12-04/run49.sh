#!/bin/sh
# run49 (H200): session 14's last tree (after the second review's fixes), no corpus (device time): a misuse in a loop (text log repeats), a Python program's
# generated suppression on the real driver, the run directory after many processes, python
# records (no cost runs), the gpu suite, the misuse suite, the corpus.
set -u
O=$OUT/run49
mkdir -p "$O"
cp "$0" "$O/run49.sh"
exec > "$O/console.txt" 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
stat -f -c "/tmp: %T" /tmp
make -s build/libgraphcheck.so build/graphcheck > "$O/build.txt" 2>&1 || cat "$O/build.txt"
GC=build/graphcheck R=build/graphcheck-report
B=/tmp/r49bin; mkdir -p "$B"
cat > "$B/loop_df.cu" <<'CU'
// 1,000 iterations of a loop that frees its scratch twice (one line): one problem.
#include <cstdio>
#include <cuda_runtime.h>
int main() {
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  int refused = 0;
  for (int i = 0; i < 1000; ++i) {
    void *p; cudaMallocAsync(&p, 4096, s);
    cudaFreeAsync(p, s);
    refused += cudaFreeAsync(p, s) != cudaSuccess;  // the bug, every iteration
    (void)cudaGetLastError();
  }
  cudaStreamSynchronize(s);
  printf("second frees refused: %d of 1000\n", refused);
  return 0;
}
CU
nvcc -g -o "$B/loop_df" "$B/loop_df.cu" > "$O/nvcc.txt" 2>&1 || cat "$O/nvcc.txt"
echo "== a double free in a loop of 1,000: text log, JSON log, gate"
"$B/loop_df"; echo "native exit $?"
$GC --error-exitcode=9 --log-file="$O/loop.txt" --json-file="$O/loop.json" -- "$B/loop_df"; echo "graphcheck exit $?"
echo "text records: $(grep -c '^==graphcheck== error:' "$O/loop.txt"); JSON records: $(grep -c '"type":"violation"' "$O/loop.json")"
tail -1 "$O/loop.txt"
: # the report runs on the dev VM (no jansson here)
echo "== a Python program (ctypes on the real libcuda): a generated suppression, pasted"
LIBCUDA=$(python3 -c 'import ctypes.util; print(ctypes.util.find_library("cuda") or "libcuda.so.1")')
echo "libcuda: $LIBCUDA"
$GC --gen-suppressions --log-file="$O/py_df.txt" -- python3 tests/python/misuse.py "$LIBCUDA" double-free cdll; echo "exit $?"
sed -n '/^{$/,/^}$/p' "$O/py_df.txt" | tee "$O/py.supp"
for m in double-free unicode; do
	$GC --error-exitcode=9 --suppressions="$O/py.supp" --log-file="$O/py_$m.supp.txt" --json-file="$O/py_$m.supp.json" -- \
		python3 tests/python/misuse.py "$LIBCUDA" $m cdll; echo "$m with the entry: exit $? ($(tail -1 "$O/py_$m.supp.txt"))"
done
:
echo "== a held 201 from 12 calls deep (no current context), real driver: its record's frames"
$GC --log-file="$O/held.txt" -- python3 tests/python/misuse.py "$LIBCUDA" held-deep; echo "exit $?"
grep -E '^==graphcheck== (error|warning)|#0 |native:' "$O/held.txt" | head -6
echo "== 300 processes without CUDA, then one with: markers left in the run directory"
$GC --error-exitcode=9 --log-file=/dev/null -- sh -c 'i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i+1)); done; python3 tests/python/misuse.py "$1" double-free cdll > /dev/null; ls "$GRAPHCHECK_RUN_DIR" | grep -c started' sh "$LIBCUDA"; echo "exit $?"
date -u
echo "== python records (no cost runs)"
PY_RECORDS_COST=0 timeout 200 sh tests/gpu/python_records.sh "$O/python" > "$O/python.txt" 2>&1; echo "exit $?"; tail -15 "$O/python.txt"
date -u
echo "== H200 suite"
timeout 200 sh tests/gpu/run.sh "$O/gpu" > "$O/gpu.txt" 2>&1; echo "exit $?"; tail -8 "$O/gpu.txt"
date -u
echo "== misuse suite"
OUT=$O timeout 200 sh tests/gpu/misuse/run.sh > "$O/misuse.txt" 2>&1; echo "exit $?"; grep -E "DIFF|GAP|COMPILE" "$O/misuse.txt"; echo "match: $(grep -c ' match ' "$O/misuse.txt")"
date -u
