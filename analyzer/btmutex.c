/* The bthread mutex (or raw butex) a bthread waits on, and the mutex's
 * owner where bRPC records one.  bRPC's bthread_mutex_t (src/bthread/types.h) is {unsigned *butex;
 * csite; enable_csite; mutex_owner_t owner {bool hold; uint64_t id}}: a
 * waiter sleeps on the butex the mutex points at.  The owner is a member in
 * every build but written only when bRPC is built with BRPC_DEBUG_LOCK=1
 * (mutex.cpp's BTHREAD_MUTEX_SET_OWNER: the locking bthread's id, or
 * pthread_numeric_id(), pthread_self() on Linux, off a bthread); otherwise
 * hold stays false and no owner is said.  A mutex is found only as a global
 * (or a global's member) whose butex member points at the butex waited on:
 * the data between the linker's __data_start (or __bss_start) and _end is
 * searched once for all of them.  Layouts from DWARF only. */
#include "bthread.h"

#include <stdlib.h>
#include <string.h>

#include "addrset.h"

enum { SCAN_CHUNK = 64 << 10, PAGE = 4096, NAME_LEN = 512 };

#define MAX_DATA (1ull << 30)

struct mutex_layout {
	uint64_t butex, hold, id, size;
	bool has_owner;
};

static bool layout_read(struct dbg_session *s, struct mutex_layout *L)
{
	uint64_t size;
	if (!dbg_member_find(s, "bthread_mutex_t", "butex", &L->butex, &size) || size != 8 ||
	    !dbg_type_size(s, "bthread_mutex_t", &L->size) || L->size < 8)
		return false;
	uint64_t hsize, isize;
	L->has_owner = dbg_member_find(s, "bthread_mutex_t", "owner.hold", &L->hold, &hsize) && hsize == 1 &&
		       dbg_member_find(s, "bthread_mutex_t", "owner.id", &L->id, &isize) && isize == 8 &&
		       L->hold < L->size && L->id + 8 <= L->size;
	return true;
}

static bool is_butex_wait(const struct an_task *t)
{
	return t->runtime && strcmp(t->runtime, "bthread") == 0 && t->wait_kind &&
	       strcmp(t->wait_kind, "butex") == 0 && t->has_wait_address;
}

/* The owner MUTEX records into every task waiting on BUTEX: a live
 * bthread's id, else an OS thread whose pthread_self() it is. */
static void owner_read(struct dbg_session *s, struct analysis *an, const struct mutex_layout *L,
		       uint64_t mutex, struct an_task *t)
{
	struct core *core = dbg_session_core(s);
	unsigned char hold = 0;
	uint64_t id = 0;
	if (!L->has_owner || !core_read_bytes(core, mutex + L->hold, &hold, 1) || !hold ||
	    !core_read_u64(core, mutex + L->id, &id) || !id)
		return;
	for (size_t i = 0; i < an->ntasks; i++)
		if (an->tasks[i].runtime && strcmp(an->tasks[i].runtime, "bthread") == 0 && an->tasks[i].id == id) {
			t->wait_owner_task = id;
			t->has_wait_owner_task = true;
			return;
		}
	for (size_t i = 0; i < an->nthreads; i++)
		if (an->threads[i].pthread == id) {
			t->wait_owner_tid = an->threads[i].tid;
			t->has_wait_owner_tid = true;
			return;
		}
}

/* A data word at AT points at BUTEX: the mutex it is the member of, when a
 * global of that type (or a member of one) is there, else the global
 * pointer AT is (a butex of its own: bthread::butex_create's). */
static void mutex_at(struct dbg_session *s, struct analysis *an, const struct mutex_layout *L, uint64_t at,
		     uint64_t butex)
{
	char name[NAME_LEN];
	uint64_t mutex = at - L->butex;
	bool is_mutex = at >= L->butex && dbg_data_name(s, mutex, L->size, true, name, sizeof(name));
	/* else a raw butex: the global pointer that holds it names it */
	if (!is_mutex && !dbg_data_name(s, at, 8, true, name, sizeof(name)))
		return;
	for (size_t i = 0; i < an->ntasks; i++) {
		struct an_task *t = &an->tasks[i];
		if (!is_butex_wait(t) || t->wait_address != butex || t->wait_object_name)
			continue;
		t->wait_object_name = strdup(name);
		if (is_mutex)
			owner_read(s, an, L, mutex, t);
	}
}

static bool data_bounds(struct dbg_session *s, uint64_t *lo, uint64_t *hi)
{
	uint64_t size;
	if (!dbg_find_symbol(s, "__data_start", lo, &size) && !dbg_find_symbol(s, "data_start", lo, &size) &&
	    !dbg_find_symbol(s, "__bss_start", lo, &size))
		return false;
	return dbg_find_symbol(s, "_end", hi, &size) && *hi > *lo && *hi - *lo < MAX_DATA;
}

void an_bthread_mutexes(struct dbg_session *s, struct analysis *an)
{
	struct mutex_layout L;
	struct an_addr_set butexes = {0};
	uint64_t lo, hi;
	for (size_t i = 0; i < an->ntasks; i++)
		if (is_butex_wait(&an->tasks[i]) && an_addr_set_add(&butexes, an->tasks[i].wait_address) < 0)
			goto out;
	if (!butexes.n || !layout_read(s, &L) || !data_bounds(s, &lo, &hi))
		goto out;
	uint64_t *buf = malloc(SCAN_CHUNK);
	lo = (lo + 7) & ~7ull;
	for (uint64_t at = lo; buf && at < hi; at += SCAN_CHUNK) {
		size_t len = hi - at < SCAN_CHUNK ? (size_t)((hi - at) & ~7ull) : SCAN_CHUNK;
		/* a run the core does not hold whole is read page by page */
		for (size_t p = 0; len && p < len; p += len > PAGE ? PAGE : len) {
			size_t n = len > PAGE ? (len - p < PAGE ? len - p : PAGE) : len;
			if (!core_read_bytes(dbg_session_core(s), at + p, buf, n))
				continue;
			for (size_t k = 0; k < n / 8; k++)
				if (buf[k] && an_addr_set_has(&butexes, buf[k]))
					mutex_at(s, an, &L, at + p + k * 8, buf[k]);
		}
	}
	free(buf);
out:
	an_addr_set_deinit(&butexes);
}
