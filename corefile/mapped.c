#include "mapped.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"
#include "notes.h"
#include "target.h"

enum backing_state { BACKING_UNTRIED, BACKING_OK, BACKING_MISSING, BACKING_MISMATCH };

struct backing {
	char *recorded;             /* path as NT_FILE names it */
	char *replacement;          /* user-given file for it, or NULL */
	char *resolved;             /* file actually read */
	enum backing_state state;
	const unsigned char *data;
	size_t size;
};

struct core_file_cache {
	struct backing *items;
	size_t n;
	size_t last;                /* index of the last file used */
	unsigned char *copy;        /* the private copy core->elf reads, once made */
	struct core_mapped_file *learned;   /* core_mapped_learn()'s, in its order */
	size_t nlearned;
};

struct core_error *core_mapped_init(struct core *core)
{
	core->file_cache = calloc(1, sizeof(*core->file_cache));
	return core->file_cache ? NULL : &core_error_nomem;
}

static void backing_unmap(struct backing *b)
{
	if (b->data)
		munmap((void *)b->data, b->size);
	b->data = NULL;
}

void core_mapped_deinit(struct core *core)
{
	struct core_file_cache *c = core->file_cache;
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		backing_unmap(&c->items[i]);
		free(c->items[i].recorded);
		free(c->items[i].replacement);
		free(c->items[i].resolved);
	}
	free(c->items);
	for (size_t i = 0; i < c->nlearned; i++)
		free(c->learned[i].path);
	free(c->learned);
	free(c);
	core->file_cache = NULL;
}

static struct backing *backing_get(struct core *core, const char *recorded, bool create)
{
	struct core_file_cache *c = core->file_cache;
	if (c->last < c->n && strcmp(c->items[c->last].recorded, recorded) == 0)
		return &c->items[c->last];
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->items[i].recorded, recorded) == 0) {
			c->last = i;
			return &c->items[i];
		}
	if (!create)
		return NULL;
	struct backing *items = realloc(c->items, (c->n + 1) * sizeof(*items));
	if (!items)
		return NULL;
	c->items = items;
	struct backing *b = &items[c->n];
	memset(b, 0, sizeof(*b));
	b->recorded = strdup(recorded);
	if (!b->recorded)
		return NULL;
	c->last = c->n++;
	return b;
}

static bool map_whole(const char *path, const unsigned char **data, size_t *size)
{
	int fd = core_open_regular(path);
	if (fd < 0)
		return false;
	struct stat st;
	bool ok = false;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			*data = p;
			*size = (size_t)st.st_size;
			ok = true;
		}
	}
	close(fd);
	return ok;
}

/* The kernel saves the first page of each ELF mapping: when it is in the
 * core, the file must hold the same bytes to be trusted for the rest. */
static bool agrees_with_core(struct core *core, const struct backing *b)
{
	for (size_t i = 0; i < core->nfiles; i++) {
		const struct core_mapped_file *f = &core->files[i];
		if (f->offset != 0 || strcmp(f->path, b->recorded) != 0)
			continue;
		const struct core_segment *seg = core_find_segment(core, f->start);
		if (!seg || seg->vaddr != f->start || seg->filesz == 0)
			continue;
		unsigned char page[4096];
		size_t n = seg->filesz < sizeof(page) ? (size_t)seg->filesz : sizeof(page);
		if (n > b->size || !core_image_read(core->image, seg->offset, page, n))
			return false;
		return memcmp(page, b->data, n) == 0;
	}
	return true;
}

static bool try_path(struct backing *b, const char *path)
{
	if (!map_whole(path, &b->data, &b->size))
		return false;
	free(b->resolved);
	b->resolved = strdup(path);
	return b->resolved != NULL;
}

/* The build-id the notes of the ELF file DATA[0, SIZE) hold. */
static size_t file_build_id(const unsigned char *data, size_t size, unsigned char id[CORE_BUILD_ID_MAX])
{
	size_t len = 0, phnum;
	Elf *elf = elf_memory((char *)data, size);
	if (elf && elf_getphdrnum(elf, &phnum) == 0)
		for (size_t i = 0; i < phnum && !len; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_NOTE && ph.p_offset <= size &&
			    ph.p_filesz <= size - ph.p_offset)
				core_notes_build_id(data + ph.p_offset, (size_t)ph.p_filesz, id, &len);
		}
	if (elf)
		elf_end(elf);
	return len;
}

/* The build-id the core lists for the module named RECORDED, or 0. */
static size_t listed_build_id(const struct core *core, const char *recorded,
			      const unsigned char **id)
{
	for (size_t i = 0; i < core->nmodules; i++)
		if (core->modules[i].path && strcmp(core->modules[i].path, recorded) == 0) {
			*id = core->modules[i].build_id;
			return core->modules[i].build_id_len;
		}
	return 0;
}

