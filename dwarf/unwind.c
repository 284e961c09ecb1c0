/* Native unwinding: libdwfl's CFI unwinder (with its backend's frame-pointer
 * or frame-record fallback, for the core's machine) over thread state taken
 * from NT_PRSTATUS, reading target memory through corefile's bounded
 * reader; register numbers come from the core's architecture table.  Where
 * neither finds a caller, gdb's rule for a function that keeps no frame
 * (x86_64: the return address at the stack pointer) continues the walk from
 * a new initial state, and so does a return address signed by pointer
 * authentication, stripped as gdb strips it. */
#include "unwind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/array.h"

/* The thread argument libdwfl carries is the core_thread itself. */
static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	struct dbg_session *s = arg;
	const struct core_thread *cur = *thread_argp;
	size_t next = cur ? (size_t)(cur - s->core->threads) + 1 : 0;
	if (next >= s->core->nthreads)
		return 0;
	*thread_argp = &s->core->threads[next];
	return s->core->threads[next].tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	struct dbg_session *s = arg;
	for (size_t i = 0; i < s->core->nthreads; i++)
		if (s->core->threads[i].tid == tid) {
			*thread_argp = &s->core->threads[i];
			return true;
		}
	return false;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	(void)dwfl;
	struct dbg_session *s = arg;
	uint64_t v;
	if (!core_read_u64(s->core, addr, &v))
		return false;
	*result = v;
	return true;
}

/* The caller state a walk resumes from (see resume_walk): libdwfl asks for a
 * thread's first registers through a callback that gets only the thread, and
 * the walk runs on this thread before dwfl_getthread_frames returns. */
struct resume {
	const struct core_thread *thread;
	uint64_t regs[DBG_NREGS];
	uint32_t known;
	uint64_t pc;                /* the return address - 1 (see resume_walk) */
	bool interrupted;           /* pc is where a signal interrupted the
				       frame: exact, an activation */
};
static _Thread_local const struct resume *resuming;

/* The architecture of the core whose thread libdwfl asks about: the
 * session is not passed to set_initial_registers, but it is the one
 * walking on this thread. */
static _Thread_local const struct core_arch *walking_arch;

static bool set_resumed_registers(Dwfl_Thread *thread, const struct core_arch *arch,
				  const struct resume *r)
{
	for (unsigned i = 0; i < arch->ndwarf_regs; i++) {
		Dwarf_Word v = r->regs[i];
		if ((r->known & (1u << i)) && !dwfl_thread_state_registers(thread, (int)i, 1, &v))
			return false;
	}
	if (arch->dwarf_pc < 0)
		dwfl_thread_state_register_pc(thread, r->pc);
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	const struct core_thread *t = thread_arg;
	const struct core_arch *arch = walking_arch;
	if (!arch)
		return false;
	if (resuming && resuming->thread == t)
		return set_resumed_registers(thread, arch, resuming);
	Dwarf_Word regs[DBG_NREGS];
	for (size_t i = 0; i < arch->ndwarf_regs; i++)
		regs[i] = t->regs[arch->dwarf_regs[i]];
	if (!dwfl_thread_state_registers(thread, 0, arch->ndwarf_regs, regs))
		return false;
	/* Where the pc has no DWARF number, libdwfl would take the return
	 * address column for it. */
	if (arch->dwarf_pc < 0)
		dwfl_thread_state_register_pc(thread, t->regs[arch->reg_pc]);
	return true;
}

static void detach(Dwfl *dwfl, void *arg)
{
	(void)dwfl;
	(void)arg;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
	.detach = detach,
};

void dbg_unwind_attach(struct dbg_session *s)
{
	if (!dwfl_attach_state(s->dwfl, s->core->elf, s->core->threads[0].tid, &thread_callbacks, s))
		core_warn(s->core, "cannot set up unwinding: %s", dwfl_errmsg(-1));
	else
		s->attached = true;
}

/* Walks resumed past frames the unwinder could not step out of, at most. */
#define MAX_RESUMES 16

