/* Unit tests for corefile/: note parsing and segment reads on crafted buffers. */
#include "../../corefile/core.h"
#include "../../corefile/image.h"
#include "../../corefile/mapped.h"
#include "../../corefile/notes.h"
#include "craft.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define UNIT_GROUP "corefile"
#include "unit.h"

/* NT_PRSTATUS for TID with just rip and fs_base set. */
static void prstatus(struct craft_notes *b, int32_t tid, uint64_t rip, uint64_t fs_base)
{
	uint64_t regs[CORE_REG_COUNT] = { 0 };
	regs[CORE_REG_RIP] = rip;
	regs[CORE_REG_FS_BASE] = fs_base;
	craft_prstatus(b, tid, 11, regs);
}

static struct core *empty_core(void)
{
	struct core *c = calloc(1, sizeof(*c));
	c->path = strdup("crafted");
	c->arch = &core_arch_x86_64;    /* core_open takes it from the ELF header */
	c->reader = (struct core_reader){ &core_segments_reader, c };  /* as core_open's */
	return c;
}

static void test_notes(void)
{
	struct craft_notes b = { 0 };
	prstatus(&b, 101, 0x401000, 0x7f0000001000);
	prstatus(&b, 102, 0x402000, 0x7f0000002000);
	unsigned char si[128] = { 0 };
	int32_t signo = 11, code = 1;
	uint64_t addr = 0xdead;
	memcpy(si, &signo, 4);
	memcpy(si + 8, &code, 4);
	memcpy(si + 16, &addr, 8);
	craft_note(&b, "CORE", NT_SIGINFO, si, sizeof(si));
	uint64_t auxv[] = { AT_PHDR, 0x400040, AT_ENTRY, 0x401020, AT_NULL, 0 };
	craft_note(&b, "CORE", NT_AUXV, auxv, sizeof(auxv));
	unsigned char nf[16 + 2 * 24 + 32] = { 0 };
	uint64_t hdr[2] = { 2, 4096 }, e1[3] = { 0x400000, 0x401000, 0 }, e2[3] = { 0x401000, 0x402000, 1 };
	memcpy(nf, hdr, 16);
	memcpy(nf + 16, e1, 24);
	memcpy(nf + 40, e2, 24);
	memcpy(nf + 64, "/bin/a\0/bin/a\0", 14);
	craft_note(&b, "CORE", NT_FILE, nf, 16 + 48 + 14);

	struct core *c = empty_core();
	struct core_error *err = core_parse_notes(c, b.data, b.len);
	CHECK("notes parse without error", err == NULL);
	CHECK("two threads in order", c->nthreads == 2 && c->threads[0].tid == 101 && c->threads[1].tid == 102);
	CHECK("registers rip and fs_base", c->threads[1].regs[CORE_REG_RIP] == 0x402000 &&
					     c->threads[1].regs[CORE_REG_FS_BASE] == 0x7f0000002000);
	CHECK("cursig", c->threads[0].cursig == 11);
	CHECK("siginfo", c->siginfo.present && c->siginfo.signo == 11 && c->siginfo.code == 1 &&
			 c->siginfo.addr == 0xdead);
	CHECK("auxv", c->auxv.phdr == 0x400040 && c->auxv.entry == 0x401020);
	CHECK("NT_FILE entries", c->nfiles == 2 && strcmp(c->files[1].path, "/bin/a") == 0 &&
				  c->files[1].offset == 4096);
	CHECK("no warnings on good notes", c->nwarnings == 0);
	CHECK("find file", core_find_file(c, 0x401800) == &c->files[1] && !core_find_file(c, 0x402000));
	CHECK("the kernel's sorted NT_FILE is marked sorted", c->files_sorted);
	core_close(c);

	/* A crafted NT_FILE out of order is still searched correctly. */
	struct craft_notes u = { 0 };
	memcpy(nf + 16, e2, 24);
	memcpy(nf + 40, e1, 24);
	craft_note(&u, "CORE", NT_FILE, nf, 16 + 48 + 14);
	c = empty_core();
	core_parse_notes(c, u.data, u.len);
	CHECK("unsorted NT_FILE is searched in full", !c->files_sorted &&
	      core_find_file(c, 0x400800) == &c->files[1] && core_find_file(c, 0x401800) == &c->files[0]);
	core_close(c);

	/* Every prefix of the notes parses without reading past the end. */
	bool all_ok = true;
	for (size_t cut = 0; cut < b.len; cut += 7) {
		struct core *t = empty_core();
		if (core_parse_notes(t, b.data, cut))
			all_ok = false;
		core_close(t);
	}
	CHECK("truncated notes never fail hard", all_ok);
	craft_notes_free(&b);
	craft_notes_free(&u);
}

