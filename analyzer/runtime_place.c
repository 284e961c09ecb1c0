/* Described runtimes, placement (DESIGN.md): by anchor, native frame k
 * (stack pointer sp_k) owns the anchors in [sp_k, sp_k+1); its entries
 * follow it in the innermost-first stack, as the Gecko profiler's merge
 * puts a label after the native frame that pushed it.  By owner, entries go
 * to the innermost activation of the attach function not yet used, a
 * boundary entry ending its run.  Entries no native frame owns go after
 * the last frame. */
#include "runtime_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/array.h"

#define RED_ZONE 128u

/* A native frame that may own entries: its index in the thread's frames. */
struct owner {
	size_t frame;
	uint64_t sp, end;            /* it owns anchors in [sp, end) */
};

/* An entry given a place: after frame FRAME (SIZE_MAX: after the last). */
struct placed {
	size_t entry;
	size_t frame;
};

static uint64_t frame_sp(const struct an_frame *f, const struct an_thread *t, bool first,
			 uint64_t prev_cfa, unsigned dwarf_sp)
{
	uint64_t sp;
	if (an_frame_reg(f, dwarf_sp, &sp))
		return sp;
	if (first)
		return t->sp;
	return prev_cfa;
}

/* The thread's native frames with their stack ranges, innermost first.  The
 * last one's range ends at its CFA when known: beyond it, unwinding did not
 * say who owns the stack. */
static size_t native_owners(const struct an_thread *t, unsigned dwarf_sp, struct owner **out)
{
	struct owner *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t prev_cfa = 0;
	for (size_t i = 0; i < t->nframes; i++) {
		const struct an_frame *f = &t->frames[i];
		if (f->kind != AN_FRAME_NATIVE || f->inlined || f->tailcall)
			continue;   /* only frames on the stack own a part of it */
		uint64_t sp = frame_sp(f, t, n == 0, prev_cfa, dwarf_sp);
		prev_cfa = f->cfa;
		if (sp == 0 || (n > 0 && sp < v[n - 1].sp))
			continue;
		struct owner *o = base_array_push(&v, &n, &cap, sizeof(*v));
		if (!o)
			break;
		*o = (struct owner){ .frame = i, .sp = sp, .end = f->cfa > sp ? f->cfa : sp };
		if (n > 1)
			v[n - 2].end = sp;
	}
	*out = v;
	return n;
}

/* The owner of ANCHOR: its index, N for none (beyond the last range). */
static size_t owner_of(const struct owner *o, size_t n, uint64_t anchor)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {           /* the last owner whose sp <= anchor */
		size_t mid = lo + (hi - lo) / 2;
		if (o[mid].sp <= anchor)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;           /* below the innermost sp: warned by the caller */
	return anchor < o[lo - 1].end ? lo - 1 : n;
}

/* Each entry's anchor, or the anchor of the nearest anchored entry outside
 * it (outer = later in the innermost-first list); 0: none. */
static void effective_anchors(const struct an_rt_walk *w, uint64_t *eff)
{
	uint64_t cur = 0;
	for (size_t i = w->n; i-- > 0;) {
		if (w->v[i].has_anchor)
			cur = w->v[i].anchor;
		eff[i] = cur;
	}
}

static bool shown(const struct an_rt_entry *e)
{
	return e->kind && e->kind->show != AN_RT_SHOW_HIDDEN;
}

/* Placement by anchor onto thread T. */
static size_t place_by_anchor(struct an_rt_walk *w, const struct an_thread *t, const uint64_t *eff,
			      struct placed *out)
{
	struct owner *o;
	size_t no = native_owners(t, w->rs->core->arch->dwarf_sp, &o), n = 0, prev = 0, below = 0,
	       disorder = 0;
	for (size_t i = 0; i < w->n; i++) {
		if (!shown(&w->v[i]))
			continue;
		size_t k = eff[i] ? owner_of(o, no, eff[i]) : no;
		if (k < no && eff[i] < o[k].sp)
			below++;
		if (k < prev) {
			disorder++;
			k = prev;
		}
		prev = k;
		out[n++] = (struct placed){ .entry = i, .frame = k < no ? o[k].frame : SIZE_MAX };
	}
	if (below)
		core_warn(w->rs->core, "%s: %zu %s anchored below the thread's stack pointer 0x%" PRIx64,
			  w->context, below, below == 1 ? "entry is" : "entries are", no ? o[0].sp : 0);
	if (disorder)
		core_warn(w->rs->core, "%s: %zu %s anchored out of order; each is shown after the entry "
			  "inside it", w->context, disorder, disorder == 1 ? "entry is" : "entries are");
	free(o);
	return n;
}

