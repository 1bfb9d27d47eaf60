#!/bin/sh
# graphcheck's instructions per intercepted call through the stand-in driver, counted by
# callgrind: a figure the machine's noise cannot move. Each workload of prog_bench
# (tests/fakecuda/progs/prog_bench.c) runs natively and under LD_PRELOAD=libgraphcheck.so at
# two loop counts; differencing the counts cancels start-up and set-up, and the native
# difference (the stand-in's and the program's own instructions) is taken out:
#   added per call = ((gc[N2] - gc[N1]) - (native[N2] - native[N1])) / (calls[N2] - calls[N1])
# The stand-in's own instructions are left out of every count (native/call is the program's
# loop alone). With 16 threads the calls are every thread's, so the figure is per call of
# one thread (callgrind runs threads one at a time: it counts work, and the spinning of a
# lock graphcheck contends on, not time).
# Usage: sh tests/bench/callgrind.sh [BUILD]; GRAPHCHECK_* variables reach the graphcheck runs.
set -u
B=${1:-build}
PROG=$B/fakecuda/prog_bench
LIB=$(pwd)/$B/libgraphcheck.so
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind not found (make deps)" >&2; exit 1; }
[ -x "$PROG" ] && [ -f "$LIB" ] || { echo "callgrind.sh: build first: make $B/libgraphcheck.so $PROG" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM

# count VARIANT WORKLOAD THREADS OPS: prints "instructions calls"
count() {
	v=$1 w=$2 th=$3 n=$4 f=$T/$1.$2.$3.$4
	if [ "$v" = gc ]; then
		GRAPHCHECK_LOG_FILE=/dev/null GRAPHCHECK_LEAK_CHECK=0 LD_PRELOAD=$LIB \
			valgrind -q --tool=callgrind --callgrind-out-file="$f.cg" "$PROG" "$w" "$th" "$n" > "$f.out" 2> "$f.err"
	else
		valgrind -q --tool=callgrind --callgrind-out-file="$f.cg" "$PROG" "$w" "$th" "$n" > "$f.out" 2> "$f.err"
	fi || { echo "callgrind.sh: $v $w $th $n failed:" >&2; cat "$f.err" >&2; }
	ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p; s/^totals: *\([0-9]*\).*/\1/p' "$f.cg" | head -n 1)
	# The stand-in's own instructions (its cu* entry points, inclusive) are left out: with
	# many threads its one lock's waits vary from run to run, and they are not graphcheck's.
	fake=$(callgrind_annotate --inclusive=yes --threshold=100 "$f.cg" 2>/dev/null | tr -d , |
		awk '/\/libcuda\.so\.1\]$/ && $0 ~ /:cu[A-Za-z0-9_]+ \[/ { s += $1 } END { print s + 0 }')
	calls=$(sed -n 's/^calls //p' "$f.out")
	echo "$((${ir:-0} - fake)) ${calls:-0}"
}

echo "instructions added per intercepted call, through the stand-in (callgrind; tool minus native)"
printf '%-14s %8s %10s %10s %16s\n' workload threads ops "native/call" "added/call"
for cfg in "pairs 1 4000 8000" "pairs 16 500 1000" "launch4 1 4000 8000" "launch4 16 500 1000" \
	"launch4-dead 1 4000 8000" "launch4-dead 16 500 1000" "launch4-streams 1 4000 8000" \
	"launch4-streams 16 500 1000" "launch4-churn 1 4000 8000" "launch4-churn 16 500 1000" \
	"launch4-two 1 4000 8000" "launch4-two 16 500 1000" \
	"graph 1 2000 4000" "graph 16 250 500" \
	"event 1 4000 8000" "event 16 500 1000"; do
	set -- $cfg
	w=$1 th=$2 n1=$3 n2=$4
	set -- $(count native "$w" "$th" "$n1") $(count native "$w" "$th" "$n2") \
		$(count gc "$w" "$th" "$n1") $(count gc "$w" "$th" "$n2")
	calls=$(($4 - $2))
	native=$(($3 - $1)) tool=$(($7 - $5))
	[ "$calls" -gt 0 ] || { echo "callgrind.sh: $w $th: no calls counted" >&2; continue; }
	nat=$(awk -v a="$native" -v c="$calls" 'BEGIN { printf "%.1f", a / c }')
	added=$(awk -v a="$tool" -v b="$native" -v c="$calls" 'BEGIN { printf "%.1f", (a - b) / c }')
	printf '%-14s %8s %10s %10s %16s\n' "$w" "$th" "$n1-$n2" "$nat" "$added"
	echo "callgrind workload $w threads $th added_instructions_per_call $added" >> "$T/summary"
done
cat "$T/summary"