struct walk {
	struct dbg_session *s;
	const struct core_arch *arch;
	struct dbg_frame *frames;
	size_t n, cap;
	char *stop;
	bool nomem;
	uint64_t resume_pc;         /* nonzero: the next frame is a resumed caller */
	bool resume_activation;     /* ... interrupted by a signal (its pc exact) */
	uint64_t base_start, base_end;  /* a caller pc here ends the walk */
	bool reached_base;
	const struct core_segment *stack;   /* past --max-frames: the stack walked */
	bool along_stack;           /* a thread's walk: goes on past --max-frames */
	struct resume pending;      /* where to go on once libdwfl's walk ends */
	bool has_pending;
};

static int set_stop(struct walk *w, const char *fmt, unsigned long long a)
{
	char buf[256];
	snprintf(buf, sizeof(buf), fmt, a);
	free(w->stop);
	w->stop = strdup(buf);
	return DWARF_CB_ABORT;
}

static bool seen_before(const struct walk *w, uint64_t pc, uint64_t sp)
{
	/* The same pc at the same stack pointer means the unwinder is looping. */
	for (size_t i = w->n; i-- > 0 && i + 8 >= w->n;)
		if (w->frames[i].pc == pc && w->frames[i].has_sp && w->frames[i].sp == sp)
			return true;
	return false;
}

/* A zeroed slot for the next frame (not yet counted in w->n), or NULL. */
static struct dbg_frame *push_frame(struct walk *w)
{
	if (!base_array_reserve(&w->frames, &w->cap, w->n + 1, sizeof(*w->frames))) {
		w->nomem = true;
		return NULL;
	}
	struct dbg_frame *f = &w->frames[w->n];
	memset(f, 0, sizeof(*f));
	return f;
}

static void set_resume_pc(const struct core_arch *arch, struct resume *r, uint64_t ra);

/* Whether libdwfl finds CFI for frame F, looked up where it looks (pc - 1
 * in a caller): .eh_frame, then .debug_frame. */
static bool has_cfi(struct dbg_session *s, const struct dbg_frame *f)
{
	uint64_t pc = f->activation ? f->pc : f->pc - 1;
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);
	if (!mod)
		return false;
	Dwarf_CFI *cfis[2];
	Dwarf_Addr bias[2] = { 0, 0 };
	cfis[0] = dwfl_module_eh_cfi(mod, &bias[0]);
	cfis[1] = dwfl_module_dwarf_cfi(mod, &bias[1]);
	for (int i = 0; i < 2; i++) {
		Dwarf_Frame *frame;
		if (cfis[i] && dwarf_cfi_addrframe(cfis[i], pc - bias[i], &frame) == 0) {
			free(frame);
			return true;
		}
	}
	return false;
}

/* The start of the function holding ADDR, 0 when no symbol holds it. */
static uint64_t function_start(struct dbg_session *s, uint64_t addr)
{
	uint64_t off;
	return dbg_symbol_name_at(s, addr, &off) ? addr - off : 0;
}

/* R from F's callee-saved registers, to resume at the caller whose return
 * address is RA with frame pointer FP and stack pointer SP. */
static void caller_state(struct walk *w, const struct dbg_frame *f, uint64_t ra, uint64_t fp,
			 uint64_t sp, struct resume *r)
{
	const struct core_arch *arch = w->arch;
	memset(r, 0, sizeof(*r));
	memcpy(r->regs, f->regs, sizeof(r->regs));
	r->known = f->regs_known & arch->callee_saved & ~(1u << arch->dwarf_lr);
	r->regs[arch->dwarf_fp] = fp;
	r->regs[arch->dwarf_sp] = sp;
	r->known |= (1u << arch->dwarf_fp) | (1u << arch->dwarf_sp);
	set_resume_pc(arch, r, ra);
}

/* Bytes between a pc and a link register that, without symbols to tell,
 * make them one function's. */
#define NEAR_RA 256

/* The innermost frame of a leaf function without CFI: its return address
 * is still in the link register, and it set up no frame record.  Taken when
 * the link register holds a return address into a module that the frame
 * record at the frame pointer does not also hold (a function that saved
 * its record), that does not return into the frame's own function (the
 * return address of a call it made), and that follows a branch with link
 * where the core has the code. */
