/* The ingest supervisor: hands the batch's cores to worker processes one at
 * a time, watches each core's time limit (the analysis, then the write, each
 * --timeout seconds), replaces a worker that dies, says which core it took
 * with it and why, and records that core in ingest_errors with the reason
 * once every worker is gone, and so the cores and errors it still held
 * unwritten in a batching store's batch.  SIGINT and SIGTERM stop the batch:
 * the cores being analysed are abandoned (their transactions never commit;
 * a worker holding a batch finishes its core and writes the batch), no new
 * one starts, every worker is reaped. */
#include "ingest.h"

#include "../base/array.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../corefile/core.h"
#include "../reports/bytes.h"
#include "../reports/store.h"

/* A core a worker finished that its store still holds unwritten (a
 * ClickHouse batch): stored, or failed with REASON. */
struct held_core {
	uint32_t index;
	bool stored;
	bool has_id;
	char fingerprint[72];
	uint64_t file_size;
	char *reason;               /* failed: owned */
};

/* One worker process and the core it holds. */
struct slot {
	pid_t pid;                  /* 0: no worker */
	int sock;
	bool busy;
	uint32_t index;             /* the core it holds, while busy */
	bool has_id;                /* the worker told the core's identity */
	char fingerprint[72];
	uint64_t file_size;
	struct timespec deadline;
	bool timed_out;             /* killed for passing the time limit */
	bool leaving;               /* said it ends after its core: gets no other */
	bool released;              /* told to go; killed if still there at DEADLINE */
	size_t debug_files, dwarf_parsed;   /* its cache, as last reported */
	struct held_core *held;     /* the last cores it finished, unwritten */
	size_t nheld, capheld;
	size_t lost;                /* its store's lost cores, as last reported */
};

struct progress {
	bool tty, quiet;
	struct timespec start, last;
	size_t next_line;           /* the done count of the next plain line */
	size_t shown;               /* the done count of the last plain line */
};

/* A core lost with its worker, to record in ingest_errors. */
struct loss {
	uint32_t index;
	bool has_id;
	char fingerprint[72];
	uint64_t file_size;
	char *reason;               /* owned */
	bool maybe_stored;          /* written before its worker died, perhaps */
};

struct supervisor {
	const struct ingest_opts *o;
	struct ingest_tally *t;
	struct slot *slots;
	unsigned nslots;
	size_t next;                /* the next core to hand out */
	bool stopping;
	struct progress progress;
	size_t retired_files, retired_parsed;   /* of workers that are gone */
	struct loss *losses;        /* recorded when every worker is gone */
	size_t nlosses, caplosses;
	struct rep_store *store;    /* opened for the first lost core, kept to the end */
};

/* SIGINT and SIGTERM: a byte on this pipe wakes the poll loop. */
static int stop_pipe[2] = {-1, -1};

static void on_stop_signal(int sig)
{
	char c = (char)sig;
	int saved = errno;
	if (write(stop_pipe[1], &c, 1) < 0) {
		/* the pipe is full: a stop is already pending */
	}
	errno = saved;
}

