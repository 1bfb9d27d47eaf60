/* The report for people: one table row per folded entry (errors first, as compute-sanitizer
 * sums up its errors), then each entry in full, then the totals line. */
#include "report/report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Logged text may hold control characters; shown raw they could drive the terminal. */
static void put(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f ? '?' : *s, out);
}

static void put_frames(FILE *out, const char *title, const rp_frames *fs)
{
	if (!fs->n)
		return;
	fprintf(out, "    %s\n", title);
	for (size_t i = 0; i < fs->n; i++) {
		char *s = rp_frame_str(&fs->v[i]);
		fprintf(out, "      #%zu ", i);
		put(out, s);
		fputc('\n', out);
		free(s);
	}
}

static char *site_str(const rp_record *r)
{
	const rp_frame *f = rp_record_site(r);
	return f ? rp_frame_str(f) : rp_xstrdup("(no backtrace)");
}

static void put_table(FILE *out, const rp_fold *fold)
{
	int w_rule = (int)strlen("RULE"), w_count = (int)strlen("COUNT");
	for (size_t i = 0; i < fold->n; i++) {
		int w = (int)strlen(gc_rule_id(fold->v[i].first->rule));
		int c = snprintf(NULL, 0, "%" PRIu64, fold->v[i].count);
		w_rule = w > w_rule ? w : w_rule;
		w_count = c > w_count ? c : w_count;
	}
	fprintf(out, "%-*s  %-8s  %*s  %s\n", w_rule, "RULE", "SEVERITY", w_count, "COUNT",
	        "FIRST SITE");
	for (size_t i = 0; i < fold->n; i++) {
		const rp_entry *e = &fold->v[i];
		char *site = site_str(e->first);
		fprintf(out, "%-*s  %-8s  %*" PRIu64 "  ", w_rule, gc_rule_id(e->first->rule),
		        gc_severity_name(e->first->severity), w_count, e->count);
		put(out, site);
		fputc('\n', out);
		free(site);
	}
}

static void put_alloc(FILE *out, const rp_alloc *a)
{
	fprintf(out, "    allocation #%" PRIu64 ": ", a->seq);
	put(out, a->call);
	fprintf(out, ", %" PRIu64 " bytes at 0x%" PRIx64, a->size, a->ptr);
	if (a->stream)
		fprintf(out, ", stream 0x%" PRIx64, a->stream);
	if (a->in_graph)
		fprintf(out, ", graph 0x%" PRIx64 ", capture %" PRIu64, a->graph, a->capture_id);
	fputc('\n', out);
	put_frames(out, "allocated at (python):", &a->py_backtrace);
	put_frames(out, "allocated at:", &a->backtrace);
	put_frames(out, "freed at (python):", &a->free_py_backtrace);
	put_frames(out, "freed at:", &a->free_backtrace);
}

static void put_entry(FILE *out, size_t index, const rp_entry *e)
{
	const rp_record *r = e->first;
	fprintf(out, "\n[%zu] %s: %s in ", index + 1, gc_severity_name(r->severity),
	        gc_rule_id(r->rule));
	put(out, r->call);
	if (r->before_call) {
		fputs(" (before the call returned)", out);
	} else if (r->result) {
		fprintf(out, " (returned %lld", r->result);
		if (r->result_name) {
			fputs(", ", out);
			put(out, r->result_name);
		}
		fputc(')', out);
	}
	fprintf(out, ": %" PRIu64 " record%s\n", e->count, e->count == 1 ? "" : "s");
	fputs("    first at ", out);
	put(out, r->file);
	fprintf(out, ":%lu (pid %" PRIu64 ", record %" PRIu64 ")\n", r->line, r->pid, r->seq);
	fputs("    ", out);
	put(out, r->message);
	fputc('\n', out);
	if (r->py_note) {
		fputs("    python: ", out);
		put(out, r->py_note);
		fputc('\n', out);
	}
	put_frames(out, "at (python):", &r->py_backtrace);
	put_frames(out, "at:", &r->backtrace);
	if (r->has_alloc)
		put_alloc(out, &r->alloc);
	for (size_t i = 0; i < r->n_leaks; i++) {
		const rp_leak *l = &r->leaks[i];
		fprintf(out, "    %" PRIu64 " allocation%s, %" PRIu64 " bytes, by ", l->count,
		        l->count == 1 ? "" : "s", l->bytes);
		put(out, l->call);
		fputs(l->in_graph ? " in a graph\n" : "\n", out);
		put_frames(out, "allocated at (python):", &l->py_backtrace);
		put_frames(out, "allocated at:", &l->backtrace);
	}
}

int rp_format_text(FILE *out, const rp_report *rep)
{
	const rp_fold *fold = rep->fold;
	if (fold->n) {
		put_table(out, fold);
		for (size_t i = 0; i < fold->n; i++)
			put_entry(out, i, &fold->v[i]);
		fputc('\n', out);
	}
	rp_totals_line(out, rep);
	return ferror(out) ? -1 : 0;
}
