/* Native unwinding: libdwfl's CFI unwinder (with its x86_64 frame-pointer
 * fallback) over thread state taken from NT_PRSTATUS, reading target memory
 * through corefile's bounded reader. */
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

/* The thread id under which dbg_unwind_regs() hands its registers to
 * libdwfl: no Linux thread has it (tids stay below 2^22), and a core thread
 * that claims it is never unwound as one. */
#define SYNTHETIC_TID 0x7fffffff

/* The thread argument libdwfl carries is the core_thread itself, or the
 * dbg_regs of the synthetic thread. */
static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	struct dbg_session *s = arg;
	const struct core_thread *cur = *thread_argp;
	size_t next = cur ? (size_t)(cur - s->core->threads) + 1 : 0;
	while (next < s->core->nthreads && s->core->threads[next].tid == SYNTHETIC_TID)
		next++;
	if (next >= s->core->nthreads)
		return 0;
	*thread_argp = &s->core->threads[next];
	return s->core->threads[next].tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	struct dbg_session *s = arg;
	if (tid == SYNTHETIC_TID) {
		*thread_argp = (void *)s->synthetic;
		return s->synthetic != NULL;
	}
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

/* Only the registers a context switch saved are known; the others stay
 * undefined for the CFI unwinder. */
static bool set_synthetic_registers(Dwfl_Thread *thread, const struct dbg_regs *r)
{
	const Dwarf_Word rbx = r->rbx, rbp_rsp[2] = { r->rbp, r->rsp };
	const Dwarf_Word r12_r15[4] = { r->r12, r->r13, r->r14, r->r15 };
	if (!dwfl_thread_state_registers(thread, 3, 1, &rbx) ||
	    !dwfl_thread_state_registers(thread, 6, 2, rbp_rsp) ||
	    !dwfl_thread_state_registers(thread, 12, 4, r12_r15))
		return false;
	dwfl_thread_state_register_pc(thread, r->rip);
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	if (dwfl_thread_tid(thread) == SYNTHETIC_TID)
		return set_synthetic_registers(thread, thread_arg);
	const struct core_thread *t = thread_arg;
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

struct walk {
	struct dbg_session *s;
	struct dbg_frame *frames;
	size_t n, cap;
	char *stop;
	bool nomem;
	bool from_return_address;   /* frame 0's pc is a return address */
	uint64_t base_start, base_end;  /* a caller pc here ends the walk */
	bool reached_base;
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
	if (w->n >= w->s->opts.max_frames)
		return set_stop(w, "stopped after %llu frames (--max-frames)", w->n);
	if (!core_array_reserve(&w->frames, &w->cap, w->n + 1, sizeof(*w->frames))) {
		w->nomem = true;
		return DWARF_CB_ABORT;
	}
	struct dbg_frame *f = &w->frames[w->n];
	memset(f, 0, sizeof(*f));
	f->pc = pc;
	f->activation = activation && !(w->n == 0 && w->from_return_address);
	/* In a caller, only callee-saved registers, rsp and rip mean anything:
	 * libdw carries the others over as "same value". */
	uint32_t wanted = w->n > 0 || w->from_return_address ? CALLEE_SAVED : (1u << DBG_NREGS) - 1;
	for (unsigned r = 0; r < DBG_NREGS; r++) {
		Dwarf_Word v;
		if ((wanted & (1u << r)) && dwfl_frame_reg(state, r, &v) == 0) {
			f->regs[r] = v;
			f->regs_known |= 1u << r;
		}
	}
	f->has_rsp = f->regs_known & (1u << 7);
	f->rsp = f->regs[7];
	f->has_rbp = f->regs_known & (1u << 6);
	f->rbp = f->regs[6];
	if (w->n > 0 && f->has_rsp && seen_before(w, pc, f->rsp))
		return set_stop(w, "unwinding loops at pc 0x%llx", pc);
	w->n++;
	return DWARF_CB_OK;
}

/* The CFA of a frame is its caller's stack pointer. */
static void fill_cfa(struct walk *w)
{
	for (size_t i = 0; i + 1 < w->n; i++)
		if (w->frames[i + 1].has_rsp)
			w->frames[i].cfa = w->frames[i + 1].rsp;
}

/* Run the walk W over thread TID and hand its frames out. */
static struct core_error *walk_thread(struct dbg_session *s, pid_t tid, struct walk *w,
				      struct dbg_frame **frames, size_t *nframes, char **stop_reason)
{
	int rc = dwfl_getthread_frames(s->dwfl, tid, frame_cb, w);
	if (w->nomem) {
		free(w->frames);
		free(w->stop);
		return &core_error_nomem;
	}
	if (rc == -1 && !w->stop) {
		int e = dwfl_errno();
		/* libdwfl ends every walk with an error; only a walk that found no
		 * caller for a frame that should have one is worth reporting. */
		if (e != 0 && w->n <= 1)
			w->stop = strdup(dwfl_errmsg(e));
	}
	fill_cfa(w);
	*frames = w->frames;
	*nframes = w->n;
	*stop_reason = w->stop;
	return NULL;
}

struct core_error *dbg_unwind_thread(struct dbg_session *s, size_t thread_index,
				     struct dbg_frame **frames, size_t *nframes, char **stop_reason)
{
	*frames = NULL;
	*nframes = 0;
	*stop_reason = NULL;
	if (thread_index >= s->core->nthreads)
		return core_error_create(CORE_ERROR_USAGE, "no thread %zu", thread_index);
	if (!s->attached) {
		*stop_reason = strdup("unwinding unavailable");
		return NULL;
	}
	/* libdwfl finds threads by tid: a repeated tid would show the first
	 * thread's stack again. */
	int32_t tid = s->core->threads[thread_index].tid;
	for (size_t i = 0; i < thread_index; i++)
		if (s->core->threads[i].tid == tid) {
			*stop_reason = strdup("thread id repeats an earlier thread's; not unwound");
			return NULL;
		}
	if (tid == SYNTHETIC_TID) {
		*stop_reason = strdup("thread id is not a Linux thread id; not unwound");
		return NULL;
	}
	struct walk w = { .s = s };
	return walk_thread(s, tid, &w, frames, nframes, stop_reason);
}

struct core_error *dbg_unwind_regs(struct dbg_session *s, const struct dbg_regs *regs,
				   uint64_t base_start, uint64_t base_end,
				   struct dbg_frame **frames, size_t *nframes, bool *reached_base,
				   char **stop_reason)
{
	*frames = NULL;
	*nframes = 0;
	*reached_base = false;
	*stop_reason = NULL;
	if (!s->attached) {
		*stop_reason = strdup("unwinding unavailable");
		return NULL;
	}
	struct walk w = { .s = s, .from_return_address = true, .base_start = base_start,
			  .base_end = base_end };
	s->synthetic = regs;
	struct core_error *err = walk_thread(s, SYNTHETIC_TID, &w, frames, nframes, stop_reason);
	s->synthetic = NULL;
	*reached_base = w.reached_base;
	return err;
}
