#include "minicore.h"

#include <elf.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

#define PAGE CORE_WRITE_PAGE
#define PAGE_DOWN(a) ((a) & ~(uint64_t)(PAGE - 1))
#define RED_ZONE 128u               /* below the stack pointer, still live */
#define MODULE_NOTES_MAX (64u << 10) /* of a module's PT_NOTE or PT_DYNAMIC kept */

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The notes of one PT_NOTE of LEN bytes, but a minicore's own. */
static void copy_notes(struct core_writer *w, const unsigned char *d, size_t len)
{
	for (size_t off = 0; off + 12 <= len;) {   /* a cut last padding may pass LEN */
		uint32_t namesz = le32(d + off), descsz = le32(d + off + 4), type = le32(d + off + 8);
		size_t name_off = off + 12, desc_off = name_off + ((namesz + 3u) & ~3u);
		if (namesz > len - name_off || desc_off > len || descsz > len - desc_off)
			return;
		char owner[64] = "";
		memcpy(owner, d + name_off, namesz < sizeof(owner) - 1 ? namesz : sizeof(owner) - 1);
		bool own = strcmp(owner, CORE_NOTE_OWNER) == 0 &&
			   (type == CORE_NOTE_SOURCE || type == CORE_NOTE_LAYOUT);
		if (!own)
			core_writer_add_note(w, owner, type, d + desc_off, descsz);
		off = desc_off + ((descsz + 3u) & ~(size_t)3);
	}
}

static struct core_error *add_notes(struct core_writer *w, const struct core *core)
{
	size_t phnum;
	if (elf_getphdrnum(core->elf, &phnum) != 0)
		return core_error_create(CORE_ERROR_FORMAT, "%s: program headers unreadable", core->path);
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(core->elf, (int)i, &ph) || ph.p_type != PT_NOTE || ph.p_filesz == 0 ||
		    ph.p_offset > core->data_size || ph.p_filesz > core->data_size - ph.p_offset)
			continue;
		unsigned char *d = malloc((size_t)ph.p_filesz);
		if (!d)
			return &core_error_nomem;
		if (core_image_read(core->image, ph.p_offset, d, (size_t)ph.p_filesz))
			copy_notes(w, d, (size_t)ph.p_filesz);
		free(d);
	}
	return NULL;
}

/* The source's fingerprint and segments (core.h), and its segments as the
 * regions the kept pages are written in. */
static struct core_error *add_layout(struct core_writer *w, const struct core *core, const char *fingerprint)
{
	if (strlen(fingerprint) != 64)
		return core_error_create(CORE_ERROR_OTHER, "%s: no fingerprint to name the minicore's source",
					 core->path);
	core_writer_add_note(w, CORE_NOTE_OWNER, CORE_NOTE_SOURCE, fingerprint, 64);
	unsigned char *d = calloc(core->nsegments ? core->nsegments : 1, 24);
	if (!d)
		return &core_error_nomem;
	for (size_t i = 0; i < core->nsegments; i++) {
		const struct core_segment *seg = &core->segments[i];
		uint64_t e[3] = {seg->vaddr, seg->memsz, seg->flags & (PF_R | PF_W | PF_X)};
		memcpy(d + 24 * i, e, sizeof(e));
		uint64_t end = seg->memsz > UINT64_MAX - seg->vaddr ? UINT64_MAX : seg->vaddr + seg->memsz;
		core_writer_add_region(w, seg->vaddr, end, seg->flags & (PF_R | PF_W | PF_X));
	}
	core_writer_add_note(w, CORE_NOTE_OWNER, CORE_NOTE_LAYOUT, d, 24 * core->nsegments);
	free(d);
	return NULL;
}

/* Keep the pages of [START, END) the core itself saved. */
static void keep_saved(struct core_writer *w, const struct core *core, uint64_t start, uint64_t end)
{
	unsigned char probe;
	for (uint64_t p = PAGE_DOWN(start); p < end && p >= PAGE_DOWN(start); p += PAGE)
		if (!core_writer_kept(w, p) && core_read_saved(core, p, &probe, 1))
			core_writer_keep(w, p, PAGE);
}

/* Each thread's stack from its stack pointer (and red zone) to the end of
 * its mapping, at most CORE_MINICORE_STACK bytes. */
static void keep_stacks(struct core_writer *w, const struct core *core)
{
	for (size_t i = 0; i < core->nthreads; i++) {
		uint64_t sp = core_thread_sp(core, &core->threads[i]);
		uint64_t from = sp >= RED_ZONE ? sp - RED_ZONE : 0;
		const struct core_segment *seg = core_find_segment(core, sp);
		if (!seg)
			continue;
		if (from < seg->vaddr)
			from = seg->vaddr;
		uint64_t end = seg->vaddr + seg->memsz, limit = sp + CORE_MINICORE_STACK;
		if (limit > sp && limit < end)
			end = limit;
		keep_saved(w, core, from, end);
	}
}

