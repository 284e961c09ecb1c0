/* folly async stacks: key, pthread slot, splice, suspended chains.
 *
 * Everything here is read from the core and untrusted: each pointer is
 * checked (non-NULL, 8-aligned, readable) before it is followed, every chain
 * is bounded and cycle-checked, and a broken chain ends with a warning that
 * names the address. */
#include "folly.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrset.h"
#include "frames.h"
#include "tsd.h"

#define FOLLY_KEY_SYMBOL "folly_async_stack_root_tls_key"
#define FOLLY_COOKIE_SYMBOL "__folly_suspended_frame_cookie"
#define FOLLY_LEAF_STORE_SYMBOL "__folly_leaf_frame_store"
#define FOLLY_KEY_NONE 0xffffffffu
#define MAX_ASYNC_FRAMES 1024u
#define MAX_ROOTS 64u
#define MAX_LEAVES 4096u
#define SCAN_CHUNK (1u << 20)

/* Member offsets of the two folly structures. */
struct folly_layout {
	uint64_t root_top, root_next, root_sfp, root_ret;
	uint64_t frame_parent, frame_ip, frame_root;
};

struct folly_root {
	uint64_t addr, top, next, sfp;
};

struct folly_frame {
	uint64_t addr, parent, ip, root;
};

struct folly_ctx {
	struct dbg_session *s;
	struct core *core;
	struct analysis *an;
	struct folly_layout lay;
	uint32_t key;
	struct an_tsd tsd;           /* the threads' pthread key slots */
	bool static_tls;             /* holder's static TLS offset known */
	uint64_t holder_tp_offset;   /* holder = thread pointer - this (TLS
				       variant I: + this) */
};

/* ---- layouts ------------------------------------------------------------ */

/* folly::tryGetCurrentAsyncStackRoot(), defined in the file that defines the
 * ABI's structs (folly/tracing/AsyncStack.cpp): where their DWARF is. */
#define FOLLY_LAYOUT_SYMBOL "_ZN5folly27tryGetCurrentAsyncStackRootEv"

static bool member(struct dbg_session *s, const char *type, const char *name, uint64_t *off)
{
	char qualified[64];
	snprintf(qualified, sizeof(qualified), "folly::%s", type);
	return dbg_member_offset_near(s, FOLLY_LAYOUT_SYMBOL, qualified, name, off) ||
	       dbg_member_offset(s, type, name, off);
}

/* The program's DWARF layout when it has one, else DESIGN.md's.  A layout
 * that cannot be right (overlapping or misaligned pointer members) is
 * refused with a warning. */
static void layout_init(struct folly_ctx *c)
{
	static const struct folly_layout defaults = { 0, 8, 16, 24, 0, 8, 16 };
	struct folly_layout l = defaults;

	member(c->s, "AsyncStackRoot", "topFrame", &l.root_top);
	member(c->s, "AsyncStackRoot", "nextRoot", &l.root_next);
	member(c->s, "AsyncStackRoot", "stackFramePtr", &l.root_sfp);
	member(c->s, "AsyncStackRoot", "returnAddress", &l.root_ret);
	member(c->s, "AsyncStackFrame", "parentFrame", &l.frame_parent);
	member(c->s, "AsyncStackFrame", "instructionPointer", &l.frame_ip);
	member(c->s, "AsyncStackFrame", "stackRoot", &l.frame_root);

	uint64_t r[] = { l.root_top, l.root_next, l.root_sfp, l.root_ret };
	uint64_t f[] = { l.frame_parent, l.frame_ip, l.frame_root };
	bool ok = true;
	for (size_t i = 0; i < 4; i++)
		for (size_t j = 0; j < 4; j++)
			ok = ok && r[i] % 8 == 0 && r[i] < 256 && (i == j || r[i] != r[j]);
	for (size_t i = 0; i < 3; i++)
		for (size_t j = 0; j < 3; j++)
			ok = ok && f[i] % 8 == 0 && f[i] < 256 && (i == j || f[i] != f[j]);
	if (!ok) {
		core_warn(c->core, "folly: debug info gives an implausible AsyncStackRoot/AsyncStackFrame "
			"layout; using the default layout");
		l = defaults;
	}
	c->lay = l;
}

/* ---- checked reads ------------------------------------------------------- */

