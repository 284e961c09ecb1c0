/* Modules of a core without NT_FILE (qemu-user's cores, some older
 * kernels): the dynamic linker's list of loaded objects (r_debug.r_map,
 * found through the executable's DT_DEBUG) names every shared library and
 * where it is loaded.  libdwfl follows that list too, but opens each name as
 * it is on this machine: the libraries of a core from another machine, or
 * another architecture, are under --sysroot, or found by build-id.
 *
 * Each file is checked against the core before it is reported: its machine
 * is the core's, its PT_DYNAMIC lies at the link map's l_ld, and its
 * build-id is the one in the core's memory when the core saved that page. */
#include "internal.h"

#include "../corefile/mapped.h"

#include <elfutils/libdwelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINK_MAP_MAX 4096u          /* loaded objects followed on r_debug's list */
#define DYNAMIC_MAX 1024u           /* entries of the executable's dynamic section read */
#define NOTES_MAX 4096u             /* bytes of a module's notes searched in memory */

/* One loaded object of the list. */
struct loaded {
	uint64_t l_addr, l_ld;
	char name[PATH_MAX];
};

/* The executable's ELF file (as libdwfl reported it) and its load bias. */
static Elf *main_elf(struct dbg_session *s, Dwarf_Addr *bias)
{
	struct core *core = s->core;
	uint64_t probe = core->auxv.phdr ? core->auxv.phdr : core->auxv.entry;
	Dwfl_Module *mod = probe ? dwfl_addrmodule(s->dwfl, probe) : NULL;
	return mod ? dwfl_module_getelf(mod, bias) : NULL;
}

/* The executable's program interpreter (PT_INTERP) into NAME. */
static void interp_name(struct dbg_session *s, char *name, size_t size)
{
	Dwarf_Addr bias;
	Elf *elf = main_elf(s, &bias);
	size_t phnum, filesize;
	const char *raw = elf ? elf_rawfile(elf, &filesize) : NULL;
	if (!raw || elf_getphdrnum(elf, &phnum) != 0)
		return;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP && ph.p_offset < filesize &&
		    ph.p_filesz <= filesize - ph.p_offset && ph.p_filesz > 1 && ph.p_filesz <= size &&
		    raw[ph.p_offset + ph.p_filesz - 1] == '\0') {
			memcpy(name, raw + ph.p_offset, ph.p_filesz);
			return;
		}
	}
}

/* The address of r_debug from the executable's DT_DEBUG, 0 when unknown. */
static uint64_t r_debug_address(struct dbg_session *s)
{
	struct core *core = s->core;
	Dwarf_Addr bias;
	Elf *elf = main_elf(s, &bias);
	size_t phnum;
	if (!elf || elf_getphdrnum(elf, &phnum) != 0)
		return 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_DYNAMIC)
			continue;
		uint64_t at = ph.p_vaddr + bias;
		for (unsigned n = 0; n < DYNAMIC_MAX; n++, at += 16) {
			uint64_t tag, val;
			if (!core_read_u64(core, at, &tag) || !core_read_u64(core, at + 8, &val) ||
			    tag == DT_NULL)
				return 0;
			if (tag == DT_DEBUG)
				return val;
		}
	}
	return 0;
}

/* The build-id in the notes the core saved at [AT, AT+SIZE), a module's
 * PT_NOTE, into ID[0, *LEN). */
static bool notes_build_id(struct core *core, uint64_t at, uint64_t size,
			   unsigned char id[CORE_BUILD_ID_MAX], size_t *len)
{
	return size <= NOTES_MAX && core_saved_build_id(core, at, size, id, len) && *len > 0;
}

/* The build-id the core saved in the notes of the module whose PT_NOTE
 * segments FILE describes, loaded at L_ADDR. */
static bool memory_build_id(struct core *core, Elf *file, uint64_t l_addr,
			    unsigned char id[CORE_BUILD_ID_MAX], size_t *len)
{
	size_t phnum;
	if (elf_getphdrnum(file, &phnum) != 0)
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(file, (int)i, &ph) && ph.p_type == PT_NOTE &&
		    notes_build_id(core, l_addr + ph.p_vaddr, ph.p_filesz, id, len))
			return true;
	}
	return false;
}