#define STRING_MAX 4096u            /* bytes of a name kept, at most */
#define LINK_MAP_MAX 4096u          /* objects followed on r_debug's list */

/* The saved string at ADDR, up to its NUL or STRING_MAX bytes. */
static void keep_string(struct core_writer *w, const struct core *core, uint64_t addr)
{
	char c[256];
	for (uint64_t at = addr; at - addr < STRING_MAX && at >= addr;) {
		size_t n = PAGE - (size_t)(at % PAGE);
		if (n > sizeof(c))
			n = sizeof(c);
		if (!core_read_saved(core, at, c, n))
			return;
		keep_saved(w, core, at, at + n);
		if (memchr(c, 0, n))
			return;
		at += n;
	}
}

/* The name DT_SONAME gives in the dynamic section saved at [AT, AT+SIZE)
 * of the object loaded with BIAS: libdwfl names a module by it when
 * neither NT_FILE nor the link map does. */
static void keep_soname(struct core_writer *w, const struct core *core, uint64_t at, uint64_t size,
			uint64_t bias)
{
	uint64_t strtab = 0, soname = 0;
	for (uint64_t off = 0; off + sizeof(Elf64_Dyn) <= size; off += sizeof(Elf64_Dyn)) {
		Elf64_Dyn d;
		if (!core_read_saved(core, at + off, &d, sizeof(d)))
			return;
		if (d.d_tag == DT_STRTAB)
			strtab = d.d_un.d_ptr;
		else if (d.d_tag == DT_SONAME)
			soname = d.d_un.d_val;
	}
	if (!strtab || !soname)
		return;
	keep_string(w, core, strtab + soname);          /* relocated in place */
	keep_string(w, core, strtab + bias + soname);   /* or not (a vDSO's) */
}

/* The saved ELF header page of the file mapped at START, and its notes and
 * dynamic section where saved: libdwfl finds modules by them, reading the
 * core's segments itself. */
static void keep_module(struct core_writer *w, const struct core *core, uint64_t start)
{
	Elf64_Ehdr eh;
	if (!core_read_saved(core, start, &eh, sizeof(eh)) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return;
	keep_saved(w, core, start, start + PAGE);
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256 || eh.e_phoff > PAGE)
		return;
	Elf64_Phdr ph[256];
	if (!core_read_saved(core, start + eh.e_phoff, ph, eh.e_phnum * sizeof(*ph)))
		return;
	uint64_t bias = start;
	for (size_t i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD) {
			bias = start - PAGE_DOWN(ph[i].p_vaddr);
			break;
		}
	for (size_t i = 0; i < eh.e_phnum; i++) {
		if ((ph[i].p_type != PT_NOTE && ph[i].p_type != PT_DYNAMIC) || ph[i].p_memsz > MODULE_NOTES_MAX)
			continue;
		uint64_t at = bias + ph[i].p_vaddr;
		if (at >= bias)
			keep_saved(w, core, at, at + ph[i].p_memsz);
		/* libdwfl looks for the notes at their file offset from START */
		if (ph[i].p_filesz > MODULE_NOTES_MAX)
			continue;
		if (ph[i].p_type == PT_NOTE && ph[i].p_offset <= MODULE_NOTES_MAX)
			keep_saved(w, core, start + ph[i].p_offset, start + ph[i].p_offset + ph[i].p_filesz);
		if (ph[i].p_type == PT_DYNAMIC && at >= bias)
			keep_soname(w, core, at, ph[i].p_filesz, bias);
	}
}

/* The address of r_debug from the executable's DT_DEBUG, as libdwfl finds
 * it: the program headers at AT_PHDR (from the file where the core did not
 * save them), PT_PHDR for the bias, PT_DYNAMIC where saved.  0 when none. */
