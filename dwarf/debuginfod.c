/* Debug info from debuginfod servers.  libdwfl's standard lookup
 * (dwfl_standard_find_debuginfo) asks libdebuginfod by build-id, after the
 * build-id directories and .gnu_debuglink, when DEBUGINFOD_URLS is set; the
 * file lands in debuginfod's own cache (DEBUGINFOD_CACHE_PATH).  Here: the
 * progress line on a terminal while a file downloads, and telling a file
 * that came from a server from one found locally.
 *
 * libdebuginfod is opened with dlopen() when a server is set, as libdw opens
 * it: linked in, it and its libcurl and TLS libraries cost every run some
 * 8 ms of start-up, most of a small core's report. */
#include "internal.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool dbg_debuginfod_enabled(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	return urls && urls[0];
}

/* The libdebuginfod functions used here, from the library libdw loads. */
static struct {
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	const char *(*get_url)(debuginfod_client *);
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
	void (*end)(debuginfod_client *);
} api;
static pthread_once_t api_once = PTHREAD_ONCE_INIT;

static void api_open(void)
{
	void *lib = dlopen("libdebuginfod.so.1", RTLD_LAZY);   /* kept open */
	if (lib) {
		*(void **)&api.set_progressfn = dlsym(lib, "debuginfod_set_progressfn");
		*(void **)&api.get_url = dlsym(lib, "debuginfod_get_url");
		*(void **)&api.begin = dlsym(lib, "debuginfod_begin");
		*(void **)&api.find_debuginfo = dlsym(lib, "debuginfod_find_debuginfo");
		*(void **)&api.end = dlsym(lib, "debuginfod_end");
	}
}

static bool api_load(void)
{
	pthread_once(&api_once, api_open);
	return api.set_progressfn && api.get_url;
}

/* Whether a progress line is on stderr (one terminal per process). */
static bool progress_shown;

/* "\rasyncore: downloading debug info for build-id ab12... from URL: 120/480 KiB" */
static int show_progress(debuginfod_client *client, long done, long total)
{
	const char *url = api.get_url(client);
	const char *id = url ? strstr(url, "/buildid/") : NULL;
	fprintf(stderr, "\rasyncore: downloading debug info");
	if (id)
		fprintf(stderr, " for build-id %.12s... from %.*s", id + 9, (int)(id - url), url);
	if (total > 0)
		fprintf(stderr, ": %ld/%ld KiB\033[K", done / 1024, total / 1024);
	else
		fprintf(stderr, "...\033[K");
	fflush(stderr);
	progress_shown = true;
	return 0;   /* go on: a cancelled query is cached as a miss */
}

void dbg_debuginfod_attach(Dwfl *dwfl)
{
	if (!dbg_debuginfod_enabled() || !isatty(STDERR_FILENO) || !api_load())
		return;   /* without a server libdwfl makes no client: make none */
	debuginfod_client *client = dwfl_get_debuginfod_client(dwfl);
	if (client)
		api.set_progressfn(client, show_progress);
}

/* The progress line goes away. */
static void progress_clear(void)
{
	if (progress_shown) {
		fputs("\r\033[K", stderr);
		progress_shown = false;
	}
}

int dbg_debuginfod_find(const char *build_id, char **path)
{
	*path = NULL;
	if (!dbg_debuginfod_enabled() || !api_load() || !api.begin || !api.find_debuginfo || !api.end)
		return -ENOSYS;
	debuginfod_client *client = api.begin();
	if (!client)
		return -ENOMEM;
	if (isatty(STDERR_FILENO))
		api.set_progressfn(client, show_progress);
	/* A length of 0: the build-id is given as a hex string. */
	int fd = api.find_debuginfo(client, (const unsigned char *)build_id, 0, path);
	api.end(client);
	progress_clear();
	return fd;
}

void dbg_debuginfod_result(struct dbg_file *f, int fd, char **debuginfo_file_name)
{
	progress_clear();
	if (fd < -1 && f) {
		/* libdwfl hands back libdebuginfod's -errno */
		f->debuginfod_error = -fd;
		return;
	}
	/* Every local lookup names the file it opened; libdwfl passes no name
	 * for a file libdebuginfod fetched or found in its cache. */
	if (fd < 0 || *debuginfo_file_name || !dbg_debuginfod_enabled())
		return;
	*debuginfo_file_name = dbg_fd_path(fd);
	if (f)
		f->debuginfod = true;
}

char *dbg_fd_path(int fd)
{
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return NULL;
	path[n] = '\0';
	return strdup(path);
}

void dbg_debuginfod_warn(struct dbg_session *s, struct dbg_module_entry *m)
{
	struct dbg_file *f = m->file;
	if (!f || !f->debuginfod_error || m->debuginfod_warned)
		return;
	m->debuginfod_warned = true;
	if (f->debuginfod_error == ENOENT || f->debuginfod_error == ENOSYS)
		return;   /* no server has it, or none is configured: no debug info, as locally */
	core_warn(s->core, "debuginfod: no debug info for %s (build-id %s) from %s: %s",
		  m->info.path ? m->info.path : "?", m->info.build_id ? m->info.build_id : "?",
		  getenv("DEBUGINFOD_URLS") ? getenv("DEBUGINFOD_URLS") : "?",
		  strerror(f->debuginfod_error));
}
