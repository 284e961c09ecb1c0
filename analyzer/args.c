/* Frame arguments for each thread: the real and tail-call frames of a run
 * of native frames are handed to dwarf/ together, innermost first, so that
 * a parameter known only at the caller's call site (DW_OP_entry_value) can
 * be resolved in the caller's frame, the next one out as in gdb. */
#include "args.h"

#include <stdlib.h>
#include <string.h>

#include "../base/array.h"

/* A frame that stands for itself on the stack (not an inline level, not
 * restored from call-site information). */
static bool is_real_native(const struct an_frame *f)
{
	return f->kind == AN_FRAME_NATIVE && !f->inlined && !f->tailcall && f->regs_known;
}

/* Registers CFI leaves unspecified keep the inner frame's value, as gdb
 * (and libdw) take them; the unwinder kept only the restored ones. */
static void frame_regs(const struct an_frame *f, const struct dbg_frame_regs *inner,
		       struct dbg_frame_regs *out)
{
	memset(out, 0, sizeof(*out));
	out->pc = f->pc;
	out->activation = f->activation;
	out->cfa = f->cfa;
	for (unsigned r = 0; r < DBG_NREGS && r < AN_FRAME_NREGS; r++) {
		if (an_frame_reg(f, r, &out->regs[r])) {
			out->regs_known |= 1u << r;
		} else if (inner && (inner->regs_known & (1u << r))) {
			out->regs[r] = inner->regs[r];
			out->regs_known |= 1u << r;
		}
	}
}

/* A block of arguments made in this fill, for frames with the same. */
struct made {
	uint64_t hash;              /* first: base/array.h's tables */
	struct an_arg *args;        /* held by a frame, borrowed here */
	struct dbg_arg *from;       /* what dwarf/ lent for it (its strings live
				       as long as the session) */
	size_t n;
};

/* What dwarf/ is asked for each frame: dbg_frame_args or dbg_frame_locals. */
typedef struct core_error *(*frame_vars_fn)(struct dbg_session *s, struct dbg_frame_regs *frames,
					    size_t nframes, int inline_depth,
					    const struct dbg_arg **vars, size_t *nvars, bool *has);

/* The state of one an_args_fill (or an_locals_fill). */
struct fill {
	struct dbg_session *s;
	frame_vars_fn vars;
	bool locals;                /* fill an_frame.locals, not args */
	struct an_arg *lent;        /* room to borrow dwarf/'s strings in */
	size_t cap;
	struct made *made;          /* open addressing by hash */
	size_t made_cap, nmade;
};

/* dwarf/ lends one string for one printed value met again: arguments are
 * compared by their strings' addresses (equal texts at two addresses only
 * cost a second block). */
static uint64_t args_hash(const struct dbg_arg *a, size_t n)
{
	uint64_t h = 1469598103934665603ULL ^ n;
	for (size_t i = 0; i < n; i++) {
		uint64_t parts[] = { (uintptr_t)a[i].name, (uintptr_t)a[i].type, (uintptr_t)a[i].value,
				     (uintptr_t)a[i].entry_value, a[i].entry_equal };
		for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]); k++)
			h = (h ^ parts[k]) * 1099511628211ULL + (h >> 31);
	}
	return h;
}

static bool same_args(const struct dbg_arg *x, const struct dbg_arg *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (x[i].name != a[i].name || x[i].type != a[i].type || x[i].value != a[i].value ||
		    x[i].entry_value != a[i].entry_value || x[i].entry_equal != a[i].entry_equal)
			return false;
	return true;
}

static struct made *made_slot(struct fill *c, uint64_t h, const struct dbg_arg *a, size_t n)
{
	for (size_t i = base_hash_slot(h, c->made_cap);; i = (i + 1) & (c->made_cap - 1)) {
		struct made *m = &c->made[i];
		if (!m->args || (m->hash == h && m->n == n && same_args(m->from, a, n)))
			return m;
	}
}

/* A block with a copy of DARGS (dwarf/'s until its next call). */
static struct an_arg *args_pack(struct fill *c, const struct dbg_arg *dargs, size_t n)
{
	if (n > c->cap) {
		struct an_arg *v = realloc(c->lent, n * sizeof(*v));
		if (!v)
			return NULL;
		c->lent = v;
		c->cap = n;
	}
	for (size_t i = 0; i < n; i++)
		c->lent[i] = (struct an_arg){ .name = (char *)dargs[i].name, .type = (char *)dargs[i].type,
					      .value = (char *)dargs[i].value,
					      .entry_value = (char *)dargs[i].entry_value,
					      .entry_equal = dargs[i].entry_equal };
	return an_args_pack(c->lent, n);
}