static int install_stop_signals(void)
{
	if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		return -1;
	struct sigaction sa = {.sa_handler = on_stop_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static void remove_stop_signals(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	close(stop_pipe[0]);
	close(stop_pipe[1]);
	stop_pipe[0] = stop_pipe[1] = -1;
}

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static struct timespec now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts;
}

/* "1h02m", "3m10s", "12s" into BUF. */
static const char *duration(double secs, char *buf, size_t len)
{
	unsigned long s = secs > 0 ? (unsigned long)(secs + 0.5) : 0;
	if (s >= 3600)
		snprintf(buf, len, "%luh%02lum", s / 3600, s / 60 % 60);
	else if (s >= 60)
		snprintf(buf, len, "%lum%02lus", s / 60, s % 60);
	else
		snprintf(buf, len, "%lus", s);
	return buf;
}

/* Cores done, failed, rate and time left: rewritten in place on a terminal
 * (at most five times a second), a plain line per 1,000 cores otherwise. */
static void show_progress(struct supervisor *sv, bool final)
{
	struct progress *p = &sv->progress;
	const struct ingest_tally *t = sv->t;
	struct timespec ts = now();
	char left[32];
	if (p->quiet)
		return;
	if (!p->tty) {
		/* The last line is where the batch ended, unless one just said it. */
		if (final ? p->shown == 0 || p->shown == t->done : t->done < p->next_line)
			return;
		p->next_line += 1000;
		p->shown = t->done;
	} else if (!final && seconds_between(&p->last, &ts) < 0.2) {
		return;
	}
	p->last = ts;
	double secs = seconds_between(&p->start, &ts);
	double rate = secs > 0 ? (double)t->done / secs : 0.0;
	size_t total = sv->o->npaths;
	duration(rate > 0 ? (double)(total - t->done) / rate : 0, left, sizeof(left));
	fprintf(stderr, "%s%zu/%zu cores, %zu failed, %.1f cores/s, %s left%s",
		p->tty ? "\r\033[K" : "asyncore: ingest: ", t->done, total, t->failed, rate, left,
		p->tty && !final ? "" : "\n");
	fflush(stderr);
}

/* A line about one core, above the progress line. */
static void report_core(struct supervisor *sv, const char *path, const char *reason)
{
	fputs(sv->progress.tty ? "\r\033[K" : "", stderr);
	rep_say(stderr, path, reason);
}

/* Start a worker in SLOT. */
static int spawn(struct supervisor *sv, struct slot *slot)
{
	int fds[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0)
		return -1;
	pid_t supervisor = getpid();
	fflush(NULL);   /* nothing buffered is written twice */
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		for (unsigned i = 0; i < sv->nslots; i++)
			if (sv->slots[i].pid)
				close(sv->slots[i].sock);
		close(stop_pipe[0]);
		close(stop_pipe[1]);
		ingest_worker_main(sv->o, fds[1], supervisor);
	}
	close(fds[1]);
	*slot = (struct slot){.pid = pid, .sock = fds[0]};
	return 0;
}

/* Hand the next core to every idle worker. */
static void dispatch(struct supervisor *sv)
{
	for (unsigned i = 0; i < sv->nslots && !sv->stopping; i++) {
		struct slot *s = &sv->slots[i];
		if (!s->pid || s->busy || s->leaving || sv->next >= sv->o->npaths)
			continue;
		uint32_t index = (uint32_t)sv->next;
		if (send(s->sock, &index, sizeof(index), MSG_NOSIGNAL) != (ssize_t)sizeof(index))
			continue;   /* it died: its end of the socket says so next */
		sv->next++;
		s->busy = true;
		s->index = index;
		s->has_id = false;
		s->timed_out = false;
		s->deadline = now();
		s->deadline.tv_sec += sv->o->limits.timeout;
	}
}

