/* Unit tests for dwarf/: modules, struct layouts, symbols, symbolization
 * and inline levels, against the fixture program (tests/unit/data) mapped
 * into a crafted core.  The oracles are the compiler (offsetof, sizeof of
 * the same header), the fixture's ELF symbol table read with libelf, and
 * the source lines the fixture pins with #line. */
#include <elf.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../base/array.h"
#include "../../dwarf/internal.h"
#include "craft.h"
#include "data/unit_fixture.h"

#define UNIT_GROUP "dwarf"
#include "unit.h"

#define BIAS CRAFT_FIXTURE_BIAS

struct fixture {
	const char *name;           /* "unit_fixture" or "unit_fixture.stripped" */
	const char *path;
	bool debug;                 /* has DWARF and .symtab */
	struct craft_session cs;
};

static bool fixture_open(struct fixture *fx, const char *path, bool debug)
{
	fx->path = path;
	fx->debug = debug;
	struct craft_core *c = craft_create();
	uint64_t regs[CORE_REG_COUNT] = { 0 };
	regs[CORE_REG_RSP] = 0x7ffd00001000;
	craft_prstatus(craft_notes(c), 4242, SIGSEGV, regs);
	bool ok = craft_map_executable(c, fx->path, BIAS) && craft_open(c, &fx->cs);
	craft_destroy(c);
	return ok;
}

static void fixture_close(struct fixture *fx)
{
	craft_close(&fx->cs);
}

/* CHECK with the fixture's name in front of NAME. */
#define FX_CHECK(fx, name, ok) CHECK(fx_label((fx), (name)), (ok))

static const char *fx_label(const struct fixture *fx, const char *name)
{
	static char label[256];
	snprintf(label, sizeof(label), "%s: %s", fx->name, name);
	return label;
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash ? slash + 1 : path;
}

static void test_modules(struct fixture *fx)
{
	struct dbg_session *s = fx->cs.s;
	FX_CHECK(fx, "one module: the executable", dbg_module_count(s) == 1);
	const struct dbg_module_info *m = dbg_module_get(s, 0);
	if (!m)
		return;
	FX_CHECK(fx, "module path, start and build-id",
		 m->is_main && m->path && strcmp(m->path, fx->path) == 0 && m->start == BIAS &&
		 m->build_id && strlen(m->build_id) == 40);
	FX_CHECK(fx, fx->debug ? "debuginfo is the file" : "no debuginfo",
		 fx->debug ? m->debuginfo && strcmp(m->debuginfo, fx->path) == 0 : !m->debuginfo);
	FX_CHECK(fx, "no warnings opening the session", fx->cs.core->nwarnings == 0);
	for (size_t i = 0; i < fx->cs.core->nwarnings; i++)
		printf("    warning: %s\n", fx->cs.core->warnings[i]);
}

struct member_case {
	const char *type, *member;
	size_t offset;
};

#define MEMBER(T, M) { #T, #M, offsetof(struct T, M) }

static void test_layouts(struct fixture *fx)
{
	static const struct member_case members[] = {
		MEMBER(fx_layout, kind), MEMBER(fx_layout, at), MEMBER(fx_layout, count),
		MEMBER(fx_layout, block), MEMBER(fx_layout, any), MEMBER(fx_layout, path),
		MEMBER(fx_layout, last), MEMBER(fx_point, tag), MEMBER(fx_point, x),
		MEMBER(fx_point, y),
		MEMBER(AsyncStackRoot, topFrame), MEMBER(AsyncStackRoot, nextRoot),
		MEMBER(AsyncStackRoot, stackFramePtr), MEMBER(AsyncStackRoot, returnAddress),
		MEMBER(AsyncStackFrame, parentFrame), MEMBER(AsyncStackFrame, instructionPointer),
		MEMBER(AsyncStackFrame, stackRoot),
		MEMBER(recorder_info, name), MEMBER(recorder_info, next), MEMBER(recorder_info, ring),
		MEMBER(recorder_info, data), MEMBER(recorder_ring, writer),
		MEMBER(recorder_ring, overflow), MEMBER(recorder_entry, where),
		MEMBER(recorder_entry, args),
	};
	struct dbg_session *s = fx->cs.s;
	char name[160];
	for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		const struct member_case *m = &members[i];
		uint64_t off = 0;
		bool found = dbg_member_offset(s, m->type, m->member, &off);
		snprintf(name, sizeof(name), "%s.%s %s", m->type, m->member,
			 fx->debug ? "at its offsetof" : "unknown without DWARF");
		FX_CHECK(fx, name, fx->debug ? found && off == m->offset : !found);
	}
	struct {
		const char *type;
		size_t size;
	} sizes[] = {
		{ "fx_layout", sizeof(struct fx_layout) }, { "fx_point", sizeof(struct fx_point) },
		{ "AsyncStackRoot", sizeof(struct AsyncStackRoot) },
		{ "recorder_entry", sizeof(struct recorder_entry) },
		{ "recorder_info", sizeof(struct recorder_info) },
	};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t size = 0;
		bool found = dbg_type_size(s, sizes[i].type, &size);
		snprintf(name, sizeof(name), "sizeof %s", sizes[i].type);
		FX_CHECK(fx, name, fx->debug ? found && size == sizes[i].size : !found);
	}
	uint64_t v;
	FX_CHECK(fx, "missing member", !dbg_member_offset(s, "fx_layout", "nothing", &v));
	FX_CHECK(fx, "missing type", !dbg_member_offset(s, "fx_nothing", "kind", &v) &&
					 !dbg_type_size(s, "fx_nothing", &v));
	FX_CHECK(fx, "a member is not a prefix match", !dbg_member_offset(s, "fx_layout", "kin", &v));
}

