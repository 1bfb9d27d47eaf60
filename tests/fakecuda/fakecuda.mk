# fakecuda: a stand-in libcuda.so.1 for machines without a GPU, and test programs that
# reach it the three ways real programs reach libcuda. Included by the top Makefile.

FC_SRC   := tests/fakecuda
FC_OUT   := $(BUILD)/fakecuda
FAKECUDA := $(FC_OUT)/libcuda.so.1

# ---- the driver --------------------------------------------------------------------
# __CUDA_API_VERSION_INTERNAL makes cuda.h declare every spelling (base, _v2, _v3, _ptsz)
# under its own name instead of renaming calls, so each can be defined and exported.
FC_LIB_SRCS := $(wildcard $(FC_SRC)/fakecuda*.c)
FC_LIB_OBJS := $(patsubst $(FC_SRC)/%.c,$(FC_OUT)/obj/%.o,$(FC_LIB_SRCS))

$(FC_OUT)/obj/%.o: $(FC_SRC)/%.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(PIC) -D__CUDA_API_VERSION_INTERNAL -c -o $@ $<

$(FAKECUDA): $(FC_LIB_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared $(SANFLAGS) $(LDFLAGS) $(ZDEFS) -Wl,-soname,libcuda.so.1 -o $@ \
		$(FC_LIB_OBJS) -lpthread

# `-lcuda` finds libcuda.so; the programs record the soname, libcuda.so.1.
$(FC_OUT)/libcuda.so: $(FAKECUDA)
	$(Q)ln -sf libcuda.so.1 $@

# ---- the test programs ---------------------------------------------------------------
# scenarios.c is built three ways: calls by name (linked), the same with per-thread
# default streams (cuda.h picks the _ptsz spellings), and calls through a pointer table
# that prog_dlsym and prog_procaddr fill (see progs/scenarios.h).
$(FC_OUT)/obj/progs/table/%.o: $(FC_SRC)/progs/%.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) -c -o $@ $<

$(FC_OUT)/obj/progs/linked/%.o: $(FC_SRC)/progs/%.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) -DFC_LINKED -c -o $@ $<

$(FC_OUT)/obj/progs/linked_ptds/%.o: $(FC_SRC)/progs/%.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) -DFC_LINKED -DCUDA_API_PER_THREAD_DEFAULT_STREAM -c -o $@ $<

# rpath $ORIGIN: the programs find the fake beside them, for -lcuda and for dlopen alike.
# As DT_RPATH, not DT_RUNPATH: glibc searches the executable's DT_RPATH for a dlopen from
# any library without a RUNPATH of its own, such as libasan's dlopen interceptor (gcc
# SAN=asan) or a preloaded checker that dlopens libcuda.so.1 itself.
FC_PROG_LD = $(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) \
	-Wl,--disable-new-dtags -Wl,-rpath,'$$ORIGIN'

$(FC_OUT)/prog_linked: $(FC_OUT)/obj/progs/linked/prog_linked.o \
		$(FC_OUT)/obj/progs/linked/scenarios.o $(FC_OUT)/libcuda.so
	$(call msg,LD,$@)
	$(Q)$(FC_PROG_LD) -L$(FC_OUT) -lcuda -lpthread

$(FC_OUT)/prog_linked_ptds: $(FC_OUT)/obj/progs/linked_ptds/prog_linked.o \
		$(FC_OUT)/obj/progs/linked_ptds/scenarios.o $(FC_OUT)/libcuda.so
	$(call msg,LD,$@)
	$(Q)$(FC_PROG_LD) -L$(FC_OUT) -lcuda -lpthread

$(FC_OUT)/prog_dlsym: $(FC_OUT)/obj/progs/table/prog_dlsym.o \
		$(FC_OUT)/obj/progs/table/scenarios.o $(FAKECUDA)
	$(call msg,LD,$@)
	$(Q)$(FC_PROG_LD) -ldl -lpthread

$(FC_OUT)/prog_procaddr: $(FC_OUT)/obj/progs/table/prog_procaddr.o \
		$(FC_OUT)/obj/progs/table/scenarios.o $(FAKECUDA)
	$(call msg,LD,$@)
	$(Q)$(FC_PROG_LD) -ldl -lpthread

# Every hooked launch, copy and set spelling by its own name (the list is hooks.def's).
$(FC_OUT)/obj/progs/spellings/%.o: $(FC_SRC)/progs/%.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) -D__CUDA_API_VERSION_INTERNAL -c -o $@ $<

$(FC_OUT)/prog_spellings: $(FC_OUT)/obj/progs/spellings/prog_spellings.o $(FC_OUT)/libcuda.so
	$(call msg,LD,$@)
	$(Q)$(FC_PROG_LD) -L$(FC_OUT) -lcuda

FAKECUDA_PROGS := $(FC_OUT)/prog_linked $(FC_OUT)/prog_linked_ptds $(FC_OUT)/prog_dlsym \
                  $(FC_OUT)/prog_procaddr $(FC_OUT)/prog_spellings

# The hot calls in loops, for counting graphcheck's cost per call (tests/bench/callgrind.sh).
$(FC_OUT)/prog_bench: $(FC_OUT)/obj/progs/linked/prog_bench.o $(FC_OUT)/libcuda.so
	$(call msg,LD,$@)
	$(Q)$(FC_PROG_LD) -L$(FC_OUT) -lcuda -lpthread
FAKECUDA_PROGS += $(FC_OUT)/prog_bench

all: $(FAKECUDA) $(FAKECUDA_PROGS)

# `make test` runs the programs against the fake and checks the codes (check_fakecuda.sh).
TEST_SCRIPTS += $(FC_SRC)/check_fakecuda.sh
