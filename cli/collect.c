/* `asyncore collect`: one crash from the kernel's pipe into the store and
 * DIR (cli/collect.h). */
#include "collect.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "../analyzer/driver.h"
#include "../corefile/corewrite.h"
#include "../corefile/identity.h"
#include "../corefile/journal.h"
#include "../corefile/minicore.h"
#include "../reports/store.h"
#include "budget.h"
#include "ingest.h"
#include "options.h"
#include "runtimes.h"
#include "test_hooks.h"

#define COLLECT_DEFAULT_MAX_SIZE (1ull << 30)
#define COLLECT_DEFAULT_TIMEOUT 60
#define COLLECT_BUF (1u << 20)

/* The child's exit status. */
enum { CHILD_STORED = 0, CHILD_WARNINGS = 1, CHILD_UNUSABLE = 2, CHILD_STORE_FAILED = 3 };

/* The crash as core_pattern's %P %i %s %t %E give it. */
struct crash {
	long pid, tid;
	int signo;
	uint64_t time;              /* seconds since the epoch */
	char exe[PATH_MAX];         /* %E with '!' back to '/' */
};

struct collector {
	const struct collect_opts *o;
	struct crash cr;
	char raw[PATH_MAX];         /* the core as read, under a hidden name */
	bool have_raw;
	char base[NAME_MAX + 1];    /* core.COMM.UID.BOOTID.PID.USEC */
	char kept[PATH_MAX];        /* what stays in DIR, or "" */
};

/* ---- logging ---------------------------------------------------------- */

