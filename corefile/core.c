#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/array.h"
#include "corewrite.h"
#include "decompress.h"
#include "identity.h"
#include "image.h"
#include "liveinfo.h"
#include "minidump.h"

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
							       seg->vaddr, core_segment_range);
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
	core->reader = (struct core_reader){ &core_segments_reader, core };
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
	free(core->off_cpu);
	core_fds_free(core->fds, core->nfds);
	free(core->auxv.execfn_string);
	free(core->sysroot);
	free(core->path);
	free(core);
}
