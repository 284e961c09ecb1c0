/* Symbolization: function + offset, source line, inline levels, demangled
 * names.  Results are memoised per file address in the cached file. */
#include "internal.h"
#include "gopclntab.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "../base/array.h"

struct memo_entry {
	uint64_t key;               /* file address << 1 | activation */
	struct dbg_location *locs;
	size_t nlocs;
	bool used;
};

struct dbg_memo {
	struct memo_entry *slots;
	size_t cap, n;
};

static void locations_free_inner(struct dbg_location *locs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(locs[i].function);
		free(locs[i].module);
		free(locs[i].file);
	}
}

void dbg_locations_free(struct dbg_location *locs, size_t nlocs)
{
	if (!locs)
		return;
	locations_free_inner(locs, nlocs);
	free(locs);
}

void dbg_memo_destroy(struct dbg_memo *memo)
{
	if (!memo)
		return;
	for (size_t i = 0; i < memo->cap; i++)
		if (memo->slots[i].used)
			dbg_locations_free(memo->slots[i].locs, memo->slots[i].nlocs);
	free(memo->slots);
	free(memo);
}

static struct memo_entry *memo_find(struct dbg_memo *m, uint64_t key)
{
	if (!m || !m->cap)
		return NULL;
	for (size_t i = base_hash_slot(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->slots[i].used)
			return NULL;
		if (m->slots[i].key == key)
			return &m->slots[i];
	}
}

static bool memo_grow(struct dbg_memo *m)
{
	size_t cap = m->cap ? 2 * m->cap : 256;
	struct memo_entry *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return false;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->slots[i].used)
			continue;
		size_t j = base_hash_slot(m->slots[i].key, cap);
		while (slots[j].used)
			j = (j + 1) & (cap - 1);
		slots[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return true;
}

/* Takes ownership of LOCS and returns true; false (out of memory) leaves
 * LOCS with the caller. */
static bool memo_put(struct dbg_file *f, uint64_t key, struct dbg_location *locs, size_t n)
{
	if (!f->memo)
		f->memo = calloc(1, sizeof(*f->memo));
	struct dbg_memo *m = f->memo;
	if (!m || (2 * (m->n + 1) > m->cap && !memo_grow(m)))
		return false;
	size_t i = base_hash_slot(key, m->cap);
	while (m->slots[i].used)
		i = (i + 1) & (m->cap - 1);
	m->slots[i] = (struct memo_entry){ .key = key, .locs = locs, .nlocs = n, .used = true };
	m->n++;
	return true;
}

static struct dbg_location *locations_copy(const struct dbg_location *src, size_t n)
{
	struct dbg_location *dst = calloc(n ? n : 1, sizeof(*dst));
	if (!dst)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		dst[i] = src[i];
		dst[i].function = src[i].function ? strdup(src[i].function) : NULL;
		dst[i].module = src[i].module ? strdup(src[i].module) : NULL;
		dst[i].file = src[i].file ? strdup(src[i].file) : NULL;
	}
	return dst;
}

/* Name of a subprogram or inlined instance: linkage name demangled, else
 * DW_AT_name, following abstract origins and specifications. */
static char *die_function_name(Dwarf_Die *die)
{
	if (dbg_die_is_rust(die)) {
		char *rust = dbg_rust_function_name(die);
		if (rust)
			return rust;
	}
	Dwarf_Attribute attr;
	const char *name = NULL;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		name = dwarf_formstring(&attr);
	if (!name && dwarf_attr_integrate(die, DW_AT_name, &attr))
		name = dwarf_formstring(&attr);
	return name ? dbg_demangle(name) : NULL;
}

static char *call_site_file(struct dbg_file *f, Dwarf_Die *cudie, Dwarf_Die *inlined)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx;
	if (!dwarf_attr(inlined, DW_AT_call_file, &attr) || dwarf_formudata(&attr, &idx) != 0)
		return NULL;
	const char *name = dbg_lines_file(f, cudie, idx);
	return name ? strdup(name) : NULL;
}

static int call_site_line(Dwarf_Die *inlined)
{
	Dwarf_Attribute attr;
	Dwarf_Word line;
	if (!dwarf_attr(inlined, DW_AT_call_line, &attr) || dwarf_formudata(&attr, &line) != 0)
		return 0;
	return (int)line;
}

struct loc_list {
	struct dbg_location *v;
	size_t n, cap;
};

