/* The text crash report: what crashed, the crashing thread's spliced stack,
 * the last recorder events, then the other threads. */
#include "report.h"
#include "taskgroups.h"
#include "waitgroups.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../base/strlist.h"
#include "bytes.h"
#include "source.h"

/* Escaped copies of the strings of one report (reports/bytes.h), freed when
 * it is written. */
static _Thread_local struct rep_escaper text_esc;

/* S from a core or a binary, safe to print on a terminal. */
static const char *esc(const char *s)
{
	return rep_escape(&text_esc, s);
}

const char *rep_signal_detail(const struct analysis *an, char *buf, size_t len)
{
	char h[32];
	size_t used = 0;
	buf[0] = '\0';
	if (an->code_name)
		used += (size_t)snprintf(buf, len, ", %s", an->code_name);   /* our own table */
	else if (an->has_code)
		used += (size_t)snprintf(buf, len, ", code %d", an->code);
	if (an->has_fault_address && used < len)
		snprintf(buf + used, len - used, ", fault address %s", base_hex(h, an->fault_address));
	return buf;
}

/* SGR sequences, or "" when the report is not coloured. */
#define SGR(color, code) ((color) ? "\033[" code "m" : "")
#define SGR_CRASH(c) SGR(c, "1;31")
#define SGR_SEAM(c) SGR(c, "36")
#define SGR_WARN(c) SGR(c, "33")
#define SGR_DIM(c) SGR(c, "2")
#define SGR_OFF(c) SGR(c, "0")

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash ? slash + 1 : path;
}

static void write_header(FILE *out, const struct analysis *an)
{
	char detail[128];
	if (an->cause.summary)
		fprintf(out, "cause:       %s: %s\n", an_cause_kind_name(an->cause.kind),
			esc(an->cause.summary));
	if (an->live)
		fprintf(out, "process:     %d, stopped for %" PRIu64 ".%03" PRIu64 " ms at %s\n", an->pid,
			an->paused_us / 1000, an->paused_us % 1000, an->taken_at ? esc(an->taken_at) : "?");
	else
		fprintf(out, "core:        %s (%" PRIu64 " bytes)\n", esc(an->core_path), an->core_size);
	fprintf(out, "executable:  %s\n", an->executable ? esc(an->executable) : "(unknown)");
	if (an->build_id)
		fprintf(out, "build-id:    %s\n", esc(an->build_id));
	if (an->has_pid && !an->live)
		fprintf(out, "pid:         %d\n", an->pid);
	for (size_t i = 0; i < an->nannotations; i++) {
		fprintf(out, "annotation:  %s = ", esc(an->annotations[i].name));
		fprintf(out, "%s\n", esc(an->annotations[i].value));
	}
	if (!an->has_signal && an->live) {
		fprintf(out, "signal:      none (a running process, read live)\n");
		return;
	}
	if (!an->has_signal) {
		fprintf(out, "signal:      none (the process was dumped while running)\n");
		return;
	}
	fprintf(out, "signal:      %s (%d)%s\n", an->signal_name ? esc(an->signal_name) : "signal",
		an->signo, rep_signal_detail(an, detail, sizeof(detail)));
	fprintf(out, "thread:      %d (crashing)\n", an->crashing_tid);
	if (an->abort_message)
		fprintf(out, "Abort message: %s\n", esc(an->abort_message));
}

/* The hang first: each deadlock's cycle, thread by thread, then the
 * blocked threads grouped by what they wait for, most first. */
