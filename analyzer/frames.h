/* Building an_frame lists from native and async program counters. */
#ifndef ANALYZER_FRAMES_H
#define ANALYZER_FRAMES_H

#include "analysis.h"
#include "../dwarf/dwarf.h"

struct an_place_memo;

/* A growable frame list. */
struct an_frame_list {
	struct an_frame *frames;
	size_t n, cap;
	struct an_strpool *pool;    /* set: frames made here are pooled (names
				       kept once in POOL); NULL: they own them */
	struct an_place_memo *places;   /* set (with POOL): each pc's levels are
					   symbolized once, then copied */
};

/* What a pc and activation symbolized to in pooled lists (names, lines,
 * offsets of each level): a pool's threads stand in the same few pcs.
 * NULL when out of memory. */
struct an_place_memo *an_place_memo_create(void);
void an_place_memo_destroy(struct an_place_memo *m);

/* Symbolize PC and append one frame per inline level (inline levels first,
 * each marked inlined; the real function last).  KIND is copied onto every
 * appended frame, and so are NATIVE's CFA and registers when the frame comes
 * from the unwinder (NULL for async frames); SEAM marks the first of them.
 * Returns false on out-of-memory. */
bool an_frames_append_pc(struct an_frame_list *list, struct dbg_session *s, uint64_t pc,
			 bool activation, enum an_frame_kind kind, const struct dbg_frame *native,
			 bool seam);

/* After the frames of a native frame (the last of LIST is its real
 * function's), append the functions that left by a tail call between it and
 * its caller CALLER, from DWARF call sites (dbg_tail_calls): one frame each,
 * marked tailcall, named as gdb names it (the innermost function at the
 * jump).  They carry no registers (the stack holds nothing of them).  False
 * on out-of-memory. */
bool an_frames_append_tail_calls(struct an_frame_list *list, struct dbg_session *s,
				 const struct dbg_frame *caller);

/* Symbolize the N unwound frames NATIVE (innermost first) into LIST: each
 * one's inline levels and real function, and the tail calls between it and
 * its caller.  False on out-of-memory. */
bool an_frames_append_native(struct an_frame_list *list, struct dbg_session *s,
			     const struct dbg_frame *native, size_t n);

/* The same for NATIVE's frames [FROM, TO) of N: each with the tail calls
 * between it and its caller (NATIVE[i + 1], which may lie past TO). */
bool an_frames_append_native_range(struct an_frame_list *list, struct dbg_session *s,
				   const struct dbg_frame *native, size_t n, size_t from, size_t to);

/* The debug info found for FRAME, a stored frame of a module that had none
 * when its core was stored (dwarf/: dbg_cache_find_module()), or NULL when
 * the frame stays as stored. */
typedef struct dbg_file *an_stored_debug_fn(void *ctx, const struct an_frame *frame);

/* Symbolize again the frames of *FRAMES (*N: a stored thread's, task's or
 * suspended chain's, innermost first) for which DEBUG_OF finds debug info,
 * as an analysis symbolizes them (an_frames_append_pc()): each becomes its
 * inline levels and real function, from its module and module offset, with
 * its kind, pc, activation, CFA and seam; the inline levels stored with it
 * are dropped, as they are made again.  Arguments and tail calls, which
 * need the core's registers and stack, stay unknown.  Other frames are
 * kept.  *GAP (NULL: numbered 0 .. *N - 1), where the stored indexes jump
 * over a recursion's run, moves with them: it stays between the same
 * frames, and the run counts its cycle's frames made again times its count
 * (an_recursion_stored_cycle()), so the new indexes are those an analysis
 * with the debug info gives.  Returns how many stored frames were
 * symbolized (when > 0, *FRAMES, *N and *GAP are the new ones and the old
 * list is freed), or -1 when out of memory (all unchanged). */
int an_frames_resymbolize(struct dbg_cache *cache, struct an_frame **frames, size_t *n,
			  struct an_index_gap *gap, an_stored_debug_fn *debug_of, void *ctx);

/* Move the list's frames into THREAD (which takes ownership). */
void an_frames_move_to(struct an_frame_list *list, struct an_frame **frames, size_t *nframes);

/* Free a list's frames (after a failed build). */
void an_frames_list_deinit(struct an_frame_list *list);

#endif
