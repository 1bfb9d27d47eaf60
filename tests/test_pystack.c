/* A thread's Python stack read as memory (interpose/pystack.c), against interpreters made
 * here: CPython 3.12's and 3.10's structures laid out by hand, with the type objects and
 * Py_Version the reader looks up exported from this binary. Lines from hand-encoded line
 * tables (every entry form), names in ASCII and UCS-2, frames C owns skipped, and chains that
 * lead to unmapped memory, wrong types or a cycle: no crash, the reader turned off. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "interpose/pystack.h"

#define EXPORT __attribute__((visibility("default")))
EXPORT unsigned long Py_Version = 0x030c01f0;  /* what the reader takes the interpreter for */
EXPORT char PyCode_Type[64], PyUnicode_Type[64], PyBytes_Type[64], PyFrame_Type[64];

/* Objects in one arena, 16-aligned. */
static _Alignas(16) unsigned char arena[1 << 16];
static size_t used;

static unsigned char *obj(size_t n, const void *type)
{
	unsigned char *p = arena + used;
	used += (n + 15) & ~(size_t)15;
	memset(p, 0, n);
	memcpy(p + 8, &type, sizeof(type));
	return p;
}

static void put(unsigned char *at, const void *v, size_t n)
{
	memcpy(at, v, n);
}

static void put_ptr(unsigned char *at, const void *p)
{
	put(at, &p, sizeof(p));
}

static void put_int(unsigned char *at, int v)
{
	put(at, &v, sizeof(v));
}

static int minor;  /* the layout being built: 10 or 12 */

static unsigned char *ascii(const char *s)
{
	size_t n = strlen(s), hdr = minor == 12 ? 40 : 48;
	unsigned char *o = obj(hdr + n + 1, PyUnicode_Type);
	intptr_t len = (intptr_t)n;
	unsigned state = 1u << 2 | 1u << 5 | 1u << 6;  /* kind 1, compact, ascii */
	put(o + 16, &len, sizeof(len));
	put(o + 32, &state, sizeof(state));
	memcpy(o + hdr, s, n + 1);
	return o;
}

static unsigned char *ucs2(const uint16_t *s, size_t n)
{
	size_t hdr = minor == 12 ? 56 : 72;
	unsigned char *o = obj(hdr + 2 * n + 2, PyUnicode_Type);
	intptr_t len = (intptr_t)n;
	unsigned state = 2u << 2 | 1u << 5;  /* kind 2, compact */
	put(o + 16, &len, sizeof(len));
	put(o + 32, &state, sizeof(state));
	memcpy(o + hdr, s, 2 * n);
	return o;
}

static unsigned char *bytes(const unsigned char *b, size_t n)
{
	unsigned char *o = obj(32 + n + 1, PyBytes_Type);
	intptr_t len = (intptr_t)n;
	put(o + 16, &len, sizeof(len));
	memcpy(o + 32, b, n);
	return o;
}

/* 3.11+'s location table, first line 10: code units 0-1 line 11 (no-column form, +1),
 * 2 line 12 (one-line form 1), 3 line 11 (long form, -1, a column past 128), 4 no line,
 * 5 line 11 (short form), 6 line 111 (no-column, +100 in two varint bytes). */
static const unsigned char loc_table[] = {
	0x80 | 13 << 3 | 1, 0x02,
	0x80 | 11 << 3, 0x05, 0x09,
	0x80 | 14 << 3, 0x03, 0x00, 0x48, 0x03, 0x01,
	0x80 | 15 << 3,
	0x80 | 0 << 3, 0x12,
	0x80 | 13 << 3, 0x48, 0x03,
};
/* 3.10's pairs, first line 10: bytes 0-3 line 11, 4-5 line 12, 6-7 none, 8-11 line 11. */
static const unsigned char pair_table[] = {4, 1, 2, 1, 2, 0x80, 4, 0xff};

/* A 3.12 code object: 16 code units. */
static unsigned char *code312(unsigned char *file, unsigned char *name)
{
	unsigned char *c = obj(192 + 32, PyCode_Type);
	intptr_t units = 16;
	put(c + 16, &units, sizeof(units));
	put_ptr(c + 112, file);
	put_ptr(c + 128, name);
	put_int(c + 68, 10);
	put_ptr(c + 136, bytes(loc_table, sizeof(loc_table)));
	put_int(c + 176, 0);
	return c;
}

/* A 3.12 frame running code at code unit `unit`, owned by `owner`. */
static unsigned char *frame312(unsigned char *code, int unit, unsigned char *back, int owner)
{
	unsigned char *f = obj(80, NULL);
	put_ptr(f + 0, code);
	put_ptr(f + 8, back);
	put_ptr(f + 56, code + 192 + 2 * unit);
	f[70] = (unsigned char)owner;
	return f;
}

/* A 3.12 thread state whose innermost frame is f (through its _PyCFrame). */
static unsigned char *tstate312(unsigned char *f)
{
	unsigned char *cf = obj(16, NULL), *ts = obj(256, NULL);
	put_ptr(cf + 0, f);
	put_ptr(ts + 56, cf);
	return ts;
}

static struct {
	char file[64], function[64];
	int line;
} got[16];
static int n_got;

static uint32_t collect(void *ctx, const gc_pystack_frame *f)
{
	(void)ctx;
	if (n_got < 16 && !f->id) {
		snprintf(got[n_got].file, sizeof(got[0].file), "%s", f->file);
		snprintf(got[n_got].function, sizeof(got[0].function), "%s", f->function);
		got[n_got].line = f->line;
	}
	n_got++;
	return 0;  /* no id: the memo never answers, every frame is read */
}

static char file_buf[GC_PY_TEXT_MAX + 1], function_buf[GC_PY_TEXT_MAX + 1];
static gc_pystack_memo memo;

