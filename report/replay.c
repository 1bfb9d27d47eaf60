#include "report/replay.h"

#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/ledger.h"
#include "interpose/log.h"
#include "interpose/options.h"
#include "report/report.h"

/* The ledger keeps call names by pointer: intern them for the life of the process. */
static const char *intern_call(const char *s)
{
	static char *names[256];
	static int n;
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], s))
			return names[i];
	if (n == 256)
		return "?";
	names[n] = strdup(s);
	return names[n] ? names[n++] : "?";
}

static int get_hex(json_t *o, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(o, key);
	if (!v) {
		*out = 0;
		return 0;
	}
	if (!json_is_string(v))
		return -1;
	char *end;
	*out = strtoull(json_string_value(v), &end, 16);
	return *end ? -1 : 0;
}

static int get_num(json_t *o, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(o, key);
	if (!v) {
		*out = 0;
		return 0;
	}
	if (!json_is_integer(v))
		return -1;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

/* One event line into ev; NULL on success, else what is wrong. */
static const char *parse_event(json_t *o, gc_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	json_t *kind = json_object_get(o, "kind"), *call = json_object_get(o, "call");
	if (!json_is_string(kind) || !json_is_string(call))
		return "an event needs string fields \"kind\" and \"call\"";
	ev->kind = gc_event_kind_from_name(json_string_value(kind));
	if (ev->kind == GC_EV__COUNT)
		return "unknown event kind";
	ev->call = intern_call(json_string_value(call));
	uint64_t result, mode, site, no_context, per_thread;
	if (get_num(o, "result", &result) || get_hex(o, "ptr", &ev->ptr) ||
	    get_num(o, "size", &ev->size) || get_hex(o, "stream", &ev->stream) ||
	    get_hex(o, "pool", &ev->pool) || get_hex(o, "graph", &ev->graph) ||
	    get_hex(o, "exec", &ev->exec) || get_num(o, "flags", &ev->flags) ||
	    get_hex(o, "child", &ev->child) || get_hex(o, "node", &ev->node) ||
	    get_num(o, "capture_id", &ev->capture_id) || get_num(o, "mode", &mode) ||
	    get_num(o, "tid", &ev->tid) || get_num(o, "site", &site) ||
	    get_num(o, "no_context", &no_context) ||
	    get_num(o, "capture_kept", &ev->capture_kept) || get_hex(o, "event", &ev->event) ||
	    get_num(o, "per_thread", &per_thread))
		return "a field has the wrong type";
	ev->result = (int)result;
	ev->mode = (int)mode;
	ev->site = (uint32_t)site;
	if (ev->kind == GC_EV_USE || ev->kind == GC_EV_NODE_USE || ev->kind == GC_EV_NODE_RESET ||
	    ev->kind == GC_EV_NODE_UNORDERED) {
		uint64_t use, arg;
		json_t *func = json_object_get(o, "func");
		if (get_num(o, "use", &use) || !json_is_integer(json_object_get(o, "arg")))
			return "a use needs integer fields \"use\" and \"arg\"";
		arg = (uint64_t)json_integer_value(json_object_get(o, "arg"));
		ev->use = (int)use;
		ev->arg = (int)arg;
		ev->func_name = json_is_string(func) && *json_string_value(func)
		                        ? intern_call(json_string_value(func)) : NULL;
	}
	ev->no_context = no_context != 0;
	ev->per_thread = per_thread != 0;
	return NULL;
}

static void emit(FILE *out, int json, const gc_event *ev, const gc_verdict *v, uint64_t seq,
                 uint64_t pid)
{
	static char buf[GC_RECORD_MAX];
	if (v->is_held)  /* about an earlier call of the thread (ledger_pending.c) */
		ev = &v->held;
	gc_record r = {.call = ev->call, .result = ev->result, .ptr = ev->ptr, .size = ev->size,
	               .stream = ev->stream, .graph = ev->graph, .exec = ev->exec,
	               .capture_id = ev->capture_id, .pid = pid, .tid = ev->tid, .seq = seq,
	               .before_call = gc_event_before_call(ev)};
	size_t n = json ? gc_log_format_json(buf, sizeof(buf), &r, v)
	                : gc_log_format_text(buf, sizeof(buf), &r, v);
	fwrite(buf, 1, n, out);
}

static void emit_all(FILE *out, int json, const gc_event *ev, const gc_verdict *v, int n,
                     unsigned long *seq, uint64_t pid, gc_replay_result *res)
{
	for (int i = 0; i < n; i++) {
		emit(out, json, ev, &v[i], ++*seq, pid);
		if (gc_rule_severity(v[i].rule) == GC_SEV_WARNING)
			res->warnings++;
		else
			res->errors++;
	}
}

/* The ledger the live run had: GRAPHCHECK_HISTORY and GRAPHCHECK_USES from the header's
 * "options" (a trace written before the header carried them gets the options' defaults, as
 * a live run had then), and what its version says of the stream model. */
static gc_ledger *new_ledger(json_t *header)
{
	json_t *h = json_object_get(json_object_get(header, "options"), "history");
	gc_ledger_config cfg = {.history = GC_LEDGER_HISTORY_DEFAULT};
	if (json_is_integer(h) && json_integer_value(h) >= 0)
		cfg.history = (size_t)json_integer_value(h);
	json_t *u = json_object_get(json_object_get(header, "options"), "uses");
	cfg.no_uses = json_is_integer(u) && json_integer_value(u) == 0;
	/* Version 1 does not have the host waits made while the stream model was off. */
	json_t *v = json_object_get(header, "version");
	cfg.no_earlier = json_is_integer(v) && json_integer_value(v) < 2;
	return gc_ledger_new(&cfg);
}

/* A file's first line that says it is not a trace: graphcheck's text log or its JSON log
 * (read without --replay). One message for the file, not one a line. */
static int not_a_trace(FILE *err, const char *name, const char *buf, size_t len)
{
	rp_file_kind kind = rp_first_line_kind(buf, len);
	const char *what = kind == RP_FILE_TEXT_LOG   ? "graphcheck's text log (--log-file)"
	                   : kind == RP_FILE_JSON_LOG ? "a --json-file log (read it without --replay)"
	                   : kind == RP_FILE_DOCUMENT ? RP_DOCUMENT_WHAT
	                                              : NULL;
	if (what)
		fprintf(err, "graphcheck-report: %s:1: this is %s, not a --trace-file trace; the rest "
		             "of the file is skipped\n", name, what);
	return what != NULL;
}

int gc_replay(FILE *in, const char *name, FILE *out, int json, FILE *err,
              gc_replay_result *res)
{
	memset(res, 0, sizeof(*res));
	gc_ledger *l = NULL;  /* made at the header, whose options configure it, or first event */
	rp_line lb = {0};
	unsigned long lineno = 0, seq = 0;
	uint64_t pid = 0;
	int saw_header = 0, content = 0, stopped = 0, oom = 0;
	while (rp_read_line(in, &lb)) {
		lineno++;
		if (lb.nul) {
			fprintf(err, "graphcheck-report: %s:%lu: binary data (a NUL byte): not a trace; "
			             "the rest of the file is skipped\n", name, lineno);
			res->bad_lines++;
			stopped = 1;
			break;
		}
		if (lb.too_long) {
			fprintf(err, "graphcheck-report: %s:%lu: line longer than %u bytes, skipped\n",
			        name, lineno, RP_LINE_MAX);
			res->bad_lines++;
			content = 1;
			continue;
		}
		if (!lb.len)
			continue;
		if (!content && not_a_trace(err, name, lb.buf, lb.len)) {
			res->bad_lines++;
			stopped = 1;
			break;
		}
		content = 1;
		json_error_t je;
		json_t *o = json_loadb(lb.buf, lb.len, 0, &je);
		if (!o || !json_is_object(o)) {
			fprintf(err, "graphcheck-report: %s:%lu: invalid JSON (%s); skipped\n", name,
			        lineno, o ? "not an object" : je.text);
			res->bad_lines++;
			json_decref(o);
			continue;
		}
		const char *type = json_string_value(json_object_get(o, "type"));
		if (type && !strcmp(type, "trace")) {
			saw_header = 1;
			pid = (uint64_t)json_integer_value(json_object_get(o, "pid"));
			if (!l && !(l = new_ledger(o))) {
				json_decref(o);
				oom = 1;
				break;
			}
		} else if (type && !strcmp(type, "event")) {
			gc_event ev;
			if (!l && !(l = new_ledger(NULL))) {
				json_decref(o);
				oom = 1;
				break;
			}
			const char *why = parse_event(o, &ev);
			if (why) {
				fprintf(err, "graphcheck-report: %s:%lu: %s; skipped\n", name, lineno, why);
				res->bad_lines++;
			} else {
				gc_verdict v[8];
				int n = gc_ledger_apply(l, &ev, v, 8);
				res->events++;
				emit_all(out, json, &ev, v, n, &seq, pid, res);
			}
		} else if (!type || strcmp(type, "site") != 0) {
			fprintf(err, "graphcheck-report: %s:%lu: not a trace line (type %s); skipped\n",
			        name, lineno, type ? type : "missing");
			res->bad_lines++;
		}
		json_decref(o);
	}
	free(lb.buf);
	if (ferror(in)) {
		fprintf(err, "graphcheck-report: %s: cannot read: %s\n", name, strerror(errno));
		gc_ledger_free(l);
		return -1;
	}
	if (l) {  /* the end of the trace is the end of the process: what is held is reported */
		gc_verdict v;
		while (gc_ledger_take_held(l, &v))
			emit_all(out, json, &v.held, &v, 1, &seq, pid, res);
		gc_ledger_free(l);
	}
	else if (oom) {
		fprintf(err, "graphcheck-report: %s: out of memory\n", name);
		return -1;
	}
	if (!stopped && !saw_header && !res->events) {
		fprintf(err, "graphcheck-report: %s: no trace header and no events: not a trace\n",
		        name);
		res->bad_lines++;
	}
	return 0;
}
