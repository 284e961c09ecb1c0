/* Walking a Go program's stacks as its runtime does (traceback.go): a Go
 * frame's size from the runtime's pc-to-SP table, its caller's pc from the
 * word the call left (x86_64) or the link register it saved (arm64); the
 * runtime's stack switches followed (systemstack, mcall, morestack and
 * asmcgocall from an M's g0 to the goroutine it runs, a signal frame to
 * what it interrupted, a callback from C to the C frames that made it);
 * C frames by CFI, through the unwinder of dwarf/. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golang.h"
#include "../corefile/arch.h"
#include "../base/array.h"

enum { MAX_GO_FRAMES = 4096, MAX_FRAME = 1 << 24 };

/* What a frame's function is to the walk. */
enum go_role {
	ROLE_PLAIN, ROLE_TOP, ROLE_SIGTRAMP, ROLE_SYSTEMSTACK, ROLE_MCALL, ROLE_MORESTACK,
	ROLE_ASMCGOCALL, ROLE_CGOCALLBACK, ROLE_INJECTED
};

static enum go_role role_of(const struct dbg_gofunc *f)
{
	static const struct { const char *name; enum go_role role; } names[] = {
		{"runtime.goexit", ROLE_TOP}, {"runtime.mstart", ROLE_TOP},
		{"runtime.rt0_go", ROLE_TOP}, {"runtime.sigtramp", ROLE_SIGTRAMP},
		{"runtime.cgoSigtramp", ROLE_SIGTRAMP}, {"runtime.systemstack", ROLE_SYSTEMSTACK},
		{"runtime.mcall", ROLE_MCALL}, {"runtime.morestack", ROLE_MORESTACK},
		{"runtime.asmcgocall", ROLE_ASMCGOCALL}, {"runtime.cgocallback", ROLE_CGOCALLBACK},
		{"runtime.sigpanic", ROLE_INJECTED}, {"runtime.asyncPreempt", ROLE_INJECTED},
		{"runtime.debugCallV2", ROLE_INJECTED},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(f->name, names[i].name) == 0)
			return names[i].role;
	return f->flag & DBG_GOFLAG_TOPFRAME ? ROLE_TOP : ROLE_PLAIN;
}

/* Where a walk is: a frame's pc and stack pointer, and what it knows of
 * the frame pointer and (arm64) the link register. */
struct go_state {
	uint64_t regs[DBG_NREGS];   /* every register, where a thread stopped or a
				       signal interrupted it (regs_known) */
	uint32_t regs_known;
	uint64_t pc, sp, bp, lr;
	bool activation;            /* the pc is exact: no pc-1 for its line */
	bool innermost;             /* the stack's first frame: arm64's lr is live */
	bool has_bp, has_lr;
};

struct walk {
	struct go_runtime *rt;
	const struct core_arch *arch;
	const struct go_m *m;       /* the thread's M (thread walks), or NULL */
	const struct go_g *curg;    /* the goroutine that M runs, or NULL */
	const struct go_g *g;       /* the goroutine walked (parked walks), or NULL */
	struct dbg_frame *frames;
	size_t n, cap;
	char *why;                  /* why the walk ended early */
};

static void walk_stop(struct walk *w, const char *fmt, uint64_t value)
{
	if (w->why)
		return;
	char buf[160];
	snprintf(buf, sizeof(buf), fmt, value);
	w->why = strdup(buf);
}

static bool push(struct walk *w, const struct go_state *st, uint64_t cfa)
{
	if (w->n >= MAX_GO_FRAMES) {
		walk_stop(w, "more than %" PRIu64 " frames", MAX_GO_FRAMES);
		return false;
	}
	if (!base_array_reserve(&w->frames, &w->cap, w->n + 1, sizeof(*w->frames)))
		return false;
	struct dbg_frame *f = &w->frames[w->n++];
	*f = (struct dbg_frame){.pc = st->pc, .activation = st->activation, .cfa = cfa,
				.sp = st->sp, .has_sp = true, .fp = st->bp, .has_fp = st->has_bp,
				.regs_known = st->regs_known};
	memcpy(f->regs, st->regs, sizeof(f->regs));
	f->regs[w->arch->dwarf_sp] = st->sp;
	f->regs_known |= 1u << w->arch->dwarf_sp;
	if (st->has_bp) {
		f->regs[w->arch->dwarf_fp] = st->bp;
		f->regs_known |= 1u << w->arch->dwarf_fp;
	}
	if (w->arch->dwarf_pc >= 0) {
		f->regs[w->arch->dwarf_pc] = st->pc;
		f->regs_known |= 1u << w->arch->dwarf_pc;
	}
	return true;
}

