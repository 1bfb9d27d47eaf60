#!/bin/sh
# The preloaded object exports exactly the spellings of interpose/hooks.def plus dlsym,
# every one of them defined (a wrapper exists for each table row), and links only libc,
# libdl and libpthread.
. tests/lib.sh
LIB=$BUILD/libgraphcheck.so

sed -n 's/^HOOK(\([A-Za-z0-9_]*\),.*/\1/p' interpose/hooks.def > "$tmp/table"
echo dlsym >> "$tmp/table"
sort -u "$tmp/table" -o "$tmp/table"
nm -D --defined-only "$LIB" | awk '$2 == "T" || $2 == "W" || $2 == "i" {print $3}' | sed 's/@.*//' | sort -u > "$tmp/exported"
if cmp -s "$tmp/table" "$tmp/exported"; then
	ok "exports == hooks.def + dlsym ($(wc -l < "$tmp/table") names)"
else
	bad "exports differ from hooks.def:"; diff "$tmp/table" "$tmp/exported"
fi
if nm -D --defined-only "$LIB" | awk '{print $2}' | grep -qv '^[TWi]$'; then
	bad "data symbols are exported:"; nm -D --defined-only "$LIB" | grep -v ' [TWi] '
else
	ok "no data symbols exported"
fi
# Every wrapper must be a function of its own (no two spellings sharing one address).
dups=$(nm -D --defined-only "$LIB" | awk '{print $1}' | sort | uniq -d | wc -l)
[ "$dups" -eq 0 ] && ok "one address per spelling" || bad "$dups addresses shared by two spellings"
needed=$(readelf -d "$LIB" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
case "$needed" in
	*libcuda*|*libstdc*|*libjansson*|*libdw*) bad "links more than libc/libdl/libpthread: $needed" ;;
	*) ok "links only: $needed" ;;
esac
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
