/* Symbols by address, answered as libdwfl's dwfl_module_addrinfo answers
 * (libdwfl/dwfl_module_addrsym.c) without its linear search, which reads
 * every symbol and every name of the table at each call.
 *
 * libdwfl tries every symbol of the global range, then, when none holds
 * the address, every local one.  A sized symbol that holds it decides: the
 * best of those by libdwfl's rules (closest start, then binding, then
 * size, then table order).  The local range is searched when no global
 * one holds the address and no global sizeless symbol is at it (which
 * would end libdwfl's search).  When no sized symbol holds it, the answer
 * can only be a sizeless symbol at M, the highest end (value + size) of
 * the symbols at or below the address: the last such in search order that
 * is in the address's section (a sizeless symbol of no section: only at
 * the address itself); without one, there is no answer. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#include "../base/array.h"

/* Both entries begin with their address (count_upto). */
struct addr_entry {
	uint64_t value, size;
	uint64_t end_max;           /* the highest end of this and the entries before */
	int sym;
};

struct addr_label {
	uint64_t value;
	int sym;
	bool no_section;            /* absolute, or in no allocated section */
};

struct addr_range {
	struct addr_entry *v;       /* sized symbols, by address */
	size_t n, cap;
	struct addr_label *labels;  /* sizeless symbols, by address then table order */
	size_t nlabels, labels_cap;
};

/* An allocated section of the main file, where the module has it. */
struct alloc_section {
	uint64_t start, end;
	size_t ndx;
};

struct dbg_addrindex {
	struct addr_range global, local;
	bool has_locals;            /* libdwfl searches a local range */
	bool labels_exact;          /* sizeless answers are found here */
	struct alloc_section *sections;   /* sorted as libdwfl sorts them */
	size_t nsections;
	bool sections_read;
};

static void range_free(struct addr_range *r)
{
	free(r->v);
	free(r->labels);
}

void dbg_addrindex_destroy(struct dbg_addrindex *index)
{
	if (!index)
		return;
	range_free(&index->global);
	range_free(&index->local);
	free(index->sections);
	free(index);
}

static int addr_entry_cmp(const void *a, const void *b)
{
	const struct addr_entry *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return (x->sym > y->sym) - (x->sym < y->sym);
}

static int addr_label_cmp(const void *a, const void *b)
{
	const struct addr_label *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return (x->sym > y->sym) - (x->sym < y->sym);
}

/* An ELF mapping symbol ("$x", "$d", "$x.foo"): it marks where code or data
 * starts in a section and names no function; gdb never shows one. */
static bool mapping_symbol(const char *name)
{
	return name[0] == '$' && strchr("xdat", name[1]) && name[1] && (name[2] == '\0' || name[2] == '.');
}

/* As libdwfl's search_table filters the symbols it tries, and without the
 * mapping symbols of the architectures that have them (MAPPING). */
static bool addr_candidate(const char *name, const GElf_Sym *sym, bool mapping)
{
	int type = GELF_ST_TYPE(sym->st_info);
	return name && name[0] && sym->st_shndx != SHN_UNDEF && type != STT_SECTION &&
	       type != STT_FILE && type != STT_TLS && !(mapping && mapping_symbol(name));
}

/* Whether MOD's machine has mapping symbols (corefile/arch.h). */
static bool has_mapping_symbols(Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh;
	const struct core_arch *arch = elf && gelf_getehdr(elf, &eh) ? core_arch_for_machine(eh.e_machine) : NULL;
	return arch && arch->mapping_symbols;
}

static bool range_add_label(struct addr_range *r, Dwfl_Module *mod, int i, uint64_t value)
{
	GElf_Sym sym;
	GElf_Addr again;
	GElf_Word shndx = SHN_UNDEF;
	if (!dwfl_module_getsym_info(mod, i, &sym, &again, &shndx, NULL, NULL) ||
	    !base_array_reserve(&r->labels, &r->labels_cap, r->nlabels + 1, sizeof(*r->labels)))
		return false;
	/* libdwfl's shndx: the section's, or -1 for one not allocated. */
	r->labels[r->nlabels++] = (struct addr_label){ .value = value, .sym = i,
						       .no_section = shndx >= SHN_LORESERVE };
	return true;
}

static bool range_add(struct addr_range *r, Dwfl_Module *mod, int i, const GElf_Sym *sym,
		      uint64_t value)
{
	if (sym->st_size == 0)
		return range_add_label(r, mod, i, value);
	if (!base_array_reserve(&r->v, &r->cap, r->n + 1, sizeof(*r->v)))
		return false;
	r->v[r->n++] = (struct addr_entry){ .value = value, .size = sym->st_size, .sym = i };
	return true;
}

