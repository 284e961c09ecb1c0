/* Is a file on disk the executable that ran?  Judged from what the core
 * itself saved (never from files on disk, which may have changed since):
 * the build-id note in the executable's first page, and without one the
 * ELF header and program headers against AT_ENTRY, AT_PHDR, the saved
 * program headers and the NT_FILE mappings. */
#include "internal.h"

#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
	MAX_PHNUM = 256,            /* more is no executable we can check */
	MAX_DYNAMIC_SIZE = 65536,   /* bytes of a dynamic section compared */
	PAGE_MASK_4K = 4095,
};

/* What the core shows of its executable. */
struct core_exe {
	const char *path;           /* NT_FILE path of the mapping holding AT_PHDR */
	Elf64_Phdr *phdrs;          /* saved in the core, or NULL */
	size_t phnum;
	uint64_t bias;              /* load bias from the saved PT_PHDR */
	bool has_bias;
	bool notes_saved;           /* the core holds the executable's notes */
	unsigned char build_id[CORE_BUILD_ID_MAX];
	size_t build_id_len;        /* 0: none, or not saved (!notes_saved) */
};

/* The file given for it. */
struct file_exe {
	GElf_Ehdr ehdr;
	Elf64_Phdr *phdrs;
	size_t phnum;
	const void *build_id;       /* borrowed from the Elf */
	size_t build_id_len;
	const unsigned char *image; /* the file's bytes, borrowed from the Elf */
	size_t size;
};

static bool saved_phdrs(struct core *core, struct core_exe *ce)
{
	const struct core_auxv *av = &core->auxv;
	if (!av->phdr || av->phnum == 0 || av->phnum > MAX_PHNUM || av->phent != sizeof(Elf64_Phdr))
		return false;
	ce->phdrs = calloc(av->phnum, sizeof(Elf64_Phdr));
	if (!ce->phdrs)
		return false;
	if (!core_read_saved(core, av->phdr, ce->phdrs, av->phnum * sizeof(Elf64_Phdr))) {
		free(ce->phdrs);
		ce->phdrs = NULL;
		return false;
	}
	ce->phnum = av->phnum;
	return true;
}

static void saved_build_id(struct core *core, struct core_exe *ce)
{
	for (size_t i = 0; i < ce->phnum && !ce->build_id_len; i++) {
		const Elf64_Phdr *ph = &ce->phdrs[i];
		if (ph->p_type == PT_NOTE && core_saved_build_id(core, ce->bias + ph->p_vaddr, ph->p_filesz,
								 ce->build_id, &ce->build_id_len))
			ce->notes_saved = true;
	}
}

static void core_exe_init(struct core *core, struct core_exe *ce)
{
	memset(ce, 0, sizeof(*ce));
	uint64_t probe = core->auxv.phdr ? core->auxv.phdr : core->auxv.entry;
	const struct core_mapped_file *f = probe ? core_find_file(core, probe) : NULL;
	ce->path = f ? f->path : NULL;
	if (!saved_phdrs(core, ce))
		return;
	for (size_t i = 0; i < ce->phnum; i++)
		if (ce->phdrs[i].p_type == PT_PHDR) {
			ce->bias = core->auxv.phdr - ce->phdrs[i].p_vaddr;
			ce->has_bias = true;
		}
	if (ce->has_bias)
		saved_build_id(core, ce);
}

static bool file_exe_init(Elf *elf, struct file_exe *fe)
{
	memset(fe, 0, sizeof(*fe));
	size_t phnum;
	if (!gelf_getehdr(elf, &fe->ehdr) || fe->ehdr.e_ident[EI_CLASS] != ELFCLASS64 ||
	    elf_getphdrnum(elf, &phnum) != 0 || phnum == 0 || phnum > MAX_PHNUM)
		return false;
	fe->phdrs = calloc(phnum, sizeof(Elf64_Phdr));
	if (!fe->phdrs)
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph))
			return false;
		fe->phdrs[i] = (Elf64_Phdr){ ph.p_type, ph.p_flags, ph.p_offset, ph.p_vaddr,
					     ph.p_paddr, ph.p_filesz, ph.p_memsz, ph.p_align };
	}
	fe->phnum = phnum;
	fe->image = (const unsigned char *)elf_rawfile(elf, &fe->size);
	if (!fe->image)
		fe->size = 0;
	const void *bid = NULL;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &bid);
	if (n > 0) {
		fe->build_id = bid;
		fe->build_id_len = (size_t)n;
	}
	return true;
}

