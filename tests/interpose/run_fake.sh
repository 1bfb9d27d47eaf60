#!/bin/sh
# The preloaded object against the stand-in driver (tests/fakecuda), reached the three ways
# programs reach libcuda: linked symbols (also with per-thread default stream), dlopen+dlsym,
# and the runtime's cuGetProcAddress_v2 path (flags 0 and 2). For each way and scenario:
# the program's output is the same with and without graphcheck (every result passes
# through), and the rules recorded are those the real H200 run recorded
# (tests/gpu/logs/*.json). Usage: sh tests/interpose/run_fake.sh BUILD_DIR
. tests/lib.sh
preload_setup
P=$BUILD/fakecuda
# where dlsym(RTLD_DEFAULT, "puts") lands: the sanitizer runtime intercepts it
[ "$ASAN" = 1 ] && export EXPECT_PUTS_IN=libasan
[ "$TSAN" = 1 ] && export EXPECT_PUTS_IN=dlsym_versions EXPECT_NEXT_PUTS_IN=libc
# The scenarios launch NULL kernels (they load no module), which the H200 and the stand-in
# both refuse with 400: those launches' api-errors are the scenarios' own, not the seed's, and
# are left out; so are their capture-dropped-call records (a NULL launch refused inside a
# capture that stays active: the same launches, made during a capture).
rules() {
	jq -r 'select(.type == "violation")
	       | select(((.rule == "api-error" or .rule == "capture-dropped-call") and
	                 (.call | startswith("cuLaunchKernel"))) | not)
	       | .rule' "$1" 2>/dev/null | sort | uniq -c | sed 's/^ *//'
}

# Every run also writes its trace: which spellings reached graphcheck (see the end).
mkdir -p "$tmp/traces"
ntrace=0

# check NAME EXPECTED_RULES PROGRAM ARGS...
check() {
	name=$1 want=$2
	shift 2
	"$@" > "$tmp/native.out" 2>&1
	nrc=$?
	rm -f "$tmp/gc.json" "$tmp/gc.txt"
	ntrace=$((ntrace + 1))
	# UNTRACED=1: no trace file, so that records and waits take their direct path to the
	# clocks, which a trace turns off (hub.c)
	tf=$tmp/traces/$ntrace.trace
	[ "${UNTRACED:-0}" = 1 ] && tf=
	LD_PRELOAD=$PRE GRAPHCHECK_JSON_FILE=$tmp/gc.json GRAPHCHECK_LOG_FILE=$tmp/gc.txt \
		GRAPHCHECK_TRACE_FILE=$tf "$@" > "$tmp/gc.out" 2>&1
	grc=$?
	if [ "$nrc" -ne "$grc" ] || ! cmp -s "$tmp/native.out" "$tmp/gc.out"; then
		bad "$name: output or status changed under graphcheck ($nrc vs $grc)"
		diff "$tmp/native.out" "$tmp/gc.out" | head -5
		return
	fi
	got=$(rules "$tmp/gc.json")
	if [ "$got" = "$want" ]; then
		ok "$name: $(echo "$got" | tr '\n' ' ')"
	else
		bad "$name: rules differ"
		echo "  want: $(echo "$want" | tr '\n' ' ')"
		echo "  got:  $(echo "$got" | tr '\n' ' ')"
		head -c 600 "$tmp/gc.txt"
	fi
}

h200=tests/gpu/logs
# The scenarios' kernels are NULL handles with no parameter layout: the uses the H200 run
# recorded (use-*, and the graph launches' launch-*) cannot arise here and are left out of
# what is expected.
seed=$(rules $h200/seed_pipeline.json | grep -v ' use-\| launch-')
probe=$(rules $h200/misuse_probe.json)
probe_driver=$(rules $h200/probe_driver.json)
probe_driver_ptds=$(printf "3 capture-invalidated\n1 free-owned-by-graph\n1 free-unmaterialized\n1 leak-at-exit")
none=""
# `null-kernel-node` (once named `clean`, which it is not): its kernel node has no function
# (400 on the H200, tests/gpu/logs/real_null-kernel-node.out), so its free node is refused and the
# relaunches find the allocation live. graphcheck must say exactly that.
null_kernel_node=$(printf "1 api-error\n1 leak-at-exit\n2 relaunch-unfreed")
[ -n "$seed" ] && [ -n "$probe" ] || { bad "H200 logs missing under $h200"; finish; }