static bool leaf_caller(struct walk *w, const struct dbg_frame *f, struct resume *r)
{
	const struct core_arch *arch = w->arch;
	struct core *core = w->s->core;
	if (!f->activation || !(f->regs_known & (1u << arch->dwarf_lr)) || !f->has_sp || !f->has_fp)
		return false;
	uint64_t ra = arch->strip_ra(core, f->regs[arch->dwarf_lr]), saved;
	if (ra < 4 || !dbg_module_for(w->s, ra))
		return false;
	if (f->fp && core_read_u64(core, f->fp + 8, &saved) && arch->strip_ra(core, saved) == ra)
		return false;   /* the record at fp holds it: the record gives the caller */
	uint64_t here = function_start(w->s, f->pc), there = function_start(w->s, ra - 1);
	if (here && here == there)
		return false;   /* the return address of a call this function made */
	/* Without symbols, a return address this close to the pc is taken for
	 * one into the same function (a blocked thread's stale link register). */
	if ((!here || !there) && (ra - 1 > f->pc ? ra - 1 - f->pc : f->pc - (ra - 1)) < NEAR_RA)
		return false;
	if (core_is_readable(core, ra - 4, 4) && !arch->after_call(core, ra))
		return false;
	caller_state(w, f, ra, f->fp, f->sp, r);
	return true;
}

/* Frame F is a signal handler's return trampoline without CFI (qemu-user's):
 * its caller is the frame the signal interrupted, whose registers the
 * signal frame at F's stack pointer holds.  Sets W's pending caller. */
static bool signal_caller(struct walk *w, const struct dbg_frame *f)
{
	const struct core_arch *arch = w->arch;
	struct core_sigframe sf;
	if (f->activation || !f->has_sp || !core_is_sigreturn(w->s->core, f->pc) ||
	    !core_sigframe_read(w->s->core, f->sp, &sf) || sf.regs[arch->reg_pc] == 0)
		return false;
	struct resume *r = &w->pending;
	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < arch->ndwarf_regs; i++)
		if (sf.known & (1ull << arch->dwarf_regs[i])) {
			r->regs[i] = sf.regs[arch->dwarf_regs[i]];
			r->known |= 1u << i;
		}
	r->pc = sf.regs[arch->reg_pc];
	r->interrupted = true;
	if (arch->dwarf_pc >= 0)
		r->regs[arch->dwarf_pc] = r->pc;
	w->has_pending = true;
	return true;
}

/* Frame F has no CFI: its caller from the frame record at its frame
 * pointer ({caller's frame pointer, return address}; the caller's stack
 * pointer at least just above it), as gdb and libdwfl take it.  Returns
 * DWARF_CB_ABORT with W's pending caller, or its stop reason, set; a
 * cleared frame pointer or a zero return address is the outermost frame. */
static int record_caller(struct walk *w, const struct dbg_frame *f)
{
	const struct core_arch *arch = w->arch;
	if (leaf_caller(w, f, &w->pending)) {
		w->has_pending = true;
		return DWARF_CB_ABORT;
	}
	uint64_t rec[2];
	if (!f->has_fp || f->fp == 0)
		return DWARF_CB_ABORT;
	/* gdb does not unwind past the program's entry point (_start). */
	uint64_t entry = w->s->core->auxv.entry;
	if (entry && function_start(w->s, f->pc) == function_start(w->s, entry) &&
	    function_start(w->s, entry))
		return DWARF_CB_ABORT;
	if (f->fp % 8 != 0 || (f->has_sp && f->fp < f->sp) || f->fp > UINT64_MAX - 16 ||
	    !core_read_bytes(w->s->core, f->fp, rec, sizeof(rec)))
		return set_stop(w, "no CFI and no usable frame record at 0x%llx", f->fp);
	uint64_t ra = arch->strip_ra(w->s->core, rec[1]);
	if (ra == 0)
		return DWARF_CB_ABORT;
	if (!dbg_module_for(w->s, ra))
		return set_stop(w, "the frame record at 0x%llx holds no return address", f->fp);
	caller_state(w, f, ra, rec[0], f->fp + 16, &w->pending);
	w->has_pending = true;
	return DWARF_CB_ABORT;
}

