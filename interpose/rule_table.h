/* The rule table: stable ids, severities and one-line help. Ids are a public contract
 * (README, JSON logs, SARIF): add rules, never rename one. */
#ifndef GC_RULE_TABLE_H
#define GC_RULE_TABLE_H

typedef enum gc_severity { GC_SEV_ERROR, GC_SEV_WARNING } gc_severity;

#define GC_RULES(X) \
	X(FREE_FOREIGN_IN_CAPTURE, "free-foreign-in-capture", GC_SEV_ERROR, \
	  "A free captured into a graph (or a free node) of memory this graph did not allocate.") \
	X(FREE_UNMATERIALIZED, "free-unmaterialized", GC_SEV_ERROR, \
	  "A free of a graph allocation that is not live: its graph was never launched, or it was freed since the last launch.") \
	X(FREE_OWNED_BY_GRAPH, "free-owned-by-graph", GC_SEV_ERROR, \
	  "A free outside the graph (or in another graph) of an allocation that a graph frees itself.") \
	X(RELAUNCH_UNFREED, "relaunch-unfreed", GC_SEV_ERROR, \
	  "A launch of an exec while an allocation from its previous launch is still live, without AUTO_FREE_ON_LAUNCH.") \
	X(DOUBLE_FREE, "double-free", GC_SEV_ERROR, \
	  "A free of a stream-ordered allocation that was already freed.") \
	X(FREE_UNKNOWN, "free-unknown", GC_SEV_ERROR, \
	  "A free of an address that no observed allocation returned.") \
	X(INSTANTIATE_TWICE, "instantiate-twice", GC_SEV_ERROR, \
	  "Instantiating a graph with memory nodes while another exec of it exists.") \
	X(CAPTURE_INVALIDATED, "capture-invalidated", GC_SEV_ERROR, \
	  "A call made during a stream capture invalidated the capture.") \
	X(USE_UNMATERIALIZED, "use-unmaterialized", GC_SEV_ERROR, \
	  "A kernel argument, copy or set points into a graph allocation that is not live: its graph has not run, or it was freed since its last launch.") \
	X(USE_AFTER_FREE, "use-after-free", GC_SEV_ERROR, \
	  "A kernel argument, copy or set points into a stream-ordered allocation that was freed, and nothing live covers that address now.") \
	X(MEMORY_NODE_RESTRICTION, "memory-node-restriction", GC_SEV_ERROR, \
	  "A graph with memory nodes is cloned, cloned into a child node, has a node destroyed, or updates a second exec.") \
	X(POOL_DESTROYED_LIVE, "pool-destroyed-live", GC_SEV_ERROR, \
	  "A memory pool destroyed while allocations from it are live (and later frees of them).") \
	X(LEAK_AT_EXIT, "leak-at-exit", GC_SEV_WARNING, \
	  "Stream-ordered or graph allocations still live at exit.") \
	X(API_ERROR, "api-error", GC_SEV_ERROR, \
	  "An intercepted call returned an error that no other rule explains.") \
	X(CAPTURE_DROPPED_CALL, "capture-dropped-call", GC_SEV_ERROR, \
	  "A call on a capturing stream was refused but the capture stayed valid: the graph lacks that call's work.") \
	X(LAUNCH_STALE_POINTER, "launch-stale-pointer", GC_SEV_ERROR, \
	  "A graph launch whose kernel, copy or set node points into memory from outside the graph that is not live at this launch.") \
	X(LAUNCH_REUSED_POINTER, "launch-reused-pointer", GC_SEV_WARNING, \
	  "A graph launch whose node points at an address freed since instantiate and handed to a newer allocation: it works only while the allocator returns the same address.") \
	X(USE_OUTSIDE_GRAPH_LIFETIME, "use-outside-graph-lifetime", GC_SEV_ERROR, \
	  "A node uses a graph allocation of its own graph without being ordered after its allocation node and before its free node.") \
	X(UNORDERED_USE, "unordered-use", GC_SEV_ERROR, \
	  "A kernel argument, copy or set on one stream uses a stream-ordered allocation made on another stream that this stream is not ordered after (no event, no synchronization).") \
	X(UNORDERED_FREE, "unordered-free", GC_SEV_ERROR, \
	  "A free on one stream of a stream-ordered allocation whose allocation, or last use on another stream (the allocating one included), is not ordered before it.")

typedef enum gc_rule {
#define GC_RULE_ENUM(e, id, sev, help) GC_RULE_##e,
	GC_RULES(GC_RULE_ENUM)
#undef GC_RULE_ENUM
	GC_RULE__COUNT
} gc_rule;

const char *gc_rule_id(gc_rule r);
gc_severity gc_rule_severity(gc_rule r);
const char *gc_rule_help(gc_rule r);
const char *gc_severity_name(gc_severity s);
/* -1 when no rule has that id. */
int gc_rule_from_id(const char *id);

/* CUDA result names for messages, without cuda.h ("CUDA_ERROR_INVALID_VALUE"); NULL if unknown. */
const char *gc_result_name(int result);

#endif
