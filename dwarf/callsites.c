/* Tail-call frames from DWARF call sites.
 *
 * A function that ends in `return g(...)` may jump to g instead of calling
 * it: its frame is gone from the stack, and the unwinder goes from g
 * straight to its caller.  Like gdb (gdb/dwarf2/frame-tailcall.c and
 * call_site_find_chain in gdb/dwarf2/loc.c), we restore such frames from
 * the call sites the compiler describes (DW_TAG_call_site, or
 * DW_TAG_GNU_call_site before DWARF 5): the caller's call site at the
 * return address names the function it called; when that is not the inner
 * frame's function, every chain of tail calls (call sites flagged
 * DW_AT_call_tail_call) from the called function to the inner frame's
 * function is searched, and the functions of the part common to all chains
 * become frames.  The same index answers whether a function may reach
 * itself by tail calls, when gdb trusts none of its entry values.
 *
 * Call sites are indexed per CU on first use and kept in the cached file,
 * so a batch of cores reads each CU's call sites once. */
#include "internal.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "../base/array.h"

/* Nesting of DIEs followed inside a CU: DWARF is untrusted input. */
#define MAX_DIE_DEPTH 64
/* Call sites tried in one chain search (gdb's search is exhaustive). */
#define MAX_VISITS 1024

enum cs_target {
	CS_NONE,                    /* unknown or computed (DW_AT_call_target) */
	CS_ADDR,                    /* a function with code: its entry */
	CS_NAME,                    /* a declaration: found by symbol name */
};

struct cs_site {
	uint64_t ret;               /* return address (DWARF address) */
	uint64_t func;              /* entry of the function holding the site */
	uint64_t addr;              /* CS_ADDR: the callee's entry */
	const char *name;           /* CS_NAME: borrowed from the file's libdw */
	enum cs_target target;
};

struct cs_func {
	uint64_t entry;
	size_t first, n;            /* its tail-call sites in tails[] */
};

/* One CU's call sites.  Allocated on its own, so pointers into it stay
 * valid while other CUs are indexed. */
struct cs_cu {
	Dwarf_Off offset;
	struct cs_site *sites;      /* every call site, by return address */
	size_t nsites;
	struct cs_site *tails;      /* tail-call sites, by function */
	size_t ntails;
	struct cs_func *funcs;      /* functions with code, by entry */
	size_t nfuncs;
};

struct dbg_callsites {
	struct cs_cu **cus;         /* by offset */
	size_t n, cap;
};

static void cu_destroy(struct cs_cu *cu)
{
	if (!cu)
		return;
	free(cu->sites);
	free(cu->tails);
	free(cu->funcs);
	free(cu);
}

void dbg_callsites_destroy(struct dbg_callsites *cs)
{
	if (!cs)
		return;
	for (size_t i = 0; i < cs->n; i++)
		cu_destroy(cs->cus[i]);
	free(cs->cus);
	free(cs);
}

/* ---- indexing one CU ----------------------------------------------------- */

struct cu_build {
	struct cs_cu *cu;
	size_t sites_cap, tails_cap, funcs_cap;
	bool nomem;
};

/* The function a call site is in, as the index needs it. */
struct cs_fn {
	uint64_t entry;
	Dwarf_Die die;
	int lists_tails;            /* its tail calls are all described; -1 not
				       read yet (only a tail call asks: most
				       functions make none) */
};

/* A flag of DIE or of the DIEs it completes (specification, abstract
 * origin), as gdb reads a function's flags. */
static bool flag(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute attr;
	bool v = false;
	return dwarf_attr_integrate(die, name, &attr) && dwarf_formflag(&attr, &v) == 0 && v;
}

/* A flag of DIE itself: a GNU call site's DW_AT_abstract_origin is the
 * function it calls, whose attributes are not the call site's. */
static bool own_flag(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute attr;
	bool v = false;
	return dwarf_attr(die, name, &attr) && dwarf_formflag(&attr, &v) == 0 && v;
}

static bool in_cxx_unit(Dwarf_Die *die)
{
	Dwarf_Die cu;
	if (!dwarf_diecu(die, &cu, NULL, NULL))
		return false;
	int lang = dwarf_srclang(&cu);
	return lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 ||
	       lang == DW_LANG_C_plus_plus_11 || lang == DW_LANG_C_plus_plus_14;
}

