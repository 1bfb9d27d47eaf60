#!/bin/sh
# graphcheck-report against hostile or odd input (issue 12): a frame whose module is a FIFO
# (row 11: no hang), --replay -o naming its own input or /dev/full (row 14), a log whose
# file name is not UTF-8 under --format=json/sarif (row 15), 100,000 pids in one file in
# linear time (row 18), and a size of 2^64-1 as the writer logs it (row 8).
# Usage (from the repository root): sh tests/report/robust.sh BUILD_DIR
set -u
B=${1:-build}
R=$B/graphcheck-report
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
unset DEBUGINFOD_URLS
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }

violation() {  # violation PID SIZE MODULE
	printf '{"type":"violation","seq":1,"pid":%s,"tid":1,"rule":"api-error","severity":"error","call":"cuMemAllocAsync","result":2,"result_name":"CUDA_ERROR_OUT_OF_MEMORY","ptr":"0x0","size":%s,"stream":"0x1","graph":"0x0","exec":"0x0","capture_id":0,"message":"m","backtrace":[{"addr":"0x1234","module":"%s","offset":"0x1234","symbol":null}],"alloc":null}\n' "$1" "$2" "$3"
}

# ---- row 11: a FIFO as a frame's module -------------------------------------------------
mkfifo "$tmp/fifo"
violation 5 16 "$tmp/fifo" > "$tmp/fifo.jsonl"
timeout 20 "$R" "$tmp/fifo.jsonl" > "$tmp/out" 2> "$tmp/err"
rc=$?
[ $rc -eq 1 ] && grep -q "fifo+0x1234" "$tmp/out" &&
	ok "FIFO as a module: no hang, frame shown as module+offset (status $rc)" ||
	bad "FIFO as a module: status $rc (124: hung)"

# ---- row 14: the output is an input; a full device ----------------------------------------
T=tests/traces/double-free.trace
cp "$T" "$tmp/t.trace"
ln -s "$tmp/t.trace" "$tmp/link.trace"
for out in t.trace link.trace; do
	"$R" --replay -o "$tmp/$out" "$tmp/t.trace" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	[ $rc -eq 2 ] && cmp -s "$T" "$tmp/t.trace" && grep -q 'is the input' "$tmp/err" &&
		ok "--replay -o $out (the input itself): refused, status 2, the input intact" ||
		bad "--replay -o $out: status $rc, input $(cmp -s "$T" "$tmp/t.trace" && echo intact || echo DESTROYED)"
	cp "$T" "$tmp/t.trace"
done
violation 5 16 "?" > "$tmp/log.jsonl"
cp "$tmp/log.jsonl" "$tmp/log.keep"
"$R" -o "$tmp/log.jsonl" "$tmp/log.jsonl" > /dev/null 2>&1
rc=$?
[ $rc -eq 2 ] && cmp -s "$tmp/log.keep" "$tmp/log.jsonl" &&
	ok "-o naming the log read: refused, status 2, the log intact" ||
	bad "-o naming the log read: status $rc"
if [ -w /dev/full ]; then
	"$R" --replay -o /dev/full "$T" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	[ $rc -eq 2 ] && grep -q 'cannot write' "$tmp/err" &&
		ok "--replay -o /dev/full: status 2 and a message" ||
		bad "--replay -o /dev/full: status $rc, stderr '$(head -c 200 "$tmp/err")'"
	"$R" --replay "$T" > /dev/full 2> "$tmp/err"
	rc=$?
	[ $rc -eq 2 ] && ok "--replay > /dev/full (stdout): status 2" || bad "--replay > /dev/full: status $rc"
fi

# ---- row 15: a file name that is not UTF-8 --------------------------------------------------
name=$(printf "$tmp/log-\377\376.jsonl")
cp "$tmp/log.keep" "$name"
for fmt in json sarif; do
	"$R" --format=$fmt "$name" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	[ $rc -eq 1 ] && jq -e . "$tmp/out" > /dev/null 2>&1 && grep -q 'log-\\ufffd\\ufffd.jsonl\|log-��.jsonl' "$tmp/out" &&
		ok "--format=$fmt, a log named with bytes 0xff 0xfe: valid JSON, U+FFFD in the name (status $rc)" ||
		bad "--format=$fmt, non-UTF-8 file name: status $rc, $(wc -c < "$tmp/out") bytes"
