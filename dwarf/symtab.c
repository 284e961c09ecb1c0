/* Symbol lookups by name and by address, and the executable's TLS block. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#include "../base/array.h"

/* Length of a symbol name without its default version ("pthread_join" of
 * "pthread_join@@GLIBC_2.34", as .symtab spells it): the dynamic linker
 * binds a plain name to the default version, so the plain name finds it. */
static size_t unversioned_len(const char *name)
{
	const char *at = strstr(name, "@@");
	return at ? (size_t)(at - name) : strlen(name);
}

/* True when symbol SNAME is NAME (PASS 0) or NAME's default version (1). */
static bool name_matches(const char *sname, const char *name, int pass)
{
	if (pass == 0)
		return strcmp(sname, name) == 0;
	size_t len = unversioned_len(sname);
	return sname[len] && strncmp(sname, name, len) == 0 && name[len] == 0;
}

/* Look NAME up in MOD; *ADDR is in MOD's address space (for STT_TLS: the
 * offset in the TLS block, and *TLS is set). */
static bool module_find_symbol(Dwfl_Module *mod, const char *name, uint64_t *addr,
			       uint64_t *size, bool *tls)
{
	int n = dwfl_module_getsymtab(mod);
	for (int pass = 0; pass < 2; pass++)
		for (int i = 1; i < n; i++) {
			GElf_Sym sym;
			GElf_Addr value;
			const char *sname = dwfl_module_getsym_info(mod, i, &sym, &value, NULL, NULL, NULL);
			if (!sname || sym.st_shndx == SHN_UNDEF || !name_matches(sname, name, pass))
				continue;
			*tls = GELF_ST_TYPE(sym.st_info) == STT_TLS;
			*addr = *tls ? sym.st_value : value;
			if (size)
				*size = sym.st_size;
			return true;
		}
	return false;
}

/* A hash index of a cached file's symbol names, so that a batch of cores
 * looks each name up in constant time.  A slot holds a symbol's index and
 * its key's hash only (a C++ program has hundreds of thousands of
 * symbols); the name is read back from the symbol table to compare. */
#define SYM_ALIAS 0x80000000u       /* the key is the name without "@@VERSION" */

struct symindex_slot {
	uint32_t sym;               /* symbol index | SYM_ALIAS; 0: empty */
	uint32_t hash;
};

struct dbg_symindex {
	Dwfl_Module *mod;
	struct dbg_symnames *names; /* while the index is built */
	struct symindex_slot *slots;
	size_t cap;
};

void dbg_symindex_destroy(struct dbg_symindex *index)
{
	if (!index)
		return;
	free(index->slots);
	free(index);
}

size_t dbg_name_hash_n(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return (size_t)h;
}

size_t dbg_name_hash(const char *s)
{
	return dbg_name_hash_n(s, strlen(s));
}

/* The symbol of SLOT and its key's length; NULL when it cannot be read.
 * While the index is built, the name may be cut after its first WANT bytes
 * (the key's length is then that of the cut name, and still tells whether
 * it is shorter than WANT). */
static const char *slot_symbol(const struct dbg_symindex *x, const struct symindex_slot *slot,
			       size_t want, GElf_Sym *sym, GElf_Addr *value, size_t *len)
{
	int i = (int)(slot->sym & ~SYM_ALIAS);
	const char *name = x->names ? dbg_symnames_peek(x->names, x->mod, i, want, sym, value)
				    : dwfl_module_getsym_info(x->mod, i, sym, value, NULL, NULL, NULL);
	if (name)
		*len = slot->sym & SYM_ALIAS ? unversioned_len(name) : strlen(name);
	return name;
}

/* The slot of key NAME[0..LEN) with HASH, or the empty slot where it would
 * go. */
static struct symindex_slot *symindex_slot(struct dbg_symindex *x, const char *name, size_t len,
					   uint32_t hash)
{
	for (size_t i = hash & (x->cap - 1);; i = (i + 1) & (x->cap - 1)) {
		struct symindex_slot *slot = &x->slots[i];
		GElf_Sym sym;
		GElf_Addr value;
		size_t klen;
		const char *key;
		if (!slot->sym || (slot->hash == hash &&
				   (key = slot_symbol(x, slot, len + 2, &sym, &value, &klen)) && klen == len &&
				   memcmp(key, name, len) == 0))
			return slot;
	}
}

