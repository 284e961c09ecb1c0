/* Where a function begins, when its code is in several parts.
 *
 * GCC moves a function's unlikely paths (an abort(), an assert, exception
 * handling) into a part of their own placed elsewhere, with a local symbol
 * NAME.cold; the function's DWARF then has DW_AT_ranges, whose lowest
 * address is usually that part's, not the entry.  A function's entry is its
 * DW_AT_entry_pc, else its DW_AT_low_pc, else the start of its first range
 * in DWARF order (the part the compiler put first: the one entered); the
 * symbol table agrees (NAME is the entry, NAME.cold a part of NAME).
 * libdw's dwarf_entrypc reads DW_AT_entry_pc or DW_AT_low_pc only, and
 * dwarf_lowpc DW_AT_low_pc only: neither knows ranges. */
#include "internal.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "../base/array.h"

/* The start of DIE's first range, in DWARF order. */
static bool first_range(Dwarf_Die *die, Dwarf_Addr *start)
{
	Dwarf_Addr base, end;
	return dwarf_ranges(die, 0, &base, start, &end) > 0;
}

bool dbg_die_entry(Dwarf_Die *die, Dwarf_Addr *entry)
{
	Dwarf_Attribute attr;
	Dwarf_Word offset;
	Dwarf_Addr base;
	if (dwarf_attr(die, DW_AT_entry_pc, &attr)) {
		if (dwarf_formaddr(&attr, entry) == 0)
			return true;
		/* DWARF 5: a constant is an offset from the DIE's base address. */
		if (dwarf_formudata(&attr, &offset) == 0 &&
		    (dwarf_lowpc(die, &base) == 0 || first_range(die, &base))) {
			*entry = base + offset;
			return true;
		}
	}
	return dwarf_lowpc(die, entry) == 0 || first_range(die, entry);
}

/* GCC's suffixes of a part of a function: "NAME.cold", "NAME.cold.N"
 * (older GCC), after any clone suffix ("NAME.part.0.cold"). */
size_t dbg_symbol_part_base(const char *name)
{
	size_t len = strlen(name);
	const char *p = name + len;
	while (p > name && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p < name + len && p > name && p[-1] == '.')
		p--;                    /* ".N" */
	else
		p = name + len;
	static const char cold[] = ".cold";
	size_t n = sizeof(cold) - 1;
	if ((size_t)(p - name) > n && memcmp(p - n, cold, n) == 0)
		return (size_t)(p - n - name);
	return len;
}

/* The subprogram holding offline address ADDR of F, and the DWARF bias. */
static bool subprogram_at(struct dbg_file *f, uint64_t addr, Dwarf_Die *sub, Dwarf_Addr *dbias)
{
	if (!dbg_file_has_dwarf(f))
		return false;
	Dwarf_Die *cudie = dbg_file_addrdie(f, addr, dbias);
	if (!cudie)
		return false;
	if (dbg_funcmap_find(f, cudie, addr - *dbias, sub))
		return true;
	Dwarf_Die *scopes;
	int n = dbg_file_scopes(f, addr, &cudie, dbias, &scopes);
	bool found = false;
	for (int i = 0; i < n && !found; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			*sub = scopes[i];
			found = true;
		}
	free(scopes);
	return found;
}

/* By the symbol table: the symbol holding ADDR, or for a part
 * ("NAME.cold") the function NAME it is a part of. */
static bool symbol_entry(struct dbg_file *f, uint64_t addr, uint64_t *entry)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *name = dbg_file_addrinfo(f, addr, &off, &sym);
	if (!name)
		return false;
	*entry = addr - off;
	size_t base = dbg_symbol_part_base(name);
	if (base == strlen(name))
		return true;
	char *whole = strndup(name, base);
	uint64_t at;
	bool found = whole && dbg_file_find_symbol(f, whole, &at);
	free(whole);
	if (found)
		*entry = at;
	return true;
}

bool dbg_file_function_entry(struct dbg_file *f, uint64_t addr, uint64_t *entry)
{
	Dwarf_Die sub;
	Dwarf_Addr dbias, e;
	if (subprogram_at(f, addr, &sub, &dbias) && dbg_die_entry(&sub, &e)) {
		*entry = e + dbias;
		return true;
	}
	return symbol_entry(f, addr, entry);
}

