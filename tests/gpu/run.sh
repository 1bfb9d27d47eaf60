#!/bin/sh
# graphcheck on a real GPU: builds the object and the seed programs there, runs each natively
# and under graphcheck, and keeps every log. Usage: sh tests/gpu/run.sh [OUT_DIR]
# (default tests/gpu/logs). Needs nvcc, a CUDA driver, and python3 with torch for the
# PyTorch check, cupy for the CuPy one (each skipped without). Takes about a minute.
set -u
OUT=${1:-tests/gpu/logs}
SEED=${SEED_DIR:-demo}
mkdir -p "$OUT"
# A fixed place for the programs, so their logs name paths a report can find again.
BIN=/tmp/graphcheck-gpu-bin
rm -rf "$BIN"
mkdir -p "$BIN"
CUDA_ROOT=$(dirname "$(dirname "$(command -v nvcc)")")
log() { echo "== $*"; }

log "machine"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/driver.txt"
nvcc --version | tail -2

log "build"
make -s build/libgraphcheck.so build/graphcheck || exit 1
GC=build/graphcheck
nvcc -g -o "$BIN/seed_pipeline" "$SEED/seed_pipeline.cu" -lcuda
nvcc -g -o "$BIN/seed_pipeline_fixed" "$SEED/seed_pipeline_fixed.cu" -lcuda
nvcc -g -cudart shared -o "$BIN/seed_pipeline_shared" "$SEED/seed_pipeline.cu" -lcuda
nvcc -g --default-stream per-thread -o "$BIN/seed_pipeline_ptds" "$SEED/seed_pipeline.cu" -lcuda
nvcc -g -o "$BIN/misuse_probe" tests/gpu/misuse_probe.cu -lcuda
nvcc -g -o "$BIN/probe_driver" tests/gpu/probe_driver.cu -lcuda

. tests/gpu/lib.sh  # run NAME PROGRAM [ARGS]

log "runs"
for p in seed_pipeline seed_pipeline_fixed seed_pipeline_shared seed_pipeline_ptds misuse_probe probe_driver; do
	run "$p" "$BIN/$p"
done
if python3 -c 'import torch' 2>/dev/null; then
	for i in 1 2 3; do
		PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync run "torch_graph_$i" python3 tests/gpu/torch_graph.py
	done
else
	echo "torch_graph: skipped (no torch)"
fi
if python3 -c 'import cupy' 2>/dev/null; then
	for i in 1 2 3; do
		run "cupy_graph_$i" python3 tests/gpu/cupy_graph.py
	done
else
	echo "cupy_graph: skipped (no cupy: $(python3 -c 'import cupy' 2>&1 | tail -1))"
fi
log "probe codes (native)"
cat "$OUT/misuse_probe.native.out" "$OUT/probe_driver.native.out"

log "stand-in vs real driver: the same C scenarios, linked against each"
make -s build/fakecuda/prog_linked
gcc -std=c11 -D_GNU_SOURCE -I. -I"$CUDA_ROOT/include" -DFC_LINKED -o "$BIN/real_prog_linked" \
	tests/fakecuda/progs/prog_linked.c tests/fakecuda/progs/scenarios.c \
	-L"$CUDA_ROOT/lib64/stubs" -lcuda -lpthread
for sc in probe probe-driver seed seed-fixed null-kernel-node rules; do
	build/fakecuda/prog_linked "$sc" > "$OUT/fake_$sc.out" 2>&1
	"$BIN/real_prog_linked" "$sc" > "$OUT/real_$sc.out" 2>&1
	if cmp -s "$OUT/fake_$sc.out" "$OUT/real_$sc.out"; then
		echo "$sc: stand-in and H200 print the same codes ($(grep -c -- '->' "$OUT/real_$sc.out") calls)"
	else
		echo "$sc: DIFFERENT (< stand-in, > H200)"
		diff "$OUT/fake_$sc.out" "$OUT/real_$sc.out" | head -30
	fi
done

if [ -n "${WITH_DEMO:-1}" ] && make -s demo; then
	log "demo gate (records traces into $OUT/traces)"
	GATE_RECORD_DIR=$OUT/traces sh demo/gate.sh build | tee "$OUT/gate.txt"
	log "compute-sanitizer on each rule program"
	: > "$OUT/sanitizer.txt"
	for p in build/demo/seed_pipeline build/demo/rules/*; do
		name=$(basename "$p")
		compute-sanitizer --print-limit 3 "$p" > "$OUT/cs_$name.txt" 2>&1
		hit=$(grep -m1 'Program hit' "$OUT/cs_$name.txt" | sed 's/^========= *//')
		summary=$(grep -m1 'ERROR SUMMARY' "$OUT/cs_$name.txt" | sed 's/^========= *//')
		echo "$name | ${summary:-no summary} | ${hit:-no API error reported}" | tee -a "$OUT/sanitizer.txt"
	done
fi