/* Put symbol SYM under key NAME[0..LEN) unless the key is taken (the first
 * definition wins, as in a linear search).  X has room. */
static void symindex_put(struct dbg_symindex *x, uint32_t sym, const char *name, size_t len)
{
	uint32_t hash = (uint32_t)dbg_name_hash_n(name, len);
	struct symindex_slot *slot = symindex_slot(x, name, len, hash);
	if (!slot->sym)
		*slot = (struct symindex_slot){ .sym = sym, .hash = hash };
}

/* Room for KEYS keys at a load of at most one half. */
static bool symindex_reserve(struct dbg_symindex *x, size_t keys)
{
	size_t cap = x->cap ? x->cap : 16;
	while (cap < 2 * keys)
		cap *= 2;
	if (cap == x->cap)
		return true;
	struct symindex_slot *old = x->slots;
	size_t old_cap = x->cap;
	x->slots = calloc(cap, sizeof(*x->slots));
	if (!x->slots) {
		x->slots = old;
		return false;
	}
	x->cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].sym) {
			size_t j = old[i].hash & (cap - 1);
			while (x->slots[j].sym)
				j = (j + 1) & (cap - 1);
			x->slots[j] = old[i];
		}
	free(old);
	return true;
}

static struct dbg_symindex *symindex_build(Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	struct dbg_symindex *x = calloc(1, sizeof(*x));
	struct dbg_symnames names = { 0 };
	uint32_t *aliases = NULL;
	size_t naliases = 0, aliases_cap = 0, keys = 0;
	if (!x || n < 0 || (uint64_t)n >= SYM_ALIAS || !symindex_reserve(x, n > 0 ? (size_t)n : 1))
		goto fail;
	x->mod = mod;
	x->names = &names;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		const char *name = dbg_symnames_get(&names, mod, i, &sym, &value);
		if (!name || !*name || sym.st_shndx == SHN_UNDEF)
			continue;
		symindex_put(x, (uint32_t)i, name, strlen(name));
		keys++;
		if (!name[unversioned_len(name)])
			continue;
		if (!base_array_reserve(&aliases, &aliases_cap, naliases + 1, sizeof(*aliases)))
			goto fail;
		aliases[naliases++] = (uint32_t)i;
	}
	/* After every name as spelled, so that those win over an alias. */
	if (!symindex_reserve(x, keys + naliases))
		goto fail;
	for (size_t i = 0; i < naliases; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		const char *name = dbg_symnames_get(&names, mod, (int)aliases[i], &sym, &value);
		if (name)
			symindex_put(x, aliases[i] | SYM_ALIAS, name, unversioned_len(name));
	}
	free(aliases);
	dbg_symnames_close(&names);
	x->names = NULL;
	return x;
fail:
	free(aliases);
	dbg_symnames_close(&names);
	dbg_symindex_destroy(x);
	return NULL;
}

static bool file_find_symbol(struct dbg_file *f, const char *name, uint64_t *addr,
			     uint64_t *size, bool *tls)
{
	if (!f->symbols)
		f->symbols = symindex_build(f->mod);
	if (!f->symbols)
		return module_find_symbol(f->mod, name, addr, size, tls);
	size_t len = strlen(name);
	struct symindex_slot *slot = symindex_slot(f->symbols, name, len,
						   (uint32_t)dbg_name_hash_n(name, len));
	GElf_Sym sym;
	GElf_Addr value;
	size_t klen;
	if (!slot->sym || !slot_symbol(f->symbols, slot, len + 2, &sym, &value, &klen))
		return false;
	*tls = GELF_ST_TYPE(sym.st_info) == STT_TLS;
	*addr = *tls ? sym.st_value : value;
	if (size)
		*size = sym.st_size;
	return true;
}

