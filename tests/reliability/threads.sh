#!/bin/sh
# Threads: 16 threads x 100,000 alloc/free pairs, odd threads on their own streams, even ones
# on 2 shared streams, thread 0 capturing a graph every 100 pairs (capture with an
# allocation, instantiate, launch twice, free, destroy: 1,000 captures). Each thread commits
# exactly one double free. No deadlock (timeout), the program's output unchanged, and the
# records exact: 16 double-free, nothing else, in the JSON and the text log.
# Usage: sh tests/reliability/threads.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
# The writer is what is tested here: every record written to the text log, repeats too.
export GRAPHCHECK_WRITE_REPEATS=1
[ "$TSAN" = 1 ] && skip_suite "under TSan: 16 threads x 100,000 pairs under TSan take minutes; the threads of tests/interpose/run_fake.sh run under TSan instead"

THREADS=16 OPS=${REL_THREAD_OPS:-100000} SHARED=2 EVERY=100
LIMIT=120

timeout $LIMIT "$REL" threads $THREADS $OPS $SHARED $EVERY > "$tmp/native.out" 2>&1
nrc=$?
[ $nrc -eq 0 ] && ok "native run: $THREADS threads x $OPS pairs" || bad "native run: rc $nrc"

# run NAME HISTORY: one preloaded run; checks the exact record count.
# HISTORY big enough to hold every free keeps each double free explainable as one; the
# default (4096) may forget the first free under this churn (see the second run).
run() {
	name=$1 hist=$2
	rm -f "$tmp/gc.json" "$tmp/gc.txt"
	start=$(date +%s)
	GRAPHCHECK_JSON_FILE=$tmp/gc.json GRAPHCHECK_LOG_FILE=$tmp/gc.txt \
		timeout $LIMIT env ${hist:+GRAPHCHECK_HISTORY=$hist} LD_PRELOAD="$PRE" \
		"$REL" threads $THREADS $OPS $SHARED $EVERY > "$tmp/gc.out" 2> "$tmp/gc.err"
	grc=$?
	secs=$(($(date +%s) - start))
	if [ $grc -eq 124 ] || [ $grc -eq 137 ]; then
		bad "$name: no end within ${LIMIT}s (deadlock?)"
		return 1
	fi
	if [ $grc -eq $nrc ] && cmp -s "$tmp/native.out" "$tmp/gc.out" && [ ! -s "$tmp/gc.err" ]; then
		ok "$name: no deadlock (${secs}s), same output and status, nothing on stderr"
	else
		bad "$name: output or status changed (rc $nrc vs $grc)"
		diff "$tmp/native.out" "$tmp/gc.out" | head -5
		head -c 400 "$tmp/gc.err"
	fi
	valid_jsonl "$tmp/gc.json" && ok "$name: JSON log is whole lines" || bad "$name: JSON log malformed"
	return 0
}

# More than every free the run makes (a pair a loop, the double free's, the captures'): 1,000,000
# (about 60% of them) let a thread starved between its two frees on a loaded machine lose
# its first (free-unknown: 2 runs of 28 while other tests ran).
HIST=$((THREADS * OPS * 2))
if run "history $HIST" "$HIST"; then
	got=$(violations "$tmp/gc.json")
	[ "$got" = "$THREADS double-free" ] && ok "exactly $THREADS double-free records, nothing else" ||
		bad "records: want '$THREADS double-free', got '$(echo $got)'"
	# every double free is one of ours: the 16 addresses are distinct, one per thread's size
	n=$(jq -r 'select(.type == "violation") | "\(.ptr) \(.alloc.size)"' "$tmp/gc.json" | sort -u | wc -l)
	sizes=$(jq -r 'select(.type == "violation") | .alloc.size' "$tmp/gc.json" | sort -n |
		awk -v t=$THREADS 'BEGIN { ok = 1 } { if ($1 != 65536 + 512 * (NR - 1)) ok = 0 } END { print (ok && NR == t) ? "yes" : "no" }')
	[ "$n" -eq $THREADS ] && [ "$sizes" = yes ] &&
		ok "one double free per thread (16 distinct allocations, the sizes each thread used)" ||
		bad "double frees are not one per thread ($n distinct, sizes match: $sizes)"
	s=$(jq -c 'select(.type == "summary") | [.errors, .warnings, .records]' "$tmp/gc.json")
	[ "$s" = "[$THREADS,0,$THREADS]" ] && ok "JSON summary: $THREADS errors, 0 warnings, $THREADS records" ||
		bad "JSON summary: '$s'"
	t=$(grep -c '^==graphcheck== error: double-free' "$tmp/gc.txt")
	o=$(grep -c '^==graphcheck== \(error\|warning\):' "$tmp/gc.txt")
	last=$(tail -n 1 "$tmp/gc.txt")
	[ "$t" -eq $THREADS ] && [ "$o" -eq $THREADS ] &&
		[ "$last" = "==graphcheck== graphcheck: $THREADS errors, 0 warnings" ] &&
		ok "text log: $THREADS double-free records and the summary line" ||
		bad "text log: $t double-free of $o records, last line '$last'"
fi

# The default history: still exactly one record per double free, none lost or added. A
# free forgotten after 4096 others is reported as free-unknown, not double-free.
if run "default history" ""; then
	total=$(jq -r 'select(.type == "violation") | .rule' "$tmp/gc.json" | wc -l)
	other=$(jq -r 'select(.type == "violation") | .rule' "$tmp/gc.json" | grep -cv '^\(double-free\|free-unknown\)$')
	df=$(jq -r 'select(.type == "violation") | .rule' "$tmp/gc.json" | grep -c '^double-free$')
	[ "$total" -eq $THREADS ] && [ "$other" -eq 0 ] &&
		ok "default history: $THREADS records ($df double-free, $((THREADS - df)) free-unknown)" ||
		bad "default history: $total records, $other of other rules: $(violations "$tmp/gc.json" | tr '\n' ' ')"
fi
finish
