#include "core.h"
#include "minidump.h"
#include "liveinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/array.h"
#include "../base/strlist.h"
#include "corewrite.h"
#include "decompress.h"
#include "identity.h"
#include "image.h"
#include "mapped.h"
#include "notes.h"

uint64_t core_thread_pc(const struct core *core, const struct core_thread *t)
{
	return t->regs[core->arch->reg_pc];
}

uint64_t core_thread_sp(const struct core *core, const struct core_thread *t)
{
	return t->regs[core->arch->reg_sp];
}

uint64_t core_thread_fp(const struct core *core, const struct core_thread *t)
{
	return t->regs[core->arch->reg_fp];
}

bool core_thread_tp(const struct core *core, const struct core_thread *t, uint64_t *tp)
{
	*tp = t->regs[core->arch->reg_tp];
	return core->arch->reg_tp < t->nregs;
}

void core_warn(struct core *core, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	base_strlist_vappend(&core->warnings, &core->nwarnings, fmt, ap);
	va_end(ap);
}

int core_open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* Open PATH as the core's image; a compressed core is decompressed into a
 * temporary file first. */
static struct core_error *open_image(struct core *core, const char *path)
{
	int fd = core_open_regular(path);
	if (fd < 0)
		return core_error_create(CORE_ERROR_IO, "%s: %s", path,
					 errno == EINVAL ? "not a regular file" : strerror(errno));
	struct stat st;
	unsigned char head[8];
	struct core_error *err = NULL;
	if (fstat(fd, &st) < 0) {
		err = core_error_create(CORE_ERROR_IO, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		err = core_error_create(CORE_ERROR_FORMAT, "%s: not an ELF file (%lld bytes)", path,
					(long long)st.st_size);
		goto fail;
	}
	if (pread(fd, head, sizeof(head), 0) != (ssize_t)sizeof(head)) {
		err = core_error_create(CORE_ERROR_IO, "%s: cannot read: %s", path, strerror(errno));
		goto fail;
	}
	core->file_size = (uint64_t)st.st_size;
	uint64_t size = (uint64_t)st.st_size;
	if (core_is_compressed(head, sizeof(head))) {
		int raw_fd;
		err = core_decompress(path, fd, (size_t)st.st_size, &raw_fd, &size);
		close(fd);
		if (err)
			return err;
		fd = raw_fd;
		if (size < sizeof(Elf64_Ehdr)) {
			err = core_error_create(CORE_ERROR_FORMAT, "%s: not an ELF file after "
						"decompression (%llu bytes)", path, (unsigned long long)size);
			goto fail;
		}
		if (pread(fd, head, sizeof(head), 0) != (ssize_t)sizeof(head)) {
			err = core_error_create(CORE_ERROR_IO, "%s: cannot read: %s", path, strerror(errno));
			goto fail;
		}
	}
	if (core_is_minidump(head, sizeof(head))) {
		int elf_fd;
		err = core_minidump_convert(core, fd, size, &elf_fd, &size);
		close(fd);
		if (err)
			return err;
		fd = elf_fd;
	}
	core->data_size = (size_t)size;
	core->image = core_image_create(fd, size);
	return core->image ? NULL : &core_error_nomem;
fail:
	close(fd);
	return err;
}

static void segment_range(const void *elem, uint64_t *start, uint64_t *end)
{
	const struct core_segment *seg = elem;
	*start = seg->vaddr;
	*end = seg->memsz > UINT64_MAX - seg->vaddr ? UINT64_MAX : seg->vaddr + seg->memsz;
}

static int segment_cmp(const void *a, const void *b)
{
	const struct core_segment *x = a, *y = b;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* A minicore: its PT_LOADs become the pieces it kept, and its segments
 * those of the core it was cut from, so that whatever looks at mappings
 * sees the source's.  A segment starting with a piece holds it as its
 * saved bytes, as the kernel's first page of an ELF mapping. */
static void use_layout(struct core *core)
{
	core->pieces = core->segments;
	core->npieces = core->nsegments;
	core->segments = core->layout;
	core->nsegments = core->nlayout;
	core->layout = NULL;
	core->nlayout = 0;
	qsort(core->segments, core->nsegments, sizeof(*core->segments), segment_cmp);
	for (size_t i = 0; i < core->nsegments; i++) {
		struct core_segment *seg = &core->segments[i];
		const struct core_segment *p = base_range_find(core->pieces, core->npieces, sizeof(*p),
							       seg->vaddr, segment_range);
		if (p && p->vaddr == seg->vaddr) {
			seg->offset = p->offset;
			seg->filesz = p->filesz < seg->memsz ? p->filesz : seg->memsz;
		}
	}
}

/* Read the program headers: PT_LOAD into the segment index, PT_NOTE parsed. */
static struct core_error *index_segments(struct core *core, size_t phnum)
{
	core->segments = calloc(phnum ? phnum : 1, sizeof(*core->segments));
	if (!core->segments)
		return &core_error_nomem;
	bool have_notes = false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(core->elf, (int)i, &ph))
			return core_error_create(CORE_ERROR_FORMAT, "%s: program header %zu unreadable: %s",
						 core->path, i, elf_errmsg(-1));
		if (ph.p_type == PT_NOTE) {
			if (ph.p_offset > core->data_size || ph.p_filesz > core->data_size - ph.p_offset)
				return core_error_create(CORE_ERROR_FORMAT,
					"%s: truncated core: notes at offset 0x%llx (+%llu) lie past the end of the file (%zu bytes)",
					core->path, (unsigned long long)ph.p_offset,
					(unsigned long long)ph.p_filesz, core->data_size);
			struct core_error *err = core_parse_notes_at(core, core->image, ph.p_offset,
								     (size_t)ph.p_filesz);
			if (err)
				return err;
			have_notes = true;
		} else if (ph.p_type == PT_LOAD && ph.p_memsz > 0) {
			struct core_segment *seg = &core->segments[core->nsegments++];
			seg->vaddr = ph.p_vaddr;
			seg->memsz = ph.p_memsz;
			seg->filesz = ph.p_filesz < ph.p_memsz ? ph.p_filesz : ph.p_memsz;
			seg->offset = ph.p_offset;
			seg->flags = ph.p_flags;
		}
	}
	if (!have_notes)
		return core_error_create(CORE_ERROR_FORMAT, "%s: core has no notes", core->path);
	qsort(core->segments, core->nsegments, sizeof(*core->segments), segment_cmp);
	if (core->layout)
		use_layout(core);
	return NULL;
}

