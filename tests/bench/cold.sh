#!/bin/sh
# How many cache lines graphcheck touches per intercepted call when a program's own work
# between calls has pushed them out of the caches (as PyTorch's does: issue 13): prog_bench's
# pairs-cold (4 MB touched before each alloc/free pair) and pairs (nothing between), natively
# and preloaded, under callgrind's cache simulation with a 32 KB L1 and a 2 MB last level,
# at two loop counts (set-up cancels). Per intercepted call, graphcheck's run minus the
# native one: instructions, L1 data misses, last-level misses of data and of instructions.
# Deterministic, like callgrind.sh; what a miss costs in time is the machine's.
# Usage: sh tests/bench/cold.sh [BUILD]
set -u
B=${1:-build}
PROG=$B/fakecuda/prog_bench
LIB=$(pwd)/$B/libgraphcheck.so
command -v valgrind > /dev/null || { echo "cold.sh: valgrind not found (make deps)" >&2; exit 1; }
[ -x "$PROG" ] && [ -f "$LIB" ] || { echo "cold.sh: build first: make $B/libgraphcheck.so $PROG" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
SIM="--cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL=2097152,16,64"

# count VARIANT WORKLOAD OPS: "Ir D1-misses LL-data-misses LL-instruction-misses calls"
count() {
	f=$T/$1.$2.$3
	if [ "$1" = gc ]; then
		GRAPHCHECK_LOG_FILE=/dev/null GRAPHCHECK_LEAK_CHECK=0 LD_PRELOAD=$LIB \
			valgrind -q --tool=callgrind $SIM --callgrind-out-file="$f.cg" "$PROG" "$2" 1 "$3" > "$f.out" 2> "$f.err"
	else
		valgrind -q --tool=callgrind $SIM --callgrind-out-file="$f.cg" "$PROG" "$2" 1 "$3" > "$f.out" 2> "$f.err"
	fi || { echo "cold.sh: $1 $2 $3 failed:" >&2; cat "$f.err" >&2; }
	# events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
	ev=$(sed -n 's/^events: *//p' "$f.cg" | head -n 1)
	sum=$(sed -n 's/^summary: *//p; s/^totals: *//p' "$f.cg" | head -n 1)
	echo "$ev" "|" "$sum" "|" "$(sed -n 's/^calls //p' "$f.out")" | awk '{
		n = 0; while ($(n + 1) != "|") n++
		for (i = 1; i <= n; i++) { name[i] = $i; v[name[i]] = $(n + 1 + i) }
		print v["Ir"] + 0, v["D1mr"] + v["D1mw"], v["DLmr"] + v["DLmw"], v["ILmr"] + 0, $NF }'
}

echo "per intercepted call, graphcheck minus native (callgrind cache simulation: L1 32 KB, LL 2 MB)"
printf '%-12s %12s %14s %14s %14s\n' workload instructions "L1 d-misses" "LL d-misses" "LL i-misses"
for w in pairs pairs-cold; do
	set -- $(count native $w 500) $(count native $w 1000) $(count gc $w 500) $(count gc $w 1000)
	# native at 500: $1-$5, at 1000: $6-$10; graphcheck: ${11}-${15}, ${16}-${20}
	awk -v w=$w -v c=$((${10} - $5)) \
		-v ni=$(($6 - $1)) -v nd=$(($7 - $2)) -v nl=$(($8 - $3)) -v nx=$(($9 - $4)) \
		-v gi=$((${16} - ${11})) -v gd=$((${17} - ${12})) -v gl=$((${18} - ${13})) \
		-v gx=$((${19} - ${14})) 'BEGIN {
		printf "%-12s %12.1f %14.2f %14.2f %14.2f\n", w, (gi - ni) / c, (gd - nd) / c,
		       (gl - nl) / c, (gx - nx) / c }'
done