/* Whether frame F is an activation of FUNCTION: its name, or its name
 * followed by a parameter list. */
static bool runs(const struct an_frame *f, const char *function)
{
	size_t len = strlen(function);
	return f->kind == AN_FRAME_NATIVE && f->function && strncmp(f->function, function, len) == 0 &&
	       (f->function[len] == '\0' || f->function[len] == '(');
}

/* The first activation of the attach function at or after frame FROM;
 * nframes when there is none. */
static size_t next_activation(const struct an_thread *t, const char *function, size_t from)
{
	while (from < t->nframes && !runs(&t->frames[from], function))
		from++;
	return from;
}

/* The record of the activations stacks of the walk's description took on
 * thread T, or NULL (memory ran out). */
static struct taken *taken_on(struct an_rt_walk *w, const struct an_thread *t)
{
	struct an_runtime_session *rs = w->rs;
	size_t desc = (size_t)(w->r - rs->v);
	for (size_t i = 0; i < rs->ntaken; i++)
		if (rs->taken[i].desc == desc && rs->taken[i].tid == t->tid)
			return &rs->taken[i];
	struct taken *k = base_array_push(&rs->taken, &rs->ntaken, &rs->captaken, sizeof(*k));
	if (k)
		*k = (struct taken){ .desc = desc, .tid = t->tid };
	return k;
}

/* Placement by owner onto thread T: runs of entries, innermost first, to
 * the activations of the attach function, innermost first, past the
 * activations earlier stacks of the description took there (*TAKEN, which
 * grows by this stack's runs); a boundary entry is the last of its run. */
static size_t place_by_owner(struct an_rt_walk *w, const struct an_thread *t, size_t *taken,
			     struct placed *out)
{
	const char *function = w->r->d->attach.function;
	size_t frame = next_activation(t, function, 0), n = 0;
	for (size_t k = 0; k < *taken && frame < t->nframes; k++)
		frame = next_activation(t, function, frame + 1);
	for (size_t i = 0; i < w->n; i++) {
		if (shown(&w->v[i]))
			out[n++] = (struct placed){ .entry = i,
						    .frame = frame < t->nframes ? frame : SIZE_MAX };
		if (w->v[i].boundary && frame < t->nframes) {
			frame = next_activation(t, function, frame + 1);
			++*taken;
		}
	}
	return n;
}

/* ---- splicing into a thread ------------------------------------------------ */

static void make_frame(struct an_rt_walk *w, struct an_rt_entry *e, struct an_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->kind = e->kind->show == AN_RT_SHOW_SCRIPT ? AN_FRAME_SCRIPT : AN_FRAME_LABEL;
	f->function = e->name;
	f->detail = e->detail;
	e->name = e->detail = NULL;
	f->runtime = strdup(w->r->d->runtime);
	if (!f->runtime)
		w->nomem = true;
}

/* Insert the placed entries (sorted by frame, those after the last frame
 * last) into T's frames. */
static void splice_into(struct an_rt_walk *w, struct an_thread *t, const struct placed *p, size_t np)
{
	if (np == 0)
		return;
	struct an_frame *v = calloc(t->nframes + np, sizeof(*v));
	if (!v) {
		w->nomem = true;
		return;
	}
	size_t o = 0, j = 0;
	for (size_t i = 0; i < t->nframes; i++) {
		v[o++] = t->frames[i];
		for (; j < np && p[j].frame == i; j++)
			make_frame(w, &w->v[p[j].entry], &v[o++]);
	}
	for (; j < np; j++)
		make_frame(w, &w->v[p[j].entry], &v[o++]);
	free(t->frames);
	t->frames = v;
	t->nframes = o;
}

/* The thread whose stack holds ANCHOR: the one whose stack pointer is in
 * the same mapping, below the anchor (or its red zone). */