bool dbg_file_find_symbol(struct dbg_file *f, const char *name, uint64_t *addr)
{
	bool tls;
	return file_find_symbol(f, name, addr, NULL, &tls) && !tls;
}

/* Prefer the cached file (full .symtab, also for ELF images libdwfl rebuilt
 * from memory); translate its addresses to the core's.  *TLS: an STT_TLS
 * symbol, whose *ADDR is its offset in the module's TLS block. */
static bool entry_find_symbol(struct dbg_session *s, struct dbg_module_entry *m, const char *name,
			      uint64_t *addr, uint64_t *size, bool *tls)
{
	struct dbg_file *f = dbg_module_file(s, m);
	if (f && file_find_symbol(f, name, addr, size, tls)) {
		Dwarf_Addr fbias = 0;
		dwfl_module_getelf(f->mod, &fbias);
		if (!*tls)
			*addr = *addr - fbias + m->bias;
		return true;
	}
	return !f && module_find_symbol(m->mod, name, addr, size, tls);
}

/* The module defining NAME, the executable first: a symbol it defines
 * wins, as in the dynamic linker.  NULL when none does. */
struct dbg_module_entry *dbg_symbol_module(struct dbg_session *s, const char *name, uint64_t *addr,
					   uint64_t *size, bool *tls)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < s->nmodules; i++) {
			struct dbg_module_entry *m = &s->modules[i];
			if (m->info.is_main != (pass == 0) || dbg_module_is_copy(s, m))
				continue;
			if (entry_find_symbol(s, m, name, addr, size, tls))
				return m;
		}
	return NULL;
}

bool dbg_find_symbol(struct dbg_session *s, const char *name, uint64_t *addr, uint64_t *size)
{
	bool tls;
	dbg_lock(s);
	bool found = dbg_symbol_module(s, name, addr, size, &tls) != NULL;
	dbg_unlock(s);
	return found;
}

/* The indexes of MOD's symbols named PREFIX..., in table order, in *OUT;
 * false when memory ran out (*OUT then holds the ones found before). */
static bool prefix_matches(Dwfl_Module *mod, const char *prefix, int **out, size_t *nout)
{
	size_t plen = strlen(prefix), cap = 0;
	int n = dwfl_module_getsymtab(mod);
	struct dbg_symnames names = { 0 };
	bool complete = true;
	*out = NULL;
	*nout = 0;
	for (int i = 1; i < n && complete; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		const char *name = dbg_symnames_get(&names, mod, i, &sym, &value);
		if (!name || strncmp(name, prefix, plen) != 0 || sym.st_shndx == SHN_UNDEF ||
		    GELF_ST_TYPE(sym.st_info) == STT_TLS)
			continue;
		complete = base_array_reserve(out, &cap, *nout + 1, sizeof(**out));
		if (complete)
			(*out)[(*nout)++] = i;
	}
	dbg_symnames_close(&names);
	return complete;
}

/* Symbols by name prefix kept with a file: every core of a batch makes the
 * same probes (the recorder's on every module). */
struct dbg_prefix_matches {
	char *prefix;
	int *syms;
	size_t n;
};

void dbg_prefix_matches_destroy(struct dbg_prefix_matches *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].prefix);
		free(v[i].syms);
	}
	free(v);
}

/* F's symbols named PREFIX..., found once and kept with F; NULL when memory
 * ran out before they were all found. */
static const struct dbg_prefix_matches *file_prefix_matches(struct dbg_file *f, const char *prefix)
{
	for (size_t i = 0; i < f->nprefixes; i++)
		if (strcmp(f->prefixes[i].prefix, prefix) == 0)
			return &f->prefixes[i];
	struct dbg_prefix_matches m = { .prefix = strdup(prefix) };
	if (!m.prefix || !prefix_matches(f->mod, prefix, &m.syms, &m.n) ||
	    !base_array_reserve(&f->prefixes, &f->prefixes_cap, f->nprefixes + 1,
				sizeof(*f->prefixes))) {
		free(m.prefix);
		free(m.syms);
		return NULL;
	}
	f->prefixes[f->nprefixes] = m;
	return &f->prefixes[f->nprefixes++];
}

