#!/bin/sh
# graphcheck-report from the outside: the exit status for each --fail-on value and for each
# kind of malformed input, messages naming file and line, every output format parsed back,
# and file:line resolution of a program built with -g.
# Usage (from the repository root): sh tests/report/test_cli.sh BUILD_DIR
. tests/lib.sh
B=$BUILD
R=$B/graphcheck-report
T=tests/report
# Symbolization must not wait on a debuginfod server.
unset DEBUGINFOD_URLS
skip=0

# expect STATUS WHAT COMMAND...: runs COMMAND (stdout to $tmp/out, stderr to $tmp/err).
expect() {
	want=$1
	what=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" -eq "$want" ]; then
		ok
	else
		bad "$what: exit status $got, expected $want"
		sed 's/^/    /' "$tmp/err" | head -n 8
	fi
}

# has FILE TEXT WHAT: FILE holds TEXT (a fixed string).
has() {
	if grep -qF -- "$2" "$1"; then
		ok
	else
		bad "$3: '$2' not in the output"
		sed 's/^/    /' "$1" | head -n 8
	fi
}

if [ ! -x "$R" ]; then
	echo "test_cli: $R not built"
	echo "0 passed, 1 failed"
	exit 1
fi

# ---- usage ---------------------------------------------------------------------------------
expect 0 "--help" "$R" --help
has "$tmp/out" "exit status:" "--help documents the exit status"
has "$tmp/out" "  1  records at or above the --fail-on level" "--help: status 1"
has "$tmp/out" "  3  malformed input seen" "--help: status 3"
expect 0 "--version" "$R" --version
has "$tmp/out" "graphcheck-report " "--version"
expect 2 "no log" "$R"
has "$tmp/err" "no log given" "no log: message"
expect 2 "unknown option" "$R" --bogus "$T/clean.jsonl"
expect 2 "unknown format" "$R" --format=xml "$T/clean.jsonl"
expect 2 "bad --fail-on" "$R" --fail-on=sometimes "$T/clean.jsonl"
expect 2 "missing log" "$R" "$T/no-such.jsonl"
has "$tmp/err" "graphcheck-report: $T/no-such.jsonl: cannot open: No such file or directory" \
	"missing log: message"
expect 2 "a directory as log" "$R" "$T"
has "$tmp/err" "cannot read: Is a directory" "directory: message"
expect 2 "output that cannot be opened" "$R" -o "$tmp/no/such/dir/r.txt" "$T/clean.jsonl"
has "$tmp/err" "cannot open for writing" "bad -o: message"
# 2 wins over 3 and 1: the other logs are still reported.
expect 2 "missing log beside a malformed one" "$R" "$T/no-such.jsonl" "$T/malformed/truncated.jsonl"
has "$tmp/out" "(1 records in 1 files)" "missing log: the other log is still read"
# The totals line on stdout never reads as a clean pass over a log it lacks (a new user's
# trial, session 19: "0 errors, 0 warnings (0 records in 0 files)" alone for a missing log).
has "$tmp/out" "not a clean pass: 1 log unreadable, 1 malformed line" "missing log: the totals say so"
expect 2 "a missing log alone" "$R" "$T/no-such.jsonl"
has "$tmp/out" "(0 records in 0 files); not a clean pass: 1 log unreadable" "missing log alone: the totals say so"

# The information lines at exit (graph_memory, a Python program's live_at_exit): read, not
# records, not unknown.
expect 0 "information lines" "$R" "$T/python_info_lines.jsonl"
has "$tmp/out" "(0 records in 1 files)" "information lines: no record"
if grep -q "unknown record type" "$tmp/err"; then bad "information lines: taken as unknown"; else ok; fi

