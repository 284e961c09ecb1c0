#include "corewrite.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "../base/array.h"

#define PAGE CORE_WRITE_PAGE
#define PAGE_DOWN(a) ((a) & ~(uint64_t)(PAGE - 1))

struct writer_region {
	uint64_t start, end;
	uint32_t flags;
};

/* A kept page: its address + 1 (0 marks a free slot of the table). */
struct writer_page {
	uint64_t key;
};

struct core_writer {
	uint16_t machine;
	unsigned char *notes;
	size_t notes_len, notes_cap;
	struct writer_region *regions;
	size_t nregions, regions_cap;
	bool regions_sorted;
	struct writer_page *pages;
	size_t pages_cap, npages;
	uint64_t last_key;          /* the page kept last: reads come in runs */
	bool failed;                /* out of memory while adding */
	bool whole_regions;         /* unkept parts of regions as PT_LOADs without bytes */
};

struct core_error *core_writer_create(uint16_t machine, struct core_writer **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return &core_error_nomem;
	(*out)->machine = machine;
	(*out)->regions_sorted = true;
	return NULL;
}

void core_writer_destroy(struct core_writer *w)
{
	if (!w)
		return;
	free(w->notes);
	free(w->regions);
	free(w->pages);
	free(w);
}

static void notes_put(struct core_writer *w, const void *src, size_t len)
{
	size_t padded = (len + 3) & ~(size_t)3;
	if (w->failed || !base_array_reserve(&w->notes, &w->notes_cap, w->notes_len + padded, 1)) {
		w->failed = true;
		return;
	}
	if (len)
		memcpy(w->notes + w->notes_len, src, len);
	memset(w->notes + w->notes_len + len, 0, padded - len);
	w->notes_len += padded;
}

void core_writer_add_note(struct core_writer *w, const char *owner, uint32_t type, const void *desc,
			  size_t len)
{
	if (len > UINT32_MAX) {
		w->failed = true;
		return;
	}
	Elf64_Nhdr nh = {.n_namesz = (Elf64_Word)strlen(owner) + 1, .n_descsz = (Elf64_Word)len,
			 .n_type = type};
	notes_put(w, &nh, sizeof(nh));
	notes_put(w, owner, nh.n_namesz);
	notes_put(w, desc, len);
}

void core_writer_add_files(struct core_writer *w, const struct core_write_file *files, size_t n)
{
	size_t names = 0;
	for (size_t i = 0; i < n; i++)
		names += strlen(files[i].path) + 1;
	size_t len = 16 + n * 24 + names;
	unsigned char *d = malloc(len);
	if (!d) {
		w->failed = true;
		return;
	}
	uint64_t count = n, page = PAGE;
	memcpy(d, &count, 8);
	memcpy(d + 8, &page, 8);
	char *name = (char *)d + 16 + n * 24;
	for (size_t i = 0; i < n; i++) {
		uint64_t e[3] = { files[i].start, files[i].end, files[i].offset / PAGE };
		memcpy(d + 16 + i * 24, e, sizeof(e));
		size_t k = strlen(files[i].path) + 1;
		memcpy(name, files[i].path, k);
		name += k;
	}
	core_writer_add_note(w, "CORE", NT_FILE, d, len);
	free(d);
}

void core_writer_add_region(struct core_writer *w, uint64_t start, uint64_t end, uint32_t flags)
{
	struct writer_region *r = base_array_push(&w->regions, &w->nregions, &w->regions_cap, sizeof(*r));
	if (!r) {
		w->failed = true;
		return;
	}
	*r = (struct writer_region){start, end, flags};
	if (w->nregions > 1 && start < w->regions[w->nregions - 2].start)
		w->regions_sorted = false;
}

static struct writer_page *page_slot(const struct core_writer *w, uint64_t page)
{
	if (!w->pages_cap)
		return NULL;
	for (size_t i = base_hash_slot(page + 1, w->pages_cap);; i = (i + 1) & (w->pages_cap - 1))
		if (w->pages[i].key == 0 || w->pages[i].key == page + 1)
			return &w->pages[i];
}

static void keep_page(struct core_writer *w, uint64_t page)
{
	if (w->last_key == page + 1)
		return;
	w->last_key = page + 1;
	struct writer_page *s = page_slot(w, page);
	if (s && s->key)
		return;
	if (!base_table_reserve(&w->pages, &w->pages_cap, w->npages, sizeof(*w->pages))) {
		w->failed = true;
		return;
	}
	page_slot(w, page)->key = page + 1;
	w->npages++;
}

