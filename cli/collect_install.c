/* `asyncore collect --install | --uninstall`: core_pattern and
 * core_pipe_limit set for the collector, and put back as they were. */
#include "collect.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "options.h"

/* The kernel keeps at most this much of core_pattern (CORENAME_MAX_SIZE). */
#define PATTERN_MAX 127
#define SAVED_NAME ".collect-saved"
#define PIPE_LIMIT "16"

/* Where core_pattern and core_pipe_limit live; the test build reads
 * ASYNCORE_TEST_SYSCTL so that tests run beside others never touch the
 * machine's. */
static const char *sysctl_dir(void)
{
#ifdef ASYNCORE_TEST_HOOKS
	const char *dir = getenv("ASYNCORE_TEST_SYSCTL");
	if (dir && *dir)
		return dir;
#endif
	return "/proc/sys/kernel";
}

static bool read_value(const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", sysctl_dir(), name);
	bool ok = collect_read_line(path, buf, len);
	if (!ok)
		fprintf(stderr, "asyncore: collect: cannot read %s: %s\n", path, strerror(errno));
	return ok;
}

static bool write_value(const char *name, const char *value)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", sysctl_dir(), name);
	FILE *f = fopen(path, "we");
	bool ok = f && fprintf(f, "%s\n", value) >= 0;
	if (f && fclose(f) != 0)
		ok = false;
	if (!ok)
		fprintf(stderr, "asyncore: collect: cannot write %s: %s\n", path, strerror(errno));
	return ok;
}

/* mkdir -p DIR, then its absolute path into OUT. */
static bool make_dir(const char *dir, char *out)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(tmp, 0755);
			*p = '/';
		}
	if ((mkdir(tmp, 0700) != 0 && errno != EEXIST) || !realpath(tmp, out)) {
		fprintf(stderr, "asyncore: collect: %s: %s\n", dir, strerror(errno));
		return false;
	}
	return true;
}

/* DB as the kernel's helper (cwd /) must see it: a URL as is, a file made
 * absolute. */
static void absolute_db(const char *db, char *out, size_t len)
{
	char cwd[PATH_MAX];
	int n;
	if (strstr(db, "://") || db[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		n = snprintf(out, len, "%s", db);
	else
		n = snprintf(out, len, "%s/%s", cwd, db);
	if (n < 0 || (size_t)n >= len)
		out[0] = '\0';     /* too long: refused as a pattern */
}


/* Append to OUT (LEN bytes) at *K what FMT says; *K counts what would be
 * written, past LEN too (OUT then holds a cut text), so one check at the
 * end says whether it all fitted. */
static void append(char *out, size_t len, size_t *k, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(*k < len ? out + *k : NULL, *k < len ? len - *k : 0, fmt, ap);
	va_end(ap);
	*k += n > 0 ? (size_t)n : 0;
}

/* The kernel splits core_pattern at spaces and expands '%'. */
static bool fits_pattern(const char *what, const char *s)
{
	if (strpbrk(s, " \t\n%")) {
		fprintf(stderr, "asyncore: collect: %s holds a space or '%%', which core_pattern cannot carry: %s\n",
			what, s);
		return false;
	}
	return true;
}

static bool build_pattern(const struct collect_opts *o, const char *dir, char *out, size_t len)
{
	char self[PATH_MAX], db[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "asyncore: collect: /proc/self/exe: %s\n", strerror(errno));
		return false;
	}
	self[n] = '\0';
	absolute_db(o->db, db, sizeof(db));
	if (!fits_pattern("the program's path", self) || !fits_pattern("--db", db) || !fits_pattern("--dir", dir))
		return false;
	size_t k = 0;
	append(out, len, &k, "|%s collect --db %s --dir %s", self, db, dir);
	if (o->keep_name)
		append(out, len, &k, " --keep %s", o->keep_name);
	if (o->max_size_arg && fits_pattern("--max-size", o->max_size_arg))
		append(out, len, &k, " --max-size %s", o->max_size_arg);
	if (o->timeout_given)
		append(out, len, &k, " --timeout %u", o->timeout);
	append(out, len, &k, " %%P %%i %%s %%t %%E");
	if (k > PATTERN_MAX) {
		fprintf(stderr, "asyncore: collect: the core_pattern would be %zu characters, the kernel keeps %d: "
			"use shorter paths\n", k, PATTERN_MAX);
		return false;
	}
	return true;
}

/* Is PATTERN a collector of DIR? */
static bool is_ours(const char *pattern, const char *dir)
{
	char needle[PATH_MAX + 16];
	snprintf(needle, sizeof(needle), " --dir %s ", dir);
	return pattern[0] == '|' && strstr(pattern, " collect ") && strstr(pattern, needle);
}

/* DIR/SAVED_NAME into PATH (PATH_MAX); false when too long. */
static bool saved_path(const char *dir, char *path)
{
	int n = snprintf(path, PATH_MAX, "%s/" SAVED_NAME, dir);
	if (n < 0 || n >= PATH_MAX) {
		fprintf(stderr, "asyncore: collect: %s: path too long\n", dir);
		return false;
	}
	return true;
}

/* Keep PATTERN and LIMIT in DIR unless an earlier install kept the
 * machine's own already. */
static bool save_previous(const char *dir, const char *pattern, const char *limit)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	if (!saved_path(dir, path))
		return false;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (is_ours(pattern, dir) && access(path, F_OK) == 0)
		return true;
	FILE *f = fopen(tmp, "we");
	bool ok = f && fprintf(f, "%s\n%s\n", pattern, limit) >= 0;
	if (f && fclose(f) != 0)
		ok = false;
	if (!ok || rename(tmp, path) != 0) {
		fprintf(stderr, "asyncore: collect: cannot write %s: %s\n", path, strerror(errno));
		unlink(tmp);
		return false;
	}
	return true;
}