static bool read_root(struct folly_ctx *c, uint64_t addr, struct folly_root *r)
{
	if (!core_pointer_ok(c->core, addr, 8, 8))
		return false;
	r->addr = addr;
	return core_read_u64(c->core, addr + c->lay.root_top, &r->top) &&
	       core_read_u64(c->core, addr + c->lay.root_next, &r->next) &&
	       core_read_u64(c->core, addr + c->lay.root_sfp, &r->sfp);
}

static bool read_frame(struct folly_ctx *c, uint64_t addr, struct folly_frame *f)
{
	if (!core_pointer_ok(c->core, addr, 8, 8))
		return false;
	f->addr = addr;
	return core_read_u64(c->core, addr + c->lay.frame_parent, &f->parent) &&
	       core_read_u64(c->core, addr + c->lay.frame_ip, &f->ip) &&
	       core_read_u64(c->core, addr + c->lay.frame_root, &f->root);
}

/* ---- key and pthread slot ------------------------------------------------ */

/* Reads the key's value from the core.  True when a usable key exists. */
static bool key_init(struct folly_ctx *c)
{
	uint64_t addr;
	uint32_t key;

	if (!dbg_find_symbol(c->s, FOLLY_KEY_SYMBOL, &addr, NULL))
		return false;
	if (!core_read_u32(c->core, addr, &key)) {
		core_warn(c->core, "folly: %s at 0x%" PRIx64 " is not readable; no async stacks",
			FOLLY_KEY_SYMBOL, addr);
		return false;
	}
	c->an->async_key_found = true;
	c->an->async_key = key;
	c->key = key;
	if (key == FOLLY_KEY_NONE)
		return false;
	if (key >= AN_TSD_KEYS_MAX) {
		core_warn(c->core, "folly: %s holds %" PRIu32 ", not a pthread key; no async stacks",
			FOLLY_KEY_SYMBOL, key);
		return false;
	}
	return true;
}

/* The executable's static TLS gives a second route to the holder when the
 * holder and the key live in the executable. */
static void static_tls_init(struct folly_ctx *c)
{
	static const char *const names[] = {
		"_ZN5folly12_GLOBAL__N_127currentThreadAsyncStackRootE",
		"currentThreadAsyncStackRoot",
	};
	uint64_t key_addr, holder_off, memsz, align;

	if (!dbg_find_symbol(c->s, FOLLY_KEY_SYMBOL, &key_addr, NULL))
		return;
	bool key_in_main = false;
	for (size_t i = 0; i < dbg_module_count(c->s); i++) {
		const struct dbg_module_info *m = dbg_module_get(c->s, i);
		if (m && m->is_main && key_addr >= m->start && key_addr < m->end)
			key_in_main = true;
	}
	if (!key_in_main || !dbg_main_tls(c->s, &memsz, &align) || align == 0 ||
	    (align & (align - 1)) != 0)
		return;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!dbg_find_symbol(c->s, names[i], &holder_off, NULL))
			continue;
		uint64_t block = (memsz + align - 1) & ~(align - 1);
		if (holder_off >= block)
			return;
		/* Variant I: the executable's block follows the TCB. */
		uint64_t tcb = c->core->arch->tcb_size;
		c->holder_tp_offset = c->core->arch->tls_variant1
			? ((tcb + align - 1) & ~(align - 1)) + holder_off : block - holder_off;
		c->static_tls = true;
		return;
	}
}

static void check_static_tls(struct folly_ctx *c, const struct an_thread *t, uint64_t holder)
{
	uint64_t fs = t->tls_tp;
	bool above = c->core->arch->tls_variant1;
	if (!c->static_tls || fs == 0 || (!above && fs < c->holder_tp_offset))
		return;
	uint64_t expect = above ? fs + c->holder_tp_offset : fs - c->holder_tp_offset;
	if (expect != holder)
		core_warn(c->core, "folly: thread %" PRId32 ": pthread slot holds holder 0x%" PRIx64
			" but static TLS puts it at 0x%" PRIx64, t->tid, holder, expect);
}

/* The thread's current root (0 when none); false when it cannot be known. */
static bool thread_root(struct folly_ctx *c, const struct an_thread *t, uint64_t *root)
{
	uint64_t holder = 0;

	*root = 0;
	switch (an_tsd_slot(&c->tsd, t, c->key, &holder)) {
	case AN_SLOT_EMPTY:
		return true;
	case AN_SLOT_BROKEN:
		return false;
	case AN_SLOT_SET:
		break;
	}
	check_static_tls(c, t, holder);
	if (!core_pointer_ok(c->core, holder, 8, 8) || !core_read_u64(c->core, holder, root)) {
		core_warn(c->core, "folly: thread %" PRId32 ": AsyncStackRoot holder 0x%" PRIx64 " %s",
			t->tid, holder, core_pointer_problem(c->core, holder));
		return false;
	}
	return true;
}

