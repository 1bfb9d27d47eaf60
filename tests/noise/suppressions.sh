#!/bin/sh
# Suppressions end to end through the stand-in driver: ctx_prog badfree makes one
# free-unknown (cuMemFreeAsync of 0x1234 from bad_free). A file whose entry matches it
# silences it (not written, not an error: status 0 under --error-exitcode, the summary
# counts 1 suppressed); the entry --gen-suppressions prints, pasted into a file, does the
# same; an unreadable file and malformed entries get one message each and the run goes on;
# graphcheck-report --suppressions (with src: lines) drops it from a log.
# Usage: sh tests/noise/suppressions.sh BUILD_DIR
. tests/reliability/lib.sh
[ "$TSAN" = 1 ] && skip_suite "under TSan: its entries match the program's frames, and under TSan the first frames are TSan's interceptors"
GC=$BUILD/graphcheck
PROG=$BUILD/noise/ctx_prog
REPORT=$BUILD/graphcheck-report
launch() { if [ "$ASAN" = 1 ]; then LD_PRELOAD=${PRE%:*} "$@"; else "$@"; fi; }

# run_in NAME PROGRAM MODE [LAUNCHER OPTIONS]: the program under the launcher; status in $rc.
run_in() {
	name=$1 prog=$2 mode=$3
	shift 3
	rm -f "$tmp/$name".*
	launch timeout 60 "$GC" --error-exitcode=9 --log-file="$tmp/$name.txt" \
		--json-file="$tmp/$name.json" "$@" -- "$prog" "$mode" > /dev/null 2> "$tmp/$name.err"
	rc=$?
}
# run NAME [LAUNCHER OPTIONS]: ctx_prog badfree.
run() {
	name=$1
	shift
	run_in "$name" "$PROG" badfree "$@"
}
summary() { jq -c 'select(.type == "summary") | [.errors, .records, .suppressed]' "$1"; }

run plain
[ "$rc" -eq 9 ] && [ "$(violations "$tmp/plain.json")" = "1 free-unknown" ] &&
	ok "without suppressions: one free-unknown, status 9" ||
	bad "without suppressions: status $rc, $(violations "$tmp/plain.json")"

# Under ASan the object's backtraces start with libasan's and graphcheck's own frames.
inner=
[ "$ASAN" = 1 ] && inner="
   ..."
cat > "$tmp/s_known.supp" <<SUPP
# a known bad free
{
   known-bad-free
   graphcheck:free-unknown
   call:cuMemFreeAsync*$inner
   fun:bad_free
   fun:main
}
SUPP
run known --suppressions="$tmp/s_known.supp"
[ "$rc" -eq 0 ] && ok "suppressed: status 0 under --error-exitcode" || bad "suppressed: status $rc, want 0"
[ -z "$(violations "$tmp/known.json")" ] && ! grep -q 'free-unknown' "$tmp/known.txt" &&
	ok "suppressed: the record is not written" || bad "suppressed: the record was written"
grep -q '^==graphcheck== graphcheck: 0 errors, 0 warnings, 1 suppressed$' "$tmp/known.txt" &&
	[ "$(summary "$tmp/known.json")" = "[0,0,1]" ] &&
	ok "suppressed: the summaries count 1 suppressed" ||
	bad "suppressed: summaries $(tail -1 "$tmp/known.txt") $(summary "$tmp/known.json")"

# An entry for another rule, or another function, does not match.
sed 's/fun:bad_free/fun:good_free/' "$tmp/s_known.supp" > "$tmp/s_other.supp"
run other --suppressions="$tmp/s_other.supp"
[ "$rc" -eq 9 ] && [ "$(violations "$tmp/other.json")" = "1 free-unknown" ] &&
	ok "an entry for another function does not match" || bad "fun:good_free matched: status $rc"

# --gen-suppressions: the entry after the record, pasted into a file, silences it.
run gen --gen-suppressions
sed -n '/^{$/,/^}$/p' "$tmp/gen.txt" > "$tmp/s_gen.supp"
grep -q '^   graphcheck:free-unknown$' "$tmp/s_gen.supp" && grep -q '^   fun:bad_free$' "$tmp/s_gen.supp" &&
	ok "--gen-suppressions prints an entry: $(grep -c . "$tmp/s_gen.supp") lines" ||
	bad "--gen-suppressions printed no entry: $(head -c 400 "$tmp/gen.txt")"
run pasted --suppressions="$tmp/s_gen.supp"
[ "$rc" -eq 0 ] && [ -z "$(violations "$tmp/pasted.json")" ] &&
	[ "$(summary "$tmp/pasted.json")" = "[0,0,1]" ] &&
	ok "the generated entry, pasted into a file, silences the record" ||
	bad "the generated entry did not silence it: status $rc, $(summary "$tmp/pasted.json")"