# ---- the gate: each --fail-on value ------------------------------------------------------
# log, then the status for: no option, error, warning, never
for row in "seed_pipeline 1 1 1 0" "warnings_only 0 0 1 0" "clean 0 0 0 0" \
	"unknown_type 1 1 1 0" "summary_mismatch 3 3 3 3" "summary_more 1 1 1 0"; do
	set -- $row
	log=$T/$1.jsonl
	expect "$2" "$1, default --fail-on" "$R" "$log"
	expect "$3" "$1, --fail-on=error" "$R" --fail-on=error "$log"
	expect "$4" "$1, --fail-on=warning" "$R" --fail-on=warning "$log"
	expect "$5" "$1, --fail-on=never" "$R" --fail-on=never "$log"
done
expect 1 "seed log" "$R" "$T/seed_pipeline.jsonl"
has "$tmp/out" "graphcheck-report: 2 errors, 1 warnings (11 records in 1 files)" "seed totals"
has "$tmp/out" "free-unmaterialized      error         9  " "seed: 9 records folded into one row"
# The same log named twice (a glob and its name, a link, stdin): read once, said so.
ln -sf "$(pwd)/$T/seed_pipeline.jsonl" "$tmp/seed_link.jsonl"
expect 1 "seed log named three times" "$R" "$T/seed_pipeline.jsonl" "$tmp/seed_link.jsonl" - \
	< "$T/seed_pipeline.jsonl"
has "$tmp/out" "graphcheck-report: 2 errors, 1 warnings (11 records in 1 files)" \
	"the same log named three times: its records once"
has "$tmp/err" "graphcheck-report: $tmp/seed_link.jsonl is $T/seed_pipeline.jsonl, named before: read once" \
	"the same log through a link: said"
expect 2 "a missing log named twice" "$R" "$T/no-such.jsonl" "$T/no-such.jsonl"
[ "$(grep -c 'cannot open' "$tmp/err")" = 1 ] && ok || bad "a missing log named twice: $(grep -c 'cannot open' "$tmp/err") messages, want 1"
# A --trace-file trace given without --replay: one message saying so, status 3 (malformed),
# not a warning for each of its lines ("unknown record type" 18 times before).
expect 3 "a trace without --replay" "$R" tests/traces/api-error.trace
has "$tmp/err" "this is a --trace-file trace, not a --json-file log: read it with graphcheck-report --replay" \
	"a trace without --replay: the message"
if grep -q "unknown record type" "$tmp/err"; then bad "a trace without --replay: a warning a line"; else ok; fi
# And the other way: a log given to --replay, one message and status 3 (input that is not
# a trace), not a message a line and 2; binary data, an empty file and a line past the limit
# (read in bounded memory, never held) the same; a missing trace names the reason.
expect 3 "a JSON log with --replay" "$R" --replay tests/report/clean.jsonl
has "$tmp/err" "clean.jsonl:1: this is a --json-file log (read it without --replay), not a --trace-file trace" \
	"a JSON log with --replay: the message"
[ "$(grep -c graphcheck-report: "$tmp/err")" = 1 ] && ok || bad "a JSON log with --replay: $(grep -c . "$tmp/err") messages"
head -c 100 /dev/zero >"$tmp/zeros.trace"
expect 3 "binary data with --replay" "$R" --replay "$tmp/zeros.trace"
has "$tmp/err" "zeros.trace:1: binary data (a NUL byte): not a trace" "binary data with --replay: the message"
: >"$tmp/empty.trace"
expect 3 "an empty file with --replay" "$R" --replay "$tmp/empty.trace"
{ head -c 4300000 /dev/zero | tr '\000' x; echo; cat tests/traces/api-error.trace; } >"$tmp/long.trace"
expect 3 "a trace line past the limit" "$R" --replay "$tmp/long.trace"
has "$tmp/err" "long.trace:1: line longer than 4194304 bytes, skipped" "a trace line past the limit: the message"
has "$tmp/out" "replayed 5 events: 1 errors" "a trace line past the limit: the rest replayed"
has "$tmp/out" "; not a clean pass: 0 traces unreadable, 1 malformed lines" \
	"a trace line past the limit: the totals are no clean pass"