/* One line to stderr and to the journal, with fields naming the crash. */
static void say(const struct collector *c, int priority, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(const struct collector *c, int priority, const char *fmt, ...)
{
	char reason[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (priority <= LOG_WARNING)
		fprintf(stderr, "asyncore: collect: pid %ld (%s): %s\n", c->cr.pid, c->cr.exe, reason);
	char *message = NULL, *exe = NULL, *why = NULL, prio[32], pid[48];
	snprintf(prio, sizeof(prio), "PRIORITY=%d", priority);
	snprintf(pid, sizeof(pid), "ASYNCORE_PID=%ld", c->cr.pid);
	if (asprintf(&message, "MESSAGE=asyncore collect: pid %ld (%s): %s", c->cr.pid, c->cr.exe, reason) >= 0 &&
	    asprintf(&exe, "ASYNCORE_EXE=%s", c->cr.exe) >= 0 && asprintf(&why, "ASYNCORE_REASON=%s", reason) >= 0) {
		const char *fields[] = {message, prio, "SYSLOG_IDENTIFIER=asyncore", pid, exe, why};
		core_journal_send(fields, sizeof(fields) / sizeof(fields[0]));
	}
	free(message);
	free(exe);
	free(why);
}

/* ---- reading the pipe ------------------------------------------------- */

static bool all_zero(const unsigned char *p, size_t n)
{
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* Write BUF to FD, leaving holes for zero pages (the kernel pipes unsaved
 * memory as zeros: a large core is mostly holes on disk). */
static bool write_sparse(int fd, const unsigned char *buf, size_t n)
{
	for (size_t at = 0; at < n;) {
		size_t len = n - at < 4096 ? n - at : 4096;
		if (all_zero(buf + at, len)) {
			if (lseek(fd, (off_t)len, SEEK_CUR) < 0)
				return false;
		} else {
			for (size_t done = 0; done < len;) {
				ssize_t w = write(fd, buf + at + done, len - done);
				if (w < 0 && errno == EINTR)
					continue;
				if (w <= 0)
					return false;
				done += (size_t)w;
			}
		}
		at += len;
	}
	return true;
}

/* Read standard input to its end into FD (-1: discard); a failing write
 * is reported once and the rest is discarded.  Returns the bytes read. */
static uint64_t drain(struct collector *c, int fd)
{
	unsigned char *buf = malloc(COLLECT_BUF);
	static unsigned char small[65536];
	size_t cap = buf ? COLLECT_BUF : sizeof(small);
	uint64_t total = 0;
	if (!buf)
		buf = small;
	for (;;) {
		ssize_t n = read(STDIN_FILENO, buf, cap);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0)
				say(c, LOG_ERR, "reading the core: %s", strerror(errno));
			break;
		}
		total += (uint64_t)n;
		if (fd >= 0 && !write_sparse(fd, buf, (size_t)n)) {
			say(c, LOG_ERR, "writing %s: %s; the rest of the core is discarded", c->raw,
			    strerror(errno));
			close(fd);
			unlink(c->raw);
			c->have_raw = false;
			fd = -1;
		}
	}
	if (fd >= 0 && (ftruncate(fd, (off_t)total) != 0 || close(fd) != 0)) {
		say(c, LOG_ERR, "writing %s: %s", c->raw, strerror(errno));
		unlink(c->raw);
		c->have_raw = false;
	}
	if (buf != small)
		free(buf);
	return total;
}

/* The core from standard input into DIR/.collect.SELF.PID (hidden: ingest
 * and the size limit leave it alone while it is being read). */
static uint64_t read_core(struct collector *c)
{
	snprintf(c->raw, sizeof(c->raw), "%s/.collect.%ld.%ld", c->o->dir, (long)getpid(), c->cr.pid);
	mkdir(c->o->dir, 0700);
	int fd = open(c->raw, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		say(c, LOG_ERR, "cannot create %s: %s; the core is discarded", c->raw, strerror(errno));
	c->have_raw = fd >= 0;
	return drain(c, fd);
}

/* ---- names ------------------------------------------------------------ */

bool collect_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	bool ok = f && fgets(buf, (int)len, f);
	if (f)
		fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

/* The crashed process's name for the file: /proc/PID/comm while the kernel
 * keeps it, else EXE's base name; only [A-Za-z0-9._+-]. */
static void comm_of(const struct crash *cr, char *out, size_t len)
{
	char path[64], comm[64] = "";
	snprintf(path, sizeof(path), "/proc/%ld/comm", cr->pid);
	if (!collect_read_line(path, comm, sizeof(comm)) || !comm[0]) {
		const char *slash = strrchr(cr->exe, '/');
		snprintf(comm, sizeof(comm), "%.63s", slash ? slash + 1 : cr->exe);
	}
	size_t n = 0;
	for (const char *p = comm; *p && n + 1 < len; p++)
		out[n++] = (char)(strchr("._+-", *p) || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				  (*p >= '0' && *p <= '9') ? *p : '_');
	out[n] = '\0';
	if (!n)
		snprintf(out, len, "unknown");
}

/* The boot's id as 32 hex digits (systemd-coredump's file names carry it). */
static void boot_id(char out[33])
{
	char raw[64] = "";
	size_t n = 0;
	collect_read_line("/proc/sys/kernel/random/boot_id", raw, sizeof(raw));
	for (const char *p = raw; *p && n < 32; p++)
		if (*p != '-')
			out[n++] = *p;
	while (n < 32)
		out[n++] = '0';
	out[32] = '\0';
}

static void make_base(struct collector *c, uint32_t uid)
{
	char comm[64], boot[33];
	comm_of(&c->cr, comm, sizeof(comm));
	boot_id(boot);
	snprintf(c->base, sizeof(c->base), "core.%s.%" PRIu32 ".%s.%ld.%" PRIu64 "000000", comm, uid, boot,
		 c->cr.pid, c->cr.time);
}

/* The real UID of /proc/PID, or 0 when it is gone. */
static uint32_t proc_uid(long pid)
{
	char path[64], line[256];
	uint32_t uid = 0;
	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %" SCNu32, &uid) == 1)
			break;
	if (f)
		fclose(f);
	return uid;
}

/* ---- compression ------------------------------------------------------ */

/* Compress the file IN into OUT.zst, written under a temporary name and
 * renamed; 0 or -1 (errno). */
static int compress_file(const char *in, const char *out)
{
	char tmp[PATH_MAX];
	FILE *fi = fopen(in, "re"), *fo = NULL;
	int rc = -1;
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	if (!fi || !(fo = fopen(tmp, "we")))
		goto out;
	rc = core_zstd_compress(fi, fo, 1) == 0 && fsync(fileno(fo)) == 0 ? 0 : -1;
out:
	if (fo && fclose(fo) != 0)
		rc = -1;
	if (fi)
		fclose(fi);
	if (rc == 0 && rename(tmp, out) != 0)
		rc = -1;
	if (rc != 0)
		unlink(tmp);
	return rc;
}

/* ---- the child: analyse, keep, store ---------------------------------- */

/* The exact executable and libraries while the kernel keeps /proc/PID
 * (core_pipe_limit), else the path %E named when it still exists. */
static void binaries(const struct crash *cr, char *binary, char *sysroot, struct ingest_opts *io)
{
	char link[PATH_MAX];
	snprintf(binary, PATH_MAX, "/proc/%ld/exe", cr->pid);
	snprintf(sysroot, PATH_MAX, "/proc/%ld/root", cr->pid);
	if (readlink(binary, link, sizeof(link)) > 0 && access(sysroot, X_OK) == 0) {
		io->binary = binary;
		io->sysroot = sysroot;
	} else if (cr->exe[0] == '/' && access(cr->exe, R_OK) == 0) {
		io->binary = cr->exe;
	}
}

/* The process's own limits: gone with the parent, no core of its own, no
 * pipe held (the parent decides when the kernel may finish), memory. */
static void child_setup(const struct collector *c)
{
	struct rlimit no_core = {0, 0};
	struct cli_limits limits = {.max_memory = cli_default_max_memory(1)};
	char why[256];
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	int null = open("/dev/null", O_RDONLY);
	if (null >= 0 && null != STDIN_FILENO) {
		dup2(null, STDIN_FILENO);
		close(null);
	}
	setrlimit(RLIMIT_CORE, &no_core);
	if (cli_limit_memory(&limits, why, sizeof(why)) != 0)
		say(c, LOG_WARNING, "%s", why);
}

/* Keep what --keep asks for of the analysed CORE; false when it failed
 * (reported).  Called again with KEEP_MINI when the store failed. */
static bool keep(struct collector *c, struct core *core, const char *fingerprint, enum collect_keep k)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s.zst", c->o->dir, c->base);
	if (k == COLLECT_KEEP_NONE)
		return true;
	if (k == COLLECT_KEEP_FULL) {
		if (compress_file(c->raw, path) != 0) {
			say(c, LOG_ERR, "cannot write %s: %s", path, strerror(errno));
			return false;
		}
	} else {
		struct core_error *err = core_minicore_save(core, fingerprint, path, NULL, NULL);
		if (err) {
			say(c, LOG_ERR, "cannot write the minicore: %s", err->message);
			core_error_destroy(err);
			return false;
		}
	}
	snprintf(c->kept, sizeof(c->kept), "%s", path);
	return true;
}

/* Store AN (its path: the file kept, when one is); the status. */
static int store(struct collector *c, struct analysis *an)
{
	struct rep_store *st = NULL;
	char why[512];
	if (c->kept[0]) {
		char *kept = strdup(c->kept);
		if (kept) {
			free(an->core_path);
			an->core_path = kept;
		}
	}
	if (rep_store_open(c->o->db, &st, why, sizeof(why)) != 0) {
		say(c, LOG_ERR, "store unreachable: %s", why);
		return CHILD_STORE_FAILED;
	}
	enum ingest_outcome r = ingest_write(st, an, why, sizeof(why));
	size_t lost = rep_store_close(st);
	if (r == INGEST_FAILED || lost) {
		say(c, LOG_ERR, "not stored: %s", r == INGEST_FAILED ? why : "the store failed to write it");
		return CHILD_STORE_FAILED;
	}
	say(c, LOG_INFO, "stored%s%s", c->kept[0] ? "; kept " : "", c->kept);
	return an->nwarnings ? CHILD_WARNINGS : CHILD_STORED;
}

/* The analysis of the open CORE, whose pages read are recorded. */
static int analyse(struct collector *c, struct core *core, struct core_identity *id)
{
	struct ingest_opts io = {.db = c->o->db};
	struct an_options aopts;
	struct analysis *an = NULL;
	char binary[PATH_MAX], sysroot[PATH_MAX];
	int status = CHILD_UNUSABLE;
	binaries(&c->cr, binary, sysroot, &io);
	if (!(io.runtimes = cli_runtimes_load(NULL, 0)))
		return CHILD_UNUSABLE;
	ingest_analysis_options(&io, &aopts);
	aopts.locals = aopts.locals_all = true;   /* the minicore then holds what --locals reads */
	struct core_error *err = core_record_start(core);
	if (!err)
		err = an_analyze(core, id, &aopts, NULL, &an);
	if (err) {
		say(c, LOG_ERR, "analysis failed: %s", err->message);
		core_error_destroy(err);
		goto out;
	}
	keep(c, core, id->fingerprint, c->o->keep);
	status = store(c, an);
	/* Nothing stored and nothing kept would lose the crash. */
	if (status == CHILD_STORE_FAILED && (c->kept[0] || keep(c, core, id->fingerprint, COLLECT_KEEP_MINI)))
		say(c, LOG_NOTICE, "kept %s for a later ingest", c->kept);
out:
	an_analysis_destroy(an);
	an_runtimes_destroy(io.runtimes);
	return status;
}

/* The child: tells the parent the file name on NAMEFD, then analyses. */
static int child_main(struct collector *c, int namefd)
{
	struct core *core = NULL;
	struct core_identity id;
	child_setup(c);
	struct core_error *err = core_open(c->raw, &core);
	if (err) {
		say(c, LOG_ERR, "unusable core: %s", err->message);
		core_error_destroy(err);
		return CHILD_UNUSABLE;
	}
	core_identity(core, &id);
	make_base(c, core->psinfo.present ? core->psinfo.uid : proc_uid(c->cr.pid));
	if (write(namefd, c->base, strlen(c->base) + 1) < 0) {
		/* the parent then names a kept core itself */
	}
	close(namefd);
	/* The crash time and boot come from the name, as for a core systemd-coredump kept. */
	if (core_coredump_name_parse(c->base, &id.coredump)) {
		id.has_coredump_name = true;
		memcpy(id.crashed_at, id.coredump.crashed_at, sizeof(id.crashed_at));
	}
	char hold[PATH_MAX];
	snprintf(hold, sizeof(hold), "%s/%s", c->o->dir, c->base);
	test_hook_analysing(hold);
	int status = analyse(c, core, &id);
	core_close(core);
	return status;
}

/* ---- the parent ------------------------------------------------------- */

/* Wait for CHILD at most TIMEOUT seconds (SIGCHLD blocked); its wait
 * status, or -1 when it timed out (then it is killed and reaped). */
static int wait_child(pid_t child, unsigned timeout)
{
	struct timespec end, now;
	sigset_t chld;
	int status;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += timeout;
	for (;;) {
		if (waitpid(child, &status, WNOHANG) == child)
			return status;
		clock_gettime(CLOCK_MONOTONIC, &now);
		struct timespec left = {end.tv_sec - now.tv_sec, end.tv_nsec - now.tv_nsec};
		if (left.tv_nsec < 0) {
			left.tv_sec--;
			left.tv_nsec += 1000000000L;
		}
		if (left.tv_sec < 0)
			break;
		sigtimedwait(&chld, NULL, &left);
	}
	kill(child, SIGKILL);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
	}
	return -1;
}

