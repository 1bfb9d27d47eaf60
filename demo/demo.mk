# The demo programs: the seed pipeline, its fix, and one program per rule (demo/rules/<id>.cu,
# each committing its rule's misuse once, or doing the same work correctly with --clean).
# Included by the top Makefile, which defines BUILD, NVCC (empty without nvcc), NVCC_FLAGS,
# Q and msg. `make demo` builds them; `make gate` runs them under graphcheck (needs a GPU).

DEMO_RULES := free-foreign-in-capture free-unmaterialized free-owned-by-graph relaunch-unfreed \
              double-free free-unknown instantiate-twice capture-invalidated leak-at-exit api-error \
              use-unmaterialized use-after-free memory-node-restriction pool-destroyed-live \
              launch-stale-pointer launch-reused-pointer use-outside-graph-lifetime \
              unordered-use unordered-free
DEMO_RULES += capture-dropped-call
DEMO_PROGS := $(BUILD)/demo/seed_pipeline $(BUILD)/demo/seed_pipeline_fixed \
              $(patsubst %,$(BUILD)/demo/rules/%,$(DEMO_RULES))

$(BUILD)/demo/%: demo/%.cu
	$(call msg,NVCC,$@)
	@mkdir -p $(@D)
	$(Q)$(NVCC) $(NVCC_FLAGS) -o $@ $< -lcuda

ifneq ($(NVCC),)
demo: $(DEMO_PROGS)
ifeq ($(SAN),)
all: demo   # sanitizer builds are for the C code; the CUDA programs need building once
endif
else
demo:
	@echo "demo: nvcc not found under '$(CUDA_HOME)/bin': set CUDA_HOME to the CUDA Toolkit root" >&2
	@exit 1
endif

gate: all demo
	sh demo/gate.sh $(BUILD)
