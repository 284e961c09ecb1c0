/* Native unwinding: libdwfl's CFI unwinder (with its x86_64 frame-pointer
 * fallback) over thread state taken from NT_PRSTATUS, reading target memory
 * through corefile's bounded reader.  Where neither finds a caller, gdb's
 * rule for a function that keeps no frame (the return address at the stack
 * pointer) continues the walk from a new initial state. */
#include "unwind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../corefile/array.h"

/* DWARF register numbers of x86_64 in the order libdwfl expects (0..16). */
static const enum core_reg dwarf_regs[17] = {
	CORE_REG_RAX, CORE_REG_RDX, CORE_REG_RCX, CORE_REG_RBX, CORE_REG_RSI,
	CORE_REG_RDI, CORE_REG_RBP, CORE_REG_RSP, CORE_REG_R8, CORE_REG_R9,
	CORE_REG_R10, CORE_REG_R11, CORE_REG_R12, CORE_REG_R13, CORE_REG_R14,
	CORE_REG_R15, CORE_REG_RIP,
};

static const char *const dwarf_reg_names[DBG_NREGS] = {
	"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9",
	"r10", "r11", "r12", "r13", "r14", "r15", "rip",
};

const char *dbg_reg_name(unsigned n)
{
	return n < DBG_NREGS ? dwarf_reg_names[n] : "?";
}

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
};
static _Thread_local const struct resume *resuming;