static void test_bad_notes(void)
{
	struct craft_notes b = { 0 };
	unsigned char short_status[40] = { 0 };
	craft_note(&b, "CORE", NT_PRSTATUS, short_status, sizeof(short_status));
	struct core *c = empty_core();
	core_parse_notes(c, b.data, b.len);
	CHECK("short NT_PRSTATUS skipped with a warning", c->nthreads == 0 && c->nwarnings == 1);
	core_close(c);

	craft_notes_reset(&b);
	uint64_t nf[2] = { 1000000, 4096 };
	craft_note(&b, "CORE", NT_FILE, nf, sizeof(nf));
	c = empty_core();
	core_parse_notes(c, b.data, b.len);
	CHECK("NT_FILE count beyond the note is refused", c->nfiles == 0 && c->nwarnings == 1);
	core_close(c);

	craft_notes_reset(&b);
	uint32_t hdr[3] = { 5, 0x7fffffff, NT_PRSTATUS };
	craft_raw(&b, hdr, sizeof(hdr));
	craft_raw(&b, "CORE\0\0\0\0", 8);
	c = empty_core();
	core_parse_notes(c, b.data, b.len);
	CHECK("descriptor overrunning the segment is a warning", c->nthreads == 0 && c->nwarnings == 1);
	core_close(c);
	craft_notes_free(&b);
}

/* An image of LEN bytes at BYTES, in a memfd. */
static struct core_image *image_of(const unsigned char *bytes, size_t len)
{
	int fd = memfd_create("image", 0);
	if (fd < 0 || write(fd, bytes, len) != (ssize_t)len) {
		perror("memfd");
		exit(2);
	}
	return core_image_create(fd, len);
}

static void test_image(void)
{
	enum { LEN = 300 * 4096 + 123 };
	unsigned char *bytes = malloc(LEN), *out = malloc(LEN);
	for (size_t i = 0; i < LEN; i++)
		bytes[i] = (unsigned char)(i * 13 + i / 4096);
	struct core_image *img = image_of(bytes, LEN);
	CHECK("image: a read across a page boundary",
	      core_image_read(img, 4090, out, 20) && memcmp(out, bytes + 4090, 20) == 0);
	bool same = true;
	for (uint64_t page = 0; page < 300 && same; page += 3)   /* page P evicts P - 256 */
		same = core_image_read(img, page * 4096 + 7, out, 9) &&
		       memcmp(out, bytes + page * 4096 + 7, 9) == 0 &&
		       core_image_read(img, 4096 + 1, out, 3) && memcmp(out, bytes + 4097, 3) == 0;
	CHECK("image: pages that share a slot evict each other, never mix", same);
	CHECK("image: the last, partial page",
	      core_image_read(img, LEN - 5, out, 5) && memcmp(out, bytes + LEN - 5, 5) == 0);
	CHECK("image: a read past the end fails", !core_image_read(img, LEN - 5, out, 6) &&
						  !core_image_read(img, LEN + 1, out, 0));
	CHECK("image: a large read", core_image_read(img, 3, out, LEN - 3) &&
				     memcmp(out, bytes + 3, LEN - 3) == 0);
	static const struct { uint64_t off; size_t len; } reads[] = {
		{ 0, 16 }, { 4096, 4096 }, { 100, 3 * 4096 }, { LEN - 1, 1 }, { 5000, 3 }, { 0, LEN },
	};
	bool equal = true;
	for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]) && equal; i++)
		equal = core_image_read(img, reads[i].off, out, reads[i].len) &&
			memcmp(out, bytes + reads[i].off, reads[i].len) == 0;
	CHECK("image: whole pages, several pages, the whole file", equal);
	CHECK("image: an offset near 2^64 fails without wrapping",
	      !core_image_read(img, UINT64_MAX - 2, out, 4));
	unsigned char *copy = core_image_map_private(img);
	CHECK("image: the private copy has the bytes", copy && memcmp(copy, bytes, LEN) == 0);
	CHECK("image: a page of the copy made writable", core_image_writable(img, 4097));
	if (copy)
		copy[4097] ^= 0xff;
	CHECK("image: reads come from the copy once made",
	      core_image_read(img, 4097, out, 1) && out[0] == (bytes[4097] ^ 0xff));
	core_image_destroy(img);
	free(bytes);
	free(out);
}