# `rules` on the codes the H200 gave (tests/gpu/logs/real_rules.out, which the stand-in
# matches byte for byte: check_fakecuda.sh): among them the AUTO_FREE_ON_LAUNCH exec's two
# launches over its live allocation, which are not relaunch-unfreed; and its cuGraphClone of
# a graph with memory nodes (801), which is memory-node-restriction. Its first capture ends
# with 904 (a fork not joined back), which ends the capture with no graph as 901 does (the
# H200, same log): until session 17 graphcheck kept that capture running, so the later
# cuMemAlloc refused in another capture was blamed on it too (a third capture-invalidated,
# false) and the second free of the exec's allocation after its graph was destroyed was
# blamed on capture 1's allocation at that address (free-owned-by-graph, false); that free
# is free-unknown now (the destroyed graph's record is gone).
rules=$(printf "5 api-error\n2 capture-invalidated\n1 free-owned-by-graph\n1 free-unknown\n1 instantiate-twice\n1 memory-node-restriction")
# `stream0`: with per-thread default streams, stream 0 is the thread's own and captures, so
# freeing inside it the allocation made before is free-foreign-in-capture (the _ptsz
# spellings must ask about the per-thread stream); without, the capture on the legacy stream
# is refused (900, then 401 at its end: two api-error) and the second free is a double free.
# `uses`: a copy from a graph allocation whose graph never ran (1), a kernel (a CUkernel)
# reading pool memory freed before it (0), a kernel reading a graph allocation whose graph
# never ran (0, then 700 at the synchronize and the context is lost: that use's, no other
# record). `uses-clean`: the same uses in order.
uses=$(printf "1 use-after-free\n2 use-unmaterialized")
# `stale`: a graph's kernel, memset and memcpy nodes reading memory freed after instantiate
# (one record: one allocation, one call), a node's buffer freed and allocated again at the
# same address (the warning), a graph reading another graph's allocation before that graph
# ran; then every cuGraphExec*NodeSetParams spelling and cuGraphExecUpdate point the first
# exec at live memory. `unordered`: a kernel node reading its graph's allocation with no
# edge from the allocation node nor to the free node. Their -clean twins: nothing.
stale=$(printf "1 launch-reused-pointer\n2 launch-stale-pointer")
unordered="1 use-outside-graph-lifetime"  # the second allocation at the same address adds none
stream0_ptds="1 free-foreign-in-capture"
order=$(printf "2 unordered-free\n5 unordered-use")
forgot_stream="2 unordered-use"  # x and y, launched on stream 0, allocated on a non-blocking stream
memops=$(printf "2 unordered-free\n2 unordered-use")  # a round each: the wait on A, not B
memops_misuse=$(printf "1 launch-stale-pointer\n4 unordered-use")
graph_steps=$(printf "3 unordered-free\n3 unordered-use")  # each graph on the other stream
# a child graph node's kernel reading freed memory; a wait for the event an event-record node
# recorded before cuGraphExecEventRecordNodeSetEvent gave it another; a write by a batch
# memory operation node into what it was set to write; a kernel node enabled again after its
# buffer was freed while it was disabled
child_sets=$(printf "3 launch-stale-pointer\n1 unordered-free\n1 unordered-use")
graph_uses=$(printf "2 unordered-free\n1 unordered-use")
stream0_legacy=$(printf "2 api-error\n1 double-free")
foreign_misuse=$(printf "1 double-free\n1 free-unknown")
for way in prog_linked prog_linked_ptds prog_dlsym "prog_procaddr" "prog_procaddr ptds"; do
	set -- $way
	prog=$P/$1
	extra=${2:-}
	check "$way seed" "$seed" $prog seed $extra
	check "$way seed-fixed" "$none" $prog seed-fixed $extra
	check "$way probe" "$probe" $prog probe $extra
	case $way in
	# With per-thread streams its cuMemAllocAsync on stream 0 goes to the thread's own stream:
	# it breaks no capture (one capture-invalidated fewer) and is never freed (a leak).
	*ptds) check "$way probe-driver" "$probe_driver_ptds" $prog probe-driver $extra ;;
	*) check "$way probe-driver" "$probe_driver" $prog probe-driver $extra ;;
	esac
	check "$way null-kernel-node" "$null_kernel_node" $prog null-kernel-node $extra
	check "$way rules" "$rules" $prog rules $extra
	check "$way uses" "$uses" $prog uses $extra
	check "$way uses-clean" "$none" $prog uses-clean $extra
	check "$way stale" "$stale" $prog stale $extra
	check "$way stale-clean" "$none" $prog stale-clean $extra
	check "$way unordered" "$unordered" $prog unordered $extra
	check "$way unordered-clean" "$none" $prog unordered-clean $extra
	check "$way forgot-stream" "$forgot_stream" $prog forgot-stream $extra
	# a use on a default stream: the advice names the stream argument that may be missing
	grep -q 'default stream.*If this work was meant for stream 0x[0-9a-f]*, pass that stream to the call\.$' "$tmp/gc.txt" &&
		ok "$way forgot-stream: the advice says the stream may be missing" ||
		bad "$way forgot-stream: no hint of a missing stream argument"
	check "$way forgot-stream-clean" "$none" $prog forgot-stream-clean $extra
	check "$way copies" "$none" $prog copies $extra
	check "$way memops" "$memops" $prog memops $extra
	check "$way memops-clean" "$none" $prog memops-clean $extra
	check "$way memops-early" "$none" $prog memops-early $extra
	check "$way memops-misuse" "$memops_misuse" $prog memops-misuse $extra
	check "$way memops-off" "1 unordered-use" $prog memops-off $extra
	check "$way memops-off-clean" "$none" $prog memops-off-clean $extra
	check "$way memops-copy" "1 unordered-use" $prog memops-copy $extra
	for late in late-host late-blocking late-record host-poll late-copy late-graph-poll \
		late-update; do
		check "$way $late" "$none" $prog $late $extra
	done
	case $way in
	*ptds) check "$way memops-legacy" "$none" $prog memops-legacy $extra ;;
	*) check "$way memops-legacy" "1 unordered-use" $prog memops-legacy $extra ;;
	esac
	check "$way graph-steps" "$graph_steps" $prog graph-steps $extra
	check "$way graph-steps-clean" "$none" $prog graph-steps-clean $extra
	check "$way child-sets" "$child_sets" $prog child-sets $extra
	check "$way child-sets-clean" "$none" $prog child-sets-clean $extra
	check "$way legacy-named" "$none" $prog legacy-named $extra
	UNTRACED=1  # a legacy kernel passes order on without an event then (uses.c)
	check "$way legacy-named, untraced" "$none" $prog legacy-named $extra
	UNTRACED=0
	check "$way legacy-sync" "1 unordered-free" $prog legacy-sync $extra
	check "$way legacy-sync-clean" "$none" $prog legacy-sync-clean $extra
	check "$way free-implied" "$(printf "1 unordered-free\n1 unordered-use")" $prog free-implied $extra
	check "$way free-implied-clean" "$none" $prog free-implied-clean $extra
	check "$way batch-copies" "$(printf "1 unordered-free\n3 unordered-use\n2 use-after-free")" \
		$prog batch-copies $extra
	msg=$(jq -r 'select(.type == "violation") | .message' "$tmp/gc.json" 2>/dev/null)
	case $msg in
	*"as the destination of copy 1 of the batch"*"copy 0 of a batch (its source)"* | \
	*"copy 0 of a batch (its source)"*"as the destination of copy 1 of the batch"*)
		ok "$way batch-copies: the records name the copy in its batch" ;;
	*) bad "$way batch-copies: a record lacks the copy's index: $msg" ;;
	esac
	# the attributes from copies 0, 5 and 37: t read during the call by copies 5-36 (its
	# use-after-free names copy 5, no unordered-free), t2 in stream order by 37-39 (its
	# unordered-free names the last of them)
	case $msg in
	*"as the source of copy 5 of the batch"*"copy 39 of a batch (its source)"* | \
	*"copy 39 of a batch (its source)"*"as the source of copy 5 of the batch"*)
		ok "$way batch-copies: each copy read by its own attribute's order" ;;
	*) bad "$way batch-copies: a copy not read by its attribute's order: $msg" ;;
	esac
	case $msg in
	*"copy 0 of a batch (its source), read during the call"*"the host had not waited"*)
		ok "$way batch-copies: a source read during the call, its allocation not waited for" ;;
	*) bad "$way batch-copies: no unordered-use for a source read during the call: $msg" ;;
	esac
	check "$way batch-copies-clean" "$none" $prog batch-copies-clean $extra
	# a message's additions only where true: no staging for an asynchronous copy, no stream
	# to pass to a call that takes none (forgot-stream and staged-copy: where they are)
	check "$way hints" "$(printf "2 unordered-free\n1 unordered-use")" $prog hints $extra
	! grep -q 'staged\|If this work was meant for' "$tmp/gc.txt" &&
		ok "$way hints: neither the staging nor the stream to pass is said" ||
		bad "$way hints: a hint where it is not true: $(grep -o 'staged[^.]*\|If this work[^.]*' "$tmp/gc.txt" | head -2)"
	# sources read in any order: judged as read during the call, and kept as the stream's use
	check "$way batch-any" "$(printf "2 unordered-free\n2 unordered-use")" $prog batch-any $extra
	check "$way batch-any-clean" "$none" $prog batch-any-clean $extra
	for bg in batch-gather batch3d-gather; do
		# a batch reading a freed slice: told before the call, once (the check after the call
		# finds it again and is quiet: one use event), then the same refused: told before it,
		# and its refusal (the told word again, with its result) explained by that record
		check "$way $bg" "2 use-after-free" $prog $bg $extra
		n=$(grep -c '"kind":"use","call":"cuMemcpy\(3D\)\?BatchAsync.*"result":0,.*"flags":2,' "$tf")
		[ "$n" = 2 ] && [ "$(grep -c '"before_call":true' "$tmp/gc.json")" = 2 ] &&
			[ "$(grep -c '^==graphcheck== error: use-after-free in cuMemcpy\(3D\)\?BatchAsync.* (before the call returned)$' "$tmp/gc.txt")" = 2 ] &&
			ok "$way $bg: one use event a batch before the call, the records marked so" ||
			bad "$way $bg: $n use events before the calls, or a record not marked before the call"
		replayed=$("$BUILD/graphcheck-report" --replay "$tf" 2>&1 | grep -c '(before the call returned)')
		[ "$replayed" = 2 ] && ok "$way $bg: the replayed records are marked before the call too" ||
			bad "$way $bg: replayed, $replayed records marked before the call"
		check "$way $bg-clean" "$none" $prog $bg-clean $extra
		# ... where the driver dies of SIGSEGV in the call (the H100's did): the record is there,
		# and the summary says how the program ended. Not under TSan, whose runtime takes SIGSEGV
		# itself and prints its own report (pids, addresses: the outputs differ).
		if [ "$TSAN" = 1 ]; then
			skipped=$((skipped + 1))
			echo "skip $way $bg with a faulting driver (TSan takes SIGSEGV)"
		else
			export FAKECUDA_BATCH_FAULT=1
			asan_was=${ASAN_OPTIONS-}
			[ "$ASAN" = 1 ] && export ASAN_OPTIONS=$ASAN_OPTIONS:handle_segv=0
			check "$way $bg, the driver faulting" "1 use-after-free" $prog $bg $extra
			[ "$grc" -eq 139 ] && [ "$(jq -r 'select(.type == "summary") | .signal' "$tmp/gc.json")" = SIGSEGV ] &&
				ok "$way $bg: died of SIGSEGV as natively, the record written before" ||
				bad "$way $bg, the driver faulting: status $grc, or no SIGSEGV summary"
			[ "$ASAN" = 1 ] && export ASAN_OPTIONS=$asan_was
			unset FAKECUDA_BATCH_FAULT
			check "$way $bg-clean, the driver faulting" "$none" $prog $bg-clean $extra
		fi
	done
	check "$way staged-copy" "2 unordered-free" $prog staged-copy $extra
	[ "$(grep -c 'synchronous copy from pageable memory returns once its source is staged' "$tmp/gc.txt")" = 2 ] &&
		ok "$way staged-copy: each record says why a synchronous copy was still running" ||
		bad "$way staged-copy: a record without the staging's why"
	check "$way staged-copy-clean" "$none" $prog staged-copy-clean $extra
	# a refused memory-type question is no pageable source there: else pinned memory's
	# copy would lose its order (exported, not through env(1): under TSan the object loads
	# only into programs built with it)
	export FAKECUDA_POINTER_ATTRIBUTES_REFUSED=1
	check "$way staged-copy-clean, types refused" "$none" $prog staged-copy-clean $extra
	unset FAKECUDA_POINTER_ATTRIBUTES_REFUSED
	check "$way ext-semas" "$(printf "1 unordered-free\n1 unordered-use")" $prog ext-semas $extra
	check "$way ext-semas-clean" "$none" $prog ext-semas-clean $extra
	check "$way launch-event" "1 unordered-use" $prog launch-event $extra
	check "$way launch-event-clean" "$none" $prog launch-event-clean $extra
	check "$way own-use" "1 unordered-free" $prog own-use $extra
	check "$way own-use-clean" "$none" $prog own-use-clean $extra
	check "$way own-use-reused" "1 unordered-free" $prog own-use-reused $extra
	check "$way own-use-shared" "1 unordered-free" $prog own-use-shared $extra
	grep -q "its use on stream 0x[0-9a-f]*, by cuLaunchKernel[_ptsz]* in kernel sum" "$tmp/gc.txt" &&
		ok "$way own-use-shared: the free names A's last use (sum's)" ||
		bad "$way own-use-shared: the last use named: $(grep -o "its use on [^:]*" "$tmp/gc.txt")"
	check "$way own-use-shared-clean" "$none" $prog own-use-shared-clean $extra
	check "$way own-use-switch" "1 unordered-use" $prog own-use-switch $extra
	check "$way own-use-switch-clean" "$none" $prog own-use-switch-clean $extra
	check "$way graph-uses" "$graph_uses" $prog graph-uses $extra
	check "$way graph-uses-clean" "$none" $prog graph-uses-clean $extra
	UNTRACED=1
	check "$way own-use, untraced" "1 unordered-free" $prog own-use $extra
	UNTRACED=0
	case $way in
	*ptds) check "$way stream0" "$stream0_ptds" $prog stream0 $extra ;;
	*) check "$way stream0" "$stream0_legacy" $prog stream0 $extra ;;
	esac
	# cuMemAlloc memory is not stream-ordered: one kept to the end is no leak.
	check "$way sync-alloc" "$none" $prog sync-alloc $extra
	# Pitched memory and another process's import, freed with cuMemFreeAsync (and cuMemFree):
	# nothing; freed at an interior address and twice: one record each.
	check "$way foreign" "$none" $prog foreign $extra
	check "$way foreign-misuse" "$foreign_misuse" $prog foreign-misuse $extra
	# A NULL launch refused (400) inside a capture that stays active: capture-dropped-call,
	# which the filter above leaves out for launches, so it is counted here; its twin has a
	# set in the launch's place.
	check "$way dropped-call-clean" "$none" $prog dropped-call-clean $extra
	check "$way dropped-call" "$none" $prog dropped-call $extra
	n=$(jq -r 'select(.type == "violation" and .rule == "capture-dropped-call") | .call' \
		"$tmp/gc.json" 2>/dev/null | grep -c '^cuLaunchKernel')
	[ "$n" = 1 ] && ok "$way dropped-call: one capture-dropped-call for the refused launch" ||
		bad "$way dropped-call: $n capture-dropped-call records for the launch, want 1"
	# Another thread's cuMemAlloc breaks a GLOBAL capture: the record names that thread, the
	# capturing one and the mode's rule. THREAD_LOCAL restricts only the capturing thread.
	check "$way capture-other-thread" "1 capture-invalidated" $prog capture-other-thread $extra
	msg=$(jq -r 'select(.type == "violation") | .message' "$tmp/gc.json" 2>/dev/null)
	case $msg in
	*"cuMemAlloc_v2 from thread "*", not the capturing thread "*"GLOBAL mode's rule"*)
		ok "$way capture-other-thread: names the other thread and GLOBAL's rule" ;;
	*) bad "$way capture-other-thread: message lacks the thread or the rule: $msg" ;;
	esac
	check "$way capture-other-thread-clean" "$none" $prog capture-other-thread-clean $extra
	# The graph-memory line at exit (information, never a record): the pool's marks, the
	# concurrent launches, the exec destroyed untrimmed, the graph never freed; trimmed and
	# freed, only the marks. The JSON line carries the same counts.
	check "$way graph-memory" "1 leak-at-exit" $prog graph-memory $extra
	line=$(grep 'graph memory (information)' "$tmp/gc.txt")
	case $line in
	*"2 graph allocations made; device 0's graph pool: used at most 12288 bytes, reserved at most 12288, reserved at exit 12288, against the 8192 bytes the largest graph allocates in a launch (the marks count whole chunks of the pool)"*"; 1 exec of graphs with allocations destroyed since the last cuDeviceGraphMemTrim (none was called)"*"; 1 graph left 1 allocation (4096 bytes) never freed"*)
		ok "$way graph-memory: the line names the marks, the largest graph's bytes, the untrimmed exec, the unfreed graph" ;;
	*) bad "$way graph-memory: line is '$line'" ;;
	esac
	got=$(jq -c 'select(.type == "graph_memory") | [.graph_allocs, .execs_untrimmed, .graphs_unfreed, .unfreed_bytes, .used_high, .reserved_now]' "$tmp/gc.json" 2>/dev/null)
	[ "$got" = "[2,1,1,4096,12288,12288]" ] && ok "$way graph-memory: JSON line $got" ||
		bad "$way graph-memory: JSON line '$got'"
	check "$way graph-memory-trimmed" "$none" $prog graph-memory-trimmed $extra
	line=$(grep 'graph memory (information)' "$tmp/gc.txt")
	case $line in
	*"reserved at exit 0, against the"*"a launch (the marks count whole chunks of the pool). GRAPHCHECK_GRAPH_MEMORY=0"*)
		ok "$way graph-memory-trimmed: only the marks" ;;
	*) bad "$way graph-memory-trimmed: line is '$line'" ;;
	esac
	# No context at exit: the device is not known, so no device's marks (device 0 guessed
	# would be another device's, or one the program never used).
	check "$way graph-memory-no-context" "$none" $prog graph-memory-no-context $extra
	line=$(grep 'graph memory (information)' "$tmp/gc.txt")
	case $line in
	*"graph pool"*|"") bad "$way graph-memory-no-context: line is '$line'" ;;
	*) ok "$way graph-memory-no-context: no device's marks" ;;
	esac
	# Stream order: allocated on A, used on B, freed on A, then allocated on A and freed on
	# C, then C's memory at an address A launched on before launched on A (three times: alone,
	# and beside another of A's allocations in two orders), with no events
	# (order) and with them (order-clean); see scenarios.c.
	check "$way order" "$order" $prog order $extra
	# the stream model replays from the trace as it ran live (stream keys, events, waits)
	replayed=$($BUILD/graphcheck-report --replay --format=json "$tmp/traces/$ntrace.trace" 2>/dev/null |
		jq -r 'select(.type == "violation") | .rule' | sort | uniq -c | sed 's/^ *//')
	[ "$replayed" = "$order" ] && ok "$way order: the trace replays to the same records" ||
		bad "$way order: replay gives '$(echo $replayed)'"
	check "$way order-clean" "$none" $prog order-clean $extra
	# and with no trace: records and waits go to the clocks without an event (hub.c)
	UNTRACED=1
	check "$way order, untraced" "$order" $prog order $extra
	check "$way order-clean, untraced" "$none" $prog order-clean $extra
	UNTRACED=0
