/* Frames to source lines with elfutils' libdwfl, offline: each module named in a log is
 * opened once (from its path, with separate debug info found the standard way) and kept
 * for every frame that names it, and each module+offset is looked up once. A module that
 * is missing, or has no line info, gives what it can (a symbol) and the frame is shown as
 * module+offset. The log names no build id, so a module rebuilt since the run resolves to
 * the new build's lines. */
#include "report/report.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct sym_module {
	char *path;
	Dwfl *dwfl;        /* NULL when the module could not be loaded */
	Dwfl_Module *mod;
	Dwarf_Addr bias;   /* added to an ELF address to get a Dwfl address */
} sym_module;

/* What one module address resolved to. Frames repeat across entries (the same callers,
 * the same libc frames), and a DWARF lookup costs far more than this table. */
typedef struct sym_hit {
	size_t module;     /* index in v + 1; 0 for an empty slot */
	uint64_t offset;
	rp_loc loc;        /* owned here; frames get copies */
} sym_hit;

struct rp_symbolizer {
	sym_module *v;
	size_t n, cap;
	sym_hit *hits;     /* open addressing, kept under half full */
	size_t n_hits, cap_hits;
};

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = NULL,  /* the default: beside the file, .debug/, /usr/lib/debug */
};

rp_symbolizer *rp_sym_new(void)
{
	return rp_xcalloc(1, sizeof(rp_symbolizer));
}

void rp_sym_free(rp_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].dwfl)
			dwfl_end(s->v[i].dwfl);
		free(s->v[i].path);
	}
	free(s->v);
	for (size_t i = 0; i < s->cap_hits; i++) {
		free(s->hits[i].loc.file);
		free(s->hits[i].loc.function);
	}
	free(s->hits);
	free(s);
}

/* One Dwfl per module, reported at base 0: a PIE or shared object then sits at its own ELF
 * addresses, which is what a frame's offset is (the bias says if it does not). */
static void load(sym_module *m)
{
	/* Only a regular file: a log names any path it likes, and libdw would block opening a
	 * FIFO or read a device without end. Looked at without blocking, before libdw opens it. */
	struct stat st;
	int fd = open(m->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	bool regular = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	if (fd >= 0)
		close(fd);
	if (!regular)
		return;
	m->dwfl = dwfl_begin(&offline_callbacks);
	if (!m->dwfl)
		return;
	dwfl_report_begin(m->dwfl);
	m->mod = dwfl_report_elf(m->dwfl, m->path, m->path, -1, 0, false);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod || !dwfl_module_getelf(m->mod, &m->bias)) {
		dwfl_end(m->dwfl);
		m->dwfl = NULL;
		m->mod = NULL;
	}
}

static size_t module_for(rp_symbolizer *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].path, path) == 0)
			return i;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 8;
		s->v = rp_xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	sym_module *m = &s->v[s->n++];
	memset(m, 0, sizeof(*m));
	m->path = rp_xstrdup(path);
	/* "?" is what the writer logs for an address no module maps. */
	if (strcmp(path, "?") != 0 && path[0])
		load(m);
	return s->n - 1;
}

static char *name_copy(const char *name)
{
	char *d = rp_demangle(name);
	char *out = d ? d : rp_xstrdup(name);
	rp_make_utf8(out);
	return out;
}

/* The compilation unit holding pc. */
static Dwarf_Die *cu_at(Dwfl_Module *mod, Dwarf_Addr pc, Dwarf_Addr *bias)
{
	/* Only a unit whose own ranges hold pc: past the end of a unit's code (the C runtime's
	 * _start, linked after it without debug info) the unit's last line is not pc's. */
	Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, bias);
	if (cu && dwarf_haspc(cu, pc - *bias) > 0)
		return cu;
	/* libdw before 0.191 finds units only through .debug_aranges, which clang does not
	 * write: then each unit's own ranges are asked. */
	for (cu = NULL; (cu = dwfl_module_nextcu(mod, cu, bias)) != NULL;)
		if (dwarf_haspc(cu, pc - *bias) > 0)
			return cu;
	return NULL;
}