static struct dbg_location *loc_push(struct loc_list *l)
{
	return base_array_push(&l->v, &l->n, &l->cap, sizeof(*l->v));
}

/* Inline levels at ADDR (innermost first), each with the file:line inside
 * it; the real subprogram is left to the caller (symbol table name). */
/* The enclosing subprogram as DWARF names it, and its entry address. */
struct subprogram {
	char *name;
	uint64_t entry;
	bool has_entry;
	bool rust;                  /* named by DWARF, as gdb names Rust functions */
};

#define WALK_DEPTH_MAX 64

static bool is_code_scope(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_lexical_block;
}

/* Whether a walk looking for ADDR goes below a DIE of TAG that HOLDS it or
 * not.  The narrow walk goes where dwarf_getscopes does: into namespaces and
 * into the code scopes holding ADDR.  The wide one goes everywhere: a C++
 * lambda's operator() is a subprogram inside a class inside the function
 * that made it, so a code scope that does not hold ADDR may still hold a type
 * that holds a function that does. */
static bool walk_below(int tag, bool holds, bool wide)
{
	return wide || holds || tag == DW_TAG_namespace || tag == DW_TAG_module;
}

/* Depth-first search below DIE for the innermost code scope holding ADDR;
 * PATH[0..*DEPTH) is the way down. */
static bool walk_to(Dwarf_Die *die, Dwarf_Addr addr, bool wide, Dwarf_Die *path, int *depth,
		    unsigned *budget)
{
	Dwarf_Die child;
	if (*depth == WALK_DEPTH_MAX || dwarf_child(die, &child) != 0)
		return false;
	do {
		if (*budget == 0)
			return false;
		(*budget)--;
		int tag = dwarf_tag(&child);
		bool holds = is_code_scope(tag) && dwarf_haspc(&child, addr) == 1;
		if (!walk_below(tag, holds, wide))
			continue;
		path[(*depth)++] = child;
		if (walk_to(&child, addr, wide, path, depth, budget) || holds)
			return true;
		(*depth)--;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* The scopes at ADDR found by walking down from TOP (the CU, or the
 * subprogram holding ADDR), narrowly, else widely: the way down to the
 * innermost code scope holding it, TOP unless it is the CU, then the CU.
 * 0 when neither walk finds one and TOP is the CU. */
static int scopes_by_walk(Dwarf_Die *top, Dwarf_Die *cudie, Dwarf_Addr addr, Dwarf_Die **scopes)
{
	Dwarf_Die path[WALK_DEPTH_MAX];
	int depth = 0;
	unsigned budget = 1u << 22;
	bool from_cu = dwarf_dieoffset(top) == dwarf_dieoffset(cudie);
	if (!walk_to(top, addr, false, path, &depth, &budget) &&
	    (depth = 0, !walk_to(top, addr, true, path, &depth, &budget))) {
		if (from_cu)
			return 0;
		depth = 0;
	}
	*scopes = malloc((size_t)(depth + 2) * sizeof(**scopes));
	if (!*scopes)
		return 0;
	int n = 0;
	for (int i = depth; i-- > 0;)
		(*scopes)[n++] = path[i];
	if (!from_cu)
		(*scopes)[n++] = *top;
	(*scopes)[n++] = *cudie;
	return n;
}

int dbg_file_scopes(struct dbg_file *f, uint64_t addr, Dwarf_Die **cudie, Dwarf_Addr *dbias,
		    Dwarf_Die **scopes)
{
	*scopes = NULL;
	*cudie = dbg_file_addrdie(f, addr, dbias);
	if (!*cudie)
		return 0;
	Dwarf_Die sub;
	if (dbg_funcmap_find(f, *cudie, addr - *dbias, &sub)) {
		int n = scopes_by_walk(&sub, *cudie, addr - *dbias, scopes);
		if (n > 0)
			return n;
	}
	/* Not dwarf_getscopes: where an inlined instance's abstract origin is
	 * not in the unit it looks in, it returns 0 and loses what it
	 * allocated (libdw 0.188). */
	return scopes_by_walk(*cudie, *cudie, addr - *dbias, scopes);
}

static bool add_inline_levels(struct dbg_file *f, uint64_t addr, struct loc_list *l,
			      char **file, int *line, struct subprogram *sp)
{
	Dwarf_Addr dbias;
	Dwarf_Die *cudie, *scopes;
	int n = dbg_file_scopes(f, addr, &cudie, &dbias, &scopes);
	if (cudie) {
		const char *src = dbg_lines_at(f, cudie, addr - dbias, line);
		*file = src ? strdup(src) : NULL;
	}
	bool ok = true;
	int depth = 0;
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram) {
			sp->name = die_function_name(&scopes[i]);
			sp->rust = dbg_die_is_rust(&scopes[i]);
			Dwarf_Addr entry;
			if (dbg_die_entry(&scopes[i], &entry)) {
				sp->entry = entry + dbias;
				sp->has_entry = true;
			}
			break;
		}
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		struct dbg_location *loc = loc_push(l);
		if (!loc) {
			ok = false;
			break;
		}
		loc->function = die_function_name(&scopes[i]);
		loc->file = *file;
		loc->line = *line;
		loc->inlined = true;
		loc->inline_depth = ++depth;
		*file = call_site_file(f, cudie, &scopes[i]);
		*line = call_site_line(&scopes[i]);
	}
	free(scopes);
	return ok;
}

