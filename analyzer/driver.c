/* The analysis driver: open the debug info of a core, unwind every
 * thread, splice async stacks, recover recorder rings, sign the crash. */
#include "driver.h"
#include "strpool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abortmsg.h"
#include "cause.h"
#include "blocking.h"
#include "bthread.h"
#include "goroutine.h"
#include "args.h"
#include "../corefile/journal.h"
#include "../corefile/liveinfo.h"
#include "folly.h"
#include "gil.h"
#include "pyasync.h"
#include "frames.h"
#include "pthreads.h"
#include "recorder.h"
#include "recursion.h"
#include "handler.h"
#include "runtime.h"
#include "signature.h"
#include "waitgraph.h"

static bool copy_annotations(struct analysis *an, const struct core *core)
{
	if (!core->nannotations)
		return true;
	an->annotations = calloc(core->nannotations, sizeof(*an->annotations));
	if (!an->annotations)
		return false;
	an->nannotations = core->nannotations;   /* the unfilled ones are NULL */
	for (size_t i = 0; i < core->nannotations; i++)
		if (!(an->annotations[i].name = strdup(core->annotations[i].name)) ||
		    !(an->annotations[i].value = strdup(core->annotations[i].value)))
			return false;
	return true;
}
#include "v8.h"

static bool fill_identity(struct analysis *an, struct core *core, const struct core_identity *id)
{
	an->core_path = strdup(core->path);
	an->arch = core->arch->name;
	an->core_file_size = id->file_size;
	an->core_size = id->size;
	an->core_fingerprint = id->fingerprint[0] ? strdup(id->fingerprint) : NULL;
	an->crashed_at = id->crashed_at[0] ? strdup(id->crashed_at) : NULL;
	if (id->has_coredump_name) {
		an->boot_id = strdup(id->coredump.boot_id);
		an->coredump_uid = id->coredump.uid;
		an->has_coredump_uid = true;
	}
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
	return an->core_path && (!id->fingerprint[0] || an->core_fingerprint) && (!id->crashed_at[0] || an->crashed_at) &&
	       (!id->has_coredump_name || an->boot_id) && copy_annotations(an, core);
}

/* The unit and command line systemd-coredump logged with the core, its
 * crash time when the file name did not say, and a warning when the entry
 * names another signal than the core (it describes another crash). */
static bool add_journal_entry(struct analysis *an, struct core *core, const struct core_identity *id,
			      const struct an_options *opts)
{
	struct core_journal_entry e;
	char why[256];
	int r = core_journal_find(opts->journal_dir, core->path,
				  id->has_coredump_name ? &id->coredump : NULL, &e, why, sizeof(why));
	if (r < 0) {
		core_warn(core, "journal: %s", why);
		return true;
	}
	if (r == 0) {
		core_warn(core, "journal: no systemd-coredump entry for %s", core->path);
		return true;
	}
	char when[32];
	if (!an->crashed_at && e.has_usec && core_usec_iso8601(e.usec, when) &&
	    !(an->crashed_at = strdup(when)))
		goto nomem;
	if (e.has_signal && an->has_signal && e.signo != an->signo)
		core_warn(core, "journal: the entry for %s names signal %d, the core signal %d", core->path,
			  e.signo, an->signo);
	an->unit = e.unit;
	an->cmdline = e.cmdline;
	e.unit = e.cmdline = NULL;
	core_journal_entry_deinit(&e);
	return true;
nomem:
	core_journal_entry_deinit(&e);
	return false;
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
	an->signal_name = core_signal_name(cursig);
	if (si->present && si->signo == cursig) {
		an->code = si->code;
		an->has_code = true;
		an->code_name = core_signal_code_name(cursig, si->code);
		if (core_signal_has_address(si->signo, si->code)) {
			an->fault_address = si->addr;
			an->has_fault_address = true;
		}
	}
	an->crashing_tid = core->threads[0].tid;
}

/* A live process's (or its snapshot's) account of each thread. */
static bool fill_thread_infos(struct analysis *an, const struct core *core)
{
	for (size_t i = 0; i < core->nthread_infos; i++) {
		const struct core_thread_info *ti = &core->thread_infos[i];
		struct an_thread *t = an_thread_by_tid(an, ti->tid);
		if (!t || t->name)
			continue;
		t->state = ti->state;
		t->cpu_ticks = ti->cpu_ticks;
		t->has_cpu = true;
		if (ti->comm[0] && !(t->name = strdup(ti->comm)))
			return false;
	}
	for (size_t i = 0; i < core->noff_cpu; i++) {
		struct an_thread *t = an_thread_by_tid(an, core->off_cpu[i].tid);
		if (t && !t->has_off_cpu) {
			t->off_cpu_ms = core->off_cpu[i].ms;
			t->has_off_cpu = true;
		}
	}
	return true;
}

