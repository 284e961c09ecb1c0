#include "patch.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../reports/report.h"

#define MAX_PATCH_BYTES 65536

static void die(const char *what)
{
	fprintf(stderr, "fuzz: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void add_region(struct fz_base *b, uint64_t offset, uint64_t size)
{
	if (size == 0 || b->nregions == FZ_MAX_REGIONS || offset >= b->size)
		return;
	if (size > b->size - offset)
		size = b->size - offset;
	b->regions[b->nregions++] = (struct fz_region){offset, size};
}

/* The base's program headers (an aligned copy; caller frees), or exit. */
static Elf64_Phdr *program_headers(const struct fz_base *b, size_t *phnum)
{
	Elf64_Ehdr eh;
	memcpy(&eh, b->data, sizeof(eh));
	if (eh.e_phoff > b->size || (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > b->size - eh.e_phoff) {
		fprintf(stderr, "fuzz: base core has no readable program headers\n");
		exit(1);
	}
	*phnum = eh.e_phnum;
	Elf64_Phdr *ph = malloc((*phnum ? *phnum : 1) * sizeof(*ph));
	if (!ph)
		die("malloc");
	memcpy(ph, b->data + eh.e_phoff, *phnum * sizeof(*ph));
	return ph;
}

int64_t fz_base_offset(const struct fz_base *b, uint64_t vaddr, uint64_t *room)
{
	size_t phnum;
	Elf64_Phdr *ph = program_headers(b, &phnum);
	int64_t off = -1;
	for (size_t i = 0; i < phnum && off < 0; i++)
		if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr &&
		    vaddr - ph[i].p_vaddr < ph[i].p_filesz && ph[i].p_offset < b->size) {
			*room = ph[i].p_filesz - (vaddr - ph[i].p_vaddr);
			off = (int64_t)(ph[i].p_offset + (vaddr - ph[i].p_vaddr));
		}
	free(ph);
	return off;
}

/* NT_PRSTATUS: pr_reg (27 words, rsp the 20th) at 112 bytes in. */
#define PRSTATUS_REGS 112
#define PRSTATUS_NREGS 27

/* The stack pointers of the base core's threads (NT_PRSTATUS pr_reg.rsp),
 * and their registers as regions when REGS. */
static void find_stack_pointers(struct fz_base *b, const Elf64_Phdr *ph, size_t phnum, bool regs)
{
	for (size_t i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_NOTE || ph[i].p_offset > b->size ||
		    ph[i].p_filesz > b->size - ph[i].p_offset)
			continue;
		const unsigned char *p = b->data + ph[i].p_offset, *end = p + ph[i].p_filesz;
		while (end - p >= 12 && b->nsps < sizeof(b->sps) / sizeof(b->sps[0])) {
			uint32_t nh[3];
			memcpy(nh, p, sizeof(nh));
			if ((nh[0] + 3ull) > (uint64_t)(end - p - 12))
				break;
			const unsigned char *desc = p + 12 + ((nh[0] + 3) & ~3u);
			if (nh[1] > (size_t)(end - desc))
				break;
			if (nh[2] == NT_PRSTATUS && nh[1] >= PRSTATUS_REGS + PRSTATUS_NREGS * 8) {
				memcpy(&b->sps[b->nsps++], desc + PRSTATUS_REGS + 19 * 8, 8);
				if (regs)
					add_region(b, (uint64_t)(desc - b->data) + PRSTATUS_REGS,
						   PRSTATUS_NREGS * 8);
			}
			if ((nh[1] + 3ull) > (uint64_t)(end - desc))
				break;
			p = desc + ((nh[1] + 3) & ~3u);
		}
	}
}

static void add_hot_regions(struct fz_base *b)
{
	const char *hot = getenv("ASYNCORE_FUZZ_HOT");
	while (hot && *hot) {
		char *end;
		uint64_t va = strtoull(hot, &end, 0), len = 0, room;
		if (*end == ':')
			len = strtoull(end + 1, &end, 0);
		int64_t off = fz_base_offset(b, va, &room);
		if (off >= 0)
			add_region(b, (uint64_t)off, len < room ? len : room);
		hot = *end == ',' ? end + 1 : "";
	}
}

static void index_base(struct fz_base *b, unsigned want)
{
	size_t phnum;
	Elf64_Phdr *ph = program_headers(b, &phnum);
	Elf64_Ehdr eh;
	memcpy(&eh, b->data, sizeof(eh));
	uint64_t head = eh.e_phoff + phnum * sizeof(Elf64_Phdr);
	for (size_t i = 0; i < phnum; i++)
		if (ph[i].p_type == PT_NOTE && ph[i].p_offset + ph[i].p_filesz > head)
			head = ph[i].p_offset + ph[i].p_filesz;
	if (want & FZ_REGION_HEAD)
		add_region(b, 0, head);
	find_stack_pointers(b, ph, phnum, want & FZ_REGION_REGS);
	for (size_t i = 0; i < b->nsps && (want & FZ_REGION_STACKS); i++) {
		uint64_t room;
		int64_t off = fz_base_offset(b, b->sps[i] - 256, &room);
		if (off >= 0)
			add_region(b, (uint64_t)off, room < 16384 ? room : 16384);
	}
	if (want & FZ_REGION_HOT)
		add_hot_regions(b);
	for (size_t i = 0; i < phnum && (want & FZ_REGION_LOADS); i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_filesz)
			add_region(b, ph[i].p_offset, ph[i].p_filesz < (1 << 20) ? ph[i].p_filesz : 1 << 20);
	free(ph);
}

void fz_base_load(struct fz_base *b, const char *path, unsigned want)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	memset(b, 0, sizeof(*b));
	if (fd < 0 || fstat(fd, &st) < 0)
		die(path);
	b->size = (size_t)st.st_size;
	if (b->size < sizeof(Elf64_Ehdr)) {
		fprintf(stderr, "fuzz: %s: too small for a core\n", path);
		exit(1);
	}
	void *map = mmap(NULL, b->size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		die("mmap");
	b->data = map;
	close(fd);
	b->fd = memfd_create("base-core", 0);
	if (b->fd < 0)
		die("memfd_create");
	fz_base_reset(b);
	index_base(b, want);
}

bool fz_base_write(struct fz_base *b, uint64_t at, const void *bytes, size_t len)
{
	if (b->nundo == FZ_MAX_UNDO || at > b->size || len > b->size - at || len == 0)
		return false;
	if (pwrite(b->fd, bytes, len, (off_t)at) != (ssize_t)len)
		die("pwrite");
	b->undo[b->nundo].offset = at;
	b->undo[b->nundo++].len = (uint32_t)len;
	return true;
}

void fz_base_truncate(struct fz_base *b, uint64_t size)
{
	if (size >= b->size)
		return;
	if (ftruncate(b->fd, (off_t)size) != 0)
		die("ftruncate");
	b->truncated = size;
}

void fz_base_patch(struct fz_base *b, const uint8_t *data, size_t size)
{
	size_t total = 0;
	while (size >= 6 && b->nregions) {
		const struct fz_region *r = &b->regions[data[0] % b->nregions];
		uint32_t off;
		memcpy(&off, data + 1, 4);
		size_t len = data[5];
		data += 6;
		size -= 6;
		if (len > size)
			len = size;
		if (len > r->size)
			len = (size_t)r->size;
		if (len == 0 || total + len > MAX_PATCH_BYTES)
			break;
		if (!fz_base_write(b, r->offset + off % (r->size - len + 1), data, len))
			break;
		total += len;
		data += len;
		size -= len;
	}
}

void fz_base_restore(struct fz_base *b)
{
	if (b->truncated) {
		if (ftruncate(b->fd, (off_t)b->size) != 0 ||
		    pwrite(b->fd, b->data + b->truncated, b->size - b->truncated, (off_t)b->truncated) !=
			    (ssize_t)(b->size - b->truncated))
			die("restoring a truncated core");
		b->truncated = 0;
	}
	for (size_t i = b->nundo; i-- > 0;)
		if (pwrite(b->fd, b->data + b->undo[i].offset, b->undo[i].len,
			   (off_t)b->undo[i].offset) != (ssize_t)b->undo[i].len)
			die("pwrite");
	b->nundo = 0;
}

void fz_base_reset(struct fz_base *b)
{
	if (ftruncate(b->fd, (off_t)b->size) != 0)
		die("ftruncate");
	for (size_t done = 0; done < b->size;) {
		ssize_t n = pwrite(b->fd, b->data + done, b->size - done, (off_t)done);
		if (n <= 0)
			die("pwrite");
		done += (size_t)n;
	}
	b->nundo = 0;
	b->truncated = 0;
}

int fz_memfd(const char *name, const uint8_t *data, size_t size, char path[64])
{
	int fd = memfd_create(name, 0);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	snprintf(path, 64, "/proc/self/fd/%d", fd);
	return fd;
}

const char *fz_base_path(const struct fz_base *b, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", b->fd);
	return buf;
}

void fz_analyze_path(const char *path, const struct an_options *opts, struct dbg_cache *cache,
		     FILE *devnull)
{
	struct analysis *an = NULL;
	struct core *core = NULL;
	struct core_identity id;
	struct core_error *err = core_open(path, &core);
	if (!err) {
		core_identity(core, &id);
		err = an_analyze(core, &id, opts, cache, &an);
	}
	core_close(core);
	if (err) {
		if (getenv("ASYNCORE_FUZZ_VERBOSE"))
			fprintf(stderr, "fuzz: unusable: %s\n", err->message);
		core_error_destroy(err);
		return;
	}
	if (getenv("ASYNCORE_FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz: %zu threads, %zu recorders, %zu warnings, signature %s\n",
			an->nthreads, an->nrecorders, an->nwarnings, an->signature ? an->signature : "-");
	rep_json_write(devnull, an,
		       &(struct rep_json_options){.all_threads = true, .frame_registers = true});
	struct rep_text_options text = {.all_threads = true, .recorder_tail = 50, .source = true};
	rep_text_write(devnull, an, &text);
	fflush(devnull);
	an_analysis_destroy(an);
}

struct an_runtimes *fz_runtimes_from_env(const char *name)
{
	const char *list = getenv("ASYNCORE_FUZZ_RUNTIMES");
	if (!list || !*list)
		return NULL;
	struct an_runtimes *set = an_runtimes_create();
	char *copy = strdup(list), *save = NULL;
	if (!set || !copy)
		die("out of memory");
	for (char *file = strtok_r(copy, ":", &save); file; file = strtok_r(NULL, ":", &save)) {
		struct core_error *err = an_runtimes_load(set, file, false);
		if (err) {
			fprintf(stderr, "%s: %s\n", name, err->message);
			exit(1);
		}
	}
	free(copy);
	return set;
}

static struct {
	FILE *devnull;
	struct fz_base base;
	struct an_options opts;
	struct dbg_cache *cache;
} harness;

void fz_harness_init(const char *name, unsigned want, const struct an_options *opts)
{
	const char *base = getenv("ASYNCORE_FUZZ_BASE");
	setenv("ASYNCORE_CACHE_DIR", "", 1);
	harness.devnull = fopen("/dev/null", "w");
	if (!base || !*base || !harness.devnull) {
		fprintf(stderr, "%s: set ASYNCORE_FUZZ_BASE to the base core\n", name);
		exit(1);
	}
	fz_base_load(&harness.base, base, want);
	if (harness.base.nregions == 0) {
		fprintf(stderr, "%s: nothing to patch in %s (ASYNCORE_FUZZ_HOT?)\n", name, base);
		exit(1);
	}
	fprintf(stderr, "%s: base %zu bytes, %zu regions (%zu stacks)\n", name, harness.base.size,
		harness.base.nregions, harness.base.nsps);
	harness.opts = *opts;
	harness.cache = dbg_cache_create();
}

void fz_harness_run(const uint8_t *data, size_t size)
{
	char path[64];
	fz_base_patch(&harness.base, data, size);
	fz_analyze_path(fz_base_path(&harness.base, path, sizeof(path)), &harness.opts, harness.cache,
			harness.devnull);
	fz_base_restore(&harness.base);
}
