/* Node.js programs: the JavaScript frames of V8's stacks, read through
 * the postmortem metadata node exports (v8dbg_* symbols), and the crash
 * V8 or node reported (DESIGN.md "Node.js (V8)"). */
#ifndef ANALYZER_V8_H
#define ANALYZER_V8_H

#include "analysis.h"
#include "../dwarf/dwarf.h"

/* When a module of the core carries V8's postmortem metadata: walk every
 * thread's V8 frames by frame pointer from where its native frames enter
 * V8's code, splice each JavaScript frame (kind script, runtime "node")
 * after the native frame it runs in, and read an uncaught exception or a
 * heap exhaustion into AN->js.  A V8 without metadata (a symbol such as
 * Builtins_JSEntry but no v8dbg_ symbol) is a warning.  Call it after every
 * thread's frames are filled.  False only when out of memory. */
bool an_v8_analyze(struct dbg_session *s, struct analysis *an);

#endif
