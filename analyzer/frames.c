#include "frames.h"
#include "display.h"
#include "recursion.h"
#include "strpool.h"

#include <stdlib.h>
#include <string.h>

#include "../base/array.h"

static struct an_frame *list_push(struct an_frame_list *list)
{
	return base_array_push(&list->frames, &list->n, &list->cap, sizeof(*list->frames));
}

/* Give F the names *FUNCTION, *MODULE and *FILE (malloc'd): moved into F
 * (and NULLed), or with LIST's pool the pool's copies (the caller still
 * frees its own).  False when out of memory (F then holds none of them). */
static bool take_names(struct an_frame_list *list, struct an_frame *f, char **function,
		       char **module, char **file)
{
	if (list->pool) {
		int nomem = 0;
		f->function = an_strpool_intern(list->pool, *function, &nomem);
		f->module = an_strpool_intern(list->pool, *module, &nomem);
		f->file = an_strpool_intern(list->pool, *file, &nomem);
		f->pooled = true;
		if (nomem)
			f->function = f->module = f->file = NULL;
		return !nomem;
	}
	f->function = *function;
	f->module = *module;
	f->file = *file;
	*function = *module = *file = NULL;  /* moved into the frame */
	return true;
}

/* Append one frame per location of LOCS (innermost inline level first),
 * their strings taken into the frames; each takes PLACE's kind, pc,
 * activation, CFA and registers, the first its seam.  Room for NLOCS
 * frames must be reserved.  False when out of memory. */
static bool append_levels(struct an_frame_list *list, const struct an_frame *place,
			  struct dbg_location *locs, size_t nlocs)
{
	for (size_t i = 0; i < nlocs; i++) {
		struct an_frame *f = &list->frames[list->n++];
		struct dbg_location *l = &locs[i];
		memset(f, 0, sizeof(*f));
		if (!take_names(list, f, &l->function, &l->module, &l->file)) {
			list->n--;
			return false;
		}
		f->kind = place->kind;
		f->pc = place->pc;
		f->activation = place->activation;
		f->display = an_display_name(f->function);
		f->offset = l->offset;
		f->has_offset = l->has_offset;
		f->module_offset = l->module_offset;
		f->has_module_offset = l->has_module_offset;
		f->line = l->line;
		f->inlined = l->inlined;
		f->inline_depth = l->inline_depth;
		f->cfa = place->cfa;
		f->regs = an_regs_share(place->regs);
		f->regs_known = place->regs_known;
		f->seam = place->seam && i == 0;
		f->role = place->role;   /* a stored frame made again keeps it */
	}
	return true;
}

/* ---- the place memo ---------------------------------------------------- */

struct place_entry {
	uint64_t hash;              /* pc * 2 + activation + 1; 0: a free slot */
	uint64_t pc;
	bool activation;
	struct an_frame *levels;    /* as append_levels made them, without the
				       place's CFA, registers and seam; each
				       display its own copy */
	size_t nlevels;
};

struct an_place_memo {
	struct place_entry *slots;  /* corefile's open-addressing table */
	size_t cap, n;
};

struct an_place_memo *an_place_memo_create(void)
{
	return calloc(1, sizeof(struct an_place_memo));
}

/* Free N remembered LEVELS: their own displays, then the array. */
static void levels_free(struct an_frame *levels, size_t n)
{
	for (size_t k = 0; k < n; k++)
		free(levels[k].display);
	free(levels);
}

void an_place_memo_destroy(struct an_place_memo *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap; i++)
		levels_free(m->slots[i].levels, m->slots[i].nlevels);
	free(m->slots);
	free(m);
}

static uint64_t place_key(uint64_t pc, bool activation)
{
	return pc * 2 + activation + 1;
}

static const struct place_entry *place_find(const struct an_place_memo *m, uint64_t pc, bool activation)
{
	uint64_t h = place_key(pc, activation);
	if (!m->cap || h == 0)
		return NULL;
	for (size_t i = base_hash_slot(h, m->cap); m->slots[i].hash; i = (i + 1) & (m->cap - 1))
		if (m->slots[i].hash == h && m->slots[i].pc == pc && m->slots[i].activation == activation)
			return &m->slots[i];
	return NULL;
}

/* Remember the N frames at LEVELS that PC and ACTIVATION made; nothing is
 * remembered when out of memory (the next frame symbolizes again). */
static void place_remember(struct an_place_memo *m, uint64_t pc, bool activation,
			   const struct an_frame *levels, size_t n)
{
	uint64_t h = place_key(pc, activation);
	struct an_frame *copy = n && h ? malloc(n * sizeof(*copy)) : NULL;
	if (!copy || !base_table_reserve(&m->slots, &m->cap, m->n, sizeof(*m->slots))) {
		free(copy);
		return;
	}
	for (size_t k = 0; k < n; k++) {
		copy[k] = levels[k];
		copy[k].cfa = 0;
		copy[k].regs = NULL;
		copy[k].regs_known = 0;
		copy[k].seam = false;
		if (levels[k].display && !(copy[k].display = strdup(levels[k].display))) {
			levels_free(copy, k);
			return;
		}
	}
	size_t i = base_hash_slot(h, m->cap);
	while (m->slots[i].hash)
		i = (i + 1) & (m->cap - 1);
	m->slots[i] = (struct place_entry){ .hash = h, .pc = pc, .activation = activation, .levels = copy,
					    .nlevels = n };
	m->n++;
}

