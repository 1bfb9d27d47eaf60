#!/bin/sh
# Runs test suites and says how each ended. Usage: sh tests/run_suites.sh BUILD_DIR SUITE...
# A SUITE is a cmocka binary or a shell script (run as `sh SCRIPT BUILD_DIR`). A script ends
# with "N passed, N failed"; it exits 77 when it could run nothing here and said why (a
# skipped suite is not a passed one), 0 when all passed. A script that exits 0 having passed
# no check is counted as failed: a suite that ran nothing cannot say it passed.
# TEST_JOBS suites run at once (default: the number of CPUs); each one's output is printed
# whole, in the order given.
set -u
BUILD=$1
shift
jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
passed=0 skipped=0 failed=0 failed_names=
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

start() {  # start N SUITE: runs SUITE in the background, output in $dir/N.out, status N.rc
	case $2 in
	*.sh) (sh "$2" "$BUILD" > "$dir/$1.out" 2>&1; echo $? > "$dir/$1.rc") & ;;
	*) ("$2" > "$dir/$1.out" 2>&1; echo $? > "$dir/$1.rc") & ;;
	esac
	echo $! > "$dir/$1.pid"
}
finish_one() {  # finish_one N SUITE: waits for it, prints its output, counts it
	wait "$(cat "$dir/$1.pid")"
	echo "== $2"
	cat "$dir/$1.out"
	rc=$(cat "$dir/$1.rc")
	if [ "$rc" -eq 77 ]; then
		skipped=$((skipped + 1))
		return
	fi
	case $2 in
	*.sh) npass=$(sed -n 's/^\([0-9][0-9]*\) passed, [0-9][0-9]* failed$/\1/p' "$dir/$1.out" | tail -n 1) ;;
	*) npass=1 ;;
	esac
	if [ "$rc" -eq 0 ] && [ "${npass:-0}" -gt 0 ]; then
		passed=$((passed + 1))
	else
		[ "$rc" -eq 0 ] && echo "FAIL $2: exit 0 without a passed check"
		failed=$((failed + 1)) failed_names="$failed_names $2"
	fi
}

n=0 done_n=0
for s in "$@"; do
	n=$((n + 1))
	start $n "$s"
	if [ $((n - done_n)) -ge "$jobs" ]; then
		done_n=$((done_n + 1))
		eval "finish_one $done_n \"\${$done_n}\""
	fi
done
while [ $done_n -lt $n ]; do
	done_n=$((done_n + 1))
	eval "finish_one $done_n \"\${$done_n}\""
done
if [ $failed -ne 0 ]; then
	echo "make test: $failed suite(s) failed:$failed_names ($passed passed, $skipped skipped)"
	exit 1
fi
[ $skipped -eq 0 ] && echo "make test: all suites passed ($passed)" ||
	echo "make test: $passed suites passed, $skipped skipped (each said why above)"
