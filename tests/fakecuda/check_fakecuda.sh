#!/bin/sh
# Runs the fakecuda programs against the stand-in driver and checks what they print:
# every way of reaching the driver gives the same results, the scenarios print byte for
# byte what the same programs printed linked against the real driver on an H200
# (tests/gpu/logs/real_SCENARIO.out, made by tests/gpu/run.sh), lookups answer the
# recorded spellings, and the _ptsz spellings are reached exactly when a program asks for
# per-thread streams.
# usage: sh tests/fakecuda/check_fakecuda.sh BUILD_DIR     (ends with "N passed, N failed")
. tests/lib.sh
B=$BUILD/fakecuda
REAL=$(dirname "$0")/../gpu/logs
check() { what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

# The five ways: linked, linked with per-thread streams, dlsym, cuGetProcAddress with the
# flags-0 pointers, and with the flags-2 pointers. run WAY SCENARIO [ARGS]
run() {
    _way=$1; _scen=$2; shift 2
    case $_way in
    procaddr_ptds) "$B/prog_procaddr" "$_scen" ptds "$@" ;;
    *) "$B/prog_$_way" "$_scen" "$@" ;;
    esac
}
WAYS="linked linked_ptds dlsym procaddr procaddr_ptds"

# codes FILE: the result codes of a program's output, in order, without the setup calls a
# GPU probe does not print (the runtime makes them) and without kernel launches.
codes() {
    grep -- ' -> ' "$1" |
        grep -vE '^(cuInit|cuDeviceGet|cuDevicePrimaryCtxRetain|cuCtxSetCurrent|cuStreamCreate|cuEventCreate|cuLaunchKernel)\(' |
        sed -E 's/.* -> (-?[0-9]+).*/\1/' | tr '\n' ' ' | sed 's/ $//'
}

echo "fakecuda: $B"
for f in libcuda.so.1 libcuda.so prog_linked prog_linked_ptds prog_dlsym prog_procaddr; do
    [ -e "$B/$f" ] || { bad "built: $f"; echo "0 passed, $fail failed"; exit 1; }
done

# ---- every scenario runs, and prints the same whichever way it reaches the driver -------
# With per-thread default streams, stream 0 is the calling thread's stream rather than the
# legacy one, so probe-driver (which uses stream 0 on purpose) differs there: the two
# per-thread ways are compared with each other.
for scen in seed seed-fixed probe probe-driver rules null-kernel-node "threads 4 50" nocuda; do
    name=$(echo "$scen" | tr ' ' _)
    for way in $WAYS; do
        # shellcheck disable=SC2086
        run "$way" $scen >"$tmp/$name.$way" 2>"$tmp/$name.$way.err" || bad "$scen via $way exits 0"
    done
    same=yes
    for way in dlsym procaddr; do
        cmp -s "$tmp/$name.linked" "$tmp/$name.$way" || { same=no; echo "    $way differs on $scen"; }
    done
    cmp -s "$tmp/$name.linked_ptds" "$tmp/$name.procaddr_ptds" || { same=no; echo "    procaddr_ptds differs on $scen"; }
    if [ "$scen" != probe-driver ]; then
        cmp -s "$tmp/$name.linked" "$tmp/$name.linked_ptds" || { same=no; echo "    linked_ptds differs on $scen"; }
    fi
    check "$scen: same output every way" [ $same = yes ]
done
check "probe-driver: with per-thread streams, stream 0 is not the legacy stream" \
    grep -q '^cuMemAllocAsync(&x, sz, 0) *-> 0$' "$tmp/probe-driver.linked_ptds"

# ---- the H200's own output ---------------------------------------------------------------
# tests/gpu/run.sh built the same scenarios against the real libcuda on the H200 and kept
# what they printed (stdout and stderr). The reference is that file, never edited here.
for scen in probe probe-driver seed seed-fixed null-kernel-node rules; do
    ref=$REAL/real_$scen.out
    if [ ! -f "$ref" ]; then
        bad "$scen: prints what the H200 printed (no $ref)"
        continue
    fi
    "$B/prog_linked" "$scen" >"$tmp/h200.$scen" 2>&1
    if cmp -s "$ref" "$tmp/h200.$scen"; then
        ok "$scen: prints what the H200 printed, byte for byte ($(grep -c -- ' -> ' "$ref") calls)"
    else
        bad "$scen: prints what the H200 printed (< H200, > stand-in)"
        diff "$ref" "$tmp/h200.$scen" | head -20 | sed 's/^/    /'
    fi
done

