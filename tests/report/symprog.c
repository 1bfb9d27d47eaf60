/* A program whose call site the symbolization tests know. It prints a graphcheck log
 * (docs/log-format.md) with one record whose first frame is the return address of the call
 * marked below, found the way the interposer finds it (dladdr1's link map gives the load
 * bias), and whose second frame names a module that does not exist. */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static int __attribute__((noinline)) log_call_site(void)
{
	void *ra = __builtin_extract_return_addr(__builtin_return_address(0));
	Dl_info info;
	struct link_map *lm = NULL;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0 || !dladdr1(ra, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return 1;
	exe[n] = '\0';
	int pid = (int)getpid();
	printf("{\"type\":\"start\",\"pid\":%d,\"program\":\"%s\",\"version\":\"test\"}\n", pid, exe);
	printf("{\"type\":\"violation\",\"seq\":1,\"pid\":%d,\"tid\":%d,\"rule\":\"double-free\","
	       "\"severity\":\"error\",\"call\":\"cuMemFreeAsync\",\"result\":1,"
	       "\"result_name\":\"CUDA_ERROR_INVALID_VALUE\",\"ptr\":\"0x7f0000001000\",\"size\":0,"
	       "\"stream\":\"0x0\",\"capture_id\":0,\"graph\":\"0x0\",\"exec\":\"0x0\","
	       "\"message\":\"symprog: a call site the tests know\",\"backtrace\":["
	       "{\"addr\":\"0x%lx\",\"module\":\"%s\",\"offset\":\"0x%lx\",\"symbol\":null},"
	       "{\"addr\":\"0x7f0000001234\",\"module\":\"/nonexistent/libgone.so\","
	       "\"offset\":\"0x1234\",\"symbol\":\"_Z4gonei\"}],\"alloc\":null}\n",
	       pid, pid, (unsigned long)(uintptr_t)ra, exe,
	       (unsigned long)((uintptr_t)ra - lm->l_addr));
	printf("{\"type\":\"summary\",\"pid\":%d,\"errors\":1,\"warnings\":0,\"records\":1}\n", pid);
	return 0;
}

int main(void)
{
	return log_call_site(); /* call-site: the tests expect this line */
}