/* The symbol name of a declared function, or NULL.  gdb looks a C++
 * declaration up by its full name with parameters ("pthread_join(unsigned
 * long, void**)" for an extern "C" one that has no linkage name), which no
 * symbol has: such a target stays unknown here too, so that both show the
 * same frames. */
static const char *declared_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		return dwarf_formstring(&attr);
	if (in_cxx_unit(die) || !dwarf_attr_integrate(die, DW_AT_name, &attr))
		return NULL;
	return dwarf_formstring(&attr);
}

/* What a call site calls, as gdb resolves it without a frame: a computed
 * target (DW_AT_call_target) is unknown; a referenced declaration is found
 * by name; any other referenced DIE by its entry.  (gdb takes every start
 * of a target's ranges and matches any of them: the entry is the one a
 * callee's frame can begin at; the start of a NAME.cold part is none.) */
static void site_target(Dwarf_Die *die, struct cs_site *site)
{
	static const unsigned attrs[] = { DW_AT_call_target, DW_AT_GNU_call_site_target,
					  DW_AT_call_origin, DW_AT_abstract_origin };
	Dwarf_Attribute attr;
	Dwarf_Die target;
	size_t i = 0;
	while (i < sizeof(attrs) / sizeof(attrs[0]) && !dwarf_attr(die, attrs[i], &attr))
		i++;
	if (i == sizeof(attrs) / sizeof(attrs[0]) || !dwarf_formref_die(&attr, &target))
		return;
	if (flag(&target, DW_AT_declaration) && !dwarf_hasattr(&target, DW_AT_specification)) {
		site->name = declared_name(&target);
		site->target = site->name ? CS_NAME : CS_NONE;
	} else if (dbg_die_entry(&target, &site->addr)) {
		site->target = CS_ADDR;
	}
}

static bool lists_tails(struct cs_fn *fn)
{
	if (fn->lists_tails < 0)
		fn->lists_tails = flag(&fn->die, DW_AT_call_all_calls) ||
				  flag(&fn->die, DW_AT_GNU_all_call_sites) ||
				  flag(&fn->die, DW_AT_call_all_tail_calls) ||
				  flag(&fn->die, DW_AT_GNU_all_tail_call_sites);
	return fn->lists_tails;
}

static void add_site(struct cu_build *b, Dwarf_Die *die, struct cs_fn *fn)
{
	Dwarf_Attribute attr;
	Dwarf_Addr ret;
	if ((!dwarf_attr(die, DW_AT_call_return_pc, &attr) && !dwarf_attr(die, DW_AT_low_pc, &attr)) ||
	    dwarf_formaddr(&attr, &ret) != 0)
		return;
	struct cs_site site = { .ret = ret, .func = fn->entry };
	site_target(die, &site);
	struct cs_cu *cu = b->cu;
	if (!base_array_reserve(&cu->sites, &b->sites_cap, cu->nsites + 1, sizeof(site))) {
		b->nomem = true;
		return;
	}
	cu->sites[cu->nsites++] = site;
	/* As gdb: only a function that says all its tail calls are described
	 * can be a link of a chain. */
	if (!(own_flag(die, DW_AT_call_tail_call) || own_flag(die, DW_AT_GNU_tail_call)) ||
	    !lists_tails(fn))
		return;
	if (!base_array_reserve(&cu->tails, &b->tails_cap, cu->ntails + 1, sizeof(site))) {
		b->nomem = true;
		return;
	}
	cu->tails[cu->ntails++] = site;
}

static void index_children(struct cu_build *b, Dwarf_Die *parent, struct cs_fn *fn, int depth);

static void index_function(struct cu_build *b, Dwarf_Die *die, int depth)
{
	struct cs_fn fn = { .die = *die, .lists_tails = -1 };
	if (!dbg_die_entry(die, &fn.entry))
		return;
	struct cs_cu *cu = b->cu;
	if (!base_array_reserve(&cu->funcs, &b->funcs_cap, cu->nfuncs + 1, sizeof(*cu->funcs))) {
		b->nomem = true;
		return;
	}
	cu->funcs[cu->nfuncs++] = (struct cs_func){ .entry = fn.entry };
	index_children(b, die, &fn, depth + 1);
}