static bool count_prefix(void *ctx, const char *name, uint64_t addr)
{
	size_t *n = ctx;
	if (addr == craft_fixture_symbol(name))
		(*n)++;
	return true;
}

static void test_symbols(struct fixture *fx)
{
	struct dbg_session *s = fx->cs.s;
	const char *path = craft_data_path("unit_fixture");
	uint64_t addr = 0, size = 0, want = 0, want_size = 0;
	bool found;

	craft_elf_symbol(path, "fx_outer", &want, &want_size);
	FX_CHECK(fx, "function at its runtime address",
		 dbg_find_symbol(s, "fx_outer", &addr, &size) && addr == BIAS + want &&
		 size == want_size && size > 0);

	craft_elf_symbol(path, "fx_tls_counter", &want, &want_size);
	FX_CHECK(fx, "TLS symbol as its offset in the TLS block",
		 dbg_find_symbol(s, "fx_tls_counter", &addr, &size) && addr == want &&
		 size == sizeof(long[4]));

	craft_elf_symbol(path, "folly_async_stack_root_tls_key", &want, NULL);
	found = dbg_find_symbol(s, "folly_async_stack_root_tls_key", &addr, &size);
	FX_CHECK(fx, "data symbol", found && addr == BIAS + want && size == 4);

	craft_elf_symbol(path, "recorders", &want, NULL);
	found = dbg_find_symbol(s, "recorders", &addr, &size);
	FX_CHECK(fx, fx->debug ? "static symbol from .symtab" : "static symbol gone with .symtab",
		 fx->debug ? found && addr == BIAS + want && size == 8 : !found);

	FX_CHECK(fx, "unknown symbol", !dbg_find_symbol(s, "fx_no_such_symbol", &addr, &size));

	uint64_t off = 99;
	const char *at = dbg_symbol_name_at(s, craft_fixture_symbol("fx_sink") + 3, &off);
	FX_CHECK(fx, "symbol containing an address, with the offset",
		 at && strcmp(at, "fx_sink") == 0 && off == 3);

	uint64_t memsz = 0, align = 0, want_memsz = 0, want_align = 0;
	craft_elf_tls(path, &want_memsz, &want_align);
	FX_CHECK(fx, "the executable's PT_TLS", dbg_main_tls(s, &memsz, &align) &&
							memsz == want_memsz && align == want_align &&
							memsz > 0);

	size_t matched = 0;
	size_t calls = dbg_symbols_with_prefix(s, "fx_native_", count_prefix, &matched);
	FX_CHECK(fx, "symbols by prefix, each at its address", calls == 8 && matched == 8);
}

/* The return address of the call to fx_sink in fx_outer: the byte after
 * the `call rel32` (e8) whose target is fx_sink, found in the fixture's
 * code as the crafted core holds it. */
