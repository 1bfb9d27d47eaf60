# graphcheck: `make` builds what this machine can build, `make test` runs the CPU tests.
# `make V=1` prints full commands; `make SAN=asan|tsan` builds into build-asan/ or build-tsan/.

CC      ?= cc
CFLAGS  ?= -O2 -g
LDFLAGS ?=
PREFIX  ?= /usr/local
SAN     ?=
NVCC_FLAGS ?= -g -lineinfo

ifeq ($(SAN),)
BUILD   ?= build
SANFLAGS :=
else ifeq ($(SAN),asan)
BUILD   ?= build-asan
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else ifeq ($(SAN),tsan)
BUILD   ?= build-tsan
SANFLAGS := -fsanitize=thread
else
$(error SAN must be empty, asan or tsan (got '$(SAN)'))
endif

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' '$(1)' '$(2)';
endif

# CUDA: CUDA_HOME, then nvcc on PATH, then /usr/local/cuda.
NVCC_ON_PATH := $(shell command -v nvcc 2>/dev/null)
CUDA_HOME ?= $(if $(NVCC_ON_PATH),$(patsubst %/bin/nvcc,%,$(realpath $(NVCC_ON_PATH))),/usr/local/cuda)
CUDA_INC  := $(CUDA_HOME)/include
NVCC      := $(wildcard $(CUDA_HOME)/bin/nvcc)
ifeq ($(wildcard $(CUDA_INC)/cuda.h),)
ifneq ($(filter-out deps help clean,$(or $(MAKECMDGOALS),all)),)
$(error cuda.h not found under '$(CUDA_HOME)/include': set CUDA_HOME to the CUDA Toolkit root, e.g. make CUDA_HOME=/usr/local/cuda-13.0)
endif
endif

WARN := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wformat=2 -Wundef -Wno-unused-parameter
# -MMD -MP: each object's header dependencies in a .d file beside it (included at the end).
BASE_CFLAGS := $(WARN) -D_GNU_SOURCE -I. -I$(CUDA_INC) $(CFLAGS) $(SANFLAGS) -MMD -MP
PIC := -fPIC -fvisibility=hidden
# Every symbol resolved at link time, except in sanitizer builds (clang leaves the runtime
# to the executable).
ZDEFS := $(if $(SAN),,-Wl,-z,defs)

VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

.PHONY: all run test deps install clean demo gate bench fuzz help
.SECONDARY:
all:

# ---- the preloaded object ---------------------------------------------------
LIB_SRCS := $(filter-out interpose/graphcheck.c,$(wildcard interpose/*.c))
LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/pic/%.o,$(LIB_SRCS))
LIB      := $(BUILD)/libgraphcheck.so
LAUNCHER := $(BUILD)/graphcheck

# The ledger and what it is built on: also the fuzzer's list (tests/fuzz/fuzz_ledger.mk).
LEDGER_SRCS := interpose/ledger.c interpose/ledger_store.c interpose/ledger_graph.c interpose/ledger_rules.c \
               interpose/ledger_restrict.c interpose/ledger_leaks.c interpose/ledger_uses.c \
               interpose/dead_ranges.c interpose/ledger_pending.c interpose/rule_table.c \
               interpose/hash_table.c interpose/slab.c interpose/ledger_capture.c \
               interpose/ledger_graphmem.c interpose/ledger_order.c interpose/stream_clock.c \
               interpose/spin.c
# The plain modules (all but the hooks, the driver lookup, the process hub and its sides of
# uses, graph nodes and graph memory, which ask the driver) are also linked into the tests
# and the report tool.
CORE_SRCS := $(filter-out interpose/hooks.c interpose/driver.c interpose/hub.c interpose/uses.c \
                          interpose/kernel_args.c interpose/graph_nodes.c interpose/graphmem.c, \
                          $(LIB_SRCS))
CORE_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(CORE_SRCS))

# Under TSan, dlsym is called by the runtime's own start-up, before it can record a function
# entry: driver.c (graphcheck's dlsym) is built without entry/exit hooks, its accesses still
# checked. With them the object crashes in any program it is preloaded into.
$(BUILD)/obj/pic/interpose/driver.o: FILE_CFLAGS := $(if $(filter tsan,$(SAN)),-fno-sanitize-thread-func-entry-exit)
# The wrappers make no tail call: a wrapper whose not-entered path jumps to the driver must put
# the stack-passed arguments back in their slots for it, so the compiler holds them in saved
# registers from entry on, which costs every call (3 instructions a launch).
$(BUILD)/obj/pic/interpose/hooks.o: FILE_CFLAGS := -fno-optimize-sibling-calls

$(BUILD)/obj/pic/%.o: %.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(FILE_CFLAGS) $(PIC) -DGC_VERSION='"$(VERSION)"' -c -o $@ $<

$(BUILD)/obj/%.o: %.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) -DGC_VERSION='"$(VERSION)"' -c -o $@ $<

# VERSION reaches the objects whose source names GC_VERSION (and what links them).
VERSION_SRCS := $(shell grep -l GC_VERSION interpose/*.c report/*.c 2>/dev/null)
$(patsubst %.c,$(BUILD)/obj/%.o,$(VERSION_SRCS)) $(patsubst %.c,$(BUILD)/obj/pic/%.o,$(filter interpose/%,$(VERSION_SRCS))): VERSION

# The version script comes from the same table as the wrappers, so they cannot disagree.
$(BUILD)/exports.map: interpose/exports.map.in interpose/hooks.def
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -E -P -I. -x c $< -o $@

$(LIB): $(LIB_OBJS) $(BUILD)/exports.map
	$(call msg,LD,$@)
	$(Q)$(CC) -shared $(SANFLAGS) $(LDFLAGS) -Wl,--version-script=$(BUILD)/exports.map \
		$(ZDEFS) -Wl,-soname,libgraphcheck.so -o $@ $(LIB_OBJS) -ldl -lpthread

# The launcher shows outside strings (paths, arguments) in its messages as the object does.
$(LAUNCHER): $(BUILD)/obj/interpose/graphcheck.o $(BUILD)/obj/interpose/textbuf.o
	$(call msg,LD,$@)
	$(Q)$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $^

all: $(LIB) $(LAUNCHER)

include tests/tests.mk
-include tests/fakecuda/fakecuda.mk
-include report/report.mk
-include demo/demo.mk
-include tests/bench/bench.mk
-include tests/fuzz/fuzz_ledger.mk
-include tests/fuzz/fuzz_dead_ranges.mk
-include tests/reliability/reliability.mk
-include tests/noise/noise.mk
$(eval $(suite_rules))

# ---- the main job -------------------------------------------------------------
# With a GPU: the demo gate. Without: the seed pipeline's driver calls run under graphcheck
# against the stand-in driver, then graphcheck-report on its log.
run: all
	@if nvidia-smi >/dev/null 2>&1; then $(MAKE) --no-print-directory gate; else \
		echo "no GPU here: the seed pipeline's driver calls under graphcheck, on the stand-in driver."; \
		echo "They launch NULL kernels (no module is loaded), which the stand-in refuses with 400 as"; \
		echo "the H200 does (api-error, capture-dropped-call); the free-side records are the seed's."; \
		rm -f $(BUILD)/seed.json; \
		$(LAUNCHER) --log-file=/dev/null --json-file=$(BUILD)/seed.json -- \
			$(BUILD)/fakecuda/prog_linked seed >/dev/null; \
		$(REPORT) --fail-on=never $(BUILD)/seed.json; fi

# ---- housekeeping -----------------------------------------------------------
DEB_PKGS := libcmocka-dev libjansson-dev libdw-dev libelf-dev jq clang libclang-rt-14-dev
DEB_PKGS += valgrind  # make bench-cpu: instructions per call (callgrind)
DEB_PKGS += python3   # tests/python: Python frames (else those runs are skipped)
DEB_PKGS += libpython3-dev  # tests/python: a C program that loads libpython (else skipped)
deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else echo "deps: all present"; fi

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(LIB) $(DESTDIR)$(PREFIX)/lib/libgraphcheck.so
	install -m 755 $(LAUNCHER) $(DESTDIR)$(PREFIX)/bin/graphcheck
	$(if $(wildcard $(REPORT)),install -m 755 $(REPORT) $(DESTDIR)$(PREFIX)/bin/graphcheck-report)

clean:
	rm -rf build build-asan build-tsan

# Header dependencies written by -MMD.
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

help:
	@echo "make            build libgraphcheck.so, graphcheck, graphcheck-report, tests, demo"
	@echo "make run        the main job: the demo gate on a GPU, else the seed under graphcheck on the stand-in"
	@echo "make test       run the CPU tests (SAN=asan|tsan for sanitizer builds)"
	@echo "make test-NAME  one suite (test-ledger, test-run-fake, test-durability ...) or a"
	@echo "                directory's scripts (test-interpose, test-reliability ...)"
	@echo "make deps       install the Debian packages the build needs"
	@echo "make demo       build the demo programs (needs nvcc)"
	@echo "make gate       run the demo programs under graphcheck (needs a GPU: without one every program fails as unchecked)"
	@echo "make install    PREFIX=$(PREFIX)"