/* Call sites under PARENT; FN is the function they are in (NULL outside
 * functions, where only namespaces can hold functions). */
static void index_children(struct cu_build *b, Dwarf_Die *parent, struct cs_fn *fn, int depth)
{
	Dwarf_Die child;
	if (depth > MAX_DIE_DEPTH || dwarf_child(parent, &child) != 0)
		return;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			index_function(b, &child, depth);
			break;
		case DW_TAG_call_site:
		case DW_TAG_GNU_call_site:
			if (fn)
				add_site(b, &child, fn);
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			if (fn)
				index_children(b, &child, fn, depth + 1);
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
			if (!fn)
				index_children(b, &child, NULL, depth + 1);
			break;
		default:
			break;
		}
	} while (!b->nomem && dwarf_siblingof(&child, &child) == 0);
}

static int site_by_ret(const void *a, const void *b)
{
	const struct cs_site *x = a, *y = b;
	return x->ret < y->ret ? -1 : x->ret > y->ret;
}

static int site_by_func(const void *a, const void *b)
{
	const struct cs_site *x = a, *y = b;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	return site_by_ret(a, b);
}

static int func_by_entry(const void *a, const void *b)
{
	const struct cs_func *x = a, *y = b;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

/* Sort the arrays and point each function at its tail-call sites. */
static void cu_finish(struct cs_cu *cu)
{
	/* qsort and bsearch take no NULL array, even an empty one. */
	if (cu->nsites)
		qsort(cu->sites, cu->nsites, sizeof(*cu->sites), site_by_ret);
	if (cu->ntails)
		qsort(cu->tails, cu->ntails, sizeof(*cu->tails), site_by_func);
	if (cu->nfuncs)
		qsort(cu->funcs, cu->nfuncs, sizeof(*cu->funcs), func_by_entry);
	size_t t = 0;
	for (size_t i = 0; i < cu->nfuncs; i++) {
		struct cs_func *fn = &cu->funcs[i];
		while (t < cu->ntails && cu->tails[t].func < fn->entry)
			t++;
		fn->first = t;
		while (t < cu->ntails && cu->tails[t].func == fn->entry)
			t++;
		fn->n = t - fn->first;
	}
}

static struct cs_cu *cu_index(Dwarf_Die *cudie)
{
	struct cu_build b = { .cu = calloc(1, sizeof(*b.cu)) };
	if (!b.cu)
		return NULL;
	b.cu->offset = dwarf_dieoffset(cudie);
	Dwarf_Die cu = *cudie;
	index_children(&b, &cu, NULL, 0);
	if (b.nomem) {
		cu_destroy(b.cu);
		return NULL;
	}
	base_array_shrink(&b.cu->sites, &b.sites_cap, b.cu->nsites, sizeof(*b.cu->sites));
	base_array_shrink(&b.cu->tails, &b.tails_cap, b.cu->ntails, sizeof(*b.cu->tails));
	base_array_shrink(&b.cu->funcs, &b.funcs_cap, b.cu->nfuncs, sizeof(*b.cu->funcs));
	cu_finish(b.cu);
	return b.cu;
}

/* The index of CUDIE in F, built on first use; NULL on out-of-memory. */
static struct cs_cu *file_cu(struct dbg_file *f, Dwarf_Die *cudie)
{
	if (!f->callsites && !(f->callsites = calloc(1, sizeof(*f->callsites))))
		return NULL;
	struct dbg_callsites *cs = f->callsites;
	Dwarf_Off off = dwarf_dieoffset(cudie);
	size_t lo = 0, hi = cs->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cs->cus[mid]->offset < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < cs->n && cs->cus[lo]->offset == off)
		return cs->cus[lo];
	if (!base_array_reserve(&cs->cus, &cs->cap, cs->n + 1, sizeof(*cs->cus)))
		return NULL;
	struct cs_cu *cu = cu_index(cudie);
	if (!cu)
		return NULL;
	memmove(&cs->cus[lo + 1], &cs->cus[lo], (cs->n - lo) * sizeof(*cs->cus));
	cs->cus[lo] = cu;
	cs->n++;
	return cu;
}

/* ---- the chain search ---------------------------------------------------- */

