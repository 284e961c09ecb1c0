/* The budget of one core: a memory ceiling and a time limit.
 *
 * The memory ceiling is the process's data (heap and private writable
 * mappings, RLIMIT_DATA): the core and the binaries are mapped read-only and
 * do not count.  Past it, allocations fail: every failed allocation is
 * noticed (budget.c observes malloc), and a library that exits the process
 * instead (libdw ends the process on out-of-memory) is caught by the guard
 * below, so hitting the limit is always one clear error naming it, never a
 * report quietly missing what could not be allocated.  The time budget is an alarm in
 * `report`; the ingest supervisor enforces it on its workers itself. */
#ifndef CLI_BUDGET_H
#define CLI_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../corefile/error.h"

#define CLI_DEFAULT_TIMEOUT 300     /* seconds per core */

struct cli_limits {
	uint64_t max_memory;        /* bytes of data; 0: no ceiling */
	unsigned timeout;           /* seconds; 0: no budget */
};

/* The default ceiling for one of PROCESSES processes analysing at once:
 * half the machine's RAM shared among them, at least 256 MiB. */
uint64_t cli_default_max_memory(unsigned processes);

/* Set the ceiling of L in this process (RLIMIT_DATA).  0, or -1 with the
 * reason in WHY.  Does nothing in a build with AddressSanitizer, whose
 * shadow memory alone exceeds any ceiling. */
int cli_limit_memory(const struct cli_limits *l, char *why, size_t whylen);

/* "memory limit of N MiB reached (--max-memory)" for L into BUF. */
const char *cli_memory_limit_message(const struct cli_limits *l, char *buf, size_t len);

/* True when ERR (may be NULL) is an out-of-memory error, or any allocation
 * failed since cli_guard_begin(): under a ceiling, the ceiling was reached
 * and what was analysed may be incomplete. */
bool cli_out_of_memory(const struct core_error *err);

/* Guard the analysis of one core: until cli_guard_end(), a call of exit()
 * (a library giving up on out-of-memory), or a fatal signal after an
 * allocation failed (a library that asserts, or crashes, on out-of-memory:
 * libdw does both), ends the process with STATUS after printing
 * "asyncore: WHAT: " and the memory-limit message on stderr (nothing when
 * WHAT is NULL); a fatal signal with no allocation failed is left to crash
 * the process as it would.  When L has a time budget, reaching it
 * prints "asyncore: WHAT: time limit of N s reached (--timeout)" and ends
 * the process with STATUS. */
void cli_guard_begin(const char *what, const struct cli_limits *l, int status);
void cli_guard_end(void);

#endif
