#!/bin/sh
# run58h: where uaf-batch-copy-gather's faulty run crashes natively (run58g: SIGSEGV, no output)
set -u
O=$OUT/run58h
mkdir -p "$O"
exec > "$O/console-h.txt" 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc -O2 -g -o /tmp/gather tests/gpu/misuse/uaf-batch-copy-gather.cu || exit 1
echo "== native, unbuffered"
stdbuf -o0 /tmp/gather; echo "exit $?"
echo "== gdb"
command -v gdb && timeout 120 gdb -q -batch -ex run -ex bt -ex "info registers rip" /tmp/gather 2>&1 | tail -40
echo "== compute-sanitizer"
command -v compute-sanitizer && timeout 120 compute-sanitizer --print-limit 5 /tmp/gather 2>&1 | tail -30
echo "== under graphcheck, unbuffered"
make -s build/libgraphcheck.so build/graphcheck > /dev/null 2>&1
stdbuf -o0 build/graphcheck --log-file="$O/gather.gc.txt" -- /tmp/gather; echo "exit $?"; cat "$O/gather.gc.txt"
date -u
echo "== batch during order probe"
nvcc -O2 -o /tmp/bdw tests/gpu/batch_during_order_probe.cu && timeout 60 /tmp/bdw
date -u
cd "$OUT" && tar czf run58h.tgz run58h && rm -rf run58h