static void write_hang(FILE *out, const struct analysis *an)
{
	for (size_t i = 0; i < an->ndeadlocks; i++) {
		const struct an_deadlock *d = &an->deadlocks[i];
		fprintf(out, "\ndeadlock:    %s\n", esc(d->summary));
		for (size_t k = 0; k < d->n; k++) {
			const struct an_thread *t = rep_thread_by_tid(an, d->threads[k]);
			const char *who = t ? rep_thread_label(t) : NULL;
			fprintf(out, "  thread %d%s%s%s: %s\n", (int)d->threads[k], who ? " (" : "", who ? esc(who) : "",
				who ? ")" : "", t && t->blocked ? esc(t->blocked->summary) : "?");
		}
	}
	bool hang = an->cause.kind == AN_CAUSE_HANG || an->cause.kind == AN_CAUSE_DEADLOCK;
	struct rep_wait_group *groups = NULL;
	size_t n = hang ? rep_wait_groups(an, &groups) : 0;
	if (n)
		fprintf(out, "\nwaiting:\n");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "  %zu thread%s: %s\n", groups[i].count, groups[i].count == 1 ? "" : "s",
			esc(groups[i].summary));
	free(groups);
	struct rep_task_wait_group *tasks = NULL;
	size_t nt = hang ? rep_task_wait_groups(an, REP_TASK_WAIT_GROUPS, &tasks) : 0;
	if (nt && !n)
		fprintf(out, "\nwaiting:\n");
	for (size_t i = 0; i < nt; i++) {
		fprintf(out, "  %zu %s%s: %s", tasks[i].count, tasks[i].noun, tasks[i].count == 1 ? "" : "s",
			esc(tasks[i].summary));
		fprintf(out, tasks[i].created_by ? ", created by %s\n" : "\n",
			tasks[i].created_by ? esc(tasks[i].created_by) : "");
	}
	free(tasks);
}

static void write_async_state(FILE *out, const struct analysis *an)
{
	if (!an->async_key_found)
		return;
	if (an->async_key == UINT32_MAX) {
		fprintf(out, "async:       no async work ever ran "
			"(folly_async_stack_root_tls_key was never created)\n");
		return;
	}
	size_t with_root = 0;
	for (size_t i = 0; i < an->nthreads; i++)
		with_root += an->threads[i].async_root != 0;
	fprintf(out, "async:       folly key %u; %zu of %zu threads on an async stack, "
		"%zu suspended chains\n", an->async_key, with_root, an->nthreads, an->nsuspended);
}

/* A frame line is made in a buffer and written at once: frame lines are
 * most of a report, and stdio's per-call cost (a third of the text report's
 * time with printf) is then paid once per line. */
struct line {
	FILE *out;
	size_t len;
	char buf[4096];
};

