#!/bin/sh
# run56 (H200): sessions 16 and 17 unmeasured. Session 16: stream memory operations (v1+v2,
# open waits), graph steps (host, event-wait, event-record nodes). Session 17: child graph
# nodes' words, exec node setters (event record, batch memop, child graph, enable), legacy
# stream chains, contested addresses, a capture ended by 904. The order probe under a trace;
# the misuse suite (26 pairs: 4 new since run54); the new pairs' clean twins and the new
# corpus program under the object at 3eb72cb (.diag/s16, session 16's end); corpus; gpu suite.
set -u
O=$OUT/run56
mkdir -p "$O"
cp "$0" "$O/run56a.sh"
exec > "$O/console-a.txt" 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -s build/libgraphcheck.so build/graphcheck > "$O/build.txt" 2>&1 || cat "$O/build.txt"
echo "== order_calls_probe"
nvcc -arch=sm_90 -g -o /tmp/ocp tests/gpu/order_calls_probe.cu -lcuda > "$O/nvcc.txt" 2>&1 || cat "$O/nvcc.txt"
/tmp/ocp > "$O/ocp.native.out" 2>&1
GRAPHCHECK_TRACE_FILE=$O/ocp.trace build/graphcheck --json-file=$O/ocp.json --log-file=$O/ocp.txt -- /tmp/ocp > "$O/ocp.gc.out" 2>&1
cmp "$O/ocp.native.out" "$O/ocp.gc.out" && echo "ocp: same output"
grep -o '"call":"[A-Za-z0-9_]*"' "$O/ocp.trace" | sort | uniq -c
grep -o '"rule":"[a-z-]*"' "$O/ocp.json" | sort | uniq -c
echo "== misuse suite"
OUT=$O timeout 260 sh tests/gpu/misuse/run.sh > "$O/misuse.txt" 2>&1; echo "exit $?"; grep -E "DIFF|GAP|COMPILE" "$O/misuse.txt"; echo "match: $(grep -c ' match ' "$O/misuse.txt")"
for n in unordered-use-wait-value unordered-use-graph-host-node unordered-use-legacy-chain uaf-child-graph-node; do
	grep "$n" "$O/misuse.txt"
	echo "-- $n --clean under 3eb72cb"
	rm -f "$O/s16-$n.json"
	GRAPHCHECK_JSON_FILE=$O/s16-$n.json GRAPHCHECK_LOG_FILE=$O/s16-$n.txt LD_PRELOAD=$PWD/.diag/s16/libgraphcheck.so /tmp/m2bin/$n --clean > "$O/s16-$n.out" 2>&1; echo "exit $?"
	grep -o '"rule":"[a-z-]*"' "$O/s16-$n.json" | sort | uniq -c
done
date -u
date -u
cd "$OUT" && tar czf run56a.tgz run56 && rm -rf run56
