/* Described runtimes, the roots: the stack objects each resolved
 * description's root leads to (a global, each thread's thread-local or
 * pthread-key value, and the lists they head), each read and spliced into
 * its thread. */
#include "runtime_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrset.h"
#include "tsd.h"
#include "../base/array.h"

#define KEY_NONE 0xffffffffu
#define OBJECTS_LIMIT 65536u        /* stack objects the root's lists lead to */

struct objects {
	uint64_t *v;
	size_t n, cap;
	bool full;
};

/* The elements of root.lists[LEVEL] every walk of one description has met
 * (SEEN[LEVEL], in walk order): a list that several owners share (the
 * threads of one interpreter reached from each of them, one interpreter's
 * list from two groups) is walked once, and its elements' cycle check is
 * one set, not one per owner. */
struct list_seen {
	struct an_addr_set *seen;
	size_t nlevels;
};

static void list_seen_deinit(struct list_seen *ls)
{
	for (size_t i = 0; i < ls->nlevels; i++)
		an_addr_set_deinit(&ls->seen[i]);
	free(ls->seen);
	*ls = (struct list_seen){ 0 };
}

/* Whether AT was added to SET since its FIRST member: in this walk. */
static bool seen_since(const struct an_addr_set *set, size_t first, uint64_t at)
{
	for (size_t i = first; i < set->n; i++)
		if (set->v[i] == at)
			return true;
	return false;
}

/* The stack objects root.lists[LEVEL...] lead to from OBJ, appended to OUT:
 * each list bounded by its max, cycle-checked, its elements readable; the
 * rest of a list another walk went through (LS) is not walked again. */
static void list_walk(struct an_runtime_session *rs, const struct an_rt_resolved *r, const char *context,
		      size_t level, uint64_t obj, struct list_seen *ls, struct objects *out)
{
	const struct an_rt_list *l = &r->d->root.lists[level];
	struct an_addr_set *seen = &ls->seen[level];
	size_t first = seen->n;
	uint64_t at;
	enum an_rt_value_state st = an_rt_slot_read(rs->core, obj, NULL, &r->list_head[level], false, &at);
	if (st == AN_RT_VALUE_UNREADABLE)
		core_warn(rs->core, "%s: the %s of 0x%" PRIx64 " is not readable", context,
			  l->head.path, obj);
	for (uint64_t n = 0; st == AN_RT_VALUE_READ && at && !out->full; n++) {
		const char *cut = NULL;
		if (n == l->max)
			cut = "is past the list's max";
		else if (an_addr_set_has(seen, at) && !seen_since(seen, first, at))
			break;      /* another walk's list from here on */
		else if (an_addr_set_has(seen, at))
			cut = "repeats (a cycle)";
		else if (!core_pointer_ok(rs->core, at, 8, 8))
			cut = core_pointer_problem(rs->core, at);
		if (cut) {
			core_warn(rs->core, "%s: root.lists[%zu]: element 0x%" PRIx64 " %s; the list is "
				  "cut there", context, level, at, cut);
			break;
		}
		if (an_addr_set_add(seen, at) < 0)
			break;
		if (level + 1 < r->d->root.nlists) {
			list_walk(rs, r, context, level + 1, at, ls, out);
		} else if (out->n == OBJECTS_LIMIT) {
			core_warn(rs->core, "%s: more than %u stack objects; the rest are not read",
				  context, OBJECTS_LIMIT);
			out->full = true;
		} else {
			uint64_t *slot = base_array_push(&out->v, &out->n, &out->cap, sizeof(*out->v));
			if (!slot)
				break;
			*slot = at;
		}
		uint64_t next;
		st = an_rt_slot_read(rs->core, at, NULL, &r->list_next[level], false, &next);
		if (st == AN_RT_VALUE_UNREADABLE)
			core_warn(rs->core, "%s: root.lists[%zu]: the %s of element 0x%" PRIx64 " is not "
				  "readable; the list is cut there", context, level, l->next.path, at);
		at = next;
	}
}

/* The thread of TID, a 64-bit value read from the core: none when it is no
 * 32-bit thread id. */
static struct an_thread *thread_by_tid(struct analysis *an, uint64_t tid)
{
	int64_t v = (int64_t)tid;
	return v >= INT32_MIN && v <= INT32_MAX ? an_thread_by_tid(an, (int32_t)v) : NULL;
}

/* The thread whose glibc struct pthread (pthread_self()) is at SELF. */
static struct an_thread *thread_by_pthread(struct analysis *an, uint64_t self)
{
	for (size_t i = 0; self && i < an->nthreads; i++)
		if (an->threads[i].pthread == self)
			return &an->threads[i];
	return NULL;
}

/* The stack object OBJ's thread: its root.thread member's, else T. */
static void splice_owned(struct an_runtime_session *rs, const struct an_rt_resolved *r,
			 struct analysis *an, struct an_thread *t, const char *context, uint64_t obj)
{
	uint64_t id;
	if (!r->d->root.thread.path) {
		an_rt_splice_stack(rs, r, an, t, obj);
		return;
	}
	if (!an_rt_read_uint(rs->core, obj, &r->thread, &id)) {
		core_warn(rs->core, "%s: the %s of stack 0x%" PRIx64 " is not readable", context,
			  r->d->root.thread.path, obj);
		return;
	}
	bool pthread = r->d->root.thread_is == AN_RT_THREAD_PTHREAD;
	if (!pthread)
		id = (uint64_t)an_rt_as_signed(id, r->thread.size);
	struct an_thread *owner = pthread ? thread_by_pthread(an, id) : thread_by_tid(an, id);
	if (owner)
		an_rt_splice_stack(rs, r, an, owner, obj);
	else
		an_rt_splice_tidless(rs, r, obj, id);
}