/* The CU holding a runtime address, and how its DWARF addresses map to the
 * core's: runtime = DWARF address + delta. */
struct located {
	struct cs_cu *cu;
	uint64_t delta;
};

struct search {
	struct dbg_session *s;
	uint64_t callee;            /* entry of the inner frame's function */
	uint64_t path[DBG_MAX_TAIL_CALLS];    /* return addresses of the tail calls */
	size_t depth;
	uint64_t chain[DBG_MAX_TAIL_CALLS];   /* the first chain found... */
	size_t len, callers, callees;         /* ...and its prefix and suffix common to all */
	bool found, failed, nomem;
	unsigned visits;
};

static bool locate(struct search *x, uint64_t addr, struct located *loc)
{
	struct dbg_module_entry *m = dbg_module_for(x->s, addr);
	struct dbg_file *f = m ? dbg_module_file(x->s, m) : NULL;
	if (!f || !dbg_file_has_dwarf(f))
		return false;
	Dwarf_Addr fbias = 0, dbias = 0;
	dwfl_module_getelf(f->mod, &fbias);
	Dwarf_Die *cudie = dbg_file_addrdie(f, addr - m->bias + fbias, &dbias);
	if (!cudie)
		return false;
	loc->cu = file_cu(f, cudie);
	loc->delta = m->bias - fbias + dbias;
	if (!loc->cu)
		x->nomem = true;
	return loc->cu != NULL;
}

static const struct cs_site *site_at(const struct cs_cu *cu, uint64_t ret)
{
	struct cs_site key = { .ret = ret };
	return cu->nsites ? bsearch(&key, cu->sites, cu->nsites, sizeof(key), site_by_ret) : NULL;
}

static const struct cs_func *func_at(const struct cs_cu *cu, uint64_t entry)
{
	struct cs_func key = { .entry = entry };
	return cu->nfuncs ? bsearch(&key, cu->funcs, cu->nfuncs, sizeof(key), func_by_entry) : NULL;
}

static bool target_address(struct search *x, const struct cs_site *site, uint64_t delta,
			   uint64_t *addr)
{
	if (site->target == CS_ADDR) {
		*addr = site->addr + delta;
		return true;
	}
	return site->target == CS_NAME && dbg_find_symbol(x->s, site->name, addr, NULL);
}

/* gdb's chain_candidate: keep what the chains found so far have in common,
 * their callers (prefix) and callees (suffix); nothing in common makes the
 * result ambiguous. */
static void candidate(struct search *x)
{
	if (!x->found) {
		memcpy(x->chain, x->path, x->depth * sizeof(*x->path));
		x->len = x->callers = x->callees = x->depth;
		x->found = true;
		return;
	}
	size_t n = x->callers < x->depth ? x->callers : x->depth;
	x->callers = n;
	for (size_t i = 0; i < n; i++)
		if (x->chain[i] != x->path[i]) {
			x->callers = i;
			break;
		}
	n = x->callees < x->depth ? x->callees : x->depth;
	x->callees = n;
	for (size_t i = 0; i < n; i++)
		if (x->chain[x->len - 1 - i] != x->path[x->depth - 1 - i]) {
			x->callees = i;
			break;
		}
	if (x->callers == 0 && x->callees == 0)
		x->failed = true;
}

/* Follow SITE (in a CU mapped by DELTA): to the inner frame's function,
 * or through the tail calls of the function it calls.  Any site or function
 * that cannot be resolved makes the whole search fail, as in gdb. */
static void visit(struct search *x, const struct cs_site *site, uint64_t delta)
{
	uint64_t target;
	struct located loc;
	if (!target_address(x, site, delta, &target)) {
		x->failed = true;
		return;
	}
	if (target == x->callee) {
		candidate(x);
		return;
	}
	const struct cs_func *fn = locate(x, target, &loc) ? func_at(loc.cu, target - loc.delta) : NULL;
	if (!fn) {
		x->failed = true;
		return;
	}
	for (size_t i = 0; i < fn->n && !x->failed; i++) {
		const struct cs_site *tail = &loc.cu->tails[fn->first + i];
		uint64_t ret = tail->ret + loc.delta;
		bool on_path = false;
		for (size_t j = 0; j < x->depth; j++)
			on_path |= x->path[j] == ret;
		if (on_path)
			continue;   /* a cycle of tail calls */
		if (x->depth == DBG_MAX_TAIL_CALLS || ++x->visits > MAX_VISITS) {
			x->failed = true;   /* too long or too many to be sure */
			return;
		}
		x->path[x->depth++] = ret;
		visit(x, tail, loc.delta);
		x->depth--;
	}
}

