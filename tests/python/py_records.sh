#!/bin/sh
# Python programs (issue 18): records whose first frame is the script's own line. Through
# the stand-in driver, Python's ctypes commits one misuse per mode of misuse.py; each
# interpreter found (python3, python3.10 .. python3.13) is tried. Asserted: the text log's
# python block and the JSON log's py_backtrace name the script's file and line exactly (for
# the call, the allocation and the free), graphcheck-report's text and SARIF show that line,
# records fold by it, ctypes.CDLL (which releases the GIL around the call: its frames are read
# as memory, interpose/pystack.c) the same lines for the call, the allocation and the free, on
# the main thread and another, a C program gets no Python block, the clean run nothing.
# pyenv's interpreters (/root/.pyenv/versions/3.1[0-3]*) are tried too, one per version.
# Usage (from the repository root): sh tests/python/py_records.sh BUILD_DIR
set -u
B=${1:-build}
LIB=$(cd "$B" && pwd)/libgraphcheck.so
FAKE=$(cd "$B" && pwd)/fakecuda/libcuda.so.1
R=$B/graphcheck-report
SCRIPT=$(pwd)/tests/python/misuse.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
unset DEBUGINFOD_URLS
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }

# The report on a log the writer made under CPython 3.11 (tests/python/double_free.jsonl,
# misuse.py double-free): also in sanitizer builds, where python3 cannot preload graphcheck.
"$R" tests/python/double_free.jsonl > "$tmp/r.txt" 2>&1
"$R" --format=sarif tests/python/double_free.jsonl > "$tmp/r.sarif" 2> /dev/null
got=$(jq -r '.runs[0].results[0].locations[0].physicalLocation | "\(.artifactLocation.uri) \(.region.startLine)"' "$tmp/r.sarif" 2> /dev/null)
grep -E "^double-free +error +1 +" "$tmp/r.txt" | grep -qF "/work/wt/python/tests/python/misuse.py:33 in double_free" &&
grep -A1 -F "allocated at (python):" "$tmp/r.txt" | grep -qF "#0 /work/wt/python/tests/python/misuse.py:26 in alloc" &&
[ "$got" = "file:///work/wt/python/tests/python/misuse.py 33" ] &&
	ok "report of a stored Python log: first site, allocation and SARIF location at the script's lines" ||
	bad "report of the stored log: '$got'; $(head -c 600 "$tmp/r.txt")"

PYTHON_OK=1
case "$B" in *san*)
	echo "skip the Python runs: a sanitizer's runtime is not in python3 (LD_PRELOAD of this build fails there)"
	PYTHON_OK= ;;
esac

line_of() { grep -n "$1" "$SCRIPT" | head -1 | cut -d: -f1; }
ALLOC=$(line_of "# ALLOC-LINE")
FIRST=$(line_of "# FIRST-FREE-LINE")
DF=$(line_of "# BUG-LINE double-free")
FU=$(line_of "# BUG-LINE free-unknown")
FOLD2=$(line_of "# FOLD-OTHER-LINE")
UNI=$(line_of "# BUG-LINE unicode")
HELD=$(line_of "# BUG-LINE held")

# run PY MODE [cdll]: logs in $tmp/MODE.txt and $tmp/MODE.json; PYF: GRAPHCHECK_PYTHON_FRAMES,
# LEAKF: GRAPHCHECK_LEAK_CHECK
run() {
	py=$1 mode=$2
	shift
	rm -f "$tmp/$mode.txt" "$tmp/$mode.json"
	GRAPHCHECK_LOG_FILE=$tmp/$mode.txt GRAPHCHECK_JSON_FILE=$tmp/$mode.json LD_PRELOAD=$LIB \
		GRAPHCHECK_PYTHON_FRAMES=${PYF:-auto} GRAPHCHECK_LEAK_CHECK=${LEAKF:-1} \
		timeout 60 "$py" "$SCRIPT" "$FAKE" "$@" > "$tmp/$mode.out" 2>&1 ||
		echo "  ($py $mode exited $?: $(head -c 300 "$tmp/$mode.out"))"
}
# jqv FILE FILTER: the filter over the first violation
jqv() { jq -r "select(.type==\"violation\") | $2" "$1" 2> /dev/null | head -1; }

