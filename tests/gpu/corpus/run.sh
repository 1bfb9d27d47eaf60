#!/bin/sh
# The corpus of correct real programs (issue: no error the program never saw). Each runs
# natively, then under `graphcheck --error-exitcode=1`; a program passes when its exit status
# is the native one and graphcheck recorded no error. Usage (on a GPU machine, from the repo
# root, after `make`): sh tests/gpu/corpus/run.sh OUT_DIR. Prints one line a program and
# "N passed, N failed". Programs whose Python package is missing are skipped.
# CORPUS_ONLY="NAME ...": only those cases.
set -u
OUT=${1:-tests/gpu/logs/corpus}
GC=${GC:-build/graphcheck}
DIR=$(dirname "$0")
BIN=/tmp/graphcheck-corpus-bin
mkdir -p "$OUT" "$BIN"
passed=0 failed=0 skipped=0

nvcc -g -o "$BIN/graph_memory_ok" "$DIR/graph_memory_ok.cu" || exit 2
nvcc -g -o "$BIN/thread_first_alloc" "$DIR/thread_first_alloc.cu" || exit 2
nvcc -g -cudart shared -o "$BIN/thread_first_alloc_shared" "$DIR/thread_first_alloc.cu" || exit 2

# case NAME ENV-ASSIGNMENTS PROGRAM [ARGS]
case_() {
	name=$1 envs=$2; shift 2
	case " ${CORPUS_ONLY:-$name} " in *" $name "*) ;; *) return ;; esac
	env $envs "$@" > "$OUT/$name.native.out" 2>&1
	native=$?
	rm -f "$OUT/$name.json"
	env $envs "$GC" --error-exitcode=1 --json-file="$OUT/$name.json" \
		--log-file="$OUT/$name.txt" -- "$@" > "$OUT/$name.out" 2>&1
	got=$?
	errors=$(grep -c '"severity":"error"' "$OUT/$name.json" 2>/dev/null)
	rules=$(grep -o '"rule":"[a-z-]*"' "$OUT/$name.json" 2>/dev/null | sed 's/"rule":"//; s/"//' |
		sort | uniq -c | tr -s ' \n' ' ')
	summary=$(grep -m1 'errors,' "$OUT/$name.txt" | sed 's/^==graphcheck== //')
	if [ "$got" = "$native" ] && [ "${errors:-0}" = 0 ]; then
		passed=$((passed + 1)); verdict=ok
	else
		failed=$((failed + 1)); verdict=FAIL
	fi
	echo "$verdict $name: exit $got (native $native); ${summary:-no summary}; records:${rules:- none}"
}

py() { python3 -c "import $1" 2>/dev/null; }

case_ graph_memory_ok "" "$BIN/graph_memory_ok"
case_ thread_first_alloc "" "$BIN/thread_first_alloc"
case_ thread_first_alloc_shared "" "$BIN/thread_first_alloc_shared"
if py torch; then
	for be in cudaMallocAsync native; do
		case_ "torch_train_$be" "PYTORCH_CUDA_ALLOC_CONF=backend:$be" python3 "$DIR/torch_train.py"
		case_ "torch_graph_train_$be" "PYTORCH_CUDA_ALLOC_CONF=backend:$be" \
			python3 "$DIR/torch_graph_train.py"
	done
	# reduce-overhead's CUDA graph trees refuse the cudaMallocAsync backend in PyTorch 2.11
	# ("cudaMallocAsync does not yet support checkPoolLiveAllocations"), natively too.
	case_ torch_compile_native "PYTORCH_CUDA_ALLOC_CONF=backend:native" python3 "$DIR/torch_compile.py"
	case_ torch_graph_cudaMallocAsync "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync" \
		python3 "$DIR/../torch_graph.py"
else
	skipped=$((skipped + 1)); echo "skip torch programs: no torch"
fi
if py cupy; then
	case_ cupy_graph "" python3 "$DIR/../cupy_graph.py"
	case_ cupy_async_graph "" python3 "$DIR/cupy_async_graph.py"
else
	skipped=$((skipped + 1)); echo "skip cupy programs: no cupy"
fi
if py jax; then
	case_ jax_cuda_async "XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async XLA_PYTHON_CLIENT_PREALLOCATE=false" \
		python3 "$DIR/jax_async.py"
else
	skipped=$((skipped + 1)); echo "skip jax program: no jax"
fi
# Memory shared between processes through an exportable pool (NVIDIA's
# streamOrderedAllocationIPC pattern): the child frees its import, as the API requires.
nvcc -g -o "$BIN/ipc_pool_ok" "$DIR/ipc_pool_ok.cu" && case_ ipc_pool_ok "" "$BIN/ipc_pool_ok"
# Stream order (issue 14): correct multi-stream programs.
nvcc -g -o "$BIN/streams_ok" "$DIR/streams_ok.cu" && case_ streams_ok "" "$BIN/streams_ok"
nvcc -g --default-stream per-thread -o "$BIN/streams_ok_ptds" "$DIR/streams_ok.cu" &&
	case_ streams_ok_ptds "" "$BIN/streams_ok_ptds"
# Streams ordered by flags (stream memory operations), host functions behind them, a graph's
# event-record node (session 16's open waits).
nvcc -g -o "$BIN/flags_ok" "$DIR/flags_ok.cu" && case_ flags_ok "" "$BIN/flags_ok"
nvcc -g -o "$BIN/threads_pool_ok" "$DIR/threads_pool_ok.cu" &&
	case_ threads_pool_ok "" "$BIN/threads_pool_ok"
if py torch; then
	for be in cudaMallocAsync native; do
		case_ "torch_streams_$be" "PYTORCH_CUDA_ALLOC_CONF=backend:$be" python3 "$DIR/torch_streams.py"
	done
fi
if py cupy; then
	case_ cupy_streams "" python3 "$DIR/cupy_streams.py"
fi
# Our programs making the API call sequences of NVIDIA cuda-samples (graphMemoryNodes,
# graphMemoryFootprint, streamOrderedAllocation, graphConditionalNodes, simpleCudaGraphs,
# jacobiCudaGraphs, cudaGraphsPerfScaling), written anew: sample_*.cu, sample_common.h.
for s in graph_memory_nodes graph_memory_footprint stream_ordered_allocation \
	graph_conditional_nodes simple_cuda_graphs jacobi_graphs graphs_perf_scaling; do
	if nvcc -g -o "$BIN/sample_$s" "$DIR/sample_$s.cu"; then
		case_ "sample_$s" "" "$BIN/sample_$s"
	else
		failed=$((failed + 1)); echo "FAIL sample_$s: does not build"
	fi
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
