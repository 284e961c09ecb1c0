/* libFuzzer harness: a hostile core through the whole analysis and both
 * report writers.  See fuzz/README.md for how to build and run it.
 *
 * Raw mode (default): the fuzz input is the whole core file.
 *
 * Patch mode (ASYNCORE_FUZZ_BASE=CORE): the input is a list of patches written
 * over a fixed base core, so that mutations reach the notes, the segment
 * index, the unwinder and the async/recorder walks of a real core without
 * the fuzzer having to carry megabytes.  Each patch is
 *     u8 region, u32 offset (little-endian), u8 length, LENGTH bytes
 * REGION picks, modulo their number, one of: the ELF header, program headers
 * and notes; the bytes around each thread's stack pointer; each PT_LOAD's
 * file contents (its first 1 MiB); each range named in
 * ASYNCORE_FUZZ_HOT="VADDR:LEN,..." (recorder rings, folly roots).  OFFSET is
 * taken modulo the region's size.  The base core lives in a memfd; the bytes
 * a run overwrote are written back after it.
 *
 * Patch mode shares one dbg_cache between runs, as a batch ingest does.
 * The core is analysed from /proc/self/fd/N, so core_open() sees a regular
 * file, as it would from the command line. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../analyzer/driver.h"
#include "../reports/report.h"

#define MAX_REGIONS 512
#define MAX_PATCH_BYTES 65536

struct region {
	uint64_t offset, size;      /* file range of the base core */
};

static struct {
	FILE *devnull;
	int base_fd;                /* memfd with the base core; -1 in raw mode */
	unsigned char *base;        /* the base core's bytes (pristine) */
	size_t base_size;
	struct region regions[MAX_REGIONS];
	size_t nregions;
	struct dbg_cache *cache;    /* patch mode: the base's binaries parsed once */
} fz = { .base_fd = -1 };

static void die(const char *what)
{
	fprintf(stderr, "fuzz_core: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void add_region(uint64_t offset, uint64_t size)
{
	if (size == 0 || fz.nregions == MAX_REGIONS || offset >= fz.base_size)
		return;
	if (size > fz.base_size - offset)
		size = fz.base_size - offset;
	fz.regions[fz.nregions++] = (struct region){ offset, size };
}

/* File offset of virtual address VADDR in the base core, or -1. */
static int64_t vaddr_to_offset(const Elf64_Phdr *ph, size_t phnum, uint64_t vaddr, uint64_t *room)
{
	for (size_t i = 0; i < phnum; i++)
		if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr &&
		    vaddr - ph[i].p_vaddr < ph[i].p_filesz) {
			*room = ph[i].p_filesz - (vaddr - ph[i].p_vaddr);
			return (int64_t)(ph[i].p_offset + (vaddr - ph[i].p_vaddr));
		}
	return -1;
}

/* The stack pointers of the base core's threads (NT_PRSTATUS pr_reg.rsp). */
static size_t stack_pointers(const Elf64_Phdr *ph, size_t phnum, uint64_t *sps, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_NOTE || ph[i].p_offset + ph[i].p_filesz > fz.base_size)
			continue;
		const unsigned char *p = fz.base + ph[i].p_offset, *end = p + ph[i].p_filesz;
		while (end - p >= 12 && n < max) {
			uint32_t nh[3];
			memcpy(nh, p, sizeof(nh));
			const unsigned char *desc = p + 12 + ((nh[0] + 3) & ~3u);
			if (desc > end || nh[1] > (size_t)(end - desc))
				break;
			if (nh[2] == 1 /* NT_PRSTATUS */ && nh[1] >= 112 + 27 * 8)
				memcpy(&sps[n++], desc + 112 + 19 * 8, 8);
			p = desc + ((nh[1] + 3) & ~3u);
		}
	}
	return n;
}

