#!/bin/sh
# A trace replays as the live run went, whatever the program's path and options:
# - programs run from directories named a\b"c, a<newline>b, résumé and with a byte that is
#   not UTF-8 write trace headers and JSON logs that parse, name the program exactly (valid
#   UTF-8 as is, the bad byte as \u00XX), and replay with no line skipped and the live run's
#   rules, counted;
# - GRAPHCHECK_HISTORY=0 (no freed allocations remembered): the live run and the replay give
#   the same rules, counted (free-unknown, where the default history says double-free).
# The program is tests/reliability's rel_prog (3 double frees) on the stand-in driver.
# Usage: sh tests/traces/fidelity.sh BUILD_DIR
set -u
BUILD=${1:-build}
pass=0 fail=0
ok() { pass=$((pass + 1)); printf 'ok   %s\n' "$1"; }
bad() { fail=$((fail + 1)); printf 'FAIL %s\n' "$1"; }
case "$BUILD" in
*tsan*) echo "skipped: under TSan: it runs python3 and sh-started programs not built with TSan"
	echo "0 passed, 0 failed"; exit 77 ;;
esac
LIB=$(cd "$BUILD" && pwd)/libgraphcheck.so
REPORT=$BUILD/graphcheck-report
REL=$BUILD/reliability/rel_prog
CUDA=$BUILD/fakecuda/libcuda.so.1
for f in "$LIB" "$REPORT" "$REL" "$CUDA"; do
	[ -e "$f" ] || { echo "FAIL $f missing (run make first)"; echo "0 passed, 1 failed"; exit 1; }
done
case "$BUILD" in
*asan*) PRE="$(${CC:-gcc} -print-file-name=libasan.so):$LIB"
	export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 ;;
*) PRE=$LIB ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# counts FILE: "count rule" lines of the violations in a JSON-lines file.
counts() {
	jq -r 'select(.type == "violation") | .rule' "$1" | sort | uniq -c | sed 's/^ *//' | tr '\n' ' '
}

# live DIR [VAR=VALUE...]: runs the program copied into DIR under graphcheck; leaves
# $tmp/live.json, $tmp/run.trace, $tmp/replay.json, $tmp/replay.err.
live() {
	dir=$1
	shift
	mkdir -p "$dir/reliability" "$dir/fakecuda"
	cp "$REL" "$dir/reliability/rel_prog"
	cp "$CUDA" "$dir/fakecuda/libcuda.so.1"
	rm -f "$tmp/live.json" "$tmp/run.trace"
	env "$@" LD_PRELOAD="$PRE" GRAPHCHECK_LOG_FILE=/dev/null GRAPHCHECK_JSON_FILE="$tmp/live.json" \
		GRAPHCHECK_TRACE_FILE="$tmp/run.trace" "$dir/reliability/rel_prog" die return 3 \
		> /dev/null 2>&1
	"$REPORT" --replay --format=json "$tmp/run.trace" > "$tmp/replay.json" 2> "$tmp/replay.err"
}

# same_rules WHAT: the live run's rules and counts are the replay's, and not none.
same_rules() {
	l=$(counts "$tmp/live.json") r=$(counts "$tmp/replay.json")
	if [ -n "$l" ] && [ "$l" = "$r" ] && [ ! -s "$tmp/replay.err" ]; then
		ok "$1: replay gives the live rules ($l), nothing skipped"
	else
		bad "$1: live '$l', replay '$r', replay said: $(head -c 300 "$tmp/replay.err")"
	fi
}

nl='
'
for name in 'a\b"c' "a${nl}b" 'résumé' "$(printf 'bad\377byte')"; do
	shown=$(printf '%s' "$name" | od -An -c | tr -s ' ' | tr -d '\n')
	dir=$tmp/$name
	live "$dir"
	want="$dir/reliability/rel_prog"
	got=$(jq -rj 'select(.type == "trace") | .program' "$tmp/run.trace" 2>/dev/null)
	start=$(jq -rj 'select(.type == "start") | .program' "$tmp/live.json" 2>/dev/null)
	case $name in
	bad*)  # the byte that is not UTF-8 is written as \u00ff: a reader gets U+00FF (ÿ)
		want=$(printf '%s' "$want" | sed "s/$(printf '\377')/ÿ/")
		grep -q 'bad\\u00ffbyte' "$tmp/run.trace" && grep -q 'bad\\u00ffbyte' "$tmp/live.json" &&
			ok "dir '$shown': the bad byte is written \\u00ff in the trace and the log" ||
			bad "dir '$shown': no \\u00ff escape: $(head -1 "$tmp/run.trace")" ;;
	résumé)  # valid UTF-8 is written as it is, not byte-escaped
		grep -q '/résumé/' "$tmp/run.trace" && grep -q '/résumé/' "$tmp/live.json" &&
			ok "dir '$shown': UTF-8 written unescaped in the trace and the log" ||
			bad "dir '$shown': UTF-8 escaped: $(grep -m1 start "$tmp/live.json")" ;;
	esac
	[ "$got" = "$want" ] && [ "$start" = "$want" ] &&
		ok "dir '$shown': trace header and log start line parse and name the program exactly" ||
		bad "dir '$shown': trace names '$got', log names '$start', want '$want'"
	same_rules "dir '$shown'"
done

# GRAPHCHECK_HISTORY: the header carries it and the replay uses it.
for h in 0 4096; do
	live "$tmp/plain" GRAPHCHECK_HISTORY=$h
	hh=$(jq -r 'select(.type == "trace") | .options.history' "$tmp/run.trace")
	[ "$hh" = "$h" ] && ok "GRAPHCHECK_HISTORY=$h: the trace header carries history $hh" ||
		bad "GRAPHCHECK_HISTORY=$h: the header has history '$hh'"
	same_rules "GRAPHCHECK_HISTORY=$h"
	want='3 double-free '
	[ "$h" = 0 ] && want='3 free-unknown '
	[ "$(counts "$tmp/live.json")" = "$want" ] && ok "GRAPHCHECK_HISTORY=$h: live says $want" ||
		bad "GRAPHCHECK_HISTORY=$h: live says '$(counts "$tmp/live.json")', want '$want'"
done

# A header's history past GRAPHCHECK_HISTORY's bound (no live run writes one; a stripe's
# ring counts are 32-bit) replays with the bound's history, as the live run's could be at
# most: the 3 double frees are still told apart, not lost with the history.
live "$tmp/plain"
sed '1s/"history":4096/"history":1099511627776/' "$tmp/run.trace" > "$tmp/big.trace"
"$REPORT" --replay --format=json "$tmp/big.trace" > "$tmp/replay.json" 2> "$tmp/replay.err"
if grep -q '"history":1099511627776' "$tmp/big.trace" &&
	[ "$(counts "$tmp/replay.json")" = '3 double-free ' ]; then
	ok "a header's history of 2^40: replay says 3 double-free"
else
	bad "a header's history of 2^40: replay says '$(counts "$tmp/replay.json")', want '3 double-free '"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
