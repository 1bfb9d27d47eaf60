#!/bin/sh
# Misuses written the way users write them (not the demo's one-per-rule programs), each with a
# --clean twin that must give no record: built and run natively and under graphcheck.
# Run on the GPU machine from the repository root, after
#   make build/libgraphcheck.so build/graphcheck
# Usage: OUT=/some/dir sh path/to/misuse2/run.sh
# Env:   OUT     (required) everything goes under $OUT/m2
#        M2_SRC  directory holding the NAME.cu files (default: this script's directory)
#        M2_BIN  where binaries go (default /tmp/m2bin)
#        NVCC    the compiler (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc)
#        GC      the launcher (default build/graphcheck)
#        M2_ONLY "NAME ..." runs only those pairs
# Output per run under $OUT/m2: NAME[--clean].json / .txt (graphcheck's JSON and text logs),
# NAME[--clean].gc.out (program stdout+stderr under graphcheck), NAME[--clean].native.out,
# NAME.compile.txt; then a summary table on stdout (also $OUT/m2/summary.txt).
set -u

if [ -z "${OUT:-}" ]; then
	echo "run.sh: OUT is not set" >&2
	exit 2
fi
src=${M2_SRC:-$(cd "$(dirname "$0")" && pwd)}
bin=${M2_BIN:-/tmp/m2bin}
gc=${GC:-build/graphcheck}
out=$OUT/m2
mkdir -p "$out" "$bin"

if [ -n "${NVCC:-}" ]; then
	nvcc=$NVCC
elif command -v nvcc >/dev/null 2>&1; then
	nvcc=nvcc
elif [ -x /usr/local/cuda/bin/nvcc ]; then
	nvcc=/usr/local/cuda/bin/nvcc
else
	echo "run.sh: nvcc not found (set NVCC)" >&2
	exit 2
fi
if [ ! -x "$gc" ]; then
	echo "run.sh: $gc not found: run make build/libgraphcheck.so build/graphcheck first" >&2
	exit 2
fi
if command -v timeout >/dev/null 2>&1; then
	to="timeout 20"
else
	to=""
fi

# NAME  expected rules of the faulty run (comma-separated; the --clean twin expects none; a
#       rule ending in ? may be there or not, as the misuse's undefined behaviour goes)
#       [gap: a misuse graphcheck does not see yet, README "What is not checked"; shown as GAP]
expected_table() {
	cat <<'TABLE'
uaf-loop-stale-scratch double-free,use-after-free
uaf-sync-memcpy-result use-after-free
uaf-struct-arg use-after-free gap
uaf-pingpong-launchex use-after-free
uaf-cooperative-workspace use-after-free
uaf-batch-copy-gather use-after-free
uaf-batch3d-crop use-after-free
unordered-batch-any-order unordered-free,unordered-use
unordered-free-per-thread-stream unordered-free
unordered-use-forgot-stream unordered-use
unordered-use-stream-created-later unordered-free,unordered-use
unordered-use-after-pinned-copy unordered-use
unordered-use-wait-value unordered-free,unordered-use
unordered-use-graph-host-node unordered-free,unordered-use
unordered-use-legacy-chain unordered-free,unordered-use
unordered-free-legacy-sync unordered-free
unordered-use-legacy-free-chain unordered-free,unordered-use
unordered-free-teardown-stream unordered-free
unordered-free-graph-replay unordered-free
unordered-free-launch-completion-event unordered-free
unordered-free-pageable-upload unordered-free
uaf-child-graph-node launch-stale-pointer
double-free-teardown-cudafree double-free
double-free-worker-thread double-free
relaunch-threadlocal-workspace relaunch-unfreed
exec-update-freed-staging launch-stale-pointer
kernel-node-freed-coef launch-stale-pointer
pool-arena-scope pool-destroyed-live
free-unknown-subbuffers free-unknown
graph-output-leak leak-at-exit
cross-graph-freed-by-producer launch-stale-pointer
setup-graph-never-launched leak-at-exit?,use-unmaterialized
capture-sync-for-logging capture-invalidated
reinstantiate-each-step instantiate-twice
fork-join-early-free use-outside-graph-lifetime
TABLE
}

names=$(expected_table | while read -r n _ _; do printf '%s\n' "$n"; done)
# M2_ONLY="NAME ...": only those pairs (a short device session's subset)
if [ -n "${M2_ONLY:-}" ]; then
	names=$(for n in $names; do case " $M2_ONLY " in *" $n "*) echo "$n" ;; esac; done)
