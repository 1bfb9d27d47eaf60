# Fuzzing the ledger (tests/fuzz/fuzz_ledger.c). Included by the top Makefile after
# report/report.mk, which defines BUILD, CC, WARN, BASE_CFLAGS, LDFLAGS, the
# $(BUILD)/obj/%.o rule, Q and msg.
#   make fuzz          runs this fuzzer (and the report's) for $(FUZZ_SECONDS) each
#   make fuzz-ledger   this one alone; new inputs go to $(BUILD)/fuzz/ledger_corpus,
#                      a failing one to $(BUILD)/fuzz/ledger-crash-*; the inputs that once
#                      broke the ledger (tests/fuzz/ledger_crashes/) seed it, so each run
#                      begins by checking that they no longer do
# FUZZ_LEDGER_STRICT=1 adds the teardown checks for records and graphs kept forever (make
# test runs it: tests/fuzz/ledger_strict.sh), and
# FUZZ_LEDGER_IGNORE=check,... skips checks (see tests/fuzz/fuzz_ledger.c).
# The same file built with gcc and -DGC_FUZZ_LEDGER_MAIN is a plain program that runs
# seeded random inputs through the same checks: part of `make test` (any SAN), and
# `$(BUILD)/tests/fuzz_ledger_replay [-v] FILE...` replays fuzzer inputs without clang.
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang

FUZZ_LEDGER := $(BUILD)/fuzz/fuzz_ledger
FUZZ_LEDGER_CORPUS := $(BUILD)/fuzz/ledger_corpus
FUZZ_LEDGER_SRCS := $(LEDGER_SRCS)
FUZZ_LEDGER_HDRS := $(wildcard interpose/ledger*.h) interpose/rule_table.h interpose/hash_table.h \
                    interpose/slab.h
# Each allocation record its own malloc, so AddressSanitizer sees uses after release (the
# input chooses per run between this and the real slab).
FUZZ_LEDGER_WRAP := -DGC_FUZZ_LEDGER_WRAP \
	-Wl,--wrap=gc_slab_alloc,--wrap=gc_slab_release,--wrap=gc_slab_destroy
FUZZ_LEDGER_CFLAGS := $(WARN) -D_GNU_SOURCE -I. -g -O1 -fsanitize=fuzzer,address,undefined \
                      -fno-sanitize-recover=undefined

# The hash table and slab get the sanitizers but no coverage instrumentation: the table's
# bucket walks (the ledger's interior-pointer search visits every bucket) took half the
# fuzzer's time in comparison callbacks, and both have their own unit test (tests/test_table.c).
FUZZ_LEDGER_NOCOV_SRCS := interpose/hash_table.c interpose/slab.c
FUZZ_LEDGER_NOCOV := $(patsubst interpose/%.c,$(BUILD)/fuzz/obj/%_nocov.o,$(FUZZ_LEDGER_NOCOV_SRCS))

$(BUILD)/fuzz/obj/%_nocov.o: interpose/%.c interpose/%.h
	$(call msg,FUZZCC,$@)
	@mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(filter-out -fsanitize=fuzzer%,$(FUZZ_LEDGER_CFLAGS)) \
		-fsanitize=address,undefined -c -o $@ $<

$(FUZZ_LEDGER): tests/fuzz/fuzz_ledger.c $(filter-out $(FUZZ_LEDGER_NOCOV_SRCS),$(FUZZ_LEDGER_SRCS)) \
                $(FUZZ_LEDGER_NOCOV) $(FUZZ_LEDGER_HDRS)
	$(call msg,FUZZCC,$@)
	@mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_LEDGER_CFLAGS) $(FUZZ_LEDGER_WRAP) -o $@ tests/fuzz/fuzz_ledger.c \
		$(filter-out $(FUZZ_LEDGER_NOCOV_SRCS),$(FUZZ_LEDGER_SRCS)) $(FUZZ_LEDGER_NOCOV) -lpthread

.PHONY: fuzz-ledger
fuzz: fuzz-ledger
fuzz-ledger: $(FUZZ_LEDGER)
	@mkdir -p $(FUZZ_LEDGER_CORPUS)
	$(FUZZ_LEDGER) -max_total_time=$(FUZZ_SECONDS) -max_len=2049 -timeout=10 \
		-print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/ledger- $(FUZZ_LEDGER_CORPUS) \
		$(wildcard tests/fuzz/ledger_crashes)

# ---- the deterministic replay (make test) ------------------------------------------------
FUZZ_LEDGER_REPLAY := $(BUILD)/tests/fuzz_ledger_replay
FUZZ_LEDGER_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(FUZZ_LEDGER_SRCS))

$(FUZZ_LEDGER_REPLAY): tests/fuzz/fuzz_ledger.c $(FUZZ_LEDGER_HDRS) $(FUZZ_LEDGER_OBJS)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) -DGC_FUZZ_LEDGER_MAIN $(FUZZ_LEDGER_WRAP) $(LDFLAGS) -o $@ \
		tests/fuzz/fuzz_ledger.c $(FUZZ_LEDGER_OBJS) -lpthread

TESTS += $(FUZZ_LEDGER_REPLAY)
all: $(FUZZ_LEDGER_REPLAY)
# ... and the same in strict mode, seeds 1-3 (make test-ledger-strict).
TEST_SCRIPTS += tests/fuzz/ledger_strict.sh