/* The notes read from a file note by note (core_parse_notes_at) parse as
 * the same notes in a buffer do, every prefix too; a descriptor that is
 * not parsed is never read, so one past the file's end costs nothing. */
static void test_notes_at(void)
{
	struct craft_notes b = { 0 };
	unsigned char xstate[2688] = { 0 };
	prstatus(&b, 201, 0x401000, 0x7f0000001000);
	craft_note(&b, "LINUX", 0x202 /* NT_X86_XSTATE */, xstate, sizeof(xstate));
	prstatus(&b, 202, 0x402000, 0x7f0000002000);
	uint64_t auxv[] = { AT_PHDR, 0x400040, AT_ENTRY, 0x401020, AT_NULL, 0 };
	craft_note(&b, "CORE", NT_AUXV, auxv, sizeof(auxv));
	enum { PAD = 5000 };
	unsigned char *file = calloc(1, PAD + b.len);
	memcpy(file + PAD, b.data, b.len);
	struct core_image *img = image_of(file, PAD + b.len);
	bool same = true;
	for (size_t cut = 0; cut <= b.len && same; cut += cut + 7 < b.len ? 7 : 1) {
		struct core *x = empty_core(), *y = empty_core();
		struct core_error *ex = core_parse_notes(x, b.data, cut);
		struct core_error *ey = core_parse_notes_at(y, img, PAD, cut);
		same = !ex && !ey && x->nthreads == y->nthreads && x->nwarnings == y->nwarnings &&
		       x->auxv.entry == y->auxv.entry &&
		       (x->nthreads == 0 || memcmp(x->threads, y->threads,
						   x->nthreads * sizeof(*x->threads)) == 0);
		core_close(x);
		core_close(y);
	}
	CHECK("notes at: the same threads, auxv and warnings as from a buffer, every prefix", same);
	struct core *c = empty_core();
	struct core_error *err = core_parse_notes_at(c, img, PAD, b.len);
	CHECK("notes at: both threads and the auxv", !err && c->nthreads == 2 &&
	      c->threads[1].tid == 202 && c->auxv.entry == 0x401020 && c->nwarnings == 0);
	core_close(c);
	core_image_destroy(img);

	/* Only the XSAVE descriptor (larger than the window the notes are read
	 * through) lies past the file's end: it is not read. */
	struct craft_notes t = { 0 };
	unsigned char *big = calloc(1, 100000);
	prstatus(&t, 301, 0x401000, 0);
	size_t keep = t.len + 12 + 8;   /* up to the XSAVE note's descriptor */
	craft_note(&t, "LINUX", 0x202, big, 100000);
	size_t through_xsave = t.len;
	prstatus(&t, 302, 0x402000, 0);
	free(big);
	img = image_of(t.data, keep);
	c = empty_core();
	err = core_parse_notes_at(c, img, 0, through_xsave);
	CHECK("notes at: a skipped descriptor is not read", !err && c->nthreads == 1);
	core_close(c);
	core_image_destroy(img);
	img = image_of(t.data, t.len);
	c = empty_core();
	err = core_parse_notes_at(c, img, 0, t.len);
	CHECK("notes at: the note after a descriptor larger than the window",
	      !err && c->nthreads == 2 && c->threads[1].tid == 302);
	core_close(c);
	core_image_destroy(img);
	/* A wanted descriptor that cannot be read is an error naming the notes. */
	img = image_of(b.data, 40);
	c = empty_core();
	err = core_parse_notes_at(c, img, 0, b.len);
	CHECK("notes at: an unreadable descriptor is an error",
	      err && strstr(err->message, "cannot read the notes"));
	core_error_destroy(err);
	core_close(c);
	core_image_destroy(img);
	craft_notes_free(&b);
	craft_notes_free(&t);
	free(file);
}