/* ---- the splice ---------------------------------------------------------- */

struct splice {
	struct folly_ctx *c;
	const struct an_thread *t;
	const struct dbg_frame *native;
	size_t nnative;
	size_t next;                 /* next native frame to consider */
	struct an_frame_list list;
	bool any;
	enum an_frame_kind last;
	size_t nasync;
	struct an_addr_set frames_seen, roots_seen;
	bool nomem;
};

static void emit(struct splice *sp, uint64_t pc, bool activation, enum an_frame_kind kind,
		 const struct dbg_frame *native)
{
	bool seam = sp->any && sp->last != kind;
	if (!an_frames_append_pc(&sp->list, sp->c->s, pc, activation, kind, native, seam))
		sp->nomem = true;
	sp->any = true;
	sp->last = kind;
}

/* The frame address of native frame I: where its {parent rbp, return
 * address} record sits when it saved rbp (CFA - 16); aarch64: its x29. */
static bool frame_at(const struct core_arch *arch, const struct dbg_frame *f, uint64_t addr)
{
	if (f->cfa && arch->record_below_cfa)
		return f->cfa >= 16 && f->cfa - 16 == addr;
	return f->has_fp && f->fp == addr;
}

/* Index of the first native frame from FROM whose frame address is ADDR,
 * or nnative when none is. */
static size_t find_native(const struct splice *sp, size_t from, uint64_t addr)
{
	for (size_t i = from; i < sp->nnative; i++)
		if (frame_at(sp->c->core->arch, &sp->native[i], addr))
			return i;
	return sp->nnative;
}

/* Native frames FROM..TO-1, with the tail calls between two of them. */
static void emit_native_range(struct splice *sp, size_t from, size_t to)
{
	for (size_t i = from; i < to && i < sp->nnative; i++) {
		emit(sp, sp->native[i].pc, sp->native[i].activation, AN_FRAME_NATIVE,
		     &sp->native[i]);
		if (!sp->nomem && i + 1 < to && i + 1 < sp->nnative &&
		    !an_frames_append_tail_calls(&sp->list, sp->c->s, &sp->native[i + 1]))
			sp->nomem = true;
	}
}

/* Walks one async chain from TOP, emitting each frame.  *BOTTOM_ROOT is the
 * bottom frame's stackRoot (0 when detached).  False when the chain is
 * broken (warned). */
static bool walk_async(struct splice *sp, uint64_t top, uint64_t *bottom_root)
{
	int32_t tid = sp->t->tid;
	uint64_t addr = top;

	*bottom_root = 0;
	while (addr) {
		struct folly_frame f;
		if (an_addr_set_has(&sp->frames_seen, addr)) {
			core_warn(sp->c->core, "folly: thread %" PRId32 ": async frame 0x%" PRIx64
				" repeats (parentFrame cycle); async stack cut there", tid, addr);
			return false;
		}
		if (sp->nasync >= MAX_ASYNC_FRAMES) {
			core_warn(sp->c->core, "folly: thread %" PRId32 ": more than %u async frames; "
				"async stack cut at 0x%" PRIx64, tid, MAX_ASYNC_FRAMES, addr);
			return false;
		}
		if (!read_frame(sp->c, addr, &f)) {
			core_warn(sp->c->core, "folly: thread %" PRId32 ": AsyncStackFrame 0x%" PRIx64
				" %s; async stack cut there", tid, addr, core_pointer_problem(sp->c->core, addr));
			return false;
		}
		if (an_addr_set_add(&sp->frames_seen, addr) < 0)
			sp->nomem = true;
		sp->nasync++;
		emit(sp, f.ip, false, AN_FRAME_ASYNC, NULL);
		if (!f.parent) {
			*bottom_root = f.root;
			return true;
		}
		addr = f.parent;
	}
	return true;
}

