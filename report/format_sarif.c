/* SARIF 2.1.0, for code-scanning dashboards: the rule table as the driver's rules, one
 * result per folded entry located at its first site with a source line, and the whole
 * backtrace (and the allocation's) as stacks. */
#include "report/report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#ifndef GC_VERSION
#define GC_VERSION "0.0.0"
#endif
/* Where the tool is described; the project has no public home yet, so a build may set it
 * (-DRP_INFO_URI=...). SARIF wants an absolute URI here. */
#ifndef RP_INFO_URI
#define RP_INFO_URI "https://example.invalid/graphcheck"
#endif

#define SARIF_SCHEMA \
	"https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

static json_t *must(json_t *v)
{
	if (!v) {
		fputs("graphcheck-report: cannot build the SARIF output\n", stderr);
		exit(RP_EXIT_USAGE);
	}
	return v;
}

static const char *level(gc_severity s)
{
	return s == GC_SEV_WARNING ? "warning" : "error";
}

/* A file path as a URI: absolute paths become file:// URIs; bytes outside the unreserved
 * set and '/' are percent-encoded. Relative paths stay relative references. */
static json_t *path_uri(const char *path)
{
	static const char hexd[] = "0123456789ABCDEF";
	size_t n = strlen(path);
	char *out = rp_xmalloc(3 * n + 8), *o = out;
	if (path[0] == '/') {
		memcpy(o, "file://", 7);
		o += 7;
	}
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~/", *p)) {
			*o++ = (char)*p;
		} else {
			*o++ = '%';
			*o++ = hexd[*p >> 4];
			*o++ = hexd[*p & 15];
		}
	}
	*o = '\0';
	json_t *s = must(json_string(out));
	free(out);
	return s;
}

/* With a source line: the file and line. Without one: the module (a binary artifact) and
 * the function as a logical location, which is as much as is known. */
static json_t *location(const rp_frame *f)
{
	json_t *loc = must(json_object());
	const char *fn = rp_frame_symbol(f);
	if (f->loc.file) {
		json_object_set_new(loc, "physicalLocation",
		                    must(json_pack("{s:{s:o}, s:{s:I}}", "artifactLocation", "uri",
		                                   path_uri(f->loc.file), "region", "startLine",
		                                   (json_int_t)f->loc.line)));
	} else if (f->module[0] == '/') {
		json_object_set_new(
		    loc, "physicalLocation",
		    must(json_pack("{s:{s:o}, s:{s:I}}", "artifactLocation", "uri",
		                   path_uri(f->module), "address", "relativeAddress",
		                   (json_int_t)f->offset)));
	}
	if (fn)
		json_object_set_new(loc, "logicalLocations",
		                    must(json_pack("[{s:s, s:s}]", "name", fn, "kind", "function")));
	char *text = rp_frame_str(f);
	json_object_set_new(loc, "message", must(json_pack("{s:s}", "text", text)));
	free(text);
	return loc;
}

static json_t *stack(const char *what, const rp_frames *fs)
{
	json_t *frames = must(json_array());
	for (size_t i = 0; i < fs->n; i++)
		json_array_append_new(frames, must(json_pack("{s:o, s:s}", "location",
		                                             location(&fs->v[i]), "module",
		                                             fs->v[i].module)));
	return must(json_pack("{s:{s:s}, s:o}", "message", "text", what, "frames", frames));
}

static json_t *rules(void)
{
	json_t *a = must(json_array());
	for (int i = 0; i < GC_RULE__COUNT; i++) {
		gc_rule r = (gc_rule)i;
		json_array_append_new(
		    a, must(json_pack("{s:s, s:s, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}", "id",
		                      gc_rule_id(r), "name", gc_rule_id(r), "shortDescription", "text",
		                      gc_rule_help(r), "fullDescription", "text", gc_rule_help(r),
		                      "help", "text", gc_rule_help(r), "defaultConfiguration", "level",
		                      level(gc_rule_severity(r)))));
	}
	return a;
}