int collect_install(const struct collect_opts *o)
{
	char dir[PATH_MAX], pattern[PATH_MAX * 3], old[PATH_MAX], limit[32];
	if (!make_dir(o->dir, dir) || !build_pattern(o, dir, pattern, sizeof(pattern)) ||
	    !read_value("core_pattern", old, sizeof(old)) || !read_value("core_pipe_limit", limit, sizeof(limit)) ||
	    !save_previous(dir, old, limit) || !write_value("core_pattern", pattern + 0))
		return CLI_EXIT_UNUSABLE;
	if (strcmp(limit, "0") == 0 && !write_value("core_pipe_limit", PIPE_LIMIT))
		return CLI_EXIT_UNUSABLE;
	printf("core_pattern: %s\n", pattern);
	printf("previous: %s (core_pipe_limit %s), kept in %s/" SAVED_NAME "\n", old, limit, dir);
	return CLI_EXIT_OK;
}

int collect_uninstall(const struct collect_opts *o)
{
	char path[PATH_MAX], dir[PATH_MAX], pattern[PATH_MAX], limit[32], now[PATH_MAX], now_limit[32];
	if (!realpath(o->dir, dir)) {
		fprintf(stderr, "asyncore: collect: %s: %s\n", o->dir, strerror(errno));
		return CLI_EXIT_UNUSABLE;
	}
	if (!saved_path(dir, path))
		return CLI_EXIT_UNUSABLE;
	FILE *f = fopen(path, "re");
	bool ok = f && fgets(pattern, sizeof(pattern), f) && fgets(limit, sizeof(limit), f);
	if (f)
		fclose(f);
	if (!ok) {
		fprintf(stderr, "asyncore: collect: nothing to restore: %s: %s\n", path,
			f ? "not two lines" : strerror(errno));
		return CLI_EXIT_UNUSABLE;
	}
	pattern[strcspn(pattern, "\n")] = limit[strcspn(limit, "\n")] = '\0';
	if (!read_value("core_pattern", now, sizeof(now)) || !read_value("core_pipe_limit", now_limit, sizeof(now_limit)))
		return CLI_EXIT_UNUSABLE;
	/* Someone else's pattern since the install stays theirs. */
	if (!is_ours(now, dir))
		fprintf(stderr, "asyncore: collect: core_pattern is no longer this collector's; left as is: %s\n", now);
	else if (!write_value("core_pattern", pattern))
		return CLI_EXIT_UNUSABLE;
	if (strcmp(limit, "0") == 0 && strcmp(now_limit, PIPE_LIMIT) == 0 && !write_value("core_pipe_limit", limit))
		return CLI_EXIT_UNUSABLE;
	unlink(path);
	printf("core_pattern: %s\n", is_ours(now, dir) ? pattern : now);
	return CLI_EXIT_OK;
}
