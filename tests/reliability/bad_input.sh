#!/bin/sh
# Bad input: every GRAPHCHECK_* option of README's table given bad values while preloaded:
# one clear warning line on stderr each (naming the variable, saying the default is used),
# and the program runs on with the same output and exit status, checked with the default.
# Log paths that cannot be used (missing directory, a file as a directory, a directory, an
# unwritable file, /dev/full): one clear message on stderr, the program runs on, and the
# records go to stderr instead. Usage: sh tests/reliability/bad_input.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"

"$REL" plain > "$tmp/native.out" 2> "$tmp/native.err"
nrc=$?
long=$(printf "%05000d" 0 | tr 0 x)  # longer than GC_PATH_MAX (4096)

# run VAR=VALUE...: the program preloaded with these settings; sets grc, out, err.
run() {
	rm -f "$tmp/log.txt" "$tmp/log.json"
	timeout 60 env "$@" LD_PRELOAD="$PRE" "$REL" plain > "$tmp/gc.out" 2> "$tmp/gc.err"
	grc=$?
}
same() { [ $grc -eq $nrc ] && cmp -s "$tmp/native.out" "$tmp/gc.out"; }

# ---- one bad value at a time ---------------------------------------------------------------
# bad_value NAME VALUE CHECK: the warning is the only stderr line; the run uses the default,
# which CHECK (a shell test on $tmp/log.txt) confirms.
bad_value() {
	name=$1 value=$2 check=$3
	if [ "$name" = LOG_FILE ]; then
		run "GRAPHCHECK_$name=$value"
		warn=$(grep -c "^graphcheck: GRAPHCHECK_$name='" "$tmp/gc.err")
		notes=$(grep -c '^graphcheck: ' "$tmp/gc.err")
		recs=$(grep -c '^==graphcheck== error: double-free' "$tmp/gc.err")
		shown="$name=<${#value} chars>"
		same && [ "$warn" -eq 1 ] && [ "$notes" -eq 1 ] && [ "$recs" -eq 1 ] &&
			ok "GRAPHCHECK_$shown: one warning line, the records on stderr (the default), same output and exit" ||
			bad "GRAPHCHECK_$shown: rc $nrc/$grc, $warn warnings of $notes notes, $recs records on stderr"
		return
	fi
	run "GRAPHCHECK_$name=$value" GRAPHCHECK_LOG_FILE="$tmp/log.txt"
	lines=$(wc -l < "$tmp/gc.err")
	line=$(head -n 1 "$tmp/gc.err")
	case ${#value} in [0-9] | [0-9][0-9]) shown="$name='$value'" ;; *) shown="$name=<${#value} chars>" ;; esac
	case $line in
	"graphcheck: GRAPHCHECK_$name='"*"; using "*) good_line=1 ;;
	*) good_line=0 ;;
	esac
	if same && [ "$lines" -eq 1 ] && [ $good_line -eq 1 ] && eval "$check"; then
		ok "GRAPHCHECK_$shown: one warning line, default used, same output and exit"
	else
		bad "GRAPHCHECK_$shown: rc $nrc/$grc, $lines stderr lines: $(head -c 300 "$tmp/gc.err")"
	fi
}
# What the defaults give with `rel_prog plain`: one double free, one leak, 8-frame backtraces.
has_records='grep -q "^==graphcheck== error: double-free" "$tmp/log.txt" && grep -q "^==graphcheck== warning: leak-at-exit" "$tmp/log.txt" && [ "$(tail -n 1 "$tmp/log.txt")" = "==graphcheck== graphcheck: 1 errors, 1 warnings" ]'
no_file='[ ! -e "$tmp/log.json" ] && [ ! -e "$tmp/trace" ] && [ ! -e "$tmp/summary" ]'