/* The build-id of the object loaded at L_ADDR from the ELF and program
 * headers the core saved of it (a shared library's first page), when it did. */
static bool loaded_build_id(struct core *core, uint64_t l_addr, unsigned char id[CORE_BUILD_ID_MAX],
			    size_t *len)
{
	Elf64_Ehdr eh;
	if (!core_read_saved(core, l_addr, &eh, sizeof(eh)) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 64)
		return false;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (!core_read_saved(core, l_addr + eh.e_phoff + i * sizeof(ph), &ph, sizeof(ph)))
			return false;
		if (ph.p_type == PT_NOTE && notes_build_id(core, l_addr + ph.p_vaddr, ph.p_filesz, id, len))
			return true;
	}
	return false;
}

/* Whether the ELF file at PATH is the object O of the core: its machine,
 * its dynamic section at O's l_ld, the build-id the core saved.  A file of
 * the right machine that is not O is named in a warning. */
static bool file_is(struct dbg_session *s, const struct loaded *o, const char *path)
{
	int fd = core_open_regular(path);
	if (fd < 0)
		return false;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	size_t phnum;
	bool fits = false, dynamic = false;
	if (elf && gelf_getehdr(elf, &eh) && eh.e_machine == s->core->arch->machine &&
	    elf_getphdrnum(elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_DYNAMIC)
				dynamic = o->l_addr + ph.p_vaddr == o->l_ld;
		}
		unsigned char id[CORE_BUILD_ID_MAX];
		size_t len;
		const void *have = NULL;
		ssize_t have_len = dwelf_elf_gnu_build_id(elf, &have);
		bool same_id = !memory_build_id(s->core, elf, o->l_addr, id, &len) ||
			       (have_len == (ssize_t)len && memcmp(have, id, len) == 0);
		fits = dynamic && same_id;
		if (!fits)
			core_warn(s->core, "%s is not the %s the core loaded (%s); not used", path, o->name,
				  dynamic ? "another build-id" : "its dynamic section is elsewhere");
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return fits;
}

/* The file named by the build-id the core saved of O in a debug
 * directory's .build-id tree (the standard one first), into PATH. */
static const char *by_build_id(struct dbg_session *s, const struct loaded *o, char *path, size_t size)
{
	unsigned char id[CORE_BUILD_ID_MAX];
	size_t len;
	if (!loaded_build_id(s->core, o->l_addr, id, &len) || len < 2)
		return NULL;
	char hex[2 * CORE_BUILD_ID_MAX + 1];
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	for (size_t d = 0; d <= s->opts.ndebug_dirs; d++) {
		const char *dir = d == 0 ? "/usr/lib/debug" : s->opts.debug_dirs[d - 1];
		if (snprintf(path, size, "%s/.build-id/%.2s/%s", dir, hex, hex + 2) < (int)size &&
		    file_is(s, o, path))
			return path;
	}
	return NULL;
}

/* Report O from the first file that is it: under the sysroot, where the
 * core says, then by the build-id the core saved in the debug directories'
 * .build-id trees. */
static void report_loaded(struct dbg_session *s, const struct loaded *o)
{
	char path[PATH_MAX + 64];
	const char *found = NULL;
	const char *root = s->opts.sysroot;
	size_t rlen = root ? strlen(root) : 0;
	while (rlen > 1 && root[rlen - 1] == '/')
		rlen--;
	if (root && snprintf(path, sizeof(path), "%.*s%s%s", (int)rlen, root,
			     o->name[0] == '/' ? "" : "/", o->name) < (int)sizeof(path) &&
	    file_is(s, o, path))
		found = path;
	else if (o->name[0] == '/' && file_is(s, o, o->name))
		found = o->name;
	else
		found = by_build_id(s, o, path, sizeof(path));
	if (!found)
		return;
	dwfl_report_begin_add(s->dwfl);
	if (!dwfl_report_elf(s->dwfl, o->name, found, -1, o->l_addr, false))
		core_warn(s->core, "cannot report %s for %s: %s", found, o->name, dwfl_errmsg(-1));
	dwfl_report_end(s->dwfl, NULL, NULL);
}