PYS= VERS=
[ -n "$PYTHON_OK" ] && for p in python3 /usr/bin/python3.10 /usr/bin/python3.11 /usr/bin/python3.12 /usr/bin/python3.13 \
	/root/.pyenv/versions/3.10*/bin/python3 /root/.pyenv/versions/3.11*/bin/python3 \
	/root/.pyenv/versions/3.12*/bin/python3 /root/.pyenv/versions/3.13*/bin/python3; do
	command -v "$p" > /dev/null 2>&1 && "$p" -c 'import ctypes' 2> /dev/null || continue
	v=$("$p" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	case " $VERS " in *" $v "*) continue ;; esac  # one interpreter a version
	PYS="$PYS $p" VERS="$VERS $v"
done
[ -n "$PYS" ] || echo "skip the Python runs: no python3 with ctypes, or a sanitizer build"
[ -n "$PYTHON_OK" ] && for m in 3.10 3.11 3.12 3.13; do
	case " $VERS " in *" $m "*) ;; *) echo "note: no python$m here" ;; esac
done

for py in $PYS; do
	v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	t="$py ($v)"

	# ctypes.PyDLL holds the GIL: the C API's reading (api), whose stacks the memory reads
	# below must equal.
	PYF=api; run "$py" double-free; PYF=
	want="#0 $SCRIPT:$DF in double_free"
	grep -qF -- "$want" "$tmp/double-free.txt" &&
	grep -A1 -F "==graphcheck==   python:" "$tmp/double-free.txt" | grep -qF -- "$want" &&
	grep -qF "python: $SCRIPT:$ALLOC in alloc" "$tmp/double-free.txt" &&
	grep -qF "python: $SCRIPT:$FIRST in double_free" "$tmp/double-free.txt" &&
		ok "$t double-free: text log's python block starts at $SCRIPT:$DF; allocated at :$ALLOC, freed at :$FIRST" ||
		bad "$t double-free text log: $(head -c 1500 "$tmp/double-free.txt")"
	got=$(jqv "$tmp/double-free.json" '[.rule, .py_backtrace[0].file, .py_backtrace[0].line, .py_backtrace[0].function, .alloc.py_backtrace[0].line, .alloc.free_py_backtrace[0].line, (.py_backtrace|length)] | map(tostring) | join(" ")')
	[ "$got" = "double-free $SCRIPT $DF double_free $ALLOC $FIRST 3" ] &&
		ok "$t double-free: JSON py_backtrace parses, first frame $SCRIPT:$DF, alloc :$ALLOC, free :$FIRST" ||
		bad "$t double-free JSON: got '$got'"
	"$R" "$tmp/double-free.json" > "$tmp/r.txt" 2>&1
	grep -E "^double-free +error +1 +" "$tmp/r.txt" | grep -qF "$SCRIPT:$DF in double_free" &&
		ok "$t graphcheck-report text: first site $SCRIPT:$DF in double_free" ||
		bad "$t report text: $(head -c 600 "$tmp/r.txt")"
	"$R" --format=sarif "$tmp/double-free.json" > "$tmp/r.sarif" 2> /dev/null
	got=$(jq -r '.runs[0].results[0].locations[0].physicalLocation | "\(.artifactLocation.uri) \(.region.startLine)"' "$tmp/r.sarif" 2> /dev/null)
	[ "$got" = "file://$SCRIPT $DF" ] && ok "$t SARIF location: $got" || bad "$t SARIF location: '$got'"

	run "$py" free-unknown
	got=$(jqv "$tmp/free-unknown.json" '"\(.rule) \(.py_backtrace[0].line) \(.py_backtrace[0].function)"')
	[ "$got" = "free-unknown $FU free_unknown" ] && ok "$t free-unknown at :$FU" || bad "$t free-unknown: '$got'"

	# Live at exit, by default: one information line, no record (Python does not free
	# every object at exit); GRAPHCHECK_LEAK_CHECK=full: the record, at the allocation's line.
	run "$py" leak
	got=$(jq -r 'select(.type == "live_at_exit") | "\(.count) \(.bytes)"' "$tmp/leak.json" 2> /dev/null)
	[ "$got" = "1 8192" ] && ! grep -q '"violation"' "$tmp/leak.json" &&
	grep -q "^==graphcheck== live at exit (information): 1 stream-ordered or graph allocation (8192 bytes) still live when this Python program ended" "$tmp/leak.txt" &&
	grep -q "0 errors, 0 warnings" "$tmp/leak.txt" &&
		ok "$t live at exit by default: the information line (text and JSON), no record" ||
		bad "$t live at exit: '$got'; $(head -c 600 "$tmp/leak.txt")"
	LEAKF=full; run "$py" leak; LEAKF=
	got=$(jqv "$tmp/leak.json" '"\(.rule) \(.leaks[0].py_backtrace[0].file):\(.leaks[0].py_backtrace[0].line)"')
	"$R" --fail-on=never "$tmp/leak.json" > "$tmp/r.txt" 2>&1
	[ "$got" = "leak-at-exit $SCRIPT:$ALLOC" ] && grep -E "^leak-at-exit" "$tmp/r.txt" | grep -qF "$SCRIPT:$ALLOC in alloc" &&
		ok "$t leak-at-exit: allocated at $SCRIPT:$ALLOC (log and report)" ||
		bad "$t leak: '$got'; $(head -c 400 "$tmp/r.txt")"

	run "$py" fold
	"$R" --format=json "$tmp/fold.json" > "$tmp/r.json" 2> /dev/null
	got=$(jq -r '[.entries[] | "\(.count)@\(.site.line)"] | join(" ")' "$tmp/r.json" 2> /dev/null)
	[ "$got" = "3@$FU 1@$FOLD2" ] && ok "$t folding by Python line: $got" || bad "$t folding: '$got' (want 3@$FU 1@$FOLD2)"

	# the whole stacks the C API gives, to compare with those read as memory below
	api_df=$(jqv "$tmp/double-free.json" '[.py_backtrace, .alloc.py_backtrace, .alloc.free_py_backtrace] | tojson')
	# The default (auto) reads a thread holding the GIL as memory too: the same stacks.
	run "$py" double-free
	got=$(jqv "$tmp/double-free.json" '[.py_backtrace, .alloc.py_backtrace, .alloc.free_py_backtrace] | tojson')
	[ -n "$api_df" ] && [ "$got" = "$api_df" ] &&
		ok "$t GIL held, read as memory (auto): the call's, allocation's and free's stacks equal the C API's" ||
		bad "$t auto with the GIL held: '$got' vs '$api_df'"
	PYF=off; run "$py" double-free; PYF=
	got=$(jqv "$tmp/double-free.json" '"\(.rule) \(.py_backtrace) \(.alloc.py_backtrace)"')
	[ "$got" = "double-free null null" ] && ! grep -q "python:" "$tmp/double-free.txt" &&
		ok "$t GRAPHCHECK_PYTHON_FRAMES=off: the record, no Python frames" ||
		bad "$t off: '$got'; $(grep -m2 "python:" "$tmp/double-free.txt")"

	PYF=api; run "$py" thread; PYF=
	got=$(jqv "$tmp/thread.json" '"\(.py_backtrace[0].line) \(.py_backtrace[0].function)"')
	[ "$got" = "$DF double_free" ] && ok "$t a Python thread's record: first frame :$DF" || bad "$t thread: '$got'"
	api_th=$(jqv "$tmp/thread.json" '.py_backtrace | tojson')

	# ctypes.CDLL releases the GIL around the call: the same lines, read as memory.
	run "$py" double-free cdll
	got=$(jqv "$tmp/double-free.json" '[.rule, .py_backtrace[0].file, .py_backtrace[0].line, .py_backtrace[0].function, .alloc.py_backtrace[0].line, .alloc.free_py_backtrace[0].line, (.py_backtrace|length), .py_note] | map(tostring) | join(" ")')
	[ "$got" = "double-free $SCRIPT $DF double_free $ALLOC $FIRST 3 null" ] &&
	grep -A1 -F "==graphcheck==   python:" "$tmp/double-free.txt" | grep -qF -- "#0 $SCRIPT:$DF in double_free" &&
	grep -qF "python: $SCRIPT:$ALLOC in alloc" "$tmp/double-free.txt" &&
	! grep -q "GIL not held" "$tmp/double-free.txt" &&
		ok "$t ctypes.CDLL (GIL released): first frame $SCRIPT:$DF, alloc :$ALLOC, free :$FIRST, 3 frames, no note" ||
		bad "$t CDLL: JSON '$got'; text $(head -c 800 "$tmp/double-free.txt")"
	got=$(jqv "$tmp/double-free.json" '[.py_backtrace, .alloc.py_backtrace, .alloc.free_py_backtrace] | tojson')
	[ -n "$api_df" ] && [ "$got" = "$api_df" ] && ok "$t ctypes.CDLL: the call's, allocation's and free's stacks equal the C API's" ||
		bad "$t CDLL stacks differ from the API's: '$got' vs '$api_df'"

	run "$py" thread cdll
	got=$(jqv "$tmp/thread.json" '.py_backtrace | tojson')
	[ -n "$api_th" ] && [ "$got" = "$api_th" ] && case $got in *"\"line\":$DF,"*) true ;; *) false ;; esac &&
		ok "$t ctypes.CDLL on a Python thread: the C API's stack, first frame :$DF" ||
		bad "$t CDLL thread: '$got' vs '$api_th'"

	run "$py" fold cdll
	"$R" --format=json "$tmp/fold.json" > "$tmp/r.json" 2> /dev/null
	got=$(jq -r '[.entries[] | "\(.count)@\(.site.line)"] | join(" ")' "$tmp/r.json" 2> /dev/null)
	[ "$got" = "3@$FU 1@$FOLD2" ] && ok "$t ctypes.CDLL folding by Python line: $got" || bad "$t CDLL folding: '$got' (want 3@$FU 1@$FOLD2)"

	# A non-ASCII function name (UCS-2 text) and a long location entry: as the API reads them.
	PYF=api; run "$py" unicode; PYF=
	api_u=$(jqv "$tmp/unicode.json" '.py_backtrace | tojson')
	run "$py" unicode cdll
	got=$(jqv "$tmp/unicode.json" '.py_backtrace | tojson')
	want=$(jqv "$tmp/unicode.json" '"\(.py_backtrace[0].function) \(.py_backtrace[0].line)"')
	[ -n "$api_u" ] && [ "$got" = "$api_u" ] && [ "$want" = "二重解放 $UNI" ] &&
		ok "$t ctypes.CDLL, non-ASCII function and a call past column 128: the C API's stack, 二重解放 :$UNI" ||
		bad "$t unicode: '$got' vs '$api_u' ($want)"

	# --gen-suppressions for a Python record: the innermost native frame (ctypes' libffi
	# here), "..." for the interpreter's (alike for every call a script makes), then the
	# script's lines as src: lines; pasted into a
	# file it silences its own record, in the object and the report, not the unicode mode's
	# (another line of the script): the entry of native frames alone silenced every Python
	# double free.
	export GRAPHCHECK_GEN_SUPPRESSIONS=1; run "$py" double-free cdll; unset GRAPHCHECK_GEN_SUPPRESSIONS
	sed -n '/^{$/,/^}$/p' "$tmp/double-free.txt" > "$tmp/py.supp"
	grep -qx '   \.\.\.' "$tmp/py.supp" && grep -qx "   src:\*/misuse.py:$DF" "$tmp/py.supp" &&
	[ "$(grep -c '^   fun:\|^   obj:' "$tmp/py.supp")" = 1 ] &&
		ok "$t generated entry: the innermost native frame, ... and src:*/misuse.py:$DF" ||
		bad "$t generated entry: $(tr '\n' ' ' < "$tmp/py.supp")"
	export GRAPHCHECK_SUPPRESSIONS=$tmp/py.supp
	run "$py" double-free cdll
	run "$py" unicode cdll
	unset GRAPHCHECK_SUPPRESSIONS
	own=$(grep -c '"type":"violation"' "$tmp/double-free.json")
	other=$(grep -c '"type":"violation"' "$tmp/unicode.json")
	"$R" --suppressions="$tmp/py.supp" "$tmp/unicode.json" > /dev/null 2>&1
	rrc=$?
	[ "$own" = 0 ] && grep -q ', 1 suppressed' "$tmp/double-free.txt" && [ "$other" = 1 ] && [ "$rrc" = 1 ] &&
		ok "$t the pasted entry silences its own record, not another line's (object and report)" ||
		bad "$t pasted Python entry: own records $own, other line's $other, report status $rrc"

	# A held error (a 201 without a current context, reported at the thread's next call)
	# from 12 calls deep: its record has the script's line and native frames too (its site
	# keeps the Python frames first: cut to 8 frames in all, it kept none of the native ones,
	# which suppressions and the repeats need).
	export FAKECUDA_STRICT_CONTEXT=1; run "$py" held-deep; unset FAKECUDA_STRICT_CONTEXT
	grep -q "^==graphcheck== error: api-error in cuMemAllocAsync (returned 201" "$tmp/held-deep.txt" &&
	grep -q "#0 $SCRIPT:$HELD in held_deep" "$tmp/held-deep.txt" &&
	grep -A1 '^==graphcheck==   native:' "$tmp/held-deep.txt" | grep -q '#0 0x' &&
		ok "$t a held 201 from 12 calls deep: the script's line :$HELD and native frames" ||
		bad "$t held 201: $(head -c 900 "$tmp/held-deep.txt")"

	run "$py" clean
	[ ! -s "$tmp/clean.txt" ] || grep -q "0 errors, 0 warnings" "$tmp/clean.txt" &&
		! grep -q '"violation"' "$tmp/clean.json" && ok "$t clean twin: no record" ||
		bad "$t clean: $(head -c 400 "$tmp/clean.txt")"
