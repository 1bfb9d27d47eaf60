/* Kernel arguments as words: the parameter layout of each kernel, asked of the driver once per
 * handle (cuFuncGetParamInfo, or cuKernelGetParamInfo when the handle is a CUkernel; CUDA
 * 12.4+), and the pointer-sized arguments of a launch read through it. Only arguments of
 * exactly 8 bytes are words: a struct argument may carry slots the kernel never reads, and
 * PyTorch's multi_tensor_apply passes one whose unused slots hold pointers from earlier
 * launches, freed since (H200: capturable AdamW, tests/gpu/logs/uses-2026-12-03/), which
 * read as uses of freed memory though the kernel never touches them. */
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
/* A module or library was unloaded: its handles may be given to other kernels, so every
 * layout known so far is asked again. */
void gc_kernel_args_forget(void);
/* pthread_atfork handlers for the table's lock. */
void gc_kernel_args_fork_prepare(void);
void gc_kernel_args_fork_parent(void);
void gc_kernel_args_fork_child(void);

/* The kernel's name as the driver gives it (mangled), or "?". */
const char *gc_kernel_name(const gc_kernel *k);

/* Up to max of the launch's pointer-sized arguments, from the `from`th on (0, then the count
 * returned so far, ...): out[i] the value and param[i] its argument's index. Returns how many were
 * written; 0 at the end. kernel_params as cuLaunchKernel takes it, or extra
 * (CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE) when kernel_params is NULL. */
size_t gc_kernel_words(const gc_kernel *k, void **kernel_params, void **extra, size_t from,
                       uint64_t *out, uint16_t *param, size_t max);

#endif
