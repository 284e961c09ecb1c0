/* Described runtimes in one analysis (DESIGN.md, "Runtime descriptions"):
 * each description of the loaded set is resolved against the program (its
 * root symbol, its members through DWARF or its layout), then each stack it
 * finds in the core is read and its entries are spliced into the threads'
 * frames as script and label frames. */
#ifndef ANALYZER_RUNTIME_H
#define ANALYZER_RUNTIME_H

#include "analysis.h"
#include "rtdesc.h"
#include "../dwarf/dwarf.h"

struct an_runtime_session;

/* Resolve the descriptions of SET (borrowed, may be NULL) against session
 * S's program.  A description whose root is in no module of the core is
 * left out, silently: one description serves many programs.  One whose root
 * is there but one of whose members is neither in the program's DWARF nor
 * in its layout is refused: a CORE_ERROR_USAGE error naming the file, the
 * JSON path and the member.  *OUT (destroy it with
 * an_runtime_session_destroy) holds the rest. */
struct core_error *an_runtime_session_open(const struct an_runtimes *set, struct dbg_session *s,
					   struct an_runtime_session **out);

void an_runtime_session_destroy(struct an_runtime_session *rs);

/* Read the stacks of every resolved description and splice their entries
 * into AN's threads (whose frames are built, innermost first): a stack found
 * through a thread-local or a pthread-key root goes to its own thread, one
 * through a global to the thread whose stack holds its anchors (or runs the
 * function it attaches to).  What cannot be read or placed is a warning. */
void an_runtimes_splice(struct an_runtime_session *rs, struct analysis *an);

/* The frame (*F, to free with an_frame_deinit) the description of runtime
 * RUNTIME ("cpython") resolved in RS makes of the one entry at ADDR (a
 * suspended coroutine's frame, found outside any stack); CONTEXT names it
 * in warnings ("asyncio task 0x..."), problems reading it are warnings.
 * False when no such description is resolved, the entry is hidden or
 * matches no kind, or memory ran out. */
bool an_runtime_entry_frame(struct an_runtime_session *rs, const char *runtime, uint64_t addr,
			    const char *context, struct an_frame *f);

/* For a program whose DWARF lacks TYPE: where the description of runtime
 * RUNTIME resolved in RS puts its member PATH (*VALUE the offset), or, PATH
 * NULL, TYPE's size: the process's own offsets block first (*OWN set), then
 * the description's layout.  *FILE gets the description's file.  False
 * when neither says it, or no such description is resolved. */
bool an_runtime_layout(const struct an_runtime_session *rs, const char *runtime, const char *type,
		       const char *path, uint64_t *value, const char **file, bool *own);

#endif
