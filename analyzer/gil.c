/* CPython's GIL: where it is, whether it is held and by whom, from the
 * interpreter's own DWARF. */
#include "gil.h"

#include "blocking.h"
#include "pthreads.h"

#include <stdlib.h>
#include <string.h>

enum { TID_MAX = 1 << 22, GILS_MAX = 16, INTERPS_MAX = 256, TAKE_GIL_DEPTH = 16 };

/* The members read, as this interpreter lays them out. */
struct gil_layout {
	uint64_t size;              /* of struct _gil_runtime_state */
	uint64_t locked, last_holder;   /* its members' offsets */
	uint64_t enabled;           /* 3.13's (a free-threading build's GIL may
				       be off) */
	bool has_enabled;
	uint64_t native_thread_id;  /* PyThreadState's, 3.11 on */
	bool has_native;
	uint64_t thread_id;         /* PyThreadState's pthread_t, before */
	uint64_t pthread_tid;       /* glibc struct pthread's tid */
};

struct gil {
	uint64_t at;
	bool held;
	int32_t holder;
};

struct gils {
	struct gil v[GILS_MAX];
	size_t n;
};

static void gil_add(struct gils *gs, uint64_t at)
{
	if (!at || (at & 7) || gs->n == GILS_MAX)
		return;
	for (size_t i = 0; i < gs->n; i++)
		if (gs->v[i].at == at)
			return;
	gs->v[gs->n++].at = at;
}

/* 3.12 on: each interpreter's ceval.gil points to the GIL it uses (a
 * sub-interpreter shares the main one's unless it has its own). */
static void gil_per_interpreter(struct core *core, struct dbg_session *s, uint64_t runtime,
				struct gils *gs)
{
	uint64_t head_off, next_off, gil_off, size, interp;
	if (!dbg_member_find(s, "_PyRuntimeState", "interpreters.head", &head_off, &size) || size != 8 ||
	    !dbg_member_find(s, "PyInterpreterState", "next", &next_off, &size) || size != 8 ||
	    !dbg_member_find(s, "PyInterpreterState", "ceval.gil", &gil_off, &size) || size != 8 ||
	    !core_read_u64(core, runtime + head_off, &interp))
		return;
	for (unsigned i = 0; interp && !(interp & 7) && i < INTERPS_MAX; i++) {
		uint64_t at;
		if (core_read_u64(core, interp + gil_off, &at))
			gil_add(gs, at);
		if (!core_read_u64(core, interp + next_off, &interp))
			break;
	}
}

/* Where the GILs are: embedded in _PyRuntime (3.8-3.11), else pointed to
 * by the interpreters (3.12 on). */
static bool gil_find(struct core *core, struct dbg_session *s, struct gil_layout *l, struct gils *gs)
{
	uint64_t runtime, off, size;
	if (!dbg_find_symbol(s, "_PyRuntime", &runtime, NULL))
		return false;
	if (dbg_member_find(s, "_PyRuntimeState", "ceval.gil", &off, &size) && size > 8) {
		l->size = size;
		gil_add(gs, runtime + off);
	} else if (dbg_type_size(s, "_gil_runtime_state", &l->size) && l->size) {
		gil_per_interpreter(core, s, runtime, gs);
	}
	l->has_enabled = dbg_member_find(s, "_gil_runtime_state", "enabled", &l->enabled, &size);
	l->has_native = dbg_member_find(s, "PyThreadState", "native_thread_id", &l->native_thread_id, &size);
	struct an_pthread_layout pl;
	an_pthread_layout(s, &pl);
	l->pthread_tid = pl.tid;
	return gs->n && dbg_member_find(s, "_gil_runtime_state", "locked", &l->locked, &size) &&
	       dbg_member_find(s, "_gil_runtime_state", "last_holder", &l->last_holder, &size) &&
	       (l->has_native || dbg_member_find(s, "PyThreadState", "thread_id", &l->thread_id, &size));
}

/* The OS thread of the thread state at TSTATE: its native_thread_id (3.11
 * on), else the tid of the struct pthread its thread_id is. */
