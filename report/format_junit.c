/* JUnit XML, for CI test dashboards: one suite "graphcheck" with a testcase per rule of the
 * table (failed when the rule has records, so a dashboard lists what was checked) and a
 * failed testcase per folded entry, carrying the entry's details. */
#include "report/report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Text as XML character data or an attribute value. Characters XML 1.0 cannot hold at all
 * (most controls, U+FFFE, U+FFFF), and bytes that are not UTF-8, become U+FFFD; in
 * attributes, newlines and tabs are written as references so that parsers keep them. */
static void xml_put(FILE *out, const char *s, bool attr)
{
	size_t left = strlen(s);
	while (left) {
		uint32_t cp;
		size_t n = rp_utf8_next(s, left, &cp);
		if (n == 0 || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xfffe ||
		    cp == 0xffff) {
			fputs("\xef\xbf\xbd", out);
			n = n ? n : 1;
			s += n;
			left -= n;
			continue;
		}
		switch (cp) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs(attr ? "&quot;" : "\"", out); break;
		case '\'': fputs(attr ? "&apos;" : "'", out); break;
		case '\n': fputs(attr ? "&#10;" : "\n", out); break;
		case '\r': fputs("&#13;", out); break;
		case '\t': fputs(attr ? "&#9;" : "\t", out); break;
		default: fwrite(s, 1, n, out); break;
		}
		s += n;
		left -= n;
	}
}

static void put_frames(FILE *out, const char *title, const rp_frames *fs)
{
	if (!fs->n)
		return;
	fprintf(out, "%s\n", title);
	for (size_t i = 0; i < fs->n; i++) {
		char *s = rp_frame_str(&fs->v[i]);
		fprintf(out, "  #%zu ", i);
		xml_put(out, s, false);
		fputc('\n', out);
		free(s);
	}
}

static void put_case_open(FILE *out, const char *rule, const char *name)
{
	fputs("    <testcase classname=\"graphcheck.", out);
	xml_put(out, rule, true);
	fputs("\" name=\"", out);
	xml_put(out, name, true);
	fputs("\">\n", out);
}

/* An entry at or above --fail-on is a <failure>; one below it (a warning under the default
 * --fail-on=error) is told in <system-out>, so the suite passes when the exit status does. */
static void put_entry(FILE *out, size_t index, const rp_entry *e, bool fails)
{
	const rp_record *r = e->first;
	const char *rule = gc_rule_id(r->rule);
	const rp_frame *site = rp_record_site(r);
	char *where = site ? rp_frame_str(site) : rp_xstrdup("(no backtrace)");
	char *name;
	/* Numbered as in the text report: two sites can print alike (they differ deeper in
	 * the stack), and dashboards merge testcases of one name. */
	if (asprintf(&name, "[%zu] %s at %s", index + 1, rule, where) < 0)
		name = NULL;
	put_case_open(out, rule, name ? name : rule);
	if (fails) {
		fputs("      <failure type=\"", out);
		xml_put(out, gc_severity_name(r->severity), true);
		fputs("\" message=\"", out);
		xml_put(out, r->message, true);
		fputs("\">", out);
	} else {
		fputs("      <system-out>", out);
	}
	fprintf(out, "%s: %s in ", gc_severity_name(r->severity), rule);
	xml_put(out, r->call, false);
	fprintf(out, ", %" PRIu64 " record%s, first at ", e->count, e->count == 1 ? "" : "s");
	xml_put(out, r->file, false);
	fprintf(out, ":%lu\n", r->line);
	xml_put(out, r->message, false);
	fputc('\n', out);
	put_frames(out, "at:", &r->backtrace);
	if (r->has_alloc) {
		fprintf(out, "allocation #%" PRIu64 ": ", r->alloc.seq);
		xml_put(out, r->alloc.call, false);
		fprintf(out, ", %" PRIu64 " bytes at 0x%" PRIx64 "\n", r->alloc.size, r->alloc.ptr);
		put_frames(out, "allocated at:", &r->alloc.backtrace);
		put_frames(out, "freed at:", &r->alloc.free_backtrace);
	}
	for (size_t i = 0; i < r->n_leaks; i++) {
		fprintf(out, "%" PRIu64 " allocations, %" PRIu64 " bytes, by ", r->leaks[i].count,
		        r->leaks[i].bytes);
		xml_put(out, r->leaks[i].call, false);
		fputc('\n', out);
		put_frames(out, "allocated at:", &r->leaks[i].backtrace);
	}
	fputs(fails ? "</failure>\n    </testcase>\n" : "</system-out>\n    </testcase>\n", out);
	free(name);
	free(where);
}

