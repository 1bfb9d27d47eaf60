#include "interpose/rule_table.h"

#include <string.h>

static const struct {
	const char *id;
	gc_severity sev;
	const char *help;
} rule_table[GC_RULE__COUNT] = {
#define GC_RULE_ROW(e, id, sev, help) [GC_RULE_##e] = {id, sev, help},
	GC_RULES(GC_RULE_ROW)
#undef GC_RULE_ROW
};

const char *gc_rule_id(gc_rule r)
{
	return (unsigned)r < GC_RULE__COUNT ? rule_table[r].id : "unknown";
}

gc_severity gc_rule_severity(gc_rule r)
{
	return (unsigned)r < GC_RULE__COUNT ? rule_table[r].sev : GC_SEV_ERROR;
}

const char *gc_rule_help(gc_rule r)
{
	return (unsigned)r < GC_RULE__COUNT ? rule_table[r].help : "";
}

const char *gc_severity_name(gc_severity s)
{
	return s == GC_SEV_WARNING ? "warning" : "error";
}

int gc_rule_from_id(const char *id)
{
	for (int r = 0; r < GC_RULE__COUNT; r++)
		if (strcmp(rule_table[r].id, id) == 0)
			return r;
	return -1;
}

/* The codes a checker of allocation and capture meets; others print as numbers. */
const char *gc_result_name(int result)
{
	switch (result) {
	case 0: return "CUDA_SUCCESS";
	case 1: return "CUDA_ERROR_INVALID_VALUE";
	case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
	case 3: return "CUDA_ERROR_NOT_INITIALIZED";
	case 4: return "CUDA_ERROR_DEINITIALIZED";
	case 100: return "CUDA_ERROR_NO_DEVICE";
	case 101: return "CUDA_ERROR_INVALID_DEVICE";
	case 201: return "CUDA_ERROR_INVALID_CONTEXT";
	case 400: return "CUDA_ERROR_INVALID_HANDLE";
	case 401: return "CUDA_ERROR_ILLEGAL_STATE";
	case 500: return "CUDA_ERROR_NOT_FOUND";
	case 600: return "CUDA_ERROR_NOT_READY";
	case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
	case 719: return "CUDA_ERROR_LAUNCH_FAILED";
	case 801: return "CUDA_ERROR_NOT_SUPPORTED";
	case 900: return "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
	case 901: return "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
	case 902: return "CUDA_ERROR_STREAM_CAPTURE_MERGE";
	case 903: return "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED";
	case 904: return "CUDA_ERROR_STREAM_CAPTURE_UNJOINED";
	case 905: return "CUDA_ERROR_STREAM_CAPTURE_ISOLATION";
	case 906: return "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT";
	case 907: return "CUDA_ERROR_CAPTURED_EVENT";
	case 908: return "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD";
	case 999: return "CUDA_ERROR_UNKNOWN";
	default: return NULL;
	}
}