static struct an_thread *thread_holding(struct core *core, struct analysis *an, uint64_t anchor)
{
	const struct core_segment *seg = core_find_segment(core, anchor);
	for (size_t i = 0; seg && i < an->nthreads; i++) {
		uint64_t sp = an->threads[i].sp;
		if (core_find_segment(core, sp) == seg && anchor + RED_ZONE >= sp)
			return &an->threads[i];
	}
	return NULL;
}

/* The thread a global root's stack belongs to: the one whose stack holds
 * its anchors, or that runs the attach function.  NULL when none does. */
static struct an_thread *owning_thread(struct an_rt_walk *w, struct analysis *an, const uint64_t *eff,
				       uint64_t *anchor)
{
	const char *function = w->r->d->attach.function;
	*anchor = 0;
	for (size_t i = 0; i < w->n && !*anchor; i++)
		*anchor = shown(&w->v[i]) ? eff[i] : 0;
	for (size_t i = 0; function && i < an->nthreads; i++)
		if (next_activation(&an->threads[i], function, 0) < an->threads[i].nframes)
			return &an->threads[i];
	return !function && *anchor ? thread_holding(w->rs->core, an, *anchor) : NULL;
}

/* No thread owns the stack: its entries go after the crashing thread's
 * frames, said so. */
static struct an_thread *fallback_thread(struct an_rt_walk *w, struct analysis *an, uint64_t anchor)
{
	const char *function = w->r->d->attach.function;
	size_t i = an_crashing_thread(an);
	if (i == an->nthreads)
		return NULL;
	struct an_thread *t = &an->threads[i];
	if (function)
		core_warn(w->rs->core, "%s: no thread runs %s; its entries are shown after thread %"
			  PRId32 "'s frames", w->context, function, t->tid);
	else if (anchor)
		core_warn(w->rs->core, "%s: no thread's stack holds anchor 0x%" PRIx64 "; its entries "
			  "are shown after thread %" PRId32 "'s frames", w->context, anchor, t->tid);
	else
		core_warn(w->rs->core, "%s: no entry carries a stack address; the entries are shown "
			  "after thread %" PRId32 "'s frames", w->context, t->tid);
	return t;
}

static size_t place_after_all(const struct an_rt_walk *w, struct placed *out)
{
	size_t n = 0;
	for (size_t i = 0; i < w->n; i++)
		if (shown(&w->v[i]))
			out[n++] = (struct placed){ .entry = i, .frame = SIZE_MAX };
	return n;
}

static size_t count_tail(const struct placed *p, size_t n)
{
	size_t tail = 0;
	for (size_t i = 0; i < n; i++)
		tail += p[i].frame == SIZE_MAX;
	return tail;
}

static bool any_shown(const struct an_rt_walk *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (shown(&w->v[i]))
			return true;
	return false;
}

/* Whether the walk's stack is its own to show on T: no description before
 * it showed the same entries there; recorded as shown when it is. */
static bool claim(struct an_rt_walk *w, const struct an_thread *t)
{
	struct an_rt_claims *c = &w->rs->claims;
	size_t desc = (size_t)(w->r - w->rs->v);
	uint64_t *addrs = malloc((w->n ? w->n : 1) * sizeof(*addrs));
	if (!addrs) {
		w->nomem = true;
		return false;
	}
	for (size_t i = 0; i < w->n; i++)
		addrs[i] = w->v[i].addr;
	bool mine = !an_rt_claims_entries(c, desc, t->tid, addrs, w->n);
	if (mine && !an_rt_claims_add(c, desc, w->obj, t->tid, addrs, w->n))
		w->nomem = true;
	w->shown_before = !mine;
	free(addrs);
	return mine && !w->nomem;
}

