#include "segments.h"

#include <string.h>

#include "../base/array.h"
#include "corewrite.h"
#include "image.h"
#include "mapped.h"
#include "memory.h"

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
						       core_segment_range);
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

/* Only the bytes the core saved: its segments' and a minicore's pieces. */
static bool read_saved(const struct core *core, uint64_t addr, void *buf, size_t len)
{
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

static struct core_error *record_start(struct core *core)
{
	if (core->recorder)
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

/* The reader's operations, over the core (CTX) itself. */
static size_t segments_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return read_chunk(ctx, addr, buf, len);
}

static bool segments_read_saved(const void *ctx, uint64_t addr, void *buf, size_t len)
{
	return read_saved(ctx, addr, buf, len);
}

static uint64_t segments_stopped_ns(const void *ctx)
{
	const struct core *core = ctx;
	return core->snapshot.present ? core->snapshot.monotonic_ns : 0;
}

static bool segments_running(const void *ctx)
{
	const struct core *core = ctx;
	return core->snapshot.present;
}

static struct core_error *segments_record_start(void *ctx)
{
	return record_start(ctx);
}

const struct core_reader_ops core_segments_reader = {
	.read = segments_read,
	.read_saved = segments_read_saved,
	.stopped_ns = segments_stopped_ns,
	.running = segments_running,
	.record_start = segments_record_start,
};