/* The function symbol NAME is (a part of, as "NAME.cold"), demangled. */
static char *symbol_function_name(const char *name)
{
	size_t base = dbg_symbol_part_base(name);
	if (name[base] == 0)
		return dbg_demangle(name);
	char *whole = strndup(name, base);
	char *d = whole ? dbg_demangle(whole) : NULL;
	free(whole);
	return d;
}

/* Name and offset of the real (outermost) frame at offline address ADDR;
 * RAW is the pc itself.  Takes SP's name.  The offset is from the
 * function's entry, or in a part of the function before its entry
 * (NAME.cold), from the start of that part's symbol. */
static void name_real_frame(struct dbg_file *f, uint64_t addr, uint64_t raw,
			    struct subprogram *sp, struct dbg_location *real)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *name = dbg_file_addrinfo(f, addr, &off, &sym);
	if (name && name[0] == '_' && name[1] == 'Z' && !(sp->rust && sp->name)) {
		/* A C++ symbol demangles to the fully qualified name; DWARF's
		 * DW_AT_name of a template instance is unqualified. */
		real->function = symbol_function_name(name);
	} else if (sp->name) {
		/* DWARF's name, as debuggers show it: not an alias or a clone's symbol. */
		real->function = sp->name;
		sp->name = NULL;
		if (sp->has_entry && sp->entry <= raw) {
			real->offset = raw - sp->entry;
			real->has_offset = true;
		}
	} else if (name) {
		real->function = symbol_function_name(name);
	}
	if (name && !real->has_offset) {
		real->offset = raw - (addr - off);
		real->has_offset = true;
	}
}

const struct dbg_gotab *dbg_file_gotab(struct dbg_file *f)
{
	if (!f->gotab_checked) {
		f->gotab_checked = true;
		f->gotab = f->path ? dbg_gotab_for_file(f->path, 0, NULL) : NULL;
	}
	return f->gotab;
}

enum { GO_MAX_LEVELS = 64 };

/* A Go function's code: named, placed and inlined by the runtime's own
 * table, as its tracebacks print it (a stripped Go program keeps only
 * that table).  *OUT as symbolize_uncached's; false when ADDR is no Go
 * function's. */
static bool go_locations(struct dbg_file *f, uint64_t addr, uint64_t raw, struct dbg_location **out,
			 size_t *nout, bool *nomem)
{
	const struct dbg_gotab *t = dbg_file_gotab(f);
	struct dbg_gofunc fn;
	struct dbg_goframe frames[GO_MAX_LEVELS];
	/* The runtime's rule (traceback.go): a return address's function is
	 * the one holding it, its line the one before it unless it is the
	 * entry. */
	if (!t || !dbg_gotab_func(t, raw, &fn)) {
		*nomem = false;
		return false;
	}
	uint64_t at = addr != raw && raw > fn.entry ? raw - 1 : raw;
	size_t n = dbg_gotab_frames(t, &fn, at, frames, GO_MAX_LEVELS);
	struct dbg_location *locs = n ? calloc(n, sizeof(*locs)) : NULL;
	*nomem = n && !locs;
	for (size_t i = 0; locs && i < n; i++) {
		struct dbg_location *l = &locs[i];
		l->function = strdup(frames[i].function);
		l->file = frames[i].line > 0 ? strdup(frames[i].file) : NULL;
		l->line = frames[i].line;
		l->inlined = i + 1 < n;
		l->inline_depth = (int)(n - 1 - i);
		if (!l->function || (frames[i].line > 0 && !l->file)) {
			dbg_locations_free(locs, n);
			*nomem = true;
			return false;
		}
	}
	if (!locs)
		return false;
	locs[n - 1].offset = raw - fn.entry;
	locs[n - 1].has_offset = true;
	*out = locs;
	*nout = n;
	return true;
}