static void index_base(void)
{
	Elf64_Ehdr eh;
	memcpy(&eh, fz.base, sizeof(eh));
	if (eh.e_phoff > fz.base_size || (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > fz.base_size - eh.e_phoff) {
		fprintf(stderr, "fuzz_core: base core has no readable program headers\n");
		exit(1);
	}
	size_t phnum = eh.e_phnum;
	Elf64_Phdr *ph = malloc((phnum ? phnum : 1) * sizeof(*ph));  /* aligned copy */
	if (!ph)
		die("malloc");
	memcpy(ph, fz.base + eh.e_phoff, phnum * sizeof(*ph));
	uint64_t head = eh.e_phoff + phnum * sizeof(Elf64_Phdr);
	for (size_t i = 0; i < phnum; i++)
		if (ph[i].p_type == PT_NOTE && ph[i].p_offset + ph[i].p_filesz > head)
			head = ph[i].p_offset + ph[i].p_filesz;
	add_region(0, head);
	uint64_t sps[64];
	size_t nsp = stack_pointers(ph, phnum, sps, 64);
	for (size_t i = 0; i < nsp; i++) {
		uint64_t room;
		int64_t off = vaddr_to_offset(ph, phnum, sps[i] - 256, &room);
		if (off >= 0)
			add_region((uint64_t)off, room < 16384 ? room : 16384);
	}
	const char *hot = getenv("ASYNCORE_FUZZ_HOT");
	while (hot && *hot) {
		char *end;
		uint64_t va = strtoull(hot, &end, 0), len = 0, room;
		if (*end == ':')
			len = strtoull(end + 1, &end, 0);
		int64_t off = vaddr_to_offset(ph, phnum, va, &room);
		if (off >= 0)
			add_region((uint64_t)off, len < room ? len : room);
		hot = *end == ',' ? end + 1 : "";
	}
	for (size_t i = 0; i < phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_filesz)
			add_region(ph[i].p_offset, ph[i].p_filesz < (1 << 20) ? ph[i].p_filesz : 1 << 20);
	free(ph);
	fprintf(stderr, "fuzz_core: base %zu bytes, %zu regions (%zu stacks)\n", fz.base_size,
		fz.nregions, nsp);
}

static void load_base(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		die(path);
	fz.base_size = (size_t)st.st_size;
	fz.base = mmap(NULL, fz.base_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (fz.base == MAP_FAILED)
		die("mmap");
	close(fd);
	fz.base_fd = memfd_create("base-core", 0);
	if (fz.base_fd < 0)
		die("memfd_create");
	for (size_t done = 0; done < fz.base_size;) {
		ssize_t n = pwrite(fz.base_fd, fz.base + done, fz.base_size - done, (off_t)done);
		if (n <= 0)
			die("pwrite");
		done += (size_t)n;
	}
	if (fz.base_size < sizeof(Elf64_Ehdr)) {
		fprintf(stderr, "fuzz_core: base core too small\n");
		exit(1);
	}
	index_base();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("ASYNCORE_CACHE_DIR", "", 1);
	fz.devnull = fopen("/dev/null", "w");
	if (!fz.devnull)
		die("/dev/null");
	const char *base = getenv("ASYNCORE_FUZZ_BASE");
	if (base && *base) {
		load_base(base);
		/* The binaries stay the same from run to run: parse them once,
		 * as a batch ingest does. */
		fz.cache = dbg_cache_create();
	}
	return 0;
}

static void analyze_fd(int fd)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	struct an_options opts = {0};
	struct analysis *an = NULL;
	struct core *core = NULL;
	struct core_identity id;
	struct core_error *err = core_open(path, &core);
	if (!err) {
		core_identity(core, &id);
		err = an_analyze(core, &id, &opts, fz.cache, &an);
	}
	core_close(core);
	if (err) {
		if (getenv("ASYNCORE_FUZZ_VERBOSE"))
			fprintf(stderr, "fuzz_core: unusable: %s\n", err->message);
		core_error_destroy(err);
		return;
	}
	if (getenv("ASYNCORE_FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz_core: %zu threads, %zu recorders, %zu warnings, signature %s\n",
			an->nthreads, an->nrecorders, an->nwarnings, an->signature ? an->signature : "-");
	rep_json_write(fz.devnull, an,
		       &(struct rep_json_options){.all_threads = true, .frame_registers = true});
	struct rep_text_options text = { .all_threads = true, .recorder_tail = 50 };
	rep_text_write(fz.devnull, an, &text);
	fflush(fz.devnull);
	an_analysis_destroy(an);
}

static void run_raw(const uint8_t *data, size_t size)
{
	int fd = memfd_create("core", 0);
	if (fd < 0)
		die("memfd_create");
	if (size && write(fd, data, size) != (ssize_t)size)
		die("write");
	analyze_fd(fd);
	close(fd);
}

/* Apply the patches in DATA to the memfd, analyse, then put the base back. */
static void run_patched(const uint8_t *data, size_t size)
{
	struct { uint64_t offset; uint32_t len; } undo[256];
	size_t nundo = 0, total = 0;
	while (size >= 6 && nundo < 256 && fz.nregions) {
		const struct region *r = &fz.regions[data[0] % fz.nregions];
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
		uint64_t at = r->offset + off % (r->size - len + 1);
		if (pwrite(fz.base_fd, data, len, (off_t)at) != (ssize_t)len)
			die("pwrite");
		undo[nundo].offset = at;
		undo[nundo++].len = (uint32_t)len;
		total += len;
		data += len;
		size -= len;
	}
	analyze_fd(fz.base_fd);
	for (size_t i = 0; i < nundo; i++)
		if (pwrite(fz.base_fd, fz.base + undo[i].offset, undo[i].len,
			   (off_t)undo[i].offset) != (ssize_t)undo[i].len)
			die("pwrite");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fz.base_fd >= 0)
		run_patched(data, size);
	else
		run_raw(data, size);
	return 0;
}
