#!/bin/sh
# The ledger fuzzer's strict mode (FUZZ_LEDGER_STRICT=1, tests/fuzz/fuzz_ledger.c) over a
# fixed corpus, in every `make test` and so under each sanitizer in CI: the inputs that once
# broke the ledger, then three seeds of 1,500 random inputs (TSan: fewer, below). Its
# teardown checks are the bounds the README's Reliability section promises (allocation
# records beyond the history rings, the stream model's records, graphs, execs and captures
# kept after everything ended).
. tests/lib.sh
replay=$BUILD/tests/fuzz_ledger_replay
[ -x "$replay" ] || skip_suite "no $replay (make all builds it)"
# The replay is one thread: ThreadSanitizer finds nothing in it and runs it 14 times slower
# (42 s for the three seeds), so its build checks the bounds on a third of one seed.
seeds="1 2 3" n=1500
case "$BUILD" in *tsan*) seeds=2 n=500 ;; esac
for seed in $seeds; do
	if FUZZ_LEDGER_STRICT=1 "$replay" -s "$seed" -n "$n" > "$tmp/out" 2>&1; then
		ok "strict, crash inputs and seed $seed: $(tail -n 1 "$tmp/out")"
	else
		head -n 60 "$tmp/out"
		bad "strict, crash inputs and seed $seed: $(tail -n 1 "$tmp/out")"
	fi
done
finish