done

# ---- row 18: many pids in one file ------------------------------------------------------------
# Not a timed test: 10 times the pids must not take 40 times as long (linear, not quadratic;
# the quadratic reader took 100 times as long), whatever the machine's speed or load.
pids_ms() {
	awk -v n="$1" 'BEGIN { for (p = 1; p <= n; p++)
		printf "{\"type\":\"summary\",\"pid\":%d,\"errors\":0,\"warnings\":0,\"records\":0}\n", p }' \
		> "$tmp/pids.jsonl"
	start=$(date +%s%N)
	timeout 120 "$R" "$tmp/pids.jsonl" > /dev/null 2>&1
	rc=$?
	echo "$rc $((($(date +%s%N) - start) / 1000000))"
}
set -- $(pids_ms 10000)
rc10=$1 ms10=$2
set -- $(pids_ms 100000)
rc=$1 ms=$2
base=$((ms10 > 5 ? ms10 : 5))
[ $rc -eq 0 ] && [ $rc10 -eq 0 ] && [ $ms -lt $((40 * base)) ] &&
	ok "100,000 pids in one file: ${ms} ms, 10,000: ${ms10} ms (linear; status $rc)" ||
	bad "100,000 pids in one file: ${ms} ms against ${ms10} ms for 10,000, status $rc (want under 40 times)"

# ---- row 8: a size of 2^64-1 ------------------------------------------------------------------
violation 5 18446744073709551615 "?" > "$tmp/big.jsonl"
violation 5 18446744073709551616 "?" > "$tmp/toobig.jsonl"
"$R" --format=json "$tmp/big.jsonl" > "$tmp/out" 2> "$tmp/err"
rc=$?
[ $rc -eq 1 ] && [ "$(jq -r '.entries[0].count' "$tmp/out" 2> /dev/null)" = 1 ] &&
	"$R" "$tmp/big.jsonl" 2>&1 | grep -q '1 errors' &&
	ok "size 18446744073709551615: read, 1 error, status $rc" ||
	bad "size 18446744073709551615: status $rc; $(head -c 300 "$tmp/err")"
"$R" "$tmp/toobig.jsonl" > /dev/null 2> "$tmp/err"
rc=$?
[ $rc -eq 3 ] && grep -q 'too big' "$tmp/err" && ok "size 2^64: still malformed (status 3)" ||
	bad "size 2^64: status $rc"
# The same from the writer itself: SIZE_MAX through the stand-in (Python's ctypes).
LIBGC=$(cd "$B" && pwd)/libgraphcheck.so
FAKE=$B/fakecuda/libcuda.so.1
case "$B" in *san*) FAKE= ;; esac
if [ -n "$FAKE" ] && python3 -c 'import ctypes' 2> /dev/null; then
	GRAPHCHECK_JSON_FILE=$tmp/w.jsonl GRAPHCHECK_LOG_FILE=/dev/null LD_PRELOAD=$LIBGC python3 -c '
import ctypes, sys
cu = ctypes.CDLL(sys.argv[1])
dev, ctx, s, p = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_uint64()
cu.cuInit(0); cu.cuDeviceGet(ctypes.byref(dev), 0); cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
cu.cuCtxSetCurrent(ctx); cu.cuStreamCreate(ctypes.byref(s), 1)
print(cu.cuMemAllocAsync(ctypes.byref(p), ctypes.c_size_t(2**64 - 1), s))' "$FAKE" > "$tmp/w.out" 2>&1
	"$R" --format=json "$tmp/w.jsonl" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	got=$(jq -r '.entries[0].rule' "$tmp/out" 2> /dev/null)
	grep -q '"size":18446744073709551615' "$tmp/w.jsonl" && [ $rc -eq 1 ] && [ "$got" = api-error ] &&
		ok "the writer's own SIZE_MAX record: read as api-error, status $rc" ||
		bad "the writer's SIZE_MAX record: status $rc, rule '$got'; $(head -c 200 "$tmp/err")"
else
	echo "skip the writer's SIZE_MAX record (no python3, or a sanitizer build)"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
