#!/bin/sh
# graphcheck on a real GPU: builds the object and the seed programs there, runs each natively
# and under graphcheck, and keeps every log. Usage: sh tests/gpu/run.sh [OUT_DIR]
# (default tests/gpu/logs). Needs nvcc, a CUDA driver, and python3 with torch for the
# PyTorch check. Takes about a minute.
set -u
OUT=${1:-tests/gpu/logs}
SEED=${SEED_DIR:-demo}
mkdir -p "$OUT"
BIN=$(mktemp -d)
trap 'rm -rf "$BIN"' EXIT
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

# run NAME PROGRAM [ARGS]: native output, then graphcheck's text and JSON logs.
run() {
	name=$1; shift
	"$@" > "$OUT/$name.native.out" 2>&1
	echo "exit $?" >> "$OUT/$name.native.out"
	rm -f "$OUT/$name.json" "$OUT/$name.txt"
	$GC --json-file="$OUT/$name.json" --log-file="$OUT/$name.txt" -- "$@" > "$OUT/$name.out" 2>&1
	echo "exit $?" >> "$OUT/$name.out"
	if cmp -s "$OUT/$name.native.out" "$OUT/$name.out"; then same=same; else same=DIFFERENT; fi
	rules=$(grep -o '"rule":"[a-z-]*"' "$OUT/$name.json" 2>/dev/null | sed 's/"rule":"//; s/"//' | sort | uniq -c | tr '\n' ' ')
	echo "$name: program output $same; records: ${rules:-none}"
}

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
log "probe codes (native)"
cat "$OUT/misuse_probe.native.out" "$OUT/probe_driver.native.out"
