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
cp "$0" "$O/run56b.sh"
exec > "$O/console-b.txt" 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -s build/libgraphcheck.so build/graphcheck > "$O/build.txt" 2>&1 || cat "$O/build.txt"
echo "== corpus"
timeout 280 sh tests/gpu/corpus/run.sh "$O/corpus" > "$O/corpus.txt" 2>&1; echo "exit $?"; tail -1 "$O/corpus.txt"; grep -E "^(FAIL|not ok)" "$O/corpus.txt" | head
grep -E "threads_pool_ok|flags_ok" "$O/corpus.txt"
for k in 1 2 3 4 5; do
	rm -f "$O/s16-threads_pool_ok.$k.json"
	GRAPHCHECK_JSON_FILE=$O/s16-threads_pool_ok.$k.json GRAPHCHECK_LOG_FILE=/dev/null LD_PRELOAD=$PWD/.diag/s16/libgraphcheck.so /tmp/graphcheck-corpus-bin/threads_pool_ok > /dev/null 2>&1
	echo "threads_pool_ok under 3eb72cb, run $k: $(grep -o '"rule":"[a-z-]*"' "$O/s16-threads_pool_ok.$k.json" | sort | uniq -c | tr '\n' ' ')"
done
date -u
echo "== H200 suite"
timeout 190 sh tests/gpu/run.sh "$O/gpu" > "$O/gpu.txt" 2>&1; echo "exit $?"; grep -E "passed|failed" "$O/gpu.txt" | tail -2
date -u
cd "$OUT" && tar czf run56b.tgz run56 && rm -rf run56