static void test_segments(void)
{
	static unsigned char image[0x3000];
	for (size_t i = 0; i < sizeof(image); i++)
		image[i] = (unsigned char)(i * 7);
	struct core *c = empty_core();
	struct core_segment segs[] = {
		{ .vaddr = 0x1000, .memsz = 0x1000, .filesz = 0x1000, .offset = 0x0000 },
		{ .vaddr = 0x2000, .memsz = 0x1000, .filesz = 0x1000, .offset = 0x1000 },
		{ .vaddr = 0x5000, .memsz = 0x1000, .filesz = 0x800, .offset = 0x2000 },
	};
	c->segments = malloc(sizeof(segs));
	memcpy(c->segments, segs, sizeof(segs));
	c->nsegments = 3;
	c->image = image_of(image, sizeof(image));
	c->data_size = sizeof(image);

	CHECK("segment lookup edges", core_find_segment(c, 0x1000) == &c->segments[0] &&
		core_find_segment(c, 0x1fff) == &c->segments[0] &&
		core_find_segment(c, 0x2000) == &c->segments[1] &&
		core_find_segment(c, 0x2fff) == &c->segments[1] && !core_find_segment(c, 0x3000) &&
		!core_find_segment(c, 0xfff) && core_find_segment(c, 0x5fff) == &c->segments[2] &&
		!core_find_segment(c, 0x6000));

	unsigned char out[16];
	struct core_error *err = core_read(c, 0x1ff8, out, sizeof(out));
	CHECK("read spanning two segments", !err && memcmp(out, image + 0xff8, 16) == 0);
	core_error_destroy(err);

	err = core_read(c, 0x2ff8, out, sizeof(out));
	CHECK("read running off the end faults at the first unreadable address",
	      err && err->kind == CORE_ERROR_FAULT && err->address == 0x3000);
	core_error_destroy(err);

	memset(out, 0xff, sizeof(out));
	err = core_read(c, 0x57f8, out, sizeof(out));
	CHECK("bytes past p_filesz of anonymous memory read as zero",
	      !err && memcmp(out, image + 0x27f8, 8) == 0 && out[8] == 0 && out[15] == 0);
	core_error_destroy(err);

	uint64_t v;
	CHECK("read_u64 in the gap fails", !core_read_u64(c, 0x4000, &v));
	char s[8];
	CHECK("unterminated string is cut", !core_read_string(c, 0x1001, s, sizeof(s)) && strlen(s) == 7);

	c->segments[2].flags |= CORE_SEGMENT_TRUNCATED;
	CHECK("truncated segment faults past its saved bytes", !core_read_u64(c, 0x5800, &v));
	core_close(c);
}

/* A core without NT_FILE whose read-only segment saved nothing (qemu-user's
 * text and .rodata): zeros until the file mapped there is learned, then the
 * file's bytes over the learned range only. */
static void test_learned_file(void)
{
	static unsigned char image[16];
	char path[] = "/tmp/asyncore-unit-learnXXXXXX";
	int fd = mkstemp(path);
	unsigned char bytes[0x200];
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (unsigned char)(i * 5 + 1);
	CHECK("learned file: a file to map", fd >= 0 && write(fd, bytes, sizeof(bytes)) == (ssize_t)sizeof(bytes));
	if (fd >= 0)
		close(fd);
	struct core *c = empty_core();
	c->segments = malloc(sizeof(*c->segments));
	c->segments[0] = (struct core_segment){ .vaddr = 0x400000, .memsz = 0x1000, .flags = PF_R | PF_X };
	c->nsegments = 1;
	c->image = image_of(image, sizeof(image));
	c->data_size = sizeof(image);
	CHECK("learned file: the cache", core_mapped_init(c) == NULL);
	uint64_t v = 1;
	CHECK("learned file: unsaved and unnamed, the text reads as zeros",
	      core_read_u64(c, 0x400010, &v) && v == 0);
	CHECK("learned file: learned", core_mapped_learn(c, 0x400000, 0x400100, 0x40, path) == NULL &&
					core_mapped_learn(c, 0x400200, 0x400200, 0, path) == NULL);
	uint64_t want;
	memcpy(&want, bytes + 0x40 + 0x10, 8);
	CHECK("learned file: its bytes at their file offset", core_read_u64(c, 0x400010, &v) && v == want);
	unsigned char out[16];
	CHECK("learned file: a read across the range's end stops there",
	      core_read_bytes(c, 0x4000f8, out, sizeof(out)) && memcmp(out, bytes + 0x40 + 0xf8, 8) == 0 &&
	      out[8] == 0 && out[15] == 0);
	core_close(c);
	unlink(path);
}

