/* --suppressions: the object's suppression entries (interpose/suppress.c) applied to the
 * records read. Here, unlike in the preloaded object, frames have source lines, so src:
 * lines can match. Each folded entry's records share all that an entry matches (fold.c's
 * key: the rule, the call, the frames, each leak's call and frames), so the first record
 * decides for all of them. */
#include "report/report.h"

#include <stdio.h>
#include <stdlib.h>

#include "interpose/suppress.h"

/* Source strings of one record's frames, "file:line", kept while it is matched. */
#define SRC_MAX 512

static int matches_frames(gc_supp_set *set, const rp_record *r, const char *call,
                          const rp_frames *bt)
{
	size_t n = bt->n < 64 ? bt->n : 64;
	gc_supp_frame sf[64];
	char (*src)[SRC_MAX] = n ? rp_xcalloc(n, SRC_MAX) : NULL;
	for (size_t i = 0; i < n; i++) {
		const rp_frame *f = &bt->v[i];
		if (f->loc.file)
			snprintf(src[i], SRC_MAX, "%s:%u", f->loc.file, f->loc.line);
		/* The logged symbol is the one the object matched and --gen-suppressions wrote. */
		sf[i] = (gc_supp_frame){f->module, f->symbol ? f->symbol : f->loc.function,
		                        f->loc.file ? src[i] : NULL};
	}
	int hit = gc_supp_match(set, gc_rule_id(r->rule), call, sf, (int)n) != NULL;
	free(src);
	return hit;
}

/* A leak-at-exit record is matched as the object matches it: by each leak's allocation site
 * and allocating call (every one must match, and the record must list every leak), not by
 * the exit that found them. */
static int matches(gc_supp_set *set, const rp_record *r)
{
	if (r->rule != GC_RULE_LEAK_AT_EXIT || !r->n_leaks)
		return matches_frames(set, r, r->call, &r->backtrace);
	uint64_t listed = 0;  /* a brief record's other sites are not listed: never suppressed */
	for (size_t i = 0; i < r->n_leaks; i++)
		listed += r->leaks[i].count;
	if (listed < r->leak_count)
		return 0;
	for (size_t i = 0; i < r->n_leaks; i++)
		if (!matches_frames(set, r, r->leaks[i].call, &r->leaks[i].backtrace))
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
