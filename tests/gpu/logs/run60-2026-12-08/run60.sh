#!/bin/sh
# run60: the check of a batch before the call on the GPU (a4d20c7, and cuMemcpy3DBatchAsync
# hooked): uaf-batch-copy-gather and uaf-batch3d-crop natively and under graphcheck
# (unbuffered), their clean twins, then the whole misuse suite.
set -u
O=$OUT/run60
mkdir -p "$O"
cp "$0" "$O/"
exec > "$O/console.txt" 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git log --oneline -1; git status --short | head
make -s build/libgraphcheck.so build/graphcheck build/graphcheck-report > "$O/build.txt" 2>&1 || cat "$O/build.txt"
for p in uaf-batch-copy-gather uaf-batch3d-crop; do
	nvcc -arch=sm_90 -O2 -g -o /tmp/$p tests/gpu/misuse/$p.cu || continue
	echo "== $p native, unbuffered"
	stdbuf -o0 /tmp/$p; echo "exit $?"
	echo "== $p --clean native"
	/tmp/$p --clean | tail -2; echo "exit $?"
	echo "== $p under graphcheck, unbuffered"
	stdbuf -o0 build/graphcheck --log-file="$O/$p.gc.txt" --json-file="$O/$p.gc.json" -- /tmp/$p; echo "exit $?"; cat "$O/$p.gc.txt"
	echo "== $p --clean under graphcheck"
	build/graphcheck --error-exitcode=1 --log-file="$O/$p-clean.gc.txt" -- /tmp/$p --clean | tail -2; echo "exit $?"; cat "$O/$p-clean.gc.txt"
	echo "== report of the faulty run"
	build/graphcheck-report "$O/$p.gc.json" | head -6
done
echo "== batch capture probe (natively, then under graphcheck)"
nvcc -arch=sm_90 -O2 -o /tmp/bcp tests/gpu/batch_capture_probe.cu && for m in stream during; do
	timeout 60 /tmp/bcp $m; echo "exit $?"
	timeout 60 build/graphcheck --log-file="$O/bcp-$m.gc.txt" -- /tmp/bcp $m > /dev/null 2>&1; echo "under graphcheck: exit $?"; grep -E "error:|warning:|graphcheck:" "$O/bcp-$m.gc.txt"
done
date -u
echo "== misuse suite"
OUT=$O timeout 300 sh tests/gpu/misuse/run.sh > "$O/misuse.txt" 2>&1; echo "exit $?"; grep -E "DIFF|GAP|COMPILE" "$O/misuse.txt"; echo "match: $(grep -c ' match ' "$O/misuse.txt")"
grep -E "uaf-batch" "$O/misuse.txt"; tail -3 "$O/misuse.txt"
date -u