/* Why the worker that held a core ended, from its wait status. */
static void death_reason(const struct supervisor *sv, const struct slot *s, int status, char *buf,
			 size_t len)
{
	char limit[128];
	if (s->timed_out) {
		snprintf(buf, len, "timed out after %u s", sv->o->limits.timeout);
	} else if (WIFSIGNALED(status)) {
		const char *name = core_signal_name(WTERMSIG(status));
		if (name)
			snprintf(buf, len, "killed by %s while analysing", name);
		else
			snprintf(buf, len, "killed by signal %d while analysing", WTERMSIG(status));
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == INGEST_WORKER_EXIT_MEMORY) {
		snprintf(buf, len, "%s", cli_memory_limit_message(&sv->o->limits, limit, sizeof(limit)));
	} else {
		snprintf(buf, len, "the worker exited with status %d while analysing",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
}

/* A core a dead worker took with it.  Recorded once every worker is gone:
 * the supervisor never waits for the store's lock while a worker it may
 * have to kill (one stopped in the middle of a write) holds it. */
static int add_loss(struct supervisor *sv, uint32_t index, bool has_id, const char *fingerprint,
		    uint64_t file_size, const char *reason, bool maybe_stored)
{
	struct loss *l = base_array_push(&sv->losses, &sv->nlosses, &sv->caplosses, sizeof(*sv->losses));
	if (!l)
		return -1;
	*l = (struct loss){.index = index, .has_id = has_id, .file_size = file_size,
			   .maybe_stored = maybe_stored, .reason = strdup(reason)};
	memcpy(l->fingerprint, fingerprint, sizeof(l->fingerprint));
	if (!l->reason) {
		sv->nlosses--;
		return -1;
	}
	return 0;
}

/* Record loss L (counted failed) through ST; one that was stored after all
 * (written before its worker died) counts as stored instead. */
static void record_loss(struct supervisor *sv, struct rep_store *st, const struct loss *l)
{
	struct rep_core_id id = {sv->o->paths[l->index], l->has_id ? l->fingerprint : NULL,
				 l->file_size};
	char why[512];
	if (l->maybe_stored && l->has_id && rep_store_has(st, l->fingerprint) == 1) {
		sv->t->failed--;
		sv->t->stored++;
	} else if (rep_store_record_error(st, &id, l->reason, why, sizeof(why)) != 0) {
		rep_say(stderr, id.path, why);
	}
}

/* The supervisor's own handle on the store (reads while workers write,
 * then the losses' records), opened once; NULL (WHY says why) when it
 * cannot be. */
static struct rep_store *supervisor_store(struct supervisor *sv, char *why, size_t whylen)
{
	struct rep_store *st = NULL;
	if (!sv->store && rep_store_open(sv->o->db, &st, why, whylen) == 0)
		sv->store = st;
	return sv->store;
}

/* Every worker is gone: record the losses in ingest_errors. */
static void record_losses(struct supervisor *sv)
{
	struct rep_store *st = NULL;
	char why[512];
	if (sv->nlosses && !(st = supervisor_store(sv, why, sizeof(why))))
		fprintf(stderr, "asyncore: %zu failed cores not recorded in ingest_errors: %s\n",
			sv->nlosses, why);
	for (size_t i = 0; i < sv->nlosses; i++) {
		if (st)
			record_loss(sv, st, &sv->losses[i]);
		free(sv->losses[i].reason);
	}
	free(sv->losses);
	sv->losses = NULL;
	sv->nlosses = sv->caplosses = 0;
}

/* Is the core FINGERPRINT stored?  A read: in WAL mode it does not wait
 * for a writer, stopped or not. */
static bool stored_now(struct supervisor *sv, bool has_id, const char *fingerprint)
{
	char why[512];
	struct rep_store *st = has_id ? supervisor_store(sv, why, sizeof(why)) : NULL;
	return st && rep_store_has(st, fingerprint) == 1;
}

/* Core INDEX is lost with its worker: said now, counted failed, recorded
 * at the end.  MAYBE_STORED: it may have been written before its worker
 * died: asked now and at the end. */
static void lose(struct supervisor *sv, uint32_t index, bool has_id, const char *fingerprint,
		 uint64_t file_size, const char *reason, bool maybe_stored)
{
	if (maybe_stored && stored_now(sv, has_id, fingerprint)) {
		sv->t->stored++;
		return;
	}
	report_core(sv, sv->o->paths[index], reason);
	if (add_loss(sv, index, has_id, fingerprint, file_size, reason, maybe_stored) != 0)
		fprintf(stderr, "asyncore: out of memory: not recorded in ingest_errors\n");
	sv->t->failed++;
}

/* What S's worker took with it when it ended: the core it was on (unless
 * the batch is stopping: then it is abandoned, as if never started) and
 * the cores it finished but still held unwritten (a failed one's error row
 * was held too). */
static void note_worker_losses(struct supervisor *sv, const struct slot *s, int status)
{
	bool lost_core = s->busy && !sv->stopping;
	char death[256], reason[512];
	if (!lost_core && s->nheld == 0)
		return;
	if (sv->stopping && !lost_core)
		snprintf(death, sizeof(death), "the batch was interrupted");
	else
		death_reason(sv, s, status, death, sizeof(death));
	if (lost_core) {
		lose(sv, s->index, s->has_id, s->fingerprint, s->file_size, death, true);
		sv->t->done++;
	}
	snprintf(reason, sizeof(reason), "not stored: its worker ended (%s) before the batch holding "
		 "it was written", death);
	for (size_t i = 0; i < s->nheld; i++) {
		const struct held_core *h = &s->held[i];
		if (h->stored) {
			sv->t->stored--;   /* lose() counts it failed, unless it was written */
			lose(sv, h->index, h->has_id, h->fingerprint, h->file_size, reason, true);
		} else if (add_loss(sv, h->index, h->has_id, h->fingerprint, h->file_size, h->reason,
				    false) != 0) {
			fprintf(stderr, "asyncore: out of memory: not recorded in ingest_errors\n");
		}
	}
}

/* Forget all but the last KEEP cores S's worker held. */
static void held_clear(struct slot *s, size_t keep)
{
	size_t drop = s->nheld > keep ? s->nheld - keep : 0;
	if (drop == 0)
		return;
	for (size_t i = 0; i < drop; i++)
		free(s->held[i].reason);
	memmove(s->held, s->held + drop, (s->nheld - drop) * sizeof(*s->held));
	s->nheld -= drop;
}

/* The worker in S has ended (its socket was closed): reap it, account for
 * the cores it took with it, and start another while there is work. */
static void reap(struct supervisor *sv, struct slot *s)
{
	int status = 0;
	while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
		;
	close(s->sock);
	sv->retired_files += s->debug_files;
	sv->retired_parsed += s->dwarf_parsed;
	note_worker_losses(sv, s, status);
	held_clear(s, 0);
	free(s->held);
	*s = (struct slot){0};
	if (!sv->stopping && sv->next < sv->o->npaths && spawn(sv, s) != 0)
		fprintf(stderr, "asyncore: cannot start a worker: %s\n", strerror(errno));
}

/* The worker's store lost LOST cores so far (stored in the tally: they
 * are failed; the store reported and recorded them itself). */
static void count_lost(struct supervisor *sv, struct slot *s, size_t lost)
{
	if (lost <= s->lost)
		return;
	size_t n = lost - s->lost;
	s->lost = lost;
	n = n < sv->t->stored ? n : sv->t->stored;
	sv->t->stored -= n;
	sv->t->failed += n;
}

/* Remember the core S's worker just finished (M) while its store holds it
 * unwritten; only the last M->held cores and errors are still held. */
static void track_held(struct slot *s, const struct ingest_msg *m)
{
	bool accepted = m->outcome == INGEST_STORED || m->outcome == INGEST_FAILED;
	struct held_core *h = accepted && m->held > 0
				      ? base_array_push(&s->held, &s->nheld, &s->capheld, sizeof(*s->held))
				      : NULL;
	if (h) {
		*h = (struct held_core){.index = m->index, .stored = m->outcome == INGEST_STORED,
					.has_id = s->has_id, .file_size = s->file_size};
		memcpy(h->fingerprint, s->fingerprint, sizeof(h->fingerprint));
		/* Without its reason a failure could not be recorded. */
		if (!h->stored && !(h->reason = strdup(m->reason)))
			s->nheld--;
	}
	held_clear(s, m->held);
}

static void on_message(struct supervisor *sv, struct slot *s, const struct ingest_msg *m)
{
	if (m->kind == INGEST_MSG_CLOSED) {
		count_lost(sv, s, m->lost);
		held_clear(s, 0);
		return;
	}
	if (!s->busy || m->index != s->index)
		return;
	if (m->kind == INGEST_MSG_STARTED) {
		s->has_id = true;
		snprintf(s->fingerprint, sizeof(s->fingerprint), "%s", m->fingerprint);
		s->file_size = m->file_size;
		return;
	}
	if (m->kind == INGEST_MSG_WRITING) {
		if (!s->released) {   /* a released one keeps its grace */
			s->deadline = now();
			s->deadline.tv_sec += sv->o->limits.timeout;
		}
		return;
	}
	s->busy = false;
	s->leaving = m->leaving;
	s->debug_files = m->debug_files;
	s->dwarf_parsed = m->dwarf_parsed;
	track_held(s, m);
	count_lost(sv, s, m->lost);
	sv->t->done++;
	switch (m->outcome) {
	case INGEST_STORED:
		sv->t->stored++;
		break;
	case INGEST_PRESENT:
		sv->t->present++;
		break;
	case INGEST_FAILED:
		sv->t->failed++;
		report_core(sv, sv->o->paths[m->index], m->reason);
		break;
	case INGEST_STORE_FAILED:
		sv->t->failed++;
		sv->t->store_failed = true;
		sv->stopping = true;
		fputs(sv->progress.tty ? "\r\033[K" : "", stderr);
		rep_say(stderr, m->reason, NULL);
		break;
	}
}

/* Whether M is a message a worker sends, its strings ended within their
 * fields (ended here): a worker analyses hostile cores, and what it says is
 * not trusted further than that. */
static bool message_valid(struct ingest_msg *m)
{
	m->fingerprint[sizeof(m->fingerprint) - 1] = '\0';
	m->reason[sizeof(m->reason) - 1] = '\0';
	switch (m->kind) {
	case INGEST_MSG_STARTED:
	case INGEST_MSG_WRITING:
	case INGEST_MSG_CLOSED:
		return true;
	case INGEST_MSG_DONE:
		return m->outcome == INGEST_STORED || m->outcome == INGEST_PRESENT ||
		       m->outcome == INGEST_FAILED || m->outcome == INGEST_STORE_FAILED;
	}
	return false;
}

/* Read what S's worker says; its end of the socket closing means it ended. */
static void on_readable(struct supervisor *sv, struct slot *s)
{
	struct ingest_msg m;
	ssize_t n = recv(s->sock, &m, sizeof(m), MSG_DONTWAIT);
	if (n == (ssize_t)sizeof(m) && message_valid(&m))
		on_message(sv, s, &m);
	else if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		reap(sv, s);
}

#define RELEASE_GRACE 10

/* Tell the worker in S to go after its core (its socket's write side is
 * shut), and kill it if it is still there after SECONDS. */
static void release(struct slot *s, unsigned seconds)
{
	shutdown(s->sock, SHUT_WR);
	s->released = true;
	s->deadline = now();
	s->deadline.tv_sec += seconds;
}

/* Stop: kill the workers in the middle of a core (nothing of it commits),
 * let the idle ones go.  One that holds finished cores unwritten (a
 * ClickHouse batch) is let finish its core and write them, within
 * RELEASE_GRACE seconds: the cores it finished stay.  A second stop kills
 * every worker in the middle of a core. */
static void stop(struct supervisor *sv)
{
	bool again = sv->stopping;
	sv->stopping = true;
	sv->t->interrupted = true;
	for (unsigned i = 0; i < sv->nslots; i++) {
		struct slot *s = &sv->slots[i];
		if (!s->pid || !s->busy)
			continue;
		if (s->nheld && !again)
			release(s, RELEASE_GRACE);
		else
			kill(s->pid, SIGKILL);
	}
}

/* Kill the workers past their core's time limit, or released and still
 * there; returns the milliseconds to the next deadline (-1: none). */
static int enforce_deadlines(struct supervisor *sv)
{
	struct timespec ts = now();
	int wait_ms = -1;
	for (unsigned i = 0; i < sv->nslots; i++) {
		struct slot *s = &sv->slots[i];
		bool watched = s->released || (s->busy && sv->o->limits.timeout != 0);
		if (!s->pid || !watched || s->timed_out)
			continue;
		double left = seconds_between(&ts, &s->deadline);
		if (left <= 0) {
			s->timed_out = true;
			kill(s->pid, SIGKILL);
			continue;
		}
		int ms = (int)(left * 1000) + 1;
		if (wait_ms < 0 || ms < wait_ms)
			wait_ms = ms;
	}
	return wait_ms;
}

/* Idle workers with nothing left to do are told to go (their socket's
 * write side is shut; they exit and are reaped); one still there after
 * RELEASE_GRACE seconds (stopped, or stuck on its way out) is killed.  One
 * that holds cores unwritten writes them on its way out: that write has
 * the time limit too. */

static void release_idle(struct supervisor *sv)
{
	if (!sv->stopping && sv->next < sv->o->npaths)
		return;
	for (unsigned i = 0; i < sv->nslots; i++) {
		struct slot *s = &sv->slots[i];
		if (!s->pid || s->busy || s->released)
			continue;
		release(s, RELEASE_GRACE + (s->nheld ? sv->o->limits.timeout : 0));
	}
}

/* One round: wait for a message, a worker's end, a deadline or a stop. */
static void wait_for_events(struct supervisor *sv)
{
	struct pollfd fds[1 + INGEST_MAX_WORKERS];
	struct slot *owner[1 + INGEST_MAX_WORKERS];
	nfds_t n = 0;
	fds[n++] = (struct pollfd){.fd = stop_pipe[0], .events = POLLIN};
	for (unsigned i = 0; i < sv->nslots; i++)
		if (sv->slots[i].pid) {
			owner[n] = &sv->slots[i];
			fds[n++] = (struct pollfd){.fd = sv->slots[i].sock, .events = POLLIN};
		}
	int wait_ms = enforce_deadlines(sv);
	if (sv->progress.tty && (wait_ms < 0 || wait_ms > 200))
		wait_ms = 200;
	if (poll(fds, n, wait_ms) <= 0)
		return;
	if (fds[0].revents) {
		char c;
		while (read(stop_pipe[0], &c, 1) == 1)
			;
		stop(sv);
	}
	for (nfds_t i = 1; i < n; i++)
		if (fds[i].revents && owner[i]->pid)
			on_readable(sv, owner[i]);
}

static bool any_worker(const struct supervisor *sv)
{
	for (unsigned i = 0; i < sv->nslots; i++)
		if (sv->slots[i].pid)
			return true;
	return false;
}

int ingest_supervise(const struct ingest_opts *o, struct ingest_tally *t)
{
	struct supervisor sv = {.o = o, .t = t, .nslots = o->jobs};
	int rc = -1;
	sv.progress = (struct progress){.tty = !o->quiet && isatty(STDERR_FILENO), .quiet = o->quiet,
					.start = now(), .next_line = 1000};
	sv.slots = calloc(sv.nslots ? sv.nslots : 1, sizeof(*sv.slots));
	if (!sv.slots || install_stop_signals() != 0) {
		fprintf(stderr, "asyncore: cannot set up the workers: %s\n", strerror(errno));
		free(sv.slots);
		return -1;
	}
	for (unsigned i = 0; i < sv.nslots; i++)
		if (spawn(&sv, &sv.slots[i]) != 0)
			fprintf(stderr, "asyncore: cannot start a worker: %s\n", strerror(errno));
	if (any_worker(&sv))
		rc = 0;
	else
		fprintf(stderr, "asyncore: no worker could be started\n");
	while (any_worker(&sv)) {
		dispatch(&sv);
		release_idle(&sv);
		wait_for_events(&sv);
		show_progress(&sv, false);
	}
	record_losses(&sv);
	rep_store_close(sv.store);
	show_progress(&sv, true);
	t->debug_files = sv.retired_files;
	t->dwarf_parsed = sv.retired_parsed;
	remove_stop_signals();
	free(sv.slots);
	return rc;
}