static uint64_t sink_return_address(struct fixture *fx)
{
	uint64_t outer = craft_fixture_symbol("fx_outer"), sink = craft_fixture_symbol("fx_sink");
	uint64_t size = 0, v;
	craft_elf_symbol(craft_data_path("unit_fixture"), "fx_outer", &v, &size);
	unsigned char code[512];
	if (size < 5 || size > sizeof(code) || !core_read_bytes(fx->cs.core, outer, code, size))
		return 0;
	for (size_t i = 0; i + 5 <= size; i++) {
		int32_t rel;
		memcpy(&rel, code + i + 1, 4);
		if (code[i] == 0xe8 && outer + i + 5 + (uint64_t)(int64_t)rel == sink)
			return outer + i + 5;
	}
	return 0;
}

static bool location_is(const struct dbg_location *l, const char *function, int line,
			int depth)
{
	return l->function && strcmp(l->function, function) == 0 && l->line == line &&
	       l->inline_depth == depth && l->inlined == (depth > 0) &&
	       (line == 0 ? !l->file : l->file && strcmp(base_name(l->file), "unit_fixture.c") == 0);
}

static void print_locations(const struct dbg_location *locs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("    %s %s:%d inlined=%d depth=%d\n", locs[i].function ? locs[i].function : "?",
		       locs[i].file ? locs[i].file : "?", locs[i].line, locs[i].inlined,
		       locs[i].inline_depth);
}

static void test_symbolize(struct fixture *fx)
{
	struct dbg_session *s = fx->cs.s;
	uint64_t ret = sink_return_address(fx), outer = craft_fixture_symbol("fx_outer");
	struct dbg_location *locs = NULL;
	size_t n = 0;

	FX_CHECK(fx, "the call to fx_sink is in fx_outer's code", ret != 0);
	if (!ret)
		return;

	/* A caller's frame: looked up at pc-1, inside the call, in the two
	 * inline levels. */
	FX_CHECK(fx, "symbolize a return address", !dbg_symbolize(s, ret, false, &locs, &n));
	const char *name = fx->debug ? "return address: fx_innermost < fx_middle < fx_outer at the "
				       "call lines" : "return address: fx_outer without lines";
	bool ok = fx->debug ? n == 3 && location_is(&locs[0], "fx_innermost", FX_LINE_SINK_CALL, 2) &&
				      location_is(&locs[1], "fx_middle", FX_LINE_INNERMOST_CALL, 1) &&
				      location_is(&locs[2], "fx_outer", FX_LINE_MIDDLE_CALL, 0)
			    : n == 1 && location_is(&locs[0], "fx_outer", 0, 0);
	if (!FX_CHECK(fx, name, ok))
		print_locations(locs, n);
	const struct dbg_location *real = n ? &locs[n - 1] : NULL;
	FX_CHECK(fx, "the real frame's offset is from the raw pc, module offset from the module start",
	      real && real->has_offset && real->offset == ret - outer && real->module &&
	      strcmp(real->module, fx->path) == 0 && real->has_module_offset &&
	      real->module_offset == ret - BIAS);
	dbg_locations_free(locs, n);

	/* The same pc as an activation (where the thread stopped): the
	 * statement after the call. */
	FX_CHECK(fx, "symbolize an activation pc", !dbg_symbolize(s, ret, true, &locs, &n));
	ok = fx->debug ? n == 3 && location_is(&locs[0], "fx_innermost", FX_LINE_AFTER_SINK, 2)
		       : n == 1 && location_is(&locs[0], "fx_outer", 0, 0);
	if (!FX_CHECK(fx, "activation pc: the statement after the call", ok))
		print_locations(locs, n);
	dbg_locations_free(locs, n);

	/* A return address at a function's first byte (its caller ended in a
	 * call that does not return) belongs to the function before it. */
	FX_CHECK(fx, "symbolize a function's entry", !dbg_symbolize(s, outer, true, &locs, &n));
	FX_CHECK(fx, "entry as an activation: the function itself at offset 0",
	      n >= 1 && locs[n - 1].function && strcmp(locs[n - 1].function, "fx_outer") == 0 &&
	      locs[n - 1].has_offset && locs[n - 1].offset == 0);
	dbg_locations_free(locs, n);
	uint64_t before_off;
	const char *before = dbg_symbol_name_at(s, outer - 1, &before_off);
	char *before_name = before ? strdup(before) : NULL;
	FX_CHECK(fx, "symbolize a return address at an entry",
		 !dbg_symbolize(s, outer, false, &locs, &n));
	FX_CHECK(fx, "entry as a return address: the function before it (pc-1)",
	      n >= 1 && before_name && locs[n - 1].function &&
	      strcmp(locs[n - 1].function, before_name) == 0 && strcmp(before_name, "fx_outer") != 0);
	free(before_name);
	dbg_locations_free(locs, n);

	FX_CHECK(fx, "an address in no module", !dbg_symbolize(s, 0x1000, true, &locs, &n) &&
							n == 1 && !locs[0].function && !locs[0].module &&
							!locs[0].has_module_offset);
	dbg_locations_free(locs, n);
}