/* Whether PC, a frame's (ACTIVATION: where it stopped, else a return
 * address), is in a Go function.  The runtime finds a caller's function
 * from its return address itself, not the address before it. */
static bool in_go(struct go_runtime *rt, uint64_t pc, struct dbg_gofunc *f)
{
	struct dbg_gofunc tmp;
	return go_func(rt, pc, f ? f : &tmp);
}

/* C frames from ST (a return address into C, or the C code a thread
 * stopped in) down to the first caller in a Go function, by CFI.  (C code
 * linked into a Go program may lie among Go's functions: no address range
 * tells them apart, the runtime's table does.) */
static void c_frames(struct walk *w, const struct go_state *st)
{
	struct dbg_regs regs = {.pc = st->pc};
	regs.regs[w->arch->dwarf_sp] = st->sp;
	regs.known = 1u << w->arch->dwarf_sp;
	if (st->has_bp) {
		regs.regs[w->arch->dwarf_fp] = st->bp;
		regs.known |= 1u << w->arch->dwarf_fp;
	}
	struct dbg_frame *frames = NULL;
	size_t n = 0;
	bool reached = false;
	char *why = NULL;
	struct core_error *err = dbg_unwind_regs(w->rt->s, &regs, 0, 0, &frames, &n, &reached, &why);
	size_t keep = 0;
	while (keep < n && !in_go(w->rt, frames[keep].pc, NULL))
		keep++;
	if (!err && base_array_reserve(&w->frames, &w->cap, w->n + keep, sizeof(*w->frames))) {
		memcpy(w->frames + w->n, frames, keep * sizeof(*frames));
		w->n += keep;
	}
	core_error_destroy(err);
	if (why && keep == n && !w->why)
		w->why = why;
	else
		free(why);
	free(frames);
}

static bool on_stack(uint64_t sp, uint64_t lo, uint64_t hi)
{
	return lo < hi && sp >= lo && sp < hi;
}

/* The goroutine an M's g0 switches to, when ST is on that g0's stack. */
static const struct go_g *switch_target(struct walk *w, const struct go_state *st)
{
	if (!w->curg || !on_stack(st->sp, w->m->g0_lo, w->m->g0_hi))
		return NULL;
	return w->curg;
}

static void resume_at(struct go_state *next, uint64_t pc, uint64_t sp, uint64_t bp, uint64_t lr)
{
	*next = (struct go_state){.pc = pc, .sp = sp, .bp = bp, .has_bp = bp != 0, .lr = lr,
				  .has_lr = lr != 0};
}

/* THREAD_REGS (a thread's registers, the core's numbering) by DWARF
 * number into ST. */
static void take_registers(const struct core_arch *a, const uint64_t *thread_regs, struct go_state *st)
{
	for (unsigned n = 0; n < a->ndwarf_regs && n < DBG_NREGS; n++) {
		st->regs[n] = thread_regs[a->dwarf_regs[n]];
		st->regs_known |= 1u << n;
	}
}

/* The kernel's signal frame at the trampoline whose stack pointer is ST's:
 * the registers the signal interrupted. */
static bool signal_return(struct walk *w, const struct go_state *st, struct go_state *next)
{
	struct core_sigframe sf;
	if (!core_sigframe_read(w->rt->core, st->sp, &sf))
		return false;
	const struct core_arch *a = w->arch;
	*next = (struct go_state){.pc = sf.regs[a->reg_pc], .sp = sf.regs[a->reg_sp],
				  .bp = sf.regs[a->reg_fp], .has_bp = true, .activation = true,
				  .innermost = true};
	if (w->rt->arm64) {
		next->lr = sf.regs[CORE_A64_X30];
		next->has_lr = true;
	}
	take_registers(a, sf.regs, next);
	return next->pc != 0;
}