bad_value LOG_FILE "$tmp/$long" ""
bad_value JSON_FILE "$tmp/$long" "$has_records && $no_file"
bad_value SUMMARY_FILE "$tmp/$long" "$has_records && $no_file"
bad_value TRACE_FILE "$tmp/$long" "$has_records && $no_file"
for v in abc 65 -1 "" 8x 99999999999999999999; do
	bad_value BACKTRACE_DEPTH "$v" "$has_records"
done
for v in lots 65 -3; do
	bad_value ALLOC_BACKTRACE_DEPTH "$v" "$has_records"
done
for v in explode abort2 "" 1; do
	bad_value ON_ERROR "$v" "$has_records"  # the default, continue: the program goes on
done
for v in maybe 2 ""; do
	bad_value LEAK_CHECK "$v" "$has_records"  # the default, 1: the leak is reported
done
for v in -5 100000001 1e3 many; do
	bad_value HISTORY "$v" "$has_records"
done
for v in 3 always; do
	bad_value SIGNAL_SUMMARY "$v" "$has_records"  # the default, 1
done
for v in 2 loud; do
	bad_value VERBOSE "$v" "$has_records"  # the default, 0: no option list (1 stderr line)
done

# All at once: one warning line for each of the eleven.
run GRAPHCHECK_LOG_FILE="$tmp/$long" GRAPHCHECK_JSON_FILE="$tmp/$long" GRAPHCHECK_SUMMARY_FILE="$tmp/$long" \
	GRAPHCHECK_TRACE_FILE="$tmp/$long" GRAPHCHECK_BACKTRACE_DEPTH=x GRAPHCHECK_ALLOC_BACKTRACE_DEPTH=x \
	GRAPHCHECK_ON_ERROR=x GRAPHCHECK_LEAK_CHECK=x GRAPHCHECK_HISTORY=x GRAPHCHECK_VERBOSE=x \
	GRAPHCHECK_SIGNAL_SUMMARY=x
n=$(grep -c "^graphcheck: GRAPHCHECK_[A-Z_]*='.*; using " "$tmp/gc.err")
names=$(sed -n "s/^graphcheck: GRAPHCHECK_\([A-Z_]*\)='.*/\1/p" "$tmp/gc.err" | sort -u | wc -l)
same && [ "$n" -eq 11 ] && [ "$names" -eq 11 ] && [ "$(grep -c '^graphcheck: ' "$tmp/gc.err")" -eq 11 ] &&
	ok "all eleven options bad at once: eleven warning lines, one per option, same output and exit" ||
	bad "all eleven bad: $n warning lines for $names options; rc $nrc/$grc"

# A value with a newline (or any control character) is still one warning line.
run "GRAPHCHECK_ON_ERROR=$(printf 'abort\nx')" GRAPHCHECK_LOG_FILE="$tmp/log.txt"
lines=$(wc -l < "$tmp/gc.err")
if same && [ "$lines" -eq 1 ]; then
	ok "GRAPHCHECK_ON_ERROR='abort<newline>x': one warning line"
else
	bug "GRAPHCHECK_ON_ERROR='abort<newline>x': the warning takes $lines lines (options.c warn() prints the value raw: a newline or escape sequence in it reaches stderr as is): $(od -c "$tmp/gc.err" | head -3 | tr -s ' ' | tr '\n' ' ')"
fi

# ---- log paths that cannot be used -----------------------------------------------------------
mkdir -p "$tmp/adir"
: > "$tmp/afile"
ln -s "$tmp/afile" "$tmp/alink"
paths="$tmp/nodir/x.log $tmp/afile/x.log $tmp/adir /proc/version /dev/full $tmp/alink"
if [ "$(id -u)" -ne 0 ]; then
	mkdir -p "$tmp/ro" && chmod 555 "$tmp/ro"
	paths="$paths $tmp/ro/x.log"
