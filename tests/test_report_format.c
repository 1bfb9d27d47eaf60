/* graphcheck-report, output: each format from the seed fixture (1 foreign free, 9 folded
 * unmaterialized frees, 1 leak), parsed back. SARIF has what its schema requires and every
 * result names a rule of the driver; JUnit has a testcase per rule and per entry, with
 * everything escaped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/report/test_report.h"

typedef struct out_buf {
	char *text;
	size_t len;
} out_buf;

static out_buf render(rp_format_fn fmt, const rp_fold *fold, uint64_t records, size_t files,
                      rp_fail_on fail_on)
{
	out_buf b = {NULL, 0};
	FILE *f = open_memstream(&b.text, &b.len);
	assert_non_null(f);
	rp_report rep = {.fold = fold, .records = records, .files = files, .fail_on = fail_on};
	assert_int_equal(fmt(f, &rep), 0);
	fclose(f);
	return b;
}

static void read_fixture(rp_test_log *t, const char *path)
{
	rp_test_log_init(t);
	rp_test_log_read_file(t, path);
	rp_test_log_finish(t);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

static void text_has_table_details_and_totals(void **state)
{
	(void)state;
	rp_test_log t;
	read_fixture(&t, "tests/report/seed_pipeline.jsonl");
	out_buf b = render(rp_format_text, &t.fold, t.rd.records, t.rd.files, RP_FAIL_ERROR);
	assert_non_null(strstr(b.text, "RULE                     SEVERITY  COUNT  FIRST SITE\n"));
	assert_non_null(strstr(b.text, "\nfree-foreign-in-capture  error         1  "
	                               "/tmp/tmp.cyO3Bnost1/seed_pipeline+0x8ec1\n"));
	assert_non_null(strstr(b.text, "\nfree-unmaterialized      error         9  "
	                               "/tmp/tmp.cyO3Bnost1/seed_pipeline+0x90b7\n"));
	/* A leak's site is where the leaked memory was allocated, not exit(). */
	assert_non_null(strstr(b.text, "\nleak-at-exit             warning       1  "
	                               "/tmp/tmp.cyO3Bnost1/seed_pipeline+0x8de0\n"));
	assert_non_null(strstr(b.text, "[2] error: free-unmaterialized in cuMemFreeAsync (returned "
	                               "1, CUDA_ERROR_INVALID_VALUE): 9 records\n"));
	assert_non_null(strstr(b.text, "first at tests/report/seed_pipeline.jsonl:3 (pid 714"));
	assert_non_null(strstr(b.text, "      #3 /lib/x86_64-linux-gnu/libc.so.6+0x2a28b "
	                               "(__libc_start_main)\n"));
	assert_non_null(strstr(b.text, "    allocated at:\n"));
	assert_non_null(strstr(b.text, "    10 allocations, 2000000 bytes, by "
	                               "cuMemAllocFromPoolAsync\n"));
	const char *totals = "graphcheck-report: 2 errors, 1 warnings (11 records in 1 files)\n";
	assert_true(b.len > strlen(totals));
	assert_string_equal(b.text + b.len - strlen(totals), totals);
	free(b.text);
	rp_test_log_free(&t);
}

/* A record written before the driver's call returned (a batch naming freed memory) says so
 * in place of a result, in text and JSON. */
static void before_call_is_no_result(void **state)
{
	(void)state;
	rp_test_log t;
	read_fixture(&t, "tests/report/before_call.jsonl");
	out_buf b = render(rp_format_text, &t.fold, t.rd.records, t.rd.files, RP_FAIL_ERROR);
	assert_non_null(strstr(b.text, "[1] error: use-after-free in cuMemcpyBatchAsync_v2 (before "
	                               "the call returned): 1 record\n"));
	assert_null(strstr(b.text, "returned 0"));
	free(b.text);
	b = render(rp_format_json, &t.fold, t.rd.records, t.rd.files, RP_FAIL_ERROR);
	json_error_t err;
	json_t *doc = json_loadb(b.text, b.len, 0, &err);
	assert_non_null(doc);
	json_t *e = json_array_get(json_object_get(doc, "entries"), 0);
	assert_true(json_is_true(json_object_get(e, "before_call")));
	json_decref(doc);
	free(b.text);
	rp_test_log_free(&t);
}