/* The input's problems as a test case of their own: an <error> when lines or logs were not
 * read (the exit status fails then too, and a published report must not look clean),
 * notes and warnings (a process with no summary: not checked to its end) in <system-err>. */
static void put_input(FILE *out, const rp_reader *rd)
{
	size_t kept = rp_problems_kept(rd);
	fputs("    <testcase classname=\"graphcheck-report\" name=\"input\">\n", out);
	if (rd->malformed || rd->io_errors) {
		fprintf(out, "      <error type=\"input\" message=\"%" PRIu64 " malformed line%s, "
		        "%zu unreadable log%s\">", rd->malformed, rd->malformed == 1 ? "" : "s",
		        rd->io_errors, rd->io_errors == 1 ? "" : "s");
		for (size_t i = 0; i < kept; i++)
			if (rd->problems[i].level == RP_PROBLEM_ERROR) {
				xml_put(out, rd->problems[i].text, false);
				fputc('\n', out);
			}
		fputs("</error>\n", out);
	}
	bool any = false;
	for (size_t i = 0; i < kept; i++)
		if (rd->problems[i].level != RP_PROBLEM_ERROR) {
			fputs(any ? "" : "      <system-err>", out);
			any = true;
			xml_put(out, rd->problems[i].text, false);
			fputc('\n', out);
		}
	if (any)
		fputs("</system-err>\n", out);
	fputs("    </testcase>\n", out);
}

int rp_format_junit(FILE *out, const rp_report *rep)
{
	const rp_fold *fold = rep->fold;
	uint64_t by_rule[GC_RULE__COUNT] = {0};
	size_t failures = 0;
	for (size_t i = 0; i < fold->n; i++) {
		by_rule[fold->v[i].first->rule] += fold->v[i].count;
		failures += rp_gate_fails(rep->fail_on, fold->v[i].first->severity);
	}
	for (int i = 0; i < GC_RULE__COUNT; i++)
		failures += by_rule[i] && rp_gate_fails(rep->fail_on, gc_rule_severity((gc_rule)i));
	const rp_reader *in = rep->input;
	bool input_error = in && (in->malformed || in->io_errors);
	bool input_case = input_error || (in && in->n_problems);
	size_t tests = GC_RULE__COUNT + fold->n + input_case;

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
	fprintf(out, "<testsuites name=\"graphcheck-report\" tests=\"%zu\" failures=\"%zu\" "
	        "errors=\"%d\">\n", tests, failures, input_error);
	fprintf(out,
	        "  <testsuite name=\"graphcheck\" tests=\"%zu\" failures=\"%zu\" errors=\"%d\" "
	        "skipped=\"0\">\n",
	        tests, failures, input_error);
	if (input_case)
		put_input(out, in);
	for (int i = 0; i < GC_RULE__COUNT; i++) {
		gc_rule r = (gc_rule)i;
		put_case_open(out, gc_rule_id(r), gc_rule_id(r));
		if (by_rule[i] && rp_gate_fails(rep->fail_on, gc_rule_severity(r))) {
			fprintf(out, "      <failure type=\"%s\" message=\"%" PRIu64 " record%s\">",
			        gc_severity_name(gc_rule_severity(r)), by_rule[i],
			        by_rule[i] == 1 ? "" : "s");
			xml_put(out, gc_rule_help(r), false);
			fputs("</failure>\n", out);
		} else if (by_rule[i]) {  /* below --fail-on: told, not failed */
			fprintf(out, "      <system-out>%" PRIu64 " %s record%s (below --fail-on): ",
			        by_rule[i], gc_severity_name(gc_rule_severity(r)),
			        by_rule[i] == 1 ? "" : "s");
			xml_put(out, gc_rule_help(r), false);
			fputs("</system-out>\n", out);
		}
		fputs("    </testcase>\n", out);
	}
	for (size_t i = 0; i < fold->n; i++)
		put_entry(out, i, &fold->v[i], rp_gate_fails(rep->fail_on, fold->v[i].first->severity));
	fputs("  </testsuite>\n</testsuites>\n", out);
	return ferror(out) ? -1 : 0;
}
