/* The text crash report: what crashed, the crashing thread's spliced stack,
 * the last recorder events, then the other threads. */
#include "report.h"

#include <inttypes.h>
#include <string.h>

#include "bytes.h"

/* Escaped copies of the strings of one report (reports/bytes.h), freed when
 * it is written. */
static _Thread_local struct rep_escaper text_esc;

/* S from a core or a binary, safe to print on a terminal. */
static const char *esc(const char *s)
{
	return rep_escape(&text_esc, s);
}

const char *rep_hex(char buf[32], uint64_t value)
{
	snprintf(buf, 32, "0x%" PRIx64, value);
	return buf;
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash ? slash + 1 : path;
}

static void write_header(FILE *out, const struct analysis *an)
{
	char h[32];
	fprintf(out, "core:        %s (%" PRIu64 " bytes)\n", esc(an->core_path), an->core_size);
	fprintf(out, "executable:  %s\n", an->executable ? esc(an->executable) : "(unknown)");
	if (an->build_id)
		fprintf(out, "build-id:    %s\n", esc(an->build_id));
	if (an->has_pid)
		fprintf(out, "pid:         %d\n", an->pid);
	if (!an->has_signal) {
		fprintf(out, "signal:      none (the process was dumped while running)\n");
		return;
	}
	fprintf(out, "signal:      %s (%d)", an->signal_name ? esc(an->signal_name) : "signal", an->signo);
	if (an->code_name)
		fprintf(out, ", %s", esc(an->code_name));
	else if (an->has_code)
		fprintf(out, ", code %d", an->code);
	if (an->has_fault_address)
		fprintf(out, ", fault address %s", rep_hex(h, an->fault_address));
	fprintf(out, "\nthread:      %d (crashing)\n", an->crashing_tid);
	if (an->abort_message)
		fprintf(out, "Abort message: %s\n", esc(an->abort_message));
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

static void write_frame(FILE *out, const struct an_frame *f, size_t index)
{
	char h[32];
	const char *name = f->display ? f->display : f->function;
	fprintf(out, "#%-3zu %s in %s", index, rep_hex(h, f->pc), name ? esc(name) : "??");
	if (f->inlined)
		fprintf(out, " [inlined]");
	else if (f->has_offset)
		fprintf(out, " (+0x%" PRIx64 ")", f->offset);
	if (f->file)
		fprintf(out, " at %s:%d", esc(f->file), f->line);
	if (f->module)
		fprintf(out, "  [%s", esc(base_name(f->module)));
	if (f->module && !f->function && f->has_module_offset)
		fprintf(out, "+0x%" PRIx64, f->module_offset);
	if (f->module)
		fprintf(out, "]");
	if (f->kind == AN_FRAME_ASYNC)
		fprintf(out, " [async]");
	fputc('\n', out);
}

static void write_frames(FILE *out, const struct an_frame *frames, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (frames[i].seam || (i > 0 && frames[i].kind != frames[i - 1].kind))
			fprintf(out, "    ---- %s frames ----\n",
				frames[i].kind == AN_FRAME_ASYNC ? "async" : "native");
		write_frame(out, &frames[i], i);
	}
}

static void write_registers(FILE *out, const struct an_thread *t)
{
	char a[32], b[32], c[32], d[32];
	fprintf(out, "  rip %s  rsp %s  rbp %s  fs_base %s\n", rep_hex(a, t->regs[AN_REG_RIP]),
		rep_hex(b, t->regs[AN_REG_RSP]), rep_hex(c, t->regs[AN_REG_RBP]),
		rep_hex(d, t->regs[AN_REG_FS_BASE]));
}

static void write_thread(FILE *out, const struct an_thread *t, const struct analysis *an)
{
	fprintf(out, "\nThread %d", t->tid);
	if (t->crashing) {
		fprintf(out, " (crashing, %s)", an->signal_name ? esc(an->signal_name) : "signal");
	}
	if (t->async_root)
		fprintf(out, " (async stack)");
	fprintf(out, ":\n");
	write_registers(out, t);
	write_frames(out, t->frames, t->nframes);
	if (t->nframes == 0)
		fprintf(out, "  (no frames)\n");
}

static void write_events(FILE *out, const struct analysis *an, size_t tail)
{
	if (an->ntimeline == 0 || tail == 0)
		return;
	size_t first = an->ntimeline > tail ? an->ntimeline - tail : 0;
	fprintf(out, "\nRecorder events (last %zu of %zu before the crash):\n",
		an->ntimeline - first, an->ntimeline);
	for (size_t i = first; i < an->ntimeline; i++) {
		const struct an_timeline_entry *e = &an->timeline[i];
		const struct an_recorder *r = &an->recorders[e->recorder];
		const struct an_event *ev = &r->events[e->event];
		fprintf(out, "  [%" PRIu64 " %" PRIu64 ".%06" PRIu64 "] %s: %s%s\n", e->order,
			e->timestamp / 1000000, e->timestamp % 1000000, r->name ? esc(r->name) : "?",
			esc(ev->message), ev->in_flight ? "  (in flight)" : "");
	}
}

static void write_suspended(FILE *out, const struct analysis *an)
{
	if (an->nsuspended == 0)
		return;
	char h[32];
	fprintf(out, "\nSuspended coroutines (%zu):\n", an->nsuspended);
	for (size_t i = 0; i < an->nsuspended; i++) {
		fprintf(out, "\nSuspended chain at %s:\n", rep_hex(h, an->suspended[i].leaf));
		write_frames(out, an->suspended[i].frames, an->suspended[i].nframes);
	}
}

static void write_modules(FILE *out, const struct analysis *an)
{
	char a[32], b[32];
	fprintf(out, "\nModules:\n");
	for (size_t i = 0; i < an->nmodules; i++) {
		const struct an_module *m = &an->modules[i];
		fprintf(out, "  %s-%s %s%s\n", rep_hex(a, m->start), rep_hex(b, m->end),
			m->path ? esc(m->path) : "?", m->debuginfo ? "" : "  (no debug info)");
	}
}

int rep_text_write(FILE *out, const struct analysis *an, const struct rep_text_options *opts)
{
	write_header(out, an);
	write_async_state(out, an);
	for (size_t i = 0; i < an->nthreads; i++)
		if (an->threads[i].crashing)
			write_thread(out, &an->threads[i], an);
	write_events(out, an, opts->recorder_tail);
	if (opts->all_threads || !an->has_signal)
		for (size_t i = 0; i < an->nthreads; i++)
			if (!an->threads[i].crashing)
				write_thread(out, &an->threads[i], an);
	write_suspended(out, an);
	write_modules(out, an);
	if (an->signature)
		fprintf(out, "\nsignature: %s (%s)\n", esc(an->signature), esc(an->signature_hash));
	if (an->nwarnings) {
		fprintf(out, "\nWarnings:\n");
		for (size_t i = 0; i < an->nwarnings; i++)
			fprintf(out, "  %s\n", esc(an->warnings[i]));
	}
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
