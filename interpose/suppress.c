#include "interpose/suppress.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "interpose/edits.h"
#include "interpose/rule_table.h"

#define SUPP_FRAMES_MAX 64

enum pat_kind { PAT_OBJ, PAT_FUN, PAT_SRC, PAT_ANY };

struct pat {
	enum pat_kind kind;
	const char *glob;  /* into the set's text */
};

struct entry {
	const char *name, *rule, *call;  /* call NULL: any */
	struct pat pats[SUPP_FRAMES_MAX];
	int npats;
	unsigned long matched;
};

struct gc_supp_set {
	char *text;  /* a private copy, cut into the strings the entries point at */
	struct entry *e;
	size_t n, cap;
};

static void warnf(void (*warn)(const char *, void *), void *arg, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void warnf(void (*warn)(const char *, void *), void *arg, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	if (!warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	warn(msg, arg);
}

/* Cuts the line at *p off the text, trimmed; advances *p past it. */
static char *next_line(char **p)
{
	char *s = *p, *end = strchr(s, '\n');
	if (end) {
		*end = 0;
		*p = end + 1;
	} else {
		*p = s + strlen(s);
	}
	while (*s == ' ' || *s == '\t')
		s++;
	size_t len = strlen(s);
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
		s[--len] = 0;
	return s;
}

static int prefix(const char *s, const char *p, const char **rest)
{
	size_t n = strlen(p);
	if (strncmp(s, p, n))
		return 0;
	*rest = s + n;
	return 1;
}

/* NULL when glob pattern p matches some rule id; else the id nearest it (within two edits)
 * or "". */
static const char *rule_unmatched(const char *p)
{
	const char *ids[GC_RULE__COUNT];
	for (int i = 0; i < GC_RULE__COUNT; i++)
		if (fnmatch(p, ids[i] = gc_rule_id((gc_rule)i), 0) == 0)
			return NULL;
	const char *near = gc_nearest(p, strlen(p), ids, sizeof(ids[0]), GC_RULE__COUNT);
	return near ? near : "";
}

/* Reads one entry's body, up to its "}". Returns 1 for a complete entry, 0 for a malformed
 * one (warned and skipped), -1 at the end of the text inside an entry. */
static int parse_entry(char **p, int *line, struct entry *e, const char *name,
                       void (*warn)(const char *, void *), void *arg)
{
	int start = *line, bad = 0;
	memset(e, 0, sizeof *e);
	while (**p) {
		char *s = next_line(p);
		const char *v;
		++*line;
		if (!*s || *s == '#')
			continue;
		if (!strcmp(s, "}")) {
			if (bad)
				return 0;
			if (!e->name || !e->rule) {
				warnf(warn, arg, "%s:%d: entry without a name or a graphcheck:RULE line: skipped",
				      name, start);
				return 0;
			}
			return 1;
		}
		if (bad)
			continue;
		if (!e->name) {
			e->name = s;
		} else if (prefix(s, "graphcheck:", &v) && !e->rule) {
			e->rule = v;
			const char *near = rule_unmatched(v);
			if (near) {  /* a typo (double_free) would match nothing, silently */
				warnf(warn, arg, "%s:%d: no rule matches 'graphcheck:%.60s'%s%s%s: entry skipped",
				      name, *line, v, *near ? " (did you mean graphcheck:" : "", near,
				      *near ? "?)" : "");
				bad = 1;
			}
		} else if (prefix(s, "call:", &v) && !e->call) {
			e->call = v;
		} else if (e->npats == SUPP_FRAMES_MAX) {
			warnf(warn, arg, "%s:%d: more than %d frame lines: entry skipped", name, *line,
			      SUPP_FRAMES_MAX);
			bad = 1;
		} else if (!strcmp(s, "...")) {
			e->pats[e->npats++] = (struct pat){PAT_ANY, NULL};
		} else if (prefix(s, "obj:", &v)) {
			e->pats[e->npats++] = (struct pat){PAT_OBJ, v};
		} else if (prefix(s, "fun:", &v)) {
			e->pats[e->npats++] = (struct pat){PAT_FUN, v};
		} else if (prefix(s, "src:", &v)) {
			e->pats[e->npats++] = (struct pat){PAT_SRC, v};
		} else {
			warnf(warn, arg,
			      "%s:%d: '%.60s' is not graphcheck:RULE, call:, obj:, fun:, src: or ...: "
			      "entry skipped", name, *line, s);
			bad = 1;
		}
	}
	warnf(warn, arg, "%s:%d: entry not closed by '}': skipped", name, start);
	return -1;
}

gc_supp_set *gc_supp_parse(const char *text, const char *name,
                           void (*warn)(const char *, void *), void *arg)
{
	gc_supp_set *s = calloc(1, sizeof *s);
	if (!s || !(s->text = strdup(text))) {
		free(s);
		return NULL;
	}
	char *p = s->text;
	int line = 0;
	while (*p) {
		char *l = next_line(&p);
		line++;
		if (!*l || *l == '#')
			continue;
		if (strcmp(l, "{")) {
			warnf(warn, arg, "%s:%d: expected '{' to open an entry: line ignored", name, line);
			continue;
		}
		if (s->n == s->cap) {
			size_t cap = s->cap ? 2 * s->cap : 8;
			struct entry *ne = realloc(s->e, cap * sizeof *ne);
			if (!ne) {
				gc_supp_free(s);
				return NULL;
			}
			s->e = ne;
			s->cap = cap;
		}
		int r = parse_entry(&p, &line, &s->e[s->n], name, warn, arg);
		if (r > 0)
			s->n++;
		if (r < 0)
			break;
	}
	return s;
}

gc_supp_set *gc_supp_load(const char *path, void (*warn)(const char *, void *), void *arg)
{
	/* O_NONBLOCK: a FIFO nobody writes must not hang the program; only regular files. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > GC_SUPP_FILE_MAX) {
		int err = fstat(fd, &st)         ? errno
		          : S_ISREG(st.st_mode) ? EFBIG
		          : S_ISDIR(st.st_mode) ? EISDIR
		                                : EINVAL;  /* the caller says: not a regular file */
		close(fd);
		errno = err;
		return NULL;
	}
	char *text = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	ssize_t r = 0;
	while (text && got < (size_t)st.st_size &&
	       ((r = read(fd, text + got, (size_t)st.st_size - got)) > 0 || (r < 0 && errno == EINTR)))
		got += r > 0 ? (size_t)r : 0;
	int err = errno;
	close(fd);
	if (!text || r < 0) {
		free(text);
		errno = text ? err : ENOMEM;
		return NULL;
	}
	text[got] = 0;
	const char *nul = memchr(text, 0, got);
	if (nul)  /* the parse ends there: said, not silent (a UTF-16 file is one) */
		warnf(warn, arg, "%s: a NUL byte at byte %zu, which a text file has not (UTF-16?): "
		      "nothing after it is read", path, (size_t)(nul - text));
	gc_supp_set *s = gc_supp_parse(text, path, warn, arg);
	free(text);
	if (!s)
		errno = ENOMEM;
	return s;
}

void gc_supp_free(gc_supp_set *s)
{
	if (!s)
		return;
	free(s->e);
	free(s->text);
	free(s);
}

size_t gc_supp_count(const gc_supp_set *s)
{
	return s ? s->n : 0;
}

static int glob(const char *pattern, const char *s)
{
	return s && fnmatch(pattern, s, 0) == 0;
}

static int frame_matches(const struct pat *p, const gc_supp_frame *f)
{
	switch (p->kind) {
	case PAT_OBJ: return glob(p->glob, f->module);
	case PAT_FUN: return glob(p->glob, f->symbol);
	case PAT_SRC: return glob(p->glob, f->source);
	case PAT_ANY: return 1;
	}
	return 0;
}

/* Patterns against the frames from the innermost; the stack may go on past the last pattern.
 * Dynamic programming over (pattern, frame) so that many "..." cannot make it exponential:
 * at[k] says patterns so far match frames [0, k). */
static int frames_match(const struct pat *pats, int np, const gc_supp_frame *f, int nf)
{
	unsigned char at[GC_SUPP_RECORD_FRAMES + 1], next[GC_SUPP_RECORD_FRAMES + 1];
	if (nf > GC_SUPP_RECORD_FRAMES)
		nf = GC_SUPP_RECORD_FRAMES;
	memset(at, 0, sizeof at);
	at[0] = 1;
	for (int pi = 0; pi < np; pi++) {
		int any = 0;
		memset(next, 0, sizeof next);
		for (int k = 0; k <= nf; k++) {
			if (pats[pi].kind == PAT_ANY)
				next[k] = any |= at[k];
			else if (k < nf && at[k] && frame_matches(&pats[pi], &f[k]))
				next[k + 1] = 1;
		}
		memcpy(at, next, sizeof at);
	}
	for (int k = 0; k <= nf; k++)
		if (at[k])
			return 1;
	return 0;
}

const char *gc_supp_match(gc_supp_set *s, const char *rule, const char *call,
                          const gc_supp_frame *frames, int n)
{
	for (size_t i = 0; s && i < s->n; i++) {
		struct entry *e = &s->e[i];
		if (!glob(e->rule, rule) || (e->call && !glob(e->call, call)) ||
		    !frames_match(e->pats, e->npats, frames, n))
			continue;
		__atomic_add_fetch(&e->matched, 1, __ATOMIC_RELAXED);
		return e->name;
	}
	return NULL;
}

const char *gc_supp_entry(const gc_supp_set *s, size_t i, unsigned long *matched)
{
	if (!s || i >= s->n)
		return NULL;
	if (matched)
		*matched = __atomic_load_n(&s->e[i].matched, __ATOMIC_RELAXED);
	return s->e[i].name;
}

/* What gc_supp_format has written: as snprintf, len counts what did not fit too. */
struct out {
	char *buf;
	size_t n, len;
};

static void put(struct out *o, const char *p, size_t k)
{
	if (o->len < o->n) {
		size_t room = o->n - 1 - o->len, c = k < room ? k : room;
		memcpy(o->buf + o->len, p, c);
		o->buf[o->len + c] = 0;
	}
	o->len += k;
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* A name as a glob that matches only itself, as the reader will see it: *, ?, [ and \
 * escaped (C++ names hold [ ] and *, paths anything); a newline, which would end the line,
 * as ?; blanks at the end, which the reader trims, as one-character classes ("[ ]"). A name
 * longer than GC_SUPP_NAME_MAX is cut there, before a UTF-8 character it would split, and
 * ends with *: the logs keep no more of it, and graphcheck-report matches what they keep. */
static void put_literal(struct out *o, const char *s)
{
	size_t n = strlen(s), keep = n, end;
	if (n > GC_SUPP_NAME_MAX) {
		keep = GC_SUPP_NAME_MAX;
		while (keep && ((unsigned char)s[keep] & 0xc0) == 0x80)
			keep--;
	}
	for (end = keep; keep == n && end && strchr(" \t\r", s[end - 1]); end--)
		;
	for (size_t i = 0; i < keep;) {
		size_t plain = i < end ? strcspn(s + i, "*?[\\\n") : 0;
		if (plain > end - i)
			plain = end - i;
		put(o, s + i, plain);
		i += plain;
		if (i == keep)
			break;
		char c = s[i++];
		if (i > end)
			put(o, (char[]){'[', c, ']'}, 3);
		else if (c == '\n')
			put(o, "?", 1);
		else
			put(o, (char[]){'\\', c}, 2);
	}
	if (keep < n)
		put(o, "*", 1);
}

int gc_supp_format(char *buf, size_t n, const char *rule, const char *call,
                   const gc_supp_frame *frames, int nframes)
{
	struct out o = {buf, n, 0};
	if (n)
		buf[0] = 0;
	puts_(&o, "{\n   <insert_a_name_here>\n   graphcheck:");
	put_literal(&o, rule);
	if (call && *call) {
		puts_(&o, "\n   call:");
		put_literal(&o, call);
	}
	int py = 0;  /* the first Python frame (a source alone), or nframes */
	while (py < nframes && (frames[py].module || frames[py].symbol || !frames[py].source))
		py++;
	/* With Python frames: the innermost native frame (the library that made the call), "..."
	 * for the rest (the interpreter's, alike for every call a script makes, and changing as
	 * CPython specializes a call), then the script's lines. */
	int natives = py < nframes ? (py > 0) : nframes;
	for (int i = 0; i < nframes; i++) {
		const char *m = frames[i].module, *base = m ? strrchr(m, '/') : NULL;
		if (i >= natives && i < py)
			continue;
		if (i == py && py < nframes)
			puts_(&o, "\n   ...");
		if (i >= py) {  /* the script's file name, in any directory, and line */
			const char *src = frames[i].source, *slash = strrchr(src, '/');
			puts_(&o, slash ? "\n   src:*" : "\n   src:");
			put_literal(&o, slash ? slash : src);
		} else if (frames[i].symbol && *frames[i].symbol) {
			puts_(&o, "\n   fun:");
			put_literal(&o, frames[i].symbol);
		} else {  /* the module's file name, in any directory */
			puts_(&o, base ? "\n   obj:*" : "\n   obj:");
			put_literal(&o, base ? base : m ? m : "?");
		}
	}
	puts_(&o, "\n}\n");
	return o.len > INT_MAX ? INT_MAX : (int)o.len;
}
