/* A Python program's memory still live at exit, said in one information line: see
 * live_at_exit.c. */
#ifndef GC_LIVE_AT_EXIT_H
#define GC_LIVE_AT_EXIT_H

#include "interpose/ledger.h"

/* Writes the line when any stream-ordered or graph allocation is live. At exit only. */
void gc_live_at_exit_note(gc_ledger *l);

#endif
