#include "interpose/pyframes.h"

#include "interpose/pystack.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* CPython's C API as graphcheck calls it: objects are opaque. Every function here exists
 * in CPython 3.10 to 3.13 (PyThreadState_GetUnchecked is 3.13's name for 3.10-3.12's
 * _PyThreadState_UncheckedGet). */
typedef void pyobj;
static struct {
	int (*gil_check)(void);              /* PyGILState_Check */
	int (*initialized)(void);            /* Py_IsInitialized */
	pyobj *(*this_thread)(void);         /* PyGILState_GetThisThreadState */
	pyobj *(*current)(void);             /* the thread state holding the GIL, or NULL */
	pyobj *(*thread_frame)(pyobj *);     /* PyThreadState_GetFrame: new reference */
	pyobj *(*frame_back)(pyobj *);       /* PyFrame_GetBack: new reference */
	pyobj *(*frame_code)(pyobj *);       /* PyFrame_GetCode: new reference */
	int (*frame_line)(pyobj *);          /* PyFrame_GetLineNumber */
	pyobj *(*getattr)(pyobj *, const char *);  /* PyObject_GetAttrString: new reference */
	const char *(*utf8)(pyobj *);        /* PyUnicode_AsUTF8: the object's own buffer */
	void (*decref)(pyobj *);             /* Py_DecRef */
	void (*err_fetch)(pyobj **, pyobj **, pyobj **);
	void (*err_restore)(pyobj *, pyobj *, pyobj *);
	void (*err_clear)(void);
	int (*gc_disable)(void);             /* PyGC_Disable: the previous state */
	int (*gc_enable)(void);
} py;
static int have_api;       /* every function above but `current` was found */
static int no_qualname;    /* co_qualname is 3.11+: before, co_name */
static int py_mode;        /* GC_PY_AUTO or GC_PY_API (GC_PY_OFF looks nothing up) */
static int py_ran;         /* Py_IsInitialized said 1 here once (start-up or a capture): atomic */

static void *sym(const char *name)
{
	return dlsym(RTLD_DEFAULT, name);
}

void gc_py_init(int mode)
{
	/* Looked up and asked whatever the mode (gc_py_interpreter uses it at exit, where, after
	 * Py_FinalizeEx, it says 0). */
	*(void **)&py.initialized = sym("Py_IsInitialized");
	if (py.initialized && py.initialized())
		__atomic_store_n(&py_ran, 1, __ATOMIC_RELAXED);
	py_mode = mode;
	if (mode == GC_PY_OFF)
		return;  /* as for a program without Python: no frame is ever read */
	*(void **)&py.gil_check = sym("PyGILState_Check");
	if (!py.gil_check)
		return;  /* no interpreter: nothing else is looked up, nothing is paid */
	*(void **)&py.this_thread = sym("PyGILState_GetThisThreadState");
	*(void **)&py.current = sym("PyThreadState_GetUnchecked");
	if (!py.current)
		*(void **)&py.current = sym("_PyThreadState_UncheckedGet");
	*(void **)&py.thread_frame = sym("PyThreadState_GetFrame");
	*(void **)&py.frame_back = sym("PyFrame_GetBack");
	*(void **)&py.frame_code = sym("PyFrame_GetCode");
	*(void **)&py.frame_line = sym("PyFrame_GetLineNumber");
	*(void **)&py.getattr = sym("PyObject_GetAttrString");
	*(void **)&py.utf8 = sym("PyUnicode_AsUTF8");
	*(void **)&py.decref = sym("Py_DecRef");
	*(void **)&py.err_fetch = sym("PyErr_Fetch");
	*(void **)&py.err_restore = sym("PyErr_Restore");
	*(void **)&py.err_clear = sym("PyErr_Clear");
	*(void **)&py.gc_disable = sym("PyGC_Disable");
	*(void **)&py.gc_enable = sym("PyGC_Enable");
	gc_pystack_init();
	have_api = py.initialized && py.this_thread && py.thread_frame && py.frame_back &&
	           py.frame_code && py.frame_line && py.getattr && py.utf8 && py.decref &&
	           py.err_fetch && py.err_restore && py.err_clear && py.gc_disable && py.gc_enable;
}

int gc_py_interpreter(void)
{
	/* The symbol alone is not Python running: a C program may link a library that links
	 * libpython and never start it. */
	int (*initialized)(void) = py.initialized;
	if (!initialized)  /* an interpreter loaded since start-up (dlopen) */
		*(void **)&initialized = sym("Py_IsInitialized");
	return initialized && (__atomic_load_n(&py_ran, __ATOMIC_RELAXED) || initialized());
}

int gc_py_present(void)
{
	return py.gil_check != NULL;
}