static bool fill_fds(struct analysis *an, const struct core *core)
{
	if (!core->nfds)
		return true;
	an->fds = calloc(core->nfds, sizeof(*an->fds));
	if (!an->fds)
		return false;
	for (size_t i = 0; i < core->nfds; i++) {
		an->fds[i].fd = core->fds[i].fd;
		if (!(an->fds[i].target = an_strdup(core->fds[i].target)))
			return false;
		an->nfds++;
	}
	return true;
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
		const struct core_thread *ct = &core->threads[i];
		memcpy(t->regs, ct->regs, sizeof(t->regs));
		t->nregs = ct->nregs;
		t->pc = core_thread_pc(core, ct);
		t->sp = core_thread_sp(core, ct);
		t->fp = core_thread_fp(core, ct);
		t->has_tp = core_thread_tp(core, ct, &t->tp);
	}
	return fill_thread_infos(an, core) && fill_fds(an, core);
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
		am->debuginfod = m->debuginfod;
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
		an->threads[i].unwind_error = stop;   /* a warning once the walk is final */
	}
	return NULL;
}

/* A walk that went past --max-frames along its stack (dwarf/unwind.c): a
 * recursion is cut to its kept frames (CUT), anything else to MAX frames
 * with a warning, as if the walk had stopped there. */
static bool bound_walk(struct an_thread *t, struct dbg_frame *frames, size_t *n,
		       size_t max, struct an_recursion_cut *cut)
{
	memset(cut, 0, sizeof(*cut));
	if (*n <= max)
		return true;
	if (an_recursion_find(frames, *n, cut) && cut->inner <= max) {
		an_recursion_compact(frames, n, cut);
		if (*n <= max)
			return true;
	} else {
		memset(cut, 0, sizeof(*cut));
	}
	char why[96];
	snprintf(why, sizeof(why), "stopped after %zu frames (--max-frames)", max);
	*n = max;
	if (t->unwind_error)
		return true;
	return (t->unwind_error = strdup(why)) != NULL;
}

static bool symbolize_native(struct an_thread *t, struct dbg_session *s,
			     const struct dbg_frame *frames, size_t n, struct an_strpool *pool,
			     struct an_place_memo *places)
{
	struct an_frame_list list = { .pool = pool, .places = places };
	if (!an_frames_append_native(&list, s, frames, n)) {
		an_frames_list_deinit(&list);
		return false;
	}
	an_frames_move_to(&list, &t->frames, &t->nframes);
	return true;
}

/* Last: the SHA-256 of the file, when asked for, is computed meanwhile. */
static bool fill_sha256(struct analysis *an, struct core *core)
{
	char hex[65];
	if (!core_identity_wait_sha256(core, hex))
		return true;
	an->core_sha256 = strdup(hex);
	return an->core_sha256 != NULL;
}

/* Every layer adds its warnings to the core's one list, in the order they
 * arose; the analysis takes the list over at the end. */
static void take_warnings(struct analysis *an, struct core *core)
{
	an->warnings = core->warnings;
	an->nwarnings = core->nwarnings;
	core->warnings = NULL;
	core->nwarnings = 0;
}

