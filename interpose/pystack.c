#include "interpose/pystack.h"
#include "interpose/safe_read.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Where CPython keeps what we read, per minor version (x86-64 and aarch64 alike: LP64, no
 * padding differences). Offsets in bytes; -1: the version has no such field. */
struct layout {
	int minor;
	int ts_frame;        /* thread state: its frame (3.10, 3.13) or its _PyCFrame (3.11, 3.12) */
	int cframe_frame;    /* _PyCFrame: its current frame; -1 where ts_frame is the frame */
	int fr_code;         /* frame: the code object (f_code, f_executable) */
	int fr_back;         /* frame: the caller's frame (f_back, previous) */
	int fr_instr;        /* 3.10: f_lasti (int, in code units); later: the instruction pointer */
	int fr_owner;        /* the frame's owner (char); -1: 3.10's frames are objects */
	int co_file, co_name, co_firstline, co_linetable;
	int co_code;         /* the bytecode, inside the code object (3.11+) */
	int co_firsttraceable;
	int str_ascii;       /* sizeof(PyASCIIObject): where a compact ASCII string's text is */
	int str_compact;     /* sizeof(PyCompactUnicodeObject): a compact string's other text */
};

/* co_name is 3.10's function name; 3.11+ read co_qualname (as pyframes.c's API path). */
static const struct layout layouts[] = {
	{10, 24, -1, 32, 24, 96, -1, 104, 112, 40, 120, -1, -1, 48, 72},
	{11, 56, 8, 32, 48, 56, 69, 112, 128, 72, 136, 184, 168, 48, 72},
	{12, 56, 0, 0, 8, 56, 70, 112, 128, 68, 136, 192, 176, 40, 56},
	{13, 72, -1, 0, 8, 56, 70, 112, 128, 68, 136, 200, 184, 40, 56},
};

/* Common to all four: the object header and the string and bytes headers. */
#define OB_TYPE 8
#define OB_SIZE 16          /* a variable-size object's item count */
#define STR_LENGTH 16
#define STR_STATE 32        /* bits: interned:2, kind:3, compact:1, ascii:1 */
#define BYTES_DATA 32
#define OWNER_GENERATOR 1
#define OWNER_CSTACK 3      /* 3.12+: a C entry frame, not the program's */
#define DEPTH_MAX 1024      /* frames followed at most */
#define LINETABLE_MAX (1u << 20)

enum { UNCHECKED, TRUSTED, OFF };
static const struct layout *L;
static const void *code_type, *str_type, *bytes_type, *frame_type;
static int trust = OFF;  /* read and written with __atomic: any thread may settle it */

void gc_pystack_init(void)
{
	const unsigned long *hex = dlsym(RTLD_DEFAULT, "Py_Version");  /* 3.11+ */
	const char *(*version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "Py_GetVersion");
	int major = 0, minor = -1;
	L = NULL;
	if (hex) {
		major = (int)(*hex >> 24);
		minor = (int)((*hex >> 16) & 0xff);
	} else if (version) {
		/* "3.10.13 (main, ...": a static buffer filled without the interpreter */
		const char *v = version();
		char *end;
		major = (int)strtol(v, &end, 10);
		if (*end == '.')
			minor = (int)strtol(end + 1, NULL, 10);
	}
	for (size_t i = 0; major == 3 && i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor)
			L = &layouts[i];
	code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
	str_type = dlsym(RTLD_DEFAULT, "PyUnicode_Type");
	bytes_type = dlsym(RTLD_DEFAULT, "PyBytes_Type");
	frame_type = dlsym(RTLD_DEFAULT, "PyFrame_Type");
	int usable = L && code_type && str_type && bytes_type && frame_type;
	__atomic_store_n(&trust, usable ? UNCHECKED : OFF, __ATOMIC_RELAXED);
}

/* ---- reads ----------------------------------------------------------------------------- */

/* Hot code reads plain memory: the checked path is out of line, and the walk is inlined
 * into each of its two callers, so that r->checked is a constant there. */
#define HOT static inline __attribute__((always_inline))

struct reader {
	int checked;  /* through gc_safe_read: a bad address fails instead of faulting */
	int fault;    /* a checked read failed */
};

HOT int plausible(uintptr_t p, uintptr_t align)
{
	return p >= 4096 && p < ((uintptr_t)1 << 56) && !(p & (align - 1));
}

