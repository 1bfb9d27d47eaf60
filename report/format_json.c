/* The folded entries as one JSON document, for scripts: what the text report shows, with
 * every frame both resolved and as logged. Built with jansson, so escaping is its job. */
#include "report/report.h"

#include <inttypes.h>
#include <stdlib.h>

#ifndef GC_VERSION
#define GC_VERSION "0.0.0"
#endif

/* A packing failure is a bug or no memory; neither leaves anything to report. */
static json_t *must(json_t *v)
{
	if (!v) {
		fputs("graphcheck-report: cannot build the JSON output\n", stderr);
		exit(RP_EXIT_USAGE);
	}
	return v;
}

static json_t *hex(uint64_t v)
{
	return must(json_sprintf("0x%" PRIx64, v));
}

json_t *rp_json_frame(const rp_frame *f)
{
	char *text = rp_frame_str(f);
	if (f->python) {  /* as logged: file, line, function */
		json_t *o = must(json_pack("{s:s, s:I, s:s?, s:s}", "file", f->loc.file, "line",
		                           (json_int_t)f->loc.line, "function", f->loc.function,
		                           "text", text));
		free(text);
		return o;
	}
	json_t *o = must(json_pack("{s:s, s:o, s:s?, s:s?, s:s?, s:s}", "module", f->module,
	                           "offset", hex(f->offset), "symbol", f->symbol, "function",
	                           f->loc.function, "file", f->loc.file, "text", text));
	if (f->loc.file)
		json_object_set_new(o, "line", json_integer(f->loc.line));
	free(text);
	return o;
}

json_t *rp_json_frames(const rp_frames *fs)
{
	json_t *a = must(json_array());
	for (size_t i = 0; i < fs->n; i++)
		json_array_append_new(a, rp_json_frame(&fs->v[i]));
	return a;
}

/* A uint64 as a JSON integer, or as its decimal digits in a string from 2^63 on (what
 * jansson, and the log reader, can hold). */
static json_t *uint_json(uint64_t v)
{
	char d[24];
	if (v <= INT64_MAX)
		return must(json_integer((json_int_t)v));
	snprintf(d, sizeof(d), "%" PRIu64, v);
	return must(json_string(d));
}

static json_t *alloc_json(const rp_alloc *a)
{
	return must(json_pack("{s:s, s:o, s:o, s:o, s:o, s:I, s:b, s:I, s:o, s:o, s:o, s:o}", "call", a->call,
	                      "ptr", hex(a->ptr), "size", uint_json(a->size), "stream",
	                      hex(a->stream), "graph", hex(a->graph), "capture_id",
	                      (json_int_t)a->capture_id, "in_graph", a->in_graph, "seq",
	                      (json_int_t)a->seq, "backtrace", rp_json_frames(&a->backtrace),
	                      "free_backtrace", rp_json_frames(&a->free_backtrace), "py_backtrace",
	                      rp_json_frames(&a->py_backtrace), "free_py_backtrace",
	                      rp_json_frames(&a->free_py_backtrace)));
}

static json_t *entry_json(const rp_entry *e)
{
	const rp_record *r = e->first;
	const rp_frame *site = rp_record_site(r);
	json_t *o = must(json_pack(
	    "{s:s, s:s, s:I, s:s, s:I, s:s?, s:s, s:{s:o, s:I, s:I, s:I}, s:o, s:o}", "rule",
	    gc_rule_id(r->rule), "severity", gc_severity_name(r->severity), "count",
	    (json_int_t)e->count, "call", r->call, "result", (json_int_t)r->result, "result_name",
	    r->result_name, "message", r->message, "first", "file", rp_json_utf8(r->file), "line",
	    (json_int_t)r->line, "pid", (json_int_t)r->pid, "seq", (json_int_t)r->seq, "site",
	    site ? rp_json_frame(site) : json_null(), "backtrace", rp_json_frames(&r->backtrace)));
	if (r->before_call)
		json_object_set_new(o, "before_call", json_true());
	json_object_set_new(o, "py_backtrace", rp_json_frames(&r->py_backtrace));
	json_object_set_new(o, "alloc", r->has_alloc ? alloc_json(&r->alloc) : json_null());
	if (r->n_leaks || r->rule == GC_RULE_LEAK_AT_EXIT) {
		json_t *leaks = must(json_array());
		for (size_t i = 0; i < r->n_leaks; i++) {
			const rp_leak *l = &r->leaks[i];
			json_array_append_new(
			    leaks, must(json_pack("{s:I, s:o, s:s, s:b, s:o}", "count",
			                          (json_int_t)l->count, "bytes", uint_json(l->bytes),
			                          "call", l->call, "in_graph", l->in_graph, "backtrace",
			                          rp_json_frames(&l->backtrace))));
		}
		json_object_set_new(o, "leaks", leaks);
		json_object_set_new(o, "leak_count", uint_json(r->leak_count));
		json_object_set_new(o, "leak_bytes", uint_json(r->leak_bytes));
	}
	return o;
}

static const char *fail_on_name(rp_fail_on f)
{
	return f == RP_FAIL_WARNING ? "warning" : f == RP_FAIL_NEVER ? "never" : "error";
}

/* What of the input was not read (the exit status says so too): lines, logs, and the
 * problems as stderr said them. */
static json_t *input_json(const rp_reader *rd)
{
	json_t *problems = must(json_array());
	size_t kept = rp_problems_kept(rd);
	for (size_t i = 0; i < kept; i++) {
		const rp_problem *p = &rd->problems[i];
		json_array_append_new(problems,
		                      must(json_pack("{s:s, s:o}", "level", rp_problem_level_name(p->level),
		                                     "message", rp_json_utf8(p->text))));
	}
	return must(json_pack("{s:I, s:I, s:I, s:o}", "malformed_lines", (json_int_t)rd->malformed,
	                      "unreadable_logs", (json_int_t)rd->io_errors, "problems_said",
	                      (json_int_t)rd->n_problems, "problems", problems));
}

int rp_format_json(FILE *out, const rp_report *rep)
{
	const rp_fold *fold = rep->fold;
	json_t *entries = must(json_array());
	for (size_t i = 0; i < fold->n; i++)
		json_array_append_new(entries, entry_json(&fold->v[i]));
	json_t *doc = must(json_pack(
	    "{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:o}", "tool", "graphcheck-report",
	    "version", GC_VERSION, "files", (json_int_t)rep->files, "records",
	    (json_int_t)rep->records, "errors", (json_int_t)fold->entries[GC_SEV_ERROR], "warnings",
	    (json_int_t)fold->entries[GC_SEV_WARNING], "error_records",
	    (json_int_t)fold->records[GC_SEV_ERROR], "warning_records",
	    (json_int_t)fold->records[GC_SEV_WARNING], "fail_on", fail_on_name(rep->fail_on),
	    "entries", entries));
	if (rep->input)
		json_object_set_new(doc, "input", input_json(rep->input));
	int rc = json_dumpf(doc, out, JSON_INDENT(2));
	json_decref(doc);
	if (rc == 0)
		fputc('\n', out);
	return rc == 0 && !ferror(out) ? 0 : -1;
}