const char *gc_py_note(gc_py_state st)
{
	switch (st) {
	case GC_PY_NO_GIL:
		return "GIL not held by this thread (the library making this call released it) "
		       "and this interpreter's frames cannot be read as memory (CPython 3.10 to "
		       "3.13): native frames only";
	case GC_PY_NO_API:
		return "this interpreter lacks the C API graphcheck reads frames with (CPython "
		       "3.10 or later): native frames only";
	default:
		return NULL;
	}
}

/* ---- the table: interned (file, line, function), named by tagged ids ---------------- */

#define TAG ((uintptr_t)0xfffeu << 48)
#define MAX_FRAMES (1u << 16)
#define INDEX_SLOTS (MAX_FRAMES * 2)
#define TEXT_MAX GC_PY_TEXT_MAX /* bytes of a file name or function kept */
#define ARENA_CHUNK (64u << 10)

struct pyf {
	uint64_t hash;
	const char *file, *function;
	int line;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pyf *table;      /* table[0] unused: id 0 means none */
static uint32_t n_table = 1;
static uint32_t *index_slots;
static char *arena;            /* strings, never freed or moved: pointers stay valid */
static size_t arena_used, arena_cap;

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h * 1099511628211ull;
}

/* A copy in the arena, cut at TEXT_MAX bytes (not inside a UTF-8 sequence). */
static const char *keep(const char *s)
{
	size_t n = strlen(s);
	if (n > TEXT_MAX) {
		n = TEXT_MAX;
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	if (!arena || arena_used + n + 1 > arena_cap) {
		arena = malloc(ARENA_CHUNK);  /* the old chunk's strings stay where they are */
		if (!arena)
			return NULL;
		arena_used = 0;
		arena_cap = ARENA_CHUNK;
	}
	char *p = arena + arena_used;
	memcpy(p, s, n);
	p[n] = '\0';
	arena_used += n + 1;
	return p;
}

static int same_text(const char *kept, const char *s)
{
	size_t n = strlen(kept);
	return strncmp(kept, s, n) == 0 && (s[n] == '\0' || n >= TEXT_MAX - 4);
}

/* The id of (file, line, function), 0 when the table is full or memory is short. */
static uint32_t intern(const char *file, const char *function, int line)
{
	uint64_t h = hash_str(hash_str(1469598103934665603ull ^ (uint64_t)(unsigned)line, file),
	                      function);
	uint32_t id = 0;
	pthread_mutex_lock(&lock);
	if (!table) {
		table = calloc(MAX_FRAMES, sizeof(*table));
		index_slots = calloc(INDEX_SLOTS, sizeof(*index_slots));
		if (!table || !index_slots) {
			free(table);
			free(index_slots);
			table = NULL;
			index_slots = NULL;
		}
	}
	for (uint32_t slot = (uint32_t)h & (INDEX_SLOTS - 1); table;
	     slot = (slot + 1) & (INDEX_SLOTS - 1)) {
		uint32_t cand = index_slots[slot];
		if (!cand) {
			const char *f = n_table < MAX_FRAMES ? keep(file) : NULL;
			const char *fn = f ? keep(function) : NULL;
			if (fn) {
				id = n_table++;
				table[id] = (struct pyf){h, f, fn, line};
				index_slots[slot] = id;
			}
			break;
		}
		const struct pyf *e = &table[cand];
		if (e->hash == h && e->line == line && same_text(e->file, file) &&
		    same_text(e->function, function)) {
			id = cand;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return id;
}

int gc_py_frame_get(const void *f, gc_py_frame *out)
{
	if (!gc_py_is_frame(f))
		return 0;
	uint32_t id = (uint32_t)((uintptr_t)f & 0xffffffffu);
	int ok = 0;
	pthread_mutex_lock(&lock);
	if (id && id < n_table) {
		*out = (gc_py_frame){table[id].file, table[id].function, table[id].line};
		ok = 1;
	}
	pthread_mutex_unlock(&lock);
	return ok;
}

int gc_py_leading(void *const *frames, int n)
{
	int k = 0;
	while (k < n && gc_py_is_frame(frames[k]))
		k++;
	return k;
}

/* ---- reading the stack ----------------------------------------------------------------- */

static pyobj *attr(pyobj *o, const char *name)
{
	pyobj *v = py.getattr(o, name);
	if (!v)
		py.err_clear();
	return v;
}

static const char *text(pyobj *s)
{
	const char *t = s ? py.utf8(s) : NULL;
	if (s && !t)
		py.err_clear();  /* a name with lone surrogates has no UTF-8 */
	return t ? t : "?";
}

/* The tagged id of a frame (file, function, line) whose names are the string objects
 * file_obj and name_obj, through the thread's memo. */
static void *memo_id(gc_py_cache *c, const void *file_obj, const void *name_obj,
                     const char *ft, const char *nt, int line)
{
	uintptr_t k = ((uintptr_t)file_obj >> 4) ^ ((uintptr_t)name_obj >> 3) ^ (uintptr_t)line * 31u;
	unsigned slot = (unsigned)(k % GC_PY_CACHE);
	uint32_t id = c->e[slot].id;
	/* A hit needs the same objects and line, and the same text: an object freed since
	 * may have left its address to another. */
	if (!(id && c->e[slot].file_obj == file_obj && c->e[slot].func_obj == name_obj &&
	      c->e[slot].line == line && same_text(table[id].file, ft) &&
	      same_text(table[id].function, nt))) {
		id = intern(ft, nt, line);
		c->e[slot].file_obj = file_obj;
		c->e[slot].func_obj = name_obj;
		c->e[slot].line = line;
		c->e[slot].id = id;
	}
	return id ? (void *)(TAG | id) : NULL;
}

/* The tagged id of one frame object, read through the API. */
static void *frame_id(gc_py_cache *c, pyobj *frame)
{
	pyobj *code = py.frame_code(frame);
	if (!code)
		return NULL;
	int line = py.frame_line(frame);
	pyobj *file = attr(code, "co_filename");
	pyobj *name = no_qualname ? NULL : attr(code, "co_qualname");
	if (!name) {
		no_qualname = 1;
		name = attr(code, "co_name");
	}
	void *id = memo_id(c, file, name, text(file), text(name), line);
	if (file)
		py.decref(file);
	if (name)
		py.decref(name);
	py.decref(code);
	return id;
}

/* gc_pystack_walk's frames, as tagged ids. */
struct raw_out {
	gc_py_cache *c;
	void **out;
	int n;
};

static uint32_t raw_frame(void *ctx, const gc_pystack_frame *f)
{
	struct raw_out *o = ctx;
	void *id = f->id ? (void *)(TAG | f->id)
	                 : memo_id(o->c, f->file_obj, f->name_obj, f->file, f->function, f->line);
	if (id)
		o->out[o->n++] = id;
	return (uint32_t)((uintptr_t)id & 0xffffffffu);
}

/* The thread's frames read as memory into o; -1 where they cannot be (pystack.h). */
static int read_memory(gc_py_cache *c, const void *tstate, int max, struct raw_out *o)
{
	o->n = 0;
	return gc_pystack_walk(tstate, max, raw_frame, o, &c->raw_memo, c->text_file,
	                       c->text_function);
}

int gc_py_capture(gc_py_cache *c, void **out, int max, gc_py_state *st)
{
	*st = GC_PY_NONE;
	if (!py.gil_check || !have_api) {
		if (py.gil_check)
			*st = GC_PY_NO_API;
		return 0;
	}
	if (!py.initialized())
		return 0;
	if (!__atomic_load_n(&py_ran, __ATOMIC_RELAXED))
		__atomic_store_n(&py_ran, 1, __ATOMIC_RELAXED);
	pyobj *mine = py.this_thread();
	if (!mine)
		return 0;  /* this thread never ran Python */
	/* Read as memory (pystack.h) whether or not the thread holds the GIL: it is inside our
	 * hook, so its frames hold still, and the reads cost a thirtieth of the API's calls
	 * (callgrind: 335 instructions against 10,166), which build frame objects (3.11+) and
	 * look attributes up. */
	struct raw_out o = {c, out, 0};
	if (py_mode == GC_PY_AUTO && read_memory(c, mine, max, &o) >= 0) {
		*st = GC_PY_FRAMES;
		return o.n;
	}
	/* PyGILState_Check answers 1 while its check is off (sub-interpreters, before the
	 * interpreter is set up): where the holder can be asked, it must be this thread. */
	if (!py.gil_check() || (py.current && py.current() != mine)) {
		/* It released the GIL in a C extension: memory is the only way (api mode tries
		 * it only here). */
		if (py_mode == GC_PY_AUTO || read_memory(c, mine, max, &o) < 0) {
			*st = GC_PY_NO_GIL;
			return 0;
		}
		*st = GC_PY_FRAMES;
		return o.n;
	}
	*st = GC_PY_FRAMES;
	if (max <= 0)
		return 0;
	pyobj *et, *ev, *etb;
	py.err_fetch(&et, &ev, &etb);  /* the program's pending exception, kept aside */
	/* 3.11 makes frame objects on demand, and an allocation may start a collection, which
	 * would run finalizers (Python code) inside this call: no collection here. */
	int gc_was = py.gc_disable();
	int n = 0;
	pyobj *f = py.thread_frame(mine);
	while (f && n < max) {
		void *id = frame_id(c, f);
		if (id)
			out[n++] = id;
		pyobj *back = py.frame_back(f);
		py.decref(f);
		f = back;
	}
	if (f)
		py.decref(f);
	if (gc_was)
		py.gc_enable();
	py.err_restore(et, ev, etb);
	return n;
}

void gc_py_fork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

void gc_py_fork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

void gc_py_fork_child(void)
{
	pthread_mutex_init(&lock, NULL);
}