/* The caller of Go frame ST, DELTA bytes deep, whose frame ends at FP (the
 * caller's stack pointer), as gentraceback finds it. */
static bool go_caller(struct walk *w, const struct go_state *st, int64_t delta, uint64_t fp,
		      struct go_state *next)
{
	uint64_t ra;
	if (!w->rt->arm64) {
		if (!go_read_word(w->rt, fp - 8, &ra))
			return false;
		uint64_t bp = st->bp;
		bool has_bp = st->has_bp;
		/* A frame of non-zero size saved its caller's frame pointer
		 * just below the return address. */
		if (delta > 0)
			has_bp = go_read_word(w->rt, fp - 16, &bp);
		*next = (struct go_state){.pc = ra, .sp = fp, .bp = bp, .has_bp = has_bp};
	} else {
		if (st->innermost && delta == 0 && st->has_lr)
			ra = st->lr;
		else if (!go_read_word(w->rt, st->sp, &ra))
			return false;
		uint64_t bp = st->bp;
		bool has_bp = st->has_bp;
		if (delta > 0)
			has_bp = go_read_word(w->rt, st->sp - 8, &bp);
		*next = (struct go_state){.pc = ra, .sp = fp, .bp = bp, .has_bp = has_bp};
	}
	return ra != 0;
}

/* arm64's sighandler saved the faulting frame's LR on the stack before
 * faking the call to sigpanic: skip that word (traceback.go). */
static void after_injected_call(struct walk *w, struct go_state *next)
{
	next->activation = true;
	if (!w->rt->arm64)
		return;
	uint64_t x;
	if (!go_read_word(w->rt, next->sp, &x))
		return;
	next->sp += 16;
	struct dbg_gofunc f;
	int64_t delta;
	if (!go_func(w->rt, next->pc, &f))
		next->pc = x;
	else if (dbg_gotab_spdelta(w->rt->tab, &f, next->pc, &delta) && delta == 0) {
		next->lr = x;
		next->has_lr = true;
		next->innermost = true;
	}
}

/* The C frames a goroutine inside a callback from C was called from: on
 * its locked M's g0, where cgocallback keeps its frame while the
 * goroutine runs Go code. */
static void callback_c_frames(struct walk *w, const struct go_state *st)
{
	const struct go_g *g = w->g;
	const struct go_m *m = g ? go_m_at(w->rt, g->lockedm ? g->lockedm : g->m) : NULL;
	struct dbg_gofunc f;
	int64_t delta;
	if (!m || !m->g0_sched_sp || !in_go(w->rt, st->pc, &f) ||
	    !dbg_gotab_spdelta(w->rt->tab, &f, st->pc, &delta) || delta < 0 || delta > MAX_FRAME)
		return;
	struct go_state on_g0 = {.pc = st->pc, .sp = m->g0_sched_sp};
	uint64_t fp = on_g0.sp + (uint64_t)delta + (w->rt->arm64 ? 0 : 8);
	struct go_state next;
	if (!go_caller(w, &on_g0, delta, fp, &next))
		return;
	/* crosscall2, the C-callable entry, then its C callers. */
	struct dbg_gofunc entry;
	if (!in_go(w->rt, next.pc, &entry) || strcmp(entry.name, "crosscall2") != 0)
		return;
	size_t before = w->n;
	int64_t edelta;
	if (!push(w, &next, 0) || !dbg_gotab_spdelta(w->rt->tab, &entry, next.pc, &edelta) ||
	    edelta < 0 || edelta > MAX_FRAME)
		return;
	struct go_state c;
	uint64_t efp = next.sp + (uint64_t)edelta + (w->rt->arm64 ? 0 : 8);
	if (go_caller(w, &next, edelta, efp, &c) && !in_go(w->rt, c.pc, NULL))
		c_frames(w, &c);
	w->frames[before].cfa = efp;
}

/* One step of the walk from Go frame ST of function F: push it and find
 * its caller.  False when the walk ends. */
