/* One log line to a record. jansson parses the JSON; this file checks that each field the
 * report uses has the type docs/log-format.md gives it, so that nothing after it has to
 * doubt a record, and says which field is wrong when one is not. */
#include "report/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct pctx {
	char *why;
	size_t why_len;
} pctx;

static bool fail(pctx *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool fail(pctx *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (p->why_len)
		vsnprintf(p->why, p->why_len, fmt, ap);
	va_end(ap);
	return false;
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "an unknown value";
}

/* A logged string as it can safely appear in a message: control characters (which could
 * drive a terminal) as \xNN, long values cut. */
static const char *quoted(const char *s, char *buf, size_t n)
{
	size_t o = 0;
	for (; *s && o + 8 < n; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(buf + o, n - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
	}
	if (*s && o + 4 <= n) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o < n ? o : n - 1] = '\0';
	return buf;
}

/* ---- typed field access: pre is the path of the enclosing object ("alloc.") ------------ */

static bool lookup(pctx *p, const json_t *o, const char *pre, const char *key, bool required,
                   json_t **v)
{
	*v = json_object_get(o, key);
	if (!*v && required)
		return fail(p, "missing field \"%s%s\"", pre, key);
	return true;
}

static bool wrong(pctx *p, const char *pre, const char *key, const char *want, const json_t *v)
{
	return fail(p, "field \"%s%s\" must be %s, not %s", pre, key, want, type_name(v));
}

static bool get_int(pctx *p, const json_t *o, const char *pre, const char *key, bool required,
                    long long *out)
{
	json_t *v;
	if (!lookup(p, o, pre, key, required, &v))
		return false;
	if (!v)
		return true;
	if (!json_is_integer(v))
		return wrong(p, pre, key, "an integer", v);
	*out = json_integer_value(v);
	return true;
}

static bool get_uint(pctx *p, const json_t *o, const char *pre, const char *key, bool required,
                     uint64_t *out)
{
	long long v = 0;
	const json_t *j = json_object_get(o, key);
	if (!j && !required)
		return true;
	/* A size of 2^63 or more: jansson holds integers as int64, so such a number comes as
	 * its decimal digits in a string (see quote_big_integers, or another writer). Any
	 * other string is the wrong type, as before. */
	const char *d = json_is_string(j) ? json_string_value(j) : "";
	if (d[0] >= '0' && d[0] <= '9') {
		char *end;
		errno = 0;
		unsigned long long u = strtoull(d, &end, 10);
		if (!*end && !errno && u > INT64_MAX) {
			*out = u;
			return true;
		}
	}
	if (!get_int(p, o, pre, key, required, &v))
		return false;
	if (v < 0)
		return fail(p, "field \"%s%s\" must not be negative (it is %lld)", pre, key, v);
	*out = (uint64_t)v;
	return true;
}

static bool get_str(pctx *p, const json_t *o, const char *pre, const char *key, bool required,
                    bool nullable, const char **out)
{
	json_t *v;
	if (!lookup(p, o, pre, key, required, &v))
		return false;
	if (!v || (nullable && json_is_null(v)))
		return true;
	if (!json_is_string(v))
		return wrong(p, pre, key, nullable ? "a string or null" : "a string", v);
	*out = json_string_value(v);
	return true;
}

static bool get_bool(pctx *p, const json_t *o, const char *pre, const char *key, bool *out)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return true;
	if (!json_is_boolean(v))
		return wrong(p, pre, key, "a boolean", v);
	*out = json_is_true(v);
	return true;
}

/* Addresses and handles are "0x..." strings: JSON numbers lose precision past 2^53. */
static bool get_hex(pctx *p, const json_t *o, const char *pre, const char *key, bool required,
                    uint64_t *out)
{
	json_t *v;
	if (!lookup(p, o, pre, key, required, &v))
		return false;
	if (!v)
		return true;
	if (!json_is_string(v))
		return wrong(p, pre, key, "a hex string (\"0x...\")", v);
	const char *s = json_string_value(v);
	size_t digits = strlen(s) > 2 ? strspn(s + 2, "0123456789abcdefABCDEF") : 0;
	char q[40];
	if (strncmp(s, "0x", 2) != 0 || digits == 0 || digits > 16 || s[2 + digits] != '\0')
		return fail(p, "field \"%s%s\" must be a hex string (\"0x...\"), not \"%s\"", pre, key,
		            quoted(s, q, sizeof(q)));
	*out = strtoull(s + 2, NULL, 16);
	return true;
}

