# Benchmarks (tests/bench). Included by the top Makefile, which defines BUILD, CC,
# BASE_CFLAGS, CORE_OBJS, LIB, LAUNCHER, Q and msg. Not part of `all` or `test`.
#   make bench       the GPU workloads against native and compute-sanitizer (GPU machine)
#   make bench-cpu   the ledger alone, and graphcheck's cost per call through the stand-in
#                    (ns, and instructions counted by callgrind)
BENCH_LEDGER := $(BUILD)/bench/bench_ledger
BENCH_DEAD := $(BUILD)/bench/bench_dead_ranges

$(BENCH_LEDGER): $(BUILD)/obj/tests/bench/bench_ledger.o $(CORE_OBJS)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $^ -lpthread -ldl

$(BENCH_DEAD): $(BUILD)/obj/tests/bench/bench_dead_ranges.o $(CORE_OBJS)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $^ -lpthread -ldl

.PHONY: bench bench-cpu
bench: $(LIB) $(LAUNCHER) $(BENCH_LEDGER)
	$(Q)sh tests/bench/run.sh $(BUILD)

bench-cpu: $(BENCH_LEDGER) $(BENCH_DEAD) $(LIB) $(BUILD)/fakecuda/prog_linked \
		$(BUILD)/fakecuda/prog_bench
	$(Q)$(BENCH_LEDGER) 20000
	$(Q)$(BENCH_LEDGER) 200000 no-uses
	$(Q)$(BENCH_DEAD)
	$(Q)if command -v valgrind >/dev/null; then \
		valgrind -q --tool=callgrind --callgrind-out-file=$(BUILD)/bench/dead_ranges.cg \
			$(BENCH_DEAD) --calls 100000 && \
		echo "dead-range index, instructions per check of 4 words (callgrind, incl. call)" && \
		callgrind_annotate --inclusive=yes $(BUILD)/bench/dead_ranges.cg | tr -d , | \
			awk '/dr_check_[a-z]+ \[/ { match($$0, /dr_check_[a-z]+/); \
				printf "  %-10s %6.1f\n", substr($$0, RSTART + 9, RLENGTH - 9), $$1 / 100000 } \
			     /dr_add_full \[/ { printf "  %-10s %6.1f (per add at a fresh address, index full)\n", \
				"add-full", $$1 / 10000 }'; fi
	$(Q)sh tests/bench/standin.sh $(BUILD)
	$(Q)sh tests/bench/callgrind.sh $(BUILD)
	$(Q)sh tests/bench/cold.sh $(BUILD)
