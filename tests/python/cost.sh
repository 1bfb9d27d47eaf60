#!/bin/sh
# graphcheck's added ns per alloc/free call in a Python program (tests/python/cost.py),
# with the Python frame read through the C API (ctypes.PyDLL, GIL held) and as memory
# (ctypes.CDLL, GIL released). Not a test:
# figures for the README. Usage: sh tests/python/cost.sh [BUILD] [PYTHON] [N]
set -u
B=${1:-build}
PY=${2:-python3}
N=${3:-200000}
FAKE=$B/fakecuda/libcuda.so.1
LIB=$(cd "$B" && pwd)/libgraphcheck.so
nat=$("$PY" tests/python/cost.py "$FAKE" "$N")
gc=$(GRAPHCHECK_LOG_FILE=/dev/null GRAPHCHECK_LEAK_CHECK=0 LD_PRELOAD=$LIB "$PY" tests/python/cost.py "$FAKE" "$N")
for k in PyDLL CDLL; do
	a=$(echo "$nat" | awk -v k=$k '$1 == k { print $2 }')
	b=$(echo "$gc" | awk -v k=$k '$1 == k { print $2 }')
	echo "$k: native $a ns/pair, graphcheck $b ns/pair: added $(( (b - a) / 2 )) ns per call"
done