/* Reads root ADDR for the walk, warning when it cannot be used. */
static bool splice_root(struct splice *sp, uint64_t addr, struct folly_root *r)
{
	const char *cut = sp->any ? "stack cut there" : "showing the native stack";
	int32_t tid = sp->t->tid;

	if (an_addr_set_has(&sp->roots_seen, addr)) {
		core_warn(sp->c->core, "folly: thread %" PRId32 ": AsyncStackRoot 0x%" PRIx64
			" repeats (nextRoot cycle); %s", tid, addr, cut);
		return false;
	}
	if (sp->roots_seen.n >= MAX_ROOTS) {
		core_warn(sp->c->core, "folly: thread %" PRId32 ": more than %u AsyncStackRoots; "
			"%s at 0x%" PRIx64, tid, MAX_ROOTS, cut, addr);
		return false;
	}
	if (!read_root(sp->c, addr, r)) {
		core_warn(sp->c->core, "folly: thread %" PRId32 ": AsyncStackRoot 0x%" PRIx64
			" %s; %s", tid, addr, core_pointer_problem(sp->c->core, addr), cut);
		return false;
	}
	if (an_addr_set_add(&sp->roots_seen, addr) < 0)
		sp->nomem = true;
	return true;
}

/* DESIGN.md's walk: native frames up to the frame that registered the
 * root, its async chain, then back on the native stack past the function
 * that made the bottom frame's root (B) and its caller (S), whose pc the
 * bottom async frame already showed; repeat with that root's nextRoot. */
static void splice_walk(struct splice *sp, uint64_t root_addr)
{
	struct folly_root r;
	int32_t tid = sp->t->tid;

	if (!splice_root(sp, root_addr, &r)) {
		emit_native_range(sp, 0, sp->nnative);
		return;
	}
	for (;;) {
		if (!r.top) {
			/* No active async frame under this root: the native stack
			 * goes on through it, up to the next root's frame. */
			if (!r.next || !splice_root(sp, r.next, &r))
				break;
			continue;
		}
		size_t stop = r.sfp ? find_native(sp, sp->next, r.sfp) : sp->nnative;
		if (r.sfp && stop == sp->nnative) {
			core_warn(sp->c->core, "folly: thread %" PRId32 ": stackFramePtr 0x%" PRIx64
				" of AsyncStackRoot 0x%" PRIx64 " matches no frame of this thread's "
				"stack; async frames not shown", tid, r.sfp, r.addr);
			break;
		}
		/* The thread's own pc is always shown, even when the
		 * innermost frame is the one that registered the root. */
		if (!sp->any && stop == 0 && sp->nnative)
			stop = 1;
		emit_native_range(sp, sp->next, stop);
		sp->next = sp->nnative;
		uint64_t bottom_root;
		if (!walk_async(sp, r.top, &bottom_root) || !bottom_root)
			return;
		struct folly_root b;
		if (!splice_root(sp, bottom_root, &b) || !b.sfp)
			return;
		size_t bi = find_native(sp, stop, b.sfp);
		if (bi == sp->nnative) {
			core_warn(sp->c->core, "folly: thread %" PRId32 ": stackFramePtr 0x%" PRIx64
				" of AsyncStackRoot 0x%" PRIx64 " matches no frame of this thread's "
				"stack; stack cut there", tid, b.sfp, b.addr);
			return;
		}
		sp->next = bi + 2;
		if (!b.next)
			break;
		if (!splice_root(sp, b.next, &r))
			return;
	}
	emit_native_range(sp, sp->next, sp->nnative);
	sp->next = sp->nnative;
}

static void splice_thread(struct folly_ctx *c, size_t ti, uint64_t root,
			  const struct dbg_frame *native, size_t nnative)
{
	struct an_thread *t = &c->an->threads[ti];
	struct splice sp = { .c = c, .t = t, .native = native, .nnative = nnative,
			     .list = { .pool = c->an->strings } };

	splice_walk(&sp, root);
	if (sp.nomem) {
		core_warn(c->core, "folly: thread %" PRId32 ": out of memory while splicing", t->tid);
		an_frames_list_deinit(&sp.list);
	} else {
		an_frames_move_to(&sp.list, &t->frames, &t->nframes);
		t->async_root = root;
	}
	an_addr_set_deinit(&sp.frames_seen);
	an_addr_set_deinit(&sp.roots_seen);
}

/* ---- suspended chains ---------------------------------------------------- */

