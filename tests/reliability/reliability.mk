# Reliability tests (tests/reliability): threads, fork, durability of the log, injected
# driver faults, bad options and log paths, safety of the preload. Included by the top
# Makefile after tests/fakecuda/fakecuda.mk (FC_OUT, FAKECUDA). Each script runs as
# `sh SCRIPT BUILD_DIR` from `make test`.
REL_SRC  := tests/reliability
REL_OUT  := $(BUILD)/reliability
REL_PROG := $(REL_OUT)/rel_prog

$(REL_OUT)/obj/rel_prog.o: $(REL_SRC)/rel_prog.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(REL_SLOW_LOADER) -c -o $@ $<

# DT_RPATH (not RUNPATH) $ORIGIN/../fakecuda: the stand-in is found for -lcuda and for a
# dlopen made by a preloaded library, as for the programs of tests/fakecuda. Without a
# sanitizer, its own dl_iterate_phdr, exported: fork-in-loader slows the loader for
# graphcheck's calls too (the sanitizers' runtimes call dl_iterate_phdr before the program
# can forward it).
REL_SLOW_LOADER := $(if $(SAN),,-DREL_SLOW_LOADER)
REL_EXPORT := $(if $(SAN),,-Wl,--export-dynamic-symbol=dl_iterate_phdr)
$(REL_PROG): $(REL_OUT)/obj/rel_prog.o $(FC_OUT)/libcuda.so
	$(call msg,LD,$@)
	$(Q)$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) -L$(FC_OUT) -lcuda -lpthread -ldl \
		-Wl,--disable-new-dtags -Wl,-rpath,'$$ORIGIN/../fakecuda' $(REL_EXPORT)

# gate.sh's shim for the launcher's fork (not built under a sanitizer: the launcher's
# signal handling is what it tests, and a sanitizer's runtime must come first in LD_PRELOAD).
REL_FORK_SHIM := $(REL_OUT)/fork_signal_shim.so
$(REL_FORK_SHIM): $(REL_SRC)/fork_signal_shim.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) -fPIC -shared -o $@ $< -ldl

# ... and its shim failing large aligned allocations (graphcheck's start out of memory).
REL_OOM_SHIM := $(REL_OUT)/oom_shim.so
$(REL_OOM_SHIM): $(REL_SRC)/oom_shim.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) -fPIC -shared -o $@ $< -ldl

all: $(REL_PROG) $(if $(SAN),,$(REL_FORK_SHIM) $(REL_OOM_SHIM))

TEST_SCRIPTS += $(REL_SRC)/threads.sh $(REL_SRC)/fork.sh $(REL_SRC)/durability.sh \
                $(REL_SRC)/faults.sh $(REL_SRC)/bad_input.sh $(REL_SRC)/safety.sh \
                $(REL_SRC)/gate.sh $(REL_SRC)/exit_signal.sh $(REL_SRC)/stack.sh \
                $(REL_SRC)/records.sh $(REL_SRC)/files.sh $(REL_SRC)/stderr.sh