expect 2 "an empty --suppressions" "$R" --suppressions= tests/report/clean.jsonl
has "$tmp/err" "--suppressions takes a file name" "an empty --suppressions: the message"
# The report's own output given back to it: one message naming what it is, status 3.
for f in sarif junit json; do
	"$R" --format=$f tests/report/seed_pipeline.jsonl > "$tmp/own.$f" 2>/dev/null
	expect 3 "its own --format=$f output" "$R" "$tmp/own.$f"
	has "$tmp/err" "own.$f:1: this is a JSON or XML document (graphcheck-report's own --format=json, sarif or junit output?)" \
		"its own --format=$f output: the message"
	[ "$(grep -c "$tmp/own.$f" "$tmp/err")" = 1 ] && ok || bad "its own --format=$f output: $(grep -c . "$tmp/err") messages"
done
expect 2 "a missing trace" "$R" --replay "$tmp/no-such.trace"
has "$tmp/err" "no-such.trace: cannot open: No such file or directory" "a missing trace: the reason"
# A record as long as the writer makes one (a 64-frame stack of 4 KiB names: 2 MB and more
# when several leaks' sites are listed), past the old 1 MiB limit: read.
python3 - "$tmp/big.jsonl" <<'PY'
import json, sys
name = "f" * 4000
bt = [{"addr": "0x%x" % (i + 1), "module": "/app/" + name, "offset": "0x%x" % (i + 1), "symbol": name} for i in range(64)]
leaks = [{"count": 1, "bytes": 8, "call": "cuMemAllocAsync", "in_graph": False, "backtrace": bt} for _ in range(3)]
rec = {"type": "violation", "seq": 1, "pid": 7, "tid": 7, "rule": "leak-at-exit", "severity": "warning",
       "call": "exit", "result": 0, "message": "m", "backtrace": bt, "leaks": leaks, "leak_count": 3, "leak_bytes": 24}
open(sys.argv[1], "w").write("".join(json.dumps(x) + "\n" for x in
    [{"type": "start", "pid": 7}, rec, {"type": "summary", "pid": 7, "errors": 0, "warnings": 1, "records": 1}]))
PY
[ "$(wc -c <"$tmp/big.jsonl")" -gt 2000000 ] && ok || bad "the long record is not long"
expect 1 "a 2 MB record" "$R" --no-symbolize --fail-on=warning "$tmp/big.jsonl"
has "$tmp/out" "0 errors, 1 warnings (1 records in 1 files)" "a 2 MB record: read"
# A process's start line without its summary (killed, _exit, or a cut log): a note
head -n 1 "$T/clean.jsonl" > "$tmp/start_only.jsonl"
expect 0 "start line only" "$R" "$tmp/start_only.jsonl"
has "$tmp/err" "has no summary line: it ended by _exit, exec or SIGKILL, or the log was cut" \
	"start line only: the note"
expect 0 "a clean log" "$R" "$T/clean.jsonl"
if grep -q "no summary line" "$tmp/err"; then bad "a clean log: a no-summary note"; else ok; fi
expect 0 "unknown type" "$R" --fail-on=never "$T/unknown_type.jsonl"
has "$tmp/err" "$T/unknown_type.jsonl:3: warning: unknown record type \"heartbeat\"" \
	"unknown type: warning"
# A summary counting errors the file does not hold: records were lost, never a clean pass
# (a new user's trial, session 19: the seed log with its records cut out passed with 0).
expect 3 "summary mismatch" "$R" --fail-on=never "$T/summary_mismatch.jsonl"
has "$tmp/err" "$T/summary_mismatch.jsonl:3: the summary of pid 714 counts 2 errors" "summary: error"
has "$tmp/err" "records are missing from the log" "summary: records missing said"
# More records than the summary counts (two logs of one pid concatenated): a note.
expect 0 "summary counts fewer" "$R" --fail-on=never "$T/summary_more.jsonl"
has "$tmp/err" "$T/summary_more.jsonl:6: note: the summary of pid 714" "summary fewer: note"

