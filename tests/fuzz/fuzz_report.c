/* libFuzzer over graphcheck-report's input side: the bytes as one line for the parser, then
 * as a whole log for the reader (line splitting, limits, NUL bytes, the summary check) and
 * the fold. Whatever the input, nothing may crash or leak, and every good record must land
 * in exactly one entry. Built and run by `make fuzz` (report/report.mk). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Messages are formatted but not shown: the formatting is under test too. */
	static FILE *devnull;
	if (!devnull)
		devnull = fopen("/dev/null", "w");

	rp_record *r;
	rp_summary sum;
	char why[512];
	if (rp_parse_line((const char *)data, size, &r, &sum, why, sizeof(why)) ==
	    RP_LINE_VIOLATION)
		rp_record_free(r);

	/* Read-only, so the cast is safe; glibc (since 2.22) takes a zero size as empty. */
	FILE *f = fmemopen((void *)(uintptr_t)data, size, "r");
	if (!f)
		return 0;
	rp_fold fold;
	rp_fold_init(&fold);
	rp_reader rd = {.diag = devnull, .sink = rp_fold_sink, .sink_ctx = &fold};
	rp_read_stream(&rd, f, "fuzz");
	fclose(f);
	rp_fold_sort(&fold);
	uint64_t total = 0;
	for (size_t i = 0; i < fold.n; i++)
		total += fold.v[i].count;
	if (total != rd.records || fold.records[0] + fold.records[1] != rd.records)
		abort();
	rp_fold_free(&fold);
	rp_reader_free(&rd);
	return 0;
}