static __attribute__((noinline)) int rd_checked(struct reader *r, void *dst, uintptr_t src,
                                                size_t n)
{
	if (!n || gc_safe_read((const void *)src, dst, n))  /* n: at most 1,024 here */
		return 1;
	r->fault = 1;
	return 0;
}

/* Inline: the sizes are constants, and a plain read is a load. */
HOT int rd(struct reader *r, void *dst, uintptr_t src, size_t n)
{
	if (!r->checked) {
		memcpy(dst, (const void *)src, n);
		return 1;
	}
	return rd_checked(r, dst, src, n);
}

HOT int rd_ptr(struct reader *r, uintptr_t at, uintptr_t *out)
{
	if (!r->checked) {
		*out = *(const uintptr_t *)at;
		return 1;
	}
	return rd(r, out, at, sizeof(*out));
}

HOT int rd_int(struct reader *r, uintptr_t at, int *out)
{
	if (!r->checked) {
		*out = *(const int *)at;
		return 1;
	}
	return rd(r, out, at, sizeof(*out));
}

/* An object's type is t (its address read, not followed). */
HOT int is_a(struct reader *r, uintptr_t obj, const void *t)
{
	uintptr_t ty;
	return plausible(obj, 8) && rd_ptr(r, obj + OB_TYPE, &ty) && ty == (uintptr_t)t;
}