/* The source file and line of addr (a DWARF address of the unit) into f->loc. */
static void source_line(Dwarf_Die *cu, Dwarf_Addr addr, rp_frame *f)
{
	Dwarf_Line *line = dwarf_getsrc_die(cu, addr);
	const char *src = line ? dwarf_linesrc(line, NULL, NULL) : NULL;
	int lineno = 0;
	if (!src || dwarf_lineno(line, &lineno) != 0 || lineno <= 0)
		return;
	/* A relative name is relative to the compilation's directory, when that is known (a
	 * build with -fdebug-prefix-map may record a relative one: then the name stays). */
	Dwarf_Attribute at;
	const char *dir = NULL;
	if (src[0] != '/')
		dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &at));
	if (dir && dir[0] == '/') {
		if (asprintf(&f->loc.file, "%s/%s", dir, src) < 0)
			f->loc.file = NULL;
	} else {
		f->loc.file = rp_xstrdup(src);
	}
	if (f->loc.file) {
		rp_make_utf8(f->loc.file);
		f->loc.line = (unsigned)lineno;
	}
}

/* The function addr is in: the innermost inlined subroutine or subprogram, so that the
 * name matches the line (which, in inlined code, is the inlined function's). */
static char *dwarf_function(Dwarf_Die *cu, Dwarf_Addr addr)
{
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(cu, addr, &scopes);
	char *name = NULL;
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		Dwarf_Attribute at;
		const char *s;
		/* The linkage name demangles to the qualified C++ name with its parameters. */
		if (dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &at) &&
		    (s = dwarf_formstring(&at)) && (name = rp_demangle(s)) != NULL)
			break;
		if (dwarf_attr_integrate(&scopes[i], DW_AT_name, &at) && (s = dwarf_formstring(&at)))
			name = rp_xstrdup(s);
		break;
	}
	if (n > 0)
		free(scopes);
	if (name)
		rp_make_utf8(name);
	return name;
}

/* What the module says of a return address at offset. */
static void resolve(const sym_module *m, uint64_t offset, rp_loc *loc)
{
	/* A return address: the call is the instruction before it. */
	Dwarf_Addr pc = offset + m->bias - (offset > 0), bias = 0;
	rp_frame f = {.offset = offset};
	Dwarf_Die *cu = cu_at(m->mod, pc, &bias);
	if (cu) {
		source_line(cu, pc - bias, &f);
		f.loc.function = dwarf_function(cu, pc - bias);
	}
	/* No DWARF for it: the ELF symbol table still names the function. */
	if (!f.loc.function) {
		const char *sym = dwfl_module_addrname(m->mod, pc);
		if (sym)
			f.loc.function = name_copy(sym);
	}
	*loc = f.loc;
}

static void grow_hits(rp_symbolizer *s);