/* Append E's levels as append_levels would have made them for PLACE (room
 * reserved).  False when out of memory. */
static bool append_remembered(struct an_frame_list *list, const struct an_frame *place,
			      const struct place_entry *e)
{
	for (size_t i = 0; i < e->nlevels; i++) {
		struct an_frame *f = &list->frames[list->n];
		*f = e->levels[i];
		if (f->display && !(f->display = strdup(f->display)))
			return false;
		list->n++;
		f->kind = place->kind;
		f->cfa = place->cfa;
		f->regs = an_regs_share(place->regs);
		f->regs_known = place->regs_known;
		f->seam = place->seam && i == 0;
		f->role = place->role;
	}
	return true;
}

bool an_frames_append_pc(struct an_frame_list *list, struct dbg_session *s, uint64_t pc,
			 bool activation, enum an_frame_kind kind, const struct dbg_frame *native,
			 bool seam)
{
	struct an_frame place = {.kind = kind, .pc = pc, .activation = activation, .seam = seam};
	struct dbg_location *locs;
	size_t nlocs;
	if (native) {
		place.cfa = native->cfa;
		place.regs_known = native->regs_known;
		if (!(place.regs = an_regs_pack(native->regs, native->regs_known)) && place.regs_known)
			return false;
	}
	struct an_place_memo *memo = list->pool ? list->places : NULL;
	const struct place_entry *e = memo ? place_find(memo, pc, activation) : NULL;
	bool ok;
	if (e) {
		ok = base_array_reserve(&list->frames, &list->cap, list->n + e->nlevels, sizeof(*list->frames)) &&
		     append_remembered(list, &place, e);
	} else if ((ok = !dbg_symbolize(s, pc, activation, &locs, &nlocs))) {
		size_t first = list->n;
		ok = base_array_reserve(&list->frames, &list->cap, list->n + nlocs,
					sizeof(*list->frames)) &&
		     append_levels(list, &place, locs, nlocs);
		dbg_locations_free(locs, nlocs);
		if (ok && memo)
			place_remember(memo, pc, activation, list->frames + first, nlocs);
	}
	an_regs_release(place.regs);
	return ok;
}

/* One frame for the tail call returning to PC, as gdb shows it: named
 * after the innermost function at the jump (an inlined one, when the jump
 * is in inlined code), with the jump's line; no inline levels of its own.
 * gdb's block for such a frame (get_frame_block) is the innermost one at
 * pc-1, there being no inline frames to step out of: its inline_depth is
 * that function's level, whose parameters it shows. */
static bool append_tail_call(struct an_frame_list *list, struct dbg_session *s, uint64_t pc)
{
	struct dbg_location *locs;
	size_t nlocs;
	if (dbg_symbolize(s, pc, false, &locs, &nlocs))
		return false;
	struct an_frame *f = list_push(list);
	if (!f) {
		dbg_locations_free(locs, nlocs);
		return false;
	}
	struct dbg_location *inner = &locs[0], *real = &locs[nlocs - 1];
	if (!take_names(list, f, &inner->function, &real->module, &inner->file)) {
		list->n--;
		dbg_locations_free(locs, nlocs);
		return false;
	}
	f->kind = AN_FRAME_NATIVE;
	f->pc = pc;
	f->tailcall = true;
	f->line = inner->line;
	f->inline_depth = inner->inline_depth;
	/* An offset is from the real function's entry: meaningless under an
	 * inlined function's name. */
	f->offset = real->offset;
	f->has_offset = nlocs == 1 && real->has_offset;
	f->module_offset = real->module_offset;
	f->has_module_offset = real->has_module_offset;
	dbg_locations_free(locs, nlocs);
	return true;
}

bool an_frames_append_tail_calls(struct an_frame_list *list, struct dbg_session *s,
				 const struct dbg_frame *caller)
{
	const struct an_frame *callee = list->n ? &list->frames[list->n - 1] : NULL;
	/* A caller interrupted by a signal did not call: no call site. */
	if (!callee || callee->inlined || !callee->has_offset || caller->activation)
		return true;
	uint64_t pcs[DBG_MAX_TAIL_CALLS];
	size_t n;
	struct core_error *err = dbg_tail_calls(s, caller->pc, callee->pc, callee->activation, pcs, &n);
	if (err)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!append_tail_call(list, s, pcs[i]))
			return false;
	return true;
}