/* A segment whose saved bytes lie past the end of the file lost them. */
static void check_truncation(struct core *core)
{
	uint64_t lost = 0;
	size_t nlost = 0;
	for (size_t i = 0; i < core->nsegments; i++) {
		struct core_segment *seg = &core->segments[i];
		if (seg->filesz == 0)
			continue;
		uint64_t avail = seg->offset >= core->data_size ? 0 : core->data_size - seg->offset;
		if (seg->filesz > avail) {
			lost += seg->filesz - avail;
			nlost++;
			seg->filesz = avail;
			seg->flags |= CORE_SEGMENT_TRUNCATED;
		}
	}
	if (nlost)
		core_warn(core, "core is truncated: %zu segments lost %llu bytes of memory (reads there fault)",
			  nlost, (unsigned long long)lost);
}

static struct core_error *check_threads(struct core *core)
{
	if (core->nthreads == 0 && core->prstatus_misfit)
		return core_error_create(CORE_ERROR_FORMAT,
			"%s: no NT_PRSTATUS note fits %s's layout (one has %zu bytes, %s's has %zu): "
			"the ELF header's machine (%u) may not be the core's", core->path, core->arch->name,
			core->prstatus_misfit, core->arch->name, core->arch->prstatus_size, core->arch->machine);
	if (core->nthreads == 0)
		return core_error_create(CORE_ERROR_FORMAT, "%s: core has no NT_PRSTATUS note (no threads)",
					 core->path);
	return NULL;
}

