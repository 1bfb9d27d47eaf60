/* How many single-character edits turn a (na bytes) into b, capped at 48: enough to find a
 * misspelt name (the options' variables, the launcher's options, suppressions' rules).
 * Small stack, no malloc. */
#ifndef GC_EDITS_H
#define GC_EDITS_H

#include <stddef.h>
#include <string.h>

static inline int gc_edits(const char *a, size_t na, const char *b)
{
	enum { MAX = 48 };
	size_t nb = strlen(b);
	if (na >= MAX || nb >= MAX)
		return MAX;
	unsigned char row[MAX + 1];
	for (size_t j = 0; j <= nb; j++)
		row[j] = (unsigned char)j;
	for (size_t i = 1; i <= na; i++) {
		unsigned char diag = row[0];
		row[0] = (unsigned char)i;
		for (size_t j = 1; j <= nb; j++) {
			unsigned char up = row[j];
			unsigned char best = (unsigned char)(diag + (a[i - 1] != b[j - 1]));
			if (up + 1 < best)
				best = (unsigned char)(up + 1);
			if (row[j - 1] + 1 < best)
				best = (unsigned char)(row[j - 1] + 1);
			row[j] = best;
			diag = up;
		}
	}
	return row[nb];
}

/* Of n names, the first at first and each stride bytes after the last (an array of names,
 * or the name field of an array of structs), the one nearest a (na bytes) within two edits:
 * a misspelt name's "did you mean". NULL when none is that near. */
static inline const char *gc_nearest(const char *a, size_t na, const void *first, size_t stride,
                                     size_t n)
{
	const char *best = NULL;
	int best_d = 3;  /* farther than two edits is no suggestion */
	for (size_t i = 0; i < n; i++) {
		const char *name = *(const char *const *)(const void *)((const char *)first + i * stride);
		int d = gc_edits(a, na, name);
		if (d < best_d) {
			best_d = d;
			best = name;
		}
	}
	return best;
}

#endif
