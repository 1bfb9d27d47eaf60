# Shared by the GPU scripts (sourced; needs OUT, the log directory, and GC, the launcher).
# run NAME PROGRAM [ARGS]: native output, then graphcheck's text and JSON logs.
run() {
	name=$1; shift
	"$@" > "$OUT/$name.native.out" 2>&1
	echo "exit $?" >> "$OUT/$name.native.out"
	rm -f "$OUT/$name.json" "$OUT/$name.txt"
	$GC --json-file="$OUT/$name.json" --log-file="$OUT/$name.txt" -- "$@" > "$OUT/$name.out" 2>&1
	echo "exit $?" >> "$OUT/$name.out"
	# Compared without what differs from run to run natively too: PyTorch's time stamps on its
	# warnings, addresses (ASLR) in its C++ backtraces, timed sections' seconds, and the
	# shell's own line for a program killed by a signal.
	stamp='s/^\[W[0-9]* [0-9:.]*/[W/; s/0x[0-9a-f]*/0x/g; s/ [0-9]*\.[0-9]* s / N s /; /^Aborted$/d'
	if [ "$(sed "$stamp" "$OUT/$name.native.out")" = "$(sed "$stamp" "$OUT/$name.out")" ]; then
		same=same
	else
		same=DIFFERENT
	fi
	rules=$(grep -o '"rule":"[a-z-]*"' "$OUT/$name.json" 2>/dev/null | sed 's/"rule":"//; s/"//' | sort | uniq -c | tr '\n' ' ')
	echo "$name: program output $same; records: ${rules:-none}"
}