static json_t *result(const rp_entry *e)
{
	const rp_record *r = e->first;
	/* occurrenceCount is SARIF's own word for a folded count; properties.count says it
	 * again for readers that only look at the property bag. */
	json_t *res = must(json_pack(
	    "{s:s, s:i, s:s, s:{s:s}, s:I, s:{s:I, s:s, s:o, s:I}}", "ruleId", gc_rule_id(r->rule),
	    "ruleIndex", (int)r->rule, "level", level(r->severity), "message", "text", r->message,
	    "occurrenceCount", (json_int_t)e->count, "properties", "count", (json_int_t)e->count,
	    "call", r->call, "firstRecord", rp_json_utf8(r->file), "firstRecordLine", (json_int_t)r->line));
	const rp_frame *site = rp_record_site(r);
	if (site)
		json_object_set_new(res, "locations", must(json_pack("[o]", location(site))));
	json_t *stacks = must(json_array());
	if (r->py_backtrace.n)
		json_array_append_new(stacks, stack("python call", &r->py_backtrace));
	if (r->backtrace.n)
		json_array_append_new(stacks, stack("call", &r->backtrace));
	if (r->has_alloc && r->alloc.py_backtrace.n)
		json_array_append_new(stacks, stack("python allocation", &r->alloc.py_backtrace));
	if (r->has_alloc && r->alloc.backtrace.n)
		json_array_append_new(stacks, stack("allocation", &r->alloc.backtrace));
	if (r->has_alloc && r->alloc.free_py_backtrace.n)
		json_array_append_new(stacks, stack("python free", &r->alloc.free_py_backtrace));
	if (r->has_alloc && r->alloc.free_backtrace.n)
		json_array_append_new(stacks, stack("free", &r->alloc.free_backtrace));
	/* Stacks must differ (the schema says uniqueItems): each leak group is numbered. */
	for (size_t i = 0; i < r->n_leaks; i++) {
		char what[64];
		snprintf(what, sizeof(what), "leaked allocations, group %zu", i + 1);
		if (r->leaks[i].backtrace.n)
			json_array_append_new(stacks, stack(what, &r->leaks[i].backtrace));
	}
	if (json_array_size(stacks))
		json_object_set_new(res, "stacks", stacks);
	else
		json_decref(stacks);
	return res;
}

/* The run's invocation: successful only when every log was read whole (a viewer shows a
 * broken or missing log as a failed run, not as a clean one), with the input's problems as
 * notifications. */
static json_t *invocations(const rp_reader *rd)
{
	json_t *notes = must(json_array());
	size_t kept = rp_problems_kept(rd);
	for (size_t i = 0; i < kept; i++) {
		const rp_problem *p = &rd->problems[i];
		json_array_append_new(notes, must(json_pack("{s:s, s:{s:o}}", "level",
		                                            rp_problem_level_name(p->level), "message",
		                                            "text", rp_json_utf8(p->text))));
	}
	return must(json_pack("[{s:b, s:o}]", "executionSuccessful",
	                      !rd->malformed && !rd->io_errors, "toolExecutionNotifications", notes));
}

int rp_format_sarif(FILE *out, const rp_report *rep)
{
	json_t *results = must(json_array());
	for (size_t i = 0; i < rep->fold->n; i++)
		json_array_append_new(results, result(&rep->fold->v[i]));
	json_t *doc = must(json_pack(
	    "{s:s, s:s, s:[{s:{s:{s:s, s:s, s:s, s:o}}, s:o}]}", "version", "2.1.0", "$schema",
	    SARIF_SCHEMA, "runs", "tool", "driver", "name", "graphcheck", "version", GC_VERSION,
	    "informationUri", RP_INFO_URI, "rules", rules(), "results", results));
	if (rep->input)
		json_object_set_new(json_array_get(json_object_get(doc, "runs"), 0), "invocations",
		                    invocations(rep->input));
	int rc = json_dumpf(doc, out, JSON_INDENT(2));
	json_decref(doc);
	if (rc == 0)
		fputc('\n', out);
	return rc == 0 && !ferror(out) ? 0 : -1;
}