# ---- malformed input: exit 3 whatever --fail-on says, named, good records kept -------------
M=$T/malformed
printf '%s\n' "$(sed -n 2p "$T/seed_pipeline.jsonl")" >"$tmp/good.jsonl"
good=$(cat "$tmp/good.jsonl")
# Made here, not kept as fixtures: binary, not UTF-8, and a line past the 1 MiB limit.
{ cat "$tmp/good.jsonl"; printf '\177ELF\002\001\001\000\000\000\n'; } >"$tmp/binary.jsonl"
{ cat "$tmp/good.jsonl"; printf '{"type":"start","program":"caf\351"}\n'; cat "$tmp/good.jsonl"; } \
	>"$tmp/latin1.jsonl"
{
	cat "$tmp/good.jsonl"
	printf '{"type":"start","pad":"'
	head -c 4300000 /dev/zero | tr '\000' x
	printf '"}\n'
	cat "$tmp/good.jsonl"
} >"$tmp/long.jsonl"
# JSON lines of other types only (a trace given by mistake): not a log to pass as clean
printf '{"type":"event","kind":"alloc"}\n{"type":"site","id":1}\n' >"$tmp/other_types.jsonl"
# graphcheck's text log given instead of its JSON log: one message that says so
printf '==graphcheck== error: double-free in cuMemFreeAsync (returned 1)\n==graphcheck==   more\n' >"$tmp/text.log"
# log|line|message|good records
while IFS='|' read -r log line msg n; do
	for f in "" --fail-on=error --fail-on=warning --fail-on=never; do
		expect 3 "$log $f" "$R" $f "$log"
	done
	has "$tmp/err" "graphcheck-report: $log:$line: $msg" "$log: message"
	has "$tmp/out" "($n records in 1 files)" "$log: good records still counted"
done <<EOF
$M/truncated.jsonl|3|truncated last line (no newline at the end)|1
$M/invalid_json.jsonl|3|invalid JSON at column|2
$M/wrong_types.jsonl|3|field "seq" must be an integer, not a string|2
$M/wrong_types.jsonl|4|field "rule" must be a string, not an integer|2
$M/wrong_types.jsonl|5|field "backtrace" must be an array of frames, not an object|2
$M/unknown_rule.jsonl|3|unknown rule "free-twice-maybe"|2
$M/empty.jsonl|1|empty file|0
$tmp/binary.jsonl|2|binary data (a NUL byte)|1
$tmp/latin1.jsonl|2|not valid UTF-8: byte 0xe9|2
$tmp/long.jsonl|2|line longer than 4194304 bytes|2
$tmp/other_types.jsonl|1|no graphcheck log lines|0
$tmp/text.log|1|this is graphcheck's text log (--log-file); graphcheck-report reads its JSON log (--json-file)|0
EOF
expect 3 "malformed stdin" sh -c "cat '$M/wrong_types.jsonl' | '$R' -"
has "$tmp/err" "graphcheck-report: <stdin>:3: field \"seq\"" "stdin: named <stdin>"
expect 3 "malformed beside good logs" "$R" "$T/seed_pipeline.jsonl" "$M/unknown_rule.jsonl"
has "$tmp/out" "(13 records in 2 files)" "malformed beside good: all good records"
has "$tmp/err" "graphcheck-report: 1 malformed line skipped" "malformed: the count"

# ---- folding -------------------------------------------------------------------------------
expect 1 "two processes' logs" "$R" "$T/run.1001.jsonl" "$T/run.1002.jsonl"
has "$tmp/out" "graphcheck-report: 2 errors, 0 warnings (3 records in 2 files)" "two logs: totals"
has "$tmp/out" "free-unmaterialized  error         2" "two logs: one site from both files"
yes "$good" | head -n 10000 >"$tmp/loop.jsonl"
expect 1 "10,000 records at one site" "$R" "$tmp/loop.jsonl"
has "$tmp/out" "free-foreign-in-capture  error     10000  " "loop: one row with count 10000"
has "$tmp/out" "(10000 records in 1 files)" "loop: records"
has "$tmp/out" "graphcheck-report: 1 errors, 0 warnings" "loop: one entry"

