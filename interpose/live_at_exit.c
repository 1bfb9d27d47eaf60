/* The leak check of a Python program, by default: one information line in the text log and
 * one JSON line ("type":"live_at_exit", docs/log-format.md), not a leak-at-exit record.
 * CPython frees objects when their last reference goes, and at exit does not free every
 * object still referenced (module globals, a model's parameters, a framework's cached
 * blocks): the memory they hold is live at exit in every correct program, and the program
 * has no way to free it there. GRAPHCHECK_LEAK_CHECK=full makes it the record again, site by
 * site, for a program that allocates through the driver itself (cuda-python). */
#include "interpose/live_at_exit.h"

#include <unistd.h>

#include "interpose/log.h"
#include "interpose/textbuf.h"

void gc_live_at_exit_note(gc_ledger *l)
{
	gc_live_totals t;
	gc_ledger_live_totals(l, &t);
	if (!t.count)
		return;
	char buf[768];
	gc_buf b = GC_BUF(buf);
	gc_buf_printf(&b, "==graphcheck== live at exit (information): %llu stream-ordered or "
	              "graph allocation%s (%llu bytes",
	              (unsigned long long)t.count, t.count == 1 ? "" : "s",
	              (unsigned long long)t.bytes);
	if (t.graph_count)
		gc_buf_printf(&b, "; %llu of them graph allocations, %llu bytes",
		              (unsigned long long)t.graph_count, (unsigned long long)t.graph_bytes);
	gc_buf_str(&b, ") still live when this Python program ended. Not reported as leaks: "
	               "Python does not free every object at exit. GRAPHCHECK_LEAK_CHECK=full "
	               "reports them (leak-at-exit, every site).\n");
	if (b.overflow)
		buf[b.len - 1] = '\n';
	gc_log_text(buf, b.len);
	b = GC_BUF(buf);
	gc_buf_printf(&b, "{\"type\":\"live_at_exit\",\"pid\":%ld,\"count\":%llu,\"bytes\":%llu,"
	              "\"graph_count\":%llu,\"graph_bytes\":%llu}\n",
	              (long)getpid(), (unsigned long long)t.count, (unsigned long long)t.bytes,
	              (unsigned long long)t.graph_count, (unsigned long long)t.graph_bytes);
	gc_log_json_line(buf, b.len);
}