static void read_execfn(struct core *core)
{
	if (!core->auxv.execfn)
		return;
	char buf[4096];
	if (core_read_string(core, core->auxv.execfn, buf, sizeof(buf)))
		core->auxv.execfn_string = strdup(buf);
}

static struct core_error *open_elf(struct core *core, size_t *phnum)
{
	unsigned char ident[EI_NIDENT];
	if (!core_image_read(core->image, 0, ident, sizeof(ident)) || memcmp(ident, ELFMAG, SELFMAG) != 0)
		return core_error_create(CORE_ERROR_FORMAT, "%s: not an ELF file", core->path);
	/* Refused before libelf sees it: libelf would convert another byte
	 * order, and a private copy of the core is read-only. */
	if (ident[EI_DATA] != ELFDATA2LSB)
		return core_error_create(CORE_ERROR_FORMAT, "%s: core is big-endian (asyncore reads little-endian x86_64 and aarch64 cores)",
					 core->path);
	elf_version(EV_CURRENT);
	core->elf = elf_begin(core_image_fd(core->image), ELF_C_READ, NULL);
	if (!core->elf)
		return core_error_create(CORE_ERROR_FORMAT, "%s: not a readable ELF file: %s",
					 core->path, elf_errmsg(-1));
	GElf_Ehdr eh;
	if (!gelf_getehdr(core->elf, &eh))
		return core_error_create(CORE_ERROR_FORMAT, "%s: bad ELF header: %s", core->path,
					 elf_errmsg(-1));
	if (eh.e_type != ET_CORE) {
		const char *what = eh.e_type == ET_EXEC || eh.e_type == ET_DYN ? "an executable or library"
									    : "another kind of ELF file";
		return core_error_create(CORE_ERROR_FORMAT, "%s: not a core file (ELF type %u: %s)",
					 core->path, eh.e_type, what);
	}
	core->arch = core_arch_for_machine(eh.e_machine);
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || !core->arch)
		return core_error_create(CORE_ERROR_FORMAT,
					 "%s: core is neither x86_64 nor aarch64 (machine %u, class %u)",
					 core->path, eh.e_machine, eh.e_ident[EI_CLASS]);
	if (elf_getphdrnum(core->elf, phnum) != 0)
		return core_error_create(CORE_ERROR_FORMAT, "%s: program headers unreadable: %s",
					 core->path, elf_errmsg(-1));
	if (eh.e_phoff > core->data_size ||
	    (uint64_t)*phnum * eh.e_phentsize > core->data_size - eh.e_phoff)
		return core_error_create(CORE_ERROR_FORMAT,
			"%s: truncated core: program headers lie past the end of the file", core->path);
	return NULL;
}

/* The open after the image: ELF, segments, notes, mapped files. */
static struct core_error *open_parsed(struct core *core)
{
	size_t phnum;
	struct core_error *err = open_elf(core, &phnum);
	if (!err)
		err = index_segments(core, phnum);
	if (!err)
		err = check_threads(core);
	if (err)
		return err;
	check_truncation(core);
	err = core_mapped_init(core);
	if (err)
		return err;
	core_mapped_guard(core);
	read_execfn(core);
	return NULL;
}

struct core_error *core_open(const char *path, struct core **out)
{
	*out = NULL;
	struct core *core = calloc(1, sizeof(*core));
	if (!core)
		return &core_error_nomem;
	struct core_error *err = NULL;
	core->path = strdup(path);
	if (!core->path) {
		err = &core_error_nomem;
		goto fail;
	}
	err = open_image(core, path);
	if (!err)
		err = open_parsed(core);
	if (err)
		goto fail;
	*out = core;
	return NULL;
fail:
	core_close(core);
	return err;
}

struct core_error *core_open_reader(const char *name, int fd, const struct core_reader *reader,
				    struct core **out)
{
	*out = NULL;
	struct stat st;
	struct core *core = calloc(1, sizeof(*core));
	if (!core || fstat(fd, &st) != 0) {
		close(fd);
		free(core);
		return &core_error_nomem;
	}
	core->reader = *reader;
	core->path = strdup(name);
	core->file_size = core->data_size = (uint64_t)st.st_size;
	core->image = core_image_create(fd, (uint64_t)st.st_size);
	struct core_error *err = !core->path || !core->image ? &core_error_nomem : open_parsed(core);
	if (err) {
		core_close(core);
		return err;
	}
	*out = core;
	return NULL;
}