/* Symbolize offline address ADDR (already pc-1 for callers); RAW is the
 * offline address of the pc itself, for the function offset. */
static struct core_error *symbolize_uncached(struct dbg_file *f, uint64_t addr, uint64_t raw,
					     struct dbg_location **out, size_t *nout)
{
	struct loc_list l = { 0 };
	struct subprogram sp = { 0 };
	char *file = NULL;
	int line = 0;
	bool nomem;
	if (go_locations(f, addr, raw, out, nout, &nomem))
		return NULL;
	if (nomem)
		return &core_error_nomem;
	if (dbg_file_has_dwarf(f) && !add_inline_levels(f, addr, &l, &file, &line, &sp))
		goto nomem;
	struct dbg_location *real = loc_push(&l);
	if (!real)
		goto nomem;
	name_real_frame(f, addr, raw, &sp, real);
	free(sp.name);
	real->file = file;
	real->line = line;
	/* Inline levels were found innermost first, with depth counting up from
	 * the innermost; report depth as distance from the real frame. */
	for (size_t i = 0; i + 1 < l.n; i++)
		l.v[i].inline_depth = (int)(l.n - 1 - i);
	*out = l.v;
	*nout = l.n;
	return NULL;
nomem:
	free(sp.name);
	free(file);
	dbg_locations_free(l.v, l.n);
	return &core_error_nomem;
}

struct core_error *dbg_file_symbolize(struct dbg_file *f, uint64_t addr, bool activation,
				      struct dbg_location **locs, size_t *nlocs)
{
	uint64_t lookup = activation ? addr : addr - 1;
	uint64_t key = addr << 1 | activation;
	struct memo_entry *e = memo_find(f->memo, key);
	if (!e) {
		struct dbg_location *fresh;
		size_t n;
		struct core_error *err = symbolize_uncached(f, lookup, addr, &fresh, &n);
		if (err)
			return err;
		if (!memo_put(f, key, fresh, n)) {
			*locs = fresh;   /* not memoised: the caller has the only copy */
			*nlocs = n;
			return NULL;
		}
		e = memo_find(f->memo, key);
	}
	*locs = locations_copy(e->locs, e->nlocs);
	*nlocs = e->nlocs;
	return *locs ? NULL : &core_error_nomem;
}

static struct core_error *module_only(struct dbg_module_entry *m, uint64_t pc,
				      struct dbg_location **locs, size_t *nlocs)
{
	struct dbg_location *loc = calloc(1, sizeof(*loc));
	if (!loc)
		return &core_error_nomem;
	if (m) {
		loc->module = m->info.path ? strdup(m->info.path) : NULL;
		loc->module_offset = pc - m->info.start;
		loc->has_module_offset = true;
	}
	*locs = loc;
	*nlocs = 1;
	return NULL;
}

static struct core_error *symbolize_locked(struct dbg_session *s, uint64_t pc, bool activation,
					   struct dbg_location **locs, size_t *nlocs)
{
	*locs = NULL;
	*nlocs = 0;
	struct dbg_module_entry *m = dbg_module_for(s, pc);
	struct dbg_file *f = m ? dbg_module_file(s, m) : NULL;
	if (!f)
		return module_only(m, pc, locs, nlocs);
	Dwarf_Addr fbias = 0;
	dwfl_module_getelf(f->mod, &fbias);
	uint64_t addr = pc - m->bias + fbias;
	struct core_error *err = dbg_file_symbolize(f, addr, activation, locs, nlocs);
	if (err)
		return err;
	for (size_t i = 0; i < *nlocs; i++) {
		(*locs)[i].module = m->info.path ? strdup(m->info.path) : NULL;
		(*locs)[i].module_offset = pc - m->info.start;
		(*locs)[i].has_module_offset = true;
	}
	return NULL;
}

struct core_error *dbg_symbolize(struct dbg_session *s, uint64_t pc, bool activation,
				 struct dbg_location **locs, size_t *nlocs)
{
	dbg_lock(s);
	struct core_error *err = symbolize_locked(s, pc, activation, locs, nlocs);
	dbg_unlock(s);
	return err;
}
