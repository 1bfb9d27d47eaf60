# graphcheck-report: reads graphcheck's JSON-lines logs, folds them by rule and call site,
# resolves frames with libdw and writes text, JSON, SARIF or JUnit. Included by the top
# Makefile, which defines BUILD, CC, WARN, BASE_CFLAGS, SANFLAGS, the $(BUILD)/obj/%.o rule,
# Q and msg.

REPORT := $(BUILD)/graphcheck-report
# Everything but main.c, linked with the rule table: what the tests link too.
REPORT_LIB_SRCS := report/parse.c report/read.c report/fold.c report/symbolize.c \
                   report/demangle.c report/format_text.c report/format_json.c \
                   report/format_sarif.c report/format_junit.c report/run.c report/util.c \
                   report/suppress.c
REPORT_LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(REPORT_LIB_SRCS)) \
                   $(BUILD)/obj/interpose/rule_table.o
# --replay (report/replay.c, being written separately) runs the interposer's ledger
# offline, so it brings the core modules with it.
ifneq ($(wildcard report/replay.c),)
REPORT_LIB_OBJS += $(BUILD)/obj/report/replay.o \
                   $(filter-out $(BUILD)/obj/interpose/rule_table.o,$(CORE_OBJS))
endif
REPORT_LIBS := -ljansson -ldw -lelf -ldl -lpthread

$(REPORT): $(BUILD)/obj/report/main.o $(REPORT_LIB_OBJS)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $^ $(REPORT_LIBS)

all: $(REPORT)

# ---- tests -------------------------------------------------------------------------------
# One cmocka binary from every tests/test_report*.c; the explicit rule wins over tests.mk's
# pattern, which would link the interposer's modules instead of the report's.
REPORT_TEST_SRCS := $(wildcard tests/test_report*.c)
REPORT_TEST_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(REPORT_TEST_SRCS))
REPORT_TEST := $(BUILD)/tests/test_report

# The symbolization tests need a module with known lines: a tiny program built here with
# -g -O0 (whatever CFLAGS say) and again without debug info, each printing a log line
# about its own call site.
REPORT_SYMPROGS := $(BUILD)/tests/report_symprog $(BUILD)/tests/report_symprog_nodebug

# The core modules come along so that a test can check the reader against the
# interposer's own writer (interpose/log.c).
REPORT_TEST_LINK := $(REPORT_TEST_OBJS) $(sort $(REPORT_LIB_OBJS) $(CORE_OBJS))

$(REPORT_TEST): $(REPORT_TEST_LINK) | $(REPORT_SYMPROGS)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $(REPORT_TEST_LINK) -lcmocka $(REPORT_LIBS)

$(BUILD)/tests/report_symprog: tests/report/symprog.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(WARN) -D_GNU_SOURCE -g -O0 -o $@ $< -ldl

$(BUILD)/tests/report_symprog_nodebug: tests/report/symprog.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(WARN) -D_GNU_SOURCE -g0 -O0 -o $@ $< -ldl

TESTS += $(REPORT_TEST)
TEST_SCRIPTS += tests/report/test_cli.sh tests/report/robust.sh
all: $(REPORT_TEST) $(REPORT_SYMPROGS)

# ---- fuzzing -----------------------------------------------------------------------------
# libFuzzer over the line parser and the reader, always with clang (libFuzzer is clang's).
# New inputs go to $(BUILD)/fuzz/corpus; tests/report/corpus/ only seeds it.
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZ_REPORT := $(BUILD)/fuzz/fuzz_report
FUZZ_REPORT_SRCS := tests/fuzz/fuzz_report.c report/parse.c report/read.c report/fold.c \
                    report/util.c interpose/rule_table.c
FUZZ_CFLAGS := $(WARN) -D_GNU_SOURCE -I. -g -O1 -fsanitize=fuzzer,address,undefined \
               -fno-sanitize-recover=undefined

$(FUZZ_REPORT): $(FUZZ_REPORT_SRCS) report/report.h interpose/rule_table.h
	$(call msg,FUZZCC,$@)
	@mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(FUZZ_REPORT_SRCS) -ljansson

.PHONY: fuzz-report
fuzz: fuzz-report
fuzz-report: $(FUZZ_REPORT)
	@mkdir -p $(BUILD)/fuzz/corpus
	$(FUZZ_REPORT) -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -timeout=10 \
		-artifact_prefix=$(BUILD)/fuzz/ $(BUILD)/fuzz/corpus tests/report/corpus
