#include "analysis.h"
#include "strpool.h"
#include "../dwarf/dwarf.h"

#include <stdlib.h>
#include <string.h>

struct analysis *an_analysis_create(void)
{
	return calloc(1, sizeof(struct analysis));
}

_Static_assert(AN_THREAD_NREGS == CORE_MAX_REGS && AN_FRAME_NREGS == CORE_MAX_DWARF_REGS,
	       "registers follow corefile's architecture tables");

const char *an_thread_reg_name(const char *arch, unsigned n)
{
	return core_arch_reg_name(core_arch_by_name(arch), n);
}

const char *an_reg_role_name(const char *arch, enum an_reg_role role)
{
	const struct core_arch *a = core_arch_by_name(arch);
	unsigned n = role == AN_ROLE_PC ? a->reg_pc : role == AN_ROLE_SP ? a->reg_sp
		   : role == AN_ROLE_FP ? a->reg_fp : a->reg_tp;
	return core_arch_reg_name(a, n);
}

unsigned an_frame_nregs(const char *arch)
{
	return core_arch_by_name(arch)->ndwarf_regs;
}

const char *an_frame_reg_name(const char *arch, unsigned n)
{
	return core_arch_dwarf_name(core_arch_by_name(arch), n);
}

const char *an_frame_kind_name(enum an_frame_kind kind)
{
	switch (kind) {
	case AN_FRAME_NATIVE:
		return "native";
	case AN_FRAME_ASYNC:
		return "async";
	case AN_FRAME_SCRIPT:
		return "script";
	case AN_FRAME_LABEL:
		return "label";
	}
	return "native";
}

/* The index of NAME among the N NAMES (each enum value's name, NULL for one
 * without), DFLT for NULL or a name none has: how each _parse() below reads
 * its _name() back. */
static int name_index(const char *const *names, size_t n, const char *name, int dflt)
{
	for (size_t i = 0; name && i < n; i++)
		if (names[i] && strcmp(names[i], name) == 0)
			return (int)i;
	return dflt;
}

static const char *const cause_kind_names[] = {
	[AN_CAUSE_SIGNAL] = "signal", [AN_CAUSE_STACK_OVERFLOW] = "stack_overflow",
	[AN_CAUSE_NULL_DEREFERENCE] = "null_dereference", [AN_CAUSE_BAD_JUMP] = "bad_jump",
	[AN_CAUSE_UNCAUGHT_EXCEPTION] = "uncaught_exception", [AN_CAUSE_ASSERTION] = "assertion",
	[AN_CAUSE_ABORT] = "abort", [AN_CAUSE_STACK_SMASHING] = "stack_smashing",
	[AN_CAUSE_HEAP_CORRUPTION] = "heap_corruption", [AN_CAUSE_BAD_ACCESS] = "bad_access",
	[AN_CAUSE_ILLEGAL_INSTRUCTION] = "illegal_instruction",
	[AN_CAUSE_ARITHMETIC] = "arithmetic", [AN_CAUSE_HANG] = "hang",
	[AN_CAUSE_DEADLOCK] = "deadlock",
	[AN_CAUSE_OOM] = "oom",
};

static const char *const wait_kind_names[] = {
	[AN_WAIT_MUTEX] = "mutex", [AN_WAIT_RWLOCK] = "rwlock", [AN_WAIT_JOIN] = "join",
	[AN_WAIT_CONDITION] = "condition", [AN_WAIT_SEMAPHORE] = "semaphore",
	[AN_WAIT_BARRIER] = "barrier", [AN_WAIT_FUTEX] = "futex", [AN_WAIT_IO] = "io",
	[AN_WAIT_SLEEP] = "sleep", [AN_WAIT_WAIT] = "wait", [AN_WAIT_SYSCALL] = "syscall",
	[AN_WAIT_GIL] = "gil",
};

const char *an_wait_kind_name(enum an_wait_kind kind)
{
	size_t n = sizeof(wait_kind_names) / sizeof(wait_kind_names[0]);
	return (unsigned)kind < n ? wait_kind_names[kind] : "syscall";
}