/* DARGS into F: a block an earlier frame with the same arguments holds
 * (threads parked in the same place have the same), else a new one. */
static bool frame_take(struct fill *c, struct an_frame *f, const struct dbg_arg *dargs, size_t n)
{
	uint64_t h = args_hash(dargs, n);
	struct made *m = base_table_reserve(&c->made, &c->made_cap, c->nmade, sizeof(*c->made))
			 ? made_slot(c, h, dargs, n) : NULL;
	struct an_arg *block;
	if (m && m->args) {
		block = an_args_share(m->args);
	} else {
		block = args_pack(c, dargs, n);
		if (!block)
			return false;
		struct dbg_arg *from = m ? malloc((n ? n : 1) * sizeof(*from)) : NULL;
		if (from) {
			if (n)  /* DARGS may be NULL then */
				memcpy(from, dargs, n * sizeof(*from));
			*m = (struct made){ .hash = h, .args = block, .from = from, .n = n };
			c->nmade++;
		}
	}
	if (c->locals) {
		f->locals = block;
		f->nlocals = n;
		f->has_locals = true;
	} else {
		f->args = block;
		f->nargs = n;
		f->has_args = true;
	}
	return true;
}

/* A tail-call frame restored between real frames (gdb's TAILCALL frame). */
static bool is_tail_call(const struct an_frame *f)
{
	return f->kind == AN_FRAME_NATIVE && f->tailcall;
}

/* The registers of a tail-call frame at PC whose real caller is CALLER.
 * Its function left by a jump, so at that jump the registers were what its
 * callee found at entry: those the unwinder recovered for CALLER (gdb's
 * tail-call frames take their caller's), but for its pc and its stack
 * pointer, below CALLER's return address as the jump left it (gdb's
 * dwarf2_tailcall_prev_register_first); its CFA is CALLER's stack pointer. */
static void tail_call_regs(const struct core_arch *arch, uint64_t pc,
			   const struct dbg_frame_regs *caller, struct dbg_frame_regs *out)
{
	memset(out, 0, sizeof(*out));
	out->pc = pc;
	memcpy(out->regs, caller->regs, sizeof(out->regs));
	out->regs_known = caller->regs_known;
	unsigned sp = arch->dwarf_sp;
	out->cfa = (caller->regs_known & (1u << sp)) ? caller->regs[sp] : 0;
	if (out->cfa)
		out->regs[sp] = out->cfa - arch->call_pushes;
}

/* Real frame F's registers into CTX[*N], and its registers for the
 * tail-call frames waiting for it, CTX[*TAILS, *N): it is their caller.
 * CTX[*TAILS - 1] is the real frame before it. */
static void add_real(const struct core_arch *arch, const struct an_frame *f,
		     struct dbg_frame_regs *ctx, size_t *n, size_t *tails)
{
	frame_regs(f, *tails ? &ctx[*tails - 1] : NULL, &ctx[*n]);
	for (size_t k = *tails; k < *n; k++)
		tail_call_regs(arch, ctx[k].pc, &ctx[*n], &ctx[k]);
	*tails = ++*n;
}

/* CTX for frames [first, end) of a run: its real and tail-call frames,
 * innermost first, each the caller of the one before it for entry values
 * as gdb's frames are; then BEYOND.  REAL[i - first]: the index in CTX of
 * frame i's context, an inline level's the next one out.  *NRUN: how many
 * belong to the run's frames (tail-call frames with no real frame above
 * them have none), *NCTX: with BEYOND. */
static void run_contexts(const struct core_arch *arch, struct an_frame *frames, size_t first,
			 size_t end, const struct an_frame *beyond, struct dbg_frame_regs *ctx,
			 size_t *real, size_t *nrun, size_t *nctx)
{
	size_t n = 0, tails = 0;
	for (size_t i = first; i < end; i++) {
		real[i - first] = n;
		if (is_tail_call(&frames[i]))
			ctx[n++].pc = frames[i].pc;     /* its registers: its caller's */
		else if (is_real_native(&frames[i]))
			add_real(arch, &frames[i], ctx, &n, &tails);
	}
	*nrun = tails;
	if (beyond && is_real_native(beyond)) {
		add_real(arch, beyond, ctx, &n, &tails);
		*nrun = n - 1;
	}
	*nctx = tails;
	for (size_t i = end, next = *nrun; i-- > first;) {
		if (is_real_native(&frames[i]) || is_tail_call(&frames[i]))
			next = real[i - first];
		else
			real[i - first] = next;
	}
}

/* Frames [first, end) of one run of native frames; BEYOND, when not NULL,
 * is the real caller of the last of them, not among them (nor filled).
 * CTX holds room for their frames and BEYOND, REAL for one index per
 * frame. */