# ---- formats, parsed back -----------------------------------------------------------------
expect 1 "-o FILE" "$R" -o "$tmp/r.txt" "$T/seed_pipeline.jsonl"
[ -s "$tmp/out" ] && bad "-o FILE: stdout not empty" || ok
has "$tmp/r.txt" "(11 records in 1 files)" "-o FILE: the report"
has "$tmp/err" "graphcheck-report: 2 errors, 1 warnings" "-o FILE: totals on stderr too"

if command -v python3 >/dev/null 2>&1; then
	expect 1 "json" "$R" --format=json "$T/seed_pipeline.jsonl"
	if python3 - "$tmp/out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["records"] == 11 and d["errors"] == 2 and d["warnings"] == 1, d
assert [e["count"] for e in d["entries"]] == [1, 9, 1]
assert all(f["text"] for e in d["entries"] for f in e["backtrace"])
EOF
	then ok; else bad "json: parsed back"; fi

	# The rule table's size: one X(ID, "id", ...) line a rule.
	nrules=$(grep -c '^[[:space:]]*X([A-Z_]*, "[a-z-]*"' interpose/rule_table.h)
	for log in seed_pipeline clean run.1002; do
		"$R" --format=sarif --fail-on=never "$T/$log.jsonl" >"$tmp/sarif.json" 2>/dev/null
		if python3 - "$tmp/sarif.json" "$nrules" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
nrules = int(sys.argv[2])
assert d["version"] == "2.1.0" and "sarif-schema-2.1.0" in d["$schema"]
run, = d["runs"]
drv = run["tool"]["driver"]
assert drv["name"] == "graphcheck" and drv["version"] and "://" in drv["informationUri"]
ids = [r["id"] for r in drv["rules"]]
assert len(ids) == nrules and len(set(ids)) == nrules
for r in drv["rules"]:
    assert r["shortDescription"]["text"] and r["fullDescription"]["text"] and r["help"]["text"]
    assert r["defaultConfiguration"]["level"] in ("error", "warning")
assert isinstance(run["results"], list)
for res in run["results"]:
    assert res["message"]["text"]
    assert res["ruleId"] in ids and ids[res["ruleIndex"]] == res["ruleId"]
    assert res["level"] in ("error", "warning", "note", "none")
    assert res["properties"]["count"] >= 1
    assert res["occurrenceCount"] == res["properties"]["count"]
    for loc in res.get("locations", []):
        pl = loc.get("physicalLocation")
        assert pl is None or "artifactLocation" in pl or "address" in pl
        if pl and "region" in pl:
            assert pl["region"]["startLine"] >= 1
EOF
		then ok; else bad "sarif of $log: schema's required fields"; fi
	done

	# log, --fail-on: entries, failures (a testcase per rule, plus one per entry; failed: the
	# rules with records and the entries at or above --fail-on, as the exit status says)
	for row in "seed_pipeline warning 3 6" "seed_pipeline error 3 4" "seed_pipeline never 3 0" \
		"clean error 0 0" "run.1002 warning 2 4"; do
		set -- $row
		fo=$2
		set -- "$1" $(($3 + nrules)) "$4"
		"$R" --format=junit --fail-on=$fo "$T/$1.jsonl" >"$tmp/junit.xml" 2>/dev/null
		if python3 - "$tmp/junit.xml" "$2" "$3" <<'EOF'
import sys, xml.etree.ElementTree as E
root = E.parse(sys.argv[1]).getroot()
tests, failures = int(sys.argv[2]), int(sys.argv[3])
suite, = root.findall("testsuite")
assert suite.get("name") == "graphcheck"
cases = suite.findall("testcase")
assert len(cases) == tests == int(suite.get("tests")), (len(cases), suite.get("tests"))
fails = suite.findall("testcase/failure")
assert len(fails) == failures == int(suite.get("failures")), (len(fails), suite.get("failures"))
assert all(f.get("message") and f.get("type") in ("error", "warning") for f in fails)
EOF
		then ok; else bad "junit of $1, --fail-on=$fo: parsed back, $2 testcases, $3 failures"; fi
	done
	# Every character XML minds, in a log: the output must still parse.
	python3 - "$tmp/good.jsonl" >"$tmp/hostile.jsonl" <<'EOF'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
