/* --suppressions: the object's suppression entries (interpose/suppress.c) applied to the
 * records read. Here, unlike in the preloaded object, frames have source lines, so src:
 * lines can match. Each folded entry's records share all that an entry matches (fold.c's
 * key: the rule, the call, the frames, each leak's call and frames), so the first record
 * decides for all of them. */
#include "report/report.h"

#include <stdio.h>
#include <stdlib.h>

#include "interpose/suppress.h"

/* A record's frames as the object's matcher takes them (suppress.h): the native ones, with
 * their source lines here, then the Python ones, each its "FILE:LINE" alone; 64 of each. */
static int matches_frames(gc_supp_set *set, const rp_record *r, const char *call,
                          const rp_frames *bt, const rp_frames *py)
{
	size_t npy = py->n < 64 ? py->n : 64, nn = bt->n < 64 ? bt->n : 64;
	size_t n = nn + npy;
	gc_supp_frame sf[GC_SUPP_RECORD_FRAMES];
	_Static_assert(GC_SUPP_RECORD_FRAMES >= 128, "64 frames of each kind");
	char **src = n ? rp_xcalloc(n, sizeof(*src)) : NULL;
	for (size_t i = 0; i < n; i++) {
		const rp_frame *f = i < nn ? &bt->v[i] : &py->v[i - nn];
		if (f->loc.file) {
			int len = snprintf(NULL, 0, "%s:%u", f->loc.file, f->loc.line);
			src[i] = rp_xcalloc((size_t)len + 1, 1);
			snprintf(src[i], (size_t)len + 1, "%s:%u", f->loc.file, f->loc.line);
		}
		/* The logged symbol is the one the object matched and --gen-suppressions wrote. */
		sf[i] = i < nn ? (gc_supp_frame){f->module, f->symbol ? f->symbol : f->loc.function,
		                                 src[i]}
		               : (gc_supp_frame){NULL, NULL, src[i]};
	}
	int hit = gc_supp_match(set, gc_rule_id(r->rule), call, sf, (int)n) != NULL;
	for (size_t i = 0; i < n; i++)
		free(src[i]);
	free(src);
	return hit;
}

/* A leak-at-exit record is matched as the object matches it: by each leak's allocation site
 * and allocating call (every one must match, and the record must list every leak), not by
 * the exit that found them. */
static int matches(gc_supp_set *set, const rp_record *r)
{
	if (r->rule != GC_RULE_LEAK_AT_EXIT || !r->n_leaks)
		return matches_frames(set, r, r->call, &r->backtrace, &r->py_backtrace);
	if (!rp_record_lists_every_leak(r))  /* a brief record's other sites: never suppressed */
		return 0;
	for (size_t i = 0; i < r->n_leaks; i++)
		if (!matches_frames(set, r, r->leaks[i].call, &r->leaks[i].backtrace,
		                    &r->leaks[i].py_backtrace))
			return 0;
	return 1;
}

uint64_t rp_suppress(rp_fold *f, gc_supp_set *set)
{
	uint64_t dropped = 0;
	size_t kept = 0;
	for (size_t i = 0; i < f->n; i++) {
		rp_entry *e = &f->v[i];
		if (!matches(set, e->first)) {
			f->v[kept++] = *e;
			continue;
		}
		f->records[e->first->severity] -= e->count;
		f->entries[e->first->severity]--;
		dropped += e->count;
		rp_record_free(e->first);
	}
	f->n = kept;
	return dropped;
}
