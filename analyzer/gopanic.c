/* A Go program's death as its runtime printed it, read back from memory:
 * the panicking goroutine's _panic chain (by the time the runtime prints
 * it, preprintpanics has turned an error's or a Stringer's value into the
 * string its method returned), the signal a panic came from (g.sig,
 * sigcode0/1, sigpc: dopanic_m's "[signal ...]" line), or the message a
 * fatal error (runtime.throw / runtime.fatal) printed, which the closure
 * those functions hand to systemstack holds on their frame. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golang.h"

enum { MAX_PANICS = 64, MAX_MESSAGE = 4096, KIND_MASK = 31, KIND_STRING = 24 };

/* The runtime's name of a signal with its description (sigtab). */
static const char *signal_title(int signo)
{
	switch (signo) {
	case SIGSEGV: return "SIGSEGV: segmentation violation";
	case SIGBUS: return "SIGBUS: bus error";
	case SIGFPE: return "SIGFPE: floating-point exception";
	case SIGILL: return "SIGILL: illegal instruction";
	case SIGTRAP: return "SIGTRAP: trace trap";
	case SIGABRT: return "SIGABRT: abort";
	default: return NULL;
	}
}

/* The Go string {ptr, len} at ADDR, malloc'd; NULL when unreadable. */
static char *read_go_string(struct go_runtime *rt, uint64_t addr)
{
	uint64_t hdr[2];
	if (!go_read(rt, addr, hdr, sizeof(hdr)) || hdr[1] > MAX_MESSAGE)
		return NULL;
	char *s = malloc(hdr[1] + 1);
	if (s && hdr[1] && !dbg_read_module_bytes(rt->s, hdr[0], s, hdr[1])) {
		free(s);
		return NULL;
	}
	if (s)
		s[hdr[1]] = '\0';
	return s;
}

/* The text printpanicval prints for the value of the _panic at P; NULL
 * for a value of another kind than a string (its type's methods are not
 * run here). */
static char *panic_value(struct go_runtime *rt, uint64_t p)
{
	uint64_t eface[2];
	uint8_t kind;
	if (!go_read(rt, p + rt->L.p_arg, eface, sizeof(eface)) || !eface[0] ||
	    !go_read(rt, eface[0] + rt->L.t_kind, &kind, 1) || (kind & KIND_MASK) != KIND_STRING)
		return NULL;
	return read_go_string(rt, eface[1]);
}

/* "panic: V" lines of the chain at P, oldest first as printpanics prints
 * them; the innermost (the one that killed the program) is returned. */
static char *panic_message(struct go_runtime *rt, uint64_t p)
{
	char *message = NULL;
	uint64_t first = p;
	for (int n = 0; p && n < MAX_PANICS; n++) {
		if (n && p == first) {
			core_warn(rt->core, "Go: the _panic chain at 0x%" PRIx64 " comes back to itself", first);
			break;
		}
		uint8_t recovered = 0;
		go_read(rt, p + rt->L.p_recovered, &recovered, 1);
		if (!message) {
			char *value = panic_value(rt, p);
			if (value && asprintf(&message, "panic: %s%s", value, recovered ? " [recovered]" : "") < 0)
				message = NULL;
			if (!value && asprintf(&message, "panic: (a value that is not a string)") < 0)
				message = NULL;
			free(value);
		}
		if (!go_read_word(rt, p + rt->L.p_link, &p))
			break;
	}
	return message;
}

static void read_signal(struct go_runtime *rt, const struct go_g *g)
{
	struct an_go_crash *c = &rt->an->go;
	const char *title = signal_title((int)g->sig);
	if (!g->sig)
		return;
	c->signo = (int)g->sig;
	c->sigcode = g->sigcode0;
	c->sigaddr = g->sigcode1;
	c->sigpc = g->sigpc;
	char buf[64];
	if (!title) {
		snprintf(buf, sizeof(buf), "signal %" PRIu32, g->sig);
		title = buf;
	}
	if (asprintf(&c->signal_line, "[signal %s code=0x%" PRIx64 " addr=0x%" PRIx64 " pc=0x%" PRIx64 "]",
		     title, g->sigcode0, g->sigcode1, g->sigpc) < 0)
		c->signal_line = NULL;
}

/* The goroutine that panicked: the one on the crashing thread with a
 * panic, else any with one. */
static const struct go_g *panicking(struct go_runtime *rt)
{
	const struct an_thread *t = rt->an->nthreads ? &rt->an->threads[an_crashing_thread(rt->an)] : NULL;
	const struct go_m *m = t ? go_m_of_thread(rt, t->tid) : NULL;
	const struct go_g *g = m ? go_g_at(rt, m->curg) : NULL;
	if (g && g->panic)
		return g;
	for (size_t i = 0; i < rt->ngs; i++)
		if (rt->gs[i].panic && rt->gs[i].status != GO_DEAD)
			return &rt->gs[i];
	return NULL;
}

static bool is_runtime_frame(const struct an_frame *f)
{
	return f->function && strncmp(f->function, "runtime.", 8) == 0;
}

/* Mark the frame that faulted or called panic (FROM: the runtime's frame
 * just inside it), runtime frames skipped; the caller of FROM when every
 * frame past it is the runtime's. */
