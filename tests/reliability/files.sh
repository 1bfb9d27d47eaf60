#!/bin/sh
# graphcheck's files (issue 12 rows 5, 6, 7): every one (text log, JSON log, trace, summary
# file) is opened the same way: created O_EXCL|O_NOFOLLOW with mode 0600, or appended to only
# when it is a regular file of this user with one link (or a character device); never a
# FIFO (no hang), a symlink, or another user's file (as root: a file chowned to nobody in a
# sticky directory is left untouched, one message, records on stderr). Before each record
# graphcheck checks that its fd still is its file: a program that closes every fd and opens
# its own data file does not get records in it; the log is opened again (or, with no fd
# left, the records go to stderr, said once).
# Usage: sh tests/reliability/files.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

"$REL" plain > "$tmp/native.out" 2> /dev/null
nrc=$?
# run VAR PATH: the plain program with GRAPHCHECK_VAR=PATH; sets grc, msgs, recs_err.
run() {
	timeout 20 env "GRAPHCHECK_$1=$2" LD_PRELOAD="$PRE" "$REL" plain > "$tmp/gc.out" 2> "$tmp/gc.err"
	grc=$?
	msgs=$(grep -c '^graphcheck: ' "$tmp/gc.err")
	recs_err=$(grep -c '^==graphcheck== error: double-free\|^{"type":"violation"' "$tmp/gc.err")
}

# ---- row 5: a FIFO at any path --------------------------------------------------------------
for var in TRACE_FILE LOG_FILE JSON_FILE SUMMARY_FILE; do
	rm -f "$tmp/fifo"; mkfifo "$tmp/fifo"
	run $var "$tmp/fifo"
	[ $grc -eq $nrc ] && cmp -s "$tmp/native.out" "$tmp/gc.out" && [ "$msgs" -eq 1 ] &&
		ok "GRAPHCHECK_$var at a FIFO nobody reads: no hang, same output, one message" ||
		bad "GRAPHCHECK_$var at a FIFO: status $grc (native $nrc; 124 is a hang), $msgs messages"
done

# ---- row 6: created 0600; another user's file, a hard link ---------------------------------
rm -f "$tmp/new.txt" "$tmp/new.json" "$tmp/new.trace"
GRAPHCHECK_LOG_FILE=$tmp/new.txt GRAPHCHECK_JSON_FILE=$tmp/new.json GRAPHCHECK_TRACE_FILE=$tmp/new.trace \
	timeout 20 env LD_PRELOAD="$PRE" "$REL" plain > /dev/null 2>&1
modes=$(stat -c %a "$tmp/new.txt" "$tmp/new.json" "$tmp/new.trace" | tr '\n' ' ')
[ "$modes" = "600 600 600 " ] && ok "new text log, JSON log and trace are mode 0600" ||
	bad "new files' modes: $modes(want 600 each)"
mkdir "$tmp/sticky" && chmod 1777 "$tmp/sticky"
if [ "$(id -u)" = 0 ] && id nobody > /dev/null 2>&1; then
	for var in LOG_FILE JSON_FILE TRACE_FILE; do
		f=$tmp/sticky/v.$var
		printf 'x\n' > "$f"; chown nobody "$f"; chmod 666 "$f"
		run $var "$f"
		# on stderr: the double free's text record, and with the JSON log refused its 2
		# JSON records (the double free, the leak); a refused trace goes nowhere
		want=1; [ $var = JSON_FILE ] && want=3
		[ "$(cat "$f")" = x ] && [ "$msgs" -eq 1 ] && [ "$recs_err" -eq $want ] &&
			! grep -q '"type":"event"' "$tmp/gc.err" &&
			grep -q 'belongs to another user' "$tmp/gc.err" && cmp -s "$tmp/native.out" "$tmp/gc.out" &&
			ok "GRAPHCHECK_$var at nobody's file in a sticky dir, as root: untouched, one message, records on stderr ($recs_err)" ||
			bad "GRAPHCHECK_$var at nobody's file: content '$(head -c 40 "$f")', $msgs messages, $recs_err records on stderr"
	done
else
	echo "skip: the other user's file needs root (uid $(id -u))"
