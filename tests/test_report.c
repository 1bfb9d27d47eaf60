/* graphcheck-report, reading: every field type the log format names is checked, every kind
 * of malformed input is named by file and line and skipped while the good records around
 * it still count, and the interposer's own writer produces lines the reader accepts.
 * main() also runs the groups of tests/test_report_*.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/log.h"
#include "tests/report/test_report.h"

/* ---- helpers shared by every group ---------------------------------------------------- */

void rp_test_log_init(rp_test_log *t)
{
	memset(t, 0, sizeof(*t));
	rp_fold_init(&t->fold);
	t->diag_f = open_memstream(&t->diag, &t->diag_len);
	assert_non_null(t->diag_f);
	t->rd.diag = t->diag_f;
	t->rd.sink = rp_fold_sink;
	t->rd.sink_ctx = &t->fold;
}

void rp_test_log_read(rp_test_log *t, const char *name, const void *data, size_t len)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	rewind(f);
	assert_int_equal(rp_read_stream(&t->rd, f, name), 0);
	fclose(f);
}

void rp_test_log_read_file(rp_test_log *t, const char *path)
{
	assert_int_equal(rp_read_file(&t->rd, path), 0);
}

void rp_test_log_finish(rp_test_log *t)
{
	if (t->diag_f) {
		fclose(t->diag_f);
		t->diag_f = NULL;
	}
	rp_fold_sort(&t->fold);
}

void rp_test_log_free(rp_test_log *t)
{
	rp_test_log_finish(t);
	rp_fold_free(&t->fold);
	rp_reader_free(&t->rd);
	free(t->diag);
}

char *rp_test_line(const char *rule, unsigned seq, const char *module, uint64_t offset)
{
	int id = gc_rule_from_id(rule);
	const char *sev = gc_severity_name(id >= 0 ? gc_rule_severity((gc_rule)id) : GC_SEV_ERROR);
	char *s;
	int n = asprintf(&s,
	                 "{\"type\":\"violation\",\"seq\":%u,\"pid\":42,\"tid\":42,\"rule\":\"%s\","
	                 "\"severity\":\"%s\",\"call\":\"cuMemFreeAsync\",\"result\":1,"
	                 "\"result_name\":\"CUDA_ERROR_INVALID_VALUE\",\"ptr\":\"0x302000000\","
	                 "\"size\":0,\"stream\":\"0x5649\",\"capture_id\":1,\"graph\":\"0x0\","
	                 "\"exec\":\"0x0\",\"message\":\"a test record\",\"backtrace\":["
	                 "{\"addr\":\"0x5600%llx\",\"module\":\"%s\",\"offset\":\"0x%llx\","
	                 "\"symbol\":null},{\"addr\":\"0x7f00002a1ca\",\"module\":"
	                 "\"/lib/x86_64-linux-gnu/libc.so.6\",\"offset\":\"0x2a1ca\",\"symbol\":null}],"
	                 "\"alloc\":null}\n",
	                 seq, rule, sev, (unsigned long long)offset, module,
	                 (unsigned long long)offset);
	assert_true(n > 0);
	return s;
}