# leak-at-exit: its entry names where the memory was allocated (the allocating call, the
# allocation's site), not the exit that found it (libc's exit handlers, which every leak
# shares: such an entry hid every leak of the program). rel_prog leak-only leaks one
# cuMemAllocAsync allocation.
run_in leak "$REL" leak-only --gen-suppressions
sed -n '/^{$/,/^}$/p' "$tmp/leak.txt" > "$tmp/s_leak.supp"
grep -q '^   graphcheck:leak-at-exit$' "$tmp/s_leak.supp" && grep -q '^   call:cuMemAllocAsync$' "$tmp/s_leak.supp" &&
	! grep -q 'fun:exit\|libc\|exit_handlers' "$tmp/s_leak.supp" &&
	ok "--gen-suppressions for a leak: the allocating call and site, no exit frame" ||
	bad "the leak's generated entry: $(tr '\n' ' ' < "$tmp/s_leak.supp")"
run_in leak_pasted "$REL" leak-only --suppressions="$tmp/s_leak.supp"
[ "$(summary "$tmp/leak_pasted.json")" = "[0,0,1]" ] &&
	ok "the leak's generated entry, pasted, silences it" ||
	bad "the leak's generated entry did not silence it: $(summary "$tmp/leak_pasted.json")"
"$REPORT" --suppressions="$tmp/s_leak.supp" "$tmp/leak.json" > "$tmp/rep.out" 2>&1
grep -q ', 1 suppressed' "$tmp/rep.out" &&
	ok "graphcheck-report --suppressions with the leak's entry drops it" ||
	bad "graphcheck-report and the leak's entry: $(tail -1 "$tmp/rep.out")"
# An entry of the exit's frames (what was generated before) no longer matches a leak.
printf '{\n   exit-frames\n   graphcheck:leak-at-exit\n   call:exit\n   obj:*/libc.so.6\n}\n' > "$tmp/s_exit.supp"
run_in leak_exit "$REL" leak-only --suppressions="$tmp/s_exit.supp"
[ "$(summary "$tmp/leak_exit.json")" = "[0,1,0]" ] &&
	ok "an entry of the exit's frames does not hide the leak" ||
	bad "an entry of the exit's frames: $(summary "$tmp/leak_exit.json")"

# Names an entry must write literally (tests/noise/supp_prog.c): a 640-character symbol,
# whole; a 10,240-character one, more than the logs keep of it, cut at their 4096 bytes and
# ended with *; the frames of a program named with [ ] * ? \ and a trailing blank, as obj:
# lines. Each generated entry, pasted into a file, silences its own record in the object
# and in graphcheck-report (which matches the symbol as the log keeps it).
# gen_pasted ID PROGRAM MODE WHAT LINE: LINE (grep -x) is one of the entry's lines.
gen_pasted() {
	id=$1 prog=$2 mode=$3 what=$4 line=$5
	run_in "$id" "$prog" "$mode" --gen-suppressions
	sed -n '/^{$/,/^}$/p' "$tmp/$id.txt" > "$tmp/s_$id.supp"
	[ "$rc" -eq 9 ] && grep -qx "$line" "$tmp/s_$id.supp" &&
		ok "$what: the entry has $(grep -x "$line" "$tmp/s_$id.supp" | head -1 | cut -c1-60)..." ||
		bad "$what: no line $(printf %s "$line" | cut -c1-80) in the entry: $(
			cut -c1-80 "$tmp/s_$id.supp" | tr '\n' ' ')"
	run_in "${id}_pasted" "$prog" "$mode" --suppressions="$tmp/s_$id.supp"
	[ "$rc" -eq 0 ] && [ "$(summary "$tmp/${id}_pasted.json")" = "[0,0,1]" ] &&
		ok "$what: the generated entry, pasted into a file, silences its record" ||
		bad "$what: the generated entry did not silence its record: status $rc, $(
			tail -1 "$tmp/${id}_pasted.txt")"
	"$REPORT" --suppressions="$tmp/s_$id.supp" "$tmp/$id.json" > "$tmp/rep.out" 2>&1
	rrc=$?
	[ $rrc -eq 0 ] && grep -q ', 1 suppressed' "$tmp/rep.out" &&
		ok "$what: graphcheck-report --suppressions with the entry drops the record" ||
		bad "$what: graphcheck-report --suppressions: status $rrc, $(tail -1 "$tmp/rep.out")"
}
noise=$(cd "$BUILD/noise" && pwd)
LD_LIBRARY_PATH="$(cd "$BUILD/fakecuda" && pwd):$noise${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
gen_pasted long "$noise/supp_prog" long "a 640-character symbol" \
	"   fun:$(printf 'long_name_%.0s' $(seq 64))"