static void run(const char *path, const char *name, bool debug)
{
	struct fixture fx = { .name = name };
	if (!FX_CHECK(&fx, "crafted core and session open", fixture_open(&fx, path, debug)))
		return;
	test_modules(&fx);
	test_layouts(&fx);
	test_symbols(&fx);
	test_symbolize(&fx);
	fixture_close(&fx);
}

/* Whether dbg_file_addrinfo answers ADDR as libdwfl's dwfl_module_addrinfo
 * (the oracle) does; libdwfl's name and symbol in *ORACLE and *SYM. */
static bool addrinfo_agrees(struct dbg_file *f, GElf_Addr addr, const char **oracle, GElf_Sym *sym)
{
	GElf_Off o1 = 0, o2 = 0;
	GElf_Sym s2;
	const char *n1 = dwfl_module_addrinfo(f->mod, addr, &o1, sym, NULL, NULL, NULL);
	const char *n2 = dbg_file_addrinfo(f, addr, &o2, &s2);
	*oracle = n1;
	if (!n1 || !n2)
		return n1 == n2;
	return strcmp(n1, n2) == 0 && o1 == o2 && sym->st_value == s2.st_value &&
	       sym->st_size == s2.st_size && sym->st_info == s2.st_info;
}

/* dbg_file_addrinfo answers as libdwfl's dwfl_module_addrinfo (the
 * oracle) around every STEP-th symbol of the file at PATH: below, at, inside
 * and past each, where sized, sizeless, local, global and aliased symbols
 * meet. */
static void check_addrinfo(const char *label, const char *path, int step, bool want_sizeless)
{
	struct dbg_cache *cache = dbg_cache_create();
	struct dbg_file *f = cache ? dbg_cache_file(cache, NULL, path) : NULL;
	int n = f ? dwfl_module_getsymtab(f->mod) : -1;
	size_t tried = 0, same = 0, sizeless = 0, none = 0;
	for (int i = 1; i < n; i += step) {
		GElf_Sym s;
		GElf_Addr v;
		if (!dwfl_module_getsym_info(f->mod, i, &s, &v, NULL, NULL, NULL) || !v)
			continue;
		/* The last two land between symbols, where only a sizeless
		 * symbol may answer. */
		GElf_Addr probes[] = { v - 1, v, v + s.st_size / 2, v + s.st_size - 1, v + s.st_size,
				       v + s.st_size + 8, v - 64 };
		for (size_t k = 0; k < sizeof(probes) / sizeof(probes[0]); k++) {
			const char *oracle;
			GElf_Sym s1;
			tried++;
			same += addrinfo_agrees(f, probes[k], &oracle, &s1);
			sizeless += oracle && s1.st_size == 0;
			none += !oracle;
		}
	}
	char name[128];
	snprintf(name, sizeof(name),
		 "%s: symbol by address as libdwfl's (%zu addresses; %zu sizeless answers, %zu none)",
		 label, tried, sizeless, none);
	CHECK(name, n > 0 && tried > 0 && same == tried && (!want_sizeless || (sizeless && none)));
	dbg_cache_destroy(cache);
}


/* Pages of [P, P + SIZE) mapped into this process, from /proc/self/pagemap. */
static size_t resident_pages(const void *p, size_t size, size_t *pages)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t first = (uintptr_t)p / (uintptr_t)page, last = ((uintptr_t)p + size - 1) / (uintptr_t)page;
	FILE *pm = fopen("/proc/self/pagemap", "rb");
	size_t resident = 0;
	*pages = 0;
	for (uintptr_t i = first; pm && i <= last; i++) {
		uint64_t entry = 0;
		if (fseek(pm, (long)(i * 8), SEEK_SET) != 0 || fread(&entry, 8, 1, pm) != 1)
			break;
		resident += entry >> 63;
		(*pages)++;
	}
	if (pm)
		fclose(pm);
	return resident;
}

