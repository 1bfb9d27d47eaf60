# Shared by the shell suites (sourced; POSIX sh). Each suite runs from the repository root
# as `sh tests/DIR/NAME.sh BUILD_DIR` and ends with finish's "N passed, N failed" line.
#   BUILD          the build directory ($1, default build)
#   ok/bad/bug     count a check (ok prints its text when given one); finish ends the suite
#   skip_suite WHY nothing here can run: says why and exits 77 (tests/run_suites.sh counts
#                  it as skipped, not passed)
#   tmp            a directory removed at exit
# After preload_setup (suites that preload the object):
#   LIB, PRE       the object, and what LD_PRELOAD gets (libasan first under ASan)
#   ASAN, TSAN     1 in that sanitizer's build. Under TSan the object can be preloaded only
#                  into programs built here with TSan (the runtime lives in the program):
#                  `foreign WHAT` is false there and says which check was skipped.
#   gc CMD...      CMD with the object preloaded
set -u
BUILD=${1:-build}
pass=0 fail=0 skipped=0
ok() { pass=$((pass + 1)); [ $# -eq 0 ] || printf "ok   %s\n" "$1"; }
bad() { fail=$((fail + 1)); printf "FAIL %s\n" "$1"; }
# A failure that is a known graphcheck bug (see tests/reliability/README.md): it still fails.
bug() { fail=$((fail + 1)); printf "FAIL [graphcheck bug] %s\n" "$1"; }
finish() {
	[ "$skipped" -eq 0 ] || echo "($skipped check(s) skipped, said above)"
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit $?
}
skip_suite() {
	echo "skipped: $1"
	echo "0 passed, 0 failed"
	exit 77
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

preload_setup() {
	LIB=$(cd "$BUILD" 2>/dev/null && pwd)/libgraphcheck.so
	if [ ! -f "$LIB" ]; then
		echo "FAIL $BUILD/libgraphcheck.so missing (run make first)"
		echo "0 passed, 1 failed"
		exit 1
	fi
	ASAN=0 TSAN=0 PRE=$LIB
	case "$BUILD" in
	*asan*) ASAN=1
		PRE="$(${CC:-gcc} -print-file-name=libasan.so):$LIB"
		export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 ;;
	*tsan*) TSAN=1
		export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}halt_on_error=1:exitcode=66" ;;
	esac
	# No GRAPHCHECK_* or FAKECUDA_* setting from the caller's environment leaks into a test.
	for v in $(env | sed -n 's/^\(GRAPHCHECK_[A-Z_]*\)=.*/\1/p; s/^\(FAKECUDA_[A-Z_]*\)=.*/\1/p'); do
		unset "$v"
	done
	# the programs that die by signal leave no core files; the soft limit only, so that a test
	# can allow them again (dash's plain ulimit sets the hard limit too)
	ulimit -S -c 0 2>/dev/null
}
foreign() {
	[ "${TSAN:-0}" = 0 ] && return 0
	skipped=$((skipped + 1))
	echo "skip $1 (under TSan the object loads only into programs built with it)"
	return 1
}
gc() { LD_PRELOAD=$PRE "$@"; }

# violations FILE...: "count rule" lines of JSON logs, sorted.
violations() {
	jq -r 'select(.type == "violation") | .rule' "$@" 2>/dev/null | sort | uniq -c | sed 's/^ *//'
}
# valid_jsonl FILE: every line is one complete JSON object and the file ends in a newline.
valid_jsonl() {
	[ -s "$1" ] || return 1
	[ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] || return 1
	lines=$(wc -l < "$1")
	objs=$(jq -c 'select(type == "object")' "$1" 2>/dev/null | wc -l) || return 1
	jq -e . "$1" > /dev/null 2>&1 && [ "$lines" -eq "$objs" ]
}
