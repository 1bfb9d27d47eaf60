#!/bin/sh
# The H200 run for the graph-launch rules (issue 19): build, the demo gate (every rule program
# and its twins, the new ones included, with traces recorded for tests/traces/), the new
# rules' programs and twins one by one under graphcheck and under compute-sanitizer, the
# fixed seed pipeline's addresses per iteration, the PyTorch and CuPy programs (expected: no
# record), then the uses' benchmarks (3 rounds). Every log goes under $LOGDIR.
# Usage, from the repo root on the GPU machine: LOGDIR=DIR sh tests/gpu/graph_launches_run.sh
# Takes about 7 minutes on an H200; PART=checks (all but the benchmarks) or PART=bench (the
# build and the benchmarks) splits it in two.
set -u
: "${LOGDIR:?set LOGDIR to the directory for the logs}"
mkdir -p "$LOGDIR"
log() { echo "== $*" | tee -a "$LOGDIR/summary.txt"; }
GC=build/graphcheck

log "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
log "build"
{ make -s build/libgraphcheck.so build/graphcheck && make -s demo; } > "$LOGDIR/build.txt" 2>&1 ||
	{ log "build failed: $LOGDIR/build.txt"; exit 1; }

PART=${PART:-all}
if [ "$PART" != bench ]; then
log "demo gate (traces into $LOGDIR/traces)"
GATE_RECORD_DIR=$LOGDIR/traces sh demo/gate.sh build > "$LOGDIR/gate.txt" 2>&1
tail -1 "$LOGDIR/gate.txt" | tee -a "$LOGDIR/summary.txt"
grep FAIL "$LOGDIR/gate.txt" | tee -a "$LOGDIR/summary.txt"

log "the new rules' programs, graphcheck and compute-sanitizer"
for d in launch-stale-pointer launch-reused-pointer use-outside-graph-lifetime; do
	for v in "" --clean; do
		n=$d$v
		rm -f "$LOGDIR/$n.json"
		$GC --log-file="$LOGDIR/$n.txt" --json-file="$LOGDIR/$n.json" -- build/demo/rules/$d $v \
			> "$LOGDIR/$n.out" 2>&1
		echo "exit $?" >> "$LOGDIR/$n.out"
		build/demo/rules/$d $v > "$LOGDIR/$n.native.out" 2>&1
		echo "exit $?" >> "$LOGDIR/$n.native.out"
		compute-sanitizer --print-limit 3 build/demo/rules/$d $v > "$LOGDIR/cs_$n.txt" 2>&1
		rules=$(grep -o '"rule":"[a-z-]*"' "$LOGDIR/$n.json" 2>/dev/null | sed 's/"rule":"//; s/"//' |
			sort | uniq -c | tr '\n' ' ')
		same=$(cmp -s "$LOGDIR/$n.out" "$LOGDIR/$n.native.out" && echo same || echo DIFFERENT)
		cs=$(grep -m1 'ERROR SUMMARY' "$LOGDIR/cs_$n.txt" | sed 's/^========= *//')
		echo "$n: records ${rules:-none}; output $same; compute-sanitizer: ${cs:-none}" |
			tee -a "$LOGDIR/summary.txt"
	done
done
grep -h "same address" "$LOGDIR"/launch-reused-pointer*.native.out | tee -a "$LOGDIR/summary.txt"

log "the seed pipelines: addresses per iteration, and graphcheck's records"
SEED_PRINT_ADDRESSES=1 build/demo/seed_pipeline_fixed > "$LOGDIR/seed_fixed_addresses.txt" 2>&1
sort -u -k5 "$LOGDIR/seed_fixed_addresses.txt" | grep -c iteration |
	sed 's/^/distinct out_d_0 addresses over 10 iterations: /' | tee -a "$LOGDIR/summary.txt"
for p in seed_pipeline seed_pipeline_fixed; do
	rm -f "$LOGDIR/$p.json"
	$GC --log-file="$LOGDIR/$p.txt" --json-file="$LOGDIR/$p.json" -- build/demo/$p > "$LOGDIR/$p.out" 2>&1
	echo "$p: $(grep -o '"rule":"[a-z-]*"' "$LOGDIR/$p.json" | sed 's/"rule":"//; s/"//' |
		sort | uniq -c | tr '\n' ' ')" | tee -a "$LOGDIR/summary.txt"
done

log "PyTorch and CuPy programs (expected: no record)"
for py in torch_graph cupy_graph; do
	rm -f "$LOGDIR/$py.json"
	PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync $GC --log-file="$LOGDIR/$py.txt" \
		--json-file="$LOGDIR/$py.json" -- python3 tests/gpu/$py.py > "$LOGDIR/$py.out" 2>&1
	echo "$py: exit $?; records: $(grep -o '"rule":"[a-z-]*"' "$LOGDIR/$py.json" 2>/dev/null |
		sed 's/"rule":"//; s/"//' | sort | uniq -c | tr '\n' ' ')" | tee -a "$LOGDIR/summary.txt"
done

fi

[ "$PART" = checks ] && exit 0
log "benchmarks of uses (3 rounds)"
GRAPHCHECK_BENCH_ROUNDS=3 \
	GRAPHCHECK_BENCH_ONLY="kernel_launches kernel_launches_dead graph_kernels torch_eager" \
	sh tests/bench/run.sh build > "$LOGDIR/bench.txt" 2>&1
grep -E '^\| (1000000|the same|10000|PyTorch)' "$LOGDIR/bench.txt" | tee -a "$LOGDIR/summary.txt"