done
# The leak check says which leaks are graph allocations; brief by default, every site on
# GRAPHCHECK_LEAK_CHECK=full (graph-memory leaves one graph allocation live).
for lc in 1 full; do
	LD_PRELOAD=$PRE GRAPHCHECK_LEAK_CHECK=$lc GRAPHCHECK_JSON_FILE=$tmp/lc$lc.json \
		$P/prog_linked graph-memory > /dev/null 2>&1
done
b=$(jq -r 'select(.rule == "leak-at-exit") | .message' "$tmp/lc1.json" 2>/dev/null)
f=$(jq -r 'select(.rule == "leak-at-exit") | .message' "$tmp/lcfull.json" 2>/dev/null)
case "$b|$f" in
*"at exit: 1 graph allocation (4096 bytes), which stay reserved in the graph pool until freed. Their site is below (allocated at)."*"|"*"Every site is listed below (allocated at), largest first."*)
	ok "leak-at-exit: graph allocations named as such; brief by default, every site with full" ;;
*) bad "leak-at-exit wording: brief '$b', full '$f'" ;;
esac
# The site an allocation keeps after a loop of allocations and frees from two places (hub.c
# keeps a thread's last two sites apart) is its own: the same as made alone.
for v in sites sites-once; do
	LD_PRELOAD=$PRE GRAPHCHECK_LEAK_CHECK=1 GRAPHCHECK_JSON_FILE=$tmp/$v.json \
		$P/prog_linked $v > /dev/null 2>&1
