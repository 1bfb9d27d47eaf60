#!/bin/sh
# Runs test suites and says how each ended. Usage: sh tests/run_suites.sh BUILD_DIR SUITE...
# A SUITE is a cmocka binary or a shell script (run as `sh SCRIPT BUILD_DIR`). A script ends
# with "N passed, N failed"; it exits 77 when it could run nothing here and said why (a
# skipped suite is not a passed one), 0 when all passed. A script that exits 0 having passed
# no check is counted as failed: a suite that ran nothing cannot say it passed.
set -u
BUILD=$1
shift
passed=0 skipped=0 failed=0 failed_names=
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for s in "$@"; do
	echo "== $s"
	case $s in
	*.sh) { sh "$s" "$BUILD"; echo $? > "$out.rc"; } 2>&1 | tee "$out" ;;
	*) { "$s"; echo $? > "$out.rc"; } 2>&1 | tee "$out" ;;
	esac
	rc=$(cat "$out.rc")
	rm -f "$out.rc"
	if [ "$rc" -eq 77 ]; then
		skipped=$((skipped + 1))
		continue
	fi
	case $s in
	*.sh) n=$(sed -n 's/^\([0-9][0-9]*\) passed, [0-9][0-9]* failed$/\1/p' "$out" | tail -n 1) ;;
	*) n=1 ;;
	esac
	if [ "$rc" -eq 0 ] && [ "${n:-0}" -gt 0 ]; then
		passed=$((passed + 1))
	else
		[ "$rc" -eq 0 ] && echo "FAIL $s: exit 0 without a passed check"
		failed=$((failed + 1)) failed_names="$failed_names $s"
	fi
done
if [ $failed -ne 0 ]; then
	echo "make test: $failed suite(s) failed:$failed_names ($passed passed, $skipped skipped)"
	exit 1
fi
[ $skipped -eq 0 ] && echo "make test: all suites passed ($passed)" ||
	echo "make test: $passed suites passed, $skipped skipped (each said why above)"
