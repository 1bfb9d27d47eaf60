# Records the program never saw (a runtime's retried 201) and suppressions, end to end
# through the stand-in driver (tests/noise). Included by the top Makefile after
# tests/fakecuda/fakecuda.mk (FC_OUT).
NOISE_OUT  := $(BUILD)/noise
NOISE_PROG := $(NOISE_OUT)/ctx_prog

$(NOISE_OUT)/obj/ctx_prog.o: tests/noise/ctx_prog.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) -c -o $@ $<

# -rdynamic: bad_free is named in records (fun:bad_free); DT_RPATH as for rel_prog.
$(NOISE_PROG): $(NOISE_OUT)/obj/ctx_prog.o $(FC_OUT)/libcuda.so
	$(call msg,LD,$@)
	$(Q)$(CC) $(SANFLAGS) $(LDFLAGS) -rdynamic -o $@ $(filter %.o,$^) -L$(FC_OUT) -lcuda \
		-lpthread -Wl,--disable-new-dtags -Wl,-rpath,'$$ORIGIN/../fakecuda'

all: $(NOISE_PROG)

TEST_SCRIPTS += tests/noise/retry.sh tests/noise/suppressions.sh
