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

/* A hang's signature (DESIGN.md "Hangs": the holder's function and the
 * waiters'), with no tid, count or address, so that one hang is one bucket
 * across runs: "hang: refill_pool (io) <- pool_worker" for the biggest
 * group of waiters, "hang: go chan receive in main.consume, created by
 * main.startConsumers" for tasks, "hang: running crunch", or "hang: idle:
 * event_loop (io), worker_main (condition)"; NORMALIZE names each function
 * as signatures do (an_signature_normalize).  Malloc'd; NULL when the
 * process has no thread or memory ran out. */
char *an_hang_signature(const struct analysis *an, char *(*normalize)(const char *name));

#endif