enum an_wait_kind an_wait_kind_parse(const char *name)
{
	size_t n = sizeof(wait_kind_names) / sizeof(wait_kind_names[0]);
	return (enum an_wait_kind)name_index(wait_kind_names, n, name, AN_WAIT_SYSCALL);
}

void an_blocked_destroy(struct an_blocked *b)
{
	if (!b)
		return;
	free(b->object_name);
	free(b->fd_target);
	free(b->waiter);
	free(b->summary);
	free(b);
}

const char *an_cause_kind_name(enum an_cause_kind kind)
{
	size_t n = sizeof(cause_kind_names) / sizeof(cause_kind_names[0]);
	return (unsigned)kind < n ? cause_kind_names[kind] : "signal";
}

enum an_cause_kind an_cause_kind_parse(const char *name)
{
	size_t n = sizeof(cause_kind_names) / sizeof(cause_kind_names[0]);
	return (enum an_cause_kind)name_index(cause_kind_names, n, name, AN_CAUSE_SIGNAL);
}

enum an_frame_kind an_frame_kind_parse(const char *name)
{
	static const enum an_frame_kind kinds[] = {AN_FRAME_ASYNC, AN_FRAME_SCRIPT, AN_FRAME_LABEL};
	for (size_t i = 0; name && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(name, an_frame_kind_name(kinds[i])) == 0)
			return kinds[i];
	return AN_FRAME_NATIVE;
}

static const char *const frame_role_names[] = {
	[AN_FRAME_PLAIN] = NULL, [AN_FRAME_HANDLER] = "crash_handler",
	[AN_FRAME_TRAMPOLINE] = "trampoline", [AN_FRAME_CRASH_SITE] = "crash_site",
};

const char *an_frame_role_name(enum an_frame_role role)
{
	size_t n = sizeof(frame_role_names) / sizeof(frame_role_names[0]);
	return (unsigned)role < n ? frame_role_names[role] : NULL;
}

enum an_frame_role an_frame_role_parse(const char *name)
{
	size_t n = sizeof(frame_role_names) / sizeof(frame_role_names[0]);
	return (enum an_frame_role)name_index(frame_role_names, n, name, AN_FRAME_PLAIN);
}

static const char *const handler_action_names[] = {
	[AN_HANDLER_RERAISED] = "re-raised", [AN_HANDLER_ABORTED] = "aborted",
	[AN_HANDLER_EXITED] = "exited", [AN_HANDLER_FAULTED] = "faulted",
	[AN_HANDLER_RUNNING] = "running",
};

const char *an_handler_action_name(enum an_handler_action action)
{
	size_t n = sizeof(handler_action_names) / sizeof(handler_action_names[0]);
	return (unsigned)action < n ? handler_action_names[action] : "re-raised";
}

enum an_handler_action an_handler_action_parse(const char *name)
{
	size_t n = sizeof(handler_action_names) / sizeof(handler_action_names[0]);
	return (enum an_handler_action)name_index(handler_action_names, n, name, AN_HANDLER_RERAISED);
}

size_t an_crashing_thread(const struct analysis *an)
{
	for (size_t i = 0; i < an->nthreads; i++)
		if (an->threads[i].crashing)
			return i;
	for (size_t i = 0; i < an->nthreads; i++)
		if (an->threads[i].tid == an->crashing_tid)
			return i;
	return 0;   /* the first, or nthreads (0) when there is none */
}

char *an_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

void an_frame_deinit(struct an_frame *frame)
{
	if (!frame->pooled) {
		free(frame->function);
		free(frame->module);
		free(frame->file);
	}
	free(frame->display);
	free(frame->runtime);
	free(frame->detail);
	an_args_release(frame->args);
	an_args_release(frame->locals);
	an_regs_release(frame->regs);
}

