/* The unit whose code holds an address, for every unit.
 *
 * libdwfl's dwfl_module_addrdie finds units by .debug_aranges alone, and
 * between two of its entries it answers with the unit of the lower one (it
 * takes the gaps of a module to be its units' padding).  A unit with no
 * entry there is never found: its code is given to the unit listed below
 * it, or to none.  Go's linker writes no .debug_aranges entry for Go's own
 * units while cgo's C units have theirs, so every Go pc was placed in the
 * last C unit below it; clang without -gdwarf-aranges writes none at all.
 * gdb reads each unit's own DW_AT_low_pc/high_pc/ranges where .debug_aranges
 * does not list it (dwarf2/read.c's index of units): so does this index.
 *
 * An address that .debug_aranges holds (libdw's exact search) keeps
 * libdwfl's answer.  The others are looked up among the ranges of the units
 * that .debug_aranges does not list, read once per file on the first such
 * address; a unit listed there is taken to hold all its code there. */
#include "internal.h"

#include <dwarf.h>
#include <stdlib.h>

#include "../base/array.h"

struct cu_span {
	Dwarf_Addr start, end;      /* DWARF addresses */
	size_t unit;                /* in dbg_cuindex.units */
};

struct dbg_cuindex {
	Dwarf_Die *units;           /* not listed in .debug_aranges, with code */
	size_t nunits, units_cap;
	struct cu_span *spans;      /* sorted, not overlapping */
	size_t nspans, spans_cap;
};

void dbg_cuindex_destroy(struct dbg_cuindex *x)
{
	if (!x)
		return;
	free(x->units);
	free(x->spans);
	free(x);
}

static int off_cmp(const void *a, const void *b)
{
	const Dwarf_Off *x = a, *y = b;
	return (*x > *y) - (*x < *y);
}

static int span_cmp(const void *a, const void *b)
{
	const struct cu_span *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->unit > y->unit) - (x->unit < y->unit);
}

static void span_range(const void *elem, uint64_t *start, uint64_t *end)
{
	const struct cu_span *s = elem;
	*start = s->start;
	*end = s->end;
}

/* The DIE offsets of the units .debug_aranges lists, sorted, into *OFFS
 * (malloc'd); false on out-of-memory. */
static bool listed_units(Dwarf *dw, Dwarf_Off **offs, size_t *n)
{
	Dwarf_Aranges *ar;
	size_t nar = 0;
	*offs = NULL;
	*n = 0;
	if (dwarf_getaranges(dw, &ar, &nar) != 0 || nar == 0)
		return true;
	if (!(*offs = malloc(nar * sizeof(**offs))))
		return false;
	for (size_t i = 0; i < nar; i++) {
		Dwarf_Off off;
		if (dwarf_getarangeinfo(dwarf_onearange(ar, i), NULL, NULL, &off) == 0)
			(*offs)[(*n)++] = off;
	}
	qsort(*offs, *n, sizeof(**offs), off_cmp);
	return true;
}

static bool is_listed(const Dwarf_Off *offs, size_t n, Dwarf_Off off)
{
	return n && bsearch(&off, offs, n, sizeof(off), off_cmp) != NULL;
}

/* Add the ranges of unit CUDIE (a DIE copy kept in X). */
static bool add_unit(struct dbg_cuindex *x, Dwarf_Die *cudie)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	bool any = false;
	while ((off = dwarf_ranges(cudie, off, &base, &start, &end)) > 0) {
		if (start >= end)
			continue;
		if (!any && !base_array_reserve(&x->units, &x->units_cap, x->nunits + 1,
						sizeof(*x->units)))
			return false;
		struct cu_span *s = base_array_push(&x->spans, &x->nspans, &x->spans_cap,
						    sizeof(*x->spans));
		if (!s)
			return false;
		*s = (struct cu_span){ .start = start, .end = end, .unit = x->nunits };
		any = true;
	}
	if (any)
		x->units[x->nunits++] = *cudie;
	return true;
}

/* Sorted, with spans that overlap an earlier one cut to where it ends
 * (units that claim one address: the lower start wins, as in funcmap.c). */
static void finish(struct dbg_cuindex *x)
{
	if (x->nspans)
		qsort(x->spans, x->nspans, sizeof(*x->spans), span_cmp);
	size_t kept = 0;
	for (size_t i = 0; i < x->nspans; i++) {
		struct cu_span s = x->spans[i];
		if (kept && s.start < x->spans[kept - 1].end)
			s.start = x->spans[kept - 1].end;
		if (s.start < s.end)
			x->spans[kept++] = s;
	}
	x->nspans = kept;
	base_array_shrink(&x->spans, &x->spans_cap, x->nspans, sizeof(*x->spans));
	base_array_shrink(&x->units, &x->units_cap, x->nunits, sizeof(*x->units));
}

static struct dbg_cuindex *cuindex_build(Dwarf *dw)
{
	struct dbg_cuindex *x = calloc(1, sizeof(*x));
	Dwarf_Off *listed = NULL;
	size_t nlisted = 0;
	if (!x || !listed_units(dw, &listed, &nlisted))
		goto fail;
	Dwarf_CU *cu = NULL;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die cudie;
	while (dwarf_get_units(dw, cu, &cu, &version, &type, &cudie, NULL) == 0) {
		if (type == DW_UT_type || type == DW_UT_split_type ||
		    is_listed(listed, nlisted, dwarf_dieoffset(&cudie)))
			continue;
		if (!add_unit(x, &cudie))
			goto fail;
	}
	free(listed);
	finish(x);
	return x;
fail:
	free(listed);
	dbg_cuindex_destroy(x);
	return NULL;
}

Dwarf_Die *dbg_file_addrdie(struct dbg_file *f, uint64_t addr, Dwarf_Addr *dbias)
{
	Dwarf *dw = dbg_file_has_dwarf(f) ? dwfl_module_getdwarf(f->mod, dbias) : NULL;
	if (!dw)
		return NULL;
	Dwarf_Aranges *ar;
	size_t nar;
	if (dwarf_getaranges(dw, &ar, &nar) == 0 && dwarf_getarange_addr(ar, addr - *dbias))
		return dwfl_module_addrdie(f->mod, addr, dbias);
	if (!f->cus && !(f->cus = cuindex_build(dw)))
		return NULL;
	const struct cu_span *s = base_range_find(f->cus->spans, f->cus->nspans, sizeof(*s),
						  addr - *dbias, span_range);
	return s ? &f->cus->units[s->unit] : NULL;
}
