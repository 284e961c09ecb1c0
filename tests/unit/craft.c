/* Crafted ELF cores for the unit tests (see craft.h). */
#include "craft.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE 4096u
#define MAX_SEGMENTS 32
#define MAX_FILES 16
#define MAX_AUXV 16

/* ---- notes --------------------------------------------------------------- */

static void notes_reserve(struct craft_notes *n, size_t more)
{
	if (n->len + more <= n->cap)
		return;
	size_t cap = n->cap ? n->cap : 4096;
	while (cap < n->len + more)
		cap *= 2;
	unsigned char *d = realloc(n->data, cap);
	if (!d) {
		fprintf(stderr, "craft: out of memory\n");
		abort();
	}
	n->data = d;
	n->cap = cap;
}

/* Append LEN bytes, then zeros up to a multiple of 4. */
static void put_padded(struct craft_notes *n, const void *p, size_t len)
{
	notes_reserve(n, len + 3);
	memcpy(n->data + n->len, p, len);
	n->len += len;
	while (n->len % 4)
		n->data[n->len++] = 0;
}

void craft_raw(struct craft_notes *n, const void *bytes, size_t len)
{
	notes_reserve(n, len);
	memcpy(n->data + n->len, bytes, len);
	n->len += len;
}

void craft_note(struct craft_notes *n, const char *name, uint32_t type, const void *desc,
		uint32_t dlen)
{
	uint32_t hdr[3] = { (uint32_t)strlen(name) + 1, dlen, type };
	craft_raw(n, hdr, sizeof(hdr));
	put_padded(n, name, strlen(name) + 1);
	put_padded(n, desc, dlen);
}

/* struct elf_prstatus on x86_64: pr_cursig @12, pr_pid @32, pr_reg @112,
 * 336 bytes in all. */
void craft_prstatus(struct craft_notes *n, int32_t tid, int signo, const uint64_t *regs)
{
	unsigned char d[336] = { 0 };
	uint16_t sig = (uint16_t)signo;
	memcpy(d + 12, &sig, 2);
	memcpy(d + 32, &tid, 4);
	memcpy(d + 112, regs, 8 * CORE_REG_COUNT);
	craft_note(n, "CORE", NT_PRSTATUS, d, sizeof(d));
}

void craft_notes_reset(struct craft_notes *n)
{
	n->len = 0;
}

void craft_notes_free(struct craft_notes *n)
{
	free(n->data);
	n->data = NULL;
	n->len = n->cap = 0;
}

/* ---- the core ------------------------------------------------------------ */

struct craft_segment {
	uint64_t vaddr;
	size_t size;
	uint32_t flags;
	unsigned char *bytes;
};

struct craft_file {
	uint64_t start, end, offset;
	char *path;
};

struct craft_core {
	struct craft_notes notes;
	struct craft_segment segs[MAX_SEGMENTS];
	size_t nsegs;
	struct craft_file files[MAX_FILES];
	size_t nfiles;
	uint64_t auxv[2 * MAX_AUXV];
	size_t nauxv;
	uint64_t heap, heap_end, heap_next;
	bool broken;                /* a store or an allocation failed */
};

struct craft_core *craft_create(void)
{
	return calloc(1, sizeof(struct craft_core));
}

void craft_destroy(struct craft_core *c)
{
	if (!c)
		return;
	craft_notes_free(&c->notes);
	for (size_t i = 0; i < c->nsegs; i++)
		free(c->segs[i].bytes);
	for (size_t i = 0; i < c->nfiles; i++)
		free(c->files[i].path);
	free(c);
}

struct craft_notes *craft_notes(struct craft_core *c)
{
	return &c->notes;
}

bool craft_segment(struct craft_core *c, uint64_t vaddr, size_t size, uint32_t flags)
{
	for (size_t i = 0; i < c->nsegs; i++)
		if (vaddr < c->segs[i].vaddr + c->segs[i].size && c->segs[i].vaddr < vaddr + size) {
			fprintf(stderr, "craft: segment 0x%llx overlaps 0x%llx\n",
				(unsigned long long)vaddr, (unsigned long long)c->segs[i].vaddr);
			return false;
		}
	if (c->nsegs == MAX_SEGMENTS || size == 0)
		return false;
	unsigned char *bytes = calloc(1, size);
	if (!bytes)
		return false;
	c->segs[c->nsegs++] = (struct craft_segment){ vaddr, size, flags, bytes };
	return true;
}

