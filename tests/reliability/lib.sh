# Shared by the reliability scripts (sourced): tests/lib.sh with the object preloaded, and
# REL, the test program (tests/reliability/rel_prog.c).
. tests/lib.sh
preload_setup
REL=$BUILD/reliability/rel_prog
if [ ! -x "$REL" ]; then
	echo "FAIL $REL missing (run make first)"
	echo "0 passed, 1 failed"
	exit 1
fi