/* Past --max-frames a walk goes on only along the thread's own stack: each
 * caller's stack pointer above the last one, inside the core segment that
 * held the stack at --max-frames.  A deep recursion is so unwound to its
 * bottom, in at most one frame per 8 bytes of that stack, while a walk that
 * wanders off (a corrupted stack, another stack) stops there. */
static bool along_the_stack(struct walk *w, Dwfl_Frame *state)
{
	Dwarf_Word sp;
	const struct dbg_frame *prev = &w->frames[w->n - 1];
	if (!prev->has_sp || dwfl_frame_reg(state, w->arch->dwarf_sp, &sp) != 0 || sp <= prev->sp)
		return false;
	if (!w->stack)
		w->stack = core_find_segment(w->s->core, prev->sp);
	const struct core_segment *st = w->stack;
	return st && sp >= st->vaddr && sp - st->vaddr < st->memsz &&
	       w->n - w->s->opts.max_frames < st->memsz / 8;
}

/* Whether the frame libdwfl gives next, an ACTIVATION, is one a signal
 * interrupted: the frame before it is the signal's trampoline.  (libdwfl
 * also takes the trampoline itself for an activation.) */
static bool interrupted_frame(struct walk *w, bool activation)
{
	if (!activation || w->n == 0)
		return false;
	const struct dbg_frame *prev = &w->frames[w->n - 1];
	return prev->activation && core_is_sigreturn(w->s->core, prev->pc);
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(state, &pc, &activation))
		return set_stop(w, "cannot read the pc of frame %llu", w->n);
	if (w->n > 0 && pc >= w->base_start && pc < w->base_end) {
		Dwarf_Word sp;
		if (dwfl_frame_reg(state, w->arch->dwarf_sp, &sp) == 0)
			w->frames[w->n - 1].cfa = sp;
		w->reached_base = true;
		return DWARF_CB_ABORT;
	}
	if (w->n >= w->s->opts.max_frames && (!w->along_stack || !along_the_stack(w, state)))
		return set_stop(w, "stopped after %llu frames (--max-frames)", w->n);
	struct dbg_frame *f = push_frame(w);
	if (!f)
		return DWARF_CB_ABORT;
	f->pc = pc;
	f->activation = activation;
	/* In a caller, only callee-saved registers, rsp and rip mean anything:
	 * libdw carries the others over as "same value".  A frame a signal
	 * interrupted (an activation past the first) has every register back
	 * from the signal frame. */
	const struct core_arch *arch = w->arch;
	uint32_t all = arch->ndwarf_regs >= 32 ? UINT32_MAX : (1u << arch->ndwarf_regs) - 1;
	bool resumed_interrupted = w->resume_pc && w->resume_activation;   /* signal_caller's */
	uint32_t wanted = w->n == 0 || resumed_interrupted || interrupted_frame(w, activation)
		? all : arch->callee_saved;
	for (unsigned r = 0; r < arch->ndwarf_regs; r++) {
		Dwarf_Word v;
		if ((wanted & (1u << r)) && dwfl_frame_reg(state, r, &v) == 0) {
			f->regs[r] = v;
			f->regs_known |= 1u << r;
		}
	}
	if (w->resume_pc) {
		/* libdwfl took this caller for an initial (activation) frame
		 * whose pc is the return address - 1 (see resume_walk). */
		f->pc = w->resume_pc;
		if (arch->dwarf_pc >= 0)
			f->regs[arch->dwarf_pc] = w->resume_pc;
		f->activation = w->resume_activation;
		w->resume_pc = 0;
	}
	f->has_sp = f->regs_known & (1u << arch->dwarf_sp);
	f->sp = f->regs[arch->dwarf_sp];
	f->has_fp = f->regs_known & (1u << arch->dwarf_fp);
	f->fp = f->regs[arch->dwarf_fp];
	uint64_t stripped = arch->strip_ra(w->s->core, f->pc);
	if (w->n > 0 && stripped != f->pc) {
		/* A return address signed by pointer authentication: libdwfl
		 * would look its caller up at the signed address.  This frame
		 * starts a new walk at the address gdb shows. */
		memset(&w->pending, 0, sizeof(w->pending));
		memcpy(w->pending.regs, f->regs, sizeof(f->regs));
		w->pending.known = f->regs_known & ~(1u << arch->dwarf_lr);
		set_resume_pc(arch, &w->pending, stripped);
		w->has_pending = true;
		return DWARF_CB_ABORT;
	}
	if (w->n > 0 && f->has_sp && seen_before(w, f->pc, f->sp))
		return set_stop(w, "unwinding loops at pc 0x%llx", f->pc);
	w->n++;
	if (arch->frame_records && !has_cfi(w->s, f))
		return signal_caller(w, f) ? DWARF_CB_ABORT : record_caller(w, f);
	return DWARF_CB_OK;
}

