/* Folding: a misuse inside a loop writes one record per iteration, but it is one problem.
 * Records become one entry with a count when everything a suppression entry can look at is
 * the same in them (report/suppress.c matches an entry's first record for all of it): the
 * rule, the call, the native frames (module+offset, which decide symbol and source line),
 * the Python frames (file and line: src: lines match them), and for leak-at-exit each leak's
 * call and frames and whether the record lists every leak. The first record read stands for
 * the rest. Only that one is kept, so memory grows with the number of distinct sites, not
 * with the log. */
#include "report/report.h"

#include <stdlib.h>
#include <string.h>

/* FNV-1a: simple, and good enough for keys that are mostly distinct offsets. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
	return s ? fnv(h, s, strlen(s) + 1) : fnv(h, "", 1);
}

static bool same_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static uint64_t frames_hash(uint64_t h, const rp_frames *bt)
{
	h = fnv(h, &bt->n, sizeof(bt->n));
	for (size_t i = 0; i < bt->n; i++) {
		h = fnv_str(h, bt->v[i].module);
		h = fnv(h, &bt->v[i].offset, sizeof(bt->v[i].offset));
	}
	return h;
}

static bool same_frames(const rp_frames *a, const rp_frames *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].offset != b->v[i].offset || !same_str(a->v[i].module, b->v[i].module))
			return false;
	return true;
}

/* Python frames: file and line each (a src: line matches those). */
static uint64_t py_hash(uint64_t h, const rp_frames *py)
{
	h = fnv(h, &py->n, sizeof(py->n));
	for (size_t i = 0; i < py->n; i++) {
		h = fnv_str(h, py->v[i].module);
		h = fnv(h, &py->v[i].loc.line, sizeof(py->v[i].loc.line));
	}
	return h;
}

static bool same_py(const rp_frames *a, const rp_frames *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].loc.line != b->v[i].loc.line || !same_str(a->v[i].module, b->v[i].module))
			return false;
	return true;
}

static uint64_t site_hash(const rp_record *r)
{
	uint64_t h = 0xcbf29ce484222325ull;
	int rule = (int)r->rule;
	h = fnv(h, &rule, sizeof(rule));
	h = fnv_str(h, r->call);
	h = frames_hash(h, &r->backtrace);
	h = py_hash(h, &r->py_backtrace);
	h = fnv(h, &r->n_leaks, sizeof(r->n_leaks));
	for (size_t i = 0; i < r->n_leaks; i++) {
		h = fnv_str(h, r->leaks[i].call);
		h = frames_hash(h, &r->leaks[i].backtrace);
		h = py_hash(h, &r->leaks[i].py_backtrace);
	}
	return h;
}

static bool same_site(const rp_record *a, const rp_record *b)
{
	if (a->rule != b->rule || !same_str(a->call, b->call) ||
	    !same_frames(&a->backtrace, &b->backtrace) || !same_py(&a->py_backtrace, &b->py_backtrace) ||
	    a->n_leaks != b->n_leaks)
		return false;
	for (size_t i = 0; i < a->n_leaks; i++)
		if (!same_str(a->leaks[i].call, b->leaks[i].call) ||
		    !same_frames(&a->leaks[i].backtrace, &b->leaks[i].backtrace) ||
		    !same_py(&a->leaks[i].py_backtrace, &b->leaks[i].py_backtrace))
			return false;
	return !a->n_leaks || rp_record_lists_every_leak(a) == rp_record_lists_every_leak(b);
}

void rp_fold_init(rp_fold *f)
{
	memset(f, 0, sizeof(*f));
}

/* Slot of the entry with this hash and site, or the empty slot where it would go. */
static size_t find_slot(const rp_fold *f, uint64_t h, const rp_record *r)
{
	size_t mask = f->n_slots - 1, i = (size_t)h & mask;
	while (f->slots[i]) {
		const rp_entry *e = &f->v[f->slots[i] - 1];
		if (e->hash == h && same_site(e->first, r))
			return i;
		i = (i + 1) & mask;
	}
	return i;
}

/* Kept under half full so probes stay short. */
static void grow_slots(rp_fold *f)
{
	free(f->slots);
	f->n_slots = f->n_slots ? 2 * f->n_slots : 64;
	while (f->n_slots < 2 * (f->n + 1))
		f->n_slots *= 2;
	f->slots = rp_xcalloc(f->n_slots, sizeof(*f->slots));
	for (size_t k = 0; k < f->n; k++) {
		size_t mask = f->n_slots - 1, i = (size_t)f->v[k].hash & mask;
		while (f->slots[i])
			i = (i + 1) & mask;
		f->slots[i] = k + 1;
	}
}