static void text_of_nothing_is_the_totals(void **state)
{
	(void)state;
	rp_test_log t;
	read_fixture(&t, "tests/report/clean.jsonl");
	out_buf b = render(rp_format_text, &t.fold, t.rd.records, t.rd.files, RP_FAIL_ERROR);
	assert_string_equal(b.text, "graphcheck-report: 0 errors, 0 warnings (0 records in 1 files)\n");
	free(b.text);
	rp_test_log_free(&t);
}

static json_t *parse_json(const out_buf *b)
{
	json_error_t err;
	json_t *doc = json_loadb(b->text, b->len, 0, &err);
	if (!doc)
		print_error("%s at %d\n", err.text, err.position);
	assert_non_null(doc);
	return doc;
}

static void json_document(void **state)
{
	(void)state;
	rp_test_log t;
	read_fixture(&t, "tests/report/seed_pipeline.jsonl");
	out_buf b = render(rp_format_json, &t.fold, t.rd.records, t.rd.files, RP_FAIL_WARNING);
	json_t *doc = parse_json(&b);
	assert_int_equal(json_integer_value(json_object_get(doc, "records")), 11);
	assert_int_equal(json_integer_value(json_object_get(doc, "files")), 1);
	assert_int_equal(json_integer_value(json_object_get(doc, "errors")), 2);
	assert_int_equal(json_integer_value(json_object_get(doc, "warnings")), 1);
	assert_int_equal(json_integer_value(json_object_get(doc, "error_records")), 10);
	assert_string_equal(json_string_value(json_object_get(doc, "fail_on")), "warning");
	json_t *entries = json_object_get(doc, "entries");
	assert_int_equal(json_array_size(entries), 3);
	json_t *e = json_array_get(entries, 1);
	assert_string_equal(json_string_value(json_object_get(e, "rule")), "free-unmaterialized");
	assert_int_equal(json_integer_value(json_object_get(e, "count")), 9);
	json_t *first = json_object_get(e, "first");
	assert_int_equal(json_integer_value(json_object_get(first, "line")), 3);
	json_t *f0 = json_array_get(json_object_get(e, "backtrace"), 0);
	assert_string_equal(json_string_value(json_object_get(f0, "offset")), "0x90b7");
	assert_string_equal(json_string_value(json_object_get(f0, "text")),
	                    "/tmp/tmp.cyO3Bnost1/seed_pipeline+0x90b7");
	assert_true(json_is_null(json_object_get(f0, "file")));
	json_t *alloc = json_object_get(e, "alloc");
	assert_int_equal(json_integer_value(json_object_get(alloc, "size")), 200000);
	json_t *leak = json_array_get(entries, 2);
	assert_int_equal(json_array_size(json_object_get(leak, "leaks")), 1);
	assert_int_equal(json_integer_value(json_object_get(leak, "leak_bytes")), 2000000);
	json_decref(doc);
	free(b.text);
	rp_test_log_free(&t);
}

static const char *str_at(json_t *o, const char *a, const char *b)
{
	json_t *v = json_object_get(o, a);
	if (b)
		v = json_object_get(v, b);
	assert_true(json_is_string(v));
	return json_string_value(v);
}

