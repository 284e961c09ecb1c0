#include "target.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/array.h"
#include "../base/strlist.h"

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

void core_segment_range(const void *elem, uint64_t *start, uint64_t *end)
{
	const struct core_segment *seg = elem;
	*start = seg->vaddr;
	*end = seg->memsz > UINT64_MAX - seg->vaddr ? UINT64_MAX : seg->vaddr + seg->memsz;
}

const struct core_segment *core_find_segment(const struct core *core, uint64_t addr)
{
	return base_range_find(core->segments, core->nsegments, sizeof(*core->segments), addr,
			       core_segment_range);
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