/* A core whose one segment at 0x10000 saved the LEN bytes of NOTES. */
static struct core *core_saving(const unsigned char *notes, size_t len)
{
	struct core *c = empty_core();
	c->segments = malloc(sizeof(*c->segments));
	c->segments[0] = (struct core_segment){ .vaddr = 0x10000, .memsz = len, .filesz = len };
	c->nsegments = 1;
	c->image = image_of(notes, len);
	c->data_size = len;
	return c;
}

static void test_saved_build_id(void)
{
	struct craft_notes b = { 0 };
	uint32_t abi[4] = { 0, 3, 2, 0 };
	unsigned char bid[20], odd[7], huge[65];
	for (size_t i = 0; i < sizeof(huge); i++)
		huge[i] = (unsigned char)(i + 1);
	memcpy(bid, huge, sizeof(bid));
	memcpy(odd, huge, sizeof(odd));
	craft_note(&b, "GNU", NT_GNU_ABI_TAG, abi, sizeof(abi));
	craft_note(&b, "GNU", NT_GNU_BUILD_ID, huge, sizeof(huge));     /* too long: passed over */
	craft_note(&b, "Go", NT_GNU_BUILD_ID, bid, sizeof(bid));        /* not GNU's */
	size_t before = b.len;
	craft_note(&b, "GNU", NT_GNU_BUILD_ID, bid, sizeof(bid));
	struct core *c = core_saving(b.data, b.len);
	unsigned char id[CORE_BUILD_ID_MAX];
	size_t len = 99;
	CHECK("build-id found after other notes",
	      core_saved_build_id(c, 0x10000, b.len, id, &len) && len == sizeof(bid) &&
	      memcmp(id, bid, len) == 0);
	CHECK("notes saved without a build-id",
	      core_saved_build_id(c, 0x10000, before, id, &len) && len == 0);
	CHECK("notes not saved", !core_saved_build_id(c, 0x10004, b.len, id, &len) && len == 0);
	CHECK("less than a note header", !core_saved_build_id(c, 0x10000, 11, id, &len));
	CHECK("more than CORE_SAVED_NOTES_MAX",
	      !core_saved_build_id(c, 0x10000, CORE_SAVED_NOTES_MAX + 1ull, id, &len));
	bool cuts_ok = true;
	for (size_t cut = 12; cut < b.len; cut++)
		cuts_ok &= core_saved_build_id(c, 0x10000, cut, id, &len) && len == 0;
	CHECK("a cut build-id note is none", cuts_ok);
	core_close(c);

	craft_notes_reset(&b);
	craft_note(&b, "GNU", NT_GNU_BUILD_ID, odd, sizeof(odd));
	c = core_saving(b.data, b.len - 1);
	CHECK("the last descriptor's padding need not be saved",
	      core_saved_build_id(c, 0x10000, b.len - 1, id, &len) && len == sizeof(odd) &&
	      memcmp(id, odd, len) == 0);
	core_close(c);

	craft_notes_reset(&b);
	uint32_t hdr[3] = { 0xfffffffdu, sizeof(bid), NT_GNU_BUILD_ID };
	craft_raw(&b, hdr, sizeof(hdr));
	craft_note(&b, "GNU", NT_GNU_BUILD_ID, bid, sizeof(bid));
	c = core_saving(b.data, b.len);
	CHECK("a name overrunning the notes ends the search",
	      core_saved_build_id(c, 0x10000, b.len, id, &len) && len == 0);
	core_close(c);
	craft_notes_free(&b);
}

static void test_signal_names(void)
{
	CHECK("signal names", strcmp(core_signal_name(11), "SIGSEGV") == 0 &&
				strcmp(core_signal_name(6), "SIGABRT") == 0 && core_signal_name(0) == NULL &&
				core_signal_name(99) == NULL);
	CHECK("si_code names", strcmp(core_signal_code_name(11, 1), "SEGV_MAPERR") == 0 &&
				 strcmp(core_signal_code_name(6, -6), "SI_TKILL") == 0 &&
				 strcmp(core_signal_code_name(11, 0x80), "SI_KERNEL") == 0 &&
				 core_signal_code_name(11, 77) == NULL);
}

/* aarch64's struct elf_prstatus (392 bytes, pr_reg x0..x30, sp, pc, pstate
 * at 112) for TID with x29, sp and pc set. */
