#define __CUDA_API_VERSION_INTERNAL 1
#include "interpose/kernel_args.h"

#include <cuda.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A kernel's layout: its arguments' (offset, size), in order, and which of them are words
 * (exactly 8 bytes): a launch reads only those, without looking at the rest. */
struct gc_kernel {
	uint32_t nparams, nwords;
	const char *name;
	uint16_t *word;  /* nwords argument indices, in the same block after p */
	struct { uint32_t offset, size; } p[];
};

/* Handles seen so far, open addressing, published with a release store of the key after its
 * kernel is filled in: readers take no lock, and a published entry never changes. The key is
 * the handle with the module generation in its top 16 bits: an unloaded module's handles may
 * come back for other kernels, so an unload (gc_kernel_args_forget) makes every older entry
 * a miss. Full (16384 kernels, stale ones included): new handles go unchecked, never slower. */
#define KERNELS 16384
#define NO_LAYOUT ((gc_kernel *)1)  /* asked, and the driver could not say */
static struct { uint64_t key; gc_kernel *k; } table[KERNELS];
static pthread_mutex_t insert_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t generation;

typedef CUresult (*param_info_fn)(void *h, size_t i, size_t *off, size_t *size);
typedef CUresult (*name_fn)(const char **name, void *h);
static param_info_fn func_info, kernel_info;
static name_fn func_name, kernel_name;

void gc_kernel_args_init(void *(*lookup)(const char *spelling))
{
	func_info = (param_info_fn)lookup("cuFuncGetParamInfo");
	kernel_info = (param_info_fn)lookup("cuKernelGetParamInfo");
	func_name = (name_fn)lookup("cuFuncGetName");
	kernel_name = (name_fn)lookup("cuKernelGetName");
}

/* The driver said what parameter 0 is, or that there is none. */
static int answered(CUresult r)
{
	return r == CUDA_SUCCESS || r == CUDA_ERROR_INVALID_VALUE;
}

/* The driver could not answer on this thread now (no context yet, or none left), and may
 * later: anything else it says about a handle is its last word. */
static int not_now(CUresult r)
{
	return r == CUDA_ERROR_INVALID_CONTEXT || r == CUDA_ERROR_NOT_INITIALIZED ||
	       r == CUDA_ERROR_DEINITIALIZED || r == CUDA_ERROR_CONTEXT_IS_DESTROYED;
}

/* Asks the driver: the handle is a CUfunction, or (the runtime may pass one) a CUkernel.
 * NO_LAYOUT when neither kind knows it, or the driver keeps no layout for it (a kernel built
 * without one: NOT_SUPPORTED), kept so that it is asked once; NULL when the driver could not
 * answer now (no context on this thread, ...): not kept, asked again at the next launch. */
static gc_kernel *ask(uint64_t func)
{
	void *h = (void *)(uintptr_t)func;
	param_info_fn info = NULL;
	name_fn name = NULL;
	size_t off, size, n = 0;
	CUresult rf = func_info ? func_info(h, 0, &off, &size) : CUDA_ERROR_NOT_FOUND;
	CUresult rk = CUDA_ERROR_NOT_FOUND;
	if (answered(rf))
		info = func_info, name = func_name;
	else if (kernel_info && answered(rk = kernel_info(h, 0, &off, &size)))
		info = kernel_info, name = kernel_name;
	if (!info)  /* asking at every launch costs two driver calls and a lock each time */
		return not_now(rf) || not_now(rk) ? NULL : NO_LAYOUT;
	while (n < 0xffff && info(h, n, &off, &size) == CUDA_SUCCESS)
		n++;
	gc_kernel *k = malloc(sizeof *k + n * (sizeof k->p[0] + sizeof k->word[0]));
	if (!k)
		return NO_LAYOUT;
	k->nparams = (uint32_t)n;
	k->nwords = 0;
	k->word = (uint16_t *)(k->p + n);
	for (size_t i = 0; i < n; i++) {
		info(h, i, &off, &size);
		k->p[i].offset = (uint32_t)off;
		k->p[i].size = (uint32_t)size;
		if (size == 8)
			k->word[k->nwords++] = (uint16_t)i;
	}
	/* A copy: the driver's string goes with its module. */
	const char *s = NULL;
	k->name = name && name(&s, h) == CUDA_SUCCESS && s ? strdup(s) : NULL;
	if (!k->name)
		k->name = "?";
	return k;
}

static size_t slot_of(uint64_t func)
{
	return (size_t)((func * 0x9E3779B97F4A7C15ull) >> 50) & (KERNELS - 1);
}

/* The thread's last answer: a loop launches the same kernel again and again. */
static __thread __attribute__((tls_model("initial-exec"))) struct {
	uint64_t key;
	const gc_kernel *k;
} last;