# ---- codes -----------------------------------------------------------------------------
# misuse_probe.cu on the H200 (tests/gpu/logs/misuse_probe.native.out). Among them the
# noted facts: outside-graph free in capture 1; free before any launch 1; first launch 0;
# relaunch with the allocation live 1; free after launch 0; second free 1; free of 0x1234
# 1; instantiating an already-instantiated graph with AUTO_FREE 801.
probe_h200="0 0 0 0 1 0 0 1 0 0 1 0 0 1 1 0 0 801 0 1 0"
check "probe: the codes misuse_probe got on the H200" [ "$(codes "$tmp/probe.linked")" = "$probe_h200" ]

# tests/gpu/probe_driver.cu on the H200 (tests/gpu/logs/probe_driver.native.out).
driver_h200="0 0 0 0 0 0 0 0 1 0 0 0 0 0 0 1 0 0 0 0 0 0 900 901 0 900 901 0 0 907 901 0 900 901 0 0 0 0 0 0 0"
check "probe-driver: the codes probe_driver got on the H200" \
    [ "$(codes "$tmp/probe-driver.linked")" = "$driver_h200" ]

# The scenarios' kernel handles are NULL (no module is loaded): cuLaunchKernel gives 400
# (CUDA_ERROR_INVALID_HANDLE) on the H200 and here, leaving a capture active.
# failures FILE: "call -> code" for every failing call but those launches.
failures() {
    grep -- ' -> ' "$1" | grep -v '^cuLaunchKernel' | grep -vE -- ' -> 0( |$)' |
        sed -E 's/[( ].* -> / -> /' | tr '\n' ' ' | sed 's/ $//'
}
launches=$(for way in $WAYS; do grep -h '^cuLaunchKernel' "$tmp"/*."$way"; done)
# shellcheck disable=SC2016  # $1 is the inner shell's
check "kernels: a NULL function is 400 every way, every time" \
    sh -c '[ -n "$1" ] && ! printf "%s\n" "$1" | grep -qv -- " -> 400"' _ "$launches"
# seed_pipeline.cu: compute-sanitizer saw exactly two failing cuMemFreeAsync, both 1.
check "seed: two failures, both cuMemFreeAsync -> 1" \
    [ "$(failures "$tmp/seed.linked")" = "cuMemFreeAsync -> 1 cuMemFreeAsync -> 1" ]
for scen in seed-fixed threads_4_50; do
    check "$scen: every call but those launches succeeds" [ -z "$(failures "$tmp/$scen.linked")" ]
done
# null-kernel-node's built graph: the kernel node fails (NULL function), so the free node that
# depends on it fails too (1) and the graph never frees its allocation: relaunches are 1.
check "null-kernel-node: only the built graph's kernel node, free node and relaunches fail" \
    [ "$(failures "$tmp/null-kernel-node.linked")" = "cuGraphAddKernelNode -> 400 cuGraphAddNode -> 1 cuGraphLaunch -> 1 cuGraphLaunch -> 1" ]
check "rules: the unjoined fork ends with 904" grep -q '^cuStreamEndCapture(s, &ga) *-> 904$' "$tmp/rules.linked"
check "rules: an address freed in its own graph is not given to another while it exists" \
    grep -q 'same address: no' "$tmp/rules.linked"
check "nocuda: no driver call" sh -c "! grep -q -- ' -> ' '$tmp/nocuda.linked'"

# ---- cuGetProcAddress answers ---------------------------------------------------------------
"$B/prog_procaddr" lookup >"$tmp/lookup" 2>&1
answer() { # NAME VERSION FLAGS -> the code and spelling answered
    grep -F "cuGetProcAddress(\"$1\", $2, $3)" "$tmp/lookup" | sed -E 's/.* -> ([0-9]+) +([^ ]+).*/\1 \2/'
}
expect_answer() {
    got=$(answer "$1" "$2" "$3")
    check "lookup $1 $2 flags $3 -> $4" [ "$got" = "$4" ]
}
expect_answer cuGetProcAddress 11030 0 "0 cuGetProcAddress"
expect_answer cuGetProcAddress 12000 0 "0 cuGetProcAddress_v2"
expect_answer cuStreamBeginCapture 10000 0 "0 cuStreamBeginCapture"
expect_answer cuStreamBeginCapture 10010 0 "0 cuStreamBeginCapture_v2"
expect_answer cuStreamBeginCapture 10010 2 "0 cuStreamBeginCapture_v2_ptsz"
expect_answer cuStreamGetCaptureInfo 11000 0 "0 cuStreamGetCaptureInfo"
expect_answer cuStreamGetCaptureInfo 12000 0 "0 cuStreamGetCaptureInfo_v2"
expect_answer cuStreamGetCaptureInfo 12030 2 "0 cuStreamGetCaptureInfo_v3_ptsz"
expect_answer cuMemFreeAsync 11020 2 "0 cuMemFreeAsync_ptsz"
expect_answer cuGraphInstantiate 13000 0 "0 cuGraphInstantiate_v2"
expect_answer cuGraphInstantiateWithParams 12000 2 "0 cuGraphInstantiateWithParams_ptsz"
expect_answer cuMemAlloc 3020 0 "0 cuMemAlloc_v2"
expect_answer cuMemAllocAsync 11010 0 "0 NULL"
expect_answer cuStreamBeginCapture 13010 0 "1 NULL"
expect_answer cuNoSuchFunction 12000 0 "500 NULL"
check "lookup: too old a version reports VERSION_NOT_SUFFICIENT" \
    grep -q 'cuGetProcAddress("cuMemAllocAsync", 11010, 0) *-> 0  NULL status 2$' "$tmp/lookup"
