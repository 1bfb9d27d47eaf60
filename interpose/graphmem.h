/* The graph-memory summary at exit (GRAPHCHECK_GRAPH_MEMORY): see graphmem.c. */
#ifndef GC_GRAPHMEM_H
#define GC_GRAPHMEM_H

#include "interpose/ledger.h"

/* Writes the line when the program made graph allocations; asks the driver. At exit only. */
void gc_graphmem_summary(gc_ledger *l);

#endif
