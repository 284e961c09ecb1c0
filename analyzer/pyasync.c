/* asyncio's pending tasks, found among the objects CPython's collector
 * tracks, each with its coroutine's await chain.
 *
 * Everything here is read from the process and untrusted: each pointer is
 * checked before it is followed, the collector's lists and the await chains
 * are bounded and cycle-checked, and a broken one ends with a warning that
 * names the address. */
#include "pyasync.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrset.h"
#include "strpool.h"
#include "../base/array.h"

enum {
	GC_OBJECTS_MAX = 1 << 22,   /* objects visited over all generations */
	TASKS_MAX = 1 << 16,
	CHAIN_MAX = 256,            /* links of one await chain */
	TYPES_MAX = 512,            /* types remembered as task or not */
	BASES_MAX = 32,             /* a type's tp_base chain */
	NAME_MAX_BYTES = 256,
	GENERATIONS_MAX = 4,        /* 3 and the permanent one */
	GC_HEAD_MAX = 32,           /* sizeof(PyGC_Head) believed */
	OB_TYPE_MAX = 32,           /* offsetof(PyObject, ob_type) believed */
	FUTURE_PENDING = 0,         /* fut_state's STATE_PENDING */
	WARN_MAX = 8,
	SOURCE_TYPES_MAX = 32
};

struct py_layout {
	uint64_t gc_head;           /* sizeof(PyGC_Head): an object follows its head */
	uint64_t gens[GENERATIONS_MAX];
	size_t ngens;
	uint64_t ob_type;           /* PyObject's */
	uint64_t tp_name, tp_base;
	uint64_t task_state, task_coro, task_name, task_fut_waiter;
	uint64_t fi_future;         /* the _asyncio.FutureIter's future */
	bool has_fi_future;
	uint64_t cr_qualname;
	uint64_t cr_iframe, cr_frame_state; /* 3.11 on: the frame inside the coroutine */
	bool iframe;
	uint64_t cr_frame;          /* before: a pointer to its PyFrameObject */
	uint64_t f_state, f_executing;  /* whether that frame runs: 3.10, 3.8-3.9 */
	bool has_f_state;
	/* the top of a suspended frame's value stack */
	uint64_t stacktop, localsplus;  /* 3.11, 3.12: an int index */
	uint64_t stackpointer;          /* 3.13 */
	uint64_t f_stacktop;            /* 3.8, 3.9 */
	uint64_t f_valuestack, f_stackdepth; /* 3.10 */
	enum { TOP_NONE, TOP_INDEX, TOP_POINTER, TOP_F_STACKTOP, TOP_DEPTH } top;
	int suspended_lo, suspended_hi; /* gi_frame_state values of a suspended frame */
	uint64_t str_header, str_length, str_state;
	uint64_t long_size, long_digits; bool long_tag; /* a 3.13 task's name is an int */
};

struct type_memo {
	uint64_t type;
	bool task;
};

/* The types whose layout came from the description, not DWARF. */
struct py_source {
	const char *file;           /* the description's; NULL: all from DWARF */
	bool own;                   /* some from the process's own offsets */
	const char *types[SOURCE_TYPES_MAX];
	unsigned ntypes;
	bool said;
};

struct py_ctx {
	struct core *core;
	struct dbg_session *s;
	struct an_runtime_session *rs;
	struct analysis *an;
	struct py_layout l;
	struct type_memo types[TYPES_MAX];
	size_t ntypes;
	struct an_task *tasks;      /* found, moved to the analysis's at the end */
	size_t ntasks, cap;
	unsigned warned;
	struct py_source source;
	bool transient;             /* the walk reads transiently */
};

/* What a task's reads (not the walk's) keep: read again at the stop. */
static void reads_kept(struct py_ctx *c, bool kept)
{
	if (c->transient)
		core_read_transient(c->core, !kept);
}

