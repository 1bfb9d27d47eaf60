/* The pipeline behind the command line: read every log, fold, symbolize the entries (not
 * every record: a folded loop needs its frames resolved once), write one format, and turn
 * what happened into the exit status. */
#include "report/report.h"

#include <errno.h>
#include <string.h>

#include "interpose/suppress.h"

static const struct {
	const char *name;
	rp_format_fn fn;
} formats[] = {
	{"text", rp_format_text},
	{"json", rp_format_json},
	{"sarif", rp_format_sarif},
	{"junit", rp_format_junit},
};

rp_format_fn rp_formatter(const char *name)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(formats[i].name, name) == 0)
			return formats[i].fn;
	return NULL;
}

bool rp_gate_fails(rp_fail_on level, gc_severity s)
{
	switch (level) {
	case RP_FAIL_ERROR: return s == GC_SEV_ERROR;
	case RP_FAIL_WARNING: return true;
	case RP_FAIL_NEVER: return false;
	}
	return false;
}

/* Errors and warnings count folded entries (distinct problems); records counts lines. */
void rp_totals_line(FILE *out, const rp_report *rep)
{
	fprintf(out, "graphcheck-report: %zu errors, %zu warnings (%llu records in %zu files)",
	        rep->fold->entries[GC_SEV_ERROR], rep->fold->entries[GC_SEV_WARNING],
	        (unsigned long long)rep->records, rep->files);
	if (rep->suppressed)
		fprintf(out, ", %llu suppressed", (unsigned long long)rep->suppressed);
	/* said here too, so that the line never reads as a clean pass over logs it lacks */
	if (rep->input && (rep->input->io_errors || rep->input->malformed))
		fprintf(out, "; not a clean pass: %zu log%s unreadable, %llu malformed line%s",
		        rep->input->io_errors, rep->input->io_errors == 1 ? "" : "s",
		        (unsigned long long)rep->input->malformed, rep->input->malformed == 1 ? "" : "s");
	fputc('\n', out);
}

static void supp_warning(const char *msg, void *arg)
{
	(void)arg;
	fprintf(stderr, "graphcheck-report: suppressions: %s\n", msg);
}

/* 0, or -1 when the output could not be opened or written (said on stderr). */
static int write_report(const rp_options *o, rp_format_fn fmt, const rp_report *rep)
{
	const char *name = o->output ? o->output : "<stdout>";
	FILE *out = o->output ? fopen(o->output, "w") : stdout;
	if (!out) {
		fprintf(stderr, "graphcheck-report: %s: cannot open for writing: %s\n", name,
		        strerror(errno));
		return -1;
	}
	int rc = fmt(out, rep);
	if (fflush(out) != 0)
		rc = -1;
	if (out != stdout && fclose(out) != 0)
		rc = -1;
	if (rc)
		fprintf(stderr, "graphcheck-report: %s: cannot write the report\n", name);
	return rc;
}

int rp_run(const rp_options *o)
{
	rp_format_fn fmt = rp_formatter(o->format ? o->format : "text");
	if (!fmt)
		return RP_EXIT_USAGE;
	gc_supp_set *supps = NULL;
	if (o->suppressions && !(supps = gc_supp_load(o->suppressions, supp_warning, NULL))) {
		fprintf(stderr, "graphcheck-report: %s: cannot read the suppressions: %s\n",
		        o->suppressions, strerror(errno));
		return RP_EXIT_USAGE;
	}

	rp_fold fold;
	rp_fold_init(&fold);
	rp_reader rd = {.diag = stderr, .sink = rp_fold_sink, .sink_ctx = &fold};
	for (int i = 0; i < o->n_inputs; i++)
		rp_read_file(&rd, o->inputs[i]);
	rp_fold_sort(&fold);

	if (o->symbolize) {
		rp_symbolizer *s = rp_sym_new();
		for (size_t i = 0; i < fold.n; i++)
			rp_sym_record(s, fold.v[i].first);
		rp_sym_free(s);
	}

	rp_report rep = {.fold = &fold, .input = &rd, .records = rd.records, .files = rd.files,
	                 .fail_on = o->fail_on, .suppressed = rd.suppressed};
	if (supps) {  /* after symbolizing: src: lines match resolved frames */
		rep.suppressed += rp_suppress(&fold, supps);
		gc_supp_free(supps);
	}
	rp_fold_merge_lines(&fold);
	int wrote = write_report(o, fmt, &rep);
	/* The text report ends with the totals; other formats, or a file, get them on stderr
	 * too, so that a CI log always shows the outcome. */
	if (fmt != rp_format_text || o->output)
		rp_totals_line(stderr, &rep);
	if (rd.malformed)
		fprintf(stderr, "graphcheck-report: %llu malformed line%s skipped\n",
		        (unsigned long long)rd.malformed, rd.malformed == 1 ? "" : "s");

	int status = RP_EXIT_OK;
	if ((fold.records[GC_SEV_ERROR] && rp_gate_fails(o->fail_on, GC_SEV_ERROR)) ||
	    (fold.records[GC_SEV_WARNING] && rp_gate_fails(o->fail_on, GC_SEV_WARNING)))
		status = RP_EXIT_GATE;
	if (rd.malformed)
		status = RP_EXIT_MALFORMED;
	if (rd.io_errors || wrote)
		status = RP_EXIT_USAGE;
	rp_fold_free(&fold);
	rp_reader_free(&rd);
	return status;
}