void *craft_bytes(struct craft_core *c, uint64_t addr, size_t len)
{
	for (size_t i = 0; i < c->nsegs; i++) {
		struct craft_segment *s = &c->segs[i];
		uint64_t off = addr - s->vaddr;
		if (addr >= s->vaddr && off <= s->size && len <= s->size - off)
			return s->bytes + off;
	}
	fprintf(stderr, "craft: 0x%llx+%zu is not in a segment\n", (unsigned long long)addr, len);
	c->broken = true;
	return NULL;
}

bool craft_u64(struct craft_core *c, uint64_t addr, uint64_t value)
{
	void *p = craft_bytes(c, addr, 8);
	if (p)
		memcpy(p, &value, 8);
	return p != NULL;
}

bool craft_u32(struct craft_core *c, uint64_t addr, uint32_t value)
{
	void *p = craft_bytes(c, addr, 4);
	if (p)
		memcpy(p, &value, 4);
	return p != NULL;
}

bool craft_string(struct craft_core *c, uint64_t addr, const char *s)
{
	void *p = craft_bytes(c, addr, strlen(s) + 1);
	if (p)
		memcpy(p, s, strlen(s) + 1);
	return p != NULL;
}

bool craft_heap(struct craft_core *c, uint64_t vaddr, size_t size)
{
	if (!craft_segment(c, vaddr, size, PF_R | PF_W))
		return false;
	c->heap = c->heap_next = vaddr;
	c->heap_end = vaddr + size;
	return true;
}

uint64_t craft_alloc(struct craft_core *c, size_t size)
{
	uint64_t addr = c->heap_next;
	size = (size + 15) & ~(size_t)15;
	if (!c->heap || size > c->heap_end - addr) {
		fprintf(stderr, "craft: heap exhausted\n");
		c->broken = true;
		return 0;
	}
	c->heap_next += size;
	return addr;
}

uint64_t craft_alloc_string(struct craft_core *c, const char *s)
{
	uint64_t addr = craft_alloc(c, strlen(s) + 1);
	craft_string(c, addr, s);
	return addr;
}

static void add_auxv(struct craft_core *c, uint64_t type, uint64_t value)
{
	if (c->nauxv < MAX_AUXV - 1) {
		c->auxv[2 * c->nauxv] = type;
		c->auxv[2 * c->nauxv + 1] = value;
		c->nauxv++;
	}
}

/* One PT_LOAD of the executable, page-aligned as the kernel maps it: the
 * file's bytes from the page holding p_offset up to p_offset + p_filesz,
 * zeros after. */
static bool map_load(struct craft_core *c, const char *path, const unsigned char *image,
		     size_t image_size, const GElf_Phdr *ph, uint64_t bias)
{
	uint64_t start = (bias + ph->p_vaddr) & ~(uint64_t)(PAGE - 1);
	uint64_t end = (bias + ph->p_vaddr + ph->p_memsz + PAGE - 1) & ~(uint64_t)(PAGE - 1);
	uint64_t delta = bias + ph->p_vaddr - start;
	if (ph->p_offset < delta || ph->p_offset + ph->p_filesz > image_size ||
	    c->nfiles == MAX_FILES)
		return false;
	uint32_t flags = ph->p_flags & (PF_R | PF_W | PF_X);
	if (!craft_segment(c, start, end - start, flags))
		return false;
	uint64_t file_start = ph->p_offset - delta;
	memcpy(c->segs[c->nsegs - 1].bytes, image + file_start, delta + ph->p_filesz);
	struct craft_file *f = &c->files[c->nfiles++];
	*f = (struct craft_file){ start, end, file_start / PAGE, strdup(path) };
	return f->path != NULL;
}

static unsigned char *read_file(const char *path, size_t *size)
{
	FILE *fp = fopen(path, "rb");
	unsigned char *buf = NULL;
	long len;
	if (!fp)
		return NULL;
	if (fseek(fp, 0, SEEK_END) == 0 && (len = ftell(fp)) > 0 && fseek(fp, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)len);
		if (buf && fread(buf, 1, (size_t)len, fp) != (size_t)len) {
			free(buf);
			buf = NULL;
		}
		*size = (size_t)len;
	}
	fclose(fp);
	return buf;
}