static bool go_step(struct walk *w, struct go_state *st, const struct dbg_gofunc *f)
{
	enum go_role role = role_of(f);
	int64_t delta;
	if (!dbg_gotab_spdelta(w->rt->tab, f, st->pc, &delta) || delta < 0 || delta > MAX_FRAME) {
		push(w, st, 0);
		walk_stop(w, "no frame size for pc 0x%" PRIx64, st->pc);
		return false;
	}
	const struct go_g *target = switch_target(w, st);
	if (role == ROLE_SYSTEMSTACK && target && !(w->rt->arm64 && delta == 0))
		st->sp = target->sched_sp;     /* the frame continues on the goroutine's stack */
	uint64_t fp = st->sp + (uint64_t)delta + (w->rt->arm64 ? 0 : 8);
	if (!push(w, st, fp))
		return false;
	struct go_state next;
	if (role == ROLE_TOP)
		return false;
	if ((role == ROLE_MCALL || role == ROLE_MORESTACK) && target) {
		resume_at(&next, target->sched_pc, target->sched_sp, target->sched_bp, target->sched_lr);
	} else if (role == ROLE_ASMCGOCALL && target) {
		if (target->status == GO_SYSCALL && target->syscallsp)
			resume_at(&next, target->syscallpc, target->syscallsp, 0, 0);
		else
			resume_at(&next, target->sched_pc, target->sched_sp, target->sched_bp,
				  target->sched_lr);
	} else if (role == ROLE_MCALL || role == ROLE_ASMCGOCALL || role == ROLE_MORESTACK) {
		return false;          /* nothing to switch to: the g0's own top */
	} else if (!go_caller(w, st, delta, fp, &next)) {
		walk_stop(w, "no caller found for frame at pc 0x%" PRIx64, st->pc);
		return false;
	} else if (role == ROLE_INJECTED) {
		after_injected_call(w, &next);
	}
	if (role == ROLE_CGOCALLBACK && w->g)
		callback_c_frames(w, st);
	/* A parked goroutine's frames are all on its own stack. */
	if (w->g && next.sp > w->g->stack_hi) {
		walk_stop(w, "a caller's stack pointer 0x%" PRIx64 " lies past the goroutine's stack", next.sp);
		return false;
	}
	bool switched = next.sp != fp;
	/* arm64: a frame of no size returns through the link register with
	 * the stack pointer it had. */
	bool leaf = w->rt->arm64 && delta == 0 && next.pc != st->pc;
	if (!switched && (next.sp < st->sp || (next.sp == st->sp && !leaf))) {
		walk_stop(w, "the stack does not grow at pc 0x%" PRIx64, st->pc);
		return false;
	}
	*st = next;
	return true;
}

/* Walk from ST until the stack's top: Go frames by the runtime's table,
 * signal trampolines through their frame, C frames by CFI (the walk ends
 * in C: Go code called from C is reached through the runtime's own
 * switches). */
static void walk_from(struct walk *w, struct go_state st)
{
	struct dbg_gofunc f;
	while (w->n < MAX_GO_FRAMES) {
		if (core_is_sigreturn(w->rt->core, st.pc)) {
			st.activation = true;
			struct go_state next;
			if (!push(w, &st, 0) || !signal_return(w, &st, &next))
				return;
			st = next;
			continue;
		}
		if (!in_go(w->rt, st.pc, &f)) {
			c_frames(w, &st);
			return;
		}
		if (!go_step(w, &st, &f))
			return;
	}
}

/* The first frame of a thread's walk on the stack of the goroutine its M
 * runs, and the C frames (of a cgo call) just above it. */
static size_t goroutine_start(struct walk *w)
{
	const struct go_g *g = w->curg;
	if (!g)
		return w->n;
	size_t at = w->n;
	for (size_t i = 0; i < w->n; i++)
		if (w->frames[i].has_sp && on_stack(w->frames[i].sp, g->stack_lo, g->stack_hi)) {
			at = i;
			break;
		}
	/* A cgo call: its C frames and asmcgocall run on g0 above the goroutine. */
	while (at > 0 && at < w->n) {
		struct dbg_gofunc f;
		const struct dbg_frame *prev = &w->frames[at - 1];
		if (core_is_sigreturn(w->rt->core, prev->pc) ||
		    (in_go(w->rt, prev->pc, &f) && strcmp(f.name, "runtime.asmcgocall") != 0))
			break;
		at--;
	}
	return at;
}