/* The child's name for the files (sent before its analysis), else ours. */
static void take_name(struct collector *c, int namefd)
{
	ssize_t n = read(namefd, c->base, sizeof(c->base) - 1);
	c->base[n > 0 ? n : 0] = '\0';
	if (!c->base[0] || strchr(c->base, '/'))
		make_base(c, proc_uid(c->cr.pid));
}

/* After a child that stored nothing and kept nothing: the whole core,
 * compressed, for `ingest DIR` to try again. */
static void keep_whole(struct collector *c)
{
	char path[PATH_MAX];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s.zst", c->o->dir, c->base);
	if (c->o->keep == COLLECT_KEEP_NONE || !c->have_raw || stat(path, &st) == 0)
		return;
	if (compress_file(c->raw, path) != 0)
		say(c, LOG_ERR, "cannot write %s: %s", path, strerror(errno));
	else
		say(c, LOG_NOTICE, "kept the whole core as %s for a later ingest", path);
	snprintf(c->kept, sizeof(c->kept), "%s", path);
}

/* Run the child over the core read; the collect's exit status. */
static int run_child(struct collector *c)
{
	int names[2];
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (pipe2(names, O_CLOEXEC) != 0) {
		say(c, LOG_ERR, "pipe: %s", strerror(errno));
		return CLI_EXIT_UNUSABLE;
	}
	sigprocmask(SIG_BLOCK, &chld, &old);
	fflush(NULL);
	pid_t child = fork();
	if (child == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(names[0]);
		_exit(child_main(c, names[1]));
	}
	close(names[1]);
	if (child < 0) {
		say(c, LOG_ERR, "fork: %s", strerror(errno));
		close(names[0]);
		return CLI_EXIT_UNUSABLE;
	}
	int status = wait_child(child, c->o->timeout);
	sigprocmask(SIG_SETMASK, &old, NULL);
	take_name(c, names[0]);
	close(names[0]);
	if (status == -1)
		say(c, LOG_ERR, "timed out after %u s: analysis stopped", c->o->timeout);
	else if (WIFSIGNALED(status))
		say(c, LOG_ERR, "analysis killed by signal %d", WTERMSIG(status));
	int code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	if (code == CHILD_STORED || code == CHILD_WARNINGS)
		return code;
	if (code != CHILD_STORE_FAILED && code != CHILD_UNUSABLE)
		keep_whole(c);
	return CLI_EXIT_UNUSABLE;
}

