/* glibc's thread-specific data read from a core: the value a thread holds
 * for a pthread key (pthread_setspecific), shared by every walk whose root
 * is a pthread key (folly's async stacks, described runtimes).  DESIGN.md,
 * "The folly async stack ABI", describes how the slot is found. */
#ifndef ANALYZER_TSD_H
#define ANALYZER_TSD_H

#include <stdint.h>

#include "analysis.h"
#include "../dwarf/dwarf.h"

/* glibc's PTHREAD_KEYS_MAX: a key at or above it was never created. */
#define AN_TSD_KEYS_MAX 1024u

/* Where the threads keep their key slots. */
struct an_tsd {
	struct dbg_session *s;
	struct core *core;
	const char *who;             /* warning prefix: "folly", "runtime NAME" (borrowed) */
	uint64_t specific_off;       /* offset of struct pthread.specific */
	bool from_scan;              /* found in the threads' memory, not DWARF */
	uint64_t tid_off;            /* offset of struct pthread.tid */
	uint64_t keys_table;         /* glibc __pthread_keys, 0 when unknown */
};

/* Find `specific` from the threads of AN (libc's DWARF confirms it when
 * present) and glibc's key table.  WHO prefixes the warnings. */
void an_tsd_init(struct an_tsd *tsd, struct dbg_session *s, const struct analysis *an,
		 const char *who);

/* False when glibc's key table says KEY is not in use (its sequence number
 * is even); true when it is, or when the table is unknown. */
bool an_tsd_key_created(const struct an_tsd *tsd, uint32_t key);

enum an_slot_state { AN_SLOT_EMPTY, AN_SLOT_SET, AN_SLOT_BROKEN };

/* The value thread T holds for KEY (< AN_TSD_KEYS_MAX) in *VALUE: SET, EMPTY
 * (no value, or a stale one from a deleted key), or BROKEN (unreadable;
 * warned). */
enum an_slot_state an_tsd_slot(const struct an_tsd *tsd, const struct an_thread *t, uint32_t key,
			       uint64_t *value);

#endif