/* A register block: its holders, then its values. */
uint64_t *an_regs_pack(const uint64_t *regs, uint32_t known)
{
	if (!known)
		return NULL;
	uint64_t *block = malloc((1 + (size_t)__builtin_popcount(known)) * sizeof(*block));
	if (!block)
		return NULL;
	block[0] = 1;
	size_t k = 1;
	for (unsigned n = 0; n < AN_FRAME_NREGS; n++)
		if (known & (1u << n))
			block[k++] = regs[n];
	return block + 1;
}

uint64_t *an_regs_share(uint64_t *regs)
{
	if (regs)
		regs[-1]++;
	return regs;
}

void an_regs_release(uint64_t *regs)
{
	if (regs && --regs[-1] == 0)
		free(regs - 1);
}

bool an_frame_reg(const struct an_frame *f, unsigned n, uint64_t *value)
{
	if (n >= AN_FRAME_NREGS || !f->regs || !(f->regs_known & (1u << n)))
		return false;
	*value = f->regs[__builtin_popcount(f->regs_known & ((1u << n) - 1))];
	return true;
}

/* What precedes a block of arguments: its holders. */
union args_header {
	size_t holders;
	max_align_t align;
};

struct an_arg *an_args_share(struct an_arg *args)
{
	if (args)
		((union args_header *)args - 1)->holders++;
	return args;
}

void an_args_release(struct an_arg *args)
{
	union args_header *h = args ? (union args_header *)args - 1 : NULL;
	if (h && --h->holders == 0)
		free(h);
}

/* An entry value equal to the value is kept once. */
static bool same_text(const char *a, const char *b)
{
	return a && b && (a == b || strcmp(a, b) == 0);
}

static size_t text_size(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

/* Copy S (may be NULL) to *AT, advancing it. */
static char *text_copy(const char *s, char **at)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *copy = memcpy(*at, s, n);
	*at += n;
	return copy;
}

struct an_arg *an_args_pack(const struct an_arg *args, size_t n)
{
	size_t total = sizeof(union args_header) + n * sizeof(*args);
	for (size_t i = 0; i < n; i++)
		total += text_size(args[i].name) + text_size(args[i].type) + text_size(args[i].value) +
			 (same_text(args[i].entry_value, args[i].value) ? 0 : text_size(args[i].entry_value));
	union args_header *h = malloc(total);
	if (!h)
		return NULL;
	h->holders = 1;
	struct an_arg *block = (struct an_arg *)(h + 1);
	char *at = (char *)(block + n);
	for (size_t i = 0; i < n; i++) {
		block[i].name = text_copy(args[i].name, &at);
		block[i].type = text_copy(args[i].type, &at);
		block[i].value = text_copy(args[i].value, &at);
		block[i].entry_value = same_text(args[i].entry_value, args[i].value) ? block[i].value
				       : text_copy(args[i].entry_value, &at);
		block[i].entry_equal = args[i].entry_equal;
	}
	return block;
}

void an_event_deinit(struct an_event *event)
{
	free(event->location);
	free(event->function);
	free(event->format);
	free(event->message);
	free(event->library_message);
}

static void frames_free(struct an_frame *frames, size_t n)
{
	for (size_t i = 0; i < n; i++)
		an_frame_deinit(&frames[i]);
	free(frames);
}

static const char *const task_state_names[] = {
	"running", "ready", "suspended", "created", "runnable", "syscall", "waiting", "preempted", "idle"
};

const char *an_task_state_name(enum an_task_state state)
{
	size_t n = sizeof(task_state_names) / sizeof(task_state_names[0]);
	return (unsigned)state < n ? task_state_names[state] : "?";
}

enum an_task_state an_task_state_parse(const char *name)
{
	size_t n = sizeof(task_state_names) / sizeof(task_state_names[0]);
	return (enum an_task_state)name_index(task_state_names, n, name, AN_TASK_SUSPENDED);
}

static void recorder_deinit(struct an_recorder *r)
{
	free(r->name);
	free(r->layout);
	for (size_t i = 0; i < r->nevents; i++)
		an_event_deinit(&r->events[i]);
	free(r->events);
}