void core_close(struct core *core)
{
	if (!core)
		return;
	char sha256[65];
	core_identity_wait_sha256(core, sha256);
	if (core->reader.ops && core->reader.ops->closed)
		core->reader.ops->closed(core->reader.ctx, core);
	core_mapped_deinit(core);
	if (core->elf)
		elf_end(core->elf);
	core_image_destroy(core->image);
	for (size_t i = 0; i < core->nfiles; i++)
		free(core->files[i].path);
	free(core->files);
	for (size_t i = 0; i < core->nannotations; i++) {
		free(core->annotations[i].name);
		free(core->annotations[i].value);
	}
	free(core->annotations);
	for (size_t i = 0; i < core->nmodules; i++)
		free(core->modules[i].path);
	free(core->modules);
	for (size_t i = 0; i < core->nwarnings; i++)
		free(core->warnings[i]);
	free(core->warnings);
	free(core->segments);
	free(core->layout);
	free(core->pieces);
	core_writer_destroy(core->recorder);
	free(core->threads);
	free(core->thread_infos);
	core_fds_free(core->fds, core->nfds);
	free(core->auxv.execfn_string);
	free(core->sysroot);
	free(core->path);
	free(core);
}

const struct core_segment *core_find_segment(const struct core *core, uint64_t addr)
{
	return base_range_find(core->segments, core->nsegments, sizeof(*core->segments), addr,
			       segment_range);
}

bool core_is_executable(const struct core *core, uint64_t addr)
{
	const struct core_segment *seg = core_find_segment(core, addr);
	return seg && (seg->flags & PF_X);
}

static void file_range(const void *elem, uint64_t *start, uint64_t *end)
{
	const struct core_mapped_file *f = elem;
	*start = f->start;
	*end = f->end;
}

const struct core_mapped_file *core_find_file(const struct core *core, uint64_t addr)
{
	/* Called on every read the core did not save: binary search the
	 * kernel's sorted list; a crafted unsorted one is searched in full. */
	if (core->files_sorted)
		return base_range_find(core->files, core->nfiles, sizeof(*core->files), addr,
				       file_range);
	for (size_t i = 0; i < core->nfiles; i++)
		if (addr >= core->files[i].start && addr < core->files[i].end)
			return &core->files[i];
	return NULL;
}

/* Note that LEN bytes at ADDR were served from the core itself. */
static void record(const struct core *core, uint64_t addr, size_t len)
{
	if (core->recorder && len)
		core_writer_keep(core->recorder, addr, len);
}

/* Up to LEN bytes at ADDR from a minicore's kept pieces; 0 when none
 * holds ADDR. */
static size_t read_piece(const struct core *core, uint64_t addr, unsigned char *buf, size_t len)
{
	const struct core_segment *p = base_range_find(core->pieces, core->npieces, sizeof(*p), addr,
						       segment_range);
	if (!p || addr - p->vaddr >= p->filesz)
		return 0;
	uint64_t rel = addr - p->vaddr;
	size_t n = len < p->filesz - rel ? len : (size_t)(p->filesz - rel);
	return core_image_read(core->image, p->offset + rel, buf, n) ? n : 0;
}

/* Past a segment's saved bytes: a minicore's pieces, else the mapped
 * file, else zeros for anonymous memory the kernel did not save.  Zeros
 * are not recorded: a minicore gives them the same way, and a piece of
 * them would read as saved. */