/* Place the walk's entries on thread T (NULL: a global root's, chosen). */
static void place(struct an_rt_walk *w, struct analysis *an, struct an_thread *t)
{
	uint64_t *eff = calloc(w->n, sizeof(*eff));
	struct placed *p = calloc(w->n, sizeof(*p));
	uint64_t anchor = 0;
	bool orphan = false;
	if (!eff || !p) {
		w->nomem = true;
		goto out;
	}
	effective_anchors(w, eff);
	if (!t && !(t = owning_thread(w, an, eff, &anchor))) {
		orphan = true;
		if (!(t = fallback_thread(w, an, anchor)))
			goto out;
	}
	snprintf(w->context, sizeof(w->context), "runtime %s: thread %" PRId32, w->r->d->label, t->tid);
	if (!claim(w, t))
		goto out;               /* another description shows it here */
	const char *function = w->r->d->attach.function;
	struct taken *taken = function && !orphan ? taken_on(w, t) : NULL;
	if (function && !orphan && !taken) {
		w->nomem = true;
		goto out;
	}
	size_t np = orphan     ? place_after_all(w, p)
		    : function ? place_by_owner(w, t, &taken->n, p)
			       : place_by_anchor(w, t, eff, p);
	size_t tail = orphan ? 0 : count_tail(p, np);
	if (tail && function)
		core_warn(w->rs->core, "%s: %zu %s no activation of %s left; shown after the last frame",
			  w->context, tail, tail == 1 ? "entry has" : "entries have", function);
	else if (tail)
		core_warn(w->rs->core, "%s: %zu %s to no native frame (the native stack ends before "
			  "the anchors); shown after the last frame", w->context, tail,
			  tail == 1 ? "entry belongs" : "entries belong");
	splice_into(w, t, p, np);
out:
	free(eff);
	free(p);
}

void an_rt_splice_stack(struct an_runtime_session *rs, const struct an_rt_resolved *r,
			struct analysis *an, struct an_thread *t, uint64_t obj)
{
	struct an_rt_walk w = { .rs = rs, .r = r, .obj = obj };
	if (an_rt_claims_object(&rs->claims, (size_t)(r - rs->v), obj))
		return;                 /* shown by a description before this one */
	if (t)
		snprintf(w.context, sizeof(w.context), "runtime %s: thread %" PRId32, r->d->label, t->tid);
	else
		snprintf(w.context, sizeof(w.context), "runtime %s: stack 0x%" PRIx64, r->d->label, obj);
	an_rt_read_stack(&w, obj);
	if (any_shown(&w) && !w.nomem)
		place(&w, an, t);
	an_rt_walk_summary(&w);
	an_rt_walk_deinit(&w);
}

void an_rt_splice_tidless(struct an_runtime_session *rs, const struct an_rt_resolved *r,
			  uint64_t obj, uint64_t tid)
{
	struct an_rt_walk w = { .rs = rs, .r = r };
	snprintf(w.context, sizeof(w.context), "runtime %s: stack 0x%" PRIx64, r->d->label, obj);
	an_rt_read_stack(&w, obj);
	size_t n = 0;
	for (size_t i = 0; i < w.n; i++)
		n += shown(&w.v[i]);
	if (n && r->d->root.thread_is == AN_RT_THREAD_PTHREAD)
		core_warn(rs->core, "%s: pthread 0x%" PRIx64 " (its %s) is no thread of the core; its "
			  "%zu %s not shown", w.context, tid, r->d->root.thread.path, n,
			  n == 1 ? "entry is" : "entries are");
	else if (n)
		core_warn(rs->core, "%s: thread %" PRIu64 " (its %s) is no thread of the core; its %zu "
			  "%s not shown", w.context, tid, r->d->root.thread.path, n,
			  n == 1 ? "entry is" : "entries are");
	an_rt_walk_summary(&w);
	an_rt_walk_deinit(&w);
}

bool an_runtime_entry_frame(struct an_runtime_session *rs, const char *runtime, uint64_t addr,
			    const char *context, struct an_frame *f)
{
	const struct an_rt_resolved *r = NULL;
	for (size_t i = 0; rs && i < rs->n && !r; i++)
		if (rs->v[i].d->runtime && strcmp(rs->v[i].d->runtime, runtime) == 0)
			r = &rs->v[i];
	if (!r)
		return false;
	struct an_rt_walk w = { .rs = rs, .r = r };
	snprintf(w.context, sizeof(w.context), "runtime %s: %s", r->d->label, context);
	an_rt_read_entry(&w, addr);
	bool ok = w.n == 1 && shown(&w.v[0]) && !w.nomem;
	if (ok) {
		make_frame(&w, &w.v[0], f);
		if (w.nomem) {
			an_frame_deinit(f);
			ok = false;
		}
	}
	an_rt_walk_summary(&w);
	an_rt_walk_deinit(&w);
	return ok;
}