/* The common callees (innermost first), then the common callers, as gdb
 * shows them; the whole chain when there was only one. */
static size_t chain_frames(const struct search *x, uint64_t *pcs)
{
	size_t callees = x->callees, callers = x->callers, n = 0;
	if (callers == x->len && callees == x->len)
		callers = 0;
	else if (callers + callees > x->len)
		callees = x->len - callers;
	for (size_t i = 0; i < callees; i++)
		pcs[n++] = x->chain[x->len - 1 - i];
	for (size_t i = callers; i-- > 0;)
		pcs[n++] = x->chain[i];
	return n;
}

static struct core_error *tail_calls_locked(struct dbg_session *s, uint64_t caller_ra,
					    uint64_t callee_entry, uint64_t *pcs, size_t *n)
{
	struct search x = { .s = s, .callee = callee_entry };
	struct located loc;
	const struct cs_site *site;
	*n = 0;
	if (!locate(&x, caller_ra - 1, &loc) ||
	    !(site = site_at(loc.cu, caller_ra - loc.delta)))
		return x.nomem ? &core_error_nomem : NULL;
	visit(&x, site, loc.delta);
	if (x.nomem)
		return &core_error_nomem;
	if (x.found && !x.failed)
		*n = chain_frames(&x, pcs);
	return NULL;
}

/* gdb's func_verify_no_selftailcall: the functions the one entered at
 * ENTRY reaches by tail calls (through functions that describe all theirs),
 * each resolved as the chain search resolves them.  True when one of them
 * tail-calls ENTRY again, or when a call or a function on the way cannot
 * be resolved, or there are too many to be sure: gdb's search is
 * exhaustive and the order it visits them in decides nothing. */
static bool reaches_itself(struct search *x, uint64_t entry)
{
	uint64_t seen[MAX_VISITS];
	size_t nseen = 0;
	seen[nseen++] = entry;
	for (size_t k = 0; k < nseen; k++) {
		struct located loc;
		const struct cs_func *fn = NULL;
		if (locate(x, seen[k], &loc))
			fn = func_at(loc.cu, seen[k] - loc.delta);
		if (!fn)
			return true;
		for (size_t i = 0; i < fn->n; i++) {
			uint64_t target;
			if (!target_address(x, &loc.cu->tails[fn->first + i], loc.delta, &target) ||
			    target == entry)
				return true;
			size_t j = 0;
			while (j < nseen && seen[j] != target)
				j++;
			if (j < nseen)
				continue;
			if (nseen == MAX_VISITS)
				return true;
			seen[nseen++] = target;
		}
	}
	return false;
}

/* ---- results per session ------------------------------------------------ */

/* dbg_tail_calls' answers by (caller's return address, callee entry): the
 * same frame pairs recur in every thread of a core, and the answers are in
 * the core's addresses, so they are kept per session; so are
 * dbg_tail_calls_itself's, by function entry. */
struct tail_memo_entry {
	uint64_t ra, callee;        /* ra 0: an empty slot */
	size_t first, n;            /* the answer's pcs in memo->pcs */
};

struct self_memo_entry {
	uint64_t entry;             /* first, as base_table_reserve wants; 0: empty */
	bool itself;
};

struct dbg_tail_memo {
	struct tail_memo_entry *slots;
	size_t cap, used;
	uint64_t *pcs;
	size_t npcs, pcs_cap;
	struct self_memo_entry *selves;
	size_t selves_cap, nselves;
};

void dbg_tail_memo_destroy(struct dbg_tail_memo *memo)
{
	if (!memo)
		return;
	free(memo->slots);
	free(memo->pcs);
	free(memo->selves);
	free(memo);
}

/* The session's memo, made on first use; NULL on out-of-memory. */
static struct dbg_tail_memo *memo_of(struct dbg_session *s)
{
	if (!s->tail_memo)
		s->tail_memo = calloc(1, sizeof(*s->tail_memo));
	return s->tail_memo;
}