static size_t read_unsaved(struct core *core, const struct core_segment *seg, uint64_t addr,
			   unsigned char *buf, size_t n)
{
	size_t got = core->pieces ? read_piece(core, addr, buf, n) : 0;
	if (got) {
		record(core, addr, got);
		return got;
	}
	if (core->held_only && (seg->flags & PF_W)) {
		memset(buf, 0, n);  /* a page of zeros the source held */
		return n;
	}
	size_t from_file = core_mapped_read(core, addr, buf, n);
	if (from_file)
		return from_file;
	if (seg->flags & CORE_SEGMENT_TRUNCATED)
		return 0;
	if (core_find_file(core, addr))
		return 0;
	memset(buf, 0, n);  /* anonymous memory never written */
	return n;
}

/* Copy what one segment (or its backing file) holds at ADDR; returns the
 * number of bytes served, 0 on a fault. */
static size_t read_chunk(struct core *core, uint64_t addr, unsigned char *buf, size_t len)
{
	if (core->reader.ops)
		return core->reader.ops->read(core->reader.ctx, addr, buf, len);
	/* Reads come in runs over one stack or one structure: try the segment
	 * of the last read before searching thousands. */
	const struct core_segment *seg = NULL;
	if (core->last_segment < core->nsegments) {
		const struct core_segment *last = &core->segments[core->last_segment];
		if (addr >= last->vaddr && addr - last->vaddr < last->memsz)
			seg = last;
	}
	if (!seg && (seg = core_find_segment(core, addr)) != NULL)
		core->last_segment = (size_t)(seg - core->segments);
	if (!seg)
		return core->held_only ? 0 : core_mapped_read(core, addr, buf, len);
	uint64_t rel = addr - seg->vaddr;
	uint64_t in_seg = seg->memsz - rel;
	size_t n = len < in_seg ? len : (size_t)in_seg;
	if (rel < seg->filesz) {
		uint64_t saved = seg->filesz - rel;
		if (n > saved)
			n = (size_t)saved;
		if (!core_image_read(core->image, seg->offset + rel, buf, n))
			return 0;
		record(core, addr, n);
		return n;
	}
	return read_unsaved(core, seg, addr, buf, n);
}

/* The one bounded-read loop: how many of LEN bytes at ADDR were read before
 * the first fault. */
