/* A bounded text builder over a caller's buffer, and the one JSON string writer that the log
 * and the trace share. Nothing allocates; a text that does not fit sets `overflow` and stops
 * growing, so a caller writes whole lines or nothing. */
#ifndef GC_TEXTBUF_H
#define GC_TEXTBUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct gc_buf {
	char *p;
	size_t len, cap;
	int overflow;
} gc_buf;

/* A builder over a char array (not a pointer). */
#define GC_BUF(array) ((gc_buf){(array), 0, sizeof(array), 0})

/* The _put, _str, _u64, _hex and _json_str appenders are async-signal-safe (memcpy and arithmetic only). */
void gc_buf_put(gc_buf *b, const char *s, size_t n);
void gc_buf_str(gc_buf *b, const char *s);
void gc_buf_u64(gc_buf *b, uint64_t v);
void gc_buf_hex(gc_buf *b, uint64_t v);  /* 0x and lower-case digits */
void gc_buf_printf(gc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* s as a JSON string, quotes included; NULL becomes null. At most max bytes of s are read
 * (never cutting a character). Valid UTF-8 is written as it is; '"' and '\' are escaped;
 * control characters (below 0x20, and 0x7f) become \n, \t, \r or \u00XX; a byte that is
 * not part of valid UTF-8 becomes \u00XX, its value as a code point (as Latin-1 reads it).
 * The output is valid JSON and valid UTF-8 whatever s holds. */
void gc_buf_json_str(gc_buf *b, const char *s, size_t max);

/* s for the text log and messages, where a string from outside (a path, a symbol) must stay
 * on its line and mean nothing to a terminal: at most max bytes of s, valid UTF-8 as it is,
 * except that '\' becomes "\\", \n, \t and \r stay escaped as such, and every other control
 * character (C0, DEL, C1) and every byte that is not valid UTF-8 becomes \xNN. NULL: "(null)". */
void gc_buf_text_str(gc_buf *b, const char *s, size_t max);
/* The same into a small array (a message's copy of a path): out, always terminated; a text
 * that does not fit ends in "...". */
const char *gc_text_shown(char *out, size_t n, const char *s);

/* An output path's pattern as opened: "%p" becomes pid (the process's id, or what stands for
 * it), "%%" a percent sign, anything else itself. Returns -1 if it does not fit in n. */
int gc_text_expand_pid(char *out, size_t n, const char *pattern, const char *pid);

#endif