static bool get_frames(pctx *p, const json_t *o, const char *pre, const char *key,
                       bool required, rp_frames *out)
{
	json_t *a;
	if (!lookup(p, o, pre, key, required, &a))
		return false;
	if (!a)
		return true;
	if (!json_is_array(a))
		return wrong(p, pre, key, "an array of frames", a);
	out->n = json_array_size(a);
	out->v = out->n ? rp_xcalloc(out->n, sizeof(*out->v)) : NULL;
	for (size_t i = 0; i < out->n; i++) {
		const json_t *f = json_array_get(a, i);
		rp_frame *fr = &out->v[i];
		char fp[96];
		uint64_t addr;
		snprintf(fp, sizeof(fp), "%s%s[%zu].", pre, key, i);
		if (!json_is_object(f))
			return fail(p, "field \"%s%s[%zu]\" must be a frame object, not %s", pre, key, i,
			            type_name(f));
		if (!get_str(p, f, fp, "module", true, false, &fr->module) ||
		    !get_hex(p, f, fp, "offset", true, &fr->offset) ||
		    !get_hex(p, f, fp, "addr", false, &addr) ||
		    !get_str(p, f, fp, "symbol", false, true, &fr->symbol))
			return false;
	}
	return true;
}

/* Python frames: {"file","line","function"}, innermost first. Kept as frames whose source
 * is already known (symbolize.c leaves them), the file standing for the module. */
static bool get_py_frames(pctx *p, const json_t *o, const char *pre, const char *key,
                          rp_frames *out)
{
	json_t *a = json_object_get(o, key);
	if (!a)
		return true;
	if (!json_is_array(a))
		return wrong(p, pre, key, "an array of Python frames", a);
	out->n = json_array_size(a);
	out->v = out->n ? rp_xcalloc(out->n, sizeof(*out->v)) : NULL;
	for (size_t i = 0; i < out->n; i++) {
		const json_t *f = json_array_get(a, i);
		rp_frame *fr = &out->v[i];
		const char *file = NULL, *fn = NULL;
		long long line = 0;
		char fp[96];
		snprintf(fp, sizeof(fp), "%s%s[%zu].", pre, key, i);
		if (!json_is_object(f))
			return fail(p, "field \"%s%s[%zu]\" must be a frame object, not %s", pre, key, i,
			            type_name(f));
		if (!get_str(p, f, fp, "file", true, false, &file) ||
		    !get_int(p, f, fp, "line", true, &line) ||
		    !get_str(p, f, fp, "function", false, true, &fn))
			return false;
		if (line < 0 || line > UINT32_MAX)
			return fail(p, "field \"%sline\" is out of range (%lld)", fp, line);
		fr->python = true;
		fr->module = file;
		fr->loc.file = rp_xstrdup(file);
		fr->loc.line = (unsigned)line;
		fr->loc.function = fn ? rp_xstrdup(fn) : NULL;
	}
	return true;
}

/* ---- the record types ------------------------------------------------------------------ */

static bool parse_alloc(pctx *p, const json_t *a, rp_alloc *al)
{
	const char *pre = "alloc.";
	return get_str(p, a, pre, "call", true, false, &al->call) &&
	       get_hex(p, a, pre, "ptr", true, &al->ptr) &&
	       get_uint(p, a, pre, "size", true, &al->size) &&
	       get_hex(p, a, pre, "stream", false, &al->stream) &&
	       get_hex(p, a, pre, "graph", false, &al->graph) &&
	       get_uint(p, a, pre, "capture_id", false, &al->capture_id) &&
	       get_bool(p, a, pre, "in_graph", &al->in_graph) &&
	       get_uint(p, a, pre, "seq", false, &al->seq) &&
	       get_frames(p, a, pre, "backtrace", true, &al->backtrace) &&
	       get_frames(p, a, pre, "free_backtrace", false, &al->free_backtrace) &&
	       get_py_frames(p, a, pre, "py_backtrace", &al->py_backtrace) &&
	       get_py_frames(p, a, pre, "free_py_backtrace", &al->free_py_backtrace);
}

static bool parse_leaks(pctx *p, const json_t *o, rp_record *r)
{
	if (!get_uint(p, o, "", "leak_count", false, &r->leak_count) ||
	    !get_uint(p, o, "", "leak_bytes", false, &r->leak_bytes))
		return false;
	json_t *a = json_object_get(o, "leaks");
	if (!a)
		return true;
	if (!json_is_array(a))
		return wrong(p, "", "leaks", "an array", a);
	r->n_leaks = json_array_size(a);
	r->leaks = r->n_leaks ? rp_xcalloc(r->n_leaks, sizeof(*r->leaks)) : NULL;
	for (size_t i = 0; i < r->n_leaks; i++) {
		const json_t *g = json_array_get(a, i);
		rp_leak *l = &r->leaks[i];
		char pre[48];
		snprintf(pre, sizeof(pre), "leaks[%zu].", i);
		if (!json_is_object(g))
			return fail(p, "field \"leaks[%zu]\" must be an object, not %s", i, type_name(g));
		if (!get_uint(p, g, pre, "count", true, &l->count) ||
		    !get_uint(p, g, pre, "bytes", true, &l->bytes) ||
		    !get_str(p, g, pre, "call", true, false, &l->call) ||
		    !get_bool(p, g, pre, "in_graph", &l->in_graph) ||
		    !get_frames(p, g, pre, "backtrace", true, &l->backtrace) ||
		    !get_py_frames(p, g, pre, "py_backtrace", &l->py_backtrace))
			return false;
	}
	return true;
}

