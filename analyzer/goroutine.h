/* Go programs: every goroutine of a core or a running process, as the Go
 * runtime itself lists them, and the OS threads' stacks walked across the
 * runtime's stack switches (DESIGN.md "Go programs"). */
#ifndef ANALYZER_GOROUTINE_H
#define ANALYZER_GOROUTINE_H

#include "analysis.h"
#include "../dwarf/dwarf.h"

/* When the main executable is a Go program: walk every thread again as
 * the runtime walks it, list its goroutines in AN->tasks (with TASKS), and
 * read the panic or fatal error that ended it into AN->go.  Call it after
 * every thread's frames are filled.  Nothing for another program (one
 * section lookup).  False only when out of memory. */
bool an_go_analyze(struct dbg_session *s, struct analysis *an, bool tasks);

#endif