/* Symbolizing by address (which indexes every symbol's name) leaves the
 * file's string table unmapped: names are read with pread, not through
 * libelf's mapping, where each name would map a block of the table. */
static void check_names_aside(const char *label, const char *path)
{
	struct dbg_cache *cache = dbg_cache_create();
	struct dbg_file *f = cache ? dbg_cache_file(cache, NULL, path) : NULL;
	int n = f ? dwfl_module_getsymtab(f->mod) : -1;
	size_t named = 0;
	for (int i = 1; i < n; i += 3) {
		GElf_Sym s, s2;
		GElf_Addr v;
		GElf_Off off;
		if (!dwfl_module_getsym_info(f->mod, i, &s, &v, NULL, NULL, NULL))
			continue;
		const char *name = dbg_file_addrinfo(f, v + s.st_size / 2, &off, &s2);
		named += name && name[0];
		dbg_file_addrinfo(f, v + s.st_size + 8, &off, &s2);
	}
	GElf_Sym s;
	GElf_Addr v;
	Elf *elf = NULL;
	const char *name = n > 1 ? dwfl_module_getsym_info(f->mod, 1, &s, &v, NULL, &elf, NULL) : NULL;
	size_t pages = 0, resident = 0;
	for (Elf_Scn *scn = elf ? elf_nextscn(elf, NULL) : NULL; name && scn; scn = elf_nextscn(elf, scn)) {
		Elf_Data *d = elf_getdata(scn, NULL);
		if (d && d->d_buf == name - s.st_name)
			resident = resident_pages(d->d_buf, d->d_size, &pages);
	}
	char what[160];
	snprintf(what, sizeof(what), "%s: %zu names read, %zu of the string table's %zu pages mapped",
		 label, named, resident, pages);
	CHECK(what, named > 100 && pages >= 8 && resident * 4 < pages);
	dbg_cache_destroy(cache);
}

/* Where the file at PATH has its .symtab and the string table it links. */
static bool symtab_spans(const char *path, size_t *sym_off, size_t *sym_size, size_t *str_off,
			 size_t *str_size)
{
	FILE *fp = fopen(path, "rb");
	Elf *elf = fp ? elf_begin(fileno(fp), ELF_C_READ, NULL) : NULL;
	bool found = false;
	for (Elf_Scn *scn = elf ? elf_nextscn(elf, NULL) : NULL; scn && !found; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh, str;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB &&
		    gelf_getshdr(elf_getscn(elf, sh.sh_link), &str)) {
			*sym_off = sh.sh_offset;
			*sym_size = sh.sh_size;
			*str_off = str.sh_offset;
			*str_size = str.sh_size;
			found = true;
		}
	}
	if (elf)
		elf_end(elf);
	if (fp)
		fclose(fp);
	return found;
}

/* Symbol tables with bytes changed at random: symbolizing by address
 * answers as libdwfl does on the same file, or both give nothing. */