/* Resume R at the caller whose return address is RA: the return address - 1
 * selects the caller's CFI row the way libdwfl does for a caller (it takes a
 * walk's first pc as exact). */
static void set_resume_pc(const struct core_arch *arch, struct resume *r, uint64_t ra)
{
	r->pc = ra - 1;
	if (arch->dwarf_pc >= 0) {
		r->regs[arch->dwarf_pc] = ra - 1;
		r->known |= 1u << arch->dwarf_pc;
	}
}

/* gdb's rule for a function without CFI that set up no frame (the parent
 * side of glibc's clone3 after its syscall lies past the function's
 * cfi_endproc): the return address is the word at the stack pointer, and
 * the caller's stack pointer is just above it.  Only a word that points
 * right after a call instruction in a module is taken, so a wrong guess
 * does not invent callers. */
static bool frameless_caller(struct walk *w, const struct dbg_frame *f, struct resume *r)
{
	const struct core_arch *arch = w->arch;
	uint64_t ra;
	if (!arch->ra_at_sp || !f->has_sp || !core_read_u64(w->s->core, f->sp, &ra) || ra == 0 ||
	    !dbg_module_for(w->s, ra) || !arch->after_call(w->s->core, ra))
		return false;
	r->known = f->regs_known & arch->callee_saved;
	memcpy(r->regs, f->regs, sizeof(r->regs));
	r->regs[arch->dwarf_sp] = f->sp + arch->call_pushes;
	r->known |= 1u << arch->dwarf_sp;
	set_resume_pc(arch, r, ra);
	return true;
}

/* Continue W from the caller state R (frameless_caller's).  Returns
 * dwfl_getthread_frames' result. */
static int resume_walk(struct walk *w, pid_t tid, const struct resume *r)
{
	w->resume_pc = r->interrupted ? r->pc : r->pc + 1;
	w->resume_activation = r->interrupted;
	resuming = r;
	int rc = dwfl_getthread_frames(w->s->dwfl, tid, frame_cb, w);
	resuming = NULL;
	w->resume_pc = 0;
	return rc;
}

/* The CFA of a frame is its caller's stack pointer. */
static void fill_cfa(struct walk *w)
{
	for (size_t i = 0; i + 1 < w->n; i++)
		if (w->frames[i + 1].has_sp)
			w->frames[i].cfa = w->frames[i + 1].sp;
}

/* Why a walk that libdwfl ended with an error stopped, or NULL when its last
 * frame is the outermost by convention (the frame pointer cleared, as _start
 * and a new thread's entry do) and the error only says that no caller was
 * found. */
static char *stop_reason(const struct walk *w, int err)
{
	if (w->n == 0)
		return strdup(dwfl_errmsg(err));
	const struct dbg_frame *last = &w->frames[w->n - 1];
	if (last->has_fp && last->fp == 0)
		return NULL;
	char buf[320];
	snprintf(buf, sizeof(buf), "no caller found for frame %zu (pc 0x%llx): %s", w->n - 1,
		 (unsigned long long)last->pc, dwfl_errmsg(err));
	return strdup(buf);
}

/* Finish W, begun on thread T with result RC: past frames the unwinder
 * could not step out of, then the frames and why the walk stopped. */
