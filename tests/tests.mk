# CPU tests. Each binary in TESTS runs from the repo root; each script in TEST_SCRIPTS runs
# as `sh SCRIPT BUILD_DIR` and ends with an "N passed, N failed" line (tests/run_suites.sh
# runs them). `make test` runs every suite; `make test-NAME` one (NAME: the binary without
# test_, or the script's name, '_' as '-': test-ledger, test-run-fake, test-durability ...);
# `make test-DIR` the scripts of tests/DIR (test-interpose, test-reliability ...).
TESTS ?=
TEST_SCRIPTS ?=
TEST_LIBS := -lcmocka -ljansson -lpthread -ldl

UNIT_TESTS := ledger log options table dead_ranges suppress ledger_order
TESTS += $(patsubst %,$(BUILD)/tests/test_%,$(UNIT_TESTS))
TEST_SCRIPTS += tests/interpose/check_exports.sh

# The kernel-layout table is the hub's (it asks the driver): its test links it alone.
TESTS += $(BUILD)/tests/test_kernel_args
$(BUILD)/tests/test_kernel_args: $(BUILD)/obj/tests/test_kernel_args.o $(BUILD)/obj/interpose/kernel_args.o
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $^ $(TEST_LIBS)

$(BUILD)/tests/test_%: $(BUILD)/obj/tests/test_%.o $(CORE_OBJS)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $^ $(TEST_LIBS)

# The stream model's races, each forced at one point: calls between the ledger's files
# wrapped (ld --wrap), so that another thread's events run inside a call, between its steps.
TESTS += $(BUILD)/tests/test_ledger_races
RACE_POINTS := gc_order_free_checked gc_order_unwatch gc_dead_ranges_add
, := ,
$(BUILD)/tests/test_ledger_races: $(BUILD)/obj/tests/test_ledger_races.o $(CORE_OBJS)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SANFLAGS) $(LDFLAGS) $(addprefix -Wl$(,)--wrap=,$(RACE_POINTS)) -o $@ $^ \
		$(TEST_LIBS)

# The stream clocks' internals: the test includes stream_clock.c (its statics) and links
# the rest.
TESTS += $(BUILD)/tests/test_stream_clock
$(BUILD)/tests/test_stream_clock: $(BUILD)/obj/tests/test_stream_clock.o \
		$(filter-out $(BUILD)/obj/interpose/stream_clock.o,$(CORE_OBJS))
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $^ $(TEST_LIBS)

# The Python stack reader against interpreters laid out by the test, which exports the
# symbols the reader looks up (-rdynamic).
TESTS += $(BUILD)/tests/test_pystack
$(BUILD)/tests/test_pystack: $(BUILD)/obj/tests/test_pystack.o $(BUILD)/obj/interpose/pystack.o \
		$(BUILD)/obj/interpose/safe_read.o
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SANFLAGS) $(LDFLAGS) -rdynamic -o $@ $^ $(TEST_LIBS)

# Reads of memory that may not be mapped, against pages the test maps and unmaps.
TESTS += $(BUILD)/tests/test_safe_read
$(BUILD)/tests/test_safe_read: $(BUILD)/obj/tests/test_safe_read.o $(BUILD)/obj/interpose/safe_read.o
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $^ $(TEST_LIBS)

# graph_nodes.c's order check against graphs the test lays out (the driver's node queries,
# the hub's report and the kernels' layouts are the test's).
TESTS += $(BUILD)/tests/test_graph_nodes
$(BUILD)/tests/test_graph_nodes: $(BUILD)/obj/tests/test_graph_nodes.o $(BUILD)/obj/interpose/graph_nodes.o
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $^ $(TEST_LIBS)

all: $(TESTS)

# The object against the stand-in driver (tests/fakecuda/fakecuda.mk builds both).
TEST_SCRIPTS += tests/interpose/run_fake.sh
IP_PROGS := $(BUILD)/fakecuda/dlsym_versions
# (fakecuda.mk is included after this file: name the stand-in by its path.)
$(BUILD)/fakecuda/dlsym_versions: tests/interpose/dlsym_versions.c $(BUILD)/fakecuda/libcuda.so.1
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) -o $@ $< -ldl -Wl,--disable-new-dtags,-rpath,'$$ORIGIN'
all: $(IP_PROGS)
TEST_SCRIPTS += tests/traces/replay.sh tests/traces/fidelity.sh
TEST_SCRIPTS += tests/python/py_records.sh

# The suite targets, made once every .mk file has added its suites (the Makefile calls this
# after its includes).
suite_name = $(subst _,-,$(patsubst test_%,%,$(basename $(notdir $(1)))))
suite_dir = $(notdir $(patsubst %/,%,$(dir $(1))))
SUITE_DIRS = $(sort $(foreach t,$(TEST_SCRIPTS),$(call suite_dir,$(t))))
# A binary named like a directory (test_report, tests/report/) runs with its scripts.
SOLO_TESTS = $(filter-out $(foreach d,$(SUITE_DIRS),%/test_$(d)),$(TESTS))
define suite_rules
.PHONY: test $(foreach t,$(SOLO_TESTS) $(TEST_SCRIPTS),test-$(call suite_name,$(t))) \
        $(foreach d,$(SUITE_DIRS),test-$(d))
test: all
	@sh tests/run_suites.sh $(BUILD) $(TESTS) $(TEST_SCRIPTS)
$(foreach t,$(SOLO_TESTS),
test-$(call suite_name,$(t)): $(t)
	@sh tests/run_suites.sh $(BUILD) $(t))
$(foreach t,$(TEST_SCRIPTS),
test-$(call suite_name,$(t)): all
	@sh tests/run_suites.sh $(BUILD) $(t))
$(foreach d,$(SUITE_DIRS),
test-$(d): all
	@sh tests/run_suites.sh $(BUILD) $(filter %/test_$(d),$(TESTS)) $(filter tests/$(d)/%,$(TEST_SCRIPTS)))
endef
