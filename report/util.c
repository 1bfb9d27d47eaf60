/* Allocation for a command-line tool: running out of memory has no useful recovery, so it
 * is said once and the tool exits with the status of a failure to read its input. Then
 * UTF-8 repair, the bounded line reader, and what a file's first line says it is. */
#include "report/report.h"

#include <stdlib.h>
#include <string.h>

static void *checked(void *p)
{
	if (!p) {
		fputs("graphcheck-report: out of memory\n", stderr);
		exit(RP_EXIT_USAGE);
	}
	return p;
}

void *rp_xmalloc(size_t n)
{
	return checked(malloc(n ? n : 1));
}

void *rp_xcalloc(size_t n, size_t size)
{
	return checked(calloc(n ? n : 1, size ? size : 1));
}

void *rp_xrealloc(void *p, size_t n)
{
	return checked(realloc(p, n ? n : 1));
}

char *rp_xstrdup(const char *s)
{
	return checked(strdup(s));
}

size_t rp_utf8_next(const char *s, size_t avail, uint32_t *cp)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t c = p[0], min;
	size_t n;
	if (avail == 0)
		return 0;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if ((c & 0xe0) == 0xc0) {
		n = 2, c &= 0x1f, min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		n = 3, c &= 0x0f, min = 0x800;
	} else if ((c & 0xf8) == 0xf0) {
		n = 4, c &= 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n > avail)
		return 0;
	for (size_t k = 1; k < n; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[k] & 0x3f);
	}
	/* Overlong forms, UTF-16 surrogates and values past U+10FFFF are not UTF-8. */
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

void rp_make_utf8(char *s)
{
	size_t left = strlen(s);
	while (left) {
		uint32_t cp;
		size_t n = rp_utf8_next(s, left, &cp);
		if (n == 0) {
			*s = '?';
			n = 1;
		}
		s += n;
		left -= n;
	}
}

json_t *rp_json_utf8(const char *s)
{
	size_t left = strlen(s), o = 0;
	char *copy = rp_xmalloc(3 * left + 1);  /* a byte becomes at most 3 (U+FFFD) */
	while (left) {
		uint32_t cp;
		size_t n = rp_utf8_next(s, left, &cp);
		if (n == 0) {
			memcpy(copy + o, "\xef\xbf\xbd", 3);
			o += 3;
			n = 1;
		} else {
			memcpy(copy + o, s, n);
			o += n;
		}
		s += n;
		left -= n;
	}
	copy[o] = '\0';
	json_t *v = checked(json_string(copy));
	free(copy);
	return v;
}

bool rp_read_line(FILE *f, rp_line *lb)
{
	int c;
	bool any = false;
	lb->len = 0;
	lb->too_long = lb->nul = lb->newline = false;
	while ((c = getc_unlocked(f)) != EOF) {
		any = true;
		if (c == '\n') {
			lb->newline = true;
			break;
		}
		if (c == '\0') {
			lb->nul = true;
			break;
		}
		if (lb->len == RP_LINE_MAX) {
			lb->too_long = true;
			continue;
		}
		/* Grown as needed, so that small logs do not cost the maximum. */
		if (lb->len == lb->cap) {
			lb->cap = lb->cap ? 2 * lb->cap : 4096;
			if (lb->cap > RP_LINE_MAX)
				lb->cap = RP_LINE_MAX;
			lb->buf = rp_xrealloc(lb->buf, lb->cap);
		}
		lb->buf[lb->len++] = (char)c;
	}
	return any;
}

static bool starts_with(const char *buf, size_t len, const char *head)
{
	size_t n = strlen(head);
	return len >= n && !memcmp(buf, head, n);
}

rp_file_kind rp_first_line_kind(const char *buf, size_t len)
{
	if (starts_with(buf, len, "==graphcheck=="))
		return RP_FILE_TEXT_LOG;
	if (starts_with(buf, len, "{\"type\":\"start\","))
		return RP_FILE_JSON_LOG;
	if (starts_with(buf, len, "{\"type\":\"trace\","))
		return RP_FILE_TRACE;
	/* a JSON-lines line is a whole object: "{" alone opens a document spread over lines */
	while (len && (buf[len - 1] == '\r' || buf[len - 1] == ' ' || buf[len - 1] == '\t'))
		len--;
	if ((len == 1 && (buf[0] == '{' || buf[0] == '[')) || starts_with(buf, len, "<?xml"))
		return RP_FILE_DOCUMENT;
	return RP_FILE_OTHER;
}