fi
# path_case VAR PATH: one message on stderr naming the path, same output and exit, and the
# records on stderr (text records for LOG_FILE; JSON lines for JSON_FILE).
path_case() {
	var=$1 p=$2
	if [ "$var" = LOG_FILE ]; then
		run GRAPHCHECK_LOG_FILE="$p" GRAPHCHECK_JSON_FILE="$tmp/log.json"
		recs=$(grep -c '^==graphcheck== error: double-free' "$tmp/gc.err")
		sumline=$(grep -c '^==graphcheck== graphcheck: 1 errors, 1 warnings$' "$tmp/gc.err")
		inplace=$(jq -r 'select(.type == "violation" and .rule == "double-free") | .rule' "$tmp/log.json" 2>/dev/null | wc -l)
	else
		run GRAPHCHECK_JSON_FILE="$p" GRAPHCHECK_LOG_FILE="$tmp/log.txt"
		recs=$(grep '^{' "$tmp/gc.err" | jq -r 'select(.type == "violation" and .rule == "double-free") | .rule' 2>/dev/null | wc -l)
		sumline=$(grep '^{' "$tmp/gc.err" | jq -r 'select(.type == "summary") | .errors' 2>/dev/null | wc -l)
		inplace=$(grep -c '^==graphcheck== error: double-free' "$tmp/log.txt")
	fi
	notes=$(grep -c '^graphcheck: ' "$tmp/gc.err")
	note=$(grep '^graphcheck: ' "$tmp/gc.err" | head -n 1)
	case $note in *"$p"*"writing to stderr instead"*) named=1 ;; *) named=0 ;; esac
	# a link says so (O_NOFOLLOW's bare errno read "Too many levels of symbolic links")
	case $p:$note in *alink:*"is a symbolic link, which graphcheck does not follow"*) ;; *alink:*) named=0 ;; esac
	if same && [ "$notes" -eq 1 ] && [ $named -eq 1 ] && [ "$recs" -eq 1 ] && [ "$sumline" -eq 1 ] && [ "$inplace" -eq 1 ]; then
		ok "GRAPHCHECK_$var=$p: one message ('${note#graphcheck: }'), records on stderr, the other log intact"
	else
		bad "GRAPHCHECK_$var=$p: rc $nrc/$grc, $notes messages ('$note'), $recs records and $sumline summaries on stderr, $inplace in the other log"
	fi
}
for p in $paths; do
	path_case LOG_FILE "$p"
	path_case JSON_FILE "$p"
done
# The trace: one message when it cannot be opened; the program runs on.
for p in "$tmp/nodir/t.trace" "$tmp/adir"; do
	run GRAPHCHECK_TRACE_FILE="$p" GRAPHCHECK_LOG_FILE="$tmp/log.txt"
	notes=$(grep -c '^graphcheck: ' "$tmp/gc.err")
	same && [ "$notes" -eq 1 ] && grep -q "trace '$p'" "$tmp/gc.err" && eval "$has_records" &&
		ok "GRAPHCHECK_TRACE_FILE=$p: one message, no trace, records as usual" ||
		bad "GRAPHCHECK_TRACE_FILE=$p: rc $nrc/$grc, $notes messages: $(head -c 200 "$tmp/gc.err")"
done
# A trace that opens but cannot be written: one message, at the first failed write.
run GRAPHCHECK_TRACE_FILE=/dev/full GRAPHCHECK_LOG_FILE="$tmp/log.txt"
notes=$(grep -c '^graphcheck: ' "$tmp/gc.err")
same && eval "$has_records" && [ "$notes" -eq 1 ] && grep -q "writing the trace '/dev/full' failed" "$tmp/gc.err" &&
	ok "GRAPHCHECK_TRACE_FILE=/dev/full: one message, the program runs on, records as usual" ||
	bad "GRAPHCHECK_TRACE_FILE=/dev/full: rc $nrc/$grc, $notes messages: $(head -c 200 "$tmp/gc.err")"
