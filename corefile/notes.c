#include "notes.h"

#include "../base/array.h"
#include "liveinfo.h"
#include "image.h"
#include "memory.h"
#include "signals.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

/* struct elf_prstatus offsets before pr_reg, the same on every 64-bit
 * Linux architecture (kernel ABI); pr_reg's place and size are the
 * architecture's (corefile/arch.h). */
enum {
	PRSTATUS_CURSIG = 12,
	PRSTATUS_SIGPEND = 16,
	PRSTATUS_SIGHOLD = 24,
	PRSTATUS_PID = 32,
	PRSTATUS_PPID = 36,
	PRSTATUS_PGRP = 40,
	PRSTATUS_SID = 44,
};

/* x86_64 struct elf_prpsinfo offsets. */
enum {
	PRPSINFO_STATE = 0,
	PRPSINFO_SNAME = 1,
	PRPSINFO_UID = 16,
	PRPSINFO_GID = 20,
	PRPSINFO_PID = 24,
	PRPSINFO_PPID = 28,
	PRPSINFO_PGRP = 32,
	PRPSINFO_SID = 36,
	PRPSINFO_FNAME = 40,
	PRPSINFO_ARGS = 56,
	PRPSINFO_SIZE = 136,
};

static uint64_t get_u64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t get_u32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static uint16_t get_u16(const unsigned char *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static struct core_error *parse_prstatus(struct core *core, const unsigned char *d, size_t len)
{
	const struct core_arch *arch = core->arch;
	bool fits = len >= arch->prstatus_regs + 8 * (size_t)arch->nprstatus_regs;
	if (len != arch->prstatus_size && !core->prstatus_misfit) {
		/* Another machine's layout: the ELF header may lie about it. */
		core->prstatus_misfit = len;
		if (fits)
			core_warn(core, "NT_PRSTATUS note of %zu bytes where %s's has %zu: its registers "
				  "may be misread", len, arch->name, arch->prstatus_size);
	}
	if (!fits) {
		core_warn(core, "NT_PRSTATUS note of %zu bytes is too short; thread skipped", len);
		return NULL;
	}
	struct core_thread *threads = realloc(core->threads,
					      (core->nthreads + 1) * sizeof(*threads));
	if (!threads)
		return &core_error_nomem;
	core->threads = threads;
	struct core_thread *t = &threads[core->nthreads++];
	memset(t, 0, sizeof(*t));
	t->cursig = get_u16(d + PRSTATUS_CURSIG);
	t->sigpend = get_u64(d + PRSTATUS_SIGPEND);
	t->sighold = get_u64(d + PRSTATUS_SIGHOLD);
	t->tid = (int32_t)get_u32(d + PRSTATUS_PID);
	t->ppid = (int32_t)get_u32(d + PRSTATUS_PPID);
	t->pgrp = (int32_t)get_u32(d + PRSTATUS_PGRP);
	t->sid = (int32_t)get_u32(d + PRSTATUS_SID);
	for (unsigned r = 0; r < arch->nprstatus_regs; r++)
		t->regs[r] = get_u64(d + arch->prstatus_regs + 8 * r);
	t->nregs = arch->nprstatus_regs;
	return NULL;
}

/* The thread pointer's note (NT_ARM_TLS) follows its thread's NT_PRSTATUS:
 * it completes the last thread read. */
static void parse_tp_note(struct core *core, const unsigned char *d, size_t len)
{
	const struct core_arch *arch = core->arch;
	if (core->nthreads == 0 || len < 8) {
		core_warn(core, "thread-pointer note of %zu bytes %s; ignored", len,
			  core->nthreads ? "is too short" : "before any thread");
		return;
	}
	struct core_thread *t = &core->threads[core->nthreads - 1];
	if (t->nregs != arch->nprstatus_regs || arch->reg_tp != arch->nprstatus_regs)
		return;   /* a second one for the same thread: the first stands */
	t->regs[arch->reg_tp] = get_u64(d);
	t->nregs = arch->reg_tp + 1;
}

/* The pointer-authentication note (NT_ARM_PAC_MASK): {data_mask, insn_mask}, the same for every thread. */
static void parse_pac_mask(struct core *core, const unsigned char *d, size_t len)
{
	if (len >= 16 && !core->pac_insn_mask)
		core->pac_insn_mask = get_u64(d + 8);
}

static void parse_prpsinfo(struct core *core, const unsigned char *d, size_t len)
{
	if (len < PRPSINFO_SIZE) {
		core_warn(core, "NT_PRPSINFO note of %zu bytes is too short; ignored", len);
		return;
	}
	struct core_psinfo *ps = &core->psinfo;
	ps->present = true;
	ps->state = (char)d[PRPSINFO_SNAME];
	ps->uid = get_u32(d + PRPSINFO_UID);
	ps->gid = get_u32(d + PRPSINFO_GID);
	ps->pid = (int32_t)get_u32(d + PRPSINFO_PID);
	ps->ppid = (int32_t)get_u32(d + PRPSINFO_PPID);
	ps->pgrp = (int32_t)get_u32(d + PRPSINFO_PGRP);
	ps->sid = (int32_t)get_u32(d + PRPSINFO_SID);
	memcpy(ps->fname, d + PRPSINFO_FNAME, 16);
	ps->fname[16] = '\0';
	memcpy(ps->args, d + PRPSINFO_ARGS, 80);
	ps->args[80] = '\0';
	(void)PRPSINFO_STATE;
}

/* siginfo_t: si_signo@0 si_errno@4 si_code@8, union @16. */
static void parse_siginfo(struct core *core, const unsigned char *d, size_t len)
{
	if (len < CORE_SIGINFO_SIZE) {
		core_warn(core, "NT_SIGINFO note of %zu bytes is too short; ignored", len);
		return;
	}
	core_siginfo_parse(d, &core->siginfo);
}

static void parse_auxv(struct core *core, const unsigned char *d, size_t len)
{
	struct core_auxv *a = &core->auxv;
	a->present = true;
	for (size_t off = 0; off + 16 <= len; off += 16) {
		uint64_t type = get_u64(d + off), val = get_u64(d + off + 8);
		switch (type) {
		case AT_NULL: return;
		case AT_PHDR: a->phdr = val; break;
		case AT_PHENT: a->phent = val; break;
		case AT_PHNUM: a->phnum = val; break;
		case AT_PAGESZ: a->pagesz = val; break;
		case AT_BASE: a->base = val; break;
		case AT_ENTRY: a->entry = val; break;
		case AT_EXECFN: a->execfn = val; break;
		case AT_SYSINFO_EHDR: a->sysinfo_ehdr = val; break;
		default: break;
		}
	}
}

/* NT_FILE: count, page_size, then count {start, end, file_ofs (pages)},
 * then count NUL-terminated names. */
static struct core_error *parse_file_note(struct core *core, const unsigned char *d, size_t len)
{
	if (len < 16 || core->files) {
		core_warn(core, "NT_FILE note malformed or repeated; mapped files unknown");
		return NULL;
	}
	uint64_t count = get_u64(d), page = get_u64(d + 8);
	if (count > (len - 16) / 24) {
		core_warn(core, "NT_FILE note claims %llu files in %zu bytes; ignored",
			  (unsigned long long)count, len);
		return NULL;
	}
	struct core_mapped_file *files = calloc(count ? count : 1, sizeof(*files));
	if (!files)
		return &core_error_nomem;
	const char *names = (const char *)d + 16 + count * 24;
	const char *end = (const char *)d + len;
	size_t n = 0;
	for (; n < count; n++) {
		const unsigned char *e = d + 16 + n * 24;
		size_t room = (size_t)(end - names);
		size_t nlen = strnlen(names, room);
		if (nlen == room)
			break;
		files[n].start = get_u64(e);
		files[n].end = get_u64(e + 8);
		files[n].offset = get_u64(e + 16) * (page ? page : 1);
		files[n].path = strdup(names);
		if (!files[n].path) {
			for (size_t i = 0; i < n; i++)
				free(files[i].path);
			free(files);
			return &core_error_nomem;
		}
		names += nlen + 1;
	}
	if (n < count)
		core_warn(core, "NT_FILE note truncated: %zu of %llu file names readable",
			  n, (unsigned long long)count);
	core->files = files;
	core->nfiles = n;
	core->files_sorted = true;
	for (size_t i = 0; i < n; i++)
		if (files[i].start >= files[i].end || (i > 0 && files[i].start < files[i - 1].end))
			core->files_sorted = false;
	return NULL;
}

/* The snapshot note (core.h): ignored when malformed, as any note. */
static void parse_snapshot(struct core *core, const unsigned char *desc, size_t dlen)
{
	struct core_snapshot *sn = &core->snapshot;
	if (dlen < 8 + sizeof(sn->taken_at) || sn->present)
		return;
	memcpy(&sn->paused_us, desc, 8);
	memcpy(sn->taken_at, desc + 8, sizeof(sn->taken_at));
	sn->taken_at[sizeof(sn->taken_at) - 1] = '\0';
	if (dlen >= 8 + sizeof(sn->taken_at) + 8)
		memcpy(&sn->monotonic_ns, desc + 8 + sizeof(sn->taken_at), 8);
	sn->present = true;
}

/* A minicore's source fingerprint (core.h): 64 lower-case hex digits. */
static void parse_source(struct core *core, const unsigned char *desc, size_t dlen)
{
	if (dlen < 64 || core->source_fingerprint[0])
		return;
	for (size_t i = 0; i < 64; i++)
		if (!strchr("0123456789abcdef", desc[i]) || !desc[i])
			return;
	memcpy(core->source_fingerprint, desc, 64);
	core->source_fingerprint[64] = '\0';
}

/* A minicore's source segments (core.h); a malformed list is ignored. */
static struct core_error *parse_layout(struct core *core, const unsigned char *desc, size_t dlen)
{
	size_t n = dlen / 24;
	if (core->layout || n == 0 || dlen % 24)
		return NULL;
	core->layout = calloc(n, sizeof(*core->layout));
	if (!core->layout)
		return &core_error_nomem;
	for (size_t i = 0; i < n; i++) {
		struct core_segment *seg = &core->layout[i];
		seg->vaddr = get_u64(desc + 24 * i);
		seg->memsz = get_u64(desc + 24 * i + 8);
		seg->flags = (uint32_t)get_u64(desc + 24 * i + 16) & (PF_R | PF_W | PF_X);
	}
	core->nlayout = n;
	return NULL;
}

/* CORE_NOTE_ANNOTATIONS: name and value strings in turn, each NUL-ended;
 * a pair cut by the end of the note is dropped. */
static struct core_error *parse_annotations(struct core *core, const unsigned char *desc, size_t dlen)
{
	if (core->annotations) {
		core_warn(core, "annotations note repeated; ignored");
		return NULL;
	}
	size_t cap = 0;
	for (size_t at = 0; at < dlen && core->nannotations < CORE_ANNOTATIONS_MAX;) {
		const unsigned char *name = desc + at, *end = memchr(name, '\0', dlen - at);
		const unsigned char *value = end ? end + 1 : NULL;
		const unsigned char *vend = value && value < desc + dlen ? memchr(value, '\0', (size_t)(desc + dlen - value)) : NULL;
		if (!vend)
			break;
		struct core_annotation *a = base_array_push(&core->annotations, &core->nannotations, &cap, sizeof(*a));
		if (!a || !(a->name = strdup((const char *)name)) || !(a->value = strdup((const char *)value)))
			return &core_error_nomem;
		at = (size_t)(vend + 1 - desc);
	}
	return NULL;
}

/* CORE_NOTE_MODULES; an entry cut by the end of the note, or whose
 * build-id is too long, ends the list. */
static struct core_error *parse_modules(struct core *core, const unsigned char *desc, size_t dlen)
{
	if (core->modules) {
		core_warn(core, "modules note repeated; ignored");
		return NULL;
	}
	size_t cap = 0;
	for (size_t at = 0; at + 20 <= dlen && core->nmodules < CORE_MODULES_MAX;) {
		uint32_t id_len = get_u32(desc + at + 16);
		size_t path_at = at + 20 + id_len;
		const unsigned char *end = id_len <= CORE_BUILD_ID_MAX && path_at < dlen
						   ? memchr(desc + path_at, '\0', dlen - path_at) : NULL;
		if (!end)
			break;
		struct core_module *m = base_array_push(&core->modules, &core->nmodules, &cap, sizeof(*m));
		if (!m || !(m->path = strdup((const char *)desc + path_at)))
			return &core_error_nomem;
		memcpy(&m->start, desc + at, 8);
		memcpy(&m->end, desc + at + 8, 8);
		memcpy(m->build_id, desc + at + 20, id_len);
		m->build_id_len = id_len;
		at = (size_t)(end + 1 - desc);
	}
	return NULL;
}

static struct core_error *parse_one(struct core *core, uint32_t type, const char *name,
				    const unsigned char *desc, size_t dlen)
{
	if (strcmp(name, CORE_NOTE_OWNER) == 0) {
		if (type == CORE_NOTE_SNAPSHOT)
			parse_snapshot(core, desc, dlen);
		else if (type == CORE_NOTE_SOURCE)
			parse_source(core, desc, dlen);
		else if (type == CORE_NOTE_LAYOUT)
			return parse_layout(core, desc, dlen);
		else if (type == CORE_NOTE_HELD)
			core->held_only = true;

		else if (type == CORE_NOTE_ANNOTATIONS)
			return parse_annotations(core, desc, dlen);
		else if (type == CORE_NOTE_MODULES)
			return parse_modules(core, desc, dlen);
		else if (type == CORE_NOTE_THREADS && !core->thread_infos)
			return core_liveinfo_parse_threads(desc, dlen, &core->thread_infos, &core->nthread_infos);
		else if (type == CORE_NOTE_FDS && !core->fds)
			return core_liveinfo_parse_fds(desc, dlen, &core->fds, &core->nfds);
		else if (type == CORE_NOTE_OFF_CPU && !core->off_cpu)
			return core_liveinfo_parse_off_cpu(desc, dlen, &core->off_cpu, &core->noff_cpu);
		return NULL;
	}
	bool is_core = strcmp(name, "CORE") == 0;
	bool is_linux = strcmp(name, "LINUX") == 0;
	if (!is_core && !is_linux)
		return NULL;
	if (is_linux && core->arch->tp_note && type == core->arch->tp_note) {
		parse_tp_note(core, desc, dlen);
		return NULL;
	}
	if (is_linux && core->arch->pac_note && type == core->arch->pac_note) {
		parse_pac_mask(core, desc, dlen);
		return NULL;
	}
	switch (type) {
	case NT_PRSTATUS:
		return is_core ? parse_prstatus(core, desc, dlen) : NULL;
	case NT_PRPSINFO:
		if (is_core)
			parse_prpsinfo(core, desc, dlen);
		return NULL;
	case NT_SIGINFO:
		if (!core->siginfo.present)
			parse_siginfo(core, desc, dlen);
		return NULL;
	case NT_AUXV:
		parse_auxv(core, desc, dlen);
		return NULL;
	case NT_FILE:
		return parse_file_note(core, desc, dlen);
	default:
		return NULL;
	}
}

static size_t align4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* One note: its header's fields, and where its name and descriptor lie. */
struct note_place {
	uint32_t namesz, descsz, type;
	size_t name_off, desc_off;
};

enum note_fit { NOTE_FITS, NOTE_NAME_OVERRUNS, NOTE_DESC_OVERRUNS };

/* The note whose 12-byte header H is at OFF of LEN bytes of notes
 * (OFF + 12 <= LEN) into *N, and whether its parts lie within them (the
 * last descriptor's padding need not). */
static enum note_fit note_place(const unsigned char *h, size_t off, size_t len,
				struct note_place *n)
{
	n->namesz = get_u32(h);
	n->descsz = get_u32(h + 4);
	n->type = get_u32(h + 8);
	n->name_off = off + 12;
	if (n->namesz > len - n->name_off)
		return NOTE_NAME_OVERRUNS;
	n->desc_off = n->name_off + align4(n->namesz);
	if (n->desc_off > len || n->descsz > len - n->desc_off)
		return NOTE_DESC_OVERRUNS;
	return NOTE_FITS;
}

/* Whether parse_one() reads a note's descriptor: the others (the FPU and
 * XSAVE state of every thread, the bulk of a many-threaded core's notes)
 * are skipped without being read. */
static bool wanted(const struct core *core, uint32_t type, const char *name)
{
	if (strcmp(name, CORE_NOTE_OWNER) == 0)
		return type == CORE_NOTE_SNAPSHOT || type == CORE_NOTE_SOURCE || type == CORE_NOTE_LAYOUT ||
		       type == CORE_NOTE_HELD || type == CORE_NOTE_ANNOTATIONS || type == CORE_NOTE_MODULES ||
		       type == CORE_NOTE_THREADS || type == CORE_NOTE_FDS || type == CORE_NOTE_OFF_CPU;
	bool is_core = strcmp(name, "CORE") == 0;
	if (!is_core && strcmp(name, "LINUX") != 0)
		return false;
	if (!is_core && ((core->arch->tp_note && type == core->arch->tp_note) ||
			 (core->arch->pac_note && type == core->arch->pac_note)))
		return true;
	switch (type) {
	case NT_PRSTATUS:
	case NT_PRPSINFO:
		return is_core;
	case NT_SIGINFO:
		return !core->siginfo.present;
	case NT_AUXV:
	case NT_FILE:
		return true;
	default:
		return false;
	}
}

/* Bytes of notes read at a time: a few hundred notes. */
enum { NOTE_WINDOW = 64 * 1024 };

/* Where a note segment's LEN bytes come from: a buffer, or the core's
 * image at file offset BASE, read through WINDOW (segment offsets [START,
 * START + FILLED)). */
struct note_source {
	const unsigned char *buf;
	struct core_image *img;
	uint64_t base;
	size_t len;
	unsigned char *window;
	size_t cap, start, filled;
	enum { SOURCE_OK, SOURCE_NOMEM, SOURCE_UNREADABLE } failed;
};

/* The N bytes at segment offset OFF (OFF + N <= the segment's length;
 * valid until the next call), or NULL with SRC->failed set (never for a
 * buffer). */
static const unsigned char *note_bytes(struct note_source *src, size_t off, size_t n)
{
	if (src->buf)
		return src->buf + off;
	if (off >= src->start && n <= src->filled && off - src->start <= src->filled - n)
		return src->window + (off - src->start);
	size_t want = n > NOTE_WINDOW ? n : NOTE_WINDOW;
	if (want > src->len - off)
		want = src->len - off;
	if (want > src->cap) {
		unsigned char *p = realloc(src->window, want ? want : 1);
		if (!p) {
			src->failed = SOURCE_NOMEM;
			return NULL;
		}
		src->window = p;
		src->cap = want;
	}
	src->start = off;
	src->filled = 0;
	/* Past what was asked, the file may end early (the caller said LEN):
	 * then just what was asked. */
	if (!core_image_read_direct(src->img, src->base + off, src->window, want) &&
	    !core_image_read_direct(src->img, src->base + off, src->window, want = n)) {
		src->failed = SOURCE_UNREADABLE;
		return NULL;
	}
	src->filled = want;
	return src->window;
}

/* Parse the LEN bytes of notes SRC gives. */
static struct core_error *walk_notes(struct core *core, struct note_source *src, size_t len)
{
	size_t off = 0;
	while (off + 12 <= len) {
		const unsigned char *h = note_bytes(src, off, 12);
		if (!h)
			return NULL;
		struct note_place p;
		enum note_fit fit = note_place(h, off, len, &p);
		if (fit != NOTE_FITS) {
			if (fit == NOTE_NAME_OVERRUNS)
				core_warn(core, "note at offset %zu: name overruns the note segment", off);
			else
				core_warn(core, "note at offset %zu (type %u): descriptor overruns the "
					  "note segment", off, p.type);
			return NULL;
		}
		char name[16] = "";
		const unsigned char *n = p.namesz > 0 && p.namesz <= sizeof(name)
						 ? note_bytes(src, p.name_off, p.namesz) : NULL;
		if (n) {
			memcpy(name, n, p.namesz);
			name[p.namesz - 1] = '\0';
		} else if (src->failed) {
			return NULL;
		}
		if (wanted(core, p.type, name)) {
			const unsigned char *desc = note_bytes(src, p.desc_off, p.descsz);
			if (!desc)
				return NULL;
			struct core_error *err = parse_one(core, p.type, name, desc, p.descsz);
			if (err)
				return err;
		}
		off = p.desc_off + align4(p.descsz);
	}
	return NULL;
}

struct core_error *core_parse_notes(struct core *core, const unsigned char *buf, size_t len)
{
	struct note_source src = {.buf = buf};
	return walk_notes(core, &src, len);
}

struct core_error *core_parse_notes_at(struct core *core, struct core_image *img, uint64_t off,
				       size_t len)
{
	struct note_source src = {.img = img, .base = off, .len = len};
	struct core_error *err = walk_notes(core, &src, len);
	free(src.window);
	if (!err && src.failed == SOURCE_NOMEM)
		err = &core_error_nomem;
	else if (!err && src.failed == SOURCE_UNREADABLE)
		err = core_error_create(CORE_ERROR_IO, "%s: cannot read the notes at offset 0x%llx",
					core->path, (unsigned long long)off);
	return err;
}

void core_notes_build_id(const unsigned char *notes, size_t len, unsigned char id[CORE_BUILD_ID_MAX],
			 size_t *id_len)
{
	*id_len = 0;
	for (size_t off = 0; off + 12 <= len;) {
		struct note_place n;
		if (note_place(notes + off, off, len, &n) != NOTE_FITS)
			return;
		if (n.type == NT_GNU_BUILD_ID && n.namesz == 4 &&
		    memcmp(notes + n.name_off, "GNU", 4) == 0 && n.descsz > 0 &&
		    n.descsz <= CORE_BUILD_ID_MAX) {
			memcpy(id, notes + n.desc_off, n.descsz);
			*id_len = n.descsz;
			return;
		}
		off = n.desc_off + align4(n.descsz);
	}
}

bool core_saved_build_id(const struct core *core, uint64_t at, uint64_t size,
			 unsigned char id[CORE_BUILD_ID_MAX], size_t *len)
{
	*len = 0;
	if (size < 12 || size > CORE_SAVED_NOTES_MAX)
		return false;
	unsigned char *notes = malloc((size_t)size);
	bool saved = notes && core_read_saved(core, at, notes, (size_t)size);
	if (saved)
		core_notes_build_id(notes, (size_t)size, id, len);
	free(notes);
	return saved;
}
