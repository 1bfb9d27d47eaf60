# Shared by the reliability scripts (sourced). Sets BUILD, LIB, PRE (what LD_PRELOAD gets),
# REL (the test program), tmp (removed at exit), and ok/bad/finish. Under TSan it prints
# the skip line and exits 0: the TSan runtime cannot be preloaded into other programs.
# Scripts run as `sh tests/reliability/NAME.sh BUILD_DIR` from the repository root.
set -u
BUILD=${1:-build}
pass=0 fail=0
ok() { pass=$((pass + 1)); printf "ok   %s\n" "$1"; }
bad() { fail=$((fail + 1)); printf "FAIL %s\n" "$1"; }
# A failure that is a known graphcheck bug (see tests/reliability/README.md): it still fails.
bug() { fail=$((fail + 1)); printf "FAIL [graphcheck bug] %s\n" "$1"; }
finish() {
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit $?
}

case "$BUILD" in
*tsan*) echo "skipped under TSan (the runtime cannot be preloaded)"; echo "0 passed, 0 failed"; exit 0 ;;
esac
LIB=$(cd "$BUILD" 2>/dev/null && pwd)/libgraphcheck.so
REL=$BUILD/reliability/rel_prog
if [ ! -f "$LIB" ] || [ ! -x "$REL" ]; then
	echo "FAIL $BUILD/libgraphcheck.so or $REL missing (run make first)"
	echo "0 passed, 1 failed"
	exit 1
fi
case "$BUILD" in
*asan*) ASAN=1
	PRE="$(${CC:-gcc} -print-file-name=libasan.so):$LIB"
	export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 ;;
*) ASAN=0 PRE=$LIB ;;
esac
# No GRAPHCHECK_* or FAKECUDA_* setting from the caller's environment leaks into a test.
for v in $(env | sed -n 's/^\(GRAPHCHECK_[A-Z_]*\)=.*/\1/p; s/^\(FAKECUDA_[A-Z_]*\)=.*/\1/p'); do
	unset "$v"
done
ulimit -c 0 2>/dev/null  # the programs that die by signal leave no core files
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# violations FILE: "count rule" lines of a JSON log, sorted.
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
# gc ARGS...: run with graphcheck preloaded (the caller sets GRAPHCHECK_* around it).
gc() { LD_PRELOAD=$PRE "$@"; }
