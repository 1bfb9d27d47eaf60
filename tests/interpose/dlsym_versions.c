/* Checks, with libgraphcheck.so preloaded and the stand-in libcuda: both versioned
 * references to dlsym (GLIBC_2.34, the default now, and GLIBC_2.2.5, what older binaries
 * carry) reach graphcheck's hook and get its wrapper for a hooked name; other names and
 * RTLD_NEXT lookups are answered as glibc would. Prints "ok"/"FAIL" lines; exit 1 on FAIL. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *dlsym_old(void *, const char *);
__asm__(".symver dlsym_old, dlsym@GLIBC_2.2.5");

static int failures;

static void expect_in(const char *what, void *p, const char *module_part)
{
	Dl_info info;
	int found = p && dladdr(p, &info) && info.dli_fname && strstr(info.dli_fname, module_part);
	printf("%s %s: %p in %s\n", found ? "ok  " : "FAIL", what, p,
	       p && dladdr(p, &info) ? info.dli_fname : "(nothing)");
	failures += !found;
}

int main(void)
{
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
	if (!cuda) {
		printf("FAIL dlopen libcuda.so.1: %s\n", dlerror());
		return 1;
	}
	expect_in("dlsym@GLIBC_2.34 cuMemFreeAsync", dlsym(cuda, "cuMemFreeAsync"), "libgraphcheck");
	expect_in("dlsym@GLIBC_2.2.5 cuMemFreeAsync", dlsym_old(cuda, "cuMemFreeAsync"),
	          "libgraphcheck");
	expect_in("dlsym cuGetProcAddress_v2", dlsym(cuda, "cuGetProcAddress_v2"), "libgraphcheck");
	expect_in("dlsym cuInit (not hooked)", dlsym(cuda, "cuInit"), "libcuda");
	/* Under ASan its runtime comes first and defines puts: the run says where to expect it. */
	const char *puts_in = getenv("EXPECT_PUTS_IN") ? getenv("EXPECT_PUTS_IN") : "libc";
	expect_in("dlsym RTLD_DEFAULT puts", dlsym(RTLD_DEFAULT, "puts"), puts_in);
	/* RTLD_NEXT from the program: the next puts after the program is libc's, not one
	 * found relative to graphcheck. */
	/* (Under TSan the interceptor lives in the program itself, so the next one is libc's:
	 * EXPECT_NEXT_PUTS_IN.) */
	const char *next_in = getenv("EXPECT_NEXT_PUTS_IN") ? getenv("EXPECT_NEXT_PUTS_IN") : puts_in;
	expect_in("dlsym RTLD_NEXT puts", dlsym(RTLD_NEXT, "puts"), next_in);
	return failures ? 1 : 0;
}