static bool tstate_tid(struct core *core, const struct gil_layout *l, uint64_t tstate, int32_t *tid)
{
	uint64_t id, pthread;
	uint32_t id32;
	if (l->has_native) {
		if (!core_read_u64(core, tstate + l->native_thread_id, &id))
			return false;
	} else {
		if (!core_read_u64(core, tstate + l->thread_id, &pthread) || !pthread ||
		    !core_read_u32(core, pthread + l->pthread_tid, &id32))
			return false;
		id = id32;
	}
	if (id == 0 || id >= TID_MAX)
		return false;
	*tid = (int32_t)id;
	return true;
}

/* Whether G is locked, and by whom (a thread state naming its OS thread). */
static void gil_holder(struct core *core, const struct gil_layout *l, struct gil *g)
{
	uint32_t locked, enabled;
	uint64_t tstate;
	g->held = (!l->has_enabled || (core_read_u32(core, g->at + l->enabled, &enabled) && enabled)) &&
		  core_read_u32(core, g->at + l->locked, &locked) && locked &&
		  core_read_u64(core, g->at + l->last_holder, &tstate) && tstate && !(tstate & 7) &&
		  tstate_tid(core, l, tstate, &g->holder);
}

static const struct gil *gil_of(const struct gils *gs, const struct gil_layout *l, uint64_t object)
{
	for (size_t i = 0; i < gs->n; i++)
		if (object >= gs->v[i].at && object - gs->v[i].at < l->size)
			return &gs->v[i];
	return NULL;
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

/* The GIL T waits for, or NULL: the one whose own condition variable or
 * mutex it waits on, else, where the process has one GIL, that one when T
 * is in take_gil (and is not its holder, still there once it has taken
 * it). */
static const struct gil *gil_waited(const struct an_thread *t, const struct gils *gs,
				    const struct gil_layout *l)
{
	const struct an_blocked *b = t->blocked;
	const struct gil *g;
	if (b && (b->kind == AN_WAIT_CONDITION || b->kind == AN_WAIT_MUTEX) && b->has_object &&
	    (g = gil_of(gs, l, b->object)))
		return g->held && g->holder == t->tid ? NULL : g;
	if (gs->n != 1 || !in_take_gil(t))
		return NULL;
	g = &gs->v[0];
	return g->held && g->holder == t->tid ? NULL : g;
}

/* T's blocked_on made the GIL G's; false only when memory ran out. */
static bool gil_waiter(struct dbg_session *s, struct analysis *an, const struct gil_layout *l,
		       const struct gil *g, struct an_thread *t)
{
	struct an_blocked *b = t->blocked;
	char name[256];
	bool named = dbg_data_name(s, g->at, l->size, true, name, sizeof(name));
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
	/* take_gil's timed waits end every switch interval: the last is not
	 * the wait for the GIL */
	b->has_since = false;
	b->since = 0;
	b->object = g->at;
	b->has_object = true;
	b->via = "take_gil";
	b->has_owner = g->held;
	b->owner_tid = g->held ? g->holder : 0;
	b->owner_gone = g->held && !an_thread_by_tid(an, g->holder);
	free(b->object_name);
	b->object_name = named ? strdup(name) : NULL;   /* "_PyRuntime.ceval.gil" */
	return (!named || b->object_name) && an_blocked_summarize(b);
}

bool an_gil_analyze(struct core *core, struct dbg_session *s, struct analysis *an)
{
	struct gil_layout l;
	struct gils gs = { .n = 0 };
	memset(&l, 0, sizeof(l));
	if (!s || !gil_find(core, s, &l, &gs))
		return true;
	for (size_t i = 0; i < gs.n; i++)
		gil_holder(core, &l, &gs.v[i]);
	for (size_t i = 0; i < an->nthreads; i++) {
		const struct gil *g = gil_waited(&an->threads[i], &gs, &l);
		if (g && !gil_waiter(s, an, &l, g, &an->threads[i]))
			return false;
	}
	return true;
}