fi
printf 'mine\n' > "$tmp/mine"; ln "$tmp/mine" "$tmp/sticky/hard"
run LOG_FILE "$tmp/sticky/hard"
[ "$(cat "$tmp/mine")" = mine ] && [ "$msgs" -eq 1 ] && [ "$recs_err" -eq 1 ] &&
	ok "a log path that is a second hard link of a file: not written, one message, records on stderr" ||
	bad "a hard link at the log path: content '$(head -c 40 "$tmp/mine")', $msgs messages, $recs_err records on stderr"
printf 'kept\n' > "$tmp/own.txt"
run LOG_FILE "$tmp/own.txt"
[ "$(head -n 1 "$tmp/own.txt")" = kept ] && [ "$(grep -c '^==graphcheck== error: double-free' "$tmp/own.txt")" -eq 1 ] && [ "$msgs" -eq 0 ] &&
	ok "an existing log file of this user is appended to" || bad "an existing own log file: $msgs messages, not appended"

# The JSON log, or the trace, at the log file's path (GRAPHCHECK_* set directly; the launcher
# refuses it): the text log keeps the file, no JSON line among it, one message.
for row in "JSON_FILE:the JSON log '.*' is the log file" "TRACE_FILE:the trace file '.*' is a log file"; do
	var=${row%%:*} said=${row#*:}
	rm -f "$tmp/both.log"
	timeout 20 env GRAPHCHECK_LOG_FILE="$tmp/both.log" "GRAPHCHECK_$var=$tmp/both.log" \
		LD_PRELOAD="$PRE" "$REL" plain > "$tmp/gc.out" 2> "$tmp/gc.err"
	grc=$?
	msgs=$(grep -c "^graphcheck: $said" "$tmp/gc.err")
	[ $grc -eq $nrc ] && cmp -s "$tmp/native.out" "$tmp/gc.out" && [ "$msgs" -eq 1 ] &&
		[ "$(grep -c '^==graphcheck== error: double-free' "$tmp/both.log")" -eq 1 ] &&
		[ "$(grep -c '^{' "$tmp/both.log")" -eq 0 ] &&
		ok "GRAPHCHECK_$var = GRAPHCHECK_LOG_FILE: the text log alone in it, one message, same output" ||
		bad "GRAPHCHECK_$var and the text log at one path: status $grc (native $nrc), $msgs messages, $(grep -c '^{' "$tmp/both.log") JSON lines in it"
done

# ---- row 7: the program closes graphcheck's fds and opens its own file -----------------------
for mode in one fill; do
	rm -f "$tmp/c.txt" "$tmp/c.json" "$tmp/data"
	"$REL" close-fds "$tmp/data.native" $mode > "$tmp/native.out" 2> /dev/null
	GRAPHCHECK_LOG_FILE=$tmp/c.txt GRAPHCHECK_JSON_FILE=$tmp/c.json \
		timeout 20 env LD_PRELOAD="$PRE" "$REL" close-fds "$tmp/data" $mode > "$tmp/gc.out" 2> "$tmp/gc.err"
	grc=$?
	data=$(cat "$tmp/data" | tr '\n' '|')
	t=$(cat "$tmp/c.txt" "$tmp/gc.err" | grep -c '^==graphcheck== error: double-free')
	j=$(cat "$tmp/c.json" "$tmp/gc.err" | grep -c '^{"type":"violation".*"double-free"')
	intext=$(grep -c '^==graphcheck== error: double-free' "$tmp/c.txt")
	msgs=$(grep -c '^graphcheck: ' "$tmp/gc.err")
	[ $grc -eq 0 ] && cmp -s "$tmp/native.out" "$tmp/gc.out" && [ "$data" = "data line 1|data line 2|" ] &&
		[ "$t" -eq 3 ] && [ "$j" -eq 3 ] && [ "$msgs" -le 2 ] &&
		ok "closes fds >= 3, opens its data file ($mode): the data file holds only its 2 lines; 3 text and 3 JSON records ($intext text in the log file, $msgs messages)" ||
		bad "closes fds ($mode): status $grc, data '$data', $t text and $j JSON records of 3, $msgs messages"
done
finish