r["message"] = "<&>\"' ]]> \x01\x1b[0m \ufffe end"
r["call"] = "</testcase>"
print(json.dumps(r))
EOF
	"$R" --format=junit "$tmp/hostile.jsonl" >"$tmp/junit.xml" 2>/dev/null
	if python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$tmp/junit.xml"
	then ok; else bad "junit of hostile strings: well-formed"; fi
else
	skip=$((skip + 1))
	echo "test_cli: no python3: json, sarif and junit parse-back skipped"
fi

# ---- the input's problems in the machine formats ------------------------------------------
# A cut or missing log fails the exit status, and the published JUnit, SARIF or JSON says so
# too (they showed a clean pass: a CI job that publishes them went green): JUnit an <error>
# test case "input" (errors="1"), SARIF executionSuccessful false with notifications, JSON an
# "input" object; a process without its summary line is a note there. A clean log: none.
head -c 300 "$T/seed_pipeline.jsonl" >"$tmp/cut.jsonl"
python3 - "$R" "$tmp" "$T/clean.jsonl" <<'PY' && ok || bad "input problems in junit, sarif and json"
import json, subprocess, sys, xml.etree.ElementTree as E
R, tmp, clean = sys.argv[1:]
def run(fmt, *logs):
    p = subprocess.run([R, "--format=" + fmt, *logs], capture_output=True, text=True)
    return p.returncode, p.stdout
rc, out = run("junit", tmp + "/cut.jsonl", tmp + "/missing.jsonl")
root = E.fromstring(out)
suite = root.find("testsuite")
case = [c for c in suite.iter("testcase") if c.get("name") == "input"]
assert rc == 2 and suite.get("errors") == "1" and root.get("errors") == "1", (rc, suite.attrib)
err = case[0].find("error")
assert "1 malformed line, 1 unreadable log" == err.get("message"), err.attrib
assert "cut.jsonl:" in err.text and "missing.jsonl: cannot open" in err.text, err.text
assert "note: pid" in case[0].find("system-err").text
rc, out = run("sarif", tmp + "/cut.jsonl")
inv = json.loads(out)["runs"][0]["invocations"][0]
assert rc == 3 and inv["executionSuccessful"] is False, inv
assert {n["level"] for n in inv["toolExecutionNotifications"]} == {"error", "note"}, inv
rc, out = run("json", tmp + "/cut.jsonl")
inp = json.loads(out)["input"]
assert inp["malformed_lines"] == 1 and inp["unreadable_logs"] == 0 and inp["problems"], inp
rc, out = run("junit", clean)
suite = E.fromstring(out).find("testsuite")
assert suite.get("errors") == "0" and not [c for c in suite.iter("testcase") if c.get("name") == "input"]
rc, out = run("sarif", clean)
inv = json.loads(out)["runs"][0]["invocations"][0]
assert inv["executionSuccessful"] is True and inv["toolExecutionNotifications"] == [], inv
PY

# ---- a suppression drops only the records it matches --------------------------------------
# A folded entry's first record decides for all its records (report/suppress.c), so records
# an entry would match differently must never fold together: two double frees from one
# Python line through two libraries (an entry for the vendor's must leave ours), and two
# processes' leaks at exit with one exit path but their own allocation sites.
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
def frames(m, o): return [{"addr": "0x1", "module": m, "offset": o}]
def rec(pid, seq, rule, sev, call, bt, **kw):
    r = {"type": "violation", "seq": seq, "pid": pid, "tid": pid, "rule": rule, "severity": sev,
         "call": call, "result": 1, "message": "m", "backtrace": bt}
    r.update(kw)
    return r