done
site() { jq -r 'select(.rule == "leak-at-exit") | .leaks[0].backtrace[0].offset' "$1" 2>/dev/null; }
s1=$(site "$tmp/sites.json") s0=$(site "$tmp/sites-once.json")
if [ -n "$s0" ] && [ "$s0" != null ] && [ "$s1" = "$s0" ]; then
	ok "an allocation's site after a loop of two sites is its own ($s1)"
else
	bad "an allocation's site after a loop of two sites: $s1, made alone: $s0"
fi
# With allocation backtraces asked for, an allocation keeps its unwound site (hub.c's direct
# path, which keeps the calling instruction alone, leaves such calls to the full way).
LD_PRELOAD=$PRE GRAPHCHECK_ALLOC_BACKTRACE_DEPTH=4 GRAPHCHECK_LEAK_CHECK=1 \
	GRAPHCHECK_JSON_FILE=$tmp/sites-unwound.json $P/prog_linked sites > /dev/null 2>&1
n=$(jq -r 'select(.rule == "leak-at-exit") | .leaks[0].backtrace | length' "$tmp/sites-unwound.json" 2>/dev/null)
if [ "${n:-0}" -ge 2 ]; then
	ok "an allocation's site with GRAPHCHECK_ALLOC_BACKTRACE_DEPTH=4 is unwound ($n frames)"