void dbg_report_link_map(struct dbg_session *s)
{
	struct core *core = s->core;
	if (core->nfiles)
		return;     /* NT_FILE listed them, libdwfl reported them */
	uint64_t r_debug = r_debug_address(s), lm;
	if (!r_debug || !core_read_u64(core, r_debug + 8, &lm))
		return;
	/* A list that loops back on itself is read once: LM meeting a node
	 * remembered at each power of two ends the walk (Brent's cycle test). */
	uint64_t seen = 0;
	for (unsigned n = 0; lm && lm != seen && n < LINK_MAP_MAX; n++) {
		if ((n & (n - 1)) == 0)
			seen = lm;
		struct loaded o;
		uint64_t name_at, next;
		if (lm % 8 != 0 || !core_read_u64(core, lm, &o.l_addr) ||
		    !core_read_u64(core, lm + 8, &name_at) || !core_read_u64(core, lm + 16, &o.l_ld) ||
		    !core_read_u64(core, lm + 24, &next))
			return;
		if (!name_at || !core_read_string(core, name_at, o.name, sizeof(o.name)))
			o.name[0] = '\0';
		/* The dynamic linker's name is the executable's PT_INTERP, in a
		 * page qemu-user's cores do not save. */
		if (!o.name[0] && o.l_addr && o.l_addr == core->auxv.base)
			interp_name(s, o.name, sizeof(o.name));
		if (o.name[0] && !dwfl_addrmodule(s->dwfl, o.l_ld))
			report_loaded(s, &o);
		lm = next;
	}
}

/* The end of module M: its listed extent, or where the mappings of the
 * file mapped at its start end, when they go on past it (lldb lists the
 * first segment's size, under the name the module was loaded by, which
 * need not be the mapped path); NT_FILE is in address order. */
static uint64_t listed_end(const struct core *core, const struct core_module *m)
{
	uint64_t end = m->end;
	const char *path = NULL;
	for (size_t i = 0; i < core->nfiles; i++) {
		const struct core_mapped_file *f = &core->files[i];
		if (!f->path || f->start < m->start || f->start > end)
			continue;
		if (!path && f->start == m->start)
			path = f->path;
		if (path && strcmp(f->path, path) == 0 && f->end > end)
			end = f->end;
	}
	return end;
}

void dbg_report_listed(struct dbg_session *s)
{
	struct core *core = s->core;
	for (size_t i = 0; i < core->nmodules; i++) {
		const struct core_module *m = &core->modules[i];
		if (!m->path || m->end <= m->start || dwfl_addrmodule(s->dwfl, m->start))
			continue;
		dwfl_report_begin_add(s->dwfl);
		Dwfl_Module *mod = dwfl_report_module(s->dwfl, m->path, m->start, listed_end(core, m));
		if (!mod || (m->build_id_len &&
			     dwfl_module_report_build_id(mod, m->build_id, m->build_id_len, 0) != 0))
			core_warn(core, "cannot report %s at 0x%llx: %s", m->path, (unsigned long long)m->start,
				  dwfl_errmsg(-1));
		dwfl_report_end(s->dwfl, NULL, NULL);
	}
}

/* The read-only segments of M's file, as the core's process mapped them,
 * learned by the core: their pages, which a core without NT_FILE neither
 * saved nor names a file for, are then read from the file (.rodata's
 * constants, the text). */
static struct core_error *learn_segments(struct core *core, Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	const char *path = NULL;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t phnum;
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &path, NULL);
	if (!elf || !path || elf_getphdrnum(elf, &phnum) != 0)
		return NULL;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || (ph.p_flags & PF_W) ||
		    ph.p_filesz == 0 || ph.p_vaddr > UINT64_MAX - bias - ph.p_filesz)
			continue;
		struct core_error *err = core_mapped_learn(core, bias + ph.p_vaddr,
							   bias + ph.p_vaddr + ph.p_filesz, ph.p_offset, path);
		if (err)
			return err;
	}
	return NULL;
}

struct core_error *dbg_learn_unlisted(struct dbg_session *s)
{
	if (s->core->nfiles)
		return NULL;  /* NT_FILE names the files */
	for (size_t i = 0; i < s->nmodules; i++) {
		struct core_error *err = learn_segments(s->core, s->modules[i].mod);
		if (err)
			return err;
	}
	return NULL;
}
