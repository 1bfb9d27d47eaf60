#!/bin/sh
# run54 (H200): stream memory operations. Which memop spellings libcuda exports; the order
# probe (callback/host-function spellings, pointer ranges, memops linked) natively and under
# graphcheck with a trace; the misuse suite with unordered-use-wait-value; that misuse's clean
# twin under the object before the hooks (HEAD 7044043, .diag/old).
set -u
O=$OUT/run54
mkdir -p "$O"
cp "$0" "$O/run54.sh"
exec > "$O/console.txt" 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -s build/libgraphcheck.so build/graphcheck > "$O/build.txt" 2>&1 || cat "$O/build.txt"
lib=$(ldconfig -p | sed -n 's/.*libcuda.so.1.*=> //p' | head -1)
echo "== $lib: stream memory operation spellings"
nm -D --defined-only "$lib" | grep -E "cuStream(Wait|Write)Value|cuStreamBatchMemOp" | awk '{print $3}' | sort | tee "$O/memop_spellings.txt"
nm -D --defined-only "$lib" | grep -E " cuStreamAddCallback| cuLaunchHostFunc" | awk '{print $3}' | sort
echo "== order_calls_probe"
nvcc -arch=sm_90 -g -o /tmp/ocp tests/gpu/order_calls_probe.cu -lcuda > "$O/nvcc.txt" 2>&1 || cat "$O/nvcc.txt"
nvcc -arch=sm_90 -g --default-stream per-thread -o /tmp/ocp_ptsz tests/gpu/order_calls_probe.cu -lcuda >> "$O/nvcc.txt" 2>&1 || cat "$O/nvcc.txt"
for p in ocp ocp_ptsz; do
	/tmp/$p > "$O/$p.native.out" 2>&1
	GRAPHCHECK_TRACE_FILE=$O/$p.trace build/graphcheck --json-file=$O/$p.json --log-file=$O/$p.txt -- /tmp/$p > "$O/$p.gc.out" 2>&1
	echo "-- $p: native vs gc output"; cmp "$O/$p.native.out" "$O/$p.gc.out" && echo same
	cat "$O/$p.native.out"
	echo "-- $p: the calls the trace's events name"
	grep -o '"call":"[A-Za-z0-9_]*"' "$O/$p.trace" | sort | uniq -c
	echo "-- $p: records"; grep -o '"rule":"[a-z-]*"' "$O/$p.json" | sort | uniq -c
done
echo "== misuse suite"
OUT=$O timeout 240 sh tests/gpu/misuse/run.sh > "$O/misuse.txt" 2>&1; echo "exit $?"; grep -E "DIFF|GAP|COMPILE" "$O/misuse.txt"; echo "match: $(grep -c ' match ' "$O/misuse.txt")"
grep -E "wait-value" "$O/misuse.txt"
cat "$O/m2/unordered-use-wait-value.native.out" | grep -E "round|done"
cat "$O/m2/unordered-use-wait-value--clean.native.out" | grep -E "round|done"
echo "== the clean twin under the object before the hooks"
rm -f "$O/old-clean.json"
GRAPHCHECK_JSON_FILE=$O/old-clean.json GRAPHCHECK_LOG_FILE=$O/old-clean.txt LD_PRELOAD=$PWD/.diag/old/libgraphcheck.so /tmp/m2bin/unordered-use-wait-value --clean > "$O/old-clean.out" 2>&1; echo "exit $?"
grep -o '"rule":"[a-z-]*"' "$O/old-clean.json" | sort | uniq -c
date -u
cd "$OUT" && tar czf run54.tgz run54 && rm -rf run54
