/* The analysis driver: open the core, open its debug info, unwind every
 * thread, splice async stacks, recover recorder rings, sign the crash. */
#include "analyze.h"

#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "folly.h"
#include "frames.h"
#include "recorder.h"
#include "signature.h"

static bool fill_identity(struct analysis *an, struct core *core, const char *path)
{
	an->core_path = strdup(path);
	an->core_size = core->file_size;
	an->executable = an_strdup(core_executable(core));
	if (core->psinfo.present) {
		an->pid = core->psinfo.pid;
		an->has_pid = true;
		an->uid = core->psinfo.uid;
		an->has_uid = true;
	} else if (core->siginfo.present && core->nthreads) {
		an->pid = core->threads[0].tid;
		an->has_pid = true;
	}
	return an->core_path != NULL;
}

static bool signal_has_address(int signo)
{
	return signo == 4 || signo == 5 || signo == 7 || signo == 8 || signo == 11;
}

/* The first thread's pr_cursig is the signal being delivered when the core
 * was written; a core written by gcore of a running process has none (its
 * siginfo then shows only the debugger's SIGSTOP). */
static void fill_signal(struct analysis *an, const struct core *core)
{
	const struct core_siginfo *si = &core->siginfo;
	int cursig = core->nthreads ? core->threads[0].cursig : 0;
	if (cursig <= 0)
		return;
	an->has_signal = true;
	an->signo = cursig;
	if (si->present && si->signo == cursig) {
		an->code = si->code;
		an->has_code = true;
		if (signal_has_address(si->signo) && si->code > 0 && si->code != 0x80) {
			an->fault_address = si->addr;
			an->has_fault_address = true;
		}
	}
	an->crashing_tid = core->threads[0].tid;
}

static bool fill_threads(struct analysis *an, const struct core *core)
{
	an->threads = calloc(core->nthreads, sizeof(*an->threads));
	if (!an->threads)
		return false;
	an->nthreads = core->nthreads;
	for (size_t i = 0; i < core->nthreads; i++) {
		struct an_thread *t = &an->threads[i];
		t->tid = core->threads[i].tid;
		t->crashing = i == 0 && an->has_signal;
		memcpy(t->regs, core->threads[i].regs, sizeof(t->regs));
	}
	return true;
}

static bool fill_modules(struct analysis *an, struct dbg_session *s)
{
	size_t n = dbg_module_count(s);
	an->modules = calloc(n ? n : 1, sizeof(*an->modules));
	if (!an->modules)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct dbg_module_info *m = dbg_module_get(s, i);
		struct an_module *am = &an->modules[an->nmodules++];
		am->path = an_strdup(m->path);
		am->start = m->start;
		am->end = m->end;
		am->build_id = an_strdup(m->build_id);
		am->debuginfo = an_strdup(m->debuginfo);
		if (m->is_main && !an->build_id)
			an->build_id = an_strdup(m->build_id);
	}
	return true;
}

static struct core_error *unwind_all(struct analysis *an, struct dbg_session *s,
				     struct dbg_frame **stacks, size_t *nstacks)
{
	for (size_t i = 0; i < an->nthreads; i++) {
		char *stop = NULL;
		struct core_error *err = dbg_unwind_thread(s, i, &stacks[i], &nstacks[i], &stop);
		if (err)
			return err;
		if (stop) {
			an->threads[i].unwind_error = stop;
			an_warn(an, "thread %d: %s", an->threads[i].tid, stop);
		}
	}
	return NULL;
}

static bool symbolize_native(struct an_thread *t, struct dbg_session *s,
			     const struct dbg_frame *frames, size_t n)
{
	struct an_frame_list list = { 0 };
	for (size_t i = 0; i < n; i++)
		if (!an_frames_append_pc(&list, s, frames[i].pc, frames[i].activation,
					 AN_FRAME_NATIVE, &frames[i], false)) {
			an_frames_list_deinit(&list);
			return false;
		}
	an_frames_move_to(&list, &t->frames, &t->nframes);
	return true;
}

/* Copy the layers' warnings; one already copied is not repeated. */
static void copy_warnings(struct analysis *an, struct core *core, struct dbg_session *s)
{
	for (size_t i = 0; i < core->nwarnings; i++)
		an_warn(an, "%s", core->warnings[i]);
	for (size_t i = 0; s && i < dbg_session_nwarnings(s); i++)
		an_warn(an, "%s", dbg_session_warning(s, i));
}

static struct core_error *analyze_stacks(struct analysis *an, struct dbg_session *s,
					 const struct an_options *opts)
{
	struct dbg_frame **stacks = calloc(an->nthreads, sizeof(*stacks));
	size_t *nstacks = calloc(an->nthreads, sizeof(*nstacks));
	struct core_error *err = NULL;
	if (!stacks || !nstacks) {
		err = &core_error_nomem;
		goto out;
	}
	err = unwind_all(an, s, stacks, nstacks);
	if (err)
		goto out;
	if (!opts->no_async)
		an_folly_splice_all(s, an, (struct dbg_frame *const *)stacks, nstacks);
	for (size_t i = 0; i < an->nthreads; i++)
		if (!an->threads[i].frames && !symbolize_native(&an->threads[i], s, stacks[i], nstacks[i])) {
			err = &core_error_nomem;
			goto out;
		}
	if (!opts->no_args && !an_args_fill(an, s))
		err = &core_error_nomem;
out:
	for (size_t i = 0; stacks && i < an->nthreads; i++)
		free(stacks[i]);
	free(stacks);
	free(nstacks);
	return err;
}

struct core_error *an_analyze(const char *path, const struct an_options *opts,
			      struct dbg_cache *cache, struct analysis **out)
{
	*out = NULL;
	struct core *core = NULL;
	struct dbg_session *s = NULL;
	struct analysis *an = NULL;
	struct core_error *err = core_open(path, &core);
	if (err)
		return err;
	an = an_analysis_create();
	if (!an || !fill_identity(an, core, path)) {
		err = &core_error_nomem;
		goto out;
	}
	fill_signal(an, core);
	if (!fill_threads(an, core)) {
		err = &core_error_nomem;
		goto out;
	}
	struct core_error *serr = dbg_session_open(core, &opts->dbg, cache, &s);
	copy_warnings(an, core, s);  /* the input's problems first; later ones follow */
	if (serr) {
		an_warn(an, "no debug information session: %s", serr->message);
		core_error_destroy(serr);
	} else {
		if (!fill_modules(an, s)) {
			err = &core_error_nomem;
			goto out;
		}
		err = analyze_stacks(an, s, opts);
		if (err)
			goto out;
		if (!opts->no_recorders)
			an_recorders_recover(s, an);
	}
	an_signature_compute(an);
	copy_warnings(an, core, s);
	*out = an;
	an = NULL;
out:
	an_analysis_destroy(an);
	dbg_session_close(s);
	core_close(core);
	return err;
}