# A summary file that cannot be opened: one message at start-up, records as usual.
run GRAPHCHECK_SUMMARY_FILE="$tmp/nodir/summary" GRAPHCHECK_LOG_FILE="$tmp/log.txt"
notes=$(grep -c '^graphcheck: ' "$tmp/gc.err")
same && eval "$has_records" && [ "$notes" -eq 1 ] && grep -q "cannot open the summary file" "$tmp/gc.err" &&
	ok "GRAPHCHECK_SUMMARY_FILE in a missing directory: one message, records as usual" ||
	bad "GRAPHCHECK_SUMMARY_FILE in a missing directory: rc $nrc/$grc, $notes messages: $(head -c 200 "$tmp/gc.err")"
# A refused cuGraphAddNode with NULL params (issue 12 row 18): an api-error naming it, not
# silence; the program's output is its own.
"$REL" addnode-refused > "$tmp/native.out" 2>&1
rm -f "$tmp/an.json"
GRAPHCHECK_JSON_FILE="$tmp/an.json" GRAPHCHECK_LOG_FILE=/dev/null LD_PRELOAD="$PRE" \
	"$REL" addnode-refused > "$tmp/gc.out" 2>&1
got=$(jq -r 'select(.type == "violation") | "\(.rule) \(.call) \(.result)"' "$tmp/an.json" 2>/dev/null)
cmp -s "$tmp/native.out" "$tmp/gc.out" && [ "$got" = "api-error cuGraphAddNode_v2 1" ] &&
	ok "cuGraphAddNode with NULL params, refused: one api-error naming it" ||
	bad "cuGraphAddNode with NULL params: records '$got'"
# Strings from outside in messages stay on their line and mean nothing to a terminal (a
# newline, ESC, a C1 control, a byte that is not UTF-8: \n, \x1b, \xc2\x9b, \xff): the
# verbose options' paths, a bad value, a suppression file's text, the launcher's refusals.
# They were written raw: a forged "==graphcheck== error:" line, a terminal's colours.
nl='
'
esc=$(printf '\033') c1=$(printf '\302\233') ff=$(printf '\377')
printf '{\n x\n graphcheck:%s[31mdouble-free\n}\n' "$esc" > "$tmp/esc.supp"
"$REL" plain > "$tmp/native.out" 2> "$tmp/native.err"
nrc=$?
run GRAPHCHECK_VERBOSE=1 GRAPHCHECK_TRACE_FILE="$tmp/t${nl}==graphcheck== error: forged$esc" \
	GRAPHCHECK_ON_ERROR="x$c1${ff}" GRAPHCHECK_SUPPRESSIONS="$tmp/esc.supp" GRAPHCHECK_LOG_FILE=/dev/null
if same && ! grep -q "^==graphcheck== error: forged" "$tmp/gc.err" && ! grep -q "$esc" "$tmp/gc.err" &&
	! grep -q "$c1" "$tmp/gc.err" && ! grep -q "$ff" "$tmp/gc.err" &&
	grep -qF 'GRAPHCHECK_TRACE_FILE=' "$tmp/gc.err" && grep -qF '\n==graphcheck== error: forged\x1b' "$tmp/gc.err" &&
	grep -qF "GRAPHCHECK_ON_ERROR='x\xc2\x9b\xff'" "$tmp/gc.err" && grep -qF "'graphcheck:\x1b[31mdouble-free'" "$tmp/gc.err"; then
	ok "outside strings in the object's messages: escaped, on their lines"
else
	bad "outside strings in the object's messages: $(cat -v "$tmp/gc.err" | head -c 600)"
fi
if [ -x "$BUILD/graphcheck" ]; then
	"$BUILD/graphcheck" --log-file="/nonexistent/x${nl}==graphcheck== error: forged$esc" -- true > /dev/null 2> "$tmp/l.err"
	[ "$(wc -l < "$tmp/l.err")" = 1 ] && ! grep -q "$esc" "$tmp/l.err" && grep -qF 'x\n==graphcheck== error: forged\x1b' "$tmp/l.err" &&
		ok "an outside string in the launcher's refusal: escaped, one line" ||
		bad "the launcher's refusal: $(cat -v "$tmp/l.err")"
fi
finish