static void check_hostile_symbols(const char *path, int mutants)
{
	size_t sym_off = 0, sym_size = 0, str_off = 0, str_size = 0, len = 0;
	char *image = NULL;
	FILE *fp = fopen(path, "rb");
	if (fp && fseek(fp, 0, SEEK_END) == 0 && (len = (size_t)ftell(fp)) > 0 &&
	    (image = malloc(len)) && fseek(fp, 0, SEEK_SET) == 0)
		len = fread(image, 1, len, fp);
	if (fp)
		fclose(fp);
	char tmp[] = "/tmp/hostile-symbols-XXXXXX";
	int fd = mkstemp(tmp);
	bool ok = image && fd >= 0 &&
		  symtab_spans(path, &sym_off, &sym_size, &str_off, &str_size) && str_size > 1 &&
		  sym_off + sym_size <= len && str_off + str_size <= len;
	size_t tried = 0, same = 0;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	for (int m = 0; ok && m < mutants; m++) {
		char *copy = malloc(len);
		if (!copy)
			break;
		memcpy(copy, image, len);
		for (int k = 0; k <= m % 8; k++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			size_t at = (size_t)(seed >> 33);
			/* The table's last NUL stays: without it libdwfl reads on
			 * past the table, where asyncore stops. */
			at = k % 2 ? sym_off + at % sym_size : str_off + at % (str_size - 1);
			copy[at] = (char)(seed >> 17);
		}
		bool written = pwrite(fd, copy, len, 0) == (ssize_t)len;
		free(copy);
		struct dbg_cache *cache = written ? dbg_cache_create() : NULL;
		struct dbg_file *f = cache ? dbg_cache_file(cache, NULL, tmp) : NULL;
		int n = f ? dwfl_module_getsymtab(f->mod) : -1;
		for (int i = 1; i < n; i++) {
			GElf_Sym s;
			GElf_Addr v;
			if (!dwfl_module_getsym_info(f->mod, i, &s, &v, NULL, NULL, NULL))
				continue;
			GElf_Addr probes[] = { v, v + s.st_size / 2, v + s.st_size + 8 };
			for (size_t p = 0; p < sizeof(probes) / sizeof(probes[0]); p++) {
				const char *oracle;
				GElf_Sym s1;
				tried++;
				same += addrinfo_agrees(f, probes[p], &oracle, &s1);
			}
		}
		dbg_cache_destroy(cache);
	}
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	free(image);
	char name[160];
	snprintf(name, sizeof(name), "%d mutants of %s's symbol table: by address as libdwfl's "
		 "(%zu addresses, %zu the same)", mutants, "unit_fixture", tried, same);
	CHECK(name, ok && tried > 0 && same == tried);
}

/* An address's file and line as libdwfl's dwfl_module_getsrc gives them
 * (the oracle) and as dwarf/lines.c does. */
static bool same_row(struct dbg_file *f, Dwarf_Addr addr)
{
	Dwarf_Addr bias;
	Dwarf_Die *cudie = dwfl_module_addrdie(f->mod, addr, &bias);
	Dwfl_Line *dl = dwfl_module_getsrc(f->mod, addr);
	int want = 0, got = 0;
	const char *w = dl ? dwfl_lineinfo(dl, NULL, &want, NULL, NULL, NULL) : NULL;
	const char *g = cudie ? dbg_lines_at(f, cudie, addr - bias, &got) : NULL;
	return want == got && (w == g || (w && g && strcmp(w, g) == 0));
}

/* Every STEP-th row of every unit of the file at PATH, and around it, found
 * as libdwfl finds it with a budget of BUDGET rows: unit by unit, then
 * round-robin over the units, so that units ended past the budget are
 * decoded again. */
static void check_lines(const char *label, const char *path, size_t budget, size_t step)
{
	struct dbg_cache *cache = dbg_cache_create();
	struct dbg_file *f = cache ? dbg_cache_file(cache, NULL, path) : NULL;
	Dwarf_Addr bias;
	Dwarf *dw = f && dbg_lines_set_budget(f, budget) ? dwfl_module_getdwarf(f->mod, &bias) : NULL;
	Dwarf_Addr *addrs = NULL;
	size_t n = 0, cap = 0, units = 0, tried = 0, same = 0;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dw && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t nlines;
		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_getsrclines(&cu, &lines, &nlines) == 0) {
			units++;
			for (size_t i = 0; i < nlines; i += step) {
				Dwarf_Addr a;
				if (dwarf_lineaddr(dwarf_onesrcline(lines, i), &a) != 0 ||
				    !base_array_reserve(&addrs, &cap, n + 1, sizeof(*addrs)))
					continue;
				addrs[n++] = a + bias;
			}
		}
		off = next;
	}
	for (size_t i = 0; i < n; i++)
		for (Dwarf_Addr a = addrs[i] - 1; a <= addrs[i] + 1; a++, tried++)
			same += same_row(f, a);
	size_t stride = n / 97 + 1;
	for (size_t start = 0; start < stride; start++)
		for (size_t i = start; i < n; i += stride, tried++)
			same += same_row(f, addrs[i]);
	char name[160];
	snprintf(name, sizeof(name), "%s: file and line as libdwfl's, %zu units, %zu addresses, "
		 "budget %zu rows", label, units, tried, budget);
	CHECK(name, units > 1 && tried > 0 && same == tried);
	free(addrs);
	dbg_cache_destroy(cache);
}

/* Where libdwfl's local search finds a debug file for a stripped copy of the
 * fixture: dbg_local_debuginfo_possible says a file may exist exactly when
 * dwfl_standard_find_debuginfo (the oracle) finds one. */