static void line_add(struct line *l, const char *s, size_t n)
{
	if (n > sizeof(l->buf) - l->len) {
		fwrite_unlocked(l->buf, 1, l->len, l->out);
		l->len = 0;
		if (n > sizeof(l->buf)) {
			fwrite_unlocked(s, 1, n, l->out);
			return;
		}
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

static void line_str(struct line *l, const char *s)
{
	line_add(l, s, strlen(s));
}

static void line_num(struct line *l, uint64_t v, unsigned base)
{
	char tmp[BASE_DIGITS_MAX], *d = base_digits(tmp + sizeof(tmp), v, base);
	line_add(l, d, (size_t)(tmp + sizeof(tmp) - d));
}

static void line_end(struct line *l)
{
	line_add(l, "\n", 1);
	fwrite_unlocked(l->buf, 1, l->len, l->out);
	l->len = 0;
}

/* A growable string; NULL S after a failed allocation. */
struct text {
	char *s;
	size_t len, cap;
	bool failed;
};

static void text_add(struct text *t, const char *s)
{
	size_t n = strlen(s);
	if (t->failed)
		return;
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 128;
		while (cap < t->len + n + 1)
			cap *= 2;
		char *p = realloc(t->s, cap);
		if (!p) {
			free(t->s);
			*t = (struct text){ .failed = true };
			return;
		}
		t->s = p;
		t->cap = cap;
	}
	memcpy(t->s + t->len, s, n + 1);
	t->len += n;
}

/* "(acct=0x..., cents=cents@entry=250)" as gdb's backtrace prints them:
 * an entry value equal to the value is shown in the short form, a
 * different one after it. */
static void args_text(struct text *t, const struct an_frame *f)
{
	text_add(t, " (");
	for (size_t i = 0; i < f->nargs; i++) {
		const struct an_arg *a = &f->args[i];
		const char *name = esc(a->name ? a->name : "");
		const char *value = esc(a->value ? a->value : "");
		if (i)
			text_add(t, ", ");
		text_add(t, name);
		text_add(t, "=");
		if (a->entry_value && !a->entry_equal) {
			text_add(t, value);
			text_add(t, ", ");
		}
		if (a->entry_value) {
			text_add(t, name);
			text_add(t, "@entry=");
		}
		text_add(t, a->entry_value && !a->entry_equal ? esc(a->entry_value) : value);
	}
	text_add(t, ")");
}

/* What the writing of one report keeps: frames share blocks of arguments
 * (analysis.h), each printed once. */
#define ARGS_MEMO 1024

struct args_memo {
	const struct an_arg *args[ARGS_MEMO];   /* direct-mapped by block */
	size_t nargs[ARGS_MEMO];
	struct text text[ARGS_MEMO];
};

/* Source lines escaped, by the line's text (reports/source.h gives one
 * pointer per line): the threads of a process show the same lines. */
#define SOURCE_MEMO 256

struct writer {
	bool color;
	struct args_memo *memo;     /* NULL: none could be had */
	struct rep_sources *sources;    /* NULL: no source lines */
	const char *source_line[SOURCE_MEMO], *source_escaped[SOURCE_MEMO];
};

static void args_memo_destroy(struct args_memo *m)
{
	for (size_t i = 0; m && i < ARGS_MEMO; i++)
		free(m->text[i].s);
	free(m);
}

static void write_args(struct line *l, struct writer *w, const struct an_frame *f)
{
	struct args_memo *m = w->memo;
	uintptr_t key = (uintptr_t)f->args;
	size_t i = (size_t)((key >> 4) ^ (key >> 14)) % ARGS_MEMO;
	if (m && f->args && m->args[i] == f->args && m->nargs[i] == f->nargs && m->text[i].s) {
		line_add(l, m->text[i].s, m->text[i].len);
		return;
	}
	struct text t = { 0 };
	args_text(&t, f);
	line_str(l, t.s ? t.s : " (...)");      /* out of memory */
	if (!m || !t.s) {
		free(t.s);
		return;
	}
	free(m->text[i].s);
	m->text[i] = t;
	m->args[i] = f->args;
	m->nargs[i] = f->nargs;
}

/* A frame a runtime description gave: marked with the description's name. */
static void write_runtime_frame(struct line *l, const struct an_frame *f, size_t index)
{
	line_add(l, "#", 1);
	line_num(l, index, 10);
	line_add(l, "    ", index < 10 ? 3 : index < 100 ? 2 : 1);     /* "%-3zu " */
	line_add(l, "[", 1);
	line_str(l, f->runtime ? esc(f->runtime) : "runtime");
	line_add(l, "] ", 2);
	line_str(l, f->function ? esc(f->function) : "??");
	if (f->kind == AN_FRAME_LABEL)
		line_str(l, " (label)");
	if (f->detail) {
		line_add(l, "  -- ", 5);
		line_str(l, esc(f->detail));
	}
}

/* Frame INDEX's line, between MARK and UNMARK (colours), to OUT. */
static void write_frame_line(FILE *out, struct writer *w, const struct an_frame *f, size_t index,
			     const char *mark, const char *unmark)
{
	struct line l;      /* the buffer is not cleared: 4 KiB per frame */
	char h[32];
	l.out = out;
	l.len = 0;
	line_str(&l, mark);
	if (AN_FRAME_IS_RUNTIME(f)) {
		write_runtime_frame(&l, f, index);
		line_str(&l, unmark);
		line_end(&l);
		return;
	}
	const char *name = f->display ? f->display : f->function;
	line_add(&l, "#", 1);
	line_num(&l, index, 10);
	line_add(&l, "    ", index < 10 ? 3 : index < 100 ? 2 : 1);    /* "%-3zu " */
	if (f->role == AN_FRAME_TRAMPOLINE) {
		line_str(&l, "<signal handler called>");     /* gdb's words */
		line_str(&l, unmark);
		line_end(&l);
		return;
	}
	line_str(&l, base_hex(h, f->pc));
	line_add(&l, " in ", 4);
	line_str(&l, name ? esc(name) : "??");
	if (f->has_args)
		write_args(&l, w, f);
	if (f->inlined)
		line_str(&l, " [inlined]");
	if (f->tailcall)
		line_str(&l, " [tail call]");
	if (!f->inlined && f->has_offset) {
		line_add(&l, " (+0x", 5);
		line_num(&l, f->offset, 16);
		line_add(&l, ")", 1);
	}
	if (f->file) {
		line_add(&l, " at ", 4);
		line_str(&l, esc(f->file));
		line_add(&l, f->line < 0 ? ":-" : ":", f->line < 0 ? 2 : 1);
		line_num(&l, f->line < 0 ? 0 - (uint64_t)(int64_t)f->line : (uint64_t)f->line, 10);
	}
	if (f->module) {
		line_add(&l, "  [", 3);
		line_str(&l, esc(base_name(f->module)));
	}
	if (f->module && !f->function && f->has_module_offset) {
		line_add(&l, "+0x", 3);
		line_num(&l, f->module_offset, 16);
	}
	if (f->module)
		line_add(&l, "]", 1);
	if (f->kind == AN_FRAME_ASYNC)
		line_str(&l, " [async]");
	if (f->role == AN_FRAME_CRASH_SITE)
		line_str(&l, " [crash site]");
	line_str(&l, unmark);
	line_end(&l);
}

/* The frame's source line under it, as gdb's `frame` prints it:
 *     42	  return order.coupon->rate; */
static void write_source(FILE *out, struct writer *w, const struct an_frame *f)
{
	if (AN_FRAME_IS_RUNTIME(f) || f->role == AN_FRAME_TRAMPOLINE)
		return;
	const char *text = rep_source_line(w->sources, f->file, f->line);
	if (!text)
		return;
	size_t slot = ((uintptr_t)text >> 4) % SOURCE_MEMO;
	if (w->source_line[slot] != text) {
		w->source_line[slot] = text;
		w->source_escaped[slot] = esc(text);
	}
	struct line l;
	l.out = out;
	l.len = 0;
	line_add(&l, "    ", 4);
	line_num(&l, (uint64_t)f->line, 10);
	line_add(&l, "\t", 1);
	line_str(&l, w->source_escaped[slot]);
	line_end(&l);
}

/* Frame INDEX's line and its source line. */
static void write_frame(FILE *out, struct writer *w, const struct an_frame *f, size_t index,
			const char *mark, const char *unmark)
{
	write_frame_line(out, w, f, index, mark, unmark);
	write_source(out, w, f);
}

/* Whether FRAMES hold the site of a fault a crash handler caught. */
static bool has_crash_site(const struct an_frame *frames, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (frames[i].role == AN_FRAME_CRASH_SITE)
			return true;
	return false;
}

/* The line that sets a crash handler's frames apart, before the first. */
static void write_handler_seam(FILE *out, const struct an_frame *frames, size_t i, bool color)
{
	if (frames[i].role == AN_FRAME_HANDLER && (i == 0 || frames[i - 1].role == AN_FRAME_PLAIN))
		fprintf(out, "    %s---- crash handler ----%s\n", SGR_SEAM(color), SGR_OFF(color));
}

/* The frame's local variables (--locals), one a line as gdb's `bt full`
 * prints them. */
static void write_locals(FILE *out, const struct an_frame *f)
{
	for (size_t i = 0; f->has_locals && i < f->nlocals; i++) {
		const struct an_arg *a = &f->locals[i];
		fprintf(out, "        %s = ", esc(a->name ? a->name : ""));
		fprintf(out, "%s\n", esc(a->value ? a->value : ""));
	}
}

/* CRASHING: the frames of the crashing thread, whose first is coloured.
 * Seams mark the switches between native and async frames; runtime frames,
 * marked on their own lines, make none. */
/* The line that stands for a recursion's run:
 *     ... #5 .. #261864: ping < pong, 130930 times ... */
static void write_recursion(FILE *out, const struct an_recursion *r)
{
	fprintf(out, "    ... #%zu .. #%zu:", r->first, r->last);
	for (size_t i = 0; i < r->ncycle; i++)
		fprintf(out, "%s%s", i ? " < " : " ", esc(r->cycle[i]));
	fprintf(out, ", %" PRIu64 " times ...\n", r->repeats);
}

/* THREAD (NULL for a chain): its frames past a recursion's run are numbered
 * by their true index, after the run's line. */
static void write_frames_of(FILE *out, const struct an_thread *thread, const struct an_frame *frames,
			    size_t n, bool crashing, struct writer *w)
{
	const struct an_frame *prev = NULL;
	const struct an_recursion *rec = thread ? thread->recursion : NULL;
	bool handled = has_crash_site(frames, n);
	for (size_t i = 0; i < n; i++) {
		const struct an_frame *f = &frames[i];
		if (rec && i == rec->first)
			write_recursion(out, rec);
		write_handler_seam(out, frames, i, w->color);
		if (!AN_FRAME_IS_RUNTIME(f)) {
			if (f->seam || (prev && f->kind != prev->kind))
				fprintf(out, "    %s---- %s frames ----%s\n", SGR_SEAM(w->color),
					f->kind == AN_FRAME_ASYNC ? "async" : "native", SGR_OFF(w->color));
			prev = f;
		}
		/* the frame that faulted stands out; a crash handler's fade */
		bool mark = w->color && crashing && (handled ? f->role == AN_FRAME_CRASH_SITE : i == 0);
		bool dim = w->color && (f->role == AN_FRAME_HANDLER || f->role == AN_FRAME_TRAMPOLINE);
		write_frame(out, w, f, thread ? an_thread_frame_index(thread, i) : i,
			    mark ? SGR_CRASH(mark) : SGR_DIM(dim), SGR_OFF(mark || dim));
		write_locals(out, f);
	}
}

static void write_frames(FILE *out, const struct an_frame *frames, size_t n, bool crashing,
			 struct writer *w)
{
	write_frames_of(out, NULL, frames, n, crashing, w);
}

/* pc, stack, frame and thread pointer by the architecture's names ("rip
 * ... fs_base", "pc ... tpidr_el0"); no thread pointer when the core has
 * none. */
static void write_registers(FILE *out, const struct an_thread *t, const char *arch)
{
	char a[32], b[32], c[32], d[32];
	fprintf(out, "  %s %s  %s %s  %s %s", an_reg_role_name(arch, AN_ROLE_PC), base_hex(a, t->pc),
		an_reg_role_name(arch, AN_ROLE_SP), base_hex(b, t->sp),
		an_reg_role_name(arch, AN_ROLE_FP), base_hex(c, t->fp));
	if (t->has_tp)
		fprintf(out, "  %s %s", an_reg_role_name(arch, AN_ROLE_TP), base_hex(d, t->tp));
	fputc('\n', out);
}

/* ---- bthreads (a runtime's tasks) ---- */

/* A thread running a bthread: the bthread's frames, then the worker's, numbered
 * as one stack. */
static void write_thread_with_task(FILE *out, const struct an_thread *t, const struct an_task *task,
				   struct writer *w)
{
	for (size_t i = 0; i < task->nframes; i++) {
		bool mark = w->color && t->crashing && i == 0;
		write_frame(out, w, &task->frames[i], i, SGR_CRASH(mark), SGR_OFF(mark));
		write_locals(out, &task->frames[i]);
	}
	fprintf(out, "    %s---- worker frames (bthread scheduler) ----%s\n", SGR_SEAM(w->color),
		SGR_OFF(w->color));
	for (size_t i = 0; i < t->nframes; i++) {
		write_frame(out, w, &t->frames[i], task->nframes + i, "", "");
		write_locals(out, &t->frames[i]);
	}
}

/* " running goroutine 1 (runtime.main)", " ... in syscall". */
static void write_goroutine_on(FILE *out, const struct an_task *g)
{
	fprintf(out, " running goroutine %" PRIu64 " (%s)%s", g->id, g->fn ? esc(g->fn) : "??",
		g->state == AN_TASK_SYSCALL ? " in syscall" : "");
}

/* A thread header's end: ": waits for ..., for 12 s" of the group thread
 * FIRST leads (LEAD NULL: that thread), or ":". */
static void write_header_wait(FILE *out, const struct analysis *an, const size_t *lead, size_t first)
{
	const struct an_blocked *b = an->threads[first].blocked;
	char since[48];
	if (b && b->summary)
		fprintf(out, ": %s%s\n", esc(b->summary), rep_group_since(an, lead, first, since, sizeof(since)));
	else
		fprintf(out, ":\n");
}

static void write_thread(FILE *out, const struct an_thread *t, const struct analysis *an, struct writer *w)
{
	/* A goroutine's frames are already the thread's: its walk follows the
	 * runtime's stack switches. */
	const struct an_task *go = rep_goroutine_on(an, t->tid);
	const struct an_task *task = go ? NULL : rep_task_running_on(an, t->tid);
	fprintf(out, "\nThread %d", t->tid);
	const char *who = rep_thread_label(t);
	if (who)
		fprintf(out, " (%s)", esc(who));
	if (t->crashing) {
		fprintf(out, " (crashing, %s)", an->signal_name ? esc(an->signal_name) : "signal");
	}
	if (t->async_root)
		fprintf(out, " (async stack)");
	if (go)
		write_goroutine_on(out, go);
	if (task)
		fprintf(out, " running bthread 0x%" PRIx64 " (%s)", task->id, task->fn ? esc(task->fn) : "??");
	write_header_wait(out, an, NULL, (size_t)(t - an->threads));
	write_registers(out, t, an->arch);
	if (task)
		write_thread_with_task(out, t, task, w);
	else
		write_frames_of(out, t, t->frames, t->nframes, t->crashing, w);
	if (t->nframes == 0 && !task)
		fprintf(out, "  (no frames)\n");
}

enum { GROUP_TIDS_MAX = 64 };

/* The tids of the group thread FIRST leads: "812, 813, 814". */
static void write_group_tids(FILE *out, const struct analysis *an, const size_t *lead, size_t first,
			     size_t n)
{
	size_t shown = 0;
	for (size_t i = first; i < an->nthreads && shown < GROUP_TIDS_MAX; i++)
		if (lead[i] == first)
			fprintf(out, "%s%d", shown++ ? ", " : "", (int)an->threads[i].tid);
	if (n > shown)
		fprintf(out, ", ... (%zu more)", n - shown);
}

/* N threads whose stacks are the same, once: "4 threads: 812, 813, 814,
 * 815 (pool_worker): waits for ...", then their frames (each thread's own
 * registers are in the JSON). */
static void write_thread_group(FILE *out, const struct analysis *an, const size_t *lead, size_t first,
			       size_t n, struct writer *w)
{
	const struct an_thread *t = &an->threads[first];
	const char *who = rep_group_label(an, lead, first);
	fprintf(out, "\n%zu threads: ", n);
	write_group_tids(out, an, lead, first, n);
	if (who)
		fprintf(out, " (%s)", esc(who));
	if (t->async_root)
		fprintf(out, " (async stack)");
	write_header_wait(out, an, lead, first);
	write_frames_of(out, t, t->frames, t->nframes, false, w);
	if (t->nframes == 0)
		fprintf(out, "  (no frames)\n");
}

/* The threads other than the crashing one, identical stacks once with
 * their count unless EACH. */
static void write_other_threads(FILE *out, const struct analysis *an, bool each, struct writer *w)
{
	size_t *lead = each ? NULL : rep_stack_groups(an);
	for (size_t i = 0; i < an->nthreads; i++) {
		if (an->threads[i].crashing || (lead && lead[i] != i))
			continue;
		size_t n = rep_group_size(an, lead, i);
		if (n > 1)
			write_thread_group(out, an, lead, i, n, w);
		else
			write_thread(out, &an->threads[i], an, w);
	}
	free(lead);
}

static void write_events(FILE *out, const struct analysis *an, size_t tail)
{
	if (an->ntimeline == 0 || tail == 0)
		return;
	size_t first = an->ntimeline > tail ? an->ntimeline - tail : 0;
	fprintf(out, "\nRecorder events (last %zu of %zu before the %s):\n",
		an->ntimeline - first, an->ntimeline, an->live ? "stop" : "crash");
	for (size_t i = first; i < an->ntimeline; i++) {
		const struct an_timeline_entry *e = &an->timeline[i];
		const struct an_recorder *r = &an->recorders[e->recorder];
		const struct an_event *ev = &r->events[e->event];
		fprintf(out, "  [%" PRIu64 " %" PRIu64 ".%06" PRIu64 "] %s: %s%s\n", e->order,
			e->timestamp / 1000000, e->timestamp % 1000000, r->name ? esc(r->name) : "?",
			esc(ev->message), ev->in_flight ? "  (in flight)" : "");
	}
}

static void write_suspended(FILE *out, const struct analysis *an, struct writer *w)
{
	if (an->nsuspended == 0)
		return;
	char h[32];
	fprintf(out, "\nSuspended coroutines (%zu):\n", an->nsuspended);
	for (size_t i = 0; i < an->nsuspended; i++) {
		fprintf(out, "\nSuspended chain at %s:\n", base_hex(h, an->suspended[i].leaf));
		write_frames(out, an->suspended[i].frames, an->suspended[i].nframes, false, w);
	}
}

/* The ids of G (at most MAX_IDS, then how many more), in hex or decimal. */
static void write_group_ids(FILE *out, const struct analysis *an, const struct rep_task_group *g,
			    bool hex)
{
	enum { MAX_IDS = 16 };
	char h[32];
	for (size_t i = 0; i < g->n && i < MAX_IDS; i++) {
		uint64_t id = an->tasks[g->members[i]].id;
		if (hex)
			fprintf(out, " %s", base_hex(h, id));
		else
			fprintf(out, " %" PRIu64, id);
	}
	if (g->n > MAX_IDS)
		fprintf(out, " ... and %zu more", g->n - MAX_IDS);
	fputc('\n', out);
}

/* The names of G's tasks (asyncio's "consumer-1"), when they have any. */
static void write_group_names(FILE *out, const struct analysis *an, const struct rep_task_group *g)
{
	enum { MAX_NAMES = 16 };
	if (!an->tasks[g->members[0]].name)
		return;
	fprintf(out, "  names:");
	for (size_t i = 0; i < g->n && i < MAX_NAMES; i++) {
		const char *name = an->tasks[g->members[i]].name;
		fprintf(out, " %s", name ? esc(name) : "?");
	}
	if (g->n > MAX_NAMES)
		fprintf(out, " ... and %zu more", g->n - MAX_NAMES);
	fputc('\n', out);
}

/* One group of bthreads: the one, or how many with their ids, what they do,
 * their entry function, and their frames once. */
static void write_task_group(FILE *out, const struct analysis *an, const struct rep_task_group *g,
			     struct writer *w)
{
	const struct an_task *t = &an->tasks[g->members[0]];
	char h[32], doing[160];
	const char *noun = rep_task_noun(t);
	if (g->n == 1)
		fprintf(out, "\n%s %s", noun, base_hex(h, t->id));
	else
		fprintf(out, "\n%zu %ss", g->n, noun);
	if (g->n == 1 && t->name)
		fprintf(out, " (%s)", esc(t->name));
	bool same_address = true;
	for (size_t i = 1; i < g->n; i++)
		same_address = same_address && an->tasks[g->members[i]].wait_address == t->wait_address;
	fprintf(out, " %s%s: %s\n", rep_task_doing(t, an, doing, sizeof(doing)),
		same_address ? "" : " (and other addresses)", t->fn ? esc(t->fn) : "??");
	if (g->n > 1) {
		fprintf(out, "  ids:");
		write_group_ids(out, an, g, true);
		write_group_names(out, an, g);
	}
	write_frames(out, t->frames, t->nframes, false, w);
	if (g->n > 1 && !rep_task_group_same_args(an, g))
		fprintf(out, "  (the arguments shown are %s %s's: the others' differ)\n", noun,
			base_hex(h, t->id));
	if (t->unwind_error)
		fprintf(out, "  (%s)\n", esc(t->unwind_error));
}

/* "goroutine 19 [chan receive, 5 minutes]:" for each member of G, each with
 * its own minutes, as the runtime's header: a goroutine is found by its id
 * in a report as in the runtime's dump. */
static void write_go_headers(FILE *out, const struct analysis *an, const struct rep_task_group *g)
{
	char status[160];
	for (size_t i = 0; i < g->n; i++) {
		struct rep_task_group one = { .members = &g->members[i], .n = 1 };
		fprintf(out, "goroutine %" PRIu64 " [%s]:\n", an->tasks[g->members[i]].id,
			esc(rep_go_status(an, &one, status, sizeof(status))));
	}
}

/* One group of goroutines as the Go runtime prints one: "goroutine 19
 * [chan receive]:" (a group: "3 goroutines [chan receive]: 27 28 29" over
 * their headers), the frames once, "created by F at FILE:LINE". */
static void write_go_group(FILE *out, const struct analysis *an, const struct rep_task_group *g,
			   struct writer *w)
{
	const struct an_task *t = &an->tasks[g->members[0]];
	char status[160];
	fputc('\n', out);
	if (g->n > 1) {
		fprintf(out, "%zu goroutines [%s]:", g->n, esc(rep_go_status(an, g, status, sizeof(status))));
		write_group_ids(out, an, g, false);
	}
	write_go_headers(out, an, g);
	bool crashing = t->has_tid && an->has_signal && t->tid == an->crashing_tid;
	write_frames(out, t->frames, t->nframes, crashing, w);
	if (t->created_by) {
		fprintf(out, "created by %s", esc(t->created_by));
		if (t->created_file)
			fprintf(out, " at %s:%d", esc(t->created_file), t->created_line);
		fputc('\n', out);
	}
	if (g->n > 1 && !rep_task_group_same_args(an, g))
		fprintf(out, "  (the arguments shown are goroutine %" PRIu64 "'s: the others' differ)\n",
			t->id);
	if (t->unwind_error)
		fprintf(out, "  (%s)\n", esc(t->unwind_error));
}

/* "Bthreads (15: 3 running, 10 suspended, 2 ready):", then each group;
 * "Goroutines (18: 1 running, ...)" the same way. */
static void write_tasks(FILE *out, const struct analysis *an, struct writer *w)
{
	char counts[160];
	if (an->ntasks == 0)
		return;
	struct rep_task_groups groups;
	bool grouped = rep_task_groups_init(&groups, an);
	size_t nbthreads = rep_tasks_count(an, "bthread"), ngo = rep_tasks_count(an, "go");
	const char *other = rep_tasks_other_runtime(an);
	if (strcmp(other, "asyncio") == 0)
		fprintf(out, "\nAsyncio tasks (%s):\n", rep_tasks_counts_of(an, other, counts, sizeof(counts)));
	else if (nbthreads || !ngo)
		fprintf(out, "\nBthreads (%s):\n",
			rep_tasks_counts_of(an, ngo ? "bthread" : NULL, counts, sizeof(counts)));
	if (!grouped)
		fprintf(out, "  (out of memory grouping them)\n");
	for (size_t i = 0; i < groups.n; i++)
		if (!rep_task_is_go(&an->tasks[groups.v[i].members[0]]))
			write_task_group(out, an, &groups.v[i], w);
	if (ngo)
		fprintf(out, "\nGoroutines (%s):\n", rep_tasks_counts_of(an, "go", counts, sizeof(counts)));
	for (size_t i = 0; i < groups.n; i++)
		if (rep_task_is_go(&an->tasks[groups.v[i].members[0]]))
			write_go_group(out, an, &groups.v[i], w);
	rep_task_groups_deinit(&groups);
}

static void write_modules(FILE *out, const struct analysis *an)
{
	char a[32], b[32];
	fprintf(out, "\nModules:\n");
	for (size_t i = 0; i < an->nmodules; i++) {
		const struct an_module *m = &an->modules[i];
		fprintf(out, "  %s-%s %s", base_hex(a, m->start), base_hex(b, m->end),
			m->path ? esc(m->path) : "?");
		if (!m->debuginfo)
			fprintf(out, "  (no debug info)\n");
		else if (m->path && strcmp(m->debuginfo, m->path) == 0)
			fprintf(out, "  debug info: in the file\n");
		else
			fprintf(out, "  debug info: %s%s\n", esc(m->debuginfo),
				m->debuginfod ? " (debuginfod)" : "");
	}
}

int rep_text_write(FILE *out, const struct analysis *an, const struct rep_text_options *opts)
{
	struct writer w = { .color = opts->color, .memo = calloc(1, sizeof(*w.memo)),
			    .sources = opts->source ? rep_sources_create() : NULL };
	write_header(out, an);
	write_hang(out, an);
	write_async_state(out, an);
	for (size_t i = 0; i < an->nthreads; i++)
		if (an->threads[i].crashing)
			write_thread(out, &an->threads[i], an, &w);
	write_events(out, an, opts->recorder_tail);
	if (opts->all_threads || !an->has_signal)
		write_other_threads(out, an, opts->each_thread, &w);
	write_tasks(out, an, &w);
	write_suspended(out, an, &w);
	write_modules(out, an);
	if (an->signature)
		fprintf(out, "\nsignature: %s (%s)\n", esc(an->signature), esc(an->signature_hash));
	if (an->nwarnings) {
		fprintf(out, "\n%sWarnings:%s\n", SGR_WARN(opts->color), SGR_OFF(opts->color));
		for (size_t i = 0; i < an->nwarnings; i++)
			fprintf(out, "  %s%s%s\n", SGR_WARN(opts->color), esc(an->warnings[i]),
				SGR_OFF(opts->color));
	}
	args_memo_destroy(w.memo);
	rep_sources_destroy(w.sources);
	bool failed = text_esc.failed;
	rep_escaper_clear(&text_esc);
	return failed || ferror(out) ? -1 : 0;
}

void rep_warnings_write(FILE *err, const struct analysis *an)
{
	for (size_t i = 0; i < an->nwarnings; i++)
		fprintf(err, "asyncore: warning: %s\n", esc(an->warnings[i]));
	rep_escaper_clear(&text_esc);
}