static bool parse_violation(pctx *p, const json_t *o, rp_record *r)
{
	const char *rule = NULL, *sev = NULL;
	char q[80];
	if (!get_uint(p, o, "", "seq", true, &r->seq) ||
	    !get_uint(p, o, "", "pid", true, &r->pid) ||
	    !get_uint(p, o, "", "tid", false, &r->tid) ||
	    !get_str(p, o, "", "rule", true, false, &rule) ||
	    !get_str(p, o, "", "severity", true, false, &sev))
		return false;
	int id = gc_rule_from_id(rule);
	if (id < 0)
		return fail(p, "unknown rule \"%s\"", quoted(rule, q, sizeof(q)));
	r->rule = (gc_rule)id;
	/* The log's severity is kept, not the table's: it is what the process decided. */
	if (strcmp(sev, "error") == 0)
		r->severity = GC_SEV_ERROR;
	else if (strcmp(sev, "warning") == 0)
		r->severity = GC_SEV_WARNING;
	else
		return fail(p, "field \"severity\" must be \"error\" or \"warning\", not \"%s\"",
		            quoted(sev, q, sizeof(q)));
	if (!get_str(p, o, "", "call", true, false, &r->call) ||
	    !get_str(p, o, "", "message", true, false, &r->message) ||
	    !get_int(p, o, "", "result", false, &r->result) ||
	    !get_str(p, o, "", "result_name", false, true, &r->result_name) ||
	    !get_bool(p, o, "", "before_call", &r->before_call) ||
	    !get_hex(p, o, "", "ptr", false, &r->ptr) ||
	    !get_uint(p, o, "", "size", false, &r->size) ||
	    !get_hex(p, o, "", "stream", false, &r->stream) ||
	    !get_hex(p, o, "", "graph", false, &r->graph) ||
	    !get_hex(p, o, "", "exec", false, &r->exec) ||
	    !get_uint(p, o, "", "capture_id", false, &r->capture_id) ||
	    !get_frames(p, o, "", "backtrace", true, &r->backtrace) ||
	    !get_py_frames(p, o, "", "py_backtrace", &r->py_backtrace) ||
	    !get_str(p, o, "", "py_note", false, false, &r->py_note))
		return false;
	json_t *a = json_object_get(o, "alloc");
	if (a && !json_is_null(a)) {
		if (!json_is_object(a))
			return wrong(p, "", "alloc", "an object or null", a);
		r->has_alloc = true;
		if (!parse_alloc(p, a, &r->alloc))
			return false;
	}
	return parse_leaks(p, o, r);
}

static bool parse_start(pctx *p, const json_t *o, uint64_t *pid)
{
	const char *s;
	*pid = 0;
	return get_uint(p, o, "", "pid", false, pid) &&
	       get_str(p, o, "", "program", false, false, &s) &&
	       get_str(p, o, "", "version", false, false, &s) &&
	       get_str(p, o, "", "time", false, false, &s);
}

static bool parse_summary(pctx *p, const json_t *o, rp_summary *s)
{
	const char *sig = NULL;
	s->suppressed = 0;
	if (!(get_uint(p, o, "", "pid", true, &s->pid) &&
	      get_uint(p, o, "", "errors", true, &s->errors) &&
	      get_uint(p, o, "", "warnings", true, &s->warnings) &&
	      get_uint(p, o, "", "records", true, &s->records) &&
	      get_uint(p, o, "", "suppressed", false, &s->suppressed) &&
	      get_str(p, o, "", "signal", false, false, &sig)))
		return false;
	if (sig)  /* a name like SIGTERM; anything longer is cut, it is only shown */
		snprintf(s->signal, sizeof(s->signal), "%s", sig);
	return true;
}

/* The writer prints uint64 sizes with %llu, and JSON allows any integer, but jansson refuses
 * those above INT64_MAX. Such a number (outside strings) is put in quotes, for get_uint;
 * NULL when the line holds none. */
