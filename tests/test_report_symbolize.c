/* graphcheck-report, symbols: a frame logged the interposer's way (address minus load bias,
 * a return address) resolves to the file and line of its call, in a program built with -g
 * next to this test (tests/report/symprog.c); without debug info it falls back to the ELF
 * symbol, and without the module to module+offset with the logged symbol. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/report/test_report.h"

/* The line of tests/report/symprog.c that holds the marked call. */
static unsigned marked_line(void)
{
	char *src = rp_test_slurp("tests/report/symprog.c", NULL);
	assert_non_null(src);
	char *at = strstr(src, "/* call-site:");
	assert_non_null(at);
	unsigned line = 1;
	for (const char *p = src; p < at; p++)
		line += *p == '\n';
	free(src);
	return line;
}

/* Runs a symprog built beside this binary and reads its log. */
static void run_symprog(rp_test_log *t, const char *name)
{
	char self[4096], cmd[4200];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	snprintf(cmd, sizeof(cmd), "%s/%s", self, name);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char buf[8192];
	size_t len = fread(buf, 1, sizeof(buf), p);
	assert_int_equal(pclose(p), 0);
	rp_test_log_init(t);
	rp_test_log_read(t, name, buf, len);
	rp_test_log_finish(t);
	assert_int_equal(t->rd.malformed, 0);
	assert_int_equal(t->fold.n, 1);
}

static void resolves_file_and_line(void **state)
{
	(void)state;
	rp_test_log t;
	run_symprog(&t, "report_symprog");
	rp_record *r = t.fold.v[0].first;
	rp_symbolizer *s = rp_sym_new();
	rp_sym_record(s, r);
	rp_sym_free(s);
	const rp_frame *f = &r->backtrace.v[0];
	assert_non_null(f->loc.file);
	const char *suffix = "tests/report/symprog.c";
	assert_true(strlen(f->loc.file) >= strlen(suffix));
	assert_string_equal(f->loc.file + strlen(f->loc.file) - strlen(suffix), suffix);
	assert_int_equal(f->loc.line, marked_line());
	assert_string_equal(f->loc.function, "main");
	char *text = rp_frame_str(f), want[4200];
	snprintf(want, sizeof(want), "%s:%u in main", f->loc.file, marked_line());
	assert_string_equal(text, want);
	free(text);
	assert_ptr_equal(rp_record_site(r), f);

	/* SARIF points at that file and line. */
	char *out;
	size_t len;
	FILE *o = open_memstream(&out, &len);
	rp_report rep = {.fold = &t.fold, .records = 1, .files = 1};
	assert_int_equal(rp_format_sarif(o, &rep), 0);
	fclose(o);
	json_t *doc = json_loadb(out, len, 0, NULL);
	assert_non_null(doc);
	json_t *res = json_array_get(json_object_get(json_array_get(json_object_get(doc, "runs"),
	                                                            0),
	                                             "results"),
	                             0);
	json_t *phys = json_object_get(json_array_get(json_object_get(res, "locations"), 0),
	                               "physicalLocation");
	const char *uri = json_string_value(
	    json_object_get(json_object_get(phys, "artifactLocation"), "uri"));
	assert_int_equal(strncmp(uri, "file:///", 8), 0);
	assert_string_equal(uri + strlen(uri) - strlen(suffix), suffix);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(phys, "region"),
	                                                    "startLine")),
	                 marked_line());
	json_decref(doc);
	free(out);
	rp_test_log_free(&t);
}

static void missing_module_falls_back(void **state)
{
	(void)state;
	rp_test_log t;
	run_symprog(&t, "report_symprog");
	rp_record *r = t.fold.v[0].first;
	rp_symbolizer *s = rp_sym_new();
	rp_sym_record(s, r);
	rp_sym_free(s);
	const rp_frame *f = &r->backtrace.v[1];
	assert_null(f->loc.file);
	char *text = rp_frame_str(f);
	/* Demangled when libstdc++ is on the machine, the logged name when not. */
	if (strcmp(text, "/nonexistent/libgone.so+0x1234 (gone(int))") != 0)
		assert_string_equal(text, "/nonexistent/libgone.so+0x1234 (_Z4gonei)");
	free(text);
	rp_test_log_free(&t);
}