bool craft_map_executable(struct craft_core *c, const char *path, uint64_t bias)
{
	size_t size = 0;
	unsigned char *image = read_file(path, &size);
	if (!image) {
		fprintf(stderr, "craft: cannot read %s\n", path);
		return false;
	}
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory((char *)image, size);
	GElf_Ehdr eh;
	size_t phnum = 0;
	bool ok = elf && gelf_getehdr(elf, &eh) && elf_getphdrnum(elf, &phnum) == 0;
	uint64_t phdr_vaddr = 0;
	for (size_t i = 0; ok && i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph)) {
			ok = false;
			break;
		}
		if (ph.p_type == PT_PHDR)
			phdr_vaddr = ph.p_vaddr;
		if (ph.p_type == PT_LOAD) {
			if (ph.p_offset == 0 && !phdr_vaddr)
				phdr_vaddr = ph.p_vaddr + eh.e_phoff;
			ok = map_load(c, path, image, size, &ph, bias);
		}
	}
	if (ok) {
		add_auxv(c, AT_PHDR, bias + phdr_vaddr);
		add_auxv(c, AT_PHENT, sizeof(Elf64_Phdr));
		add_auxv(c, AT_PHNUM, phnum);
		add_auxv(c, AT_PAGESZ, PAGE);
		add_auxv(c, AT_ENTRY, bias + eh.e_entry);
	} else {
		fprintf(stderr, "craft: cannot map %s\n", path);
	}
	if (elf)
		elf_end(elf);
	free(image);
	return ok;
}

/* NT_FILE: count, page size, {start, end, offset in pages}[count], names. */
static void file_note(struct craft_core *c, struct craft_notes *n)
{
	struct craft_notes d = { 0 };
	uint64_t hdr[2] = { c->nfiles, PAGE };
	craft_raw(&d, hdr, sizeof(hdr));
	for (size_t i = 0; i < c->nfiles; i++) {
		uint64_t e[3] = { c->files[i].start, c->files[i].end, c->files[i].offset };
		craft_raw(&d, e, sizeof(e));
	}
	for (size_t i = 0; i < c->nfiles; i++)
		craft_raw(&d, c->files[i].path, strlen(c->files[i].path) + 1);
	craft_note(n, "CORE", NT_FILE, d.data, (uint32_t)d.len);
	craft_notes_free(&d);
}

static bool write_all(int fd, const void *p, size_t len, uint64_t offset)
{
	return pwrite(fd, p, len, (off_t)offset) == (ssize_t)len;
}

static int segment_cmp(const void *a, const void *b)
{
	const struct craft_segment *x = a, *y = b;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

bool craft_write(struct craft_core *c, const char *path)
{
	/* The kernel writes PT_LOADs in address order, and libdwfl relies on it. */
	qsort(c->segs, c->nsegs, sizeof(c->segs[0]), segment_cmp);
	struct craft_notes notes = { 0 };
	craft_raw(&notes, c->notes.data, c->notes.len);
	if (c->nauxv) {
		uint64_t auxv[2 * MAX_AUXV];
		memcpy(auxv, c->auxv, sizeof(auxv));
		auxv[2 * c->nauxv] = AT_NULL;
		auxv[2 * c->nauxv + 1] = 0;
		craft_note(&notes, "CORE", NT_AUXV, auxv, (uint32_t)(16 * (c->nauxv + 1)));
	}
	if (c->nfiles)
		file_note(c, &notes);

	size_t phnum = 1 + c->nsegs;
	Elf64_Ehdr eh = { 0 };
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_CORE;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = (uint16_t)phnum;

	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		craft_notes_free(&notes);
		return false;
	}
	uint64_t notes_at = sizeof(eh) + phnum * sizeof(Elf64_Phdr);
	Elf64_Phdr ph = { .p_type = PT_NOTE, .p_offset = notes_at, .p_filesz = notes.len,
			  .p_align = 4 };
	bool ok = write_all(fd, &eh, sizeof(eh), 0) &&
		  write_all(fd, &ph, sizeof(ph), sizeof(eh)) &&
		  write_all(fd, notes.data, notes.len, notes_at);
	uint64_t at = (notes_at + notes.len + PAGE - 1) & ~(uint64_t)(PAGE - 1);
	for (size_t i = 0; ok && i < c->nsegs; i++) {
		const struct craft_segment *s = &c->segs[i];
		ph = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = s->flags, .p_offset = at,
				   .p_vaddr = s->vaddr, .p_filesz = s->size, .p_memsz = s->size,
				   .p_align = PAGE };
		ok = write_all(fd, &ph, sizeof(ph), sizeof(eh) + (1 + i) * sizeof(ph)) &&
		     write_all(fd, s->bytes, s->size, at);
		at = (at + s->size + PAGE - 1) & ~(uint64_t)(PAGE - 1);
	}
	ok = close(fd) == 0 && ok;
	craft_notes_free(&notes);
	return ok;
}

