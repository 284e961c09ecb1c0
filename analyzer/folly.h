/* folly async stacks: the per-thread AsyncStackRoot found through the pthread
 * TLS key folly exports, the splice of native and async frames, and the
 * coroutine chains suspended on no thread.  DESIGN.md, "The folly async
 * stack ABI", describes the structures and the walk. */
#ifndef ANALYZER_FOLLY_H
#define ANALYZER_FOLLY_H

#include <stddef.h>

#include "analysis.h"
#include "../dwarf/dwarf.h"

/* Splice async stacks into every thread of AN.  STACKS[i]/NSTACKS[i] are the
 * native frames of an->threads[i] as returned by dbg_unwind_thread
 * (innermost first, each with pc and cfa); both arrays are borrowed.  For
 * each thread that has an AsyncStackRoot, fills an->threads[i].frames and
 * nframes (owned by AN) with the spliced stack, native and async frames
 * marked by kind and `seam` set on the first frame after each switch, and
 * sets an->threads[i].async_root.  Threads without a root are left untouched
 * (frames NULL) for the caller to fill with the plain native stack.  Also
 * fills an->async_key_found / async_key and an->suspended / nsuspended.
 * Whatever cannot be trusted (unreadable or misaligned pointers, cycles,
 * frame pointers that match no frame) ends that part of the walk with a
 * warning on AN; the rest of the analysis stands. */
void an_folly_splice_all(struct dbg_session *s, struct analysis *an,
			 struct dbg_frame *const *stacks, const size_t *nstacks);

#endif