static void sarif_has_the_required_fields(void **state)
{
	(void)state;
	rp_test_log t;
	read_fixture(&t, "tests/report/seed_pipeline.jsonl");
	out_buf b = render(rp_format_sarif, &t.fold, t.rd.records, t.rd.files, RP_FAIL_ERROR);
	json_t *doc = parse_json(&b);
	assert_string_equal(str_at(doc, "version", NULL), "2.1.0");
	assert_non_null(strstr(str_at(doc, "$schema", NULL), "sarif-schema-2.1.0.json"));
	json_t *runs = json_object_get(doc, "runs");
	assert_int_equal(json_array_size(runs), 1);
	json_t *run = json_array_get(runs, 0);
	json_t *driver = json_object_get(json_object_get(run, "tool"), "driver");
	assert_string_equal(str_at(driver, "name", NULL), "graphcheck");
	assert_true(strlen(str_at(driver, "version", NULL)) > 0);
	assert_non_null(strstr(str_at(driver, "informationUri", NULL), "://"));
	json_t *rules = json_object_get(driver, "rules");
	assert_int_equal(json_array_size(rules), GC_RULE__COUNT);
	for (int i = 0; i < GC_RULE__COUNT; i++) {
		json_t *r = json_array_get(rules, (size_t)i);
		assert_string_equal(str_at(r, "id", NULL), gc_rule_id((gc_rule)i));
		assert_string_equal(str_at(r, "shortDescription", "text"), gc_rule_help((gc_rule)i));
		assert_string_equal(str_at(r, "fullDescription", "text"), gc_rule_help((gc_rule)i));
		assert_string_equal(str_at(r, "help", "text"), gc_rule_help((gc_rule)i));
		assert_string_equal(str_at(r, "defaultConfiguration", "level"),
		                    gc_severity_name(gc_rule_severity((gc_rule)i)));
	}
	json_t *results = json_object_get(run, "results");
	assert_int_equal(json_array_size(results), 3);
	for (size_t i = 0; i < 3; i++) {
		json_t *res = json_array_get(results, i);
		const char *id = str_at(res, "ruleId", NULL);
		int index = (int)json_integer_value(json_object_get(res, "ruleIndex"));
		assert_true(gc_rule_from_id(id) >= 0);
		assert_string_equal(str_at(json_array_get(rules, (size_t)index), "id", NULL), id);
		assert_true(strlen(str_at(res, "message", "text")) > 0);
		const char *level = str_at(res, "level", NULL);
		assert_true(strcmp(level, "error") == 0 || strcmp(level, "warning") == 0);
		/* Unresolved (the module is not here): located at the module, with its offset. */
		json_t *loc = json_array_get(json_object_get(res, "locations"), 0);
		json_t *phys = json_object_get(loc, "physicalLocation");
		assert_string_equal(str_at(phys, "artifactLocation", "uri"),
		                    "file:///tmp/tmp.cyO3Bnost1/seed_pipeline");
		assert_true(json_is_integer(json_object_get(json_object_get(phys, "address"),
		                                            "relativeAddress")));
		assert_true(json_array_size(json_object_get(res, "stacks")) >= 1);
	}
	json_t *props = json_object_get(json_array_get(results, 1), "properties");
	assert_int_equal(json_integer_value(json_object_get(props, "count")), 9);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(results, 1),
	                                                    "occurrenceCount")),
	                 9);
	json_decref(doc);
	free(b.text);
	rp_test_log_free(&t);
}

static void sarif_of_nothing(void **state)
{
	(void)state;
	rp_test_log t;
	read_fixture(&t, "tests/report/clean.jsonl");
	out_buf b = render(rp_format_sarif, &t.fold, t.rd.records, t.rd.files, RP_FAIL_ERROR);
	json_t *doc = parse_json(&b);
	json_t *run = json_array_get(json_object_get(doc, "runs"), 0);
	assert_true(json_is_array(json_object_get(run, "results")));
	assert_int_equal(json_array_size(json_object_get(run, "results")), 0);
	json_decref(doc);
	free(b.text);
	rp_test_log_free(&t);
}

static void junit_counts_rules_and_entries(void **state)
{
	(void)state;
	rp_test_log t;
	read_fixture(&t, "tests/report/seed_pipeline.jsonl");
	out_buf b = render(rp_format_junit, &t.fold, t.rd.records, t.rd.files, RP_FAIL_ERROR);
	assert_int_equal(strncmp(b.text, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 39), 0);
	/* The rules + 3 entries; failed at --fail-on=error: the 2 error rules with records and
	 * the 2 error entries; the warning's rule and entry told in <system-out>. */
	assert_int_equal(count(b.text, "<testcase "), GC_RULE__COUNT + 3);
	assert_int_equal(count(b.text, "</testcase>"), GC_RULE__COUNT + 3);
	assert_int_equal(count(b.text, "<failure "), 4);
	assert_int_equal(count(b.text, "</failure>"), 4);
	assert_int_equal(count(b.text, "<system-out>"), 2);
	char suite[80];
	snprintf(suite, sizeof suite, "<testsuite name=\"graphcheck\" tests=\"%d\" failures=\"4\"",
	         GC_RULE__COUNT + 3);
	assert_non_null(strstr(b.text, suite));
	assert_non_null(strstr(b.text, "<testcase classname=\"graphcheck.double-free\" "
	                               "name=\"double-free\">\n    </testcase>"));
	assert_non_null(strstr(b.text, "message=\"9 records\""));
	assert_non_null(strstr(b.text, "name=\"[2] free-unmaterialized at "
	                               "/tmp/tmp.cyO3Bnost1/seed_pipeline+0x90b7\""));
	/* The message's apostrophe ("graph's") is escaped in the attribute. */
	assert_non_null(strstr(b.text, "after the graph&apos;s launch"));
	free(b.text);
	rp_test_log_free(&t);

	read_fixture(&t, "tests/report/clean.jsonl");
	b = render(rp_format_junit, &t.fold, t.rd.records, t.rd.files, RP_FAIL_ERROR);
	assert_int_equal(count(b.text, "<testcase "), GC_RULE__COUNT);
	assert_int_equal(count(b.text, "<failure"), 0);
	free(b.text);
	rp_test_log_free(&t);
}