void core_writer_keep(struct core_writer *w, uint64_t addr, uint64_t len)
{
	if (len == 0)
		return;
	uint64_t last = addr + (len - 1) < addr ? UINT64_MAX : addr + (len - 1);
	for (uint64_t p = PAGE_DOWN(addr);; p += PAGE) {
		keep_page(w, p);
		if (p >= PAGE_DOWN(last) || w->failed)
			break;
	}
}

void core_writer_merge(struct core_writer *w, const struct core_writer *from)
{
	for (size_t i = 0; i < from->pages_cap && !w->failed; i++)
		if (from->pages[i].key)
			keep_page(w, from->pages[i].key - 1);
	if (from->failed)
		w->failed = true;
}

bool core_writer_kept(const struct core_writer *w, uint64_t addr)
{
	const struct writer_page *s = page_slot(w, PAGE_DOWN(addr));
	return s && s->key;
}

uint64_t core_writer_bytes_kept(const struct core_writer *w)
{
	return (uint64_t)w->npages * PAGE;
}

/* ---- layout ------------------------------------------------------------ */

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int region_cmp(const void *a, const void *b)
{
	return u64_cmp(&((const struct writer_region *)a)->start, &((const struct writer_region *)b)->start);
}

static void region_range(const void *elem, uint64_t *start, uint64_t *end)
{
	const struct writer_region *r = elem;
	*start = r->start;
	*end = r->end;
}

static const struct writer_region *region_of(const struct core_writer *w, uint64_t addr)
{
	return base_range_find(w->regions, w->nregions, sizeof(*w->regions), addr, region_range);
}

/* The kept pages, sorted. */
static uint64_t *sorted_pages(const struct core_writer *w)
{
	uint64_t *pages = malloc((w->npages ? w->npages : 1) * sizeof(*pages));
	if (!pages)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < w->pages_cap; i++)
		if (w->pages[i].key)
			pages[k++] = w->pages[i].key - 1;
	qsort(pages, k, sizeof(*pages), u64_cmp);
	return pages;
}

/* One PT_LOAD: pages [FIRST, FIRST + COUNT) of the sorted list; ZERO:
 * pages that are all zero bytes, written without them. */
struct writer_run {
	size_t first, count;
	uint32_t flags;
	bool zero;
};

/* Runs of consecutive pages in one region, all zero (ZERO[i], NULL: none
 * is) or none. */
static struct writer_run *page_runs(const struct core_writer *w, const uint64_t *pages, const bool *zero,
				    size_t *nruns)
{
	struct writer_run *runs = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < w->npages;) {
		const struct writer_region *r = region_of(w, pages[i]);
		bool z = zero && zero[i];
		size_t j = i + 1;
		while (j < w->npages && pages[j] == pages[j - 1] + PAGE && region_of(w, pages[j]) == r &&
		       (zero && zero[j]) == z)
			j++;
		struct writer_run *run = base_array_push(&runs, &n, &cap, sizeof(*run));
		if (!run) {
			free(runs);
			return NULL;
		}
		*run = (struct writer_run){i, j - i, r ? r->flags : PF_R, z};
		i = j;
	}
	*nruns = n;
	return runs ? runs : calloc(1, sizeof(*runs));
}

void core_writer_whole_regions(struct core_writer *w)
{
	w->whole_regions = true;
}

/* A part of a region no kept page lies in: a PT_LOAD without bytes. */
struct writer_hole {
	uint64_t start, end;
	uint32_t flags;
};

/* The parts of the regions that RUNS (of the sorted PAGES) leave out. */
static struct writer_hole *region_holes(const struct core_writer *w, const uint64_t *pages,
					const struct writer_run *runs, size_t nruns, size_t *nholes)
{
	struct writer_hole *holes = NULL;
	size_t n = 0, cap = 0, j = 0;
	for (size_t i = 0; i < w->nregions && w->whole_regions; i++) {
		const struct writer_region *r = &w->regions[i];
		uint64_t at = r->start;
		if (r->flags & PF_W)
			continue;
		while (j < nruns && pages[runs[j].first] < r->start)
			j++;
		for (; at < r->end; j++) {
			uint64_t run = j < nruns && pages[runs[j].first] < r->end ? pages[runs[j].first] : r->end;
			struct writer_hole *h = run > at ? base_array_push(&holes, &n, &cap, sizeof(*h)) : NULL;
			if (run > at && !h) {
				free(holes);
				return NULL;
			}
			if (h)
				*h = (struct writer_hole){ at, run, r->flags };
			if (run == r->end)
				break;
			at = run + (uint64_t)runs[j].count * PAGE;
		}
	}
	*nholes = n;
	return holes ? holes : calloc(1, sizeof(*holes));
}