char *rp_test_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int c;
	while ((c = getc(f)) != EOF) {
		if (n + 1 >= cap) {
			cap = cap ? 2 * cap : 4096;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		buf[n++] = (char)c;
	}
	fclose(f);
	if (!buf)
		buf = calloc(1, 1);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* ---- parsing one line ------------------------------------------------------------------ */

static const char start_line[] =
    "{\"type\":\"start\",\"pid\":42,\"program\":\"/abs/app\",\"version\":\"0.1.0\"}\n";

static void parses_a_full_record(void **state)
{
	(void)state;
	size_t len;
	char *log = rp_test_slurp("tests/report/seed_pipeline.jsonl", &len);
	assert_non_null(log);
	/* Line 12 is the leak-at-exit record, with leaks[]; line 3 has an allocation. */
	char *line = log;
	for (int i = 1; i < 3; i++)
		line = strchr(line, '\n') + 1;
	rp_record *r;
	rp_summary sum;
	char why[256];
	assert_int_equal(rp_parse_line(line, (size_t)(strchr(line, '\n') - line), &r, &sum, why,
	                               sizeof(why)),
	                 RP_LINE_VIOLATION);
	assert_int_equal(r->rule, GC_RULE_FREE_UNMATERIALIZED);
	assert_int_equal(r->severity, GC_SEV_ERROR);
	assert_int_equal(r->seq, 2);
	assert_int_equal(r->pid, 714);
	assert_string_equal(r->call, "cuMemFreeAsync");
	assert_int_equal(r->result, 1);
	assert_string_equal(r->result_name, "CUDA_ERROR_INVALID_VALUE");
	assert_int_equal(r->ptr, 0x48ea000000ull);
	assert_int_equal(r->backtrace.n, 5);
	assert_string_equal(r->backtrace.v[0].module, "/tmp/tmp.cyO3Bnost1/seed_pipeline");
	assert_int_equal(r->backtrace.v[0].offset, 0x90b7);
	assert_null(r->backtrace.v[0].symbol);
	assert_string_equal(r->backtrace.v[3].symbol, "__libc_start_main");
	assert_true(r->has_alloc);
	assert_string_equal(r->alloc.call, "cuMemAllocFromPoolAsync");
	assert_int_equal(r->alloc.size, 200000);
	assert_true(r->alloc.in_graph);
	assert_int_equal(r->alloc.backtrace.n, 5);
	rp_record_free(r);

	for (int i = 3; i < 12; i++)
		line = strchr(line, '\n') + 1;
	assert_int_equal(rp_parse_line(line, (size_t)(strchr(line, '\n') - line), &r, &sum, why,
	                               sizeof(why)),
	                 RP_LINE_VIOLATION);
	assert_int_equal(r->rule, GC_RULE_LEAK_AT_EXIT);
	assert_int_equal(r->severity, GC_SEV_WARNING);
	assert_false(r->has_alloc);
	assert_int_equal(r->n_leaks, 1);
	assert_int_equal(r->leaks[0].count, 10);
	assert_int_equal(r->leaks[0].bytes, 2000000);
	assert_int_equal(r->leaks[0].backtrace.n, 5);
	assert_int_equal(r->leak_count, 10);
	assert_int_equal(r->leak_bytes, 2000000);
	rp_record_free(r);
	free(log);
}

static void parses_start_summary_and_unknown_types(void **state)
{
	(void)state;
	rp_record *r;
	rp_summary sum;
	char why[256];
	assert_int_equal(rp_parse_line(start_line, strlen(start_line) - 1, &r, &sum, why,
	                               sizeof(why)),
	                 RP_LINE_START);
	assert_null(r);
	const char *s = "{\"type\":\"summary\",\"pid\":7,\"errors\":2,\"warnings\":1,\"records\":3}";
	assert_int_equal(rp_parse_line(s, strlen(s), &r, &sum, why, sizeof(why)), RP_LINE_SUMMARY);
	assert_int_equal(sum.pid, 7);
	assert_int_equal(sum.errors, 2);
	assert_int_equal(sum.warnings, 1);
	assert_int_equal(sum.records, 3);
	/* Extra fields are allowed everywhere: new fields may be added to the format. */
	const char *u = "{\"type\":\"heartbeat\",\"pid\":7,\"new\":{\"x\":[1]}}";
	assert_int_equal(rp_parse_line(u, strlen(u), &r, &sum, why, sizeof(why)), RP_LINE_UNKNOWN);
	assert_string_equal(why, "heartbeat");
}

/* The good line with one field replaced (NULL value: removed), as a line. */
static char *edited(const char *key, json_t *value)
{
	char *good = rp_test_line("free-foreign-in-capture", 2, "/abs/app", 0x1234);
	json_t *o = json_loads(good, 0, NULL);
	assert_non_null(o);
	if (value)
		json_object_set_new(o, key, value);
	else
		json_object_del(o, key);
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	free(good);
	return s;
}

static void assert_bad(const char *line, const char *expect)
{
	rp_record *r;
	rp_summary sum;
	char why[512];
	rp_line_kind k = rp_parse_line(line, strlen(line), &r, &sum, why, sizeof(why));
	if (k != RP_LINE_BAD || !strstr(why, expect))
		print_error("line %s\n  gave kind %d, \"%s\"; expected \"%s\"\n", line, (int)k, why,
		            expect);
	assert_int_equal(k, RP_LINE_BAD);
	assert_null(r);
	assert_non_null(strstr(why, expect));
}

static void names_each_wrong_field(void **state)
{
	(void)state;
	static const struct {
		const char *key;
		const char *json;  /* the new value; NULL removes the field */
		const char *expect;
	} cases[] = {
	    {"seq", "\"x\"", "field \"seq\" must be an integer, not a string"},
	    {"seq", "1.5", "field \"seq\" must be an integer, not a real number"},
	    {"seq", "-3", "field \"seq\" must not be negative"},
	    {"pid", NULL, "missing field \"pid\""},
	    {"rule", "5", "field \"rule\" must be a string, not an integer"},
	    {"rule", "\"no-such-rule\"", "unknown rule \"no-such-rule\""},
	    {"rule", "\"bad\\u001b[31m\"", "unknown rule \"bad\\x1b[31m\""},
	    {"severity", "\"fatal\"", "\"severity\" must be \"error\" or \"warning\""},
	    {"call", "null", "field \"call\" must be a string, not null"},
	    {"message", NULL, "missing field \"message\""},
	    {"result", "\"1\"", "field \"result\" must be an integer, not a string"},
	    {"result_name", "7", "field \"result_name\" must be a string or null"},
	    {"ptr", "12345", "field \"ptr\" must be a hex string"},
	    {"stream", "\"12\"", "field \"stream\" must be a hex string (\"0x...\"), not \"12\""},
	    {"graph", "\"0xZZ\"", "field \"graph\" must be a hex string"},
	    {"exec", "\"0x\"", "field \"exec\" must be a hex string"},
	    {"capture_id", "true", "field \"capture_id\" must be an integer, not a boolean"},
	    {"backtrace", "{\"addr\":\"0x1\"}",
	     "field \"backtrace\" must be an array of frames, not an object"},
	    {"backtrace", NULL, "missing field \"backtrace\""},
	    {"backtrace", "[7]", "field \"backtrace[0]\" must be a frame object, not an integer"},
	    {"backtrace", "[{\"module\":\"/a\"}]", "missing field \"backtrace[0].offset\""},
	    {"backtrace", "[{\"module\":\"/a\",\"offset\":16}]",
	     "field \"backtrace[0].offset\" must be a hex string"},
	    {"backtrace", "[{\"module\":3,\"offset\":\"0x10\"}]",
	     "field \"backtrace[0].module\" must be a string, not an integer"},
	    {"backtrace", "[{\"module\":\"/a\",\"offset\":\"0x10\",\"symbol\":1}]",
	     "field \"backtrace[0].symbol\" must be a string or null"},
	    {"alloc", "\"x\"", "field \"alloc\" must be an object or null, not a string"},
	    {"alloc", "{\"call\":\"c\",\"ptr\":\"0x1\",\"size\":\"8\",\"backtrace\":[]}",
	     "field \"alloc.size\" must be an integer, not a string"},
	    {"alloc", "{\"call\":\"c\",\"ptr\":\"0x1\",\"size\":8,\"backtrace\":[],\"in_graph\":1}",
	     "field \"alloc.in_graph\" must be a boolean"},
	    {"alloc", "{\"call\":\"c\",\"ptr\":\"0x1\",\"size\":8}",
	     "missing field \"alloc.backtrace\""},
	    {"leaks", "{}", "field \"leaks\" must be an array, not an object"},
	    {"leaks", "[{\"count\":-1,\"bytes\":1,\"call\":\"c\",\"backtrace\":[]}]",
	     "field \"leaks[0].count\" must not be negative"},
	    {"leaks", "[{\"count\":1,\"bytes\":1,\"call\":\"c\",\"backtrace\":[1]}]",
	     "field \"leaks[0].backtrace[0]\" must be a frame object"},
	    {"leak_count", "\"10\"", "field \"leak_count\" must be an integer"},
	    {"type", "7", "field \"type\" must be a string, not an integer"},
	    {"type", NULL, "missing field \"type\""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *v = NULL;
		if (cases[i].json) {
			v = json_loads(cases[i].json, JSON_DECODE_ANY, NULL);
			assert_non_null(v);
		}
		char *line = edited(cases[i].key, v);
		assert_bad(line, cases[i].expect);
		free(line);
	}
}

static void names_bad_json_and_bad_other_types(void **state)
{
	(void)state;
	assert_bad("{\"type\":\"violation\",\"seq\":2,", "invalid JSON at column");
	assert_bad("[1,2,3]", "not a JSON object but an array");
	assert_bad("\"just a string\"", "not a JSON object but a string");
	assert_bad("{\"type\":\"start\",\"type\":\"start\"}", "duplicate object key");
	assert_bad("{\"type\":\"start\"} trailing", "invalid JSON");
	assert_bad("{\"type\":\"start\",\"pid\":\"x\"}", "field \"pid\" must be an integer");
	assert_bad("{\"type\":\"start\",\"program\":[]}", "field \"program\" must be a string");
	assert_bad("{\"type\":\"summary\",\"pid\":1,\"errors\":\"2\",\"warnings\":0,\"records\":2}",
	           "field \"errors\" must be an integer, not a string");
	assert_bad("{\"type\":\"summary\",\"pid\":1,\"errors\":0,\"warnings\":0}",
	           "missing field \"records\"");
	assert_bad("{\"type\":\"start\",\"program\":\"a\xff\"}", "not valid UTF-8: byte 0xff");
	assert_bad("{\"type\":\"start\",\"program\":\"\xed\xa0\x80\"}", "not valid UTF-8");
	assert_bad("{\"a\":\"\\u0000\"}", "invalid JSON");
	/* jansson's message quotes the input: control characters must not reach stderr. */
	rp_record *r;
	rp_summary sum;
	char why[512];
	const char ctl[] = "{\"a\":\x1b[2J}";
	assert_int_equal(rp_parse_line(ctl, strlen(ctl), &r, &sum, why, sizeof(why)), RP_LINE_BAD);
	assert_null(strchr(why, '\x1b'));
	/* Bytes past the given length are not read: the line need not be NUL-terminated. */
	char buf[] = {'{', '}', '\xe2'};
	assert_int_equal(rp_parse_line(buf, 2, &r, &sum, why, sizeof(why)), RP_LINE_BAD);
	assert_non_null(strstr(why, "missing field \"type\""));
	assert_int_equal(rp_parse_line(buf, 3, &r, &sum, why, sizeof(why)), RP_LINE_BAD);
	assert_non_null(strstr(why, "not valid UTF-8"));
}

/* The interposer's writer and this reader agree on the format (docs/log-format.md). */
static void reads_what_the_writer_writes(void **state)
{
	(void)state;
	static void *frames[] = {(void *)0x10, (void *)0x20};
	gc_record rec = {.call = "cuMemFreeAsync", .result = 1, .ptr = 0x7f0000001000,
	                 .stream = 0x55, .capture_id = 3, .frames = frames, .nframes = 2,
	                 .pid = 42, .tid = 43, .seq = 9};
	gc_verdict v;
	memset(&v, 0, sizeof(v));
	v.rule = GC_RULE_FREE_FOREIGN_IN_CAPTURE;
	snprintf(v.message, sizeof(v.message), "a \"quoted\" message\\ with\ta tab");
	v.alloc = (gc_alloc_info){.known = 1, .call = "cuMemAllocFromPoolAsync",
	                          .ptr = 0x7f0000001000, .size = 200000, .stream = 0x55, .seq = 7};
	char buf[GC_RECORD_MAX];
	size_t n = gc_log_format_json(buf, sizeof(buf), &rec, &v);
	assert_true(n > 0);
	rp_record *r;
	rp_summary sum;
	char why[512];
	rp_line_kind k = rp_parse_line(buf, n - 1, &r, &sum, why, sizeof(why));
	if (k != RP_LINE_VIOLATION)
		print_error("%s\n%.*s\n", why, (int)n, buf);
	assert_int_equal(k, RP_LINE_VIOLATION);
	assert_int_equal(r->rule, GC_RULE_FREE_FOREIGN_IN_CAPTURE);
	assert_int_equal(r->seq, 9);
	assert_int_equal(r->backtrace.n, 2);
	assert_string_equal(r->message, "a \"quoted\" message\\ with\ta tab");
	assert_true(r->has_alloc);
	assert_int_equal(r->alloc.seq, 7);
	rp_record_free(r);

	memset(&v, 0, sizeof(v));
	v.rule = GC_RULE_LEAK_AT_EXIT;
	snprintf(v.message, sizeof(v.message), "leaks");
	rec.call = "exit";
	n = gc_log_format_json(buf, sizeof(buf), &rec, &v);
	assert_int_equal(rp_parse_line(buf, n - 1, &r, &sum, why, sizeof(why)), RP_LINE_VIOLATION);
	assert_int_equal(r->severity, GC_SEV_WARNING);
	assert_int_equal(r->n_leaks, 0);
	rp_record_free(r);
}

/* ---- reading streams: each malformed case ----------------------------------------------- */

/* start, a good record, the bad text, a good record: the bad line is line 3. */
static void read_with_bad_line(rp_test_log *t, const char *name, const char *bad, size_t bad_len)
{
	char *g1 = rp_test_line("free-foreign-in-capture", 1, "/abs/app", 0x100);
	char *g3 = rp_test_line("free-unmaterialized", 3, "/abs/app", 0x200);
	size_t n = strlen(start_line) + strlen(g1) + bad_len + strlen(g3);
	char *buf = malloc(n);
	assert_non_null(buf);
	size_t o = 0;
	memcpy(buf + o, start_line, strlen(start_line)), o += strlen(start_line);
	memcpy(buf + o, g1, strlen(g1)), o += strlen(g1);
	memcpy(buf + o, bad, bad_len), o += bad_len;
	memcpy(buf + o, g3, strlen(g3)), o += strlen(g3);
	rp_test_log_init(t);
	rp_test_log_read(t, name, buf, n);
	rp_test_log_finish(t);
	free(buf);
	free(g1);
	free(g3);
}

static void assert_diag(const rp_test_log *t, const char *where, const char *what)
{
	const char *d = t->diag ? t->diag : "";
	char want[256];
	snprintf(want, sizeof(want), "graphcheck-report: %s: ", where);
	const char *at = strstr(d, want);
	if (!at || !strstr(at, what))
		print_error("messages:\n%s\nexpected \"%s%s\"\n", d, want, what);
	assert_non_null(at);
	assert_non_null(strstr(at, what));
}

static void each_bad_line_is_named_and_skipped(void **state)
{
	(void)state;
	char *wrong_seq = edited("seq", json_string("x"));
	char *wrong_rule = edited("rule", json_integer(5));
	char *wrong_bt = edited("backtrace", json_string("nope"));
	char *unknown_rule = edited("rule", json_string("free-twice"));
	static const char invalid[] = "{\"type\":\"violation\",\"seq\":2,\n";
	static const char non_utf8[] = "{\"type\":\"start\",\"program\":\"caf\xe9\"}\n";
	const struct {
		const char *text;
		const char *expect;
	} cases[] = {
	    {invalid, "invalid JSON"},
	    {wrong_seq, "field \"seq\" must be an integer, not a string"},
	    {wrong_rule, "field \"rule\" must be a string, not an integer"},
	    {wrong_bt, "field \"backtrace\" must be an array of frames, not a string"},
	    {unknown_rule, "unknown rule \"free-twice\""},
	    {non_utf8, "not valid UTF-8: byte 0xe9"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rp_test_log t;
		/* edited() lines have no newline: give them one. */
		char *bad;
		assert_true(asprintf(&bad, "%s%s", cases[i].text,
		                     strchr(cases[i].text, '\n') ? "" : "\n") > 0);
		read_with_bad_line(&t, "bad.jsonl", bad, strlen(bad));
		assert_diag(&t, "bad.jsonl:3", cases[i].expect);
		assert_int_equal(t.rd.malformed, 1);
		assert_int_equal(t.rd.records, 2);
		assert_int_equal(t.fold.n, 2);
		assert_int_equal(t.rd.files, 1);
		assert_int_equal(t.rd.io_errors, 0);
		rp_test_log_free(&t);
		free(bad);
	}
	free(wrong_seq);
	free(wrong_rule);
	free(wrong_bt);
	free(unknown_rule);
}

static void truncated_last_line(void **state)
{
	(void)state;
	char *g1 = rp_test_line("free-foreign-in-capture", 1, "/abs/app", 0x100);
	char *g2 = rp_test_line("double-free", 2, "/abs/app", 0x200);
	char *buf;
	/* A process killed mid-write leaves the start of a record and no newline. */
	assert_true(asprintf(&buf, "%s%s%.*s", start_line, g1, (int)(strlen(g2) / 2), g2) > 0);
	rp_test_log t;
	rp_test_log_init(&t);
	rp_test_log_read(&t, "cut.jsonl", buf, strlen(buf));
	rp_test_log_finish(&t);
	assert_diag(&t, "cut.jsonl:3", "truncated last line (no newline at the end)");
	assert_int_equal(t.rd.malformed, 1);
	assert_int_equal(t.rd.records, 1);
	rp_test_log_free(&t);

	/* A whole last record without its newline is still a whole record. */
	free(buf);
	assert_true(asprintf(&buf, "%s%s%.*s", start_line, g1, (int)(strlen(g2) - 1), g2) > 0);
	rp_test_log_init(&t);
	rp_test_log_read(&t, "whole.jsonl", buf, strlen(buf));
	rp_test_log_finish(&t);
	assert_int_equal(t.rd.malformed, 0);
	assert_int_equal(t.rd.records, 2);
	rp_test_log_free(&t);
	free(buf);
	free(g1);
	free(g2);
}

static void empty_file(void **state)
{
	(void)state;
	rp_test_log t;
	rp_test_log_init(&t);
	rp_test_log_read(&t, "empty.jsonl", "", 0);
	rp_test_log_read(&t, "blank.jsonl", "\n  \n\t\n", 6);
	rp_test_log_finish(&t);
	assert_diag(&t, "empty.jsonl:1", "empty file");
	assert_diag(&t, "blank.jsonl:1", "empty file");
	assert_int_equal(t.rd.malformed, 2);
	assert_int_equal(t.rd.files, 2);
	assert_int_equal(t.rd.records, 0);
	rp_test_log_free(&t);
}

static void binary_file(void **state)
{
	(void)state;
	/* An ELF file given by mistake: the first NUL byte gives the whole file up. */
	static const char elf[] = "\x7f" "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0\n\n\0\0";
	rp_test_log t;
	rp_test_log_init(&t);
	rp_test_log_read(&t, "a.out", elf, sizeof(elf));
	rp_test_log_finish(&t);
	assert_diag(&t, "a.out:1", "binary data (a NUL byte)");
	assert_int_equal(t.rd.malformed, 1);
	assert_int_equal(t.rd.records, 0);
	rp_test_log_free(&t);

	/* After good records, the records before the binary part still count. */
	char *g1 = rp_test_line("double-free", 1, "/abs/app", 0x100);
	char *buf = malloc(strlen(g1) + sizeof(elf));
	memcpy(buf, g1, strlen(g1));
	memcpy(buf + strlen(g1), elf, sizeof(elf));
	rp_test_log_init(&t);
	rp_test_log_read(&t, "mixed", buf, strlen(g1) + sizeof(elf));
	rp_test_log_finish(&t);
	assert_diag(&t, "mixed:2", "binary data");
	assert_int_equal(t.rd.records, 1);
	assert_int_equal(t.rd.malformed, 1);
	rp_test_log_free(&t);
	free(buf);
	free(g1);
}

static void line_over_the_limit(void **state)
{
	(void)state;
	size_t n = RP_LINE_MAX + 100;
	char *huge = malloc(n + 1);
	assert_non_null(huge);
	memset(huge, ' ', n);
	memcpy(huge, "{\"type\":\"start\",\"pad\":\"", 23);
	huge[n - 2] = '"';
	huge[n - 1] = '}';
	huge[n] = '\n';
	rp_test_log t;
	read_with_bad_line(&t, "long.jsonl", huge, n + 1);
	assert_diag(&t, "long.jsonl:3", "line longer than 4194304 bytes");
	assert_int_equal(t.rd.malformed, 1);
	assert_int_equal(t.rd.records, 2);
	rp_test_log_free(&t);
	free(huge);
}

static void unknown_type_is_a_warning_only(void **state)
{
	(void)state;
	static const char line[] = "{\"type\":\"heartbeat\",\"pid\":42}\n";
	rp_test_log t;
	read_with_bad_line(&t, "u.jsonl", line, strlen(line));
	assert_diag(&t, "u.jsonl:3", "warning: unknown record type \"heartbeat\", skipped");
	assert_int_equal(t.rd.malformed, 0);
	assert_int_equal(t.rd.unknown, 1);
	assert_int_equal(t.rd.records, 2);
	rp_test_log_free(&t);
}

static void summary_is_cross_checked(void **state)
{
	(void)state;
	rp_test_log t;
	rp_test_log_init(&t);
	rp_test_log_read_file(&t, "tests/report/seed_pipeline.jsonl");
	rp_test_log_read_file(&t, "tests/report/summary_mismatch.jsonl");
	rp_test_log_finish(&t);
	/* The seed log's summary agrees (10 errors, 1 warning); the other's counts an error the
	 * file does not hold: a log that lost records, malformed; one that holds more than its
	 * summary counts (a pid's logs concatenated) only a note. */
	assert_null(strstr(t.diag, "seed_pipeline.jsonl"));
	assert_diag(&t, "tests/report/summary_mismatch.jsonl:3",
	            "the summary of pid 714 counts 2 errors, 0 warnings, 2 records; the "
	            "file holds 1, 0, 1: records are missing");
	assert_int_equal(t.rd.malformed, 1);
	assert_int_equal(t.rd.records, 12);
	rp_test_log_free(&t);
	rp_test_log_init(&t);
	rp_test_log_read_file(&t, "tests/report/summary_more.jsonl");
	rp_test_log_finish(&t);
	assert_diag(&t, "tests/report/summary_more.jsonl:6",
	            "note: the summary of pid 714 counts 1 errors, 0 warnings, 1 records; the "
	            "file holds 2, 0, 2");
	assert_int_equal(t.rd.malformed, 0);
	rp_test_log_free(&t);
}

/* A summary written from a fatal signal's handler says so; a normal one says nothing. */
static void summary_names_the_killing_signal(void **state)
{
	(void)state;
	static const char log[] =
	    "{\"type\":\"summary\",\"pid\":9,\"errors\":0,\"warnings\":0,\"records\":0,"
	    "\"signal\":\"SIGTERM\"}\n"
	    "{\"type\":\"summary\",\"pid\":10,\"errors\":0,\"warnings\":0,\"records\":0}\n";
	rp_test_log t;
	rp_test_log_init(&t);
	rp_test_log_read(&t, "sig.jsonl", log, strlen(log));
	rp_test_log_finish(&t);
	assert_diag(&t, "sig.jsonl:1", "note: pid 9 was killed by SIGTERM: its summary was "
	            "written as it died, and no leak check ran");
	assert_null(strstr(t.diag, "pid 10"));
	assert_int_equal(t.rd.malformed, 0);
	rp_test_log_free(&t);
}

static void messages_are_capped_per_file(void **state)
{
	(void)state;
	rp_test_log t;
	rp_test_log_init(&t);
	char buf[100 * 4];
	for (int i = 0; i < 100; i++)
		memcpy(buf + 4 * i, "{{{\n", 4);
	rp_test_log_read(&t, "junk", buf, sizeof(buf));
	rp_test_log_finish(&t);
	assert_int_equal(t.rd.malformed, 100);
	size_t lines = 0;
	for (const char *p = t.diag; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 21);
	assert_non_null(strstr(t.diag, "graphcheck-report: junk: more problems, not shown"));
	rp_test_log_free(&t);
}

static void crlf_and_blank_lines_are_fine(void **state)
{
	(void)state;
	char *g1 = rp_test_line("double-free", 1, "/abs/app", 0x100);
	char *buf;
	g1[strlen(g1) - 1] = '\0';
	assert_true(asprintf(&buf, "\n%s\r\n\n   \n%s\r\n", g1, g1) > 0);
	rp_test_log t;
	rp_test_log_init(&t);
	rp_test_log_read(&t, "crlf", buf, strlen(buf));
	rp_test_log_finish(&t);
	assert_int_equal(t.rd.malformed, 0);
	assert_int_equal(t.rd.records, 2);
	assert_int_equal(t.diag_len, 0);
	rp_test_log_free(&t);
	free(buf);
	free(g1);
}

static void files_that_cannot_be_read(void **state)
{
	(void)state;
	rp_test_log t;
	rp_test_log_init(&t);
	assert_int_equal(rp_read_file(&t.rd, "tests/report/no-such-file.jsonl"), -1);
	assert_int_equal(rp_read_file(&t.rd, "tests/report"), -1);
	rp_test_log_finish(&t);
	assert_int_equal(t.rd.io_errors, 2);
	assert_int_equal(t.rd.files, 0);
	assert_non_null(strstr(t.diag, "graphcheck-report: tests/report/no-such-file.jsonl: "
	                               "cannot open: No such file or directory"));
	assert_non_null(strstr(t.diag, "graphcheck-report: tests/report: cannot read: Is a "
	                               "directory"));
	rp_test_log_free(&t);
}

/* The fixtures under tests/report/malformed/, as the CLI test uses them. */
static void malformed_fixtures(void **state)
{
	(void)state;
	static const struct {
		const char *path;
		const char *where, *what;
		unsigned malformed, records;
	} cases[] = {
	    {"tests/report/malformed/truncated.jsonl", "truncated.jsonl:3", "truncated last line",
	     1, 1},
	    {"tests/report/malformed/invalid_json.jsonl", "invalid_json.jsonl:3", "invalid JSON",
	     1, 2},
	    {"tests/report/malformed/wrong_types.jsonl", "wrong_types.jsonl:3",
	     "field \"seq\" must be an integer, not a string", 3, 2},
	    {"tests/report/malformed/wrong_types.jsonl", "wrong_types.jsonl:4",
	     "field \"rule\" must be a string, not an integer", 3, 2},
	    {"tests/report/malformed/wrong_types.jsonl", "wrong_types.jsonl:5",
	     "field \"backtrace\" must be an array of frames, not an object", 3, 2},
	    {"tests/report/malformed/unknown_rule.jsonl", "unknown_rule.jsonl:3",
	     "unknown rule \"free-twice-maybe\"", 1, 2},
	    {"tests/report/malformed/empty.jsonl", "empty.jsonl:1", "empty file", 1, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rp_test_log t;
		rp_test_log_init(&t);
		rp_test_log_read_file(&t, cases[i].path);
		rp_test_log_finish(&t);
		char where[128];
		snprintf(where, sizeof(where), "tests/report/malformed/%s", cases[i].where);
		assert_diag(&t, where, cases[i].what);
		assert_int_equal(t.rd.malformed, cases[i].malformed);
		assert_int_equal(t.rd.records, cases[i].records);
		rp_test_log_free(&t);
	}
}

static int read_group(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(parses_a_full_record),
	    cmocka_unit_test(parses_start_summary_and_unknown_types),
	    cmocka_unit_test(names_each_wrong_field),
	    cmocka_unit_test(names_bad_json_and_bad_other_types),
	    cmocka_unit_test(reads_what_the_writer_writes),
	    cmocka_unit_test(each_bad_line_is_named_and_skipped),
	    cmocka_unit_test(truncated_last_line),
	    cmocka_unit_test(empty_file),
	    cmocka_unit_test(binary_file),
	    cmocka_unit_test(line_over_the_limit),
	    cmocka_unit_test(unknown_type_is_a_warning_only),
	    cmocka_unit_test(summary_is_cross_checked),
	    cmocka_unit_test(summary_names_the_killing_signal),
	    cmocka_unit_test(messages_are_capped_per_file),
	    cmocka_unit_test(crlf_and_blank_lines_are_fine),
	    cmocka_unit_test(files_that_cannot_be_read),
	    cmocka_unit_test(malformed_fixtures),
	};
	return cmocka_run_group_tests_name("report: reading", tests, NULL, NULL);
}

int rp_test_read_group(void)
{
	return read_group();
}

int main(void)
{
	/* Symbolization must not reach for a debuginfod server from a test. */
	unsetenv("DEBUGINFOD_URLS");
	int failed = rp_test_read_group();
	failed += rp_test_fold_group();
	failed += rp_test_format_group();
	failed += rp_test_symbolize_group();
	return failed ? 1 : 0;
}