void rp_fold_add(rp_fold *f, rp_record *r)
{
	f->records[r->severity]++;
	if (!f->slots || 2 * (f->n + 1) > f->n_slots)
		grow_slots(f);
	uint64_t h = site_hash(r);
	size_t i = find_slot(f, h, r);
	if (f->slots[i]) {
		f->v[f->slots[i] - 1].count++;
		rp_record_free(r);
		return;
	}
	if (f->n == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 16;
		f->v = rp_xrealloc(f->v, f->cap * sizeof(*f->v));
	}
	f->v[f->n] = (rp_entry){.first = r, .count = 1, .hash = h, .order = f->n};
	f->n++;
	f->slots[i] = f->n;
	f->entries[r->severity]++;
}

void rp_fold_sink(void *ctx, rp_record *r)
{
	rp_fold_add(ctx, r);
}

static int entry_cmp(const void *pa, const void *pb)
{
	const rp_entry *a = pa, *b = pb;
	if (a->first->severity != b->first->severity)
		return a->first->severity == GC_SEV_ERROR ? -1 : 1;
	if (a->first->rule != b->first->rule)
		return a->first->rule < b->first->rule ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

void rp_fold_sort(rp_fold *f)
{
	if (f->n > 1)
		qsort(f->v, f->n, sizeof(*f->v), entry_cmp);
	/* The slots point at the old order; rp_fold_add rebuilds them if it is called again. */
	free(f->slots);
	f->slots = NULL;
	f->n_slots = 0;
}

/* Records of one rule and call at one Python stack, by script line, made by one library
 * (the innermost native frame), whatever the interpreter's native frames between (which
 * change as CPython specializes a call: a loop's first call and its later ones differ
 * there): one entry. */
static uint64_t line_hash(const rp_record *r)
{
	uint64_t h = 0xcbf29ce484222325ull;
	int rule = (int)r->rule;
	h = fnv(h, &rule, sizeof(rule));
	h = fnv_str(h, r->call);
	if (r->backtrace.n) {
		h = fnv_str(h, r->backtrace.v[0].module);
		h = fnv(h, &r->backtrace.v[0].offset, sizeof(r->backtrace.v[0].offset));
	}
	return py_hash(h, &r->py_backtrace);
}

static bool same_innermost(const rp_record *a, const rp_record *b)
{
	if (!a->backtrace.n || !b->backtrace.n)  /* alike only when neither has one */
		return a->backtrace.n == b->backtrace.n;
	return a->backtrace.v[0].offset == b->backtrace.v[0].offset &&
	       same_str(a->backtrace.v[0].module, b->backtrace.v[0].module);
}

void rp_fold_merge_lines(rp_fold *f)
{
	size_t n_slots = 16;
	while (n_slots < 2 * f->n)
		n_slots *= 2;
	size_t *slots = rp_xcalloc(n_slots, sizeof(*slots));  /* kept entry index + 1 */
	size_t kept = 0;
	for (size_t i = 0; i < f->n; i++) {
		rp_entry *e = &f->v[i];
		const rp_record *r = e->first;
		if (!r->py_backtrace.n || r->n_leaks) {
			f->v[kept++] = *e;
			continue;
		}
		size_t k = (size_t)line_hash(r) & (n_slots - 1);
		for (; slots[k]; k = (k + 1) & (n_slots - 1)) {
			rp_entry *o = &f->v[slots[k] - 1];
			if (o->first->rule == r->rule && same_str(o->first->call, r->call) &&
			    same_innermost(o->first, r) &&
			    same_py(&o->first->py_backtrace, &r->py_backtrace))
				break;
		}
		if (slots[k]) {  /* later in the report's order: counted into the earlier one */
			f->v[slots[k] - 1].count += e->count;
			f->entries[r->severity]--;
			rp_record_free(e->first);
			continue;
		}
		f->v[kept] = *e;
		slots[k] = ++kept;
	}
	f->n = kept;
	free(slots);
	free(f->slots);  /* indices moved: rp_fold_add rebuilds them if it is called again */
	f->slots = NULL;
	f->n_slots = 0;
}

void rp_fold_free(rp_fold *f)
{
	for (size_t i = 0; i < f->n; i++)
		rp_record_free(f->v[i].first);
	free(f->v);
	free(f->slots);
	memset(f, 0, sizeof(*f));
}
