/* What analyzer/goroutine.c, gostack.c and gopanic.c share about one Go
 * program: where its runtime keeps its goroutines and OS threads, and the
 * layouts of the runtime's structures (DESIGN.md "Go programs"). */
#ifndef ANALYZER_GOLANG_H
#define ANALYZER_GOLANG_H

#include "analysis.h"
#include "../dwarf/dwarf.h"
#include "../dwarf/gopclntab.h"

/* Member offsets of the runtime's structures, from DWARF or the version's
 * table. */
struct go_layout {
	/* runtime.g */
	uint64_t g_stack_lo, g_stack_hi, g_panic, g_m, g_sched_sp, g_sched_pc, g_sched_lr,
		g_sched_bp, g_syscallsp, g_syscallpc, g_status, g_goid, g_waitsince, g_waitreason,
		g_lockedm, g_sig, g_sigcode0, g_sigcode1, g_sigpc, g_gopc, g_startpc, g_waiting;
	/* runtime.sudog, runtime.semaRoot, runtime.pollDesc */
	uint64_t sg_g, sg_next, sg_prev, sg_elem, sg_waitlink, sg_c, sr_treap, pd_fd, pd_rg, pd_wg,
		pd_self;
	/* runtime.m */
	uint64_t m_g0, m_procid, m_curg, m_alllink;
	/* runtime._panic */
	uint64_t p_arg, p_link, p_recovered;
	/* runtime._type */
	uint64_t t_kind;
	uint64_t waitreason_size;   /* bytes of g.waitreason (1 in 1.19) */
	uint64_t g_bytes;           /* bytes of a g the members above lie in */
};

/* The goroutine statuses (runtime2.go); _Gscan is a bit over them. */
enum {
	GO_IDLE = 0, GO_RUNNABLE = 1, GO_RUNNING = 2, GO_SYSCALL = 3, GO_WAITING = 4,
	GO_DEAD = 6, GO_COPYSTACK = 8, GO_PREEMPTED = 9, GO_SCAN = 0x1000
};

/* One goroutine as its g says. */
struct go_g {
	uint64_t addr;
	uint64_t goid;
	uint32_t status;            /* without the scan bit */
	uint64_t stack_lo, stack_hi;
	uint64_t m;                 /* the M running it, 0: none */
	uint64_t lockedm;
	uint64_t sched_sp, sched_pc, sched_lr, sched_bp;
	uint64_t syscallsp, syscallpc;
	uint64_t waitsince;
	uint32_t waitreason;
	uint64_t gopc, startpc;
	uint64_t panic;             /* its _panic chain */
	uint32_t sig;
	uint64_t sigcode0, sigcode1, sigpc;
	uint64_t waiting;           /* its sudogs of a channel wait (g.waiting) */
};

/* One M (an OS thread of the runtime). */
struct go_m {
	uint64_t addr;
	uint64_t g0, curg;
	uint64_t procid;            /* the OS thread id */
	uint64_t g0_lo, g0_hi;      /* g0's stack */
	uint64_t g0_sched_sp;
};

struct go_runtime {
	struct dbg_session *s;
	struct core *core;
	struct analysis *an;
	const struct dbg_gotab *tab;
	char *version;              /* "go1.19.8", or NULL */
	bool arm64;
	struct go_layout L;
	uint64_t text_start, text_end;  /* Go's code: a pc outside it is C */
	struct go_g *gs;
	size_t ngs;
	struct go_m *ms;
	size_t nms;
	char **wait_reasons;        /* the runtime's words, by waitReason */
	size_t nwait_reasons;
};

/* Read N bytes of the core at ADDR; false when it does not hold them. */
bool go_read(struct go_runtime *rt, uint64_t addr, void *buf, size_t n);
bool go_read_word(struct go_runtime *rt, uint64_t addr, uint64_t *value);

/* RT's goroutine at address G; NULL when none. */
struct go_g *go_g_at(struct go_runtime *rt, uint64_t g);

/* RT's M at address M, or whose OS thread is TID; NULL when none. */
struct go_m *go_m_at(struct go_runtime *rt, uint64_t m);
struct go_m *go_m_of_thread(struct go_runtime *rt, int32_t tid);

/* The frames of core thread T (its index in AN->threads) walked as the Go
 * runtime walks them: C frames by CFI, Go frames by the runtime's own
 * table, across signal frames and from the M's g0 to the goroutine it
 * runs.  *FRAMES (malloc'd) innermost first; *GOROUTINE_AT: the first of
 * them on the stack of the goroutine the thread runs (NFRAMES: none).
 * False when nothing could be walked (T keeps its frames). */
bool go_walk_thread(struct go_runtime *rt, size_t t, struct dbg_frame **frames, size_t *nframes,
		    size_t *goroutine_at, char **stop_reason);

/* The frames of parked goroutine G from where it resumes (its saved
 * context, or its system call's), with the C frames of a callback from C
 * it is inside. */
bool go_walk_parked(struct go_runtime *rt, const struct go_g *g, struct dbg_frame **frames,
		    size_t *nframes, char **stop_reason);

/* Fill AN->go from the panicking goroutine's _panic chain or the runtime's
 * fatal error, and mark the frame that faulted or called panic as the
 * crash site. */
void go_crash_read(struct go_runtime *rt);

/* Fill the waits of the goroutines' tasks AN->tasks[FIRST ...] (one per
 * live g of RT, in RT's order): the channel, sync object or poll
 * descriptor each waits on, the global holding it, an fd
 * (analyzer/gowait.c).  False only when memory ran out. */
bool go_waits_read(struct go_runtime *rt, size_t first);

/* The Go function whose code holds PC (looked up as is). */
bool go_func(struct go_runtime *rt, uint64_t pc, struct dbg_gofunc *f);

#endif
