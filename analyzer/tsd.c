/* glibc pthread key slots: struct pthread's specific[] blocks. */
#include "tsd.h"

#include "pthreads.h"

#include <inttypes.h>

#define KEYS_PER_BLOCK 32u
#define KEY_DATA_SIZE 16u           /* struct pthread_key_data { seq; data; } */
#define FIRST_BLOCK_SIZE (KEYS_PER_BLOCK * KEY_DATA_SIZE)
#define SPECIFIC_SCAN_END 0x1000u   /* struct pthread is far smaller */

/* struct pthread's `specific[0]` points at the embedded specific_1stblock
 * that precedes the array: the word at PD+Y equal to PD+Y-0x200 gives Y
 * without libc's debug info, PD being the thread's struct pthread.  What
 * confirms PD: x86_64's TCB self pointers (header.tcb at 0, header.self at
 * 16), or where struct pthread has no TCB at its start (TLS variant I),
 * its tid at TID_OFF. */
static bool scan_specific(struct core *core, const struct an_thread *t, uint64_t tid_off,
			  uint64_t *off)
{
	uint64_t pd = t->pthread, tcb, self;
	uint32_t tid;

	if (core->arch->tls_variant1 ? !core_read_u32(core, pd + tid_off, &tid) || (int32_t)tid != t->tid
				     : !core_read_u64(core, pd, &tcb) || !core_read_u64(core, pd + 16, &self) ||
				       (tcb != pd && self != pd))
		return false;
	for (uint64_t y = FIRST_BLOCK_SIZE; y < SPECIFIC_SCAN_END; y += 8) {
		uint64_t w;
		if (!core_read_u64(core, pd + y, &w))
			return false;
		if (w == pd + y - FIRST_BLOCK_SIZE) {
			*off = y;
			return true;
		}
	}
	return false;
}

static bool specific_matches(struct core *core, uint64_t pd, uint64_t off)
{
	uint64_t w;
	return core_read_u64(core, pd + off, &w) && w == pd + off - FIRST_BLOCK_SIZE;
}

void an_tsd_init(struct an_tsd *tsd, struct dbg_session *s, const struct analysis *an,
		 const char *who)
{
	uint64_t scanned = 0, dwarf = 0;
	bool have_scan = false;
	*tsd = (struct an_tsd){ .s = s, .core = dbg_session_core(s), .who = who };
	/* glibc defines struct pthread beside pthread_create (nptl/pthread_create.c). */
	bool have_dwarf = dbg_member_offset_near(s, "pthread_create", "pthread", "specific", &dwarf);

	struct an_pthread_layout layout;
	an_pthread_layout(s, &layout);
	tsd->tid_off = layout.tid;
	for (size_t i = 0; i < an->nthreads && !have_scan; i++)
		have_scan = an->threads[i].pthread != 0 &&
			    scan_specific(tsd->core, &an->threads[i], tsd->tid_off, &scanned);
	if (have_scan) {
		tsd->specific_off = scanned;
		tsd->from_scan = true;
		if (have_dwarf && dwarf != scanned)
			core_warn(tsd->core, "%s: struct pthread.specific is at 0x%" PRIx64 " in the threads' "
				"memory but at 0x%" PRIx64 " in libc's debug info; using 0x%" PRIx64,
				who, scanned, dwarf, scanned);
	} else if (have_dwarf) {
		tsd->specific_off = dwarf;
	} else if (layout.from_libc) {
		tsd->specific_off = layout.specific;
	} else {
		tsd->specific_off = layout.specific;
		core_warn(tsd->core, "%s: struct pthread.specific not found in memory or debug info; "
			"assuming offset 0x%" PRIx64, who, layout.specific);
	}

	uint64_t keys;
	if (dbg_find_symbol(s, "__pthread_keys", &keys, NULL) && keys % 8 == 0)
		tsd->keys_table = keys;
}

bool an_tsd_key_created(const struct an_tsd *tsd, uint32_t key)
{
	uint64_t seq;
	return !tsd->keys_table ||
	       !core_read_u64(tsd->core, tsd->keys_table + KEY_DATA_SIZE * key, &seq) || (seq & 1);
}

enum an_slot_state an_tsd_slot(const struct an_tsd *tsd, const struct an_thread *t, uint32_t key,
			       uint64_t *value)
{
	struct core *core = tsd->core;
	uint64_t pd = t->pthread;
	uint64_t block, seq, data;

	if (pd == 0 || pd % 8 != 0) {
		core_warn(core, "%s: thread %" PRId32 ": no thread pointer (%s 0x%" PRIx64 ")",
			tsd->who, t->tid, core_arch_reg_name(core->arch, core->arch->reg_tp), t->tp);
		return AN_SLOT_BROKEN;
	}
	uint64_t off = tsd->specific_off;
	if (tsd->from_scan && !specific_matches(core, pd, off) &&
	    scan_specific(core, t, tsd->tid_off, &off))
		core_warn(core, "%s: thread %" PRId32 ": struct pthread.specific at 0x%" PRIx64
			" instead of 0x%" PRIx64, tsd->who, t->tid, off, tsd->specific_off);
	uint64_t at = pd + off + 8 * (key / KEYS_PER_BLOCK);
	if (!core_read_u64(core, at, &block)) {
		core_warn(core, "%s: thread %" PRId32 ": pthread specific[] at 0x%" PRIx64
			" is not readable", tsd->who, t->tid, at);
		return AN_SLOT_BROKEN;
	}
	if (block == 0)
		return AN_SLOT_EMPTY;
	uint64_t entry = block + KEY_DATA_SIZE * (key % KEYS_PER_BLOCK);
	if (!core_pointer_ok(core, block, 8, 8) || !core_read_u64(core, entry, &seq) ||
	    !core_read_u64(core, entry + 8, &data)) {
		core_warn(core, "%s: thread %" PRId32 ": pthread key block 0x%" PRIx64
			" is not readable", tsd->who, t->tid, block);
		return AN_SLOT_BROKEN;
	}
	/* glibc ignores an entry whose sequence number is stale. */
	uint64_t key_seq;
	if (tsd->keys_table &&
	    core_read_u64(core, tsd->keys_table + KEY_DATA_SIZE * key, &key_seq) && key_seq != seq)
		return AN_SLOT_EMPTY;
	*value = data;
	return data ? AN_SLOT_SET : AN_SLOT_EMPTY;
}