/* Whether B's file, mapped, is the one whose build-id the core lists. */
static bool has_listed_build_id(const struct core *core, const struct backing *b)
{
	const unsigned char *want;
	unsigned char have[CORE_BUILD_ID_MAX];
	size_t len = listed_build_id(core, b->recorded, &want);
	return len && file_build_id(b->data, b->size, have) == len && memcmp(have, want, len) == 0;
}

/* A module named by its soname alone (a Crashpad minidump's "libc.so.6"):
 * the file of that name in the executable's directory or the dynamic
 * linker's default ones for the core's architecture (under the sysroot
 * when one is given), taken only when its build-id is the one the core
 * lists. */
static bool try_soname(struct core *core, struct backing *b)
{
	const unsigned char *want;
	if (strchr(b->recorded, '/') || !listed_build_id(core, b->recorded, &want))
		return false;
	static const char *const dirs[] = {"/lib/%s-linux-gnu", "/usr/lib/%s-linux-gnu", "/lib64",
					   "/usr/lib64", "/lib", "/usr/lib"};
	const char *exe = core_executable(core), *slash = exe ? strrchr(exe, '/') : NULL;
	const char *root = core->sysroot ? core->sysroot : "";
	const char *arch = core->arch ? core->arch->name : "x86_64";
	char dir[PATH_MAX], path[PATH_MAX];
	for (size_t i = 0; i <= sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (i == 0 && !slash)
			continue;
		int n = i == 0 ? snprintf(dir, sizeof(dir), "%.*s", (int)(slash - exe), exe)
			       : snprintf(dir, sizeof(dir), dirs[i - 1], arch);
		if (n <= 0 || (size_t)n >= sizeof(dir) ||
		    snprintf(path, sizeof(path), "%s%s/%s", i ? root : "", dir, b->recorded) >= (int)sizeof(path))
			continue;
		if (!try_path(b, path))
			continue;
		if (has_listed_build_id(core, b))
			return true;
		backing_unmap(b);
	}
	return false;
}

static void backing_open(struct core *core, struct backing *b)
{
	b->state = BACKING_MISSING;
	bool found = false;
	if (b->replacement)
		found = try_path(b, b->replacement);
	if (!found && core->sysroot) {
		char *p = malloc(strlen(core->sysroot) + strlen(b->recorded) + 2);
		if (p) {
			strcpy(p, core->sysroot);
			strcat(p, "/");
			strcat(p, b->recorded);
			found = try_path(b, p);
			free(p);
		}
	}
	if (!found)
		found = try_soname(core, b);
	if (!found && strchr(b->recorded, '/'))
		found = try_path(b, b->recorded);
	if (!found)
		return;
	if (!agrees_with_core(core, b)) {
		core_warn(core, "%s does not match the file mapped in the core (first page differs); "
			  "its unsaved pages are not used", b->resolved);
		backing_unmap(b);
		b->state = BACKING_MISMATCH;
		return;
	}
	b->state = BACKING_OK;
}

/* Overwrite every copy of PATH in BYTES[0..LEN) of the core's private copy
 * (which starts at COPY) so that no one opens it; the first byte becomes
 * 0x01, which leaves a relative name that does not exist.  Only the pages
 * written become writable (and count as the process's memory). */
static void blank_path(struct core *core, unsigned char *copy, unsigned char *bytes, size_t len,
		       const char *path)
{
	size_t plen = strlen(path);
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), writable = UINT64_MAX;
	unsigned char *p = bytes, *end = bytes + len;
	while (plen && (p = memmem(p, (size_t)(end - p), path, plen)) != NULL) {
		uint64_t off = (uint64_t)(p - copy);
		if (off / page != writable && core_image_writable(core->image, off))
			writable = off / page;   /* a page full of copies is made writable once */
		if (off / page != writable) {
			core_warn(core, "a copy of %s at offset 0x%" PRIx64 " could not be blanked: %s",
				  path, off, strerror(errno));
			return;
		}
		*p = 0x01;
		p += plen;
	}
}

/* In the notes (NT_FILE) always; in the whole core, where the link map's
 * copies of the names live, for this many paths at most: each costs a scan
 * of the core, and a crafted core could name every device in /dev. */
enum { GUARD_FULL_SCANS = 16 };

/* libdwfl reads the core through core->elf: the paths it must not see can
 * only be blanked in a copy.  The copy is a private mapping of the core,
 * which from then on is read through it (it becomes resident as libdwfl
 * touches it: the price of a core that names a fifo or a device). */
static unsigned char *private_copy(struct core *core)
{
	struct core_file_cache *c = core->file_cache;
	if (c->copy)
		return c->copy;
	unsigned char *data = core_image_map_private(core->image);
	Elf *elf = data ? elf_memory((char *)data, core->data_size) : NULL;
	if (!elf)
		return NULL;
	elf_end(core->elf);
	core->elf = elf;
	c->copy = data;
	return data;
}