static void py_warn(struct py_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void py_warn(struct py_ctx *c, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	if (c->warned++ >= WARN_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	core_warn(c->core, "asyncio: %s", msg);
}

/* ---- layouts ------------------------------------------------------------ */

/* TYPE (a literal) came from FILE's layout, not DWARF: said once, when a
 * task is met. */
static void table_note(struct py_ctx *c, const char *type, const char *file, bool own)
{
	struct py_source *src = &c->source;
	bool known = false;
	for (unsigned i = 0; i < src->ntypes && !known; i++)
		known = strcmp(src->types[i], type) == 0;
	if (!known && src->ntypes < SOURCE_TYPES_MAX)
		src->types[src->ntypes++] = type;
	src->file = file;
	src->own = src->own || own;
}

/* Member PATH of TYPE (PATH NULL: TYPE's size): from the program's DWARF
 * where it describes TYPE, else from the CPython description's layout (3.13:
 * the process's own offsets first). */
static bool lookup(struct py_ctx *c, const char *type, const char *path, uint64_t *v)
{
	uint64_t size;
	const char *file;
	bool own;
	if (dbg_type_size(c->s, type, &size))
		return path ? dbg_member_find(c->s, type, path, v, &size) : (*v = size, true);
	if (!an_runtime_layout(c->rs, "cpython", type, path, v, &file, &own))
		return false;
	table_note(c, type, file, own);
	return true;
}

static bool m(struct py_ctx *c, const char *type, const char *path, uint64_t *off)
{
	return lookup(c, type, path, off);
}

static bool size_of(struct py_ctx *c, const char *type, uint64_t *size)
{
	return lookup(c, type, NULL, size) && *size;
}

static void warn_source(struct py_ctx *c)
{
	const struct py_source *src = &c->source;
	if (!src->file || src->said)
		return;
	c->source.said = true;
	char more[32] = "";
	if (src->ntypes > 1)
		snprintf(more, sizeof(more), " and %u more types", src->ntypes - 1);
	core_warn(c->core, "asyncio: the program's debug info does not describe %s%s; their layout is "
		  "%s's%s", src->types[0], more, src->file, src->own ? ", _PyRuntime's own offsets first" : "");
}

/* Where the collector state at BASE keeps its generations: its own
 * generation0, which points at the first, over the layout's GENS (Debian's
 * arm64 3.13 has them at 20, 4-byte aligned, where every other build has
 * 24). */
static uint64_t generations_offset(struct py_ctx *c, uint64_t base, uint64_t gens)
{
	uint64_t off, first;
	if (m(c, "_gc_runtime_state", "generation0", &off) && core_read_u64(c->core, base + off, &first) &&
	    first >= base && first < base + off && !(first & 3))
		return first - base;
	return gens;
}

/* The collector's generations: the main interpreter's (3.9 on), else the
 * runtime's (3.8). */
static bool gc_layout(struct py_ctx *c, uint64_t runtime)
{
	struct py_layout *l = &c->l;
	uint64_t main_off, interp, gc, gens, perm, gen_size, base;
	if (!size_of(c, "PyGC_Head", &l->gc_head) || l->gc_head < 16 || l->gc_head > GC_HEAD_MAX ||
	    (l->gc_head & 7) || !size_of(c, "gc_generation", &gen_size) ||
	    !m(c, "_gc_runtime_state", "generations", &gens))
		return false;
	if (!m(c, "_gc_runtime_state", "permanent_generation", &perm))
		perm = 0;
	if (m(c, "PyInterpreterState", "gc", &gc) && m(c, "_PyRuntimeState", "interpreters.main", &main_off) &&
	    core_read_u64(c->core, runtime + main_off, &interp) && interp)
		base = interp + gc;
	else if (m(c, "_PyRuntimeState", "gc", &gc))
		base = runtime + gc;
	else
		return false;
	gens = base + generations_offset(c, base, gens);
	for (unsigned i = 0; i < 3; i++)
		l->gens[l->ngens++] = gens + i * gen_size;
	if (perm)
		l->gens[l->ngens++] = base + perm;
	return true;
}

/* Where a suspended frame keeps its value stack's top, and which frame
 * states are suspended ones (3.13 added FRAME_SUSPENDED_YIELD_FROM). */
static void stack_layout(struct py_ctx *c)
{
	struct py_layout *l = &c->l;
	if (m(c, "_PyInterpreterFrame", "stackpointer", &l->stackpointer)) {
		l->top = TOP_POINTER;
		l->suspended_lo = -2, l->suspended_hi = -1;
	} else if (m(c, "_PyInterpreterFrame", "stacktop", &l->stacktop) &&
		   m(c, "_PyInterpreterFrame", "localsplus", &l->localsplus)) {
		l->top = TOP_INDEX;
		l->suspended_lo = l->suspended_hi = -1;
	} else if (m(c, "PyFrameObject", "f_stacktop", &l->f_stacktop)) {
		l->top = TOP_F_STACKTOP;
	} else if (m(c, "PyFrameObject", "f_valuestack", &l->f_valuestack) &&
		   m(c, "PyFrameObject", "f_stackdepth", &l->f_stackdepth)) {
		l->top = TOP_DEPTH;
	}
}

static bool str_layout(struct py_ctx *c)
{
	struct py_layout *l = &c->l;
	uint64_t ob_size;
	l->long_tag = m(c, "PyLongObject", "long_value.lv_tag", &l->long_size);
	if (l->long_tag) {
		if (!m(c, "PyLongObject", "long_value.ob_digit", &l->long_digits))
			l->long_digits = 0;
	} else if (m(c, "PyVarObject", "ob_size", &ob_size) &&
		   m(c, "PyLongObject", "ob_digit", &l->long_digits)) {
		l->long_size = ob_size;
	}
	return size_of(c, "PyASCIIObject", &l->str_header) &&
	       m(c, "PyASCIIObject", "length", &l->str_length) &&
	       m(c, "PyASCIIObject", "state", &l->str_state);
}

static bool layout(struct py_ctx *c)
{
	struct py_layout *l = &c->l;
	uint64_t runtime;
	if (!dbg_find_symbol(c->s, "_PyRuntime", &runtime, NULL) || !gc_layout(c, runtime) ||
	    !m(c, "PyObject", "ob_type", &l->ob_type) || l->ob_type > OB_TYPE_MAX || (l->ob_type & 7) ||
	    !m(c, "PyTypeObject", "tp_name", &l->tp_name) || !m(c, "PyTypeObject", "tp_base", &l->tp_base) ||
	    !m(c, "TaskObj", "task_state", &l->task_state) || !m(c, "TaskObj", "task_coro", &l->task_coro) ||
	    !m(c, "TaskObj", "task_name", &l->task_name) ||
	    !m(c, "TaskObj", "task_fut_waiter", &l->task_fut_waiter) ||
	    !m(c, "PyCoroObject", "cr_qualname", &l->cr_qualname) || !str_layout(c))
		return false;
	l->has_fi_future = m(c, "futureiterobject", "future", &l->fi_future);
	l->iframe = m(c, "PyCoroObject", "cr_iframe", &l->cr_iframe) &&
		    m(c, "PyCoroObject", "cr_frame_state", &l->cr_frame_state);
	if (!l->iframe && (!m(c, "PyCoroObject", "cr_frame", &l->cr_frame) ||
			   !((l->has_f_state = m(c, "PyFrameObject", "f_state", &l->f_state)) ||
			     m(c, "PyFrameObject", "f_executing", &l->f_executing))))
		return false;
	stack_layout(c);
	return true;
}

/* ---- objects ------------------------------------------------------------ */

static bool obj_type(struct py_ctx *c, uint64_t obj, uint64_t *type)
{
	return obj && !(obj & 7) && core_read_u64(c->core, obj + c->l.ob_type, type) && *type && !(*type & 7);
}

static bool type_name(struct py_ctx *c, uint64_t type, char *buf, size_t len)
{
	uint64_t name;
	return core_read_u64(c->core, type + c->l.tp_name, &name) && name &&
	       core_read_string(c->core, name, buf, len);
}

static bool obj_type_name(struct py_ctx *c, uint64_t obj, char *buf, size_t len)
{
	uint64_t type;
	return obj_type(c, obj, &type) && type_name(c, type, buf, len);
}

/* TYPE is _asyncio.Task or a class derived from it. */
static bool type_is_task(struct py_ctx *c, uint64_t type)
{
	for (size_t i = 0; i < c->ntypes; i++)
		if (c->types[i].type == type)
			return c->types[i].task;
	bool task = false;
	char name[64];
	uint64_t t = type;
	reads_kept(c, true);
	for (unsigned i = 0; t && !(t & 7) && i < BASES_MAX && !task; i++) {
		task = type_name(c, t, name, sizeof(name)) && strcmp(name, "_asyncio.Task") == 0;
		if (task)
			warn_source(c);
		if (!core_read_u64(c->core, t + c->l.tp_base, &t))
			break;
	}
	reads_kept(c, false);
	if (c->ntypes < TYPES_MAX)
		c->types[c->ntypes++] = (struct type_memo){ type, task };
	return task;
}

/* The text of a str (compact: ASCII, or latin-1 shown as '?' past 0x7f). */
static bool str_text(struct py_ctx *c, uint64_t obj, char *buf, size_t len)
{
	char tn[16];
	uint64_t n;
	uint32_t state;
	if (!obj_type_name(c, obj, tn, sizeof(tn)) || strcmp(tn, "str") != 0 ||
	    !core_read_u64(c->core, obj + c->l.str_length, &n) ||
	    !core_read_u32(c->core, obj + c->l.str_state, &state) || (state & 0x60) != 0x60)
		return false;
	if (n >= len)
		n = len - 1;
	if (!core_read_bytes(c->core, obj + c->l.str_header, buf, n))
		return false;
	buf[n] = 0;
	return true;
}

/* A 3.13 task's name before it is asked for: its number ("Task-7"). */
static bool name_number(struct py_ctx *c, uint64_t obj, char *buf, size_t len)
{
	char tn[16];
	uint64_t size;
	uint32_t digit;
	if (!c->l.long_digits || !obj_type_name(c, obj, tn, sizeof(tn)) || strcmp(tn, "int") != 0 ||
	    !core_read_u64(c->core, obj + c->l.long_size, &size) ||
	    !core_read_u32(c->core, obj + c->l.long_digits, &digit))
		return false;
	size = c->l.long_tag ? size >> 3 : size;
	if (size != 1)
		return false;
	snprintf(buf, len, "Task-%" PRIu32, digit & 0x3fffffffu);
	return true;
}

/* ---- one task ----------------------------------------------------------- */

struct chain {
	struct an_frame *frames;    /* outermost first while built */
	size_t n, cap;
	uint64_t awaited;           /* the innermost object awaited, 0: none */
	bool running;               /* the task's coroutine runs (it blocks the loop) */
	char awaited_type[64];
};

/* The frame of the coroutine or generator OBJ (0: none, it is done), and
 * whether it is suspended (so that the top of its stack is what it awaits)
 * or running. */
static uint64_t coro_frame(struct py_ctx *c, uint64_t obj, bool *suspended, bool *running)
{
	const struct py_layout *l = &c->l;
	int8_t state;
	uint64_t f;
	*suspended = *running = false;
	if (l->iframe) {
		if (!core_read_bytes(c->core, obj + l->cr_frame_state, &state, 1))
			return 0;
		*suspended = state >= l->suspended_lo && state <= l->suspended_hi;
		*running = state == 0;      /* FRAME_EXECUTING */
		return *suspended || *running ? obj + l->cr_iframe : 0;
	}
	if (!core_read_u64(c->core, obj + l->cr_frame, &f) || !f || (f & 7))
		return 0;
	/* 3.10's f_state (FRAME_EXECUTING 0, SUSPENDED -1); 3.8, 3.9's
	 * f_executing */
	if (l->has_f_state && core_read_bytes(c->core, f + l->f_state, &state, 1))
		*running = state == 0;
	else if (!l->has_f_state && core_read_bytes(c->core, f + l->f_executing, &state, 1))
		*running = state != 0;
	*suspended = !*running;
	return f;
}

/* The object on top of the suspended FRAME's value stack (what it awaits),
 * or 0. */
static uint64_t stack_top(struct py_ctx *c, uint64_t frame)
{
	const struct py_layout *l = &c->l;
	uint64_t top = 0, obj = 0;
	int32_t index;
	switch (l->top) {
	case TOP_INDEX:
		if (core_read_u32(c->core, frame + l->stacktop, (uint32_t *)&index) && index > 0)
			top = frame + l->localsplus + (uint64_t)index * 8;
		break;
	case TOP_POINTER:
		core_read_u64(c->core, frame + l->stackpointer, &top);
		break;
	case TOP_F_STACKTOP:
		core_read_u64(c->core, frame + l->f_stacktop, &top);
		break;
	case TOP_DEPTH:
		if (core_read_u64(c->core, frame + l->f_valuestack, &top) &&
		    core_read_u32(c->core, frame + l->f_stackdepth, (uint32_t *)&index) && index > 0)
			top += (uint64_t)index * 8;
		else
			top = 0;
		break;
	case TOP_NONE:
		break;
	}
	if (!top || (top & 7) || !core_read_u64(c->core, top - 8, &obj) || (obj & 7))
		return 0;
	return obj;
}

static bool push_frame(struct py_ctx *c, struct chain *ch, uint64_t frame, uint64_t task)
{
	char context[64];
	struct an_frame f;
	snprintf(context, sizeof(context), "asyncio task 0x%" PRIx64, task);
	if (!an_runtime_entry_frame(c->rs, "cpython", frame, context, &f))
		return true;
	struct an_frame *slot = base_array_push(&ch->frames, &ch->n, &ch->cap, sizeof(*ch->frames));
	if (!slot) {
		an_frame_deinit(&f);
		return false;
	}
	*slot = f;
	return true;
}

/* From the task's coroutine through what each awaits: the frames of the
 * coroutines and generators, then the object awaited last. */
static bool await_chain(struct py_ctx *c, uint64_t task, uint64_t coro, struct chain *ch)
{
	struct an_addr_set seen = { 0 };
	uint64_t obj = coro;
	bool ok = true;
	char tn[64];
	for (unsigned i = 0; obj && ok; i++) {
		if (i == CHAIN_MAX || an_addr_set_has(&seen, obj)) {
			py_warn(c, "task 0x%" PRIx64 ": the await chain %s at 0x%" PRIx64 "; cut there", task,
				i == CHAIN_MAX ? "is too long" : "repeats (a cycle)", obj);
			break;
		}
		if (an_addr_set_add(&seen, obj) < 0 || !obj_type_name(c, obj, tn, sizeof(tn))) {
			if (i)
				py_warn(c, "task 0x%" PRIx64 ": the object 0x%" PRIx64 " it awaits has no "
					"readable type; the chain is cut there", task, obj);
			break;
		}
		if (strcmp(tn, "coroutine") == 0 || strcmp(tn, "generator") == 0) {
			bool suspended, running;
			uint64_t frame = coro_frame(c, obj, &suspended, &running);
			ch->running = ch->running || (i == 0 && running);
			ok = !frame || push_frame(c, ch, frame, task);
			obj = frame && suspended ? stack_top(c, frame) : 0;
			continue;
		}
		if (strcmp(tn, "_asyncio.FutureIter") == 0 && c->l.has_fi_future) {
			if (!core_read_u64(c->core, obj + c->l.fi_future, &obj))
				obj = 0;
			continue;
		}
		ch->awaited = obj;
		snprintf(ch->awaited_type, sizeof(ch->awaited_type), "%s",
			 strncmp(tn, "_asyncio.", 9) == 0 ? tn + 9 : tn);
		break;
	}
	an_addr_set_deinit(&seen);
	return ok;
}

static bool fill_wait(struct py_ctx *c, struct an_task *t, uint64_t obj, const struct chain *ch)
{
	uint64_t waiter = 0, type;
	char kind[96];
	core_read_u64(c->core, obj + c->l.task_fut_waiter, &waiter);
	uint64_t awaited = ch->awaited ? ch->awaited : waiter;
	if (!awaited)
		return true;
	if (ch->awaited)
		snprintf(kind, sizeof(kind), "%s", ch->awaited_type);
	else if (!obj_type_name(c, awaited, kind, sizeof(kind)))
		snprintf(kind, sizeof(kind), "future");
	else if (strncmp(kind, "_asyncio.", 9) == 0)
		memmove(kind, kind + 9, strlen(kind + 9) + 1);
	int nomem = 0;
	t->wait_kind = an_strpool_intern(c->an->strings, kind, &nomem);
	t->wait_address = awaited;
	t->has_wait_address = true;
	if (obj_type(c, awaited, &type) && type_is_task(c, type)) {
		t->wait_target = awaited;
		t->has_wait_target = true;
	}
	return !nomem;
}

static bool task_name(struct py_ctx *c, struct an_task *t, uint64_t obj)
{
	char buf[NAME_MAX_BYTES];
	uint64_t name;
	if (!core_read_u64(c->core, obj + c->l.task_name, &name) ||
	    !(str_text(c, name, buf, sizeof(buf)) || name_number(c, name, buf, sizeof(buf))))
		return true;
	t->name = strdup(buf);
	return t->name != NULL;
}

/* The task at OBJ, when it is pending. */
static bool add_task(struct py_ctx *c, uint64_t obj)
{
	uint32_t state;
	uint64_t coro, qualname;
	char buf[NAME_MAX_BYTES];
	if (!core_read_u32(c->core, obj + c->l.task_state, &state) || state != FUTURE_PENDING)
		return true;
	if (c->ntasks == TASKS_MAX) {
		py_warn(c, "more than %u pending tasks; the rest are not listed", TASKS_MAX);
		return true;
	}
	struct an_task *t = base_array_push(&c->tasks, &c->ntasks, &c->cap, sizeof(*t));
	if (!t)
		return false;
	t->runtime = "asyncio";
	t->id = t->address = obj;
	t->state = AN_TASK_SUSPENDED;
	struct chain ch = { 0 };
	bool ok = task_name(c, t, obj);
	if (ok && core_read_u64(c->core, obj + c->l.task_coro, &coro) && coro) {
		if (core_read_u64(c->core, coro + c->l.cr_qualname, &qualname) &&
		    str_text(c, qualname, buf, sizeof(buf)) && !(t->fn = strdup(buf)))
			ok = false;
		ok = ok && await_chain(c, obj, coro, &ch);
	}
	if (ch.running)
		t->state = AN_TASK_RUNNING;
	else
		ok = ok && fill_wait(c, t, obj, &ch);
	/* innermost first */
	for (size_t i = 0; i < ch.n / 2; i++) {
		struct an_frame f = ch.frames[i];
		ch.frames[i] = ch.frames[ch.n - 1 - i];
		ch.frames[ch.n - 1 - i] = f;
	}
	t->frames = ch.frames;
	t->nframes = ch.n;
	if (!ch.n && !(t->unwind_error = strdup("its coroutine's frames are not readable")))
		ok = false;
	return ok;
}

/* ---- the collector's lists ---------------------------------------------- */

/* One node of a collector's list and the type of the object after it,
 * in one read. */
struct gc_node {
	uint64_t next, prev, type;
};

static bool gc_read(struct py_ctx *c, uint64_t node, struct gc_node *n)
{
	uint64_t w[(GC_HEAD_MAX + OB_TYPE_MAX) / 8 + 1];
	size_t words = (c->l.gc_head + c->l.ob_type) / 8;
	if (!core_read_bytes(c->core, node, w, (words + 1) * 8))
		return false;
	n->next = w[0] & ~(uint64_t)3;      /* low bits: flags during a collection */
	n->prev = w[1] & ~(uint64_t)3;
	n->type = w[words];
	return true;
}

/* A generation's list from its head: each node must link back to the one
 * before it (the lists are doubly linked), so that a list of garbage or a
 * cycle ends the walk. */
static bool walk_generation(struct py_ctx *c, unsigned gen, uint64_t head, uint64_t *visited)
{
	uint64_t prev = head, node;
	struct gc_node n;
	if (!core_read_u64(c->core, head, &node)) {
		py_warn(c, "the collector's generation %u at 0x%" PRIx64 " is not readable", gen, head);
		return true;
	}
	for (node &= ~(uint64_t)3; node != head; (*visited)++) {
		if (*visited == GC_OBJECTS_MAX) {
			py_warn(c, "more than %u objects tracked; generation %u is cut at 0x%" PRIx64,
				GC_OBJECTS_MAX, gen, node);
			return true;
		}
		bool read = node && !(node & 7) && gc_read(c, node, &n);
		if (!read || n.prev != prev) {
			py_warn(c, "generation %u's list is cut at 0x%" PRIx64 ": the next object 0x%" PRIx64
				" %s", gen, prev, node, read ? "does not link back" : "is not readable");
			return true;
		}
		if (n.type && !(n.type & 7) && type_is_task(c, n.type)) {
			reads_kept(c, true);
			bool ok = add_task(c, node + c->l.gc_head);
			reads_kept(c, false);
			if (!ok)
				return false;
		}
		prev = node;
		node = n.next;
	}
	return true;
}

static int task_cmp(const void *a, const void *b);

/* The tasks found appended to the analysis's, by address; false when
 * memory ran out (they are freed). */
static bool tasks_move(struct py_ctx *c)
{
	struct analysis *an = c->an;
	if (!c->ntasks)
		return true;
	struct an_task *v = realloc(an->tasks, (an->ntasks + c->ntasks) * sizeof(*v));
	if (!v) {
		for (size_t i = 0; i < c->ntasks; i++) {
			for (size_t j = 0; j < c->tasks[i].nframes; j++)
				an_frame_deinit(&c->tasks[i].frames[j]);
			free(c->tasks[i].frames);
			free(c->tasks[i].fn);
			free(c->tasks[i].name);
			free(c->tasks[i].unwind_error);
		}
		free(c->tasks);
		return false;
	}
	qsort(c->tasks, c->ntasks, sizeof(*c->tasks), task_cmp);
	memcpy(v + an->ntasks, c->tasks, c->ntasks * sizeof(*v));
	an->tasks = v;
	an->ntasks += c->ntasks;
	free(c->tasks);
	return true;
}

static int task_cmp(const void *a, const void *b)
{
	const struct an_task *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The tasks among the objects at KNOWN (found before), without a walk. */
static bool known_tasks(struct py_ctx *c, const uint64_t *known, size_t n)
{
	uint64_t type;
	for (size_t i = 0; i < n; i++)
		if (obj_type(c, known[i], &type) && type_is_task(c, type) && !add_task(c, known[i]))
			return false;
	return true;
}

bool an_asyncio_tasks(struct core *core, struct dbg_session *s, struct an_runtime_session *rs,
		      const struct an_asyncio_scope *scope, struct analysis *an)
{
	uint64_t init, size;
	/* no _asyncio (its extension module, or built in): no task to look for
	 * among the collector's objects */
	if (!s || !rs || !dbg_find_symbol(s, "PyInit__asyncio", &init, &size))
		return true;
	struct py_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return false;
	*c = (struct py_ctx){ .core = core, .s = s, .rs = rs, .an = an };
	bool ok = true;
	bool laid = layout(c);
	if (laid && scope && scope->known_only) {
		ok = known_tasks(c, scope->known, scope->nknown);
	} else if (laid) {
		uint64_t visited = 0;
		c->transient = scope && scope->transient;
		reads_kept(c, false);
		for (size_t i = 0; i < c->l.ngens && ok; i++)
			ok = walk_generation(c, (unsigned)i, c->l.gens[i], &visited);
		reads_kept(c, true);
	}
	ok = tasks_move(c) && ok;
	if (c->warned > WARN_MAX)
		core_warn(core, "asyncio: %u more problems", c->warned - WARN_MAX);
	free(c);
	return ok;
}
