#!/bin/sh
# The demo gate: runs every demo program (and each rule program's --clean variants) under
# graphcheck and compares the rules it records with demo/expected/<name>.rules.
# Usage: sh demo/gate.sh BUILD_DIR   (needs a GPU; `make gate` builds first)
#   <name>.rules: sorted rule ids, one a line; empty for a clean run. A rule program's variant
#   <id>--<v>.rules is run as `<id> --<v>` (e.g. double-free--clean: `double-free --clean`).
#   The exit status must be 1 when an expected rule has severity error, 0 otherwise.
# Env: GATE_RECORD_DIR: also copy each run's JSON log and program output there, and record
#      its trace (<name>.trace, for tests/traces/).
#      GATE_TIMEOUT: seconds a program may run (default 120; used where `timeout` exists).
set -eu

if [ $# -ne 1 ]; then
	echo "usage: sh demo/gate.sh BUILD_DIR" >&2
	exit 2
fi
build=$1
root=$(cd "$(dirname "$0")/.." && pwd)
demo=$root/demo
gc=$build/graphcheck
if [ ! -x "$gc" ]; then
	echo "gate: $gc not found: build it first (make)" >&2
	exit 2
fi
timeout_s=${GATE_TIMEOUT:-120}
record=${GATE_RECORD_DIR:-}
if [ -n "$record" ]; then
	mkdir -p "$record"
fi

# Rule ids whose severity is warning, from the rule table (one X(...) entry a line there).
warnings=$(sed -n 's/.*X([A-Z_]*, *"\([a-z-]*\)", *GC_SEV_WARNING.*/\1/p' \
	"$root/interpose/rule_table.h" 2>/dev/null || true)
[ -n "$warnings" ] || warnings=leak-at-exit
warnings=" $(printf '%s\n' "$warnings" | tr '\n' ' ')"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/graphcheck-gate.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' HUP INT TERM

passed=0
failed=0

# "a\nb\n" -> "a,b"
braces() {
	printf '{%s}' "$(printf '%s\n' "$1" | sed '/^$/d' | tr '\n' ',' | sed 's/,$//')"
}

# run_one NAME PROGRAM [ARG]
run_one() {
	name=$1
	prog=$2
	shift 2
	exp_file=$demo/expected/$name.rules
	if [ ! -f "$exp_file" ]; then
		echo "FAIL $name: no $exp_file"
		failed=$((failed + 1))
		return 0
	fi
	if [ ! -x "$prog" ]; then
		echo "FAIL $name: $prog not built"
		failed=$((failed + 1))
		return 0
	fi
	dir=$tmp/$name
	mkdir -p "$dir/json"
	if [ -n "$record" ]; then  # also the trace that CI replays (tests/traces/)
		rm -f "$record/$name.trace"
		set -- "$gc" "--trace-file=$record/$name.trace" --error-exitcode=1 \
			"--json-file=$dir/json/%p.json" -- "$prog" "$@"
	else
		set -- "$gc" --error-exitcode=1 "--json-file=$dir/json/%p.json" -- "$prog" "$@"
	fi
	if command -v timeout >/dev/null 2>&1; then
		set -- timeout "$timeout_s" "$@"
	fi
	rc=0
	"$@" >"$dir/out.txt" 2>&1 || rc=$?
	: >"$dir/all.json"
	for j in "$dir"/json/*.json; do
		if [ -f "$j" ]; then
			cat "$j" >>"$dir/all.json"
		fi
	done
	if [ -n "$record" ]; then
		cp "$dir/all.json" "$record/$name.json"
		cp "$dir/out.txt" "$record/$name.out"
	fi
	got=$(grep '"type":"violation"' "$dir/all.json" | sed -n 's/.*"rule":"\([a-z-]*\)".*/\1/p' |
		LC_ALL=C sort -u)
	expected=$(sed '/^[[:space:]]*$/d' "$exp_file" | LC_ALL=C sort -u)
	want_rc=0
	for r in $expected; do
		case "$warnings" in
		*" $r "*) ;;
		*) want_rc=1 ;;
		esac
	done
	if grep -q 'no process of this run made a CUDA driver call' "$dir/out.txt"; then
		# A clean twin would pass without ever being checked (no GPU, no driver).
		echo "FAIL $name: no CUDA driver call reached graphcheck (no GPU or driver here?)"
		failed=$((failed + 1))
	elif [ "$got" != "$expected" ]; then
		echo "FAIL $name: expected $(braces "$expected") got $(braces "$got") (exit $rc)"
		failed=$((failed + 1))
	elif [ "$rc" -ne "$want_rc" ]; then
		echo "FAIL $name: expected exit $want_rc got $rc (rules $(braces "$got"))"
		failed=$((failed + 1))
	else
		echo "PASS $name"
		passed=$((passed + 1))
	fi
}

run_one seed_pipeline "$build/demo/seed_pipeline"
run_one seed_pipeline_fixed "$build/demo/seed_pipeline_fixed"
for src in "$demo"/rules/*.cu; do
	id=$(basename "$src" .cu)
	run_one "$id" "$build/demo/rules/$id"
	# Its variants: every expected/<id>--<variant>.rules, run with --<variant>.
	for e in "$demo/expected/$id"--*.rules; do
		if [ -f "$e" ]; then
			v=$(basename "$e" .rules)
			v=${v#"$id"}
			run_one "$id$v" "$build/demo/rules/$id" "$v"
		fi
	done
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
