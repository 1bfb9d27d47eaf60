/* Kernel arguments as words: the parameter layout of each kernel, asked of the driver once per
 * handle (cuFuncGetParamInfo, or cuKernelGetParamInfo when the handle is a CUkernel; CUDA
 * 12.4+), and the 8-byte words of a launch's arguments read through it. A word is checked
 * against the ledger's dead memory whatever it holds: a pointer inside a struct argument (a
 * tensor view's data pointer) counts like a pointer argument. Arguments under 8 bytes
 * cannot hold a device address and are skipped. */
#ifndef GC_KERNEL_ARGS_H
#define GC_KERNEL_ARGS_H

#include <stddef.h>
#include <stdint.h>

typedef struct gc_kernel gc_kernel;

/* Finds the driver's functions; before it every kernel's layout is unknown. */
void gc_kernel_args_init(void *(*lookup)(const char *spelling));
/* The kernel behind a launch's function handle, its layout asked once and kept; NULL when
 * the driver cannot say (an older driver, or a handle it refuses): its launches go
 * unchecked. Thread-safe; never allocates once the handle is known. */
const gc_kernel *gc_kernel_of(uint64_t func);
/* The kernel's name as the driver gives it (mangled), or "?". */
const char *gc_kernel_name(const gc_kernel *k);

/* Up to max of the launch's argument words, from word `from` on (0, then the count returned
 * so far, ...): out[i] the word and param[i] its argument's index. Returns how many were
 * written; 0 at the end. kernel_params as cuLaunchKernel takes it, or extra
 * (CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE) when kernel_params is NULL. */
size_t gc_kernel_words(const gc_kernel *k, void **kernel_params, void **extra, size_t from,
                       uint64_t *out, uint16_t *param, size_t max);

#endif
