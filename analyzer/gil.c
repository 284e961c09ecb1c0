/* CPython's GIL: where it is, whether it is held and by whom, from the
 * interpreter's own DWARF. */
#include "gil.h"

#include "blocking.h"

#include <stdlib.h>
#include <string.h>

enum { TID_MAX = 1 << 22 };

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

bool an_gil_analyze(struct core *core, struct dbg_session *s, struct analysis *an)
{
	struct gil g;
	int32_t holder = 0;
	if (!s || !gil_find(core, s, &g))
		return true;
	bool held = gil_holder(core, &g, &holder);
	char name[256];
	bool named = dbg_data_name(s, g.at, g.size, true, name, sizeof(name));
	for (size_t i = 0; i < an->nthreads; i++) {
		struct an_blocked *b = an->threads[i].blocked;
		if (!b || b->kind != AN_WAIT_CONDITION || !b->has_object || b->object < g.at ||
		    b->object - g.at >= g.size)
			continue;
		b->kind = AN_WAIT_GIL;
		b->object = g.at;
		b->via = "take_gil";
		b->has_owner = held;
		b->owner_tid = held ? holder : 0;
		b->owner_gone = held && !an_thread_by_tid(an, holder);
		free(b->object_name);
		b->object_name = named ? strdup(name) : NULL;   /* "_PyRuntime.ceval.gil" */
		if ((named && !b->object_name) || !an_blocked_summarize(b))
			return false;
	}
	return true;
}
