#!/bin/sh
# The CPU half of the demo gate: each trace recorded on the H200 replayed through the
# ledger must give exactly the rules demo/expected/<name>.rules lists.
# Usage: sh tests/traces/replay.sh BUILD_DIR
set -u
BUILD=${1:-build}
REPORT=$BUILD/graphcheck-report
pass=0 fail=0
for t in tests/traces/*.trace; do
	name=$(basename "$t" .trace)
	exp=demo/expected/$name.rules
	if [ ! -f "$exp" ]; then
		echo "FAIL $name: no $exp"; fail=$((fail + 1)); continue
	fi
	out=$("$REPORT" --replay --format=json "$t" 2>&1)
	got=$(printf '%s\n' "$out" | sed -n 's/.*"type":"violation".*"rule":"\([a-z-]*\)".*/\1/p' | LC_ALL=C sort -u)
	want=$(sed '/^[[:space:]]*$/d' "$exp" | LC_ALL=C sort -u)
	if [ "$got" = "$want" ]; then
		echo "PASS $name: $(echo $got)"; pass=$((pass + 1))
	else
		echo "FAIL $name: expected {$(echo $want)} got {$(echo $got)}"; fail=$((fail + 1))
		printf '%s\n' "$out" | head -5
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