static char *quote_big_integers(const char *buf, size_t len, size_t *out_len)
{
	static const char max64[] = "18446744073709551615", maxi64[] = "9223372036854775807";
	char *out = rp_xmalloc(len + len / 10 + 3);  /* 2 quotes per number of 20+ digits */
	size_t o = 0, quoted = 0;
	bool in_str = false;
	for (size_t i = 0; i < len;) {
		char c = buf[i];
		if (in_str) {
			out[o++] = c;
			if (c == '\\' && i + 1 < len)
				out[o++] = buf[++i];
			else if (c == '"')
				in_str = false;
			i++;
			continue;
		}
		if (c == '"')
			in_str = true;
		bool starts = c >= '0' && c <= '9' && (i == 0 || strchr(":,[ \t", buf[i - 1]));
		size_t n = 0;
		while (starts && i + n < len && buf[i + n] >= '0' && buf[i + n] <= '9')
			n++;
		bool plain = n && (i + n == len || strchr(",]} \t", buf[i + n]));
		if (plain && buf[i] != '0' &&
		    (n == 20 ? memcmp(buf + i, max64, 20) <= 0 : n == 19 && memcmp(buf + i, maxi64, 19) > 0)) {
			out[o++] = '"';
			memcpy(out + o, buf + i, n);
			o += n;
			out[o++] = '"';
			i += n;
			quoted++;
			continue;
		}
		out[o++] = c;
		i++;
	}
	if (!quoted) {
		free(out);
		return NULL;
	}
	*out_len = o;
	return out;
}

rp_line_kind rp_parse_line(const char *buf, size_t len, rp_record **rec, rp_summary *sum,
                           char *why, size_t why_len)
{
	pctx p = {why, why_len};
	json_error_t err;
	const char *type = NULL;
	rp_line_kind kind = RP_LINE_BAD;
	*rec = NULL;
	if (why_len)
		why[0] = '\0';
	/* Checked first so that the message says so; jansson would only name a byte. */
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = rp_utf8_next(buf + i, len - i, &cp);
		if (n == 0) {
			fail(&p, "not valid UTF-8: byte 0x%02x at column %zu", (unsigned char)buf[i],
			     i + 1);
			return RP_LINE_BAD;
		}
		i += n;
	}
	/* Duplicate keys are refused: which of the two values a reader takes is not defined. */
	json_t *o = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);
	size_t big_len;
	char *big = o ? NULL : quote_big_integers(buf, len, &big_len);
	if (big) {
		o = json_loadb(big, big_len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);
		free(big);
	}
	if (!o) {
		char q[JSON_ERROR_TEXT_LENGTH + 8];
		fail(&p, "invalid JSON at column %d: %s", err.column, quoted(err.text, q, sizeof(q)));
		return RP_LINE_BAD;
	}
	if (!json_is_object(o)) {
		fail(&p, "not a JSON object but %s", type_name(o));
	} else if (get_str(&p, o, "", "type", true, false, &type)) {
		if (strcmp(type, "violation") == 0) {
			rp_record *r = rp_xcalloc(1, sizeof(*r));
			r->json = json_incref(o);
			if (parse_violation(&p, o, r)) {
				*rec = r;
				kind = RP_LINE_VIOLATION;
			} else {
				rp_record_free(r);
			}
		} else if (strcmp(type, "start") == 0) {
			memset(sum, 0, sizeof(*sum));  /* a start line gives its pid (0: none) */
			kind = parse_start(&p, o, &sum->pid) ? RP_LINE_START : RP_LINE_BAD;
		} else if (strcmp(type, "graph_memory") == 0 || strcmp(type, "live_at_exit") == 0) {
			kind = RP_LINE_INFO;
		} else if (strcmp(type, "summary") == 0) {
			memset(sum, 0, sizeof(*sum));
			kind = parse_summary(&p, o, sum) ? RP_LINE_SUMMARY : RP_LINE_BAD;
		} else {
			if (why_len)
				quoted(type, why, why_len);
			kind = RP_LINE_UNKNOWN;
		}
	}
	json_decref(o);
	return kind;
}

static void free_frames(rp_frames *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		free(fs->v[i].loc.file);
		free(fs->v[i].loc.function);
	}
	free(fs->v);
	fs->v = NULL;
	fs->n = 0;
}

bool rp_record_lists_every_leak(const rp_record *r)
{
	uint64_t listed = 0;
	for (size_t i = 0; i < r->n_leaks; i++)
		listed += r->leaks[i].count;
	return listed >= r->leak_count;
}

void rp_record_free(rp_record *r)
{
	if (!r)
		return;
	free_frames(&r->backtrace);
	free_frames(&r->py_backtrace);
	free_frames(&r->alloc.backtrace);
	free_frames(&r->alloc.free_backtrace);
	free_frames(&r->alloc.py_backtrace);
	free_frames(&r->alloc.free_py_backtrace);
	for (size_t i = 0; i < r->n_leaks; i++) {
		free_frames(&r->leaks[i].backtrace);
		free_frames(&r->leaks[i].py_backtrace);
	}
	free(r->leaks);
	json_decref(r->json);
	free(r);
}