static void range_finish(struct addr_range *r)
{
	base_array_shrink(&r->v, &r->cap, r->n, sizeof(*r->v));
	if (r->n)
		qsort(r->v, r->n, sizeof(*r->v), addr_entry_cmp);
	for (size_t k = 0; k < r->n; k++) {
		struct addr_entry *e = &r->v[k];
		uint64_t end = e->size > UINT64_MAX - e->value ? UINT64_MAX : e->value + e->size;
		e->end_max = k && r->v[k - 1].end_max > end ? r->v[k - 1].end_max : end;
	}
	base_array_shrink(&r->labels, &r->labels_cap, r->nlabels, sizeof(*r->labels));
	if (r->nlabels)
		qsort(r->labels, r->nlabels, sizeof(*r->labels), addr_label_cmp);
}

/* Whether a sizeless answer can be found here: libdwfl relocates the
 * sections of a relocatable file, and on machines with function
 * descriptors tries a second value per symbol. */
static bool labels_exact(Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh;
	return elf && gelf_getehdr(elf, &eh) && eh.e_type != ET_REL && eh.e_machine != EM_PPC64;
}

static struct dbg_addrindex *addrindex_build(Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	int first = dwfl_module_getsymtab_first_global(mod);
	struct dbg_addrindex *x = calloc(1, sizeof(*x));
	struct dbg_symnames names = { 0 };
	if (!x || n < 0 || first < 0)
		goto fail;
	x->has_locals = first > 1;
	x->labels_exact = labels_exact(mod);
	bool mapping = has_mapping_symbols(mod);
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		const char *name = dbg_symnames_get(&names, mod, i, &sym, &value);
		bool global = first == 0 || i >= first;
		if (addr_candidate(name, &sym, mapping) &&
		    !range_add(global ? &x->global : &x->local, mod, i, &sym, value))
			goto fail;
	}
	dbg_symnames_close(&names);
	range_finish(&x->global);
	range_finish(&x->local);
	return x;
fail:
	dbg_symnames_close(&names);
	dbg_addrindex_destroy(x);
	return NULL;
}

/* GELF_ST_BIND as libdwfl ranks it, higher is better. */
static int binding_rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_LOCAL: return 1;
	default: return 0;
	}
}

/* Whether CAND (at VALUE) beats BEST (at BEST_VALUE) as libdwfl's
 * try_sym_value judges a sized symbol met after it in table order. */
static bool better_sized(const GElf_Sym *best, uint64_t best_value, const GElf_Sym *cand,
			 uint64_t value)
{
	if (best_value < value || binding_rank(best) < binding_rank(cand))
		return true;
	return best_value == value &&
	       ((best->st_size > cand->st_size && binding_rank(best) <= binding_rank(cand)) ||
		(best->st_size >= cand->st_size && binding_rank(best) < binding_rank(cand)));
}

/* How many of the N elements at V (of SIZE bytes each, sorted by the
 * address they start with) are at or below ADDR. */
