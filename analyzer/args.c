/* Frame arguments for each thread: the real native frames of a run of
 * native frames are handed to dwarf/ together, innermost first, so that a
 * parameter known only at the caller's call site (DW_OP_entry_value) can be
 * resolved in the caller's frame. */
#include "args.h"

#include <stdlib.h>
#include <string.h>

/* x86_64 DWARF register number of the stack pointer. */
enum { DWARF_REG_RSP = 7 };
/* What a call pushes on x86_64 (the CFA is the stack pointer before it). */
enum { RETURN_ADDRESS_SIZE = 8 };

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
		if (f->regs_known & (1u << r)) {
			out->regs[r] = f->regs[r];
			out->regs_known |= 1u << r;
		} else if (inner && (inner->regs_known & (1u << r))) {
			out->regs[r] = inner->regs[r];
			out->regs_known |= 1u << r;
		}
	}
}

/* Moves DARGS into F. */
static bool frame_take(struct an_frame *f, struct dbg_arg *dargs, size_t n)
{
	f->args = calloc(n ? n : 1, sizeof(*f->args));
	if (!f->args) {
		dbg_args_free(dargs, n);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		f->args[i].name = dargs[i].name;
		f->args[i].type = dargs[i].type;
		f->args[i].value = dargs[i].value;
		f->args[i].entry_value = dargs[i].entry_value;
		f->args[i].entry_equal = dargs[i].entry_equal;
	}
	f->nargs = n;
	f->has_args = true;
	free(dargs);
	return true;
}

/* A tail-call frame's arguments.  Its function left by a jump, so at that
 * jump the registers were what its callee found at entry: the registers the
 * unwinder recovered for the real caller CALLERS[0], whose stack pointer is
 * the CFA the tail frame shares; its pc is the jump's, and its stack pointer
 * is below the real caller's return address, as the jump left it (gdb's
 * dwarf2_tailcall_prev_register_first).  CALLERS [0..N) then serve as its
 * callers for entry values, as gdb reads them.  Its parameters are those of
 * the innermost function at the jump (F's inline_depth), @entry read where
 * the real function starts (gdb's get_frame_func): an inlined function's
 * location lists often do not reach back there, and then show none. */
static bool fill_tailcall(struct dbg_session *s, struct an_frame *f,
			  const struct dbg_frame_regs *callers, size_t n)
{
	struct dbg_frame_regs *ctx = malloc((n + 1) * sizeof(*ctx));
	struct dbg_arg *dargs;
	size_t nargs;
	bool has;
	if (!ctx)
		return false;
	ctx[0] = callers[0];
	ctx[0].pc = f->pc;
	ctx[0].activation = false;
	ctx[0].cfa = (callers[0].regs_known & (1u << DWARF_REG_RSP)) ? callers[0].regs[DWARF_REG_RSP] : 0;
	if (ctx[0].cfa)
		ctx[0].regs[DWARF_REG_RSP] = ctx[0].cfa - RETURN_ADDRESS_SIZE;
	ctx[0].entry_known = ctx[0].entry_failed = 0;
	memcpy(ctx + 1, callers, n * sizeof(*ctx));
	struct core_error *err = dbg_frame_args(s, ctx, n + 1, f->inline_depth, &dargs, &nargs, &has);
	free(ctx);
	if (err) {
		core_error_destroy(err);
		return false;
	}
	return !has || frame_take(f, dargs, nargs);
}

/* Frames [first, end) of one run of native frames; CTX holds room for
 * their real frames, REAL for one index per frame. */
static bool fill_run(struct dbg_session *s, struct an_frame *frames, size_t first, size_t end,
		     struct dbg_frame_regs *ctx, size_t *real)
{
	size_t n = 0;
	for (size_t i = first; i < end; i++)
		if (is_real_native(&frames[i])) {
			frame_regs(&frames[i], n ? &ctx[n - 1] : NULL, &ctx[n]);
			n++;
		}
	/* REAL[i]: the index in CTX of the real frame an inline level i belongs
	 * to (the next real frame at or after it); n when there is none. */
	size_t cur = n, next = n;
	for (size_t i = end; i-- > first;) {
		if (is_real_native(&frames[i]))
			cur = --next;
		real[i - first] = cur;
	}
	/* Outermost first: a callee's entry values are its caller's call-site
	 * values, often the caller's own entry values, memoised by then. */
	for (size_t i = end; i-- > first;) {
		struct an_frame *f = &frames[i];
		size_t r = real[i - first];
		if (r < n && f->tailcall) {
			if (!fill_tailcall(s, f, &ctx[r], n - r))
				return false;
			continue;
		}
		if (r == n || f->kind != AN_FRAME_NATIVE || !f->regs_known || f->tailcall ||
		    f->pc != ctx[r].pc)
			continue;
		struct dbg_arg *dargs;
		size_t nargs;
		bool has;
		if (dbg_frame_args(s, &ctx[r], n - r, f->inline_depth, &dargs, &nargs, &has))
			return false;
		if (has && !frame_take(f, dargs, nargs))
			return false;
	}
	return true;
}

/* The N frames of one stack: a thread's, or a task's (a bthread's). */
static bool fill_stack(struct dbg_session *s, struct an_frame *frames, size_t nframes)
{
	if (nframes == 0)
		return true;
	struct dbg_frame_regs *ctx = malloc(nframes * sizeof(*ctx));
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
		 * stay inside the run: dwarf/ follows the chain of tail calls
		 * from the real caller's call site itself. */
		bool boundary = i == nframes || frames[i].kind != AN_FRAME_NATIVE;
		if (!boundary)
			continue;
		ok = fill_run(s, frames, first, i, ctx, real);
		first = i + 1;
	}
	free(ctx);
	free(real);
	return ok;
}

bool an_args_fill(struct analysis *an, struct dbg_session *s)
{
	for (size_t i = 0; i < an->nthreads; i++)
		if (!fill_stack(s, an->threads[i].frames, an->threads[i].nframes))
			return false;
	for (size_t i = 0; i < an->ntasks; i++)
		if (!fill_stack(s, an->tasks[i].frames, an->tasks[i].nframes))
			return false;
	return true;
}
