/* The graph-memory summary at exit: one information line in the text log and one JSON line
 * ("type":"graph_memory", docs/log-format.md), for a program that made graph allocations.
 * The ledger's counts (ledger_graphmem.c) and the driver's own marks of the device's graph
 * pool (cuDeviceGetGraphMemAttribute), asked here at exit for the current context's device
 * (none without a current context).
 * Never a record: a correct program keeps graph memory reserved, or allocations live, on
 * purpose; it says what the memory cost and how to give it back. */
#define __CUDA_API_VERSION_INTERNAL 1
#include "interpose/graphmem.h"

#include <cuda.h>
#include <unistd.h>

#include "interpose/driver.h"
#include "interpose/log.h"
#include "interpose/textbuf.h"

/* The marks of the current context's device: 1 when the driver gave them. With no context
 * current (the exiting thread never had one, or gave it up) the device is not known: none is
 * asked (device 0 guessed would be another device's marks, or a device the program never
 * used, whose graph memory the query could set up). */
static int driver_marks(int *device, cuuint64_t marks[3])
{
	CUresult (*get_device)(CUdevice *) =
		(CUresult(*)(CUdevice *))gc_driver_lookup("cuCtxGetDevice");
	CUresult (*attr)(CUdevice, CUgraphMem_attribute, void *) =
		(CUresult(*)(CUdevice, CUgraphMem_attribute, void *))gc_driver_lookup(
			"cuDeviceGetGraphMemAttribute");
	CUdevice dev = 0;
	if (!get_device || get_device(&dev) != CUDA_SUCCESS)
		return 0;
	*device = (int)dev;
	static const CUgraphMem_attribute which[3] = {CU_GRAPH_MEM_ATTR_USED_MEM_HIGH,
	                                             CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH,
	                                             CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT};
	for (int i = 0; i < 3; i++)
		if (!attr || attr(dev, which[i], &marks[i]) != CUDA_SUCCESS)
			return 0;
	return 1;
}

void gc_graphmem_summary(gc_ledger *l)
{
	gc_graph_mem gm;
	gc_ledger_graph_mem(l, &gm);
	if (!gm.graph_allocs)
		return;
	int device = 0;
	cuuint64_t m[3] = {0, 0, 0};
	int marks = driver_marks(&device, m);
	char buf[1024];
	gc_buf b = GC_BUF(buf);
	gc_buf_printf(&b, "==graphcheck== graph memory (information): %llu graph allocations made",
	              (unsigned long long)gm.graph_allocs);
	if (marks) {
		gc_buf_printf(&b, "; device %d's graph pool: used at most %llu bytes, reserved at most "
		              "%llu, reserved at exit %llu", device, (unsigned long long)m[0],
		              (unsigned long long)m[1], (unsigned long long)m[2]);
		/* Not taken as allocations of several launches live at once: the marks count the
		 * pool's whole chunks (the H200 used 32 MiB for one 200,000-byte allocation,
		 * tests/gpu/logs/seed_pipeline_fixed.txt). */
		if (gm.largest_graph_bytes)
			gc_buf_printf(&b, ", against the %llu bytes the largest graph allocates in a "
			              "launch (the marks count whole chunks of the pool)",
			              (unsigned long long)gm.largest_graph_bytes);
	}
	if (gm.execs_untrimmed)
		gc_buf_printf(&b, "; %llu exec%s of graphs with allocations destroyed since the last "
		              "cuDeviceGraphMemTrim (%s): the device keeps their memory reserved for "
		              "graphs until cuDeviceGraphMemTrim gives it back",
		              (unsigned long long)gm.execs_untrimmed, gm.execs_untrimmed == 1 ? "" : "s",
		              gm.trims ? "after it" : "none was called");
	if (gm.unfreed_allocs)
		gc_buf_printf(&b, "; %llu graph%s left %llu allocation%s (%llu bytes) never freed, "
		              "which stay in the graph pool (leak-at-exit lists them)",
		              (unsigned long long)gm.graphs_unfreed, gm.graphs_unfreed == 1 ? "" : "s",
		              (unsigned long long)gm.unfreed_allocs, gm.unfreed_allocs == 1 ? "" : "s",
		              (unsigned long long)gm.unfreed_bytes);
	gc_buf_str(&b, ". GRAPHCHECK_GRAPH_MEMORY=0 leaves this out.\n");
	if (b.overflow)  /* never cut mid-line (the parts above fit with room to spare) */
		buf[b.len - 1] = '\n';
	gc_log_text(buf, b.len);
	b = GC_BUF(buf);
	gc_buf_printf(&b, "{\"type\":\"graph_memory\",\"pid\":%ld,\"graph_allocs\":%llu,"
	              "\"execs_untrimmed\":%llu,\"trims\":%llu,\"graphs_unfreed\":%llu,"
	              "\"unfreed_allocs\":%llu,\"unfreed_bytes\":%llu,\"largest_graph_bytes\":%llu",
	              (long)getpid(), (unsigned long long)gm.graph_allocs,
	              (unsigned long long)gm.execs_untrimmed, (unsigned long long)gm.trims,
	              (unsigned long long)gm.graphs_unfreed, (unsigned long long)gm.unfreed_allocs,
	              (unsigned long long)gm.unfreed_bytes,
	              (unsigned long long)gm.largest_graph_bytes);
	if (marks)
		gc_buf_printf(&b, ",\"device\":%d,\"used_high\":%llu,\"reserved_high\":%llu,"
		              "\"reserved_now\":%llu", device, (unsigned long long)m[0],
		              (unsigned long long)m[1], (unsigned long long)m[2]);
	gc_buf_str(&b, "}\n");
	gc_log_json_line(buf, b.len);
}