static bool fill_run(struct fill *c, struct an_frame *frames, size_t first, size_t end,
		     const struct an_frame *beyond, struct dbg_frame_regs *ctx, size_t *real)
{
	size_t nrun, nctx;
	run_contexts(dbg_session_core(c->s)->arch, frames, first, end, beyond, ctx, real, &nrun,
		     &nctx);
	/* Outermost first: a callee's entry values are its caller's call-site
	 * values, often the caller's own entry values, memoised by then.  A
	 * tail-call frame shows the parameters of the innermost function at
	 * its jump (its inline_depth), @entry read where the real function
	 * starts (gdb's get_frame_func): an inlined function's location lists
	 * often do not reach back there, and then show none. */
	for (size_t i = end; i-- > first;) {
		struct an_frame *f = &frames[i];
		size_t r = real[i - first];
		if (r >= nrun || f->kind != AN_FRAME_NATIVE || f->pc != ctx[r].pc ||
		    (!f->regs_known && !f->tailcall))
			continue;
		const struct dbg_arg *dargs;
		size_t nargs;
		bool has;
		struct core_error *err = c->vars(c->s, &ctx[r], nctx - r, f->inline_depth, &dargs,
						 &nargs, &has);
		if (err) {
			core_error_destroy(err);
			return false;
		}
		if (has && !frame_take(c, f, dargs, nargs))
			return false;
	}
	return true;
}

/* The N frames of one stack: a thread's, or a task's (a bthread's).  The
 * run RUN (or NULL) left out before frames[RUN->first] parts them: the
 * frame before it has its caller in RUN->caller, not there. */
static bool fill_stack(struct fill *c, struct an_frame *frames, size_t nframes,
		       const struct an_recursion *run)
{
	if (nframes == 0)
		return true;
	size_t seam = run ? run->first : SIZE_MAX;
	struct dbg_frame_regs *ctx = malloc((nframes + 1) * sizeof(*ctx));
	size_t *real = malloc(nframes * sizeof(*real));
	if (!ctx || !real) {
		free(ctx);
		free(real);
		return false;
	}
	bool ok = true;
	size_t first = 0;
	for (size_t i = 0; i <= nframes && ok; i++) {
		/* A run ends where the stack stops being native: an async frame
		 * is no caller whose call site we can read.  Tail-call frames
		 * stay inside the run: each is its callee's caller. */
		bool native = i < nframes && frames[i].kind == AN_FRAME_NATIVE;
		if (native && i != seam)
			continue;
		ok = fill_run(c, frames, first, i, i == seam ? &run->caller : NULL, ctx, real);
		first = native ? i : i + 1;
	}
	free(ctx);
	free(real);
	return ok;
}

static void fill_deinit(struct fill *c)
{
	free(c->lent);
	for (size_t i = 0; i < c->made_cap; i++)
		free(c->made[i].from);
	free(c->made);
}

bool an_args_fill(struct analysis *an, struct dbg_session *s)
{
	struct fill c = { .s = s, .vars = dbg_frame_args };
	bool ok = true;
	for (size_t i = 0; i < an->nthreads && ok; i++)
		ok = fill_stack(&c, an->threads[i].frames, an->threads[i].nframes,
				an->threads[i].recursion);
	for (size_t i = 0; i < an->ntasks && ok; i++)
		ok = fill_stack(&c, an->tasks[i].frames, an->tasks[i].nframes, NULL);
	fill_deinit(&c);
	return ok;
}

/* Whether TASK runs on thread T (NULL: none): its frames top T's stack, so
 * --locals without "all" shows them with the crashing thread's. */
static bool task_on_thread(const struct an_task *task, const struct an_thread *t)
{
	return t && task->state == AN_TASK_RUNNING && task->has_tid && task->tid == t->tid;
}

bool an_locals_fill(struct analysis *an, struct dbg_session *s, bool all_threads)
{
	struct fill c = { .s = s, .vars = dbg_frame_locals, .locals = true };
	size_t crashing = an_crashing_thread(an);
	const struct an_thread *crash = crashing < an->nthreads ? &an->threads[crashing] : NULL;
	bool ok = true;
	for (size_t i = 0; i < an->nthreads && ok; i++)
		if (all_threads || i == crashing) {
			ok = fill_stack(&c, an->threads[i].frames, an->threads[i].nframes,
					an->threads[i].recursion);
			an->threads[i].has_locals = true;
		}
	for (size_t i = 0; i < an->ntasks && ok; i++) {
		struct an_task *task = &an->tasks[i];
		if (all_threads || task_on_thread(task, crash)) {
			ok = fill_stack(&c, task->frames, task->nframes, NULL);
			task->has_locals = true;
		}
	}
	fill_deinit(&c);
	return ok;
}
