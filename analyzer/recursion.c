#include "recursion.h"

#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "signature.h"

/* Frames of the run kept on its inner and outer sides, at least: in whole
 * periods, two and one at the least. */
#define KEEP_INNER 8
#define KEEP_OUTER 4

/* The longest stretch of PCS periodic with period L: *START and the number
 * of frames it covers.  A zero pc (an activation's) repeats nothing. */
static size_t longest_periodic(const uint64_t *pcs, size_t n, size_t l, size_t *start)
{
	size_t best = 0, run = 0;
	*start = 0;
	/* pcs[i] == pcs[i + l] for i in [a, b): frames [a, b + l) repeat. */
	for (size_t i = 0; i + l < n; i++) {
		if (pcs[i] != pcs[i + l] || pcs[i] == 0) {
			run = 0;
			continue;
		}
		run++;
		if (run + l > best) {
			best = run + l;
			*start = i + 1 - run;
		}
	}
	return best;
}

bool an_recursion_find(const struct dbg_frame *frames, size_t n, struct an_recursion_cut *cut)
{
	size_t best = 0, best_start = 0, best_l = 0;
	/* The return addresses alone, packed: scanned once per period. */
	uint64_t *pcs = malloc((n ? n : 1) * sizeof(*pcs));
	if (!pcs)
		return false;   /* no cut: the walk is bounded as any other */
	for (size_t i = 0; i < n; i++)
		pcs[i] = frames[i].activation ? 0 : frames[i].pc;
	/* The smallest period wins ties: a cycle of 2 is also one of 4. */
	for (size_t l = 1; l <= AN_RECURSION_MAX_PERIOD && l < n; l++) {
		size_t start, covered = longest_periodic(pcs, n, l, &start);
		if (covered > best) {
			best = covered;
			best_start = start;
			best_l = l;
		}
	}
	free(pcs);
	if (!best_l)
		return false;
	size_t periods = best / best_l;
	size_t inner = (KEEP_INNER + best_l - 1) / best_l, outer = (KEEP_OUTER + best_l - 1) / best_l;
	inner = inner < 2 ? 2 : inner;
	if (periods <= inner + outer)
		return false;
	cut->period = best_l;
	cut->inner = best_start + inner * best_l;
	cut->outer = best_start + (periods - outer) * best_l;
	cut->repeats = periods - inner - outer;
	cut->caller = frames[cut->inner];
	return true;
}

void an_recursion_compact(struct dbg_frame *frames, size_t *n, const struct an_recursion_cut *cut)
{
	memmove(&frames[cut->inner], &frames[cut->outer], (*n - cut->outer) * sizeof(*frames));
	*n -= cut->outer - cut->inner;
}

/* R's caller: NATIVE's pc, CFA and registers, unsymbolized.  False on
 * out-of-memory. */
static bool keep_caller(struct an_recursion *r, const struct dbg_frame *native)
{
	r->caller = (struct an_frame){ .kind = AN_FRAME_NATIVE, .pc = native->pc,
				       .activation = native->activation, .cfa = native->cfa,
				       .regs_known = native->regs_known };
	r->caller.regs = an_regs_pack(native->regs, native->regs_known);
	return r->caller.regs || !native->regs_known;
}

/* The recursion whose cycle is the logical frames [FROM, TO) of LIST, left
 * out REPEATS times right after them, CALLER the first real frame left out;
 * NULL on out-of-memory. */
static struct an_recursion *recursion_of(const struct an_frame_list *list, size_t from, size_t to,
					 size_t repeats, const struct dbg_frame *caller)
{
	struct an_recursion *r = calloc(1, sizeof(*r));
	if (!r || !(r->cycle = calloc(to - from, sizeof(*r->cycle)))) {
		free(r);
		return NULL;
	}
	for (size_t i = from; i < to; i++) {
		const struct an_frame *f = &list->frames[i];
		char *name = f->function ? strdup(f->function) : an_signature_frame_name(f);
		if (!name) {
			an_recursion_destroy(r);
			return NULL;
		}
		r->cycle[r->ncycle++] = name;
	}
	r->first = to;
	r->last = to + (to - from) * repeats - 1;
	r->repeats = repeats;
	if (!keep_caller(r, caller)) {
		an_recursion_destroy(r);
		return NULL;
	}
	return r;
}

bool an_recursion_symbolize(struct an_thread *t, struct dbg_session *s, const struct dbg_frame *native,
			    size_t n, const struct an_recursion_cut *cut)
{
	struct an_frame_list list = {0};
	size_t cycle_from, cycle_to;
	struct an_recursion *r = NULL;
	if (!an_frames_append_native_range(&list, s, native, n, 0, cut->inner - cut->period))
		goto nomem;
	cycle_from = list.n;
	if (!an_frames_append_native_range(&list, s, native, n, cut->inner - cut->period, cut->inner))
		goto nomem;
	cycle_to = list.n;
	if (!an_frames_append_native_range(&list, s, native, n, cut->inner, n))
		goto nomem;
	/* A period of frames that symbolize to nothing leaves nothing out. */
	if (cycle_to > cycle_from &&
	    !(r = recursion_of(&list, cycle_from, cycle_to, cut->repeats, &cut->caller)))
		goto nomem;
	an_frames_move_to(&list, &t->frames, &t->nframes);
	t->recursion = r;
	return true;
nomem:
	an_frames_list_deinit(&list);
	return false;
}

/* Stored frames A and B are one place of a cycle: the same pc and level. */
static bool same_place(const struct an_frame *a, const struct an_frame *b)
{
	return a->kind == b->kind && a->pc == b->pc && a->activation == b->activation &&
	       a->inlined == b->inlined && a->inline_depth == b->inline_depth &&
	       a->tailcall == b->tailcall;
}

size_t an_recursion_stored_cycle(const struct an_frame *frames, size_t n,
				 const struct an_index_gap *gap)
{
	/* The cut kept two periods at least before the run and one after it. */
	for (size_t l = 1; gap->at && 2 * l <= gap->at && gap->at + l <= n; l++) {
		if (gap->left_out % l)
			continue;
		size_t i = gap->at - 2 * l;
		while (i < gap->at && same_place(&frames[i], &frames[i + l]))
			i++;
		if (i == gap->at)
			return l;
	}
	return 0;
}