else
	bad "an allocation's site with GRAPHCHECK_ALLOC_BACKTRACE_DEPTH=4: ${n:-no} frames, not unwound"
fi
# Such a call, which the direct path declines, is reported of its op (hub.c's
# gc_hub_mem_declined): its record the same as the direct path's, but for the site.
leaks() { jq -c 'select(.rule == "leak-at-exit") | [.leaks[] | del(.backtrace)]' "$1" 2>/dev/null; }
l0=$(leaks "$tmp/sites.json") l4=$(leaks "$tmp/sites-unwound.json")
if [ -n "$l0" ] && [ "$l4" = "$l0" ]; then
	ok "an allocation declined by the direct path keeps its record: $l4"
else
	bad "an allocation declined by the direct path: $l4, taken: $l0"
fi
# The allocator's direct path (no trace) and the full one (a trace written: every call an
# event) record the same: rule, call, pointer, stream, message and the program's frames, for
# random mixes of allocations, frees, launches, records and waits (scenarios.c's mixed).
recs() {
	jq -c 'select(.type == "violation") | [.rule, .call, .ptr, .stream, .message,
	       [.backtrace[]? | select(.module | tostring | test("prog_")) | .offset],
	       [.alloc.backtrace[]? | select(.module | tostring | test("prog_")) | .offset]]' "$1" 2>/dev/null |
		sed -E 's/0x5[0-9a-f]{11}/HANDLE/g; s/thread [0-9]+/thread T/g'  # heap addresses, ids
}
mixed_same=0 mixed_rules=
for way in prog_linked prog_linked_ptds; do
	for seed in 1 2 3 4; do
		for tf in "" "$tmp/mixed.trace"; do
			rm -f "$tmp/mixed.json"
			LD_PRELOAD=$PRE GRAPHCHECK_JSON_FILE=$tmp/mixed.json GRAPHCHECK_LOG_FILE=/dev/null \
				GRAPHCHECK_TRACE_FILE=$tf $P/$way mixed $seed 400 > /dev/null 2>&1
			recs "$tmp/mixed.json" > "$tmp/mixed${tf:+.traced}.recs"
		done
		if [ -s "$tmp/mixed.recs" ] && cmp -s "$tmp/mixed.recs" "$tmp/mixed.traced.recs"; then
			mixed_same=$((mixed_same + 1))
		else
			echo "  $way mixed $seed: direct and traced records differ"
			diff "$tmp/mixed.recs" "$tmp/mixed.traced.recs" | head -4 | cut -c1-300
		fi
		mixed_rules="$mixed_rules $(jq -r '.[0]' "$tmp/mixed.recs" | sort -u | tr '\n' ' ')"
	done