/* Symbols SYMS[0..N) of one module; BIAS maps MOD's addresses to the
 * core's.  A name already reported (.symtab and .dynsym both list it) is
 * skipped. */
static bool module_prefix_walk(Dwfl_Module *mod, int64_t bias, const int *syms, size_t n,
			       bool (*fn)(void *, const char *, uint64_t), void *ctx, size_t *calls)
{
	bool go_on = true;
	uint64_t last_addr = 0;
	for (size_t k = 0; k < n && go_on; k++) {
		GElf_Sym sym;
		GElf_Addr value;
		const char *name = dwfl_module_getsym_info(mod, syms[k], &sym, &value, NULL, NULL, NULL);
		uint64_t addr = (uint64_t)((int64_t)value + bias);
		if (!name || (*calls > 0 && addr == last_addr))
			continue;
		last_addr = addr;
		(*calls)++;
		go_on = fn(ctx, name, addr);
	}
	return go_on;
}

/* The same for a module of the session without a cached file, or when the
 * file's matches cannot be kept: found for this walk only. */
static bool module_prefix_walk_once(Dwfl_Module *mod, int64_t bias, const char *prefix,
				    bool (*fn)(void *, const char *, uint64_t), void *ctx,
				    size_t *calls)
{
	int *syms;
	size_t n;
	prefix_matches(mod, prefix, &syms, &n);
	bool go_on = module_prefix_walk(mod, bias, syms, n, fn, ctx, calls);
	free(syms);
	return go_on;
}

size_t dbg_symbols_with_prefix(struct dbg_session *s, const char *prefix,
			       bool (*fn)(void *ctx, const char *name, uint64_t addr), void *ctx)
{
	size_t calls = 0;
	dbg_lock(s);  /* held through FN's calls: they may symbolize (recursive) */
	for (size_t i = 0; i < s->nmodules; i++) {
		struct dbg_module_entry *m = &s->modules[i];
		struct dbg_file *f = dbg_module_file(s, m);
		bool go_on;
		if (f) {
			Dwarf_Addr fbias = 0;
			dwfl_module_getelf(f->mod, &fbias);
			int64_t bias = (int64_t)m->bias - (int64_t)fbias;
			const struct dbg_prefix_matches *pm = file_prefix_matches(f, prefix);
			go_on = pm ? module_prefix_walk(f->mod, bias, pm->syms, pm->n, fn, ctx, &calls)
				   : module_prefix_walk_once(f->mod, bias, prefix, fn, ctx, &calls);
		} else {
			go_on = module_prefix_walk_once(m->mod, 0, prefix, fn, ctx, &calls);
		}
		if (!go_on)
			break;
	}
	dbg_unlock(s);
	return calls;
}

const char *dbg_symbol_name_at(struct dbg_session *s, uint64_t addr, uint64_t *offset)
{
	struct dbg_location *locs;
	size_t n;
	if (dbg_symbolize(s, addr, true, &locs, &n) || n == 0)
		return NULL;
	free(s->symbol_name);
	s->symbol_name = locs[n - 1].function;
	locs[n - 1].function = NULL;
	if (offset)
		*offset = locs[n - 1].has_offset ? locs[n - 1].offset : 0;
	dbg_locations_free(locs, n);
	return s->symbol_name;
}

bool dbg_main_tls(struct dbg_session *s, uint64_t *memsz, uint64_t *align)
{
	for (size_t i = 0; i < s->nmodules; i++) {
		if (!s->modules[i].info.is_main)
			continue;
		Dwarf_Addr bias;
		Elf *elf = dwfl_module_getelf(s->modules[i].mod, &bias);
		size_t phnum;
		if (!elf || elf_getphdrnum(elf, &phnum) != 0)
			return false;
		for (size_t j = 0; j < phnum; j++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)j, &ph) && ph.p_type == PT_TLS) {
				*memsz = ph.p_memsz;
				*align = ph.p_align ? ph.p_align : 1;
				return true;
			}
		}
		return false;
	}
	return false;
}