/* Address of the program header table in the file's own addresses. */
static bool file_phdr_vaddr(const struct file_exe *fe, uint64_t *vaddr)
{
	for (size_t i = 0; i < fe->phnum; i++)
		if (fe->phdrs[i].p_type == PT_PHDR) {
			*vaddr = fe->phdrs[i].p_vaddr;
			return true;
		}
	for (size_t i = 0; i < fe->phnum; i++) {
		const Elf64_Phdr *ph = &fe->phdrs[i];
		if (ph->p_type == PT_LOAD && fe->ehdr.e_phoff >= ph->p_offset &&
		    fe->ehdr.e_phoff - ph->p_offset < ph->p_filesz) {
			*vaddr = ph->p_vaddr + (fe->ehdr.e_phoff - ph->p_offset);
			return true;
		}
	}
	return false;
}

/* Runtime address - file address: 0 for ET_EXEC, else where AT_PHDR put
 * the program header table (the saved PT_PHDR's bias when AT_PHDR is
 * missing). */
static bool load_bias(const struct core *core, const struct core_exe *ce,
		      const struct file_exe *fe, uint64_t *bias)
{
	uint64_t vaddr;
	*bias = 0;
	if (fe->ehdr.e_type != ET_DYN)
		return true;
	if (!core->auxv.phdr) {
		*bias = ce->bias;
		return true;
	}
	if (!file_phdr_vaddr(fe, &vaddr))
		return false;
	*bias = core->auxv.phdr - vaddr;
	return true;
}

/* Does NT_FILE map PATH at START from file offset OFFSET? */
static bool mapped_at(const struct core *core, const char *path, uint64_t start, uint64_t offset)
{
	for (size_t i = 0; i < core->nfiles; i++) {
		const struct core_mapped_file *f = &core->files[i];
		if (f->start == start && f->offset == offset && strcmp(f->path, path) == 0)
			return true;
	}
	return false;
}

static bool maps_path(const struct core *core, const char *path)
{
	for (size_t i = 0; i < core->nfiles; i++)
		if (strcmp(core->files[i].path, path) == 0)
			return true;
	return false;
}

/* The dynamic section lies in the written data segment, which a core keeps
 * even without the ELF header page; two small programs can share every
 * load address, but rarely their _fini, string table size or symbol count.
 * The dynamic linker may have relocated pointers in place and stored
 * DT_DEBUG: a value matches as in the file or plus the bias.  True when it
 * agrees or the core did not save it. */
static bool dynamic_agrees(struct core *core, const struct file_exe *fe, uint64_t bias)
{
	const Elf64_Phdr *dyn = NULL;
	for (size_t i = 0; i < fe->phnum; i++)
		if (fe->phdrs[i].p_type == PT_DYNAMIC)
			dyn = &fe->phdrs[i];
	if (!dyn || dyn->p_filesz < sizeof(Elf64_Dyn) || dyn->p_filesz > MAX_DYNAMIC_SIZE ||
	    dyn->p_offset > fe->size || dyn->p_filesz > fe->size - dyn->p_offset)
		return true;
	size_t n = dyn->p_filesz / sizeof(Elf64_Dyn);
	Elf64_Dyn *saved = calloc(n, sizeof(*saved));
	if (!saved)
		return true;
	bool ok = true;
	if (core_read_saved(core, bias + dyn->p_vaddr, saved, n * sizeof(*saved))) {
		for (size_t i = 0; i < n && ok; i++) {
			Elf64_Dyn file;
			memcpy(&file, fe->image + dyn->p_offset + i * sizeof(file), sizeof(file));
			if (file.d_tag != saved[i].d_tag)
				ok = false;
			else if (file.d_tag != DT_DEBUG && saved[i].d_un.d_val != file.d_un.d_val &&
				 saved[i].d_un.d_val != file.d_un.d_val + bias)
				ok = false;
			if (file.d_tag == DT_NULL)
				break;
		}
	}
	free(saved);
	return ok;
}

/* The structural comparison; NULL when everything the core shows agrees,
 * else why not (written into WHY). */