done
mixed_rules=$(echo $mixed_rules | tr ' ' '\n' | sort -u | tr '\n' ' ')
case "$mixed_same|$mixed_rules" in
8\|*double-free*unordered-free*unordered-use*)
	ok "the direct path records what the full one does: 8 random mixes ($mixed_rules)" ;;
*) bad "the direct path against the full one: $mixed_same of 8 mixes the same ($mixed_rules)" ;;
esac
# Off with its option; and no line from a program that made no graph allocation.
LD_PRELOAD=$PRE GRAPHCHECK_GRAPH_MEMORY=0 GRAPHCHECK_LOG_FILE=$tmp/off.txt GRAPHCHECK_JSON_FILE=$tmp/off.json \
	$P/prog_linked graph-memory > /dev/null 2>&1
LD_PRELOAD=$PRE GRAPHCHECK_LOG_FILE=$tmp/plain.txt $P/prog_linked sync-alloc > /dev/null 2>&1
if grep -q 'leak-at-exit' "$tmp/off.txt" && ! grep -q 'graph memory' "$tmp/off.txt" "$tmp/plain.txt" &&
	! grep -q graph_memory "$tmp/off.json"; then
	ok "GRAPHCHECK_GRAPH_MEMORY=0: no graph-memory line (the leak still reported); none without graph allocations"
else
	bad "graph-memory line written with GRAPHCHECK_GRAPH_MEMORY=0 or without graph allocations"
fi

# The messages of the graph rules: which node, which argument, what is missing.
check "unordered (message)" "$unordered" $P/prog_linked unordered
if grep -q "kernel node 0x[0-9a-f]* (argument 0 of kernel fill) uses 0x[0-9a-f]*, byte 256 into allocation #[12] (4096 bytes) made by cuGraphAddMemAllocNode" "$tmp/gc.txt" &&
   grep -q "neither after its allocation node nor before its free node" "$tmp/gc.txt"; then
	ok "use-outside-graph-lifetime names the node, the argument, the offset and both missing edges"