gen_pasted huge "$noise/supp_prog" huge "a 10,240-character symbol" \
	"   fun:$(printf 'huge_name_%.0s' $(seq 409))huge_n\*"
mkdir "$tmp/bin"
cp "$noise/supp_prog" "$tmp/bin/p[1]*?\\x "
gen_pasted odd "$tmp/bin/p[1]*?\\x " here "a program named 'p[1]*?\\x '" \
	'   obj:\*/p\\\[1]\\\*\\?\\\\x\[ ]'

# Bad input: the launcher refuses a file it cannot read before the program runs; the object
# alone (the variable set by hand) says so once and goes on, unsuppressed; malformed entries
# get a line each and the good entries still apply.
run missing --suppressions="$tmp/no-such.supp"
[ "$rc" -eq 2 ] && [ ! -e "$tmp/missing.json" ] &&
	[ "$(cat "$tmp/missing.err")" = "graphcheck: cannot read the suppressions '$tmp/no-such.supp': No such file or directory" ] &&
	ok "an unreadable file, through the launcher: refused, one line, the program not run" ||
	bad "unreadable file, through the launcher: status $rc, $(head -c 300 "$tmp/missing.err")"
LD_PRELOAD=$PRE GRAPHCHECK_SUPPRESSIONS="$tmp/no-such.supp" GRAPHCHECK_LOG_FILE=/dev/null \
	GRAPHCHECK_JSON_FILE="$tmp/direct.json" timeout 60 "$PROG" badfree > /dev/null 2> "$tmp/direct.err"
[ "$(grep -c 'cannot read the suppressions' "$tmp/direct.err")" = 1 ] &&
	[ "$(violations "$tmp/direct.json")" = "1 free-unknown" ] &&
	ok "an unreadable file, preloaded by hand: one message, the record reported" ||
	bad "unreadable file, preloaded by hand: $(violations "$tmp/direct.json"), $(head -c 300 "$tmp/direct.err")"
{ printf '{\n   broken\n   graphcheck:free-unknown\n   what:ever\n}\n'; cat "$tmp/s_known.supp"; } > "$tmp/s_mixed.supp"
run mixed --suppressions="$tmp/s_mixed.supp"
[ "$rc" -eq 0 ] && [ "$(grep -c "s_mixed.supp:4: 'what:ever'" "$tmp/mixed.err")" = 1 ] &&
	ok "a malformed entry: one line, skipped; the good one still applies" ||
	bad "malformed entry: status $rc, $(head -c 300 "$tmp/mixed.err")"
# A rule that no rule id matches (a typo): said, with the nearest, instead of matching nothing.
{ printf '{\n   typo\n   graphcheck:free_unknown\n}\n'; cat "$tmp/s_known.supp"; } > "$tmp/s_typo.supp"
run typo --suppressions="$tmp/s_typo.supp"
[ "$rc" -eq 0 ] && grep -q "s_typo.supp:3: no rule matches 'graphcheck:free_unknown' (did you mean graphcheck:free-unknown?)" "$tmp/typo.err" &&
	ok "a rule no id matches: one line naming the nearest rule; the good entry still applies" ||
	bad "a rule typo: status $rc, $(head -c 300 "$tmp/typo.err")"

# graphcheck-report --suppressions, on the unsuppressed log; src: needs the source lines.
"$REPORT" --suppressions="$tmp/s_known.supp" "$tmp/plain.json" > "$tmp/rep.out" 2>&1
rrc=$?
[ $rrc -eq 0 ] && grep -q '0 errors, 0 warnings (1 records in 1 files), 1 suppressed' "$tmp/rep.out" &&
	ok "graphcheck-report --suppressions: dropped, status 0, counted" ||
	bad "graphcheck-report --suppressions: status $rrc, $(tail -2 "$tmp/rep.out")"
printf '{\n   by-line\n   graphcheck:*%s\n   src:*/ctx_prog.c:*\n}\n' "$inner" > "$tmp/s_src.supp"
"$REPORT" --suppressions="$tmp/s_src.supp" "$tmp/plain.json" > "$tmp/rep.out" 2>&1
rrc=$?
[ $rrc -eq 0 ] && grep -q ', 1 suppressed' "$tmp/rep.out" &&
	ok "graphcheck-report: a src:FILE:LINE entry matches the resolved frame" ||
	bad "graphcheck-report src: status $rrc, $(tail -2 "$tmp/rep.out")"
"$REPORT" "$tmp/known.json" > "$tmp/rep.out" 2>&1
grep -q ', 1 suppressed' "$tmp/rep.out" &&
	ok "graphcheck-report counts the run's suppressed records from the summary" ||
	bad "graphcheck-report: no suppressed count from the summary: $(tail -1 "$tmp/rep.out")"
finish
