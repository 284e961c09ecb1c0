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

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
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
	if (w->n >= w->s->opts.max_frames)
		return set_stop(w, "stopped after %llu frames (--max-frames)", w->n);
	if (!core_array_reserve(&w->frames, &w->cap, w->n + 1, sizeof(*w->frames))) {
		w->nomem = true;
		return DWARF_CB_ABORT;
	}
	struct dbg_frame *f = &w->frames[w->n];
	memset(f, 0, sizeof(*f));
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
	struct walk w = { .s = s };
	int rc = dwfl_getthread_frames(s->dwfl, tid, frame_cb, &w);
	if (w.nomem) {
		free(w.frames);
		free(w.stop);
		return &core_error_nomem;
	}
	if (rc == -1 && !w.stop) {
		int e = dwfl_errno();
		/* libdwfl ends every walk with an error; only a walk that found no
		 * caller for a frame that should have one is worth reporting. */
		if (e != 0 && w.n <= 1)
			w.stop = strdup(dwfl_errmsg(e));
	}
	fill_cfa(&w);
	*frames = w.frames;
	*nframes = w.n;
	*stop_reason = w.stop;
	return NULL;
}