else
	bad "use-outside-graph-lifetime's message"
	cat "$tmp/gc.txt"
fi
check "stale (message)" "$stale" $P/prog_linked stale
if grep -q "byte 0 into allocation #1 (256 bytes) made by cuMemAllocAsync .*freed after this graph was instantiated" "$tmp/gc.txt" &&
   grep -q "at instantiate it was allocation #4 (256 bytes)" "$tmp/gc.txt" &&
   grep -q "into graph 0x[0-9a-f]* (captured by capture 3), not live at this launch: its graph has not been launched yet" "$tmp/gc.txt"; then
	ok "launch-stale-pointer and launch-reused-pointer name the allocations and why"
else
	bad "launch-stale-pointer's messages"
	cat "$tmp/gc.txt"
fi
# The second free of the exec's allocation after its graph was destroyed: not "no allocation
# graphcheck saw" (it saw it, and dropped its record with the graph).
check "rules (message)" "$rules" $P/prog_linked rules
grep -q "free-unknown.*" "$tmp/gc.txt" &&
grep -q "or it was a graph allocation already freed after its graph was destroyed" "$tmp/gc.txt" &&
	ok "free-unknown of a destroyed graph's freed allocation says it may be its second free" ||
	bad "free-unknown's message after a graph was destroyed: $(grep -A1 'free-unknown' "$tmp/gc.txt" | tail -1 | head -c 300)"
check "child-sets (message)" "$child_sets" $P/prog_linked child-sets
if grep -q "runs its kernel node 0x[0-9a-f]* (argument 0 of kernel fill) in child graph node 0x[0-9a-f]*, which holds" "$tmp/gc.txt" &&
   grep -q "update the node (cuGraphExecChildGraphNodeSetParams, cuGraphExecUpdate) first" "$tmp/gc.txt"; then
	ok "launch-stale-pointer names a child graph's node and the call that updates it"
else
	bad "launch-stale-pointer's message for a child graph's node"
	cat "$tmp/gc.txt"
fi
# The node events replay: the run's trace through the ledger gives the live run's records.
for sc in stale unordered; do
	check "$sc (replayed)" "$(eval echo \"\$$sc\")" $P/prog_linked $sc
	replayed=$("$BUILD/graphcheck-report" --replay --format=json "$tmp/traces/$ntrace.trace" 2>&1 |
		jq -r 'select(.type == "violation") | .rule' 2>/dev/null | sort | uniq -c | sed 's/^ *//')
	if [ -n "$replayed" ] && [ "$replayed" = "$(rules "$tmp/gc.json")" ]; then
		ok "$sc: the trace replayed gives the live records: $(echo $replayed)"
	else
		bad "$sc: replayed {$(echo $replayed)}, live {$(rules "$tmp/gc.json" | tr '\n' ' ')}"
	fi
done

# Nothing at all from a program that never touches CUDA: no log, no file.
rm -f "$tmp/none.json"
out=$(LD_PRELOAD=$PRE GRAPHCHECK_JSON_FILE=$tmp/none.json $P/prog_linked nocuda 2>&1)
[ ! -e "$tmp/none.json" ] && [ "$out" = "$($P/prog_linked nocuda 2>&1)" ] &&
	ok "nocuda: same output, no log file" || bad "nocuda: graphcheck wrote something"
# A misspelt option is said once, with the option meant, and the program goes on as before;
# the log still goes where the option spelt right says.
rm -f "$tmp/misspelt.txt"
err=$(LD_PRELOAD=$PRE GRAPHCHECK_LOG_FILE=$tmp/misspelt.txt GRAPHCHECK_LEAKCHECK=0 \
	$P/prog_linked seed-fixed 2>&1 >/dev/null)
[ "$err" = "graphcheck: GRAPHCHECK_LEAKCHECK is not an option; ignored (did you mean GRAPHCHECK_LEAK_CHECK?)" ] &&
	[ -s "$tmp/misspelt.txt" ] && ok "misspelt option: one line naming the option meant" ||
	bad "misspelt option: stderr '$err', log written: $([ -s "$tmp/misspelt.txt" ] && echo yes || echo no)"
for cmd in "/bin/true" "python3 -c pass" "/bin/false"; do
	foreign "preloaded into '$cmd'" || continue
	a=$($cmd 2>&1; echo "rc=$?")
	b=$(LD_PRELOAD=$PRE $cmd 2>&1; echo "rc=$?")
	[ "$a" = "$b" ] && ok "preloaded into '$cmd': same output and status" ||
		bad "preloaded into '$cmd': '$a' vs '$b'"
done

# dlsym under both symbol versions, RTLD_NEXT untouched.
if LD_PRELOAD=$PRE $P/dlsym_versions > "$tmp/dlsym.out" 2>&1; then
	ok "dlsym hook: $(grep -c '^ok' "$tmp/dlsym.out") lookups as expected"
else
	bad "dlsym hook:"; cat "$tmp/dlsym.out"
fi

# Threads: 16 threads alloc/free on their own streams, no records, same output.
check "threads 16x20000" "$none" $P/prog_linked threads 16 20000