static bool set_resumed_registers(Dwfl_Thread *thread, const struct resume *r)
{
	for (unsigned i = 0; i < DBG_NREGS; i++) {
		Dwarf_Word v = r->regs[i];
		if ((r->known & (1u << i)) && !dwfl_thread_state_registers(thread, (int)i, 1, &v))
			return false;
	}
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	const struct core_thread *t = thread_arg;
	if (resuming && resuming->thread == t)
		return set_resumed_registers(thread, resuming);
	Dwarf_Word regs[17];
	for (size_t i = 0; i < 17; i++)
		regs[i] = t->regs[dwarf_regs[i]];
	return dwfl_thread_state_registers(thread, 0, 17, regs);
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

/* rbx, rbp, rsp, r12-r15, rip in DWARF numbering. */
#define CALLEE_SAVED ((1u << 3) | (1u << 6) | (1u << 7) | (0xfu << 12) | (1u << 16))

/* Walks resumed past frames the unwinder could not step out of, at most. */
#define MAX_RESUMES 16

struct walk {
	struct dbg_session *s;
	struct dbg_frame *frames;
	size_t n, cap;
	char *stop;
	bool nomem;
	uint64_t resume_pc;         /* nonzero: the next frame is a resumed caller */
	uint64_t base_start, base_end;  /* a caller pc here ends the walk */
	bool reached_base;
	const struct core_segment *stack;   /* past --max-frames: the stack walked */
	bool along_stack;           /* a thread's walk: goes on past --max-frames */
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
		if (w->frames[i].pc == pc && w->frames[i].has_rsp && w->frames[i].rsp == sp)
			return true;
	return false;
}

/* A zeroed slot for the next frame (not yet counted in w->n), or NULL. */
static struct dbg_frame *push_frame(struct walk *w)
{
	if (!core_array_reserve(&w->frames, &w->cap, w->n + 1, sizeof(*w->frames))) {
		w->nomem = true;
		return NULL;
	}
	struct dbg_frame *f = &w->frames[w->n];
	memset(f, 0, sizeof(*f));
	return f;
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
	if (!prev->has_rsp || dwfl_frame_reg(state, 7, &sp) != 0 || sp <= prev->rsp)
		return false;
	if (!w->stack)
		w->stack = core_find_segment(w->s->core, prev->rsp);
	const struct core_segment *st = w->stack;
	return st && sp >= st->vaddr && sp - st->vaddr < st->memsz &&
	       w->n - w->s->opts.max_frames < st->memsz / 8;
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
		if (dwfl_frame_reg(state, 7, &sp) == 0)
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
	 * libdw carries the others over as "same value". */
	uint32_t wanted = w->n > 0 ? CALLEE_SAVED : (1u << DBG_NREGS) - 1;
	for (unsigned r = 0; r < DBG_NREGS; r++) {
		Dwarf_Word v;
		if ((wanted & (1u << r)) && dwfl_frame_reg(state, r, &v) == 0) {
			f->regs[r] = v;
			f->regs_known |= 1u << r;
		}
	}
	if (w->resume_pc) {
		/* libdwfl took this caller for an initial (activation) frame
		 * whose pc is the return address - 1 (see resume_walk). */
		f->pc = f->regs[16] = w->resume_pc;
		f->activation = false;
		w->resume_pc = 0;
	}
	f->has_rsp = f->regs_known & (1u << 7);
	f->rsp = f->regs[7];
	f->has_rbp = f->regs_known & (1u << 6);
	f->rbp = f->regs[6];
	if (w->n > 0 && f->has_rsp && seen_before(w, f->pc, f->rsp))
		return set_stop(w, "unwinding loops at pc 0x%llx", f->pc);
	w->n++;
	return DWARF_CB_OK;
}

/* Length of the indirect call (FF /2) whose ModRM byte is MODRM and SIB byte
 * SIB; 0 when MODRM does not encode a call. */
static unsigned indirect_call_len(uint8_t modrm, uint8_t sib)
{
	unsigned mod = modrm >> 6, reg = (modrm >> 3) & 7, rm = modrm & 7;
	if (reg != 2)
		return 0;
	if (mod == 3)
		return 2;
	unsigned len = 2 + (rm == 4);
	if (mod == 1)
		return len + 1;
	if (mod == 2)
		return len + 4;
	if (rm == 5)
		return 6;
	return rm == 4 && (sib & 7) == 5 ? len + 4 : len;
}

/* True when the code before RA ends with a call instruction (direct, or
 * FF /2 in any addressing form), as it does before a real return address. */
static bool after_call(struct core *core, uint64_t ra)
{
	uint8_t b[8];
	if (ra < sizeof(b) || !core_read_bytes(core, ra - sizeof(b), b, sizeof(b)))
		return false;
	if (b[3] == 0xe8)
		return true;
	for (unsigned len = 2; len <= 7; len++) {
		size_t at = sizeof(b) - len;
		if (b[at] == 0xff && indirect_call_len(b[at + 1], len > 2 ? b[at + 2] : 0) == len)
			return true;
	}
	return false;
}

/* gdb's rule for a function without CFI that set up no frame (the parent
 * side of glibc's clone3 after its syscall lies past the function's
 * cfi_endproc): the return address is the word at the stack pointer, and
 * the caller's stack pointer is just above it.  Only a word that points
 * right after a call instruction in a module is taken, so a wrong guess
 * does not invent callers. */
static bool frameless_caller(struct walk *w, const struct dbg_frame *f, struct resume *r)
{
	uint64_t ra;
	if (!f->has_rsp || !core_read_u64(w->s->core, f->rsp, &ra) || ra == 0 ||
	    !dbg_module_for(w->s, ra) || !after_call(w->s->core, ra))
		return false;
	r->known = f->regs_known & CALLEE_SAVED;
	memcpy(r->regs, f->regs, sizeof(r->regs));
	r->regs[7] = f->rsp + 8;
	/* The return address - 1 selects the caller's CFI row the way libdwfl
	 * does for a caller (it takes a walk's first pc as exact). */
	r->regs[16] = ra - 1;
	r->known |= (1u << 7) | (1u << 16);
	return true;
}

/* Continue W from the caller state R (frameless_caller's).  Returns
 * dwfl_getthread_frames' result. */
static int resume_walk(struct walk *w, pid_t tid, const struct resume *r)
{
	w->resume_pc = r->regs[16] + 1;
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
		if (w->frames[i + 1].has_rsp)
			w->frames[i].cfa = w->frames[i + 1].rsp;
}

/* Why a walk that libdwfl ended with an error stopped, or NULL when its last
 * frame is the outermost by convention (rbp cleared, as _start and a new
 * thread's entry do) and the error only says that no caller was found. */
static char *stop_reason(const struct walk *w, int err)
{
	if (w->n == 0)
		return strdup(dwfl_errmsg(err));
	const struct dbg_frame *last = &w->frames[w->n - 1];
	if (last->has_rbp && last->rbp == 0)
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
	 * frame); -1 with an error: no caller was found for the last frame. */
	for (unsigned i = 0; rc == -1 && w->n && !w->stop && !w->nomem && !w->reached_base &&
			     i < MAX_RESUMES; i++) {
		struct resume r = { .thread = t };
		if (!frameless_caller(w, &w->frames[w->n - 1], &r))
			break;
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
	core_array_shrink(&w->frames, &w->cap, w->n, sizeof(*w->frames));
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
	struct walk w = { .s = s, .along_stack = true };
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
	if (!s->attached || s->core->nthreads == 0 || regs->rip == 0) {
		*stop_reason_out = strdup(regs->rip ? "unwinding unavailable" : "no pc");
		return NULL;
	}
	const struct core_thread *t = &s->core->threads[0];
	struct resume r = { .thread = t, .known = CALLEE_SAVED };
	r.regs[3] = regs->rbx;
	r.regs[6] = regs->rbp;
	r.regs[7] = regs->rsp;
	r.regs[12] = regs->r12;
	r.regs[13] = regs->r13;
	r.regs[14] = regs->r14;
	r.regs[15] = regs->r15;
	r.regs[16] = regs->rip - 1;     /* resume_walk: a return address - 1 */
	struct walk w = { .s = s, .base_start = base_start, .base_end = base_end };
	int rc = resume_walk(&w, t->tid, &r);
	struct core_error *err = finish_walk(&w, t, rc, frames, nframes, stop_reason_out);
	*reached_base = w.reached_base;
	return err;
}
