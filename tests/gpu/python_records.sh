#!/bin/sh
# Python programs under graphcheck on a real GPU (issue 18): the CuPy relaunch bug, the seed
# pipeline in cuda-python and the PyTorch read-before-replay bug with their clean twins,
# PyTorch's graph capture, and the cost on PyTorch eager training (backend:cudaMallocAsync):
# tool / native of the timed section, best of 3 runs each, alternating. Every record's first Python frame is printed.
# Usage (from the repository root): sh tests/gpu/python_records.sh [LOGDIR]
# PY_RECORDS_COST=0: the records only, not the cost runs (about two minutes).
set -u
OUT=${1:-${LOGDIR:-tests/gpu/logs/python}}
mkdir -p "$OUT"
make -s build/libgraphcheck.so build/graphcheck || exit 1
GC=build/graphcheck
python3 -c 'import sys; print("python", sys.version.split()[0])' | tee "$OUT/python.txt"
export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync

# summary NAME: the records' rules, first Python frame, allocation's Python frame, notes
summary() {
	python3 - "$OUT/$1.json" <<'PY'
import json, sys
recs = []
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if r.get("type") == "violation":
        recs.append(r)
    elif r.get("type") == "live_at_exit":
        print("  live at exit (information, no record): %d allocations, %d bytes" % (
            r.get("count", 0), r.get("bytes", 0)))
if not recs:
    print("  records: none")
for r in recs:
    def at(bt):
        return "%s:%s in %s" % (bt[0]["file"], bt[0]["line"], bt[0]["function"]) if bt else "-"
    alloc = r.get("alloc") or {}
    print("  %s: first python frame %s; allocated at %s%s" % (
        r.get("rule"), at(r.get("py_backtrace")), at(alloc.get("py_backtrace")),
        "; note: " + r["py_note"] if r.get("py_note") else ""))
    for g in r.get("leaks") or []:
        print("    %d leaked, allocated at %s" % (g.get("count", 0), at(g.get("py_backtrace"))))
PY
}
. tests/gpu/lib.sh
# check NAME ARGS...: run (lib.sh), then each record's first Python frames
check() {
	run "$@"
	summary "$1"
}

if python3 -c 'import cupy' 2> /dev/null; then
	check cupy_relaunch python3 tests/gpu/cupy_relaunch.py
	check cupy_relaunch_clean python3 tests/gpu/cupy_relaunch.py --clean
else
	echo "cupy: skipped (no cupy)"
fi
# cuda-python: cuda.bindings (12.6+, 13.x) or the older cuda.cuda, as the script imports it
if python3 -c 'from cuda.bindings import driver' 2> /dev/null || python3 -c 'from cuda import cuda' 2> /dev/null; then
	echo "seed_pipeline.py expected: free-foreign-in-capture at :132 (allocated at :121)," \
		"use-unmaterialized at :145 and free-unmaterialized at :146 (allocated at :129)," \
		"launch-reused-pointer (warning) at :139; live at exit: 10 allocations (information" \
		"line), with GRAPHCHECK_LEAK_CHECK=full leak-at-exit 10 allocated at :121;" \
		"--fixed: launch-reused-pointer (warning) at :142"
	check seed_pipeline_py python3 tests/gpu/seed_pipeline.py
	check seed_pipeline_py_leakfull env GRAPHCHECK_LEAK_CHECK=full python3 tests/gpu/seed_pipeline.py
	check seed_pipeline_py_fixed python3 tests/gpu/seed_pipeline.py --fixed
else
	echo "cuda-python: skipped (no cuda.bindings)"
fi
if python3 -c 'import torch' 2> /dev/null; then
	check torch_unmaterialized python3 tests/gpu/torch_unmaterialized.py
	check torch_unmaterialized_clean python3 tests/gpu/torch_unmaterialized.py --clean
	check torch_graph python3 tests/gpu/torch_graph.py
	check torch_train python3 tests/gpu/torch_train.py --steps 50 --warmup 10 --deterministic
	# cost: NAME ARGS: best timed seconds of 3 native and 3 graphcheck runs, alternating
	cost() {
		name=$1; shift
		: > "$OUT/cost_$name.txt"
		for i in 1 2 3; do
			python3 tests/gpu/torch_train.py "$@" | sed 's/^/native /' >> "$OUT/cost_$name.txt"
			GRAPHCHECK_LOG_FILE=$OUT/cost_$name.$i.txt $GC -- python3 tests/gpu/torch_train.py "$@" |
				sed 's/^/graphcheck /' >> "$OUT/cost_$name.txt"
		done
		awk -v name="$name" '
			$4 == "steps" { t = $5; if (!($1 in best) || t < best[$1]) best[$1] = t }
			END { printf "cost %s: native %.4f s, graphcheck %.4f s, tool/native %.3f (target <= 1.05)\n",
			      name, best["native"], best["graphcheck"], best["graphcheck"] / best["native"] }' \
			"$OUT/cost_$name.txt"
	}
	if [ "${PY_RECORDS_COST:-1}" != 0 ]; then
		cost cnn64 --steps 300 --batch 128 --width 64
		cost cnn16_launch_bound --steps 300 --batch 16 --width 16
	fi
else
	echo "torch: skipped (no torch)"
fi