static const char *compare_layout(struct core *core, const struct core_exe *ce,
				  const struct file_exe *fe, char *why, size_t whysz)
{
	GElf_Ehdr core_ehdr;
	if (gelf_getehdr(core->elf, &core_ehdr) && fe->ehdr.e_machine != core_ehdr.e_machine)
		return snprintf(why, whysz, "machine %u, the core's is %u", fe->ehdr.e_machine,
				core_ehdr.e_machine), why;
	if (fe->ehdr.e_type != ET_EXEC && fe->ehdr.e_type != ET_DYN)
		return snprintf(why, whysz, "not an executable (e_type %u)", fe->ehdr.e_type), why;
	uint64_t bias;
	if (!load_bias(core, ce, fe, &bias))
		return snprintf(why, whysz, "no loaded program header table"), why;
	if (ce->has_bias && ce->bias != bias)
		return snprintf(why, whysz, "load bias 0x%llx, the core's is 0x%llx",
				(unsigned long long)bias, (unsigned long long)ce->bias), why;
	if (core->auxv.entry && fe->ehdr.e_entry + bias != core->auxv.entry)
		return snprintf(why, whysz, "entry point 0x%llx, the core's AT_ENTRY is 0x%llx",
				(unsigned long long)(fe->ehdr.e_entry + bias),
				(unsigned long long)core->auxv.entry), why;
	if (ce->phdrs && (ce->phnum != fe->phnum ||
			  memcmp(ce->phdrs, fe->phdrs, fe->phnum * sizeof(Elf64_Phdr)) != 0))
		return snprintf(why, whysz, "program headers differ from the ones saved in the core"), why;
	if (!dynamic_agrees(core, fe, bias))
		return snprintf(why, whysz, "its dynamic section differs from the one saved in the core"),
		       why;
	if (!ce->path || !maps_path(core, ce->path))
		return NULL;
	for (size_t i = 0; i < fe->phnum; i++) {
		const Elf64_Phdr *ph = &fe->phdrs[i];
		if (ph->p_type != PT_LOAD || ph->p_filesz == 0)
			continue;
		uint64_t start = (bias + ph->p_vaddr) & ~(uint64_t)PAGE_MASK_4K;
		if (!mapped_at(core, ce->path, start, ph->p_offset & ~(uint64_t)PAGE_MASK_4K))
			return snprintf(why, whysz, "its load segment at 0x%llx (file offset 0x%llx) is "
					"not what the core maps", (unsigned long long)start,
					(unsigned long long)ph->p_offset), why;
	}
	return NULL;
}

static char *hex_or_none(const void *bytes, size_t len)
{
	char *h = len ? dbg_hex(bytes, len) : NULL;
	return h ? h : strdup("(none)");
}

static bool judge(struct dbg_session *s, const char *path, const struct core_exe *ce,
		  const struct file_exe *fe, uint64_t *bias)
{
	char why[256];
	const char *reason = NULL;
	if (!load_bias(s->core, ce, fe, bias))
		*bias = 0;
	if (ce->build_id_len) {
		if (fe->build_id_len != ce->build_id_len ||
		    memcmp(fe->build_id, ce->build_id, ce->build_id_len) != 0)
			reason = "";
	} else {
		reason = compare_layout(s->core, ce, fe, why, sizeof(why));
	}
	if (!reason)
		return true;
	char *have = hex_or_none(fe->build_id, fe->build_id_len);
	char *want = ce->notes_saved ? hex_or_none(ce->build_id, ce->build_id_len)
				     : strdup("(not saved in the core)");
	core_warn(s->core, "%s has build-id %s but the core's executable %s has build-id %s%s%s: not used",
		 path, have ? have : "?", ce->path ? ce->path : "(unknown)", want ? want : "?",
		 reason[0] ? "; " : "", reason);
	free(have);
	free(want);
	return false;
}

bool dbg_binary_matches(struct dbg_session *s, const char *path, uint64_t *bias)
{
	uint64_t unused;
	if (!bias)
		bias = &unused;
	struct core_exe ce;
	struct file_exe fe = { 0 };
	core_exe_init(s->core, &ce);
	bool ok = false;
	Elf *elf = NULL;
	int fd = core_open_regular(path);
	if (fd >= 0)
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !file_exe_init(elf, &fe)) {
		core_warn(s->core, "%s is not an ELF executable: not used", path);
		goto out;
	}
	ok = judge(s, path, &ce, &fe, bias);
out:
	free(fe.phdrs);
	free(ce.phdrs);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return ok;
}