static size_t count_upto(const void *v, size_t n, size_t size, GElf_Addr addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t value;
		memcpy(&value, (const char *)v + mid * size, sizeof(value));
		if (value <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The number of sized entries of R starting at or below ADDR. */
static size_t entries_upto(const struct addr_range *r, GElf_Addr addr)
{
	return count_upto(r->v, r->n, sizeof(*r->v), addr);
}

/* The number of labels of R at or below ADDR. */
static size_t labels_upto(const struct addr_range *r, GElf_Addr addr)
{
	return count_upto(r->labels, r->nlabels, sizeof(*r->labels), addr);
}

/* The best sized symbol of R holding ADDR, in *BEST..; -1 when none does,
 * -2 when the symbol table does not say what the index does. */
static int range_best(Dwfl_Module *mod, const struct addr_range *r, GElf_Addr addr,
		      GElf_Sym *best_sym, uint64_t *best_value)
{
	/* From the last entry starting at or below ADDR, back while an
	 * earlier one may still reach it. */
	size_t lo = entries_upto(r, addr);
	int best = -1;
	/* Candidates are met here by address; libdwfl meets them in table
	 * order, which decides among equals: fold in that order. */
	for (int done = -1;;) {
		int next = -1;
		size_t pick = 0;
		for (size_t k = lo; k-- > 0 && r->v[k].end_max > addr;) {
			const struct addr_entry *e = &r->v[k];
			if (addr - e->value < e->size && e->sym > done && (next < 0 || e->sym < next)) {
				next = e->sym;
				pick = k;
			}
		}
		if (next < 0)
			return best;
		done = next;
		GElf_Sym s;
		GElf_Addr value;
		if (!dwfl_module_getsym_info(mod, next, &s, &value, NULL, NULL, NULL) ||
		    value != r->v[pick].value)
			return -2;
		if (best < 0 || better_sized(best_sym, *best_value, &s, value)) {
			best = next;
			*best_sym = s;
			*best_value = value;
		}
	}
}

static int section_cmp(const void *a, const void *b)
{
	const struct alloc_section *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return (x->ndx > y->ndx) - (x->ndx < y->ndx);
}

/* The allocated sections of MOD's main file at their addresses in MOD,
 * sorted as libdwfl's cache_sections sorts them. */
static bool read_sections(struct dbg_addrindex *x, Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t cap = 0;
	for (Elf_Scn *scn = elf ? elf_nextscn(elf, NULL) : NULL; scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			return false;
		if (!(sh.sh_flags & SHF_ALLOC))
			continue;
		if (!base_array_reserve(&x->sections, &cap, x->nsections + 1, sizeof(*x->sections)))
			return false;
		x->sections[x->nsections++] = (struct alloc_section){
			.start = sh.sh_addr + bias, .end = sh.sh_addr + bias + sh.sh_size,
			.ndx = elf_ndxscn(scn) };
	}
	if (x->nsections)
		qsort(x->sections, x->nsections, sizeof(*x->sections), section_cmp);
	return elf != NULL;
}

/* The section ADDR lies in as libdwfl's find_section finds it (its binary
 * search, its rule for a section's end); 0 for none. */
static size_t section_of(const struct dbg_addrindex *x, uint64_t addr)
{
	size_t l = 0, u = x->nsections;
	while (l < u) {
		size_t idx = (l + u) / 2;
		const struct alloc_section *s = &x->sections[idx];
		if (addr < s->start) {
			u = idx;
		} else if (addr > s->end) {
			l = idx + 1;
		} else {
			if (addr == s->end && idx + 1 < x->nsections && addr == x->sections[idx + 1].start)
				idx++;
			return x->sections[idx].ndx;
		}
	}
	return 0;
}

/* The last label of R at M (in table order) that libdwfl takes for ADDR;
 * -1 when none is. */
static int range_label_at(const struct dbg_addrindex *x, const struct addr_range *r, uint64_t m,
			  GElf_Addr addr)
{
	bool same_section = m == addr || section_of(x, m) == section_of(x, addr);
	for (size_t k = labels_upto(r, m); k-- > 0 && r->labels[k].value == m;)
		if (r->labels[k].no_section ? m == addr : same_section)
			return r->labels[k].sym;
	return -1;
}

/* The highest end of R's symbols at or below ADDR, into *M. */
static void range_highest_end(const struct addr_range *r, GElf_Addr addr, uint64_t *m)
{
	size_t k = entries_upto(r, addr);
	if (k && r->v[k - 1].end_max > *m)
		*m = r->v[k - 1].end_max;
	k = labels_upto(r, addr);
	if (k && r->labels[k - 1].value > *m)
		*m = r->labels[k - 1].value;
}

static bool is_label(const struct addr_range *r, uint64_t addr)
{
	size_t k = labels_upto(r, addr);
	return k && r->labels[k - 1].value == addr;
}

/* libdwfl's sizeless answer for ADDR, no sized symbol holding it: -1 for
 * none, -2 when it is not known here. */
static int label_answer(struct dbg_addrindex *x, Dwfl_Module *mod, GElf_Addr addr, bool locals,
			GElf_Sym *sym, uint64_t *value)
{
	uint64_t m = 0;
	range_highest_end(&x->global, addr, &m);
	if (locals)
		range_highest_end(&x->local, addr, &m);
	if (m > addr)
		return -2;
	if (!is_label(&x->global, m) && !(locals && is_label(&x->local, m)))
		return -1;
	if (!x->labels_exact)
		return -2;
	if (!x->sections_read) {
		x->sections_read = true;
		if (!read_sections(x, mod)) {
			x->labels_exact = false;
			return -2;
		}
	}
	int i = locals ? range_label_at(x, &x->local, m, addr) : -1;
	if (i < 0)
		i = range_label_at(x, &x->global, m, addr);
	if (i < 0)
		return -1;
	GElf_Addr v;
	if (!dwfl_module_getsym_info(mod, i, sym, &v, NULL, NULL, NULL) || v != m)
		return -2;
	*value = v;
	return i;
}

const char *dbg_file_addrinfo(struct dbg_file *f, GElf_Addr addr, GElf_Off *off, GElf_Sym *sym)
{
	if (!f->addrs)
		f->addrs = addrindex_build(f->mod);
	struct dbg_addrindex *x = f->addrs;
	uint64_t value = 0;
	int best = x ? range_best(f->mod, &x->global, addr, sym, &value) : -2;
	bool locals = best == -1 && x->has_locals && !is_label(&x->global, addr);
	if (locals)
		best = range_best(f->mod, &x->local, addr, sym, &value);
	if (best == -1)
		best = label_answer(x, f->mod, addr, locals, sym, &value);
	if (best == -1) {
		*off = addr;
		return NULL;
	}
	if (best < 0)
		return dwfl_module_addrinfo(f->mod, addr, off, sym, NULL, NULL, NULL);
	*off = addr - value;
	/* Read aside: through the mapping, the kernel would map a block of
	 * the string table around each name. */
	GElf_Sym again;
	GElf_Addr again_value;
	return dbg_symnames_name(&f->names, f->mod, best, &again, &again_value);
}