# Every launch, copy, set and stream memory operation spelling of hooks.def, each by its own name
# (tests/fakecuda/progs/prog_spellings.c): outside captures each touches freed pool memory
# once and must be named by exactly one use-after-free; inside captures (a created stream's
# for the legacy spellings, the per-thread stream's for _ptsz) the same uses are the
# graph's and give nothing, but cuMemcpyBatchAsync's, which the driver refuses during a
# capture (900), the capture going on without it: capture-dropped-call each. A wrapper wired
# to the wrong shape, side or stream adds or loses a record.
uses_spellings=$(sed -n 's/^HOOK(\([A-Za-z0-9_]*\),.*, \(LAUNCH_KERNEL\|LAUNCH_COOPERATIVE\|COPY\|SET\|WRITE_VALUE\|WAIT_VALUE\|BATCH_MEMOP\).*/\1/p' interpose/hooks.def | sort)
batch_spellings=$(grep -c '^HOOK(.*, COPY_BATCH\(_FAIL_IDX\)\?)$' interpose/hooks.def)
check "spellings" "$(printf "%s capture-dropped-call\n%s use-after-free" "$batch_spellings" "$(echo "$uses_spellings" | wc -l)")" \
	$P/prog_spellings
got=$(jq -r 'select(.type == "violation" and .rule == "use-after-free") | .call' "$tmp/gc.json" 2>/dev/null | sort)
if [ -n "$got" ] && [ "$got" = "$uses_spellings" ]; then
	ok "spellings: each of the $(echo "$got" | wc -l) launch, copy, set and memory operation spellings named by one use-after-free"
else
	bad "spellings: use-after-free records do not name each spelling once"
	printf '%s\n' "$uses_spellings" > "$tmp/want.sp"
	printf '%s\n' "$got" | diff "$tmp/want.sp" - | head -10
fi

# A driver that keeps no parameter layout (NOT_SUPPORTED from both queries: a kernel built
# without one) is asked once per kernel, not at every launch (two driver calls and a lock
# each time: a cost every launch of such a kernel paid before).
FAKECUDA_NO_PARAM_INFO=1 FAKECUDA_DUMP_CALLS=1 GRAPHCHECK_LOG_FILE=/dev/null \
	GRAPHCHECK_LEAK_CHECK=0 LD_PRELOAD=$PRE "$P/prog_bench" launch4-dead 1 500 > "$tmp/np.out" 2> "$tmp/np.err"
asked=$(sed -n 's/^fakecuda: calls cuFuncGetParamInfo //p' "$tmp/np.err")
launched=$(sed -n 's/^fakecuda: calls cuLaunchKernel //p' "$tmp/np.err")
if [ "${asked:-0}" = 1 ] && [ "${launched:-0}" = 500 ]; then
	ok "no layout from the driver: asked once for 500 launches"
else
	bad "no layout from the driver: cuFuncGetParamInfo called ${asked:-0} times for ${launched:-0} launches"
fi

# The spellings of interpose/hooks.def that reached graphcheck through the preload in the
# runs above (a trace event names the spelling called). Not yet reached by any scenario (a
# program calling each by its own name is still to be written), so a wrapper wired wrong
# there goes unseen: listed here so that the list can only shrink. cuGetProcAddress and _v2
# make no event; the prog_procaddr runs above go through them.
not_reached="cuCtxSynchronize_v2 cuGraphAddNode cuGraphInstantiate
cuGraphInstantiateWithParams cuGraphInstantiateWithParams_ptsz cuGraphInstantiate_v2
cuStreamBeginCapture cuStreamBeginCaptureToGraph cuStreamBeginCaptureToGraph_ptsz
cuStreamBeginCapture_ptsz cuGraphDestroyNode cuGraphExecUpdate
cuMemPoolDestroy cuModuleUnload cuLibraryUnload cuMemPoolTrimTo cuGraphExecKernelNodeSetParams
cuStreamDestroy"
# A copy's destination type is asked once for its device range, not once a copy (uses.c's
# pageable_host): 100 device-to-device cuMemcpyAsync, the two allocations' ranges.
asked=$(FAKECUDA_DUMP_CALLS=1 LD_PRELOAD=$PRE GRAPHCHECK_LOG_FILE=/dev/null $P/prog_linked copies 2>&1 >/dev/null |
	sed -n 's/^fakecuda: calls cuPointerGetAttributes \([0-9]*\)$/\1/p')
if [ -n "$asked" ] && [ "$asked" -le 4 ]; then
	ok "copies: the destination's type asked $asked times for 100 copies"
else
	bad "copies: the destination's type asked '${asked:-0}' times for 100 copies (want 1 to 4)"
fi
sed -n 's/^HOOK(\([A-Za-z0-9_]*\),.*/\1/p' interpose/hooks.def | grep -v '^cuGetProcAddress' | sort > "$tmp/hooked"
cat "$tmp"/traces/*.trace | jq -r 'select(.type == "event") | .call' 2>/dev/null | sort -u > "$tmp/reached"
printf '%s\n' $not_reached | sort > "$tmp/not_reached"
missing=$(comm -23 "$tmp/hooked" "$tmp/reached" | comm -23 - "$tmp/not_reached")
now=$(comm -12 "$tmp/reached" "$tmp/not_reached")
if [ -z "$missing" ] && [ -z "$now" ]; then
	ok "hooks.def: $(wc -l < "$tmp/reached") spellings reached through the preload; $(echo $not_reached | wc -w) not yet: $(echo $not_reached)"
else
	bad "hooks.def spellings no longer reached: '$(echo $missing)'; reached now (take them off not_reached): '$(echo $now)'"
fi

finish