static struct core_error *analyze_stacks(struct analysis *an, struct dbg_session *s,
					 const struct an_options *opts)
{
	struct dbg_frame **stacks = calloc(an->nthreads, sizeof(*stacks));
	size_t *nstacks = calloc(an->nthreads, sizeof(*nstacks));
	struct an_recursion_cut *cuts = calloc(an->nthreads, sizeof(*cuts));
	struct an_place_memo *places = an_place_memo_create();
	size_t max = opts->dbg.max_frames ? opts->dbg.max_frames : DBG_MAX_FRAMES_DEFAULT;
	struct core_error *err = NULL;
	if (!stacks || !nstacks || !cuts || !places) {
		err = &core_error_nomem;
		goto out;
	}
	err = unwind_all(an, s, stacks, nstacks);
	if (err)
		goto out;
	for (size_t i = 0; i < an->nthreads; i++)
		if (!bound_walk(&an->threads[i], stacks[i], &nstacks[i], max, &cuts[i])) {
			err = &core_error_nomem;
			goto out;
		}
	if (!opts->no_async)
		an_folly_splice_all(s, an, (struct dbg_frame *const *)stacks, nstacks);
	for (size_t i = 0; i < an->nthreads; i++) {
		struct an_thread *t = &an->threads[i];
		bool ok = t->frames || (cuts[i].period ? an_recursion_symbolize(t, s, stacks[i], nstacks[i], &cuts[i])
						       : symbolize_native(t, s, stacks[i], nstacks[i], an->strings,
									  places));
		if (!ok) {
			err = &core_error_nomem;
			goto out;
		}
		/* The thread's frames now hold what the walk found. */
		free(stacks[i]);
		stacks[i] = NULL;
	}
	if (!an_go_analyze(s, an, !opts->no_tasks) || !an_v8_analyze(s, an)) {
		err = &core_error_nomem;
		goto out;
	}
	for (size_t i = 0; i < an->nthreads; i++)
		if (an->threads[i].unwind_error)
			core_warn(dbg_session_core(s), "thread %d: %s", an->threads[i].tid,
				  an->threads[i].unwind_error);
	if (!opts->no_tasks)
		an_bthread_analyze(s, an);
	if (!opts->no_args && !an_args_fill(an, s))
		err = &core_error_nomem;
	if (!err && (opts->locals || opts->locals_all) && !an_locals_fill(an, s, opts->locals_all))
		err = &core_error_nomem;
out:
	for (size_t i = 0; stacks && i < an->nthreads; i++)
		free(stacks[i]);
	free(stacks);
	free(nstacks);
	free(cuts);
	an_place_memo_destroy(places);
	return err;
}

struct core_error *an_analyze(struct core *core, const struct core_identity *id,
			      const struct an_options *opts, struct dbg_cache *cache,
			      struct analysis **out)
{
	*out = NULL;
	struct dbg_session *s = NULL;
	struct an_runtime_session *rs = NULL;
	struct core_error *err = NULL;
	struct analysis *an = an_analysis_create();
	if (an)
		an->strings = an_strpool_create();
	if (!an || !an->strings || !fill_identity(an, core, id)) {
		err = &core_error_nomem;
		goto out;
	}
	fill_signal(an, core);
	if (opts->journal && !add_journal_entry(an, core, id, opts)) {
		err = &core_error_nomem;
		goto out;
	}
	if (!fill_threads(an, core)) {
		err = &core_error_nomem;
		goto out;
	}
	struct core_error *serr = dbg_session_open(core, &opts->dbg, cache, &s);
	if (serr) {
		core_warn(core, "no debug information session: %s", serr->message);
		core_error_destroy(serr);
	} else {
		err = an_runtime_session_open(opts->runtimes, s, &rs);
		if (err)
			goto out;
		if (!fill_modules(an, s)) {
			err = &core_error_nomem;
			goto out;
		}
		an_abort_message_recover(s, an);
		an_pthreads_locate(s, an);
		err = analyze_stacks(an, s, opts);
		if (err)
			goto out;
		an_runtimes_splice(rs, an);
		if (!opts->no_tasks && !an_asyncio_tasks(core, s, rs, &opts->asyncio, an)) {
			err = &core_error_nomem;
			goto out;
		}
		if (!opts->no_recorders)
			an_recorders_recover(s, an);
	}
	/* ASYNCORE_BENCH_NO_HANGS: bench/hangs.sh's measure of what the hang
	 * analysis costs, nothing else */
	bool hangs = !getenv("ASYNCORE_BENCH_NO_HANGS");
	if ((hangs && (!an_blocking_analyze(core, s, an) || !an_gil_analyze(core, s, an) ||
		       !an_waitgraph_analyze(an))) ||
	    !an_handler_find(core, s, an) || !an_cause_decide(core, s, an)) {
		err = &core_error_nomem;
		goto out;
	}
	an_signature_compute(an, opts->signature_lists);
	if (!fill_sha256(an, core)) {
		err = &core_error_nomem;
		goto out;
	}
	take_warnings(an, core);
	*out = an;
	an = NULL;
out:
	an_analysis_destroy(an);
	an_runtime_session_destroy(rs);
	dbg_session_close(s);
	return err;
}