static size_t read_upto_fault(struct core *core, uint64_t addr, void *buf, size_t len)
{
	unsigned char *p = buf;
	size_t done = 0;
	while (done < len) {
		size_t n = read_chunk(core, addr + done, p + done, len - done);
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

bool core_read_bytes(struct core *core, uint64_t addr, void *buf, size_t len)
{
	return read_upto_fault(core, addr, buf, len) == len;
}

struct core_error *core_read(struct core *core, uint64_t addr, void *buf, size_t len)
{
	size_t done = read_upto_fault(core, addr, buf, len);
	return done == len ? NULL : core_error_fault(addr + done, len - done);
}

const char *core_pointer_problem(struct core *core, uint64_t addr)
{
	if (addr == 0)
		return "is NULL";
	if (addr % 8 != 0)
		return "is misaligned";
	return core_is_readable(core, addr, 8) ? "is only partly readable" : "is not readable";
}

bool core_pointer_ok(struct core *core, uint64_t addr, size_t len, size_t align)
{
	return addr != 0 && (align == 0 || addr % align == 0) && len <= UINT64_MAX - addr &&
	       core_is_readable(core, addr, len);
}

bool core_read_saved(const struct core *core, uint64_t addr, void *buf, size_t len)
{
	if (core->reader.ops)
		return core->reader.ops->read(core->reader.ctx, addr, buf, len) == len;
	unsigned char *p = buf;
	while (len > 0) {
		const struct core_segment *seg = core_find_segment(core, addr);
		if (!seg)
			return false;
		size_t n;
		if (addr - seg->vaddr < seg->filesz) {
			uint64_t rel = addr - seg->vaddr;
			uint64_t saved = seg->filesz - rel;
			n = len < saved ? len : (size_t)saved;
			if (!core_image_read(core->image, seg->offset + rel, p, n))
				return false;  /* a truncated core */
		} else if (!core->pieces || !(n = read_piece(core, addr, p, len))) {
			return false;
		}
		record(core, addr, n);
		p += n;
		addr += n;
		len -= n;
	}
	return true;
}

struct core_error *core_record_start(struct core *core)
{
	if (core->reader.ops || core->recorder)
		return NULL;
	struct core_error *err = core_writer_create(core->arch->machine, &core->recorder);
	if (err)
		return err;
	/* What the open read, read again to be recorded. */
	char buf[4096];
	if (core->auxv.execfn)
		core_read_string(core, core->auxv.execfn, buf, sizeof(buf));
	return NULL;
}

struct core_writer *core_record_pause(struct core *core)
{
	struct core_writer *recorder = core->recorder;
	core->recorder = NULL;
	return recorder;
}

void core_record_resume(struct core *core, struct core_writer *recorder)
{
	core->recorder = recorder;
}

/* The first piece ending after ADDR (pieces are sorted, disjoint). */
static const struct core_segment *piece_after(const struct core *core, uint64_t addr)
{
	size_t lo = 0, hi = core->npieces;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct core_segment *p = &core->pieces[mid];
		if (p->vaddr + p->filesz <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < core->npieces ? &core->pieces[lo] : NULL;
}

bool core_saved_next(const struct core *core, const struct core_segment *seg, uint64_t *at,
		     uint64_t *end)
{
	uint64_t seg_end = seg->vaddr + seg->memsz;
	uint64_t from = *at < seg->vaddr ? seg->vaddr : *at;
	if (from < seg->vaddr + seg->filesz) {
		*at = from;
		*end = seg->vaddr + seg->filesz;
		return true;
	}
	const struct core_segment *p = core->pieces ? piece_after(core, from) : NULL;
	if (!p || p->vaddr >= seg_end)
		return false;
	*at = p->vaddr > from ? p->vaddr : from;
	*end = p->vaddr + p->filesz < seg_end ? p->vaddr + p->filesz : seg_end;
	return true;
}

bool core_read_u64(struct core *core, uint64_t addr, uint64_t *value)
{
	return core_read_bytes(core, addr, value, sizeof(*value));
}

bool core_stopped_at(const struct core *core, uint64_t *ns)
{
	*ns = core->reader.ops && core->reader.ops->stopped_ns ? core->reader.ops->stopped_ns(core->reader.ctx)
	      : core->snapshot.present ? core->snapshot.monotonic_ns : 0;
	return *ns != 0;
}

bool core_read_running(const struct core *core)
{
	return core->reader.ops || core->snapshot.present;
}

bool core_read_u32(struct core *core, uint64_t addr, uint32_t *value)
{
	return core_read_bytes(core, addr, value, sizeof(*value));
}

bool core_is_readable(struct core *core, uint64_t addr, size_t len)
{
	unsigned char tmp[256];
	while (len > 0) {
		size_t n = len < sizeof(tmp) ? len : sizeof(tmp);
		if (!core_read_bytes(core, addr, tmp, n))
			return false;
		addr += n;
		len -= n;
	}
	return true;
}

bool core_read_string(struct core *core, uint64_t addr, char *buf, size_t max)
{
	if (max == 0)
		return false;
	size_t got = 0;
	while (got + 1 < max) {
		size_t want = max - 1 - got;
		if (want > 64)
			want = 64;
		/* Shrink the chunk at page ends so a string near an unmapped page still reads. */
		uint64_t to_page = 4096 - ((addr + got) & 4095);
		if (want > to_page)
			want = (size_t)to_page;
		if (!core_read_bytes(core, addr + got, buf + got, want))
			break;
		void *nul = memchr(buf + got, '\0', want);
		if (nul)
			return true;
		got += want;
	}
	buf[got] = '\0';
	return false;
}

const char *core_executable(const struct core *core)
{
	if (core->auxv.execfn_string && core->auxv.execfn_string[0] == '/')
		return core->auxv.execfn_string;
	if (core->auxv.phdr) {
		const struct core_mapped_file *f = core_find_file(core, core->auxv.phdr);
		if (f)
			return f->path;
	}
	if (core->auxv.execfn_string)
		return core->auxv.execfn_string;
	return core->nfiles ? core->files[0].path : NULL;
}
