#!/bin/sh
# Durability of the logs: a program commits N double frees (N records) and then dies, by a
# signal (SIGKILL, abort(), a segfault, SIGTERM, SIGQUIT, SIGBUS), by _exit, or ends
# normally (exit from main, return from main, exit() from another thread). Every record
# written before is a whole JSON line (jq) and a whole text record, none lost (exactly N);
# the exit summary (JSON "summary" line, text "graphcheck: N errors" line) is written on the
# normal ends and on the signals that allow it (abort, segfault, SIGTERM, SIGQUIT, SIGBUS:
# "killed by SIG...", with the same exit status as without graphcheck), not on SIGKILL or
# _exit, nor with GRAPHCHECK_SIGNAL_SUMMARY=0. A program's own SIGTERM handler, set before or
# after its first CUDA call, is left to work as without graphcheck. Also: 8 threads writing records when SIGKILL
# comes (every line whole but the last, which SIGKILL may cut), and GRAPHCHECK_ON_ERROR=abort. Usage: sh tests/reliability/durability.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
# The writer is what is tested here: every record written to the text log, repeats too.
export GRAPHCHECK_WRITE_REPEATS=1
[ "$TSAN" = 1 ] && skip_suite "under TSan: TSan takes SIGSEGV and SIGBUS itself, so the summary-on-signal checks cannot hold; the ASan and plain builds run them"

# ASan would catch SIGSEGV and SIGBUS itself and exit 1: let the signals act as without it.
[ "$ASAN" = 1 ] && export ASAN_OPTIONS=$ASAN_OPTIONS:handle_segv=0:handle_sigbus=0:handle_abort=0

N=200
# tab FILE: "type rule errors warnings records" per JSON line (one jq for the whole file).
tab() {
	jq -r '[.type, (.rule // "-"), (.errors // "-"), (.warnings // "-"), (.records // "-"),
	        (.signal // "-")] |
	       map(tostring) | join(" ")' "$1" 2> "$tmp/jq.err"
}
for mode in kill abort segv term quit bus _exit exit return thread-exit term-handled term-handled-late; do
	timeout 60 "$REL" die $mode $N > "$tmp/native.out" 2> "$tmp/native.err"  # (sh may note a death by signal in .err)
	nrc=$?
	rm -f "$tmp/gc.json" "$tmp/gc.txt"
	GRAPHCHECK_JSON_FILE=$tmp/gc.json GRAPHCHECK_LOG_FILE=$tmp/gc.txt \
		timeout 60 env LD_PRELOAD="$PRE" "$REL" die $mode $N > "$tmp/gc.out" 2> "$tmp/gc.err"
	grc=$?
	[ $nrc -eq $grc ] && cmp -s "$tmp/native.out" "$tmp/gc.out" ||
		{ bad "$mode: status $nrc vs $grc or output changed"; diff "$tmp/native.out" "$tmp/gc.out" | head -5; }
	tab "$tmp/gc.json" > "$tmp/gc.tab"
	lines=$(wc -l < "$tmp/gc.json")
	v=$(grep -c '^violation double-free ' "$tmp/gc.tab")
	others=$(grep -v '^violation double-free \|^start \|^summary ' "$tmp/gc.tab" | wc -l)
	whole=no
	[ "$(tail -c 1 "$tmp/gc.json" | od -An -c | tr -d ' ')" = '\n' ] && [ ! -s "$tmp/jq.err" ] &&
		[ "$(wc -l < "$tmp/gc.tab")" -eq "$lines" ] && whole=yes
	t=$(grep -c '^==graphcheck== error: double-free in cuMemFreeAsync' "$tmp/gc.txt")
	tbad=$(grep -vc '^==graphcheck== ' "$tmp/gc.txt")
	if [ $whole = yes ] && [ "$v" -eq $N ] && [ "$others" -eq 0 ] && [ "$t" -eq $N ] && [ "$tbad" -eq 0 ]; then
		ok "$mode (exit status $grc): $N of $N records in the JSON log, all whole lines; $N whole text records"
	else
		bad "$mode: JSON whole: $whole, $v double-free of $N, $others other; text: $t records, $tbad foreign lines"
	fi
	js=$(grep '^summary ' "$tmp/gc.tab" | cut -d' ' -f3-)
	ts=$(grep -c "^==graphcheck== graphcheck: $N errors, 0 warnings\$" "$tmp/gc.txt")
	sig=
	case $mode in
	abort) sig=SIGABRT ;; segv) sig=SIGSEGV ;; term) sig=SIGTERM ;; quit) sig=SIGQUIT ;; bus) sig=SIGBUS ;;
	esac
	case $mode in
	exit | return | thread-exit | term-handled*)  # the program's own SIGTERM handler: it lives on
		[ "$js" = "$N 0 $N -" ] && [ "$ts" -eq 1 ] && [ "$(tail -n 1 "$tmp/gc.txt")" = "==graphcheck== graphcheck: $N errors, 0 warnings" ] &&
			ok "$mode: summary written (JSON [$N,0,$N] and the text line)" ||
			bad "$mode: summary missing or wrong: JSON '$js', text lines $ts" ;;
	kill | _exit)
		[ -z "$js" ] && [ "$ts" -eq 0 ] && ok "$mode: no summary (nothing runs after it)" ||
			bad "$mode: a summary appeared: JSON '$js', text lines $ts" ;;
	*)
		line="==graphcheck== graphcheck: $N errors, 0 warnings (killed by $sig: no leak check)"
		[ "$js" = "$N 0 $N $sig" ] && [ "$(grep -cxF "$line" "$tmp/gc.txt")" -eq 1 ] &&
			ok "$mode: summary written on $sig (JSON [$N,0,$N,$sig] and the text line), status $grc as native" ||
			bad "$mode: summary on $sig missing or wrong: JSON '$js', text: $(grep -c 'graphcheck: ' "$tmp/gc.txt") summary lines" ;;
	esac
