/* Stack overflows: a native walk that repeats one cycle of return addresses
 * many times is kept as the frames before the run, one cycle with its
 * count, and the frames after it (DESIGN.md `recursion`), so a stack of
 * 200,000 frames costs the analysis a few dozen frames. */
#ifndef ANALYZER_RECURSION_H
#define ANALYZER_RECURSION_H

#include "analysis.h"
#include "../dwarf/dwarf.h"

/* Periods (in native frames) a cycle may have, at most. */
#define AN_RECURSION_MAX_PERIOD 32

/* What a thread keeps of a long walk: native frames [0, inner) and
 * [outer, n); between them REPEATS whole periods of PERIOD frames are left
 * out, and the frames on each side of the cut are whole periods too, so
 * the kept frames read as the same cycle across it.  CALLER is frame
 * inner, the first left out: the caller of the last kept inner frame. */
struct an_recursion_cut {
	size_t inner, outer, period, repeats;
	struct dbg_frame caller;
};

/* Find in the N native frames FRAMES (innermost first) the longest run that
 * repeats one cycle of return addresses (period 1 to
 * AN_RECURSION_MAX_PERIOD), and the cut that leaves out all of it but whole
 * periods on each side: 8 frames and two periods at least on the inner
 * side, 4 frames and one period on the outer side.  False when there is
 * none, or the run is too short to leave anything out. */
bool an_recursion_find(const struct dbg_frame *frames, size_t n, struct an_recursion_cut *cut);

/* Keep of *FRAMES (*N of them) only those CUT keeps, in place. */
void an_recursion_compact(struct dbg_frame *frames, size_t *n, const struct an_recursion_cut *cut);

/* Symbolize the N native frames NATIVE, compacted by CUT, into T's frames
 * (as an_frames_append_native does) and set T's recursion: the run left
 * out, counted in logical frames (inline levels and tail calls included),
 * and CUT's caller.  Only kept frames are symbolized.  False on
 * out-of-memory. */
bool an_recursion_symbolize(struct an_thread *t, struct dbg_session *s, const struct dbg_frame *native,
			    size_t n, const struct an_recursion_cut *cut);

/* The cycle of a recursion's run left out of stored frames (GAP, the
 * stack's indexes): how many of FRAMES (N) just before the run make one
 * cycle, found as the shortest count that the frames repeat (at the same
 * pcs and inline levels) twice before the run and once across it, and
 * that divides the frames left out; 0 when there is none. */
size_t an_recursion_stored_cycle(const struct an_frame *frames, size_t n,
				 const struct an_index_gap *gap);

#endif