static size_t memo_slot(const struct dbg_tail_memo *m, uint64_t ra, uint64_t callee)
{
	uint64_t h = (ra ^ (callee * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;
	size_t i = (size_t)(h >> 17) & (m->cap - 1);
	while (m->slots[i].ra && (m->slots[i].ra != ra || m->slots[i].callee != callee))
		i = (i + 1) & (m->cap - 1);
	return i;
}

static const struct tail_memo_entry *memo_find(const struct dbg_tail_memo *m, uint64_t ra,
					       uint64_t callee)
{
	if (!m || !m->cap)
		return NULL;
	const struct tail_memo_entry *e = &m->slots[memo_slot(m, ra, callee)];
	return e->ra ? e : NULL;
}

static bool memo_grow(struct dbg_tail_memo *m)
{
	size_t cap = m->cap ? 2 * m->cap : 256;
	struct tail_memo_entry *old = m->slots;
	size_t old_cap = m->cap;
	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return false;
	}
	m->cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].ra)
			m->slots[memo_slot(m, old[i].ra, old[i].callee)] = old[i];
	free(old);
	return true;
}

/* Remember an answer; false on out-of-memory. */
static bool memo_put(struct dbg_session *s, uint64_t ra, uint64_t callee, const uint64_t *pcs,
		     size_t n)
{
	struct dbg_tail_memo *m = memo_of(s);
	if (!m)
		return false;
	if (2 * (m->used + 1) > m->cap && !memo_grow(m))
		return false;
	if (!base_array_reserve(&m->pcs, &m->pcs_cap, m->npcs + n, sizeof(*m->pcs)))
		return false;
	if (n)
		memcpy(m->pcs + m->npcs, pcs, n * sizeof(*pcs));
	m->slots[memo_slot(m, ra, callee)] = (struct tail_memo_entry){ ra, callee, m->npcs, n };
	m->npcs += n;
	m->used++;
	return true;
}

struct core_error *dbg_tail_calls(struct dbg_session *s, uint64_t caller_ra, uint64_t callee_pc,
				  bool callee_activation, uint64_t pcs[DBG_MAX_TAIL_CALLS], size_t *n)
{
	*n = 0;
	uint64_t callee_entry;
	if (caller_ra == 0 || !dbg_function_entry(s, callee_pc, callee_activation, &callee_entry))
		return NULL;
	const struct tail_memo_entry *e = memo_find(s->tail_memo, caller_ra, callee_entry);
	if (e) {
		if (e->n)
			memcpy(pcs, s->tail_memo->pcs + e->first, e->n * sizeof(*pcs));
		*n = e->n;
		return NULL;
	}
	dbg_lock(s);
	struct core_error *err = tail_calls_locked(s, caller_ra, callee_entry, pcs, n);
	dbg_unlock(s);
	if (!err && !memo_put(s, caller_ra, callee_entry, pcs, *n))
		err = &core_error_nomem;
	return err;
}

/* ENTRY's slot in M's table of dbg_tail_calls_itself answers (its capacity
 * not 0): the one holding it, or the free one where it goes. */
static struct self_memo_entry *self_slot(struct dbg_tail_memo *m, uint64_t entry)
{
	size_t i = base_hash_slot(entry, m->selves_cap);
	while (m->selves[i].entry && m->selves[i].entry != entry)
		i = (i + 1) & (m->selves_cap - 1);
	return &m->selves[i];
}

bool dbg_tail_calls_itself(struct dbg_session *s, uint64_t entry)
{
	struct dbg_tail_memo *m = s->tail_memo;
	const struct self_memo_entry *e = m && m->selves_cap ? self_slot(m, entry) : NULL;
	if (e && e->entry)
		return e->itself;
	if (entry == 0)
		return true;
	struct search x = { .s = s };
	dbg_lock(s);
	bool itself = reaches_itself(&x, entry);
	dbg_unlock(s);
	if (x.nomem)
		return true;    /* unsure, and not kept */
	m = memo_of(s);
	if (m && base_table_reserve(&m->selves, &m->selves_cap, m->nselves, sizeof(*m->selves))) {
		*self_slot(m, entry) = (struct self_memo_entry){ entry, itself };
		m->nselves++;
	}
	return itself;
}