check "lookup: each pointer is its spelling's symbol (dladdr, dlsym)" sh -c "! grep -q '(not ' '$tmp/lookup'"

# ---- which spellings each way reached -------------------------------------------------------
for way in $WAYS; do
    # shellcheck disable=SC2086
    FAKECUDA_DUMP_CALLS=1 run "$way" probe 2>"$tmp/calls.$way" >/dev/null
done
reached() { grep -q "^fakecuda: calls $2 " "$tmp/calls.$1"; }
for way in linked dlsym procaddr; do
    check "$way reaches cuStreamBeginCapture_v2, no _ptsz spelling" \
        sh -c "grep -q '^fakecuda: calls cuStreamBeginCapture_v2 ' '$tmp/calls.$way' && ! grep -q '_ptsz ' '$tmp/calls.$way'"
done
for way in linked_ptds procaddr_ptds; do
    all=yes
    for sym in cuMemAllocFromPoolAsync_ptsz cuMemFreeAsync_ptsz cuStreamBeginCapture_v2_ptsz \
        cuStreamEndCapture_ptsz cuGraphLaunch_ptsz cuStreamSynchronize_ptsz cuLaunchKernel_ptsz; do
        reached "$way" "$sym" || { all=no; echo "    $way did not reach $sym"; }
    done
    reached "$way" cuMemFreeAsync && all=no
    check "$way reaches the _ptsz spellings, not the legacy ones" [ $all = yes ]
done
check "procaddr: the only lookups go through cuGetProcAddress_v2" \
    sh -c "grep -q '^fakecuda: calls cuGetProcAddress_v2 ' '$tmp/calls.procaddr' && ! grep -q '^fakecuda: calls cuGetProcAddress ' '$tmp/calls.procaddr'"

# ---- exports ---------------------------------------------------------------------------------
if command -v nm >/dev/null 2>&1; then
    nm -D --defined-only "$B/libcuda.so.1" | awk '$2 == "T" { print $1, $3 }' >"$tmp/exports"
    sed -n 's/^FC_SYM(\(.*\))$/\1/p' tests/fakecuda/fakecuda_syms.def | sort >"$tmp/syms"
    awk '{ print $2 }' "$tmp/exports" | grep -v '^fakecuda_' | sort >"$tmp/exported"
    check "exports: exactly the spellings in fakecuda_syms.def" cmp -s "$tmp/syms" "$tmp/exported"
    check "exports: every spelling at its own address" \
        [ "$(awk '{ print $1 }' "$tmp/exports" | sort -u | wc -l)" -eq "$(wc -l <"$tmp/exports")" ]
fi

# ---- fault injection -----------------------------------------------------------------------
FAKECUDA_FAULT_SEED=7 FAKECUDA_FAULT_RATE=0.3 "$B/prog_linked" seed >"$tmp/fault1" 2>&1
r1=$?
FAKECUDA_FAULT_SEED=7 FAKECUDA_FAULT_RATE=0.3 "$B/prog_linked" seed >"$tmp/fault2" 2>&1
check "faults: a seeded run exits 0" [ $r1 -eq 0 ]
check "faults: the same seed fails the same calls" cmp -s "$tmp/fault1" "$tmp/fault2"
check "faults: allocations fail with CUDA_ERROR_OUT_OF_MEMORY" grep -q '^cuMemAllocFromPoolAsync.* -> 2$' "$tmp/fault1"
FAKECUDA_FAULT_SEED=7 FAKECUDA_FAULT_RATE=1 "$B/prog_linked" threads 2 5 >"$tmp/fault3" 2>&1
check "faults: rate 1 fails every allocation" sh -c "grep -q '^cuMemAllocAsync  *-> 2  x12$' '$tmp/fault3' && ! grep -q '^cuMemAllocAsync  *-> 0' '$tmp/fault3'"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