static uint64_t keep_r_debug_address(struct core_writer *w, struct core *core)
{
	const struct core_auxv *a = &core->auxv;
	if (!a->phdr || a->phent != sizeof(Elf64_Phdr) || a->phnum == 0 || a->phnum > 256)
		return 0;
	Elf64_Phdr ph[256];
	size_t len = a->phnum * sizeof(*ph);
	keep_saved(w, core, a->phdr, a->phdr + len);
	if (!core_read_bytes(core, a->phdr, ph, len))
		return 0;
	uint64_t dyn = 0, dynsz = 0, bias = 0;
	for (size_t i = 0; i < a->phnum; i++) {
		if (ph[i].p_type == PT_PHDR)
			bias = a->phdr - ph[i].p_vaddr;
		else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = ph[i].p_vaddr;
			dynsz = ph[i].p_filesz;
		}
	}
	if (!dynsz || dynsz > MODULE_NOTES_MAX)
		return 0;
	dyn += bias;
	keep_saved(w, core, dyn, dyn + dynsz);
	for (uint64_t off = 0; off + sizeof(Elf64_Dyn) <= dynsz; off += sizeof(Elf64_Dyn)) {
		Elf64_Dyn d;
		if (!core_read_saved(core, dyn + off, &d, sizeof(d)))
			return 0;
		if (d.d_tag == DT_DEBUG)
			return d.d_un.d_ptr;
	}
	return 0;
}

/* The dynamic linker's list of loaded objects (r_debug.r_map), its nodes
 * and their names: libdwfl reads them from the core's segments itself and
 * names modules by them before NT_FILE. */
static void keep_link_map(struct core_writer *w, struct core *core)
{
	uint64_t r_debug = keep_r_debug_address(w, core), lm;
	if (!r_debug || r_debug > UINT64_MAX - 16)
		return;
	keep_saved(w, core, r_debug + 8, r_debug + 16);
	if (!core_read_saved(core, r_debug + 8, &lm, sizeof(lm)))
		return;
	/* A list that loops is followed once round (Brent's cycle test). */
	uint64_t seen = 0;
	for (unsigned n = 0; lm && lm != seen && n < LINK_MAP_MAX && lm <= UINT64_MAX - 32; n++) {
		if ((n & (n - 1)) == 0)
			seen = lm;
		uint64_t node[4];   /* l_addr, l_name, l_ld, l_next */
		keep_saved(w, core, lm, lm + sizeof(node));
		if (!core_read_saved(core, lm, node, sizeof(node)))
			return;
		if (node[2] && node[1])
			keep_string(w, core, node[1]);
		lm = node[3];
	}
}

/* The vDSO, in no file: libdwfl finds it by AT_SYSINFO_EHDR in memory. */
#define VDSO_MAX (64u << 10)

/* What libdwfl reads to list the modules: the link map, and the ELF
 * headers at the start of each segment (of each file NT_FILE lists, and
 * of any other mapping that starts with one). */
static void keep_modules(struct core_writer *w, struct core *core)
{
	keep_link_map(w, core);
	for (size_t i = 0; i < core->nfiles; i++)
		if (core->files[i].offset == 0)
			keep_module(w, core, core->files[i].start);
	for (size_t i = 0; i < core->nsegments; i++)
		keep_module(w, core, core->segments[i].vaddr);
	const struct core_segment *vdso = core->auxv.sysinfo_ehdr ? core_find_segment(core, core->auxv.sysinfo_ehdr)
								    : NULL;
	if (vdso && vdso->memsz <= VDSO_MAX)
		keep_saved(w, core, vdso->vaddr, vdso->vaddr + vdso->memsz);
}

struct core_error *core_minicore_writer(struct core *core, const char *fingerprint,
					struct core_writer **out)
{
	*out = NULL;
	if (!core->recorder)
		return core_error_create(CORE_ERROR_OTHER, "%s: the reads of the analysis were not recorded",
					 core->path);
	struct core_writer *w = NULL;
	struct core_error *err = core_writer_create(core->arch->machine, &w);
	if (!err)
		err = add_notes(w, core);
	if (!err)
		err = add_layout(w, core, fingerprint);
	if (err) {
		core_writer_destroy(w);
		return err;
	}
	core_writer_merge(w, core->recorder);
	keep_stacks(w, core);
	keep_modules(w, core);
	*out = w;
	return NULL;
}

bool core_minicore_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct core *core = ctx;
	struct core_writer *recorder = core->recorder;
	core->recorder = NULL;   /* the writer's own reads are not the analysis's */
	bool ok = core_read_bytes(core, addr, buf, len);
	if (!ok) {   /* a page the core only partly holds: what it has */
		memset(buf, 0, len);
		for (size_t off = 0; off + 8 <= len; off += 8)
			core_read_bytes(core, addr + off, (unsigned char *)buf + off, 8);
	}
	core->recorder = recorder;
	return true;
}

struct core_error *core_minicore_save(struct core *core, const char *fingerprint, const char *path,
				      uint64_t *size, uint64_t *kept)
{
	struct core_writer *w = NULL;
	struct core_error *err = core_minicore_writer(core, fingerprint, &w);
	if (!err)
		err = core_writer_save(w, core_minicore_read, core, path, size);
	if (!err && kept)
		*kept = core_writer_bytes_kept(w);
	core_writer_destroy(w);
	return err;
}