static const gc_kernel *lookup(uint64_t func, uint64_t key);

/* Not the thread's last kernel: looked up, and kept as its last. Out of line, so that the
 * hit in gc_kernel_of saves no registers. */
static __attribute__((noinline)) const gc_kernel *lookup_and_keep(uint64_t func, uint64_t key)
{
	const gc_kernel *k = lookup(func, key);
	if (k) {  /* a kernel the driver could not say is asked again next time */
		last.key = key;
		last.k = k;
	}
	return k;
}

const gc_kernel *gc_kernel_of(uint64_t func)
{
	if (!func)
		return NULL;
	uint64_t key = (func & 0xffffffffffffull) |
	               __atomic_load_n(&generation, __ATOMIC_ACQUIRE) << 48;
	if (key == last.key)
		return last.k;
	return lookup_and_keep(func, key);
}

static const gc_kernel *lookup(uint64_t func, uint64_t key)
{
	size_t i = slot_of(key);
	for (size_t probes = 0; probes < KERNELS; probes++, i = (i + 1) & (KERNELS - 1)) {
		uint64_t f = __atomic_load_n(&table[i].key, __ATOMIC_ACQUIRE);
		if (f == key) {
			gc_kernel *k = table[i].k;
			return k == NO_LAYOUT ? NULL : k;
		}
		if (f)
			continue;
		/* Not known yet: ask under the lock (another thread may be asking too). */
		pthread_mutex_lock(&insert_lock);
		gc_kernel *k = NULL;
		if (!table[i].key && (k = ask(func))) {
			table[i].k = k;
			__atomic_store_n(&table[i].key, key, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&insert_lock);
		if (!k && !__atomic_load_n(&table[i].key, __ATOMIC_ACQUIRE))
			return NULL;  /* the driver could not answer now: unchecked, asked next time */
		i = (i + KERNELS - 1) & (KERNELS - 1);  /* look at this slot again */
	}
	return NULL;
}

void gc_kernel_args_forget(void)
{
	__atomic_add_fetch(&generation, 1, __ATOMIC_ACQ_REL);
}

void gc_kernel_args_fork_prepare(void)
{
	pthread_mutex_lock(&insert_lock);
}

void gc_kernel_args_fork_parent(void)
{
	pthread_mutex_unlock(&insert_lock);
}

void gc_kernel_args_fork_child(void)
{
	pthread_mutex_init(&insert_lock, NULL);
}

const char *gc_kernel_name(const gc_kernel *k)
{
	return k ? k->name : "?";
}

/* The argument buffer of a launch made with `extra` instead of kernel_params. */
static const char *extra_buffer(void **extra, size_t *size)
{
	const char *buf = NULL;
	*size = 0;
	for (size_t i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END && i < 16; i += 2) {
		if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			buf = extra[i + 1];
		else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1])
			*size = *(size_t *)extra[i + 1];
	}
	return buf;
}

/* A launch made with `extra`, or read from the `from`th word on: out of line, so that the
 * common launch's pass below keeps to a few registers. */
static __attribute__((noinline)) size_t words_general(const gc_kernel *k, void **kernel_params,
                                                      void **extra, size_t from, uint64_t *out,
                                                      uint16_t *param, size_t max)
{
	size_t buf_size = 0, seen = 0, n = 0;
	if (!k)  /* first: a kernel whose layout is unknown has nothing of `extra` read */
		return 0;
	const char *buf = kernel_params ? NULL : extra_buffer(extra, &buf_size);
	if (!kernel_params && !buf)
		return 0;
	for (uint32_t j = 0; j < k->nwords && n < max; j++) {
		uint16_t i = k->word[j];
		const char *v = kernel_params ? kernel_params[i] : buf + k->p[i].offset;
		if (!v || (!kernel_params && k->p[i].offset + (size_t)8 > buf_size) || seen++ < from)
			continue;
		memcpy(&out[n], v, 8);
		param[n++] = i;
	}
	return n;
}

size_t gc_kernel_words(const gc_kernel *k, void **kernel_params, void **extra, size_t from,
                       uint64_t *out, uint16_t *param, size_t max)
{
	if (!k || !kernel_params || from || k->nwords > max)
		return words_general(k, kernel_params, extra, from, out, param, max);
	/* The common launch: one pass. The layout read into locals once (out may alias it,
	 * as far as the compiler knows). */
	const uint16_t *word = k->word;
	uint32_t nwords = k->nwords;
	size_t n = 0;
	for (uint32_t j = 0; j < nwords; j++) {
		uint16_t i = word[j];
		const void *v = kernel_params[i];
		if (v) {
			memcpy(&out[n], v, 8);
			param[n++] = i;
		}
	}
	return n;
}
