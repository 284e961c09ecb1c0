/* systemd-coredump's journal entry of a core, read through libsystemd's
 * sd-journal: the COREDUMP_* fields systemd-coredump logs with every core
 * it stores (command line, cgroup, unit, signal, time, file name). */
#ifndef COREFILE_JOURNAL_H
#define COREFILE_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "identity.h"

struct core_journal_entry {
	char *unit;                 /* COREDUMP_UNIT, else COREDUMP_USER_UNIT; or NULL */
	char *cmdline;              /* COREDUMP_CMDLINE, or NULL */
	char *cgroup;               /* COREDUMP_CGROUP, or NULL */
	int signo;                  /* COREDUMP_SIGNAL, when has_signal */
	bool has_signal;
	uint64_t usec;              /* COREDUMP_TIMESTAMP, when has_usec */
	bool has_usec;
};

/* Find the journal entry of the core at PATH: the entry whose
 * COREDUMP_FILENAME is PATH, else (when NAME, the parsed systemd-coredump
 * file name, is given) the entry of NAME's PID on NAME's boot whose
 * COREDUMP_TIMESTAMP is NAME's time.  DIR is a directory of journal files,
 * or NULL for the local system's journal.  Returns 1 with *OUT filled
 * (core_journal_entry_deinit()), 0 when there is no such entry, or -1 with
 * a one-line reason in WHY. */
int core_journal_find(const char *dir, const char *path, const struct core_coredump_name *name,
		      struct core_journal_entry *out, char *why, size_t whylen);

/* Free what *E owns (not E). */
void core_journal_entry_deinit(struct core_journal_entry *e);

/* Log one entry to the journal: N fields (at most 16), each "NAME=value"
 * (MESSAGE, PRIORITY, ...).  Nothing when libsystemd cannot be opened. */
void core_journal_send(const char *const *fields, size_t n);

#endif
