#include "interpose/scratch.h"

#include <pthread.h>
#include <stdlib.h>

static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int have_key;
__thread __attribute__((tls_model("initial-exec"))) gc_scratch *gc_scratch_mine;

/* At thread exit (the key's destructor, on that thread). */
static void release(void *p)
{
	gc_scratch *s = p;
	gc_scratch_mine = NULL;
	free(s->record.p);
	free(s->line.p);
	free(s->supp_entry.p);
	free(s->supp_src.p);
	free(s);
}

static void make_key(void)
{
	have_key = pthread_key_create(&key, release) == 0;
}

gc_scratch *gc_scratch_first(void)
{
	pthread_once(&key_once, make_key);
	gc_scratch *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (have_key)
		pthread_setspecific(key, s);
	gc_scratch_mine = s;
	return s;
}

#define LINE_FIRST 4096

gc_buf gc_line_buf(gc_line *l)
{
	if (!l->p) {
		l->p = malloc(LINE_FIRST);
		l->cap = l->p ? LINE_FIRST : 0;
	}
	if (l->p)
		l->p[0] = '\0';
	return (gc_buf){l->p, 0, l->cap, 0};
}

int gc_line_grow(gc_line *l)
{
	if (!l->p || l->cap >= GC_LINE_MAX)
		return 0;
	char *p = realloc(l->p, l->cap * 2);
	if (!p)
		return 0;
	l->p = p;
	l->cap *= 2;
	return 1;
}
