#include "interpose/textbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void gc_buf_put(gc_buf *b, const char *s, size_t n)
{
	if (b->overflow || b->len + n >= b->cap) {
		b->overflow = 1;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void gc_buf_str(gc_buf *b, const char *s)
{
	gc_buf_put(b, s, strlen(s));
}

void gc_buf_u64(gc_buf *b, uint64_t v)
{
	char digits[20];
	size_t i = sizeof(digits);
	do {
		digits[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	gc_buf_put(b, digits + i, sizeof(digits) - i);
}

void gc_buf_hex(gc_buf *b, uint64_t v)
{
	char digits[18];
	size_t i = sizeof(digits);
	do {
		digits[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	digits[--i] = 'x';
	digits[--i] = '0';
	gc_buf_put(b, digits + i, sizeof(digits) - i);
}

void gc_buf_printf(gc_buf *b, const char *fmt, ...)
{
	if (b->overflow)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0 || b->len + (size_t)n >= b->cap)
		b->overflow = 1;
	else
		b->len += (size_t)n;
}

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or 0 when s[0] does not start one. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0], cp;
	size_t n;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)  /* also stops at the terminating NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* '\\', '\n', '\t' and '\r' as two characters, the same in JSON and the text log; 0 for
 * any other c. */
static int put_short_escape(gc_buf *b, unsigned char c)
{
	static const char from[] = "\\\n\t\r", to[] = "\\ntr";
	const char *at = c ? strchr(from, c) : NULL;
	if (!at)
		return 0;
	char esc[2] = {'\\', to[at - from]};
	gc_buf_put(b, esc, 2);
	return 1;
}

static void put_u00(gc_buf *b, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
	gc_buf_put(b, esc, sizeof(esc));
}

void gc_buf_json_str(gc_buf *b, const char *s, size_t max)
{
	if (!s) {
		gc_buf_put(b, "null", 4);
		return;
	}
	const unsigned char *u = (const unsigned char *)s;
	gc_buf_put(b, "\"", 1);
	for (size_t i = 0; u[i] && !b->overflow;) {
		size_t n = utf8_len(u + i);
		if (i + (n ? n : 1) > max)
			break;
		unsigned char c = u[i];
		if (n > 1) {
			gc_buf_put(b, s + i, n);
		} else if (!n) {
			put_u00(b, c);  /* not UTF-8: the byte's value, as documented */
		} else if (c == '"') {
			gc_buf_put(b, "\\\"", 2);
		} else if (put_short_escape(b, c)) {
		} else if (c < 0x20 || c == 0x7f) {
			put_u00(b, c);
		} else {
			gc_buf_put(b, s + i, 1);
		}
		i += n ? n : 1;
	}
	gc_buf_put(b, "\"", 1);
}

static void put_x(gc_buf *b, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	char esc[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
	gc_buf_put(b, esc, sizeof(esc));
}

void gc_buf_text_str(gc_buf *b, const char *s, size_t max)
{
	if (!s) {
		gc_buf_str(b, "(null)");
		return;
	}
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; u[i] && !b->overflow;) {
		size_t n = utf8_len(u + i);
		if (i + (n ? n : 1) > max)
			break;
		unsigned char c = u[i];
		if (n == 2 && c == 0xc2 && u[i + 1] < 0xa0) {
			put_x(b, c);  /* U+0080..U+009F: C1 controls (0x9b is a terminal's CSI) */
			put_x(b, u[i + 1]);
		} else if (n > 1) {
			gc_buf_put(b, s + i, n);
		} else if (!n || c == 0x7f) {
			put_x(b, c);
		} else if (put_short_escape(b, c)) {
		} else if (c < 0x20) {
			put_x(b, c);
		} else {
			gc_buf_put(b, s + i, 1);
		}
		i += n ? n : 1;
	}
}

const char *gc_text_shown(char *out, size_t n, const char *s)
{
	gc_buf b = {out, 0, n, 0};
	if (!n)
		return "";
	out[0] = '\0';
	gc_buf_text_str(&b, s, (size_t)-1);
	if (b.overflow && n > 4)
		memcpy(out + (b.len < n - 4 ? b.len : n - 4), "...", 4);
	return out;
}

int gc_text_expand_pid(char *out, size_t n, const char *pattern, const char *pid)
{
	size_t o = 0, pid_len = strlen(pid);
	for (const char *p = pattern; *p; p++) {
		const char *piece = p;
		size_t len = 1;
		if (p[0] == '%' && p[1] == 'p') {
			piece = pid;
			len = pid_len;
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			p++;
		}
		if (o + len >= n)
			return -1;
		memcpy(out + o, piece, len);
		o += len;
	}
	if (o >= n)
		return -1;
	out[o] = '\0';
	return 0;
}
