/* graphcheck-report, folding: records of one rule at one call site (the same module+offset
 * list) are one entry with a count, whatever else differs; any difference in the site
 * keeps entries apart; entries sort errors first, then by rule, then as first seen. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/report/test_report.h"

static rp_record *parsed(const char *line)
{
	rp_record *r;
	rp_summary sum;
	char why[256];
	assert_int_equal(rp_parse_line(line, strlen(line) - 1, &r, &sum, why, sizeof(why)),
	                 RP_LINE_VIOLATION);
	return r;
}

static void add(rp_fold *f, const char *rule, unsigned seq, const char *module, uint64_t off)
{
	char *line = rp_test_line(rule, seq, module, off);
	rp_fold_add(f, parsed(line));
	free(line);
}

static void ten_thousand_at_one_site_are_one_entry(void **state)
{
	(void)state;
	rp_fold f;
	rp_fold_init(&f);
	/* A loop of 10,000 iterations: seq, pointer and message may differ, the site does not. */
	for (unsigned i = 1; i <= 10000; i++)
		add(&f, "free-unmaterialized", i, "/abs/app", 0x90b7);
	rp_fold_sort(&f);
	assert_int_equal(f.n, 1);
	assert_int_equal(f.v[0].count, 10000);
	assert_int_equal(f.v[0].first->seq, 1);  /* the first record stands for the rest */
	assert_int_equal(f.records[GC_SEV_ERROR], 10000);
	assert_int_equal(f.entries[GC_SEV_ERROR], 1);
	rp_fold_free(&f);
}

static void different_sites_stay_apart(void **state)
{
	(void)state;
	rp_fold f;
	rp_fold_init(&f);
	add(&f, "double-free", 1, "/abs/app", 0x100);
	add(&f, "double-free", 2, "/abs/app", 0x101);        /* another offset */
	add(&f, "double-free", 3, "/abs/other.so", 0x100);   /* another module */
	add(&f, "free-unknown", 4, "/abs/app", 0x100);       /* another rule */
	add(&f, "double-free", 5, "/abs/app", 0x100);        /* the first one again */
	/* Same innermost frame, another caller: a different site. */
	char *line = rp_test_line("double-free", 6, "/abs/app", 0x100);
	json_t *o = json_loads(line, 0, NULL);
	json_t *bt = json_object_get(o, "backtrace");
	json_object_set_new(json_array_get(bt, 1), "offset", json_string("0x2a1cb"));
	char *moved = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	free(line);
	assert_true(asprintf(&line, "%s\n", moved) > 0);
	rp_fold_add(&f, parsed(line));
	free(line);
	free(moved);
	/* One frame fewer: also different. */
	line = rp_test_line("double-free", 7, "/abs/app", 0x100);
	o = json_loads(line, 0, NULL);
	json_array_remove(json_object_get(o, "backtrace"), 1);
	moved = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	free(line);
	assert_true(asprintf(&line, "%s\n", moved) > 0);
	rp_fold_add(&f, parsed(line));
	free(line);
	free(moved);

	rp_fold_sort(&f);
	assert_int_equal(f.n, 6);
	uint64_t total = 0;
	for (size_t i = 0; i < f.n; i++)
		total += f.v[i].count;
	assert_int_equal(total, 7);
	/* double-free entries first (rule table order), in the order first seen. */
	assert_int_equal(f.v[0].first->seq, 1);
	assert_int_equal(f.v[0].count, 2);
	assert_int_equal(f.v[1].first->seq, 2);
	assert_int_equal(f.v[2].first->seq, 3);
	assert_int_equal(f.v[3].first->seq, 6);
	assert_int_equal(f.v[4].first->seq, 7);
	assert_int_equal(f.v[5].first->rule, GC_RULE_FREE_UNKNOWN);
	rp_fold_free(&f);
}