/* Which of the sorted kept PAGES are all zero bytes, read once through
 * READ: a whole stack of which a few pages are used costs their bytes
 * alone. */
static bool *zero_pages(const struct core_writer *w, const uint64_t *pages, core_writer_read_fn *read,
			void *ctx)
{
	static const unsigned char zeros[PAGE];
	unsigned char buf[PAGE];
	bool *zero = calloc(w->npages ? w->npages : 1, sizeof(*zero));
	for (size_t i = 0; zero && i < w->npages; i++)
		zero[i] = !read(ctx, pages[i], buf, PAGE) || memcmp(buf, zeros, PAGE) == 0;
	return zero;
}

/* ---- writing ----------------------------------------------------------- */

static bool write_all(FILE *out, const void *p, size_t len)
{
	return len == 0 || fwrite(p, 1, len, out) == len;
}

static void fill_ehdr(const struct core_writer *w, Elf64_Ehdr *eh, size_t phnum)
{
	memset(eh, 0, sizeof(*eh));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh->e_type = ET_CORE;
	eh->e_machine = w->machine;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = (Elf64_Half)phnum;
}

/* The PT_NOTE, then the PT_LOADs of the runs and the holes by address. */
static bool write_headers(const struct core_writer *w, FILE *out, const uint64_t *pages,
			  const struct writer_run *runs, size_t nruns, const struct writer_hole *holes,
			  size_t nholes, uint64_t data_off)
{
	Elf64_Ehdr eh;
	fill_ehdr(w, &eh, 1 + nruns + nholes);
	uint64_t notes_off = sizeof(eh) + (1 + nruns + nholes) * sizeof(Elf64_Phdr);
	Elf64_Phdr ph = {.p_type = PT_NOTE, .p_offset = notes_off, .p_filesz = w->notes_len, .p_align = 4};
	if (!write_all(out, &eh, sizeof(eh)) || !write_all(out, &ph, sizeof(ph)))
		return false;
	uint64_t off = data_off;
	for (size_t i = 0, k = 0; i < nruns || k < nholes;) {
		Elf64_Phdr load = {.p_type = PT_LOAD, .p_offset = off, .p_align = PAGE};
		if (k < nholes && (i == nruns || holes[k].start < pages[runs[i].first])) {
			load.p_vaddr = holes[k].start;
			load.p_memsz = holes[k].end - holes[k].start;
			load.p_flags = holes[k++].flags;
		} else {
			uint64_t size = (uint64_t)runs[i].count * PAGE;
			load.p_vaddr = pages[runs[i].first];
			load.p_memsz = size;
			load.p_filesz = runs[i].zero ? 0 : size;
			load.p_flags = runs[i++].flags;
			off += load.p_filesz;
		}
		if (!write_all(out, &load, sizeof(load)))
			return false;
	}
	return true;
}

static bool write_pages(FILE *out, const uint64_t *pages, const bool *zero, size_t n,
			core_writer_read_fn *read, void *ctx)
{
	unsigned char buf[PAGE];
	for (size_t i = 0; i < n; i++) {
		if (zero && zero[i])
			continue;
		if (!read(ctx, pages[i], buf, PAGE))
			memset(buf, 0, PAGE);
		if (!write_all(out, buf, PAGE))
			return false;
	}
	return true;
}

struct core_error *core_writer_write(struct core_writer *w, core_writer_read_fn *read, void *ctx,
				     FILE *out)
{
	if (w->failed)
		return &core_error_nomem;
	if (!w->regions_sorted) {
		qsort(w->regions, w->nregions, sizeof(*w->regions), region_cmp);
		w->regions_sorted = true;
	}
	size_t nruns = 0, nholes = 0;
	uint64_t *pages = sorted_pages(w);
	bool *zero = pages && w->whole_regions ? zero_pages(w, pages, read, ctx) : NULL;
	struct writer_run *runs = pages && (zero || !w->whole_regions) ? page_runs(w, pages, zero, &nruns) : NULL;
	struct writer_hole *holes = runs ? region_holes(w, pages, runs, nruns, &nholes) : NULL;
	struct core_error *err = NULL;
	if (!holes) {
		err = &core_error_nomem;
		goto out;
	}
	if (1 + nruns + nholes >= PN_XNUM) {   /* would need the section-header escape */
		err = core_error_create(CORE_ERROR_OTHER, "%zu runs of memory: more than an ELF core's "
					"program headers can list", nruns + nholes);
		goto out;
	}
	uint64_t notes_off = sizeof(Elf64_Ehdr) + (1 + nruns + nholes) * sizeof(Elf64_Phdr);
	uint64_t data_off = (notes_off + w->notes_len + PAGE - 1) & ~(uint64_t)(PAGE - 1);
	static const unsigned char zeros[PAGE];
	if (!write_headers(w, out, pages, runs, nruns, holes, nholes, data_off) || !write_all(out, w->notes, w->notes_len) ||
	    !write_all(out, zeros, (size_t)(data_off - notes_off - w->notes_len)) ||
	    !write_pages(out, pages, zero, w->npages, read, ctx) || fflush(out) != 0)
		err = core_error_create(CORE_ERROR_IO, "cannot write the core: %s", strerror(errno));
out:
	free(zero);
	free(holes);
	free(runs);
	free(pages);
	return err;
}