/* The root object OBJ (of thread T, NULL for a global): its stack, or the
 * stacks its lists lead to. */
static void splice_root(struct an_runtime_session *rs, const struct an_rt_resolved *r,
			struct analysis *an, struct an_thread *t, const char *context, uint64_t obj,
			struct list_seen *ls)
{
	struct objects o = { 0 };
	if (!r->d->root.nlists) {
		splice_owned(rs, r, an, t, context, obj);
		return;
	}
	if (!ls->seen) {
		ls->seen = calloc(r->d->root.nlists, sizeof(*ls->seen));
		if (!ls->seen)
			return;
		ls->nlevels = r->d->root.nlists;
	}
	list_walk(rs, r, context, 0, obj, ls, &o);
	for (size_t i = 0; i < o.n; i++)
		splice_owned(rs, r, an, t, context, o.v[i]);
	free(o.v);
}

/* The stack object from root address ADDR: ADDR itself, or the address it
 * holds ("pointer": true; 0 there means no stack yet).  False: no stack. */
static bool stack_object(struct an_runtime_session *rs, const struct an_rt_resolved *r,
			 const char *context, uint64_t addr, uint64_t *obj)
{
	*obj = addr;
	if (!r->d->root.pointer)
		return true;
	if (!core_read_u64(rs->core, addr, obj)) {
		core_warn(rs->core, "%s: the root %s at 0x%" PRIx64 " is not readable", context,
			  r->d->root.symbol, addr);
		return false;
	}
	return *obj != 0;
}

static void splice_global(struct an_runtime_session *rs, const struct an_rt_resolved *r,
			  struct analysis *an, struct list_seen *ls)
{
	char context[AN_RT_CONTEXT_SIZE];
	uint64_t obj;
	snprintf(context, sizeof(context), "runtime %s", r->d->label);
	if (stack_object(rs, r, context, r->root, &obj))
		splice_root(rs, r, an, NULL, context, obj, ls);
}

static void splice_tls(struct an_runtime_session *rs, const struct an_rt_resolved *r,
		       struct analysis *an, struct list_seen *ls)
{
	size_t unknown = 0;
	const char *why = NULL;
	int32_t first_tid = 0;
	for (size_t i = 0; i < an->nthreads; i++) {
		struct an_thread *t = &an->threads[i];
		char context[AN_RT_CONTEXT_SIZE];
		uint64_t addr, obj;
		const char *reason;
		switch (dbg_tls_address(rs->s, &r->tls, t->tls_tp, &addr, &reason)) {
		case DBG_TLS_UNALLOCATED:
			continue;
		case DBG_TLS_UNKNOWN:
			if (unknown++ == 0) {
				why = reason;
				first_tid = t->tid;
			}
			continue;
		case DBG_TLS_ADDRESS:
			break;
		}
		snprintf(context, sizeof(context), "runtime %s: thread %" PRId32, r->d->label, t->tid);
		if (stack_object(rs, r, context, addr, &obj))
			splice_root(rs, r, an, t, context, obj, ls);
	}
	if (unknown)
		core_warn(rs->core, "runtime %s: the thread-local %s of %zu threads (thread %" PRId32
			  " first) cannot be found: %s", r->d->label, r->d->root.symbol, unknown,
			  first_tid, why);
}

static void splice_pthread_key(struct an_runtime_session *rs, const struct an_rt_resolved *r,
			       struct analysis *an, struct list_seen *ls)
{
	char who[AN_RT_CONTEXT_SIZE / 2];
	uint32_t key;
	struct an_tsd tsd;
	snprintf(who, sizeof(who), "runtime %s", r->d->label);
	if (!core_read_u32(rs->core, r->root, &key)) {
		core_warn(rs->core, "%s: the key %s at 0x%" PRIx64 " is not readable", who,
			  r->d->root.symbol, r->root);
		return;
	}
	if (key == KEY_NONE)
		return;                 /* never created */
	if (key >= AN_TSD_KEYS_MAX) {
		core_warn(rs->core, "%s: %s holds %" PRIu32 ", not a pthread key", who,
			  r->d->root.symbol, key);
		return;
	}
	an_tsd_init(&tsd, rs->s, an, who);
	if (!an_tsd_key_created(&tsd, key))
		return;
	for (size_t i = 0; i < an->nthreads; i++) {
		struct an_thread *t = &an->threads[i];
		char context[AN_RT_CONTEXT_SIZE];
		uint64_t value, obj;
		if (an_tsd_slot(&tsd, t, key, &value) != AN_SLOT_SET)
			continue;
		snprintf(context, sizeof(context), "%s: thread %" PRId32, who, t->tid);
		if (stack_object(rs, r, context, value, &obj))
			splice_root(rs, r, an, t, context, obj, ls);
	}
}

void an_runtimes_splice(struct an_runtime_session *rs, struct analysis *an)
{
	for (size_t i = 0; rs && i < rs->n; i++) {
		const struct an_rt_resolved *r = &rs->v[i];
		struct list_seen ls = { 0 };
		switch (r->d->root.kind) {
		case AN_RT_ROOT_SYMBOL:
			splice_global(rs, r, an, &ls);
			break;
		case AN_RT_ROOT_TLS:
			splice_tls(rs, r, an, &ls);
			break;
		case AN_RT_ROOT_PTHREAD_KEY:
			splice_pthread_key(rs, r, an, &ls);
			break;
		}
		list_seen_deinit(&ls);
	}
}