static void errors_sort_before_warnings(void **state)
{
	(void)state;
	rp_fold f;
	rp_fold_init(&f);
	add(&f, "leak-at-exit", 1, "/abs/app", 0x10);
	add(&f, "api-error", 2, "/abs/app", 0x20);
	add(&f, "free-foreign-in-capture", 3, "/abs/app", 0x30);
	rp_fold_sort(&f);
	assert_int_equal(f.v[0].first->rule, GC_RULE_FREE_FOREIGN_IN_CAPTURE);
	assert_int_equal(f.v[1].first->rule, GC_RULE_API_ERROR);
	assert_int_equal(f.v[2].first->rule, GC_RULE_LEAK_AT_EXIT);
	assert_int_equal(f.entries[GC_SEV_ERROR], 2);
	assert_int_equal(f.entries[GC_SEV_WARNING], 1);
	/* Adding after a sort still folds (the hash is rebuilt). */
	add(&f, "api-error", 4, "/abs/app", 0x20);
	add(&f, "api-error", 5, "/abs/app", 0x21);
	assert_int_equal(f.n, 4);
	rp_fold_free(&f);
}

static void many_sites_grow_the_table(void **state)
{
	(void)state;
	rp_fold f;
	rp_fold_init(&f);
	for (unsigned round = 0; round < 3; round++)
		for (unsigned i = 0; i < 3000; i++)
			add(&f, "double-free", i, "/abs/app", 0x1000 + 16 * i);
	assert_int_equal(f.n, 3000);
	for (size_t i = 0; i < f.n; i++)
		assert_int_equal(f.v[i].count, 3);
	rp_fold_free(&f);
}

/* Several processes' %p files of one run fold together. */
static void folds_across_files(void **state)
{
	(void)state;
	rp_test_log t;
	rp_test_log_init(&t);
	rp_test_log_read_file(&t, "tests/report/run.1001.jsonl");
	rp_test_log_read_file(&t, "tests/report/run.1002.jsonl");
	rp_test_log_finish(&t);
	assert_int_equal(t.rd.files, 2);
	assert_int_equal(t.rd.records, 3);
	assert_int_equal(t.rd.malformed, 0);
	assert_int_equal(t.fold.n, 2);
	assert_int_equal(t.fold.v[0].first->rule, GC_RULE_FREE_UNMATERIALIZED);
	assert_int_equal(t.fold.v[0].count, 2);
	assert_string_equal(t.fold.v[0].first->file, "tests/report/run.1001.jsonl");
	assert_int_equal(t.fold.v[1].first->rule, GC_RULE_DOUBLE_FREE);
	rp_test_log_free(&t);
}

static void seed_fixture_folds_to_three(void **state)
{
	(void)state;
	rp_test_log t;
	rp_test_log_init(&t);
	rp_test_log_read_file(&t, "tests/report/seed_pipeline.jsonl");
	rp_test_log_finish(&t);
	assert_int_equal(t.rd.records, 11);
	assert_int_equal(t.fold.n, 3);
	assert_int_equal(t.fold.v[0].first->rule, GC_RULE_FREE_FOREIGN_IN_CAPTURE);
	assert_int_equal(t.fold.v[0].count, 1);
	assert_int_equal(t.fold.v[1].first->rule, GC_RULE_FREE_UNMATERIALIZED);
	assert_int_equal(t.fold.v[1].count, 9);
	assert_int_equal(t.fold.v[1].first->line, 3);
	assert_int_equal(t.fold.v[2].first->rule, GC_RULE_LEAK_AT_EXIT);
	assert_int_equal(t.fold.records[GC_SEV_ERROR], 10);
	assert_int_equal(t.fold.records[GC_SEV_WARNING], 1);
	rp_test_log_free(&t);
}

int rp_test_fold_group(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(ten_thousand_at_one_site_are_one_entry),
	    cmocka_unit_test(different_sites_stay_apart),
	    cmocka_unit_test(errors_sort_before_warnings),
	    cmocka_unit_test(many_sites_grow_the_table),
	    cmocka_unit_test(folds_across_files),
	    cmocka_unit_test(seed_fixture_folds_to_three),
	};
	return cmocka_run_group_tests_name("report: folding", tests, NULL, NULL);
}
