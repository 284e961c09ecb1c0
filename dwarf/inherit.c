/* The children of a function or block DIE in gdb's order
 * (inherit_abstract_dies), for its parameters (params.c) and its local
 * symbols (locals.c): a concrete instance's own children, then those of its
 * abstract origin that none of them stands for. */
#include "params.h"

#include <dwarf.h>
#include <stdlib.h>

#include "../base/array.h"

bool dbg_is_function_scope(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

/* The DIE DIE's abstract origin chain ends at after at most HOPS links, into
 * *ORIGIN; false when DIE has none. */
static bool final_origin(Dwarf_Die *die, int hops, Dwarf_Die *origin)
{
	Dwarf_Attribute a;
	Dwarf_Die cur = *die;
	bool found = false;
	for (int hop = 0; hop < hops && dwarf_attr(&cur, DW_AT_abstract_origin, &a) &&
			  dwarf_formref_die(&a, &cur); hop++)
		found = true;
	*origin = cur;
	return found;
}

static int cmp_off(const void *a, const void *b)
{
	Dwarf_Off x = *(const Dwarf_Off *)a, y = *(const Dwarf_Off *)b;
	return x < y ? -1 : x > y;
}

static bool wanted(const struct dbg_children *how, Dwarf_Die *child)
{
	return how->tag == 0 || dwarf_tag(child) == how->tag;
}

/* The abstract DIEs the concrete children stand for. */
struct offsets {
	Dwarf_Off *v;
	size_t n, cap;
};

/* Visit DIE's own children, remembering in SEEN what they stand for. */
static bool own_children(Dwarf_Die *die, const struct dbg_children *how, struct offsets *seen)
{
	Dwarf_Die c, origin;
	if (dwarf_child(die, &c) != 0)
		return true;
	do {
		if (!wanted(how, &c))
			continue;
		if (!how->visit(how->ctx, &c))
			return false;
		if (final_origin(&c, how->hops, &origin) && seen->n < how->max_seen) {
			Dwarf_Off *slot = base_array_push(&seen->v, &seen->n, &seen->cap, sizeof(*seen->v));
			if (!slot)
				return false;
			*slot = dwarf_dieoffset(&origin);
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return true;
}

/* Visit the children of DIE's abstract origin that SEEN does not hold. */
static bool origin_children(Dwarf_Die *die, const struct dbg_children *how, struct offsets *seen)
{
	Dwarf_Die origin, c;
	if (!final_origin(die, how->hops, &origin) || dwarf_child(&origin, &c) != 0)
		return true;
	if (seen->n)
		qsort(seen->v, seen->n, sizeof(*seen->v), cmp_off);
	do {
		Dwarf_Off off = dwarf_dieoffset(&c);
		bool stood_for = seen->n && bsearch(&off, seen->v, seen->n, sizeof(*seen->v), cmp_off);
		if (wanted(how, &c) && !stood_for && !how->visit(how->ctx, &c))
			return false;
	} while (dwarf_siblingof(&c, &c) == 0);
	return true;
}

bool dbg_children_inherit(Dwarf_Die *die, const struct dbg_children *how)
{
	struct offsets seen = { 0 };
	bool ok = own_children(die, how, &seen) && origin_children(die, how, &seen);
	free(seen.v);
	return ok;
}
