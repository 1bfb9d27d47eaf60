# CPU tests. Each binary in TESTS runs from the repo root; each script in TEST_SCRIPTS runs
# as `sh SCRIPT BUILD_DIR` and ends with an "N passed, N failed" line.
TESTS ?=
TEST_SCRIPTS ?=
TEST_LIBS := -lcmocka -ljansson -lpthread -ldl

UNIT_TESTS := ledger log options table dead_ranges suppress
TESTS += $(patsubst %,$(BUILD)/tests/test_%,$(UNIT_TESTS))
TEST_SCRIPTS += tests/interpose/check_exports.sh

$(BUILD)/tests/test_%: $(BUILD)/obj/tests/test_%.o $(CORE_OBJS)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $^ $(TEST_LIBS)

all: $(TESTS)

test: all $(LIB)
	@failed=0; \
	for t in $(TESTS); do \
		echo "== $$t"; \
		$$t || failed=$$((failed + 1)); \
	done; \
	for s in $(TEST_SCRIPTS); do \
		echo "== $$s"; \
		sh $$s $(BUILD) || failed=$$((failed + 1)); \
	done; \
	if [ $$failed -ne 0 ]; then echo "make test: $$failed suite(s) failed"; exit 1; fi; \
	echo "make test: all suites passed"

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