static void mark_site(struct an_frame *frames, size_t n, size_t from)
{
	size_t first = SIZE_MAX;
	for (size_t i = from + 1; i < n; i++) {
		if (frames[i].inlined && is_runtime_frame(&frames[i]))
			continue;
		if (first == SIZE_MAX)
			first = i;
		if (!is_runtime_frame(&frames[i])) {
			frames[i].role = AN_FRAME_CRASH_SITE;
			return;
		}
	}
	if (first != SIZE_MAX)
		frames[first].role = AN_FRAME_CRASH_SITE;
}

/* The index of the last frame named NAME (or NAME2) in FRAMES, N if none. */
static size_t last_named(const struct an_frame *frames, size_t n, const char *name, const char *name2)
{
	size_t at = n;
	for (size_t i = 0; i < n; i++)
		if (frames[i].function && (strcmp(frames[i].function, name) == 0 ||
					   (name2 && strcmp(frames[i].function, name2) == 0)))
			at = i;
	return at;
}

static struct an_task *task_of(struct go_runtime *rt, uint64_t goid)
{
	for (size_t i = 0; i < rt->an->ntasks; i++)
		if (rt->an->tasks[i].runtime && strcmp(rt->an->tasks[i].runtime, "go") == 0 &&
		    rt->an->tasks[i].id == goid)
			return &rt->an->tasks[i];
	return NULL;
}

/* Mark the crash site in the frames of G's task and of the thread running it. */
static void mark_panic_site(struct go_runtime *rt, const struct go_g *g)
{
	const char *inner = g->sig ? "runtime.sigpanic" : "runtime.gopanic";
	struct an_task *task = task_of(rt, g->goid);
	if (task)
		mark_site(task->frames, task->nframes, last_named(task->frames, task->nframes, inner, NULL));
	const struct go_m *m = go_m_at(rt, g->m);
	struct an_thread *t = m ? an_thread_by_tid(rt->an, (int32_t)m->procid) : NULL;
	if (t)
		mark_site(t->frames, t->nframes, last_named(t->frames, t->nframes, inner, NULL));
}

/* The message of the fatal error thrown from the frame of runtime.throw
 * (or fatal) at FRAMES[I]: the closure it passed to systemstack is on its
 * frame, its function's entry followed by the string. */
static char *thrown_message(struct go_runtime *rt, const struct an_frame *frames, size_t i)
{
	struct dbg_gofunc fn;
	char name[64];
	snprintf(name, sizeof(name), "%s.func1", frames[i].function);
	if (!dbg_gotab_func_named(rt->tab, name, &fn))
		return NULL;
	/* The frame's bytes: from its callee's CFA (its stack pointer) to its own. */
	uint64_t lo = 0, hi = frames[i].cfa;
	for (size_t j = i; j-- > 0;)
		if (!frames[j].inlined && frames[j].cfa) {
			lo = frames[j].cfa;
			break;
		}
	if (!lo || hi <= lo || hi - lo > 4096)
		return NULL;
	for (uint64_t at = lo; at + 24 <= hi; at += 8) {
		uint64_t w;
		if (go_read_word(rt, at, &w) && w == fn.entry)
			return read_go_string(rt, at + 8);
	}
	return NULL;
}

/* A fatal error: the innermost throw/fatal frame of the crashing thread
 * (else of any thread) and what it printed. */
static bool read_fatal(struct go_runtime *rt)
{
	struct analysis *an = rt->an;
	size_t first = an->nthreads ? an_crashing_thread(an) : 0;
	for (size_t k = 0; k < an->nthreads; k++) {
		struct an_thread *t = &an->threads[(first + k) % an->nthreads];
		for (size_t i = 0; i < t->nframes; i++) {
			const char *fn = t->frames[i].function;
			if (!fn || (strcmp(fn, "runtime.throw") != 0 && strcmp(fn, "runtime.fatal") != 0))
				continue;
			char *text = thrown_message(rt, t->frames, i);
			if (!text)
				continue;
			an->go.present = an->go.fatal = true;
			if (asprintf(&an->go.message, "fatal error: %s", text) < 0)
				an->go.message = NULL;
			free(text);
			mark_site(t->frames, t->nframes, i);
			struct go_m *m = go_m_of_thread(rt, t->tid);
			struct go_g *g = m ? go_g_at(rt, m->curg) : NULL;
			struct an_task *task = g ? task_of(rt, g->goid) : NULL;
			if (task)
				mark_site(task->frames, task->nframes,
					  last_named(task->frames, task->nframes, "runtime.throw", "runtime.fatal"));
			if (g) {
				an->go.goid = g->goid;
				an->go.has_goid = true;
			}
			return true;
		}
	}
	return false;
}

void go_crash_read(struct go_runtime *rt)
{
	struct an_go_crash *c = &rt->an->go;
	const struct go_g *g = panicking(rt);
	if (g) {
		c->message = panic_message(rt, g->panic);
		if (c->message) {
			c->present = true;
			c->goid = g->goid;
			c->has_goid = true;
			read_signal(rt, g);
			mark_panic_site(rt, g);
			return;
		}
	}
	read_fatal(rt);
}