done

# A C program: records, no Python block.
PRE=$LIB
case "$B" in *asan*)  # as tests/lib.sh: the sanitizer's runtime first
	PRE="$(${CC:-gcc} -print-file-name=libasan.so):$LIB"
	export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 ;;
esac
GRAPHCHECK_LOG_FILE=$tmp/c.txt GRAPHCHECK_JSON_FILE=$tmp/c.json LD_PRELOAD=$PRE "$B/fakecuda/prog_linked" seed > /dev/null 2>&1
n=$(grep -c '"violation"' "$tmp/c.json" 2> /dev/null || echo 0)
[ "$n" -gt 0 ] && ! grep -q "python:" "$tmp/c.txt" && ! grep -q "py_backtrace\|py_note" "$tmp/c.json" &&
	ok "C program: $n records, no python block or field" || bad "C program: $n records; $(grep -m2 "python:" "$tmp/c.txt")"

# A C program with libpython loaded but never started (a library it uses links libpython;
# here preloaded): not a Python program, so its live memory at exit is the leak-at-exit
# record, not the information line.
PYLIB=
# The runtime library (INSTSONAME; LDLIBRARY is the -dev package's link to it).
[ -n "$PYTHON_OK" ] && PYLIB=$(python3 -c 'import os, sysconfig as s; v = s.get_config_var
print(os.path.join(v("LIBDIR"), v("INSTSONAME") or v("LDLIBRARY")) if v("Py_ENABLE_SHARED") else "")' 2> /dev/null)
if [ -n "$PYLIB" ] && [ -f "$PYLIB" ]; then
	rm -f "$tmp/cpy.json"
	GRAPHCHECK_JSON_FILE=$tmp/cpy.json LD_PRELOAD=$LIB:$PYLIB "$B/fakecuda/prog_linked" seed > /dev/null 2>&1
	n=$(jq -r 'select(.type == "violation") | .rule' "$tmp/cpy.json" 2> /dev/null | grep -c '^leak-at-exit$')
	[ "$n" = 1 ] && ! grep -q '"live_at_exit"' "$tmp/cpy.json" &&
		ok "C program with libpython loaded, never started: the leak-at-exit record, no live_at_exit line" ||
		bad "C program with libpython loaded: $n leak-at-exit records; $(grep -m1 live_at_exit "$tmp/cpy.json")"
else
	echo "skip the C program with libpython: no shared libpython (or no python3)"
fi
echo "$pass passed, $fail failed"
