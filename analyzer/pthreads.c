/* glibc's struct pthread of each thread: below or at its thread pointer,
 * or on glibc's lists of threads. */
#include "pthreads.h"

#include <inttypes.h>

#define LIST_MAX 65536u             /* threads followed on one list */
#define LAYOUT_MAX 0x10000u         /* struct pthread, struct rtld_global are smaller */

/* A libthread_db field descriptor: { bits, count, offset } (glibc's
 * nptl_db/db_info.c); true with its offset when it is one of a field of
 * BITS bits. */
static bool descriptor(struct dbg_session *s, const char *name, uint32_t bits, uint64_t *offset)
{
	uint64_t addr;
	uint32_t d[3];
	if (!dbg_find_symbol(s, name, &addr, NULL) || !dbg_read_module_bytes(s, addr, d, sizeof(d)) ||
	    (bits && d[0] != bits) || d[1] != 1 || d[2] >= LAYOUT_MAX)
		return false;
	*offset = d[2];
	return true;
}

void an_pthread_layout(struct dbg_session *s, struct an_pthread_layout *l)
{
	const struct core_arch *arch = dbg_session_core(s)->arch;
	uint64_t addr;
	uint32_t size;
	struct an_pthread_layout d;
	d.from_libc = dbg_find_symbol(s, "_thread_db_sizeof_pthread", &addr, NULL) &&
		      dbg_read_module_bytes(s, addr, &size, sizeof(size)) && size >= 64 &&
		      size < LAYOUT_MAX && size % 8 == 0 &&
		      descriptor(s, "_thread_db_pthread_list", 128, &d.list) &&
		      descriptor(s, "_thread_db_pthread_tid", 32, &d.tid) &&
		      descriptor(s, "_thread_db_pthread_specific", 0, &d.specific) &&
		      d.list + 16 <= size && d.tid + 4 <= size && d.specific + 8 <= size;
	if (d.from_libc)
		d.size = size;
	else
		d = (struct an_pthread_layout){
			.size = arch->pthread_size, .list = arch->pthread_list, .tid = arch->pthread_tid,
			.specific = arch->pthread_specific,
		};
	/* A static program has no _rtld_global: its lists are variables of
	 * their own (an_pthreads_locate). */
	if (!descriptor(s, "_thread_db_rtld_global__dl_stack_used", 128, &d.stack_used) ||
	    !descriptor(s, "_thread_db_rtld_global__dl_stack_user", 128, &d.stack_user)) {
		d.stack_used = arch->rtld_stack_used;
		d.stack_user = arch->rtld_stack_user;
	}
	*l = d;
}

/* Give each thread without a struct pthread the one on the list at HEAD
 * whose tid is the thread's.  Returns how many it gave. */
static size_t match_list(struct core *core, struct analysis *an, const struct an_pthread_layout *l,
			 uint64_t head)
{
	bool variant1 = core->arch->tls_variant1;
	size_t found = 0, missing = 0;
	for (size_t i = 0; i < an->nthreads; i++)
		missing += !an->threads[i].pthread;
	uint64_t next;
	if (!core_read_u64(core, head, &next))
		return 0;
	for (unsigned n = 0; next != head && n < LIST_MAX && found < missing; n++) {
		uint32_t tid;
		uint64_t pd = next - l->list;
		if (next % 8 != 0 || next < l->list || !core_read_u32(core, pd + l->tid, &tid) ||
		    !core_read_u64(core, next, &next))
			break;
		struct an_thread *t = an_thread_by_tid(an, (int32_t)tid);
		if (t && !t->pthread && tid != 0) {
			t->pthread = pd;
			t->tls_tp = variant1 ? pd + l->size : pd;
			found++;
		}
	}
	return found;
}

/* Threads the lists did not give keep the struct pthread right below the
 * thread pointer, unconfirmed. */
static void below_tp(struct analysis *an, const struct an_pthread_layout *l)
{
	for (size_t i = 0; i < an->nthreads; i++) {
		struct an_thread *t = &an->threads[i];
		if (t->has_tp && t->tp && !t->pthread) {
			t->tls_tp = t->tp;
			t->pthread = t->tp > l->size ? t->tp - l->size : 0;
		}
	}
}

void an_pthreads_locate(struct dbg_session *s, struct analysis *an)
{
	struct core *core = dbg_session_core(s);
	bool variant1 = core->arch->tls_variant1, missing = false;
	for (size_t i = 0; i < an->nthreads; i++)
		missing |= !an->threads[i].has_tp || an->threads[i].tp == 0;
	/* x86_64: struct pthread is at the thread pointer, nothing to look up. */
	if (!variant1 && !missing) {
		for (size_t i = 0; i < an->nthreads; i++)
			an->threads[i].pthread = an->threads[i].tls_tp = an->threads[i].tp;
		return;
	}
	struct an_pthread_layout l;
	an_pthread_layout(s, &l);
	for (size_t i = 0; i < an->nthreads; i++) {
		struct an_thread *t = &an->threads[i];
		if (!t->has_tp || t->tp == 0)
			continue;
		if (!variant1) {
			t->tls_tp = t->pthread = t->tp;
			continue;
		}
		/* struct pthread has no self pointer below the thread pointer:
		 * its tid says whether it is this thread's.  Else the lists
		 * may know better. */
		uint32_t tid;
		uint64_t pd = t->tp - l.size;
		if (t->tp > l.size && core_read_u32(core, pd + l.tid, &tid) && (int32_t)tid == t->tid) {
			t->tls_tp = t->tp;
			t->pthread = pd;
			continue;
		}
		/* Only libc's own layout makes a mismatch news: glibc 2.36's
		 * defaults do not fit other versions. */
		if (l.from_libc)
			core_warn(core, "thread %" PRId32 ": no struct pthread of this thread below its "
				"thread pointer 0x%" PRIx64 "; looking for it on glibc's lists", t->tid, t->tp);
		missing = true;
	}
	uint64_t rtld, used, user;
	bool lists = false;
	if (missing && dbg_find_symbol(s, "_rtld_global", &rtld, NULL)) {
		used = rtld + l.stack_used;
		user = rtld + l.stack_user;
		lists = true;
	} else if (missing) {
		/* A static program's GL(dl_stack_used) and GL(dl_stack_user). */
		lists = dbg_find_symbol(s, "_dl_stack_used", &used, NULL) &&
			dbg_find_symbol(s, "_dl_stack_user", &user, NULL);
	}
	if (lists) {
		size_t found = match_list(core, an, &l, used);
		found += match_list(core, an, &l, user);
		if (found && !l.from_libc)
			core_warn(core, "libc describes no struct pthread (libthread_db's _thread_db_* symbols); "
				"threads found on glibc's lists with glibc 2.36's %s layout", core->arch->name);
	}
	below_tp(an, &l);
}