def log(name, pid, recs):
    lines = [{"type": "start", "pid": pid}] + recs + [{"type": "summary", "pid": pid,
             "errors": sum(r["severity"] == "error" for r in recs),
             "warnings": sum(r["severity"] == "warning" for r in recs), "records": len(recs)}]
    open(d + "/" + name, "w").write("".join(json.dumps(x) + "\n" for x in lines))
py = [{"file": "/app/train.py", "line": 42, "function": "step"}]
log("py2.json", 100, [rec(100, 1, "double-free", "error", "cuMemFreeAsync", frames("/opt/vendor/libvendor.so", "0x10"), py_backtrace=py),
                      rec(100, 2, "double-free", "error", "cuMemFreeAsync", frames("/app/libmine.so", "0x20"), py_backtrace=py)])
exit_bt = frames("/lib/libc.so.6", "0x47a76")
for name, pid, m in (("la.json", 200, "/opt/vendor/libvendor.so"), ("lb.json", 201, "/app/libmine.so")):
    log(name, pid, [rec(pid, 1, "leak-at-exit", "warning", "exit", exit_bt, result=0, leak_count=1, leak_bytes=64,
                        leaks=[{"count": 1, "bytes": 64, "call": "cuMemAllocAsync", "in_graph": False, "backtrace": frames(m, "0x30")}])])
PY
printf '{\n vendor\n graphcheck:double-free\n obj:/opt/vendor/libvendor.so\n}\n{\n vendor-leak\n graphcheck:leak-at-exit\n call:cuMemAllocAsync\n obj:/opt/vendor/libvendor.so\n}\n' >"$tmp/vendor.supp"
expect 1 "an entry for one library's record of a Python line, not the other's" \
	"$R" --no-symbolize --suppressions="$tmp/vendor.supp" "$tmp/py2.json"
has "$tmp/out" "1 errors, 0 warnings (2 records in 1 files), 1 suppressed" "one of a Python line's two records suppressed"
expect 1 "an entry for one process's leak, not the other's" \
	"$R" --no-symbolize --fail-on=warning --suppressions="$tmp/vendor.supp" "$tmp/la.json" "$tmp/lb.json"
has "$tmp/out" "0 errors, 1 warnings (2 records in 2 files), 1 suppressed" "one of two processes' leaks suppressed"

# ---- symbols ------------------------------------------------------------------------------
line=$(grep -n 'call-site:' "$T/symprog.c" | cut -d: -f1)
"$B/tests/report_symprog" >"$tmp/sym.jsonl"
expect 1 "symbolized log" "$R" "$tmp/sym.jsonl"
has "$tmp/out" "tests/report/symprog.c:$line in main" "file:line of the call"
has "$tmp/out" "/nonexistent/libgone.so+0x1234 (" "missing module: module+offset (symbol)"
expect 1 "--no-symbolize" "$R" --no-symbolize "$tmp/sym.jsonl"
has "$tmp/out" "report_symprog+0x" "--no-symbolize: module+offset"
"$B/tests/report_symprog_nodebug" >"$tmp/nodebug.jsonl"
expect 1 "module without debug info" "$R" "$tmp/nodebug.jsonl"
has "$tmp/out" "report_symprog_nodebug+0x" "no debug info: module+offset"
has "$tmp/out" " (main)" "no debug info: the ELF symbol"
# Code past a unit's end (rel_prog's _start, crt1's, linked after its one unit here) gets no
# source line: it printed rel_prog.c:448, the unit's last line before it.
if [ -x "$B/reliability/rel_prog" ] && [ -x "$B/graphcheck" ] && [ "${ASAN:-0}" != 1 ] && [ "${TSAN:-0}" != 1 ]; then
	"$B/graphcheck" --json-file="$tmp/rel.json" --log-file=/dev/null -- "$B/reliability/rel_prog" plain >/dev/null 2>&1
	"$R" "$tmp/rel.json" >"$tmp/out" 2>&1
	if grep -q 'rel_prog\.c:[0-9]* in _start' "$tmp/out"; then
		bad "_start given a source line of another unit: $(grep ' in _start' "$tmp/out" | head -1)"
	else
		ok
	fi
fi

if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