struct debug_layout {
	const char *what;
	const char *place;          /* where the debug file goes, under the directory */
	const char *main;           /* the main file's name given to the search */
	bool found;
};

static bool layout_agrees(const char *dir, const struct debug_layout *l)
{
	char cmd[8192], place[4200] = "", file[4096], debug_dir[4096];
	if (l->place)
		snprintf(place, sizeof(place), "mkdir -p $(dirname %s); cp %s %s", l->place,
			 craft_data_path("unit_fixture"), l->place);
	snprintf(cmd, sizeof(cmd), "set -e; cd %s; rm -rf lib debug link; mkdir -p lib debug link; "
		 "cp %s lib/prog; ln -s ../lib/prog link/alias; %s", dir,
		 craft_data_path("unit_fixture.stripped"), place);
	if (system(cmd) != 0)
		return false;
	snprintf(file, sizeof(file), "%s/%s", dir, l->main);
	snprintf(debug_dir, sizeof(debug_dir), "%s/debug", dir);
	const char *dirs[] = { debug_dir };
	struct dbg_cache *cache = dbg_cache_create();
	struct dbg_file *f = cache && !dbg_cache_set_debug_dirs(cache, dirs, 1) ?
			     dbg_cache_file(cache, NULL, file) : NULL;
	bool possible = f && dbg_local_debuginfo_possible(cache->debuginfo_path, f->mod, file, NULL, 0);
	char *name = NULL;
	void *unused = NULL;
	int fd = f ? dwfl_standard_find_debuginfo(f->mod, &unused, NULL, 0, file, NULL, 0, &name) : -1;
	if (fd >= 0)
		close(fd);
	free(name);
	dbg_cache_destroy(cache);
	return possible == (fd >= 0) && (fd >= 0) == l->found;
}

static void test_debug_search(void)
{
	char dir[] = "/tmp/asyncore-debugpath-XXXXXX";
	if (!CHECK("debug search: temporary directory", mkdtemp(dir) != NULL))
		return;
	char bid[64] = "", place_bid[128], place_tail[4200];
	GElf_Addr vaddr;
	const unsigned char *bits;
	struct dbg_cache *cache = dbg_cache_create();
	struct dbg_file *f = cache ? dbg_cache_file(cache, NULL, craft_data_path("unit_fixture")) : NULL;
	int len = f ? dwfl_module_build_id(f->mod, &bits, &vaddr) : 0;
	char *h = len > 0 ? dbg_hex(bits, (size_t)len) : NULL;
	snprintf(bid, sizeof(bid), "%s", h ? h : "??");
	free(h);
	dbg_cache_destroy(cache);
	snprintf(place_bid, sizeof(place_bid), "debug/.build-id/%.2s/%s.debug", bid, bid + 2);
	snprintf(place_tail, sizeof(place_tail), "debug%s/lib/prog.debug", dir);
	const struct debug_layout layouts[] = {
		{ "none anywhere", NULL, "lib/prog", false },
		{ "in .debug beside it", "lib/.debug/prog.debug", "lib/prog", true },
		{ "under an absolute directory, by the main file's directory", place_tail,
		  "lib/prog", true },
		{ "by build-id", place_bid, "lib/prog", true },
		{ "beside the file a symbolic link names", "lib/.debug/prog.debug", "link/alias", true },
		{ "of another name", "lib/.debug/other.debug", "lib/prog", false },
	};
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		char name[256];
		snprintf(name, sizeof(name), "debug search: a debug file %s: found as libdwfl finds it",
			 layouts[i].what);
		CHECK(name, layout_agrees(dir, &layouts[i]));
	}
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK("debug search: temporary directory removed", system(cmd) == 0);
}

int main(void)
{
	craft_each_fixture(run);
	check_addrinfo("unit_fixture", craft_data_path("unit_fixture"), 1, false);
	check_addrinfo("libc", "/lib/x86_64-linux-gnu/libc.so.6", 7, false);
	check_addrinfo("many symbols", craft_data_path("many_symbols.so"), 97, true);
	check_names_aside("many symbols", craft_data_path("many_symbols.so"));
	check_hostile_symbols(craft_data_path("unit_fixture"), 200);
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[len > 0 ? len : 0] = '\0';
	check_lines("this test", self, 60000, 3);
	check_lines("this test", self, 200, 13);
	test_debug_search();
	return unit_exit();
}
