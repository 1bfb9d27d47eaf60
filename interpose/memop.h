/* A stream memory operation as cuStreamBatchMemOp (and a batch memory operation node) holds
 * it: whether it waits for a value or writes one, and the address it reads or writes. Shared
 * by the uses' check (uses.c) and the nodes read at instantiate (graph_nodes.c). */
#ifndef GC_MEMOP_H
#define GC_MEMOP_H

#include <cuda.h>
#include <stdint.h>

static inline int gc_memop_waits(const CUstreamBatchMemOpParams *op)
{
	return op->operation == CU_STREAM_MEM_OP_WAIT_VALUE_32 ||
	       op->operation == CU_STREAM_MEM_OP_WAIT_VALUE_64;
}

static inline int gc_memop_writes(const CUstreamBatchMemOpParams *op)
{
	return op->operation == CU_STREAM_MEM_OP_WRITE_VALUE_32 ||
	       op->operation == CU_STREAM_MEM_OP_WRITE_VALUE_64;
}

/* 1 with the address in *a for a wait or a write; 0 for the rest (a flush, a barrier). */
static inline int gc_memop_address(const CUstreamBatchMemOpParams *op, uint64_t *a)
{
	if (gc_memop_waits(op))
		*a = op->waitValue.address;
	else if (gc_memop_writes(op))
		*a = op->writeValue.address;
	else
		return 0;
	return 1;
}

#endif
