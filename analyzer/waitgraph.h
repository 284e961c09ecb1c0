/* The wait-for graph of a process's threads (DESIGN.md "Hangs"): an edge
 * from each waiting thread to the holder its object records (a join: to
 * the joined thread); its cycles are deadlocks, and where no cycle is, the
 * biggest group of waiters and the end of the chain they wait behind say
 * why it hangs. */
#ifndef ANALYZER_WAITGRAPH_H
#define ANALYZER_WAITGRAPH_H

#include "analysis.h"

/* Fill AN->deadlocks from its threads' blocked_on (an_blocking_analyze
 * first).  False only when memory ran out. */
bool an_waitgraph_analyze(struct analysis *an);

/* The hang's one line (without the kind): the first deadlock's, else the
 * biggest group of waiters and where their chain ends, else what every
 * thread does; *KIND is deadlock or hang.  Malloc'd; NULL when memory ran
 * out. */
char *an_hang_summary(const struct analysis *an, enum an_cause_kind *kind);

#endif
