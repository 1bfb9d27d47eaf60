/* Kernel layouts: asked once per handle, the pointer-sized arguments read through them, and
 * forgotten when a module is unloaded (its handles may come back for other kernels). The
 * driver's functions are stand-ins here, answering from a table the test changes. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "interpose/kernel_args.h"

/* The kernel behind handle 0x1000: its parameter sizes (0 ends), and how often asked. */
static size_t sizes[8];
static int asked;
static CUresult answer_now = CUDA_SUCCESS;  /* what the driver says before looking */

static CUresult func_info(CUfunction f, size_t i, size_t *off, size_t *size)
{
	if ((uintptr_t)f != 0x1000)
		return CUDA_ERROR_INVALID_HANDLE;
	if (answer_now != CUDA_SUCCESS)
		return answer_now;
	if (i == 0)
		asked++;
	size_t o = 0;
	for (size_t k = 0; k < i; k++) {
		if (!sizes[k])
			return CUDA_ERROR_INVALID_VALUE;
		o += sizes[k];
	}
	if (!sizes[i])
		return CUDA_ERROR_INVALID_VALUE;
	*off = o;
	*size = sizes[i];
	return CUDA_SUCCESS;
}

static CUresult func_name(const char **name, CUfunction f)
{
	static char buf[16] = "first";
	(void)f;
	*name = buf;
	return CUDA_SUCCESS;
}

static void *lookup(const char *s)
{
	if (!strcmp(s, "cuFuncGetParamInfo"))
		return (void *)func_info;
	if (!strcmp(s, "cuFuncGetName"))
		return (void *)func_name;
	return NULL;
}

static void words_and_forget(void **state)
{
	(void)state;
	gc_kernel_args_init(lookup);
	uint64_t a = 0xaaa, b = 0xbbb;
	int n32 = 7;
	sizes[0] = 8, sizes[1] = 4, sizes[2] = 8, sizes[3] = 0;
	void *params[] = {&a, &n32, &b};
	const gc_kernel *k = gc_kernel_of(0x1000);
	assert_non_null(k);
	assert_string_equal(gc_kernel_name(k), "first");
	uint64_t w[4];
	uint16_t p[4];
	assert_int_equal(gc_kernel_words(k, params, NULL, 0, w, p, 4), 2);  /* the 4-byte one is no word */
	assert_int_equal(w[0], 0xaaa);
	assert_int_equal(p[0], 0);
	assert_int_equal(w[1], 0xbbb);
	assert_int_equal(p[1], 2);
	int after_first = asked;
	assert_ptr_equal(gc_kernel_of(0x1000), k);  /* asked once: kept */
	assert_int_equal(asked, after_first);
	/* The module unloaded, and the handle given to a kernel of one argument: the old layout
	 * would read params[1] and [2] of a one-entry array. */
	gc_kernel_args_forget();
	sizes[0] = 8, sizes[1] = 0;
	void *one[] = {&a};
	const gc_kernel *k2 = gc_kernel_of(0x1000);
	assert_true(asked > after_first);  /* asked again */
	assert_int_equal(gc_kernel_words(k2, one, NULL, 0, w, p, 4), 1);
	/* The name is graphcheck's copy, not the driver's string (gone with its module). */
	assert_string_equal(gc_kernel_name(k), "first");
}

static void driver_cannot_answer_now(void **state)
{
	(void)state;
	gc_kernel_args_init(lookup);
	gc_kernel_args_forget();
	sizes[0] = 8, sizes[1] = 0;
	answer_now = CUDA_ERROR_INVALID_CONTEXT;  /* a thread without a context */
	assert_null(gc_kernel_of(0x1000));
	answer_now = CUDA_SUCCESS;  /* not kept as "no parameters": asked again, and answered */
	assert_non_null(gc_kernel_of(0x1000));
	assert_null(gc_kernel_of(0x2000));  /* a handle the driver does not know: no layout */
}

/* The words read in batches (more words than the batch, then from the count so far on), and
 * from a launch's `extra` buffer instead of kernel_params: the general way, beside the one
 * pass of the common launch. */
static void words_in_batches_and_from_extra(void **state)
{
	(void)state;
	gc_kernel_args_init(lookup);
	gc_kernel_args_forget();
	uint64_t a = 0xaaa, b = 0xbbb, c = 0xccc;
	int n32 = 7;
	sizes[0] = 8, sizes[1] = 8, sizes[2] = 4, sizes[3] = 8, sizes[4] = 0;
	void *params[] = {&a, &b, &n32, &c};
	const gc_kernel *k = gc_kernel_of(0x1000);
	assert_non_null(k);
	uint64_t w[4];
	uint16_t p[4];
	assert_int_equal(gc_kernel_words(k, params, NULL, 0, w, p, 2), 2);  /* a full batch */
	assert_int_equal(w[0], 0xaaa);
	assert_int_equal(w[1], 0xbbb);
	assert_int_equal(gc_kernel_words(k, params, NULL, 2, w, p, 2), 1);  /* the rest */
	assert_int_equal(w[0], 0xccc);
	assert_int_equal(p[0], 3);
	assert_int_equal(gc_kernel_words(k, params, NULL, 3, w, p, 2), 0);  /* the end */
	/* The same arguments packed in one buffer, by their offsets (0, 8, 16, 20). */
	unsigned char buf[28];
	size_t size = sizeof buf;
	memcpy(buf, &a, 8);
	memcpy(buf + 8, &b, 8);
	memcpy(buf + 16, &n32, 4);
	memcpy(buf + 20, &c, 8);
	void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
	                 CU_LAUNCH_PARAM_END};
	assert_int_equal(gc_kernel_words(k, NULL, extra, 0, w, p, 4), 3);
	assert_int_equal(w[0], 0xaaa);
	assert_int_equal(w[2], 0xccc);
	assert_int_equal(p[2], 3);
	size = 24;  /* a buffer that ends inside the last word: not read */
	assert_int_equal(gc_kernel_words(k, NULL, extra, 0, w, p, 4), 2);
	params[1] = NULL;  /* an argument the program left NULL: skipped */
	assert_int_equal(gc_kernel_words(k, params, NULL, 0, w, p, 4), 2);
	assert_int_equal(w[1], 0xccc);
	assert_int_equal(p[1], 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(words_and_forget),
		cmocka_unit_test(driver_cannot_answer_now),
		cmocka_unit_test(words_in_batches_and_from_extra),
	};
	return cmocka_run_group_tests_name("kernel_args", tests, NULL, NULL);
}
