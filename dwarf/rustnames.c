/* Rust function names from DWARF, as gdb builds them.
 *
 * rustc puts a function's declaration in the tree of namespaces and types
 * that names it (main -> Ledger -> debit; core -> ops -> function -> impls
 * -> {impl#2} -> call_once) and its code at the unit's top level, with
 * DW_AT_specification pointing at the declaration.  gdb names it by that
 * path, joined with "::", its name ending in its generic arguments
 * ("main::settle<main::main::{closure#2}::{closure_env#0}>", as rustc
 * writes it, else from its template type parameters); a symbol's
 * demangled name differs ("__rustc::__rust_abort" for std::rt::__rust_abort,
 * "<Box<..> as FnOnce<..>>::call_once" for alloc::boxed::{impl#31}::call_once).
 * libdw has no parent links: a DIE's parents are found by descending from
 * its unit's root by DIE offset (children follow their parent in offset
 * order). */
#include "internal.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#define PATH_MAX_DEPTH 32
#define NAME_MAX_LEN 4096
#define FOLLOW_MAX 8

struct name_buf {
	char s[NAME_MAX_LEN];
	size_t len;
	bool full;
};

static void put(struct name_buf *b, const char *s)
{
	size_t n = strlen(s);
	if (b->full || b->len + n >= sizeof(b->s)) {
		b->full = true;
		return;
	}
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

bool dbg_die_is_rust(Dwarf_Die *die)
{
	Dwarf_Die cu;
	return dwarf_diecu(die, &cu, NULL, NULL) && dwarf_srclang(&cu) == DW_LANG_Rust;
}

/* The DIEs from DIE's unit root (excluded) down to DIE (excluded):
 * PATH[0..return).  -1 when DIE is not found. */
static int die_parents(Dwarf_Die *die, Dwarf_Die *path)
{
	Dwarf_Die cu, cur, child;
	if (!dwarf_diecu(die, &cu, NULL, NULL))
		return -1;
	Dwarf_Off target = dwarf_dieoffset(die);
	cur = cu;
	for (int depth = 0; depth < PATH_MAX_DEPTH; depth++) {
		if (dwarf_child(&cur, &child) != 0)
			return -1;
		Dwarf_Die best = child;
		while (dwarf_dieoffset(&child) < target) {
			best = child;
			if (dwarf_siblingof(&child, &child) != 0)
				break;
		}
		if (dwarf_dieoffset(&child) == target)
			return depth;
		if (dwarf_dieoffset(&best) >= target)
			return -1;
		path[depth] = best;
		cur = best;
	}
	return -1;
}

static bool names_scope(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_structure_type ||
	       tag == DW_TAG_union_type || tag == DW_TAG_enumeration_type ||
	       tag == DW_TAG_class_type || tag == DW_TAG_subprogram;
}

/* DIE's name qualified by the namespaces and types it is declared in. */
static bool put_qualified(struct name_buf *b, Dwarf_Die *die)
{
	Dwarf_Die path[PATH_MAX_DEPTH];
	const char *name = dwarf_diename(die);
	int n = die_parents(die, path);
	if (!name || n < 0)
		return false;
	for (int i = 0; i < n; i++) {
		const char *scope = dwarf_diename(&path[i]);
		if (scope && names_scope(dwarf_tag(&path[i]))) {
			put(b, scope);
			put(b, "::");
		}
	}
	put(b, name);
	return true;
}

/* A template argument's type as gdb prints a Rust type: a struct, union or
 * enum by its qualified name, any other by its own name. */
static bool put_type(struct name_buf *b, Dwarf_Die *type)
{
	int tag = dwarf_tag(type);
	if (tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
	    tag == DW_TAG_enumeration_type || tag == DW_TAG_class_type)
		return put_qualified(b, type);
	const char *name = dwarf_diename(type);
	if (name)
		put(b, name);
	return name != NULL;
}

/* "<T1, T2>" from DIE's template type parameters; nothing when it has none,
 * false when one cannot be named. */
static bool put_template_args(struct name_buf *b, Dwarf_Die *die)
{
	Dwarf_Die child, type;
	Dwarf_Attribute attr;
	int n = 0;
	if (dwarf_child(die, &child) != 0)
		return true;
	do {
		if (dwarf_tag(&child) != DW_TAG_template_type_parameter)
			continue;
		put(b, n++ ? ", " : "<");
		if (!dwarf_attr(&child, DW_AT_type, &attr) || !dwarf_formref_die(&attr, &type) ||
		    !put_type(b, &type))
			return false;
	} while (dwarf_siblingof(&child, &child) == 0);
	if (n)
		put(b, ">");
	return true;
}

/* The DIE that DIE completes (DW_AT_specification, DW_AT_abstract_origin). */
static bool completes(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute attr;
	return (dwarf_attr(die, DW_AT_specification, &attr) ||
		dwarf_attr(die, DW_AT_abstract_origin, &attr)) &&
	       dwarf_formref_die(&attr, out) != NULL;
}

static bool has_template_args(Dwarf_Die *die)
{
	Dwarf_Die child;
	if (dwarf_child(die, &child) != 0)
		return false;
	do {
		if (dwarf_tag(&child) == DW_TAG_template_type_parameter)
			return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

char *dbg_rust_function_name(Dwarf_Die *die)
{
	/* The declaration names it; the first DIE of the chain that has
	 * template parameters gives them. */
	Dwarf_Die decl = *die, next, templ;
	bool have_templ = false;
	for (int i = 0; i <= FOLLOW_MAX; i++) {
		if (!have_templ && has_template_args(&decl)) {
			templ = decl;
			have_templ = true;
		}
		if (i == FOLLOW_MAX || !completes(&decl, &next))
			break;
		decl = next;
	}
	struct name_buf *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	char *out = NULL;
	if (put_qualified(b, &decl)) {
		/* As gdb: arguments already in the name (rustc writes them
		 * there) are not added again. */
		size_t plain = b->len;
		if (have_templ && !strchr(dwarf_diename(&decl), '<') && !put_template_args(b, &templ)) {
			b->len = plain;   /* the name without its arguments */
			b->s[plain] = 0;
		}
		if (!b->full)
			out = strdup(b->s);
	}
	free(b);
	return out;
}
