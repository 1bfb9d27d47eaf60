# Benchmarks (tests/bench). Included by the top Makefile, which defines BUILD, CC,
# BASE_CFLAGS, CORE_OBJS, LIB, LAUNCHER, Q and msg. Not part of `all` or `test`.
#   make bench       the GPU workloads against native and compute-sanitizer (GPU machine)
#   make bench-cpu   the ledger alone, and graphcheck's cost per call through the stand-in
BENCH_LEDGER := $(BUILD)/bench/bench_ledger

$(BENCH_LEDGER): $(BUILD)/obj/tests/bench/bench_ledger.o $(CORE_OBJS)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $^ -lpthread -ldl

.PHONY: bench bench-cpu
bench: $(LIB) $(LAUNCHER) $(BENCH_LEDGER)
	$(Q)sh tests/bench/run.sh $(BUILD)

bench-cpu: $(BENCH_LEDGER) $(LIB) $(BUILD)/fakecuda/prog_linked
	$(Q)$(BENCH_LEDGER)
	$(Q)sh tests/bench/standin.sh $(BUILD)
