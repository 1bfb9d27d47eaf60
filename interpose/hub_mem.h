/* The allocator's direct path, inline in its wrappers (hooks.c's; the tests' that run it as
 * they do): apart from hub.h, because it inlines the ledger's fast path (ledger_fast.h), whose
 * internals no other includer of hub.h should see. */
#ifndef GC_HUB_MEM_H
#define GC_HUB_MEM_H

#include "interpose/hub.h"
#include "interpose/ledger_fast.h"

/* What gc_hub_report does with a successful allocation or free outside any capture, on a
 * thread whose log is active (gc_hub_thread set), with no error held and no trace
 * (gc_hub_mem_ok): the thread's id and the cheap site, then the ledger's fast path, which
 * gives no verdict. 1 when the call was applied (it is then no event), 0 when it must go the
 * full way: allocation backtraces asked for (an unwound site), or the ledger declined. A site
 * interned here is the one the full path finds cached. Inline in the wrapper, so that the
 * common call builds only the op; the wrapper has noted its caller (gc_hub_note_caller: a
 * return address, never 0) just before. kind: the op's, a constant (GC_EV_ALLOC or
 * GC_EV_FREE), which picks the ledger's half with no test of op->kind. */
static inline __attribute__((always_inline)) int gc_hub_mem_direct(gc_mem_op *op, int kind)
{
	op->tid = gc_hub_thread;
	if (!(gc_hub.mem_site == GC_HUB_SITE_CALLER &&
	      gc_hub_recent_site(gc_hub_caller, &op->site)) &&
	    (gc_hub.mem_site == GC_HUB_SITE_UNWOUND || !gc_hub_direct_site(op)))
		return 0;
	return kind == GC_EV_FREE ? gc_ledger_free_mem(gc_hub.ledger, op, GC_EV_FREE)
	                          : gc_ledger_alloc_mem(gc_hub.ledger, op, GC_EV_ALLOC);
}

#endif