fi

# 1. Compile everything (in parallel), then report failures.
echo "== compiling with $nvcc"
for n in $names; do
	rm -f "$bin/$n"
	if [ ! -f "$src/$n.cu" ]; then
		echo "missing source $src/$n.cu" >"$out/$n.compile.txt"
		continue
	fi
	"$nvcc" -arch=sm_90 -g -o "$bin/$n" "$src/$n.cu" >"$out/$n.compile.txt" 2>&1 &
done
wait
# nvcc runs in parallel above; one that left no binary is tried again alone.
for n in $names; do
	if [ -f "$src/$n.cu" ] && [ ! -x "$bin/$n" ]; then
		"$nvcc" -arch=sm_90 -g -o "$bin/$n" "$src/$n.cu" >"$out/$n.compile.txt" 2>&1
	fi
done
for n in $names; do
	if [ ! -x "$bin/$n" ]; then
		echo "COMPILE FAILED: $n (skipped); see $out/$n.compile.txt:"
		sed -n '1,20p' "$out/$n.compile.txt"
	fi
done

# strip_optional RULES keep|drop: RULES with each optional rule (NAME?) kept as NAME, or left
# out ("none" when nothing is left)
strip_optional() {
	printf '%s\n' "$1" | tr ',' '\n' | while read -r r; do
		case $r in *\?) [ "$2" = keep ] && printf '%s\n' "${r%\?}" ;; *) printf '%s\n' "$r" ;; esac
	done | paste -sd, - | sed 's/^$/none/'
}

# rules_of FILE: sorted unique rule ids in a JSON log, comma-separated ("none" when none)
rules_of() {
	r=""
	if [ -f "$1" ]; then
		r=$(grep -o '"rule":"[a-z-]*"' "$1" | sed 's/"rule":"\([a-z-]*\)"/\1/' |
			LC_ALL=C sort -u | tr '\n' ',' | sed 's/,$//')
	fi
	[ -n "$r" ] || r=none
	printf '%s' "$r"
}

# 2. Run each program natively and under graphcheck, faulty and --clean.
summary=$out/summary.txt
: >"$summary"
printf '%-40s %-6s %-6s %-8s %-45s %s\n' RUN native gc verdict got expected >>"$summary"
expected_table | while read -r n exp gap; do
	case " $(echo $names) " in *" $n "*) ;; *) continue ;; esac
	if [ ! -x "$bin/$n" ]; then
		printf '%-40s %-6s %-6s %-8s %-45s %s\n' "$n" - - SKIPPED "compile-failed" "$exp" \
			>>"$summary"
		continue
	fi
	for v in "" --clean; do
		run=$n$v
		want=$exp
		[ -z "$v" ] || want=none
		rm -f "$out/$run.json" "$out/$run.txt"
		nrc=0
		if [ -z "$v" ]; then
			$to "$bin/$n" >"$out/$run.native.out" 2>&1 || nrc=$?
		else
			$to "$bin/$n" "$v" >"$out/$run.native.out" 2>&1 || nrc=$?
		fi
		grc=0
		if [ -z "$v" ]; then
			$to "$gc" "--json-file=$out/$run.json" "--log-file=$out/$run.txt" -- \
				"$bin/$n" >"$out/$run.gc.out" 2>&1 || grc=$?
		else
			$to "$gc" "--json-file=$out/$run.json" "--log-file=$out/$run.txt" -- \
				"$bin/$n" "$v" >"$out/$run.gc.out" 2>&1 || grc=$?
		fi
		got=$(rules_of "$out/$run.json")
		if [ "$got" = "$want" ] || [ "$got" = "$(strip_optional "$want" keep)" ] ||
			[ "$got" = "$(strip_optional "$want" drop)" ]; then
			verdict=match
		elif [ -z "$v" ] && [ "${gap:-}" = gap ]; then
			verdict=GAP
		else
			verdict=DIFF
		fi
		printf '%-40s %-6s %-6s %-8s %-45s %s\n' "$run" "$nrc" "$grc" "$verdict" "$got" "$want" \
			>>"$summary"
	done
done
echo "== summary (native/gc: exit status; got: rules in the JSON log; expected: the table)"
cat "$summary"