void an_analysis_destroy(struct analysis *an)
{
	if (!an)
		return;
	free(an->core_path);
	free(an->core_sha256);
	free(an->core_fingerprint);
	free(an->crashed_at);
	free(an->taken_at);
	free(an->boot_id);
	free(an->unit);
	free(an->cmdline);
	free(an->executable);
	free(an->build_id);
	for (size_t i = 0; i < an->nannotations; i++) {
		free(an->annotations[i].name);
		free(an->annotations[i].value);
	}
	free(an->annotations);
	free(an->abort_message);
	free(an->caught.handler);
	free(an->go.message);
	free(an->go.value_type);
	free(an->go.signal_line);
	free(an->js.type);
	free(an->js.message);
	free(an->js.thrown_in);
	free(an->js.thrown_at);
	free(an->cause.summary);
	free(an->cause.exception_type);
	free(an->cause.exception_what);
	free(an->cause.expression);
	for (size_t i = 0; i < an->nmodules; i++) {
		free(an->modules[i].path);
		free(an->modules[i].build_id);
		free(an->modules[i].debuginfo);
	}
	free(an->modules);
	for (size_t i = 0; i < an->nthreads; i++) {
		frames_free(an->threads[i].frames, an->threads[i].nframes);
		free(an->threads[i].unwind_error);
		an_recursion_destroy(an->threads[i].recursion);
		an_blocked_destroy(an->threads[i].blocked);
		free(an->threads[i].name);
	}
	free(an->threads);
	for (size_t i = 0; i < an->ndeadlocks; i++) {
		free(an->deadlocks[i].threads);
		free(an->deadlocks[i].objects);
		free(an->deadlocks[i].summary);
	}
	free(an->deadlocks);
	for (size_t i = 0; i < an->nfds; i++)
		free(an->fds[i].target);
	free(an->fds);
	for (size_t i = 0; i < an->nsuspended; i++)
		frames_free(an->suspended[i].frames, an->suspended[i].nframes);
	free(an->suspended);
	for (size_t i = 0; i < an->ntasks; i++) {
		frames_free(an->tasks[i].frames, an->tasks[i].nframes);
		free(an->tasks[i].fn);
		free(an->tasks[i].name);
		free(an->tasks[i].unwind_error);
		free(an->tasks[i].wait_summary);
		free(an->tasks[i].wait_object_name);
	}
	free(an->tasks);
	free(an->runtime_stacks);
	for (size_t i = 0; i < an->nrecorders; i++)
		recorder_deinit(&an->recorders[i]);
	free(an->recorders);
	free(an->timeline);
	free(an->signature);
	free(an->signature_hash);
	for (size_t i = 0; i < an->nwarnings; i++)
		free(an->warnings[i]);
	free(an->warnings);
	an_strpool_destroy(an->strings);   /* after every frame that used it */
	free(an);
}

size_t an_thread_frame_index(const struct an_thread *t, size_t i)
{
	const struct an_index_gap gap = an_thread_index_gap(t);
	return an_index_gap_index(&gap, i);
}

struct an_index_gap an_thread_index_gap(const struct an_thread *t)
{
	const struct an_recursion *r = t->recursion;
	return r ? (struct an_index_gap){r->first, r->last - r->first + 1} : (struct an_index_gap){0, 0};
}

size_t an_index_gap_index(const struct an_index_gap *gap, size_t i)
{
	return gap && gap->at && i >= gap->at ? i + gap->left_out : i;
}

void an_recursion_destroy(struct an_recursion *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ncycle; i++)
		free(r->cycle[i]);
	free(r->cycle);
	an_frame_deinit(&r->caller);
	free(r);
}

struct an_thread *an_thread_by_tid(struct analysis *an, int32_t tid)
{
	for (size_t i = 0; i < an->nthreads; i++)
		if (an->threads[i].tid == tid)
			return &an->threads[i];
	return NULL;
}