/* The file of the module holding PC (the session locked), and *SHIFT, what
 * turns a target address into the file's offline one; NULL when none. */
static struct dbg_file *file_at(struct dbg_session *s, uint64_t pc, uint64_t *shift)
{
	struct dbg_module_entry *m = dbg_module_for(s, pc);
	struct dbg_file *f = m ? dbg_module_file(s, m) : NULL;
	Dwarf_Addr fbias = 0;
	if (f)
		dwfl_module_getelf(f->mod, &fbias);
	*shift = f ? fbias - m->bias : 0;
	return f;
}

bool dbg_function_entry(struct dbg_session *s, uint64_t pc, bool activation, uint64_t *entry)
{
	dbg_lock(s);
	struct dbg_entry_memo *m = &s->entries[base_hash_slot(pc, DBG_ENTRY_MEMO)];
	bool ok = m->ok;
	if (m->pc == pc + 1 && m->activation == activation) {
		if (ok)
			*entry = m->entry;
	} else {
		uint64_t shift;
		struct dbg_file *f = file_at(s, pc, &shift);
		ok = f && dbg_file_function_entry(f, (activation ? pc : pc - 1) + shift, entry);
		if (ok)
			*entry -= shift;
		*m = (struct dbg_entry_memo){ .pc = pc + 1, .entry = ok ? *entry : 0, .activation = activation,
					      .ok = ok };
	}
	dbg_unlock(s);
	return ok;
}

/* The range of DIE holding offline address ADDR (DWARF's, unbiased). */
static bool range_holding(Dwarf_Die *die, Dwarf_Addr addr, Dwarf_Addr *start, Dwarf_Addr *end)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0)
		if (lo <= addr && addr < hi) {
			*start = lo;
			*end = hi;
			return true;
		}
	return false;
}

/* The same by the symbol table: the symbol holding ADDR (a NAME.cold part
 * has one of its own). */
static bool symbol_part(struct dbg_file *f, uint64_t addr, uint64_t *start, uint64_t *end)
{
	GElf_Off off;
	GElf_Sym sym;
	if (!dbg_file_addrinfo(f, addr, &off, &sym) || sym.st_size == 0 || off >= sym.st_size)
		return false;
	*start = addr - off;
	*end = *start + sym.st_size;
	return true;
}

static bool file_function_part(struct dbg_file *f, uint64_t addr, uint64_t *start, uint64_t *end)
{
	Dwarf_Die sub;
	Dwarf_Addr dbias, lo, hi;
	if (subprogram_at(f, addr, &sub, &dbias) && range_holding(&sub, addr - dbias, &lo, &hi)) {
		*start = lo + dbias;
		*end = hi + dbias;
		return true;
	}
	return symbol_part(f, addr, start, end);
}

bool dbg_function_part(struct dbg_session *s, uint64_t pc, uint64_t *start, uint64_t *end)
{
	dbg_lock(s);
	uint64_t shift;
	struct dbg_file *f = file_at(s, pc, &shift);
	bool ok = f && file_function_part(f, pc + shift, start, end);
	if (ok) {
		*start -= shift;
		*end -= shift;
	}
	dbg_unlock(s);
	return ok;
}

/* Whether an executable segment of the core lies in M. */
static bool runs_code(struct dbg_session *s, struct dbg_module_entry *m)
{
	if (m->runs_code == 0) {
		const struct core *core = s->core;
		bool in = false;
		for (size_t i = 0; i < core->nsegments && !in; i++) {
			const struct core_segment *seg = &core->segments[i];
			in = (seg->flags & PF_X) && seg->vaddr < m->info.end &&
			     seg->vaddr + seg->memsz > m->info.start;
		}
		m->runs_code = in ? 1 : -1;
	}
	return m->runs_code > 0;
}

bool dbg_module_is_copy(struct dbg_session *s, struct dbg_module_entry *m)
{
	if (!m->info.build_id || runs_code(s, m))
		return false;
	for (size_t i = 0; i < s->nmodules; i++) {
		struct dbg_module_entry *o = &s->modules[i];
		if (o != m && o->info.build_id && strcmp(o->info.build_id, m->info.build_id) == 0 &&
		    runs_code(s, o))
			return true;
	}
	return false;
}
