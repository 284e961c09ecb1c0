/* A program's own crash handler (DESIGN.md "Signal frames and crash
 * handlers"): the signal trampolines on each thread's stack, the fault a
 * handler caught, read from the kernel's signal frame or, when the handler
 * re-raised the signal on return, from the faulting instruction. */
#ifndef ANALYZER_HANDLER_H
#define ANALYZER_HANDLER_H

#include "analysis.h"
#include "../dwarf/dwarf.h"

/* Mark every signal trampoline among AN's native frames, and find the fault
 * a crash handler caught: on the crashing thread of a core, on any thread of
 * a live process or its snapshot (a process stopped inside its handler).
 * Sets AN->caught and the roles of that thread's frames (handler frames,
 * trampoline, crash site).  A signal frame that cannot be trusted is a
 * warning and no caught fault.  A core whose own signal the process
 * raised itself after a SIGQUIT another process sent (a runtime's dump, Go's
 * GOTRACEBACK=crash) sets AN->dump_request instead.  S may be NULL.  Call after the stacks are
 * unwound and before the cause is decided.  False only when memory ran
 * out. */
bool an_handler_find(struct core *core, struct dbg_session *s, struct analysis *an);

#endif