static bool in_module(struct dbg_session *s, uint64_t addr)
{
	for (size_t i = 0; i < dbg_module_count(s); i++) {
		const struct dbg_module_info *m = dbg_module_get(s, i);
		if (m && addr >= m->start && addr < m->end)
			return true;
	}
	return false;
}

/* A plausible suspended leaf: readable, marked with the cookie, its pc in a
 * module, its parent NULL or aligned. */
static bool leaf_plausible(struct folly_ctx *c, uint64_t addr, uint64_t cookie)
{
	struct folly_frame f;
	return read_frame(c, addr, &f) && f.root == cookie && f.ip && in_module(c->s, f.ip) &&
	       f.parent % 8 == 0;
}

static void add_leaf(struct folly_ctx *c, struct an_addr_set *leaves, uint64_t addr)
{
	if (leaves->n >= MAX_LEAVES || an_addr_set_has(leaves, addr))
		return;
	if (an_addr_set_add(leaves, addr) < 0)
		core_warn(c->core, "folly: out of memory collecting suspended frames");
}

/* Debug builds keep every leaf in a std::unordered_set<AsyncStackFrame *>:
 * libstdc++'s _Hashtable has its before-begin node's next at 16 and the
 * element count at 24; a node is {next, value}.  True when the store exists
 * (it is then the complete list). */
static bool leaves_from_store(struct folly_ctx *c, uint64_t cookie, struct an_addr_set *leaves)
{
	uint64_t sym, set, node, count;

	if (!dbg_find_symbol(c->s, FOLLY_LEAF_STORE_SYMBOL, &sym, NULL) ||
	    !core_read_u64(c->core, sym, &set) || set == 0)
		return false;
	if (!core_pointer_ok(c->core, set, 32, 8) || !core_read_u64(c->core, set + 16, &node) ||
	    !core_read_u64(c->core, set + 24, &count)) {
		core_warn(c->core, "folly: leaf frame store 0x%" PRIx64 " is not readable", set);
		return false;
	}
	struct an_addr_set seen = { 0 };
	for (uint64_t i = 0; node && i < count && i < MAX_LEAVES; i++) {
		uint64_t next, leaf;
		if (an_addr_set_has(&seen, node) || !core_pointer_ok(c->core, node, 16, 8) ||
		    !core_read_u64(c->core, node, &next) || !core_read_u64(c->core, node + 8, &leaf)) {
			core_warn(c->core, "folly: leaf frame store node 0x%" PRIx64 " is not readable "
				"or repeats; store walk cut there", node);
			break;
		}
		if (an_addr_set_add(&seen, node) < 0)
			break;
		if (leaf_plausible(c, leaf, cookie))
			add_leaf(c, leaves, leaf);
		else
			core_warn(c->core, "folly: leaf frame store lists 0x%" PRIx64 ", not a suspended "
				"frame", leaf);
		node = next;
	}
	an_addr_set_deinit(&seen);
	return true;
}

/* True when ADDR lies below a thread's stack pointer in that stack's
 * segment: dead stack, where stale copies of the cookie linger.  The 128
 * bytes of red zone below rsp may still be live. */
static bool dead_stack(const struct folly_ctx *c, const struct core_segment *seg, uint64_t addr)
{
	for (size_t i = 0; i < c->an->nthreads; i++) {
		uint64_t sp = c->an->threads[i].sp;
		if (sp >= seg->vaddr && sp - seg->vaddr < seg->memsz && addr >= seg->vaddr &&
		    addr + 128 < sp)
			return true;
	}
	return false;
}

/* The cookie's plausible leaves in [AT, END) of SEG.  The scan's reads are
 * not recorded for a minicore: only the leaves it looks at are. */
static void scan_run(struct folly_ctx *c, const struct core_segment *seg, uint64_t at, uint64_t end,
		     uint64_t *buf, uint64_t cookie, uint64_t cookie_sym, struct an_addr_set *leaves)
{
	for (uint64_t base = at; base < end; base += SCAN_CHUNK) {
		uint64_t len = end - base < SCAN_CHUNK ? end - base : SCAN_CHUNK;
		if (len < 8)
			break;
		struct core_writer *recorder = core_record_pause(c->core);
		struct core_error *err = core_read(c->core, base, buf, len & ~7ull);
		core_record_resume(c->core, recorder);
		if (err) {
			core_error_destroy(err);
			continue;
		}
		for (uint64_t w = 0; w < len / 8; w++) {
			uint64_t addr = base + 8 * w;
			if (buf[w] != cookie || addr == cookie_sym || addr < c->lay.frame_root ||
			    dead_stack(c, seg, addr))
				continue;
			uint64_t frame = addr - c->lay.frame_root;
			if (leaf_plausible(c, frame, cookie))
				add_leaf(c, leaves, frame);
		}
	}
}