static void no_debug_info_gives_the_symbol(void **state)
{
	(void)state;
	rp_test_log t;
	run_symprog(&t, "report_symprog_nodebug");
	rp_record *r = t.fold.v[0].first;
	rp_symbolizer *s = rp_sym_new();
	rp_sym_record(s, r);
	rp_sym_free(s);
	const rp_frame *f = &r->backtrace.v[0];
	assert_null(f->loc.file);
	char *text = rp_frame_str(f), want[4200];
	snprintf(want, sizeof(want), "%s+0x%llx (main)", f->module,
	         (unsigned long long)f->offset);
	assert_string_equal(text, want);
	free(text);
	/* No frame has a line: the site is the innermost frame outside system libraries. */
	assert_ptr_equal(rp_record_site(r), f);
	rp_test_log_free(&t);
}

static void unmapped_and_unsymbolized_frames(void **state)
{
	(void)state;
	rp_frame f = {.module = "?", .offset = 0x7f0012345678};
	rp_symbolizer *s = rp_sym_new();
	rp_sym_frame(s, &f);
	char *text = rp_frame_str(&f);
	assert_string_equal(text, "?+0x7f0012345678");
	free(text);
	/* Without symbolization (--no-symbolize), the logged symbol as it is. */
	rp_frame g = {.module = "/gone/app", .offset = 0x10, .symbol = "_Z1fv"};
	text = rp_frame_str(&g);
	assert_string_equal(text, "/gone/app+0x10 (_Z1fv)");
	free(text);
	/* The same missing module twice: looked up once, the same answer. */
	rp_frame h = g;
	rp_sym_frame(s, &g);
	rp_sym_frame(s, &h);
	char *a = rp_frame_str(&g), *b = rp_frame_str(&h);
	assert_string_equal(a, b);
	free(a);
	free(b);
	free(g.loc.function);
	free(h.loc.function);
	free(f.loc.function);
	rp_sym_free(s);
	/* A file that is not ELF is a module without symbols, not a failure. */
	rp_frame x = {.module = "tests/report/symprog.c", .offset = 0x10};
	s = rp_sym_new();
	rp_sym_frame(s, &x);
	rp_sym_free(s);
	assert_null(x.loc.file);
	assert_null(x.loc.function);
	assert_null(rp_first_site(&(rp_frames){NULL, 0}));
}

static void demangles_when_it_can(void **state)
{
	(void)state;
	assert_null(rp_demangle("main"));
	assert_null(rp_demangle(NULL));
	assert_null(rp_demangle("_Znot-a-name"));
	char *d = rp_demangle("_ZN2ns3fooEi");
	if (d) {
		assert_string_equal(d, "ns::foo(int)");
		free(d);
	}
}

static void utf8_repair(void **state)
{
	(void)state;
	char s[] = "ok \xff caf\xc3\xa9 \xc0\x80 \xed\xa0\x80 \xf4\x90\x80\x80 \xe2\x82";
	rp_make_utf8(s);
	assert_string_equal(s, "ok ? caf\xc3\xa9 ?? ??? ???? ??");
}

int rp_test_symbolize_group(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(resolves_file_and_line),
	    cmocka_unit_test(missing_module_falls_back),
	    cmocka_unit_test(no_debug_info_gives_the_symbol),
	    cmocka_unit_test(unmapped_and_unsymbolized_frames),
	    cmocka_unit_test(demangles_when_it_can),
	    cmocka_unit_test(utf8_repair),
	};
	return cmocka_run_group_tests_name("report: symbols", tests, NULL, NULL);
}