/* A core thread's registers as a walk's first state. */
static struct go_state thread_state(struct walk *w, const struct an_thread *t)
{
	struct go_state st = {.pc = t->pc, .sp = t->sp, .bp = t->fp, .has_bp = true,
			      .activation = true, .innermost = true};
	if (w->rt->arm64) {
		st.lr = t->regs[CORE_A64_X30];
		st.has_lr = true;
	}
	take_registers(w->arch, t->regs, &st);
	return st;
}

/* The frames of T's earlier walk (by CFI) that are in C, down to the first
 * in Go's code, taken as they are; *ST becomes that Go frame. */
static bool c_prefix(struct walk *w, const struct an_thread *t, struct go_state *st)
{
	uint64_t sp = t->sp;
	for (size_t i = 0; i < t->nframes; i++) {
		const struct an_frame *a = &t->frames[i];
		if (a->inlined || a->tailcall || a->kind != AN_FRAME_NATIVE)
			continue;
		struct dbg_gofunc f;
		if (in_go(w->rt, a->pc, &f) ||
		    core_is_sigreturn(w->rt->core, a->pc)) {
			*st = (struct go_state){.pc = a->pc, .sp = sp, .activation = a->activation,
						.innermost = i == 0};
			st->has_bp = an_frame_reg(a, w->arch->dwarf_fp, &st->bp);
			if (i == 0)
				*st = thread_state(w, t);
			return true;
		}
		struct go_state c = {.pc = a->pc, .sp = sp, .activation = a->activation};
		if (!push(w, &c, a->cfa))
			return false;
		for (unsigned r = 0; r < DBG_NREGS; r++)
			if (an_frame_reg(a, r, &w->frames[w->n - 1].regs[r]))
				w->frames[w->n - 1].regs_known |= 1u << r;
		sp = a->cfa;
	}
	return false;   /* never reaches Go: the earlier walk stands */
}

bool go_walk_thread(struct go_runtime *rt, size_t t, struct dbg_frame **frames, size_t *nframes,
		    size_t *goroutine_at, char **stop_reason)
{
	const struct an_thread *th = &rt->an->threads[t];
	struct walk w = {.rt = rt, .arch = rt->core->arch, .m = go_m_of_thread(rt, th->tid)};
	w.curg = w.m ? go_g_at(rt, w.m->curg) : NULL;
	struct go_state st;
	struct dbg_gofunc f;
	if (go_func(rt, th->pc, &f) || core_is_sigreturn(rt->core, th->pc))
		st = thread_state(&w, th);
	else if (!c_prefix(&w, th, &st)) {
		free(w.frames);
		return false;
	}
	walk_from(&w, st);
	*goroutine_at = goroutine_start(&w);
	*frames = w.frames;
	*nframes = w.n;
	*stop_reason = w.why;
	return w.n > 0;
}

bool go_walk_parked(struct go_runtime *rt, const struct go_g *g, struct dbg_frame **frames,
		    size_t *nframes, char **stop_reason)
{
	struct walk w = {.rt = rt, .arch = rt->core->arch, .g = g};
	struct go_state st;
	if (g->status == GO_SYSCALL && g->syscallsp)
		resume_at(&st, g->syscallpc, g->syscallsp, 0, 0);
	else
		resume_at(&st, g->sched_pc, g->sched_sp, g->sched_bp, g->sched_lr);
	st.innermost = true;
	*frames = NULL;
	*nframes = 0;
	if (!st.pc || !on_stack(st.sp, g->stack_lo, g->stack_hi + 1)) {
		*stop_reason = strdup("its saved context lies outside its stack");
		return false;
	}
	/* A goroutine parks, and enters a system call, in Go code. */
	if (!in_go(rt, st.pc, NULL)) {
		char buf[96];
		snprintf(buf, sizeof(buf), "its saved pc 0x%" PRIx64 " is in no Go function", st.pc);
		*stop_reason = strdup(buf);
		return false;
	}
	walk_from(&w, st);
	*frames = w.frames;
	*nframes = w.n;
	*stop_reason = w.why;
	return w.n > 0;
}