/* Where a key's probe starts: offsets differ in their low bits, so they are mixed. */
static size_t hit_start(size_t module, uint64_t offset, size_t mask)
{
	return (size_t)((offset ^ (module * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull >>
	                17) & mask;
}

static const rp_loc *cached(rp_symbolizer *s, size_t module, uint64_t offset)
{
	if (2 * (s->n_hits + 1) > s->cap_hits)
		grow_hits(s);
	size_t mask = s->cap_hits - 1;
	size_t i = hit_start(module, offset, mask);
	for (; s->hits[i].module; i = (i + 1) & mask)
		if (s->hits[i].module == module + 1 && s->hits[i].offset == offset)
			return &s->hits[i].loc;
	s->hits[i].module = module + 1;
	s->hits[i].offset = offset;
	resolve(&s->v[module], offset, &s->hits[i].loc);
	s->n_hits++;
	return &s->hits[i].loc;
}

static void grow_hits(rp_symbolizer *s)
{
	sym_hit *old = s->hits;
	size_t old_cap = s->cap_hits;
	s->cap_hits = old_cap ? 2 * old_cap : 256;
	s->hits = rp_xcalloc(s->cap_hits, sizeof(*s->hits));
	s->n_hits = 0;
	size_t mask = s->cap_hits - 1;
	for (size_t k = 0; k < old_cap; k++) {
		if (!old[k].module)
			continue;
		size_t i = hit_start(old[k].module - 1, old[k].offset, mask);
		while (s->hits[i].module)
			i = (i + 1) & mask;
		s->hits[i] = old[k];
		s->n_hits++;
	}
	free(old);
}

void rp_sym_frame(rp_symbolizer *s, rp_frame *f)
{
	if (f->loc.file || f->loc.function)
		return;
	size_t module = module_for(s, f->module);
	if (s->v[module].mod) {
		const rp_loc *loc = cached(s, module, f->offset);
		f->loc.file = loc->file ? rp_xstrdup(loc->file) : NULL;
		f->loc.line = loc->line;
		f->loc.function = loc->function ? rp_xstrdup(loc->function) : NULL;
	}
	if (!f->loc.function && f->symbol)
		f->loc.function = name_copy(f->symbol);
}

void rp_sym_frames(rp_symbolizer *s, rp_frames *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		rp_sym_frame(s, &fs->v[i]);
}

void rp_sym_record(rp_symbolizer *s, rp_record *r)
{
	rp_sym_frames(s, &r->backtrace);
	if (r->has_alloc) {
		rp_sym_frames(s, &r->alloc.backtrace);
		rp_sym_frames(s, &r->alloc.free_backtrace);
	}
	for (size_t i = 0; i < r->n_leaks; i++)
		rp_sym_frames(s, &r->leaks[i].backtrace);
}

const char *rp_frame_symbol(const rp_frame *f)
{
	return f->loc.function ? f->loc.function : f->symbol;
}

char *rp_frame_str(const rp_frame *f)
{
	const char *fn = rp_frame_symbol(f);
	char *out;
	int n;
	if (f->loc.file && fn)
		n = asprintf(&out, "%s:%u in %s", f->loc.file, f->loc.line, fn);
	else if (f->loc.file)
		n = asprintf(&out, "%s:%u", f->loc.file, f->loc.line);
	else if (fn)
		n = asprintf(&out, "%s+0x%" PRIx64 " (%s)", f->module, f->offset, fn);
	else
		n = asprintf(&out, "%s+0x%" PRIx64, f->module, f->offset);
	if (n < 0) {
		fputs("graphcheck-report: out of memory\n", stderr);
		exit(RP_EXIT_USAGE);
	}
	return out;
}

/* The system's own libraries (libc's exit, the loader) rarely say where a problem is. */
static bool system_module(const char *m)
{
	static const char *const dirs[] = {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (strncmp(m, dirs[i], strlen(dirs[i])) == 0)
			return true;
	return false;
}

const rp_frame *rp_first_site(const rp_frames *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		if (fs->v[i].loc.file && !system_module(fs->v[i].module))
			return &fs->v[i];
	for (size_t i = 0; i < fs->n; i++)
		if (!system_module(fs->v[i].module))
			return &fs->v[i];
	return fs->n ? &fs->v[0] : NULL;
}

const rp_frame *rp_record_site(const rp_record *r)
{
	/* A leak's call is exit(): where the largest leaked group was allocated says more. */
	if (r->rule == GC_RULE_LEAK_AT_EXIT && r->n_leaks) {
		if (r->leaks[0].py_backtrace.n)
			return &r->leaks[0].py_backtrace.v[0];
		if (r->leaks[0].backtrace.n)
			return rp_first_site(&r->leaks[0].backtrace);
	}
	if (r->py_backtrace.n)
		return &r->py_backtrace.v[0];
	return rp_first_site(&r->backtrace);
}
