# The dead-range index against its implementation before the front (tests/fuzz/
# fuzz_dead_ranges.c). Included by the top Makefile after report/report.mk (BUILD, CC, WARN,
# BASE_CFLAGS, LDFLAGS, SANFLAGS, the $(BUILD)/obj/%.o rule, Q, msg).
#   make fuzz-dead-ranges   libFuzzer (clang) for $(FUZZ_SECONDS); new inputs go to
#                           $(BUILD)/fuzz/dead_corpus, a failing one to $(BUILD)/fuzz/dead-crash-*
# The same file with -DGC_FUZZ_DEAD_MAIN is a plain program running 200,000 seeded random
# operations through the same checks: part of `make test` (any SAN).
FUZZ_DEAD := $(BUILD)/fuzz/fuzz_dead_ranges
FUZZ_DEAD_SRCS := interpose/dead_ranges.c interpose/spin.c

$(FUZZ_DEAD): tests/fuzz/fuzz_dead_ranges.c $(FUZZ_DEAD_SRCS) interpose/dead_ranges.h interpose/spin.h
	$(call msg,FUZZCC,$@)
	@mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(WARN) -D_GNU_SOURCE -I. -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -o $@ tests/fuzz/fuzz_dead_ranges.c $(FUZZ_DEAD_SRCS)

.PHONY: fuzz-dead-ranges
fuzz: fuzz-dead-ranges
fuzz-dead-ranges: $(FUZZ_DEAD)
	@mkdir -p $(BUILD)/fuzz/dead_corpus
	$(FUZZ_DEAD) -max_total_time=$(FUZZ_SECONDS) -max_len=16002 -timeout=10 \
		-print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/dead- $(BUILD)/fuzz/dead_corpus

FUZZ_DEAD_REPLAY := $(BUILD)/tests/fuzz_dead_ranges_replay
$(FUZZ_DEAD_REPLAY): tests/fuzz/fuzz_dead_ranges.c interpose/dead_ranges.h \
                     $(patsubst %.c,$(BUILD)/obj/%.o,$(FUZZ_DEAD_SRCS))
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) -DGC_FUZZ_DEAD_MAIN $(LDFLAGS) -o $@ tests/fuzz/fuzz_dead_ranges.c \
		$(patsubst %.c,$(BUILD)/obj/%.o,$(FUZZ_DEAD_SRCS)) -lpthread

TESTS += $(FUZZ_DEAD_REPLAY)
all: $(FUZZ_DEAD_REPLAY)
