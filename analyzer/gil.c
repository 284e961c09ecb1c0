/* CPython's GIL: where it is, whether it is held and by whom, from the
 * interpreter's own DWARF. */
#include "gil.h"

#include "blocking.h"

#include <stdlib.h>
#include <string.h>

enum { TID_MAX = 1 << 22, TAKE_GIL_DEPTH = 16 };

struct gil {
	uint64_t at, size;          /* the struct _gil_runtime_state */
	uint64_t locked, last_holder;   /* its members' offsets */
	uint64_t native_thread_id;  /* PyThreadState's */
};

/* Where the GIL is: embedded in _PyRuntime (3.8-3.11), else pointed to by
 * the main interpreter's ceval.gil (3.12 on). */
static bool gil_address(struct core *core, struct dbg_session *s, uint64_t runtime, struct gil *g)
{
	uint64_t off, size, main_off, interp, at;
	if (dbg_member_find(s, "_PyRuntimeState", "ceval.gil", &off, &size) && size > 8) {
		g->at = runtime + off;
		g->size = size;
		return true;
	}
	if (!dbg_member_find(s, "_PyRuntimeState", "interpreters.main", &main_off, &size) || size != 8 ||
	    !dbg_member_find(s, "PyInterpreterState", "ceval.gil", &off, &size) || size != 8 ||
	    !core_read_u64(core, runtime + main_off, &interp) || !interp ||
	    !core_read_u64(core, interp + off, &at) || !at || !dbg_type_size(s, "_gil_runtime_state", &size) ||
	    !size)
		return false;
	g->at = at;
	g->size = size;
	return true;
}

static bool gil_find(struct core *core, struct dbg_session *s, struct gil *g)
{
	uint64_t runtime, size;
	return dbg_find_symbol(s, "_PyRuntime", &runtime, NULL) && gil_address(core, s, runtime, g) &&
	       dbg_member_find(s, "_gil_runtime_state", "locked", &g->locked, &size) &&
	       dbg_member_find(s, "_gil_runtime_state", "last_holder", &g->last_holder, &size) &&
	       dbg_member_find(s, "PyThreadState", "native_thread_id", &g->native_thread_id, &size);
}

/* The holder's tid, where the GIL is locked and names a thread state. */
static bool gil_holder(struct core *core, const struct gil *g, int32_t *tid)
{
	uint32_t locked;
	uint64_t tstate, id;
	if (!core_read_u32(core, g->at + g->locked, &locked) || !locked ||
	    !core_read_u64(core, g->at + g->last_holder, &tstate) || !tstate ||
	    !core_read_u64(core, tstate + g->native_thread_id, &id) || id == 0 || id >= TID_MAX)
		return false;
	*tid = (int32_t)id;
	return true;
}

/* Whether T is inside CPython's take_gil (every version names it so, its
 * inline levels too): a thread there waits for the GIL whatever its run
 * state, between two timed waits as much as in one. */
static bool in_take_gil(const struct an_thread *t)
{
	for (size_t i = 0; i < t->nframes && i < TAKE_GIL_DEPTH; i++)
		if (t->frames[i].function && !strcmp(t->frames[i].function, "take_gil"))
			return true;
	return false;
}

/* Whether T waits for the GIL G: it is in take_gil (and not its holder,
 * which is still there once it has taken it), or it waits on one of the
 * GIL's own condition variables or mutex. */
static bool waits_for_gil(const struct an_thread *t, const struct gil *g, bool held, int32_t holder)
{
	const struct an_blocked *b = t->blocked;
	if (held && holder == t->tid)
		return false;
	if (in_take_gil(t))
		return true;
	return b && (b->kind == AN_WAIT_CONDITION || b->kind == AN_WAIT_MUTEX) && b->has_object &&
	       b->object >= g->at && b->object - g->at < g->size;
}

/* T's blocked_on made the GIL's; false only when memory ran out. */
static bool gil_waiter(struct an_thread *t, const struct gil *g, struct analysis *an, bool held,
		       int32_t holder, const char *name)
{
	struct an_blocked *b = t->blocked;
	if (!b) {   /* on the CPU in take_gil: no system call */
		const char *waiter = an_waiting_function(t);
		if (!(b = calloc(1, sizeof(*b))) || (waiter && !(b->waiter = strdup(waiter)))) {
			free(b);
			return false;
		}
		b->syscall_nr = -1;
		t->blocked = b;
	}
	b->kind = AN_WAIT_GIL;
	b->object = g->at;
	b->has_object = true;
	b->via = "take_gil";
	b->has_owner = held;
	b->owner_tid = held ? holder : 0;
	b->owner_gone = held && !an_thread_by_tid(an, holder);
	free(b->object_name);
	b->object_name = name ? strdup(name) : NULL;   /* "_PyRuntime.ceval.gil" */
	return (!name || b->object_name) && an_blocked_summarize(b);
}

bool an_gil_analyze(struct core *core, struct dbg_session *s, struct analysis *an)
{
	struct gil g;
	int32_t holder = 0;
	if (!s || !gil_find(core, s, &g))
		return true;
	bool held = gil_holder(core, &g, &holder);
	char name[256];
	bool named = dbg_data_name(s, g.at, g.size, true, name, sizeof(name));
	for (size_t i = 0; i < an->nthreads; i++)
		if (waits_for_gil(&an->threads[i], &g, held, holder) &&
		    !gil_waiter(&an->threads[i], &g, an, held, holder, named ? name : NULL))
			return false;
	return true;
}
