/* Per-CU maps from code addresses to the subprograms that hold them.
 *
 * dwarf_getscopes finds the scopes at an address by walking the CU's DIEs
 * until it meets the one holding it, and dwarf_getscopes_die walks them
 * again to the inner DIE: in a C++ CU of tens of thousands of DIEs (template
 * instances) that is most of a report's time, twice per pc.  Here each CU
 * touched is walked once, at the levels where GCC puts concrete subprograms
 * (the CU and its namespaces), and every later lookup is a binary search. */
#include "internal.h"

#include <dwarf.h>
#include <stdlib.h>

#include "../base/array.h"

struct fn_range {
	Dwarf_Addr start, end;      /* DWARF addresses */
	Dwarf_Off die;
};

struct cu_map {
	Dwarf_Off cu;
	struct fn_range *v;
	size_t n, cap;
};

struct dbg_funcmap {
	struct cu_map *v;
	size_t n, cap;
};

void dbg_funcmap_destroy(struct dbg_funcmap *fm)
{
	if (!fm)
		return;
	for (size_t i = 0; i < fm->n; i++)
		free(fm->v[i].v);
	free(fm->v);
	free(fm);
}

static bool add_ranges(struct cu_map *m, Dwarf_Die *die)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (start >= end)
			continue;
		struct fn_range *r = base_array_push(&m->v, &m->n, &m->cap, sizeof(*m->v));
		if (!r)
			return false;
		*r = (struct fn_range){ .start = start, .end = end, .die = dwarf_dieoffset(die) };
	}
	return true;
}

/* The subprograms with code among PARENT's children, descending into
 * namespaces. */
static bool index_level(struct cu_map *m, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;
	if (depth > 32 || dwarf_child(parent, &child) != 0)
		return true;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_namespace && !index_level(m, &child, depth + 1))
			return false;
		bool code = dwarf_hasattr(&child, DW_AT_low_pc) || dwarf_hasattr(&child, DW_AT_ranges);
		if (tag == DW_TAG_subprogram && code && !add_ranges(m, &child))
			return false;
	} while (dwarf_siblingof(&child, &child) == 0);
	return true;
}

static int by_start(const void *a, const void *b)
{
	const struct fn_range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static void range_of(const void *elem, uint64_t *start, uint64_t *end)
{
	const struct fn_range *r = elem;
	*start = r->start;
	*end = r->end;
}

/* Sorted, with ranges that overlap an earlier one dropped: a lookup there
 * still finds a subprogram that holds the address. */
static void sort_ranges(struct cu_map *m)
{
	if (m->n)
		qsort(m->v, m->n, sizeof(*m->v), by_start);
	size_t kept = 0;
	for (size_t i = 0; i < m->n; i++)
		if (!kept || m->v[i].start >= m->v[kept - 1].end)
			m->v[kept++] = m->v[i];
	m->n = kept;
	base_array_shrink(&m->v, &m->cap, m->n, sizeof(*m->v));
}

static struct cu_map *cu_map_get(struct dbg_file *f, Dwarf_Die *cudie)
{
	Dwarf_Off cu = dwarf_dieoffset(cudie);
	if (!f->funcmap && !(f->funcmap = calloc(1, sizeof(*f->funcmap))))
		return NULL;
	struct dbg_funcmap *fm = f->funcmap;
	for (size_t i = 0; i < fm->n; i++)
		if (fm->v[i].cu == cu)
			return &fm->v[i];
	struct cu_map *m = base_array_push(&fm->v, &fm->n, &fm->cap, sizeof(*fm->v));
	if (!m)
		return NULL;
	m->cu = cu;
	if (!index_level(m, cudie, 0)) {
		free(m->v);
		fm->n--;
		return NULL;
	}
	sort_ranges(m);
	return m;
}

bool dbg_funcmap_find(struct dbg_file *f, Dwarf_Die *cudie, Dwarf_Addr addr, Dwarf_Die *sub)
{
	struct cu_map *m = cu_map_get(f, cudie);
	const struct fn_range *r = m ? base_range_find(m->v, m->n, sizeof(*m->v), addr, range_of) : NULL;
	return r && dwarf_offdie(dwarf_cu_getdwarf(cudie->cu), r->die, sub) != NULL;
}