/* A record whose strings hold every character that XML, JSON or a terminal minds. */
static void hostile_strings_are_escaped(void **state)
{
	(void)state;
	char *line = rp_test_line("api-error", 1, "/abs/a&b<c>.so", 0x10);
	json_t *o = json_loads(line, 0, NULL);
	json_object_set_new(o, "message", json_string("a<b & \"c\" 'd' \x01\x1b[31m e\xef\xbf\xbe"));
	json_object_set_new(o, "call", json_string("cu]]>Call"));
	char *dumped = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	free(line);
	rp_test_log t;
	rp_test_log_init(&t);
	rp_test_log_read(&t, "hostile", dumped, strlen(dumped));
	rp_test_log_finish(&t);
	free(dumped);
	assert_int_equal(t.rd.records, 1);

	out_buf b = render(rp_format_junit, &t.fold, 1, 1, RP_FAIL_ERROR);
	assert_non_null(strstr(b.text, "message=\"a&lt;b &amp; &quot;c&quot; &apos;d&apos; "
	                               "\xef\xbf\xbd\xef\xbf\xbd[31m e\xef\xbf\xbd\""));
	assert_non_null(strstr(b.text, ">error: api-error in cu]]&gt;Call"));
	assert_non_null(strstr(b.text, "/abs/a&amp;b&lt;c&gt;.so+0x10"));
	assert_null(strchr(b.text, '\x01'));
	assert_null(strchr(b.text, '\x1b'));
	free(b.text);

	b = render(rp_format_text, &t.fold, 1, 1, RP_FAIL_ERROR);
	assert_null(strchr(b.text, '\x1b'));
	assert_non_null(strstr(b.text, "a<b & \"c\" 'd' ??[31m e"));
	free(b.text);

	b = render(rp_format_sarif, &t.fold, 1, 1, RP_FAIL_ERROR);
	json_t *doc = parse_json(&b);
	json_t *res = json_array_get(json_object_get(json_array_get(json_object_get(doc, "runs"),
	                                                            0),
	                                             "results"),
	                             0);
	assert_non_null(strstr(str_at(res, "message", "text"), "a<b & \"c\""));
	json_t *phys = json_object_get(json_array_get(json_object_get(res, "locations"), 0),
	                               "physicalLocation");
	assert_string_equal(str_at(phys, "artifactLocation", "uri"), "file:///abs/a%26b%3Cc%3E.so");
	json_decref(doc);
	free(b.text);
	rp_test_log_free(&t);
}

static void gate_levels(void **state)
{
	(void)state;
	assert_true(rp_gate_fails(RP_FAIL_ERROR, GC_SEV_ERROR));
	assert_false(rp_gate_fails(RP_FAIL_ERROR, GC_SEV_WARNING));
	assert_true(rp_gate_fails(RP_FAIL_WARNING, GC_SEV_ERROR));
	assert_true(rp_gate_fails(RP_FAIL_WARNING, GC_SEV_WARNING));
	assert_false(rp_gate_fails(RP_FAIL_NEVER, GC_SEV_ERROR));
	assert_false(rp_gate_fails(RP_FAIL_NEVER, GC_SEV_WARNING));
	assert_ptr_equal(rp_formatter("text"), rp_format_text);
	assert_ptr_equal(rp_formatter("json"), rp_format_json);
	assert_ptr_equal(rp_formatter("sarif"), rp_format_sarif);
	assert_ptr_equal(rp_formatter("junit"), rp_format_junit);
	assert_null(rp_formatter("xml"));
}

int rp_test_format_group(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(text_has_table_details_and_totals),
	    cmocka_unit_test(text_of_nothing_is_the_totals),
	    cmocka_unit_test(before_call_is_no_result),
	    cmocka_unit_test(json_document),
	    cmocka_unit_test(sarif_has_the_required_fields),
	    cmocka_unit_test(sarif_of_nothing),
	    cmocka_unit_test(junit_counts_rules_and_entries),
	    cmocka_unit_test(hostile_strings_are_escaped),
	    cmocka_unit_test(gate_levels),
	};
	return cmocka_run_group_tests_name("report: formats", tests, NULL, NULL);
}
