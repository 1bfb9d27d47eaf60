# Records the program never saw (a runtime's retried 201) and suppressions, end to end
# through the stand-in driver (tests/noise). Included by the top Makefile after
# tests/fakecuda/fakecuda.mk (FC_OUT).
NOISE_OUT  := $(BUILD)/noise
NOISE_PROG := $(NOISE_OUT)/ctx_prog

$(NOISE_OUT)/obj/%.o: tests/noise/%.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) -c -o $@ $<

# -rdynamic: bad_free is named in records (fun:bad_free); DT_RPATH as for rel_prog.
$(NOISE_PROG): $(NOISE_OUT)/obj/ctx_prog.o $(FC_OUT)/libcuda.so
	$(call msg,LD,$@)
	$(Q)$(CC) $(SANFLAGS) $(LDFLAGS) -rdynamic -o $@ $(filter %.o,$^) -L$(FC_OUT) -lcuda \
		-lpthread -Wl,--disable-new-dtags -Wl,-rpath,'$$ORIGIN/../fakecuda'

# supp_prog and its library (tests/noise/supp_prog.c): names an entry writes literally. No
# -rdynamic: the program's own frames have no symbol (obj: lines). The suite copies the
# program elsewhere, so both find the library and the driver through LD_LIBRARY_PATH.
SUPP_LIB  := $(NOISE_OUT)/libsupp_names.so
SUPP_PROG := $(NOISE_OUT)/supp_prog

$(NOISE_OUT)/obj/supp_lib.o: tests/noise/supp_prog.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(PIC) -DSUPP_LIB -c -o $@ $<

$(SUPP_LIB): $(NOISE_OUT)/obj/supp_lib.o $(FC_OUT)/libcuda.so
	$(call msg,LD,$@)
	$(Q)$(CC) -shared $(SANFLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) -L$(FC_OUT) -lcuda

$(SUPP_PROG): $(NOISE_OUT)/obj/supp_prog.o $(SUPP_LIB) $(FC_OUT)/libcuda.so
	$(call msg,LD,$@)
	$(Q)$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) -L$(NOISE_OUT) -lsupp_names \
		-L$(FC_OUT) -lcuda

all: $(NOISE_PROG) $(SUPP_PROG)

TEST_SCRIPTS += tests/noise/retry.sh tests/noise/suppressions.sh