done

# GRAPHCHECK_SIGNAL_SUMMARY=0: no handler, no summary, same status.
GRAPHCHECK_SIGNAL_SUMMARY=0 GRAPHCHECK_JSON_FILE=$tmp/off.json GRAPHCHECK_LOG_FILE=$tmp/off.txt \
	timeout 60 env LD_PRELOAD="$PRE" "$REL" die term $N > /dev/null 2>&1
orc=$?
[ $orc -eq 143 ] && ! grep -q '"summary"' "$tmp/off.json" && ! grep -q 'graphcheck: [0-9]* errors' "$tmp/off.txt" &&
	ok "GRAPHCHECK_SIGNAL_SUMMARY=0: SIGTERM leaves no summary (status $orc)" ||
	bad "GRAPHCHECK_SIGNAL_SUMMARY=0: status $orc, or a summary was written"

# Killed while 8 threads are writing records. A write(2) to a file is not atomic against
# SIGKILL: the kernel stops copying between pages, so the one write under way when the
# signal lands may be cut short. O_APPEND serializes the writes, so that can only be the end
# of the file: what is promised is every line whole but the last, which may be cut (no
# newline), in either log. The cut tail is set aside (cut_tail), the rest must be whole.
# cut_tail FILE: FILE without a last line that has no newline; prints "cut" when it had one.
cut_tail() {
	if [ -s "$1" ] && [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" != '\n' ]; then
		head -c "$(($(wc -c < "$1") - $(tail -n 1 "$1" | wc -c)))" "$1" > "$1.whole"
		echo cut
	else
		cp "$1" "$1.whole" 2> /dev/null
	fi
	mv "$1.whole" "$1"
}
GRAPHCHECK_JSON_FILE=$tmp/mt.json GRAPHCHECK_LOG_FILE=$tmp/mt.txt \
	timeout 60 env LD_PRELOAD="$PRE" "$REL" die-threads 8 300 > /dev/null 2>&1
rc=$?
jcut=$(cut_tail "$tmp/mt.json")
tcut=$(cut_tail "$tmp/mt.txt")
tab "$tmp/mt.json" > "$tmp/mt.tab"
lines=$(wc -l < "$tmp/mt.json")
v=$(grep -c '^violation double-free ' "$tmp/mt.tab")
t=$(grep -c '^==graphcheck== error: double-free' "$tmp/mt.txt")
tbad=$(grep -vc '^==graphcheck== ' "$tmp/mt.txt")
whole=no
[ ! -s "$tmp/jq.err" ] && [ "$(wc -l < "$tmp/mt.tab")" -eq "$lines" ] && whole=yes
diff=$((t - v))
[ $rc -eq 137 ] && [ $whole = yes ] && [ "$v" -gt 0 ] && [ "$tbad" -eq 0 ] && [ $diff -ge 0 ] && [ $diff -le 8 ] &&
	ok "SIGKILL during 8 writing threads: $v JSON records and $t text records, every line whole but a last one cut (JSON: ${jcut:-none}, text: ${tcut:-none}; text is written first: at most one record per thread apart)" ||
	bad "SIGKILL during 8 threads: rc $rc, whole $whole, JSON $v, text $t, foreign text lines $tbad (last line JSON: ${jcut:-whole}, text: ${tcut:-whole})"

# GRAPHCHECK_ON_ERROR=abort: the first record, then the summary, then abort().
rm -f "$tmp/ab.json" "$tmp/ab.txt"
GRAPHCHECK_ON_ERROR=abort GRAPHCHECK_JSON_FILE=$tmp/ab.json GRAPHCHECK_LOG_FILE=$tmp/ab.txt \
	timeout 60 env LD_PRELOAD="$PRE" "$REL" die exit 5 > /dev/null 2> "$tmp/ab.err"
rc=$?
tab "$tmp/ab.json" > "$tmp/ab.tab"
got=$(cut -d' ' -f1-2 "$tmp/ab.tab" | tr '\n' ' ')
js=$(grep '^summary ' "$tmp/ab.tab" | cut -d' ' -f3-)
[ $rc -eq 134 ] && [ "$got" = "start - violation double-free summary - " ] && [ "$js" = "1 0 1 -" ] &&  # written once: abort()'s SIGABRT adds none
	[ "$(tail -n 1 "$tmp/ab.txt")" = "==graphcheck== graphcheck: 1 errors, 0 warnings" ] &&
	grep -q 'aborting on the first error' "$tmp/ab.err" &&
	ok "GRAPHCHECK_ON_ERROR=abort: one record, one summary, then SIGABRT (134)" ||
	bad "GRAPHCHECK_ON_ERROR=abort: rc $rc, lines '$got', summary '$js'"

# GRAPHCHECK_ON_ERROR=abort is about errors: a run whose only record is a leak (a warning)
# ends as without graphcheck, its leak and summary written.
rm -f "$tmp/lw.json"
"$REL" leak-only > "$tmp/native.out" 2>&1
nrc=$?
GRAPHCHECK_ON_ERROR=abort GRAPHCHECK_JSON_FILE=$tmp/lw.json GRAPHCHECK_LOG_FILE=$tmp/lw.txt \
	timeout 60 env LD_PRELOAD="$PRE" "$REL" leak-only > "$tmp/gc.out" 2> "$tmp/lw.err"
rc=$?
tab "$tmp/lw.json" > "$tmp/lw.tab"
got=$(cut -d' ' -f1-4 "$tmp/lw.tab" | tr '\n' ' ')
[ $rc -eq $nrc ] && cmp -s "$tmp/native.out" "$tmp/gc.out" &&
	[ "$got" = "start - - - violation leak-at-exit - - summary - 0 1 " ] &&
	! grep -q 'aborting' "$tmp/lw.err" &&
	ok "GRAPHCHECK_ON_ERROR=abort, only a leak: exit $rc as native, the leak and the summary written" ||
	bad "GRAPHCHECK_ON_ERROR=abort, only a leak: rc $rc (native $nrc), lines '$got'"
finish