static void prstatus_aarch64(struct craft_notes *b, int32_t tid, uint64_t pc)
{
	unsigned char d[392] = { 0 };
	uint64_t x29 = 0x7ffff000, sp = 0x7fffef00;
	memcpy(d + 32, &tid, 4);
	memcpy(d + 112 + 8 * CORE_A64_X29, &x29, 8);
	memcpy(d + 112 + 8 * CORE_A64_SP, &sp, 8);
	memcpy(d + 112 + 8 * CORE_A64_PC, &pc, 8);
	craft_note(b, "CORE", NT_PRSTATUS, d, sizeof(d));
}

static void test_aarch64_notes(void)
{
	struct craft_notes b = { 0 };
	uint64_t tls = 0x7fb7ff0700, pac[2] = { 0x007f000000000000ull, 0x007f000000000000ull };  /* VA_BITS 48 */
	prstatus_aarch64(&b, 201, 0x400800);
	craft_note(&b, "LINUX", 0x401 /* NT_ARM_TLS */, &tls, sizeof(tls));
	craft_note(&b, "LINUX", 0x406 /* NT_ARM_PAC_MASK */, pac, sizeof(pac));
	prstatus_aarch64(&b, 202, 0x400900);     /* qemu-user: no NT_ARM_TLS */

	struct core *c = empty_core();
	c->arch = core_arch_for_machine(EM_AARCH64);
	CHECK("aarch64 has a table", c->arch && strcmp(c->arch->name, "aarch64") == 0);
	CHECK("aarch64 notes parse", c->arch && core_parse_notes(c, b.data, b.len) == NULL);
	uint64_t tp = 0;
	CHECK("aarch64 threads", c->nthreads == 2 && c->threads[0].tid == 201 && c->threads[1].tid == 202);
	CHECK("aarch64 pc, sp, x29 by role", c->nthreads == 2 &&
	      core_thread_pc(c, &c->threads[0]) == 0x400800 && core_thread_sp(c, &c->threads[0]) == 0x7fffef00 &&
	      core_thread_fp(c, &c->threads[0]) == 0x7ffff000);
	CHECK("NT_ARM_TLS completes its thread", c->nthreads == 2 && core_thread_tp(c, &c->threads[0], &tp) &&
	      tp == tls && c->threads[0].nregs == CORE_A64_COUNT);
	CHECK("a thread without NT_ARM_TLS has no thread pointer",
	      c->nthreads == 2 && !core_thread_tp(c, &c->threads[1], &tp) && c->threads[1].nregs == 34);
	CHECK("NT_ARM_PAC_MASK read", c->pac_insn_mask == pac[1]);
	CHECK("a signed return address is stripped",
	      c->arch && c->arch->strip_ra(c, 0x003d000000400a3cull) == 0x400a3c &&
	      c->arch->strip_ra(c, 0x400a3c) == 0x400a3c);
	CHECK("register names", c->arch && strcmp(core_arch_reg_name(c->arch, CORE_A64_TPIDR_EL0), "tpidr_el0") == 0 &&
	      strcmp(core_arch_dwarf_name(c->arch, 31), "sp") == 0 && strcmp(core_arch_dwarf_name(c->arch, 32), "?") == 0);
	core_close(c);

	/* An x86_64 core's notes read as x86_64's whatever other notes say: an
	 * aarch64 thread-pointer note changes nothing, and aarch64's longer
	 * prstatus gives x86_64's registers from its words. */
	struct craft_notes x = { 0 };
	prstatus(&x, 301, 0x401000, 0x7f0000001000);
	craft_note(&x, "LINUX", 0x401, &tls, sizeof(tls));
	c = empty_core();
	core_parse_notes(c, x.data, x.len);
	CHECK("x86_64 ignores NT_ARM_TLS", c->nthreads == 1 && core_thread_tp(c, &c->threads[0], &tp) &&
	      tp == 0x7f0000001000 && c->threads[0].nregs == CORE_REG_COUNT);
	core_close(c);

	/* x86_64's 336-byte prstatus is too short for aarch64: skipped, with a warning. */
	c = empty_core();
	c->arch = core_arch_for_machine(EM_AARCH64);
	core_parse_notes(c, x.data, x.len);
	CHECK("a prstatus too short for aarch64 is skipped with a warning", c->nthreads == 0 && c->nwarnings >= 1);
	core_close(c);
	craft_notes_free(&b);
	craft_notes_free(&x);
}

int main(void)
{
	test_notes();
	test_aarch64_notes();
	test_bad_notes();
	test_image();
	test_notes_at();
	test_segments();
	test_learned_file();
	test_saved_build_id();
	test_signal_names();
	return unit_exit();
}