static int walk(const void *ts, int max)
{
	n_got = 0;
	return gc_pystack_walk(ts, max, collect, NULL, &memo, file_buf, function_buf);
}

static int setup(int version_minor)
{
	used = 0;
	minor = version_minor;
	Py_Version = 0x03000000ul | (unsigned long)version_minor << 16;
	gc_pystack_init();
	return 0;
}

static void lines_names_and_skipped_frames(void **state)
{
	(void)state;
	setup(12);
	unsigned char *file = ascii("/app/train.py");
	const uint16_t name[] = {0x4e8c, 0x91cd, 'f'};  /* "二重f" */
	unsigned char *outer_code = code312(file, ascii("<module>"));
	unsigned char *inner_code = code312(file, ucs2(name, 3));
	unsigned char *outer = frame312(outer_code, 6, NULL, 0);
	unsigned char *shim = frame312(outer_code, 0, outer, 3);       /* C's: skipped */
	unsigned char *inner = frame312(inner_code, 3, shim, 0);
	unsigned char *fresh = frame312(inner_code, -1, inner, 0);     /* not started: skipped */
	put_int(inner_code + 176, 0);
	unsigned char *ts = tstate312(fresh);
	assert_int_equal(walk(ts, 8), 2);
	assert_string_equal(got[0].file, "/app/train.py");
	assert_string_equal(got[0].function, "\xe4\xba\x8c\xe9\x87\x8d" "f");
	assert_int_equal(got[0].line, 11);
	assert_string_equal(got[1].function, "<module>");
	assert_int_equal(got[1].line, 111);
	/* every form of the table, now trusted (plain reads) */
	const int want[] = {11, 11, 12, 11, -1, 11, 111};
	for (int unit = 0; unit < 7; unit++) {
		put_ptr(inner + 56, inner_code + 192 + 2 * unit);
		assert_int_equal(walk(ts, 1), 1);
		assert_int_equal(got[0].line, want[unit]);
	}
}

static void unmapped_memory_turns_the_reader_off(void **state)
{
	(void)state;
	setup(12);
	unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(page != MAP_FAILED);
	munmap(page, 4096);
	unsigned char *code = code312(ascii("a.py"), ascii("f"));
	unsigned char *f = frame312(code, 0, page, 0);  /* its caller: unmapped memory */
	unsigned char *ts = tstate312(f);
	assert_int_equal(walk(ts, 8), -1);
	assert_int_equal(n_got, 0);  /* nothing passed on from a chain that failed */
	/* off for good: a good chain is not read either */
	put_ptr(f + 8, NULL);
	assert_int_equal(walk(ts, 8), -1);
}

static void wrong_types_turn_the_reader_off(void **state)
{
	(void)state;
	setup(12);
	unsigned char *code = code312(ascii("a.py"), ascii("f"));
	unsigned char *ts = tstate312(frame312(code, 0, NULL, 0));
	void *not_code = PyBytes_Type;
	put_ptr(code + 8, not_code);
	assert_int_equal(walk(ts, 8), -1);
	put_ptr(code + 8, PyCode_Type);
	assert_int_equal(walk(ts, 8), -1);
	/* a name that is not a str, on a fresh reader */
	setup(12);
	code = code312(ascii("a.py"), bytes((const unsigned char *)"f", 1));
	assert_int_equal(walk(tstate312(frame312(code, 0, NULL, 0)), 8), -1);
}

static void a_cycle_is_bounded(void **state)
{
	(void)state;
	setup(12);
	unsigned char *code = code312(ascii("a.py"), ascii("f"));
	unsigned char *f = frame312(code, 0, NULL, 0);
	put_ptr(f + 8, f);
	unsigned char *ts = tstate312(f);
	assert_int_equal(walk(ts, 8), -1);  /* never reaches an end: not proven, not passed on */
	put_ptr(f + 8, NULL);
	assert_int_equal(walk(ts, 8), 1);   /* still on: a later good chain is read */
	put_ptr(f + 8, f);
	assert_int_equal(walk(ts, 8), 8);   /* trusted: up to max */
}

static void python_310_frames_and_pairs(void **state)
{
	(void)state;
	setup(10);
	unsigned char *c = obj(160, PyCode_Type);
	put_ptr(c + 104, ascii("old.py"));
	put_ptr(c + 112, ascii("g"));
	put_int(c + 40, 10);
	put_ptr(c + 120, bytes(pair_table, sizeof(pair_table)));
	unsigned char *f = obj(112, PyFrame_Type);
	put_ptr(f + 32, c);
	unsigned char *ts = obj(64, NULL);
	put_ptr(ts + 24, f);
	const int lasti[] = {-1, 0, 1, 2, 3, 4, 5}, want[] = {10, 11, 11, 12, 0, 11, 11};
	for (int i = 0; i < 7; i++) {
		put_int(f + 96, lasti[i]);
		assert_int_equal(walk(ts, 4), 1);
		assert_string_equal(got[0].function, "g");
		assert_int_equal(got[0].line, want[i] ? want[i] : -1);
	}
}

static void an_unknown_version_is_off(void **state)
{
	(void)state;
	setup(14);
	unsigned char *ts = obj(256, NULL);
	assert_int_equal(walk(ts, 8), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lines_names_and_skipped_frames),
		cmocka_unit_test(unmapped_memory_turns_the_reader_off),
		cmocka_unit_test(wrong_types_turn_the_reader_off),
		cmocka_unit_test(a_cycle_is_bounded),
		cmocka_unit_test(python_310_frames_and_pairs),
		cmocka_unit_test(an_unknown_version_is_off),
	};
	return cmocka_run_group_tests_name("pystack", tests, NULL, NULL);
}