bool an_frames_append_native_range(struct an_frame_list *list, struct dbg_session *s,
				   const struct dbg_frame *native, size_t n, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (!an_frames_append_pc(list, s, native[i].pc, native[i].activation, AN_FRAME_NATIVE,
					 &native[i], false) ||
		    (i + 1 < n && !an_frames_append_tail_calls(list, s, &native[i + 1])))
			return false;
	return true;
}

bool an_frames_append_native(struct an_frame_list *list, struct dbg_session *s,
			     const struct dbg_frame *native, size_t n)
{
	return an_frames_append_native_range(list, s, native, n, 0, n);
}

/* A stored frame's new levels (NULL: kept as it is) and whether it goes. */
struct redo {
	struct dbg_location *locs;
	size_t nlocs;
	bool drop;
};

/* How many frames a stored frame becomes, as an_frames_resymbolize copies. */
static size_t made_of(const struct redo *r)
{
	return r->drop ? 0 : r->locs ? r->nlocs : 1;
}

/* Symbolize the frames of FRAMES that DEBUG_OF finds debug info for into
 * REDO; *TOTAL: how many frames there will be.  The number symbolized, or
 * -1 when out of memory. */
static int symbolize_stored(struct dbg_cache *cache, const struct an_frame *frames, size_t n,
			    an_stored_debug_fn *debug_of, void *ctx, struct redo *redo, size_t *total)
{
	int count = 0;
	*total = 0;
	for (size_t i = 0; i < n; i++) {
		const struct an_frame *old = &frames[i];
		struct dbg_file *f = !AN_FRAME_IS_RUNTIME(old) && old->module && old->has_module_offset ?
				     debug_of(ctx, old) : NULL;
		if (f && old->inlined) {
			redo[i].drop = true;   /* made again with its real frame */
			continue;
		}
		if (f && dbg_file_symbolize_offset(cache, f, old->module, old->module_offset,
						   old->activation, &redo[i].locs, &redo[i].nlocs))
			return -1;
		*total += made_of(&redo[i]);
		count += f != NULL;
	}
	return count;
}

/* GAP, of the stored FRAMES (N) that REDO makes again, moved to the new
 * frames: past those made from the frames before it, and as long as the
 * run's cycle made again times its count (the stored length when the cycle
 * is not found), as an analysis with the debug info counts it. */
static void move_gap(const struct an_frame *frames, size_t n, const struct redo *redo,
		     struct an_index_gap *gap)
{
	size_t cycle = an_recursion_stored_cycle(frames, n, gap);
	size_t at = 0, made = 0;
	for (size_t i = 0; i < gap->at; i++) {
		at += made_of(&redo[i]);
		if (i >= gap->at - cycle)
			made += made_of(&redo[i]);
	}
	if (cycle && made)
		gap->left_out = gap->left_out / cycle * made;
	gap->at = at;
}

int an_frames_resymbolize(struct dbg_cache *cache, struct an_frame **frames, size_t *n,
			  struct an_index_gap *gap, an_stored_debug_fn *debug_of, void *ctx)
{
	struct redo *redo = calloc(*n ? *n : 1, sizeof(*redo));
	struct an_frame_list list = {0};
	size_t total = 0;
	int count = redo ? symbolize_stored(cache, *frames, *n, debug_of, ctx, redo, &total) : -1;
	if (count > 0 && !base_array_reserve(&list.frames, &list.cap, total, sizeof(*list.frames)))
		count = -1;
	if (count > 0 && gap && gap->at)
		move_gap(*frames, *n, redo, gap);
	for (size_t i = 0; count > 0 && i < *n; i++) {
		struct an_frame *old = &(*frames)[i];
		if (redo[i].locs) {
			append_levels(&list, old, redo[i].locs, redo[i].nlocs);
			an_frame_deinit(old);
		} else if (redo[i].drop) {
			an_frame_deinit(old);
		} else {
			list.frames[list.n++] = *old;   /* moved */
		}
	}
	for (size_t i = 0; redo && i < *n; i++)
		dbg_locations_free(redo[i].locs, redo[i].nlocs);
	free(redo);
	if (count <= 0) {
		free(list.frames);
		return count;
	}
	free(*frames);
	an_frames_move_to(&list, frames, n);
	return count;
}

void an_frames_move_to(struct an_frame_list *list, struct an_frame **frames, size_t *nframes)
{
	/* A report keeps every thread's frames: no room left over from doubling. */
	base_array_shrink(&list->frames, &list->cap, list->n, sizeof(*list->frames));
	*frames = list->frames;
	*nframes = list->n;
	list->frames = NULL;
	list->n = list->cap = 0;
}

void an_frames_list_deinit(struct an_frame_list *list)
{
	for (size_t i = 0; i < list->n; i++)
		an_frame_deinit(&list->frames[i]);
	free(list->frames);
	list->frames = NULL;
	list->n = list->cap = 0;
}