static struct core_error *finish_walk(struct walk *w, const struct core_thread *t, int rc,
				      struct dbg_frame **frames, size_t *nframes,
				      char **stop_reason_out)
{
	int err = rc == -1 ? dwfl_errno() : 0;
	/* rc 0: the CFI marked the return address undefined (the outermost
	 * frame); -1 with an error: no caller was found for the last frame.
	 * A caller the walk left pending (a frame record, a signed return
	 * address) goes on in a new walk: each adds a frame, so max_frames
	 * bounds them. */
	unsigned frameless = 0, pending = 0;
	while (!w->stop && !w->nomem && !w->reached_base) {
		struct resume r = { .thread = t };
		if (w->has_pending && pending++ <= w->s->opts.max_frames) {
			r = w->pending;
			r.thread = t;
			w->has_pending = false;
		} else if (w->has_pending || rc != -1 || !w->n || frameless >= MAX_RESUMES ||
			   !frameless_caller(w, &w->frames[w->n - 1], &r)) {
			break;
		} else {
			frameless++;
		}
		rc = resume_walk(w, t->tid, &r);
		err = rc == -1 ? dwfl_errno() : 0;
	}
	if (w->nomem) {
		free(w->frames);
		free(w->stop);
		return &core_error_nomem;
	}
	if (rc == -1 && !w->stop && err != 0 && !w->reached_base)
		w->stop = stop_reason(w, err);
	fill_cfa(w);
	/* Every thread's frames are kept until the report is made: give back
	 * the room the doubling left. */
	base_array_shrink(&w->frames, &w->cap, w->n, sizeof(*w->frames));
	*frames = w->frames;
	*nframes = w->n;
	*stop_reason_out = w->stop;
	return NULL;
}

struct core_error *dbg_unwind_thread(struct dbg_session *s, size_t thread_index,
				     struct dbg_frame **frames, size_t *nframes, char **stop_reason_out)
{
	*frames = NULL;
	*nframes = 0;
	*stop_reason_out = NULL;
	if (thread_index >= s->core->nthreads)
		return core_error_create(CORE_ERROR_USAGE, "no thread %zu", thread_index);
	if (!s->attached) {
		*stop_reason_out = strdup("unwinding unavailable");
		return NULL;
	}
	/* libdwfl finds threads by tid: a repeated tid would show the first
	 * thread's stack again. */
	const struct core_thread *t = &s->core->threads[thread_index];
	for (size_t i = 0; i < thread_index; i++)
		if (s->core->threads[i].tid == t->tid) {
			*stop_reason_out = strdup("thread id repeats an earlier thread's; not unwound");
			return NULL;
		}
	struct walk w = { .s = s, .arch = s->core->arch, .along_stack = true };
	walking_arch = s->core->arch;
	int rc = dwfl_getthread_frames(s->dwfl, t->tid, frame_cb, &w);
	return finish_walk(&w, t, rc, frames, nframes, stop_reason_out);
}

/* A stack no thread is on is walked as a resumed caller (resume_walk) of
 * the core's first thread: libdwfl only unwinds threads it knows, and the
 * resumed registers replace all of that thread's. */
struct core_error *dbg_unwind_regs(struct dbg_session *s, const struct dbg_regs *regs,
				   uint64_t base_start, uint64_t base_end,
				   struct dbg_frame **frames, size_t *nframes, bool *reached_base,
				   char **stop_reason_out)
{
	*frames = NULL;
	*nframes = 0;
	*reached_base = false;
	*stop_reason_out = NULL;
	if (!s->attached || s->core->nthreads == 0 || regs->pc == 0) {
		*stop_reason_out = strdup(regs->pc ? "unwinding unavailable" : "no pc");
		return NULL;
	}
	const struct core_thread *t = &s->core->threads[0];
	const struct core_arch *arch = s->core->arch;
	struct resume r = { .thread = t, .known = regs->known & arch->callee_saved };
	memcpy(r.regs, regs->regs, sizeof(r.regs));
	set_resume_pc(arch, &r, regs->pc);
	struct walk w = { .s = s, .arch = arch, .base_start = base_start, .base_end = base_end };
	walking_arch = arch;
	int rc = resume_walk(&w, t->tid, &r);
	struct core_error *err = finish_walk(&w, t, rc, frames, nframes, stop_reason_out);
	*reached_base = w.reached_base;
	return err;
}
