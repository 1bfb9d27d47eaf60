# Helpers for run.sh and standin.sh (POSIX sh, sourced). Values missing because a run
# failed print as n/a and judge as n/a.

# Nanoseconds of wall clock (GNU date).
now_ns() { date +%s%N; }
case $(date +%N) in *N*) echo "bench: date +%N unsupported (needs GNU date)" >&2; exit 1 ;; esac

# stats FILE: "median min max" of the numbers in FILE, one per line ("n/a n/a n/a" if none).
stats() {
	[ -s "$1" ] || { echo "n/a n/a n/a"; return; }
	sort -g "$1" | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.6f %.6f %.6f\n", m, v[1], v[NR] }'
}
median() { stats "$1" | cut -d' ' -f1; }

# calc EXPR A B [C]: EXPR over a, b, c (c defaults to 1), printed with FORMAT (default %.3f)
# and a newline; n/a if one is empty or n/a.
calc() {
	awk -v a="$2" -v b="$3" -v c="${4-1}" -v f="${FORMAT:-%.3f}" "BEGIN {
		if (a == \"\" || b == \"\" || c == \"\" || a == \"n/a\" || b == \"n/a\") { print \"n/a\"; exit }
		printf f \"\\n\", $1 }"
}

# judge VALUE OP TARGET: PASS or MISS (OP is <= or >=), n/a without a value.
judge() {
	awk -v v="$1" -v t="$3" -v op="$2" 'BEGIN {
		if (v == "" || v == "n/a") { print "n/a"; exit }
		ok = op == "<=" ? v + 0 <= t + 0 : v + 0 >= t + 0
		print ok ? "PASS" : "MISS" }'
}

# paired OP FILE_A FILE_B: the median over rounds of a_i OP b_i (OP: - or /), the files'
# lines being the rounds in order. Paired per round, drift of the machine between rounds
# cancels, which a difference of medians does not. n/a unless both have the same count.
paired() {
	[ -s "$2" ] && [ -s "$3" ] && [ "$(wc -l < "$2")" -eq "$(wc -l < "$3")" ] ||
		{ echo "n/a"; return; }
	paste "$2" "$3" | awk -v op="$1" '{ print op == "/" ? $1 / $2 : $1 - $2 }' > "$2.paired"
	median "$2.paired"
}