/* ---- the size of DIR -------------------------------------------------- */

struct kept_file {
	char name[NAME_MAX + 1];
	time_t mtime;
	uint64_t size;
};

static int by_age(const void *a, const void *b)
{
	const struct kept_file *x = a, *y = b;
	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime ? 1 : strcmp(x->name, y->name);
}

/* A temporary file of a collector that is gone (killed mid-core)? */
static bool stale_temp(const char *name)
{
	long owner;
	return sscanf(name, ".collect.%ld.", &owner) == 1 && owner != (long)getpid() &&
	       kill((pid_t)owner, 0) != 0 && errno == ESRCH;
}

/* Drop stale temporary files, then DIR's oldest kept cores until the rest
 * fits --max-size (never the one just kept). */
static void trim_dir(struct collector *c)
{
	DIR *d = opendir(c->o->dir);
	struct kept_file *files = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *e;
	const char *just = c->kept[0] ? strrchr(c->kept, '/') + 1 : "";
	while (d && (e = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", c->o->dir, e->d_name);
		if (stale_temp(e->d_name)) {
			unlink(path);
			continue;
		}
		if (strncmp(e->d_name, "core.", 5) != 0 || lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		total += (uint64_t)st.st_size;
		if (strcmp(e->d_name, just) == 0)
			continue;
		if (n == cap) {
			struct kept_file *more = realloc(files, (cap = cap ? cap * 2 : 64) * sizeof(*files));
			if (!more)
				break;
			files = more;
		}
		snprintf(files[n].name, sizeof(files[n].name), "%s", e->d_name);
		files[n].mtime = st.st_mtime;
		files[n++].size = (uint64_t)st.st_size;
	}
	if (d)
		closedir(d);
	if (n)
		qsort(files, n, sizeof(*files), by_age);   /* FILES is NULL when none */
	for (size_t i = 0; i < n && total > c->o->max_size; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", c->o->dir, files[i].name);
		if (unlink(path) == 0) {
			total -= files[i].size;
			say(c, LOG_INFO, "dropped %s: %s past --max-size", files[i].name, c->o->dir);
		}
	}
	free(files);
}

/* ---- the command ------------------------------------------------------ */

enum collect_option { C_DB, C_DIR, C_KEEP, C_MAX_SIZE, C_TIMEOUT, C_INSTALL, C_UNINSTALL };

static const struct cli_option collect_options[] = {
	{"--db", true, C_DB},
	{"--dir", true, C_DIR},
	{"--keep", true, C_KEEP},
	{"--max-size", true, C_MAX_SIZE},
	{"--timeout", true, C_TIMEOUT},
	{"--install", false, C_INSTALL},
	{"--uninstall", false, C_UNINSTALL},
	{NULL, false, 0},
};

static bool collect_option(struct collect_opts *o, int id, const char *v)
{
	static const char *const keeps[] = {"mini", "full", "none", NULL};
	unsigned long long n;
	int k;
	switch (id) {
	case C_DB:
		o->db = v;
		return true;
	case C_DIR:
		o->dir = v;
		return true;
	case C_KEEP:
		if ((k = cli_choice("--keep", v, keeps)) < 0)
			return false;
		o->keep = (enum collect_keep)k;
		o->keep_name = v;
		return true;
	case C_MAX_SIZE:
		if (!cli_size("--max-size", v, &n))
			return false;
		o->max_size = n;
		o->max_size_arg = v;
		return true;
	case C_TIMEOUT:
		if (!cli_number("--timeout", v, 1, 86400, &n))
			return false;
		o->timeout = (unsigned)n;
		o->timeout_given = true;
		return true;
	case C_INSTALL:
		o->install = true;
		return true;
	case C_UNINSTALL:
		o->uninstall = true;
		return true;
	}
	return false;
}

/* %P %i %s %t %E into *CR; false when they are not that. */
static bool parse_crash(char **pos, size_t npos, struct crash *cr)
{
	char *end;
	if (npos != 5)
		return false;
	errno = 0;
	cr->pid = strtol(pos[0], &end, 10);
	bool ok = !*end && cr->pid > 0;
	cr->tid = strtol(pos[1], &end, 10);
	ok = ok && !*end;
	cr->signo = (int)strtol(pos[2], &end, 10);
	ok = ok && !*end;
	cr->time = strtoull(pos[3], &end, 10);
	ok = ok && !*end && errno == 0;
	snprintf(cr->exe, sizeof(cr->exe), "%s", pos[4]);
	for (char *p = cr->exe; *p; p++)
		if (*p == '!')
			*p = '/';
	return ok;
}

static const char collect_usage[] =
	"usage: asyncore collect --db FILE|URL --dir DIR [--keep mini|full|none] [--max-size SIZE] "
	"[--timeout SECONDS] PID TID SIGNAL TIME EXE | --install --db FILE|URL --dir DIR [...] | "
	"--uninstall --dir DIR";

static bool parse_collect(int argc, char **argv, struct collect_opts *o, char **pos, size_t *npos)
{
	struct cli_args args;
	const char *v;
	int id;
	*o = (struct collect_opts){.max_size = COLLECT_DEFAULT_MAX_SIZE, .timeout = COLLECT_DEFAULT_TIMEOUT};
	*npos = 0;
	cli_args_init(&args, "collect", argc, argv);
	while ((id = cli_next(&args, collect_options, &v)) != CLI_END) {
		if (id == CLI_ERROR)
			return false;
		if (id == CLI_POSITIONAL) {
			if (*npos == 5) {
				cli_error("collect", "%s", collect_usage);
				return false;
			}
			pos[(*npos)++] = (char *)v;
		} else if (!collect_option(o, id, v)) {
			return false;
		}
	}
	bool ok = o->uninstall ? o->dir && !o->install && *npos == 0
		: o->db && o->dir && (o->install ? *npos == 0 : *npos == 5);
	if (!ok)
		cli_error("collect", "%s", collect_usage);
	return ok;
}

int cli_collect(int argc, char **argv)
{
	struct collect_opts o;
	struct collector c = {.o = &o};
	char *pos[5];
	size_t npos;
	if (!parse_collect(argc, argv, &o, pos, &npos)) {
		/* Under the kernel nobody reads the usage: the pipe still must be read. */
		if (!isatty(STDIN_FILENO) && !o.install && !o.uninstall)
			drain(&c, -1);
		return CLI_EXIT_UNUSABLE;
	}
	if (o.install)
		return collect_install(&o);
	if (o.uninstall)
		return collect_uninstall(&o);
	bool crash_ok = parse_crash(pos, npos, &c.cr);
	struct rlimit no_core = {0, 0};
	setrlimit(RLIMIT_CORE, &no_core);
	umask(077);
	signal(SIGPIPE, SIG_IGN);
	uint64_t size = read_core(&c);
	if (!crash_ok)
		say(&c, LOG_ERR, "bad crash arguments (want %%P %%i %%s %%t %%E)");
	int status = CLI_EXIT_UNUSABLE;
	if (crash_ok && c.have_raw && size == 0)
		say(&c, LOG_ERR, "empty core on standard input");
	else if (crash_ok && c.have_raw)
		status = run_child(&c);
	/* The kernel lets the crashed process go once the pipe is closed. */
	close(STDIN_FILENO);
	if (c.have_raw)
		unlink(c.raw);
	trim_dir(&c);
	return status;
}