/* ---- opening it ------------------------------------------------------------ */

bool craft_open(struct craft_core *c, struct craft_session *out)
{
	memset(out, 0, sizeof(*out));
	if (c->broken)
		return false;
	strcpy(out->dir, "/tmp/unit_craft.XXXXXX");
	if (!mkdtemp(out->dir)) {
		out->dir[0] = '\0';
		return false;
	}
	snprintf(out->path, sizeof(out->path), "%s/core", out->dir);
	struct core_error *err = NULL;
	if (!craft_write(c, out->path)) {
		fprintf(stderr, "craft: cannot write %s\n", out->path);
		goto fail;
	}
	err = core_open(out->path, &out->core);
	if (!err) {
		struct dbg_options opts = { 0 };
		err = dbg_session_open(out->core, &opts, NULL, &out->s);
	}
	if (!err)
		return true;
	fprintf(stderr, "craft: %s\n", err->message);
	core_error_destroy(err);
fail:
	craft_close(out);
	return false;
}

void craft_close(struct craft_session *cs)
{
	dbg_session_close(cs->s);
	core_close(cs->core);
	cs->s = NULL;
	cs->core = NULL;
	if (cs->path[0])
		unlink(cs->path);
	if (cs->dir[0])
		rmdir(cs->dir);
	cs->path[0] = cs->dir[0] = '\0';
}

/* ---- the fixture files ------------------------------------------------------ */

uint64_t craft_fixture_symbol(const char *name)
{
	uint64_t value = 0;
	if (!craft_elf_symbol(craft_data_path("unit_fixture"), name, &value, NULL))
		fprintf(stderr, "craft: no symbol %s in the fixture\n", name);
	return CRAFT_FIXTURE_BIAS + value;
}

void craft_each_fixture(void (*run)(const char *path, const char *name, bool debug))
{
	static const char *const names[] = { "unit_fixture", "unit_fixture.stripped" };
	for (size_t i = 0; i < 2; i++) {
		char *path = strdup(craft_data_path(names[i]));
		if (path)
			run(path, names[i], i == 0);
		free(path);
	}
}

const char *craft_data_path(const char *name)
{
	static char path[4096];
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return name;
	exe[n] = '\0';
	snprintf(path, sizeof(path), "%s/data/%s", dirname(exe), name);
	return path;
}

static bool section_symbol(Elf *elf, Elf_Scn *scn, const char *name, uint64_t *value,
			   uint64_t *size)
{
	GElf_Shdr sh;
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!gelf_getshdr(scn, &sh) || !data || sh.sh_entsize == 0)
		return false;
	for (size_t i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym sym;
		const char *s = gelf_getsym(data, (int)i, &sym) ?
					elf_strptr(elf, sh.sh_link, sym.st_name) : NULL;
		if (s && sym.st_shndx != SHN_UNDEF && strcmp(s, name) == 0) {
			*value = sym.st_value;
			if (size)
				*size = sym.st_size;
			return true;
		}
	}
	return false;
}

/* Call FN on the open ELF file at PATH. */
static bool with_elf(const char *path, bool (*fn)(Elf *elf, void *arg), void *arg)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	bool ok = elf && fn(elf, arg);
	if (elf)
		elf_end(elf);
	close(fd);
	return ok;
}

struct symbol_query {
	const char *name;
	uint64_t *value, *size;
};

static bool find_symbol(Elf *elf, void *arg)
{
	struct symbol_query *q = arg;
	static const Elf64_Word types[] = { SHT_SYMTAB, SHT_DYNSYM };
	for (size_t t = 0; t < 2; t++)
		for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
			GElf_Shdr sh;
			if (gelf_getshdr(scn, &sh) && sh.sh_type == types[t] &&
			    section_symbol(elf, scn, q->name, q->value, q->size))
				return true;
		}
	return false;
}

bool craft_elf_symbol(const char *path, const char *name, uint64_t *value, uint64_t *size)
{
	struct symbol_query q = { name, value, size };
	return with_elf(path, find_symbol, &q);
}

static bool find_tls(Elf *elf, void *arg)
{
	uint64_t *out = arg;
	size_t phnum;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_TLS) {
			out[0] = ph.p_memsz;
			out[1] = ph.p_align;
			return true;
		}
	}
	return false;
}

bool craft_elf_tls(const char *path, uint64_t *memsz, uint64_t *align)
{
	uint64_t v[2];
	if (!with_elf(path, find_tls, v))
		return false;
	*memsz = v[0];
	*align = v[1];
	return true;
}