/* ---- to a file ----------------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

int core_zstd_compress(FILE *in, FILE *out, int level)
{
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	size_t in_cap = ZSTD_CStreamInSize(), out_cap = ZSTD_CStreamOutSize();
	void *ibuf = malloc(in_cap), *obuf = malloc(out_cap);
	int rc = -1;
	if (!cctx || !ibuf || !obuf || fseek(in, 0, SEEK_SET) != 0)
		goto out;
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
	for (;;) {
		size_t got = fread(ibuf, 1, in_cap, in);
		if (ferror(in))
			goto out;
		bool last = got < in_cap;
		ZSTD_inBuffer input = {ibuf, got, 0};
		bool done = false;
		while (!done) {
			ZSTD_outBuffer output = {obuf, out_cap, 0};
			size_t left = ZSTD_compressStream2(cctx, &output, &input, last ? ZSTD_e_end : ZSTD_e_continue);
			if (ZSTD_isError(left) || fwrite(obuf, 1, output.pos, out) != output.pos) {
				errno = ZSTD_isError(left) ? EIO : errno;
				goto out;
			}
			done = last ? left == 0 : input.pos == input.size;
		}
		if (last)
			break;
	}
	rc = fflush(out) == 0 ? 0 : -1;
out:
	free(ibuf);
	free(obuf);
	ZSTD_freeCCtx(cctx);
	return rc;
}

/* W's core into OUT, through a temporary file when compressed. */
static struct core_error *write_maybe_compressed(struct core_writer *w, core_writer_read_fn *read,
						 void *ctx, FILE *out, bool zst)
{
	if (!zst)
		return core_writer_write(w, read, ctx, out);
	FILE *tmp = tmpfile();
	if (!tmp)
		return core_error_create(CORE_ERROR_IO, "cannot create a temporary file: %s", strerror(errno));
	struct core_error *err = core_writer_write(w, read, ctx, tmp);
	if (!err && core_zstd_compress(tmp, out, 3) != 0)
		err = core_error_create(CORE_ERROR_IO, "cannot compress the core: %s", strerror(errno));
	fclose(tmp);
	return err;
}

struct core_error *core_writer_save(struct core_writer *w, core_writer_read_fn *read, void *ctx,
				    const char *path, uint64_t *size)
{
	size_t n = strlen(path);
	char *tmp = malloc(n + 16);
	if (!tmp)
		return &core_error_nomem;
	snprintf(tmp, n + 16, "%s.tmp%06d", path, (int)(getpid() % 1000000));
	struct core_error *err = NULL;
	FILE *out = fopen(tmp, "wb");
	if (!out) {
		err = core_error_create(CORE_ERROR_IO, "%s: %s", path, strerror(errno));
		goto out;
	}
	err = write_maybe_compressed(w, read, ctx, out, ends_with(path, ".zst"));
	long end = err ? 0 : ftell(out);
	if (fclose(out) != 0 && !err)
		err = core_error_create(CORE_ERROR_IO, "%s: %s", path, strerror(errno));
	if (!err && rename(tmp, path) != 0)
		err = core_error_create(CORE_ERROR_IO, "%s: %s", path, strerror(errno));
	if (err)
		unlink(tmp);
	else if (size)
		*size = end < 0 ? 0 : (uint64_t)end;
	if (err && err->kind == CORE_ERROR_IO && !strstr(err->message, path)) {
		struct core_error *named = core_error_create(CORE_ERROR_IO, "%s: %s", path, err->message);
		core_error_destroy(err);
		err = named;
	}
out:
	free(tmp);
	return err;
}