/* Release builds only mark the leaves: scan the dumped writable memory for
 * frames whose stackRoot is the cookie. */
static void leaves_from_scan(struct folly_ctx *c, uint64_t cookie, uint64_t cookie_sym,
			     struct an_addr_set *leaves)
{
	uint64_t *buf = malloc(SCAN_CHUNK);
	if (!buf)
		return;
	for (size_t si = 0; si < c->core->nsegments; si++) {
		const struct core_segment *seg = &c->core->segments[si];
		if (!(seg->flags & PF_W) || seg->vaddr % 8 != 0)
			continue;
		uint64_t at = seg->vaddr, end;
		for (; core_saved_next(c->core, seg, &at, &end); at = end)
			scan_run(c, seg, at, end, buf, cookie, cookie_sym, leaves);
	}
	free(buf);
}

static void suspended_chain(struct folly_ctx *c, uint64_t leaf, struct an_suspended *out)
{
	struct an_frame_list list = { .pool = c->an->strings };
	struct an_addr_set seen = { 0 };
	uint64_t addr = leaf;
	bool nomem = false;

	for (unsigned n = 0; addr; n++) {
		struct folly_frame f;
		if (an_addr_set_has(&seen, addr) || n >= MAX_ASYNC_FRAMES) {
			core_warn(c->core, "folly: suspended chain 0x%" PRIx64 ": frame 0x%" PRIx64
				" repeats or the chain is too long; cut there", leaf, addr);
			break;
		}
		if (!read_frame(c, addr, &f)) {
			core_warn(c->core, "folly: suspended chain 0x%" PRIx64 ": AsyncStackFrame 0x%" PRIx64
				" %s; cut there", leaf, addr, core_pointer_problem(c->core, addr));
			break;
		}
		if (an_addr_set_add(&seen, addr) < 0 ||
		    !an_frames_append_pc(&list, c->s, f.ip, false, AN_FRAME_ASYNC, NULL, false))
			nomem = true;
		addr = f.parent;
	}
	out->leaf = leaf;
	if (nomem)
		an_frames_list_deinit(&list);
	else
		an_frames_move_to(&list, &out->frames, &out->nframes);
	an_addr_set_deinit(&seen);
}

static void suspended_all(struct folly_ctx *c)
{
	uint64_t sym, cookie;
	struct an_addr_set leaves = { 0 };

	if (!dbg_find_symbol(c->s, FOLLY_COOKIE_SYMBOL, &sym, NULL) ||
	    !core_read_u64(c->core, sym, &cookie) || cookie == 0)
		return;
	if (!leaves_from_store(c, cookie, &leaves))
		leaves_from_scan(c, cookie, sym, &leaves);
	if (leaves.n) {
		struct an_suspended *v = calloc(leaves.n, sizeof(*v));
		if (!v) {
			core_warn(c->core, "folly: out of memory listing suspended chains");
		} else {
			for (size_t i = 0; i < leaves.n; i++)
				suspended_chain(c, leaves.v[i], &v[i]);
			c->an->suspended = v;
			c->an->nsuspended = leaves.n;
		}
	}
	an_addr_set_deinit(&leaves);
}

/* ---- entry point --------------------------------------------------------- */

void an_folly_splice_all(struct dbg_session *s, struct analysis *an,
			 struct dbg_frame *const *stacks, const size_t *nstacks)
{
	struct folly_ctx c = { .s = s, .core = dbg_session_core(s), .an = an };

	if (!c.core)
		return;
	bool usable = key_init(&c);
	if (!an->async_key_found)
		return;             /* not a folly program */
	layout_init(&c);
	if (usable) {
		an_tsd_init(&c.tsd, s, an, "folly");
		static_tls_init(&c);
		for (size_t i = 0; i < an->nthreads; i++) {
			uint64_t root;
			if (!thread_root(&c, &an->threads[i], &root) || !root)
				continue;
			splice_thread(&c, i, root, stacks ? stacks[i] : NULL,
				      nstacks ? nstacks[i] : 0);
		}
	}
	suspended_all(&c);
}
