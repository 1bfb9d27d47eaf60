#!/bin/sh
# The CPU half of the demo gate: each trace recorded on the H200 replayed through the
# ledger must give exactly the records demo/expected/<name>.rules lists, one line a record
# (counts per rule, not only which rules), and where the same program's live log is kept
# (tests/gpu/logs/<name>.json) the same counts as that live run. The hand-written traces of
# tests/traces/synthetic/ (each with its <name>.rules) pin the fields that change a verdict
# (capture mode, thread, instantiate flags).
# Usage: sh tests/traces/replay.sh BUILD_DIR
. tests/lib.sh
REPORT=$BUILD/graphcheck-report
# counts: "count rule" lines, sorted, of rule ids on stdin
counts() { sed '/^[[:space:]]*$/d' | LC_ALL=C sort | uniq -c | sed 's/^ *//'; }
for t in tests/traces/*.trace tests/traces/synthetic/*.trace; do
	name=$(basename "$t" .trace)
	case $t in
	*/synthetic/*) exp=${t%.trace}.rules ;;
	*) exp=demo/expected/$name.rules ;;
	esac
	if [ ! -f "$exp" ]; then
		bad "$name: no $exp"; continue
	fi
	out=$("$REPORT" --replay --format=json "$t" 2>&1)
	got=$(printf '%s\n' "$out" | sed -n 's/.*"type":"violation".*"rule":"\([a-z-]*\)".*/\1/p' | counts)
	want=$(counts < "$exp")
	if [ "$got" = "$want" ]; then
		ok "$name: $(echo $got)"
	else
		bad "$name: expected {$(echo $want)} got {$(echo $got)}"
		printf '%s\n' "$out" | head -5
	fi
	live=tests/gpu/logs/$name.json
	if [ -f "$live" ]; then
		lgot=$(jq -r 'select(.type == "violation") | .rule' "$live" | counts)
		[ "$lgot" = "$got" ] && ok "$name: the same counts as the live H200 run" ||
			bad "$name: replay {$(echo $got)}, live H200 run {$(echo $lgot)}"
	fi
done
finish
