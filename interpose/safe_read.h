/* Reading the program's memory where it may not be mapped: a struct a wrapper's caller passed
 * to a call the driver refused (the driver may refuse before it reads the struct, when it has
 * no context or is not initialized, so the pointer may be stale or short), or arrays a call
 * is given that graphcheck reads before the driver has (a batch copy's). */
#ifndef GC_SAFE_READ_H
#define GC_SAFE_READ_H

#include <stddef.h>

/* Copies n bytes at p into copy without faulting, errno kept: copy when all n were read,
 * NULL when p is NULL, unmapped in part, n is 0 or past PIPE_BUF, or neither a pipe nor
 * process_vm_readv could do it. */
void *gc_safe_read(const void *p, void *copy, size_t n);

/* A range of the program's memory. */
typedef struct gc_span {
	const void *p;
	size_t n;
} gc_span;

/* Whether every byte of the count spans can be read without faulting (a byte of each page
 * tried, through one pipe: one system call a page, three more), errno kept: 0 when a span is
 * NULL, empty or wraps, a page is unmapped or unreadable, or neither a pipe nor
 * process_vm_readv could tell. For arrays the driver has not checked yet, read in place
 * after: no copy, whatever their size. */
int gc_safe_readable(const gc_span *spans, size_t count);

#endif