static void blank_everywhere(struct core *core, const char *path, bool whole_core)
{
	unsigned char *data = private_copy(core);
	if (!data) {
		core_warn(core, "cannot make a private copy of the core to hide %s from libdwfl", path);
		return;
	}
	if (whole_core) {
		blank_path(core, data, data, core->data_size, path);
		return;
	}
	size_t phnum;
	if (elf_getphdrnum(core->elf, &phnum) != 0)
		return;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(core->elf, (int)i, &ph) && ph.p_type == PT_NOTE &&
		    ph.p_offset <= core->data_size && ph.p_filesz <= core->data_size - ph.p_offset)
			blank_path(core, data, data + ph.p_offset, ph.p_filesz, path);
	}
}

/* Only what can block or misbehave on open(): fifos, sockets, devices.  A
 * directory opens at once and is then refused as not ELF. */
static bool unsafe_to_open(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

void core_mapped_guard(struct core *core)
{
	size_t guarded = 0;
	for (size_t i = 0; i < core->nfiles; i++) {
		const char *path = core->files[i].path;
		if (!unsafe_to_open(path))
			continue;
		struct backing *b = backing_get(core, path, true);
		if (b && b->state == BACKING_MISSING)
			continue;   /* already blanked */
		if (b)
			b->state = BACKING_MISSING;
		core_warn(core, "%s is not a regular file: not opened", path);
		blank_everywhere(core, path, guarded++ < GUARD_FULL_SCANS);
	}
}

/* The mapping learned at ADDR, or NULL. */
static const struct core_mapped_file *learned_at(const struct core_file_cache *c, uint64_t addr)
{
	for (size_t i = 0; i < c->nlearned; i++)
		if (addr >= c->learned[i].start && addr < c->learned[i].end)
			return &c->learned[i];
	return NULL;
}

struct core_error *core_mapped_learn(struct core *core, uint64_t start, uint64_t end,
				     uint64_t offset, const char *path)
{
	struct core_file_cache *c = core->file_cache;
	if (!c || end <= start)
		return NULL;
	struct core_mapped_file *v = realloc(c->learned, (c->nlearned + 1) * sizeof(*v));
	if (!v)
		return &core_error_nomem;
	c->learned = v;
	struct core_mapped_file *f = &v[c->nlearned];
	*f = (struct core_mapped_file){.start = start, .end = end, .offset = offset, .path = strdup(path)};
	if (!f->path)
		return &core_error_nomem;
	c->nlearned++;
	/* the path is this machine's: read as it is, never under the sysroot */
	struct backing *b = backing_get(core, path, false);
	return b && b->replacement ? NULL : core_set_file_replacement(core, path, path);
}

size_t core_mapped_read(struct core *core, uint64_t addr, void *buf, size_t len)
{
	if (!core->file_cache)
		return 0;
	const struct core_mapped_file *f = core_find_file(core, addr);
	if (!f)
		f = learned_at(core->file_cache, addr);
	if (!f)
		return 0;
	struct backing *b = backing_get(core, f->path, true);
	if (!b)
		return 0;
	if (b->state == BACKING_UNTRIED)
		backing_open(core, b);
	if (b->state != BACKING_OK)
		return 0;
	uint64_t off = f->offset + (addr - f->start);
	if (off >= b->size)
		return 0;
	size_t n = len;
	if (n > f->end - addr)
		n = (size_t)(f->end - addr);
	if (n > b->size - off)
		n = (size_t)(b->size - off);
	memcpy(buf, b->data + off, n);
	return n;
}

const char *core_mapped_resolve(struct core *core, const char *recorded_path)
{
	if (core->reader.ops && core->reader.ops->file_path) {
		const char *host = core->reader.ops->file_path(core->reader.ctx, recorded_path);
		if (host)
			return host;
	}
	struct backing *b = backing_get(core, recorded_path, true);
	if (!b)
		return NULL;
	if (b->state == BACKING_UNTRIED)
		backing_open(core, b);
	return b->state == BACKING_OK ? b->resolved : NULL;
}

void core_set_sysroot(struct core *core, const char *sysroot)
{
	free(core->sysroot);
	core->sysroot = sysroot ? strdup(sysroot) : NULL;
}

struct core_error *core_set_file_replacement(struct core *core, const char *recorded_path,
					     const char *replacement)
{
	struct backing *b = backing_get(core, recorded_path, true);
	if (!b)
		return &core_error_nomem;
	backing_unmap(b);
	free(b->replacement);
	b->replacement = strdup(replacement);
	b->state = BACKING_UNTRIED;
	return b->replacement ? NULL : &core_error_nomem;
}