static size_t put_utf8(char *out, size_t at, size_t cap, uint32_t c)
{
	char b[4];
	size_t n;
	if (c < 0x80) {
		b[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | (c >> 18 & 7));
		b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	if (at + n > cap)
		return 0;
	memcpy(out + at, b, n);
	return n;
}

/* A str object's text as UTF-8 into out (cut at GC_PY_TEXT_MAX bytes). Compact strings
 * only (every name a code object holds); 0 for anything else. */
static int read_str(struct reader *r, uintptr_t s, char out[GC_PY_TEXT_MAX + 1])
{
	unsigned state;
	intptr_t len;
	if (!is_a(r, s, str_type) || !rd(r, &state, s + STR_STATE, sizeof(state)) ||
	    !rd(r, &len, s + STR_LENGTH, sizeof(len)) || len < 0)
		return 0;
	unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
	if (!compact || (kind != 1 && kind != 2 && kind != 4))
		return 0;
	if (ascii) {
		size_t n = (size_t)len < GC_PY_TEXT_MAX ? (size_t)len : GC_PY_TEXT_MAX;
		if (!rd(r, out, s + (uintptr_t)L->str_ascii, n))
			return 0;
		out[n] = '\0';
		return 1;
	}
	/* UCS-1, -2 or -4 after the compact header: encoded here, chunk by chunk. */
	uintptr_t data = s + (uintptr_t)L->str_compact;
	size_t at = 0, i = 0;
	while (i < (size_t)len && at < GC_PY_TEXT_MAX) {
		unsigned char chunk[256];
		size_t k = ((size_t)len - i) * kind < sizeof(chunk) ? ((size_t)len - i) * kind
		                                                    : sizeof(chunk);
		if (!rd(r, chunk, data + i * kind, k))
			return 0;
		for (size_t j = 0; j + kind <= k; j += kind, i++) {
			uint32_t c = kind == 1 ? chunk[j] : 0;
			if (kind == 2)
				c = (uint32_t)(chunk[j] | chunk[j + 1] << 8);  /* little-endian hosts */
			else if (kind == 4)
				memcpy(&c, chunk + j, 4);
			size_t w = put_utf8(out, at, GC_PY_TEXT_MAX, c > 0x10ffff ? '?' : c);
			if (!w)
				break;
			at += w;
		}
	}
	out[at] = '\0';
	return 1;
}

/* ---- line numbers ---------------------------------------------------------------------- */

/* 3.10's co_linetable: (bytes advanced, line delta) pairs; a delta of -128: no line. */
static int line_310(const unsigned char *t, size_t n, int line, int addr)
{
	int start = 0;
	for (size_t i = 0; i + 1 < n; i += 2) {
		int end = start + t[i], d = (signed char)t[i + 1];
		if (d != -128)
			line += d;
		if (addr >= start && addr < end)
			return d == -128 ? -1 : line;
		start = end;
	}
	return -1;
}

/* 3.11+'s location table: entries of a first byte (1, a 4-bit form, the code units it
 * covers less one) and operands; only the line's delta is needed, which the forms
 * 13 (no column) and 14 (long) give as a signed varint (6 bits a byte, low first, bit 6:
 * more; the sign in bit 0), 10-12 give as form - 10; form 15 covers code without a line. */
static int line_311(const unsigned char *t, size_t n, int line, int addr)
{
	int start = 0;
	size_t i = 0;
	while (i < n) {
		unsigned char b = t[i++];
		if (!(b & 0x80))
			return -1;  /* not an entry's start: not a location table */
		int form = (b >> 3) & 15, end = start + ((b & 7) + 1) * 2;
		if (form == 13 || form == 14) {
			unsigned v = 0, shift = 0;
			unsigned char c;
			do {
				if (i >= n || shift > 24)
					return -1;
				c = t[i++];
				v |= (unsigned)(c & 63) << shift;
				shift += 6;
			} while (c & 64);
			line += (v & 1) ? -(int)(v >> 1) : (int)(v >> 1);
		} else if (form >= 10 && form <= 12) {
			line += form - 10;
		}
		if (addr >= start && addr < end)
			return form == 15 ? -1 : line;
		start = end;
		while (i < n && !(t[i] & 0x80))
			i++;  /* the operands left: columns */
	}
	return -1;
}

/* The line of byte offset addr in a code object whose first line is first and whose line
 * table is the bytes object lt; -2 when lt is not one. */
static int line_of(struct reader *r, uintptr_t lt, int first, int addr)
{
	intptr_t n;
	if (!is_a(r, lt, bytes_type) || !rd(r, &n, lt + OB_SIZE, sizeof(n)) || n < 0 ||
	    (size_t)n > LINETABLE_MAX)
		return -2;
	if (addr < 0)
		return first;
	/* Unchecked, the table is first read through in checked chunks: after that it is
	 * known to be mapped and is decoded in place. */
	for (size_t at = 0; r->checked && at < (size_t)n; at += 256) {
		unsigned char chunk[256];
		if (!rd(r, chunk, lt + BYTES_DATA + at, (size_t)n - at < 256 ? (size_t)n - at : 256))
			return -2;
	}
	const unsigned char *t = (const unsigned char *)(lt + BYTES_DATA);
	int line = L->minor == 10 ? line_310(t, (size_t)n, first, addr)
	                          : line_311(t, (size_t)n, first, addr);
	return line;
}

/* ---- the walk -------------------------------------------------------------------------- */

/* One frame at fr: *back its caller; 1 with f filled, 0 for a frame that is not the
 * program's (C entry, not started), -1 when something read is not what it should be. */
HOT int frame_at(struct reader *r, gc_pystack_memo *m, uintptr_t fr, uintptr_t *back,
                    gc_pystack_frame *f, struct gc_pystack_memo_entry **slot, char *file,
                    char *function)
{
	uintptr_t code, name, fname;
	if (!plausible(fr, 8) || (L->minor == 10 && !is_a(r, fr, frame_type)) ||
	    !rd_ptr(r, fr + (uintptr_t)L->fr_back, back) ||
	    (*back && !plausible(*back, 8)) ||
	    !rd_ptr(r, fr + (uintptr_t)L->fr_code, &code))
		return -1;
	int addr;
	if (L->minor == 10) {
		int lasti;
		if (!rd_int(r, fr + (uintptr_t)L->fr_instr, &lasti))
			return -1;
		addr = lasti < 0 ? -1 : lasti * 2;
		if (!is_a(r, code, code_type))
			return -1;
	} else {
		unsigned char owner;
		uintptr_t instr;
		intptr_t units;
		int first_traceable;
		if (!rd(r, &owner, fr + (uintptr_t)L->fr_owner, 1) || owner > OWNER_CSTACK)
			return -1;
		if (owner == OWNER_CSTACK)
			return 0;
		if (!is_a(r, code, code_type) || !rd_ptr(r, fr + (uintptr_t)L->fr_instr, &instr) ||
		    !rd(r, &units, code + OB_SIZE, sizeof(units)) ||
		    !rd_int(r, code + (uintptr_t)L->co_firsttraceable, &first_traceable))
			return -1;
		uintptr_t start = code + (uintptr_t)L->co_code;
		/* A frame pushed whose first instructions have not run yet: not shown. */
		if (owner != OWNER_GENERATOR && instr < start + (uintptr_t)first_traceable * 2)
			return 0;
		if (instr < start || units <= 0 || instr >= start + (uintptr_t)units * 2 || (instr & 1))
			return -1;
		addr = (int)(instr - start);
	}
	uintptr_t lt;
	int first;
	if (!rd_ptr(r, code + (uintptr_t)L->co_file, &fname) ||
	    !rd_ptr(r, code + (uintptr_t)L->co_name, &name) ||
	    !rd_ptr(r, code + (uintptr_t)L->co_linetable, &lt) ||
	    !rd_int(r, code + (uintptr_t)L->co_firstline, &first))
		return -1;
	/* Seen before (same code object, instruction, table and names): the caller's id, no
	 * string read, no table decoded. A code object freed and another made at its address
	 * with its table, names and first line at the same addresses is taken as the same (a
	 * risk accepted: a re-run notebook cell's new objects were found at new addresses on
	 * 3.10-3.13; the table's contents are not compared, which would cost its decoding). */
	struct gc_pystack_memo_entry key = {code, lt, fname, name, addr, first, 0};
	struct gc_pystack_memo_entry *e = NULL;
	if (m && !r->checked) {
		e = &m->e[((code >> 4) ^ (uintptr_t)addr * 0x9e3779b1u) % GC_PYSTACK_MEMO];
		if (e->id && e->code == code && e->addr == addr && e->linetable == lt &&
		    e->file == fname && e->name == name && e->first == first) {
			*f = (gc_pystack_frame){.id = e->id};
			*slot = e;
			return 1;
		}
	}
	if (!read_str(r, fname, file) || !read_str(r, name, function))
		return -1;
	int line = line_of(r, lt, first, addr);
	if (line == -2)
		return -1;
	*f = (gc_pystack_frame){(const void *)fname, (const void *)name, file, function, line, 0};
	if (e) {
		key.id = 0;  /* set to the caller's id once it answers */
		*e = key;
	}
	*slot = e;
	return 1;
}

/* Frames from tstate's innermost on, up to max passed to fn (none when fn is NULL);
 * *complete: the chain's end was reached. The number of the program's frames seen, or -1
 * where something read was not what it should be. */
HOT int walk(struct reader *r, const void *tstate, int max, gc_pystack_fn fn, void *ctx,
                gc_pystack_memo *m, char *file, char *function, int *complete)
{
	uintptr_t fr;
	*complete = 0;
	if (!rd_ptr(r, (uintptr_t)tstate + (uintptr_t)L->ts_frame, &fr))
		return -1;
	if (fr && L->cframe_frame >= 0 &&
	    !(plausible(fr, 8) && rd_ptr(r, fr + (uintptr_t)L->cframe_frame, &fr)))
		return -1;
	int n = 0;
	for (int depth = 0; fr && depth < DEPTH_MAX && n < max; depth++) {
		gc_pystack_frame f;
		struct gc_pystack_memo_entry *e;
		uintptr_t back;
		int got = frame_at(r, m, fr, &back, &f, &e, file, function);
		if (got < 0)
			return n && !r->checked ? n : -1;  /* trusted: the frames so far */
		if (got > 0) {
			uint32_t id = fn ? fn(ctx, &f) : 0;
			if (e && !f.id)
				e->id = id;
			n++;
		}
		fr = back;
	}
	*complete = !fr;
	return n;
}

int gc_pystack_walk(const void *tstate, int max, gc_pystack_fn fn, void *ctx,
                    gc_pystack_memo *m, char file[GC_PY_TEXT_MAX + 1],
                    char function[GC_PY_TEXT_MAX + 1])
{
	int t = __atomic_load_n(&trust, __ATOMIC_RELAXED), complete;
	if (t == OFF)
		return -1;
	if (t == UNCHECKED) {
		/* The whole chain through checked reads, nothing passed on: it must hold
		 * everywhere before a plain read is made. */
		struct reader r = {.checked = 1};
		int n = walk(&r, tstate, DEPTH_MAX, NULL, NULL, NULL, file, function, &complete);
		if (n < 0 || r.fault) {
			__atomic_store_n(&trust, OFF, __ATOMIC_RELAXED);
			return -1;
		}
		if (!n || !complete)
			return -1;  /* nothing proven yet (no frame, or too deep): the note, this time */
		__atomic_store_n(&trust, TRUSTED, __ATOMIC_RELAXED);
	}
	struct reader r = {.checked = 0};
	return max > 0 ? walk(&r, tstate, max, fn, ctx, m, file, function, &complete) : 0;
}
