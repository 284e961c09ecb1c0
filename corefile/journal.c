#include "journal.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>

/* libsystemd is opened with dlopen() when the journal is read or written:
 * linked in, it and the libraries it loads (libgcrypt, libgpg-error,
 * libcap) cost every run 0.6 MB of memory, for the cores systemd-coredump
 * keeps and for collect. */
static struct {
	int (*open)(sd_journal **j, int flags);
	int (*open_directory)(sd_journal **j, const char *path, int flags);
	void (*close)(sd_journal *j);
	int (*get_data)(sd_journal *j, const char *field, const void **data, size_t *len);
	void (*flush_matches)(sd_journal *j);
	int (*add_match)(sd_journal *j, const void *data, size_t size);
	int (*seek_tail)(sd_journal *j);
	int (*previous)(sd_journal *j);
	int (*sendv)(const struct iovec *iov, int n);
} sd;
static pthread_once_t sd_once = PTHREAD_ONCE_INIT;

static void sd_setup(void)
{
	void *lib = dlopen("libsystemd.so.0", RTLD_NOW);
	if (!lib)
		return;
	*(void **)&sd.open_directory = dlsym(lib, "sd_journal_open_directory");
	*(void **)&sd.close = dlsym(lib, "sd_journal_close");
	*(void **)&sd.get_data = dlsym(lib, "sd_journal_get_data");
	*(void **)&sd.flush_matches = dlsym(lib, "sd_journal_flush_matches");
	*(void **)&sd.add_match = dlsym(lib, "sd_journal_add_match");
	*(void **)&sd.seek_tail = dlsym(lib, "sd_journal_seek_tail");
	*(void **)&sd.previous = dlsym(lib, "sd_journal_previous");
	*(void **)&sd.sendv = dlsym(lib, "sd_journal_sendv");
	if (sd.open_directory && sd.close && sd.get_data && sd.flush_matches && sd.add_match &&
	    sd.seek_tail && sd.previous && sd.sendv)
		*(void **)&sd.open = dlsym(lib, "sd_journal_open");   /* last: the library is usable */
}

/* Whether libsystemd could be opened. */
static bool sd_usable(void)
{
	pthread_once(&sd_once, sd_setup);
	return sd.open != NULL;
}

/* A field's value in the current entry, as a string (a value holding a NUL
 * byte is cut there); NULL when absent.  *OOM is set on out-of-memory. */
static char *field_text(sd_journal *j, const char *name, bool *oom)
{
	const void *data;
	size_t len, n = strlen(name);
	if (sd.get_data(j, name, &data, &len) < 0 || len <= n ||
	    memcmp(data, name, n) != 0 || ((const char *)data)[n] != '=')
		return NULL;
	char *s = strndup((const char *)data + n + 1, len - n - 1);
	if (!s)
		*oom = true;
	return s;
}

/* A decimal field's value, at most MAX; false when absent or not such a
 * number. */
static bool field_number(sd_journal *j, const char *name, uint64_t max, uint64_t *out)
{
	bool oom = false;
	char *s = field_text(j, name, &oom), *end;
	bool ok = false;
	if (s && s[0] >= '0' && s[0] <= '9') {
		errno = 0;
		unsigned long long v = strtoull(s, &end, 10);
		ok = errno == 0 && *end == '\0' && v <= max;
		*out = v;
	}
	free(s);
	return ok;
}

/* Move to the newest entry that has every match in MATCHES (NULL-ended)
 * and, when USEC is given, COREDUMP_TIMESTAMP equal to it.  1 found, 0 not,
 * or a negative errno. */
static int seek_newest(sd_journal *j, const char *const *matches, const uint64_t *usec)
{
	int r;
	sd.flush_matches(j);
	for (; *matches; matches++)
		if ((r = sd.add_match(j, *matches, 0)) < 0)
			return r;
	if ((r = sd.seek_tail(j)) < 0)
		return r;
	while ((r = sd.previous(j)) > 0) {
		uint64_t t;
		if (!usec || (field_number(j, "COREDUMP_TIMESTAMP", UINT64_MAX, &t) && t == *usec))
			return 1;
	}
	return r;
}

/* The entry of PATH by file name, else by NAME's boot, PID and time. */
static int seek_entry(sd_journal *j, const char *path, const struct core_coredump_name *name)
{
	char *by_file = NULL, pid[32], boot[48];
	int r = -ENOMEM;
	if (asprintf(&by_file, "COREDUMP_FILENAME=%s", path) < 0)
		return -ENOMEM;
	const char *const file_match[] = {by_file, NULL};
	r = seek_newest(j, file_match, NULL);
	free(by_file);
	if (r != 0 || !name)
		return r;
	snprintf(pid, sizeof(pid), "COREDUMP_PID=%" PRId32, name->pid);
	snprintf(boot, sizeof(boot), "_BOOT_ID=%s", name->boot_id);
	const char *const pid_match[] = {pid, boot, NULL};
	return seek_newest(j, pid_match, &name->usec);
}

/* Fill *OUT from the current entry; false on out-of-memory. */
static bool read_entry(sd_journal *j, struct core_journal_entry *out)
{
	bool oom = false;
	uint64_t v;
	memset(out, 0, sizeof(*out));
	out->unit = field_text(j, "COREDUMP_UNIT", &oom);
	if (!out->unit)
		out->unit = field_text(j, "COREDUMP_USER_UNIT", &oom);
	out->cmdline = field_text(j, "COREDUMP_CMDLINE", &oom);
	out->cgroup = field_text(j, "COREDUMP_CGROUP", &oom);
	if ((out->has_signal = field_number(j, "COREDUMP_SIGNAL", 1024, &v)))
		out->signo = (int)v;
	out->has_usec = field_number(j, "COREDUMP_TIMESTAMP", UINT64_MAX, &out->usec);
	if (oom)
		core_journal_entry_deinit(out);
	return !oom;
}

int core_journal_find(const char *dir, const char *path, const struct core_coredump_name *name,
		      struct core_journal_entry *out, char *why, size_t whylen)
{
	sd_journal *j = NULL;
	memset(out, 0, sizeof(*out));
	if (!sd_usable()) {
		snprintf(why, whylen, "cannot read the journal: libsystemd.so.0 cannot be opened");
		return -1;
	}
	int r = dir ? sd.open_directory(&j, dir, 0) : sd.open(&j, SD_JOURNAL_LOCAL_ONLY);
	if (r < 0) {
		snprintf(why, whylen, "cannot open the journal%s%s: %s", dir ? " in " : "", dir ? dir : "",
			 strerror(-r));
		return -1;
	}
	r = seek_entry(j, path, name);
	if (r > 0 && !read_entry(j, out))
		r = -ENOMEM;
	if (r < 0)
		snprintf(why, whylen, "reading the journal: %s", strerror(-r));
	sd.close(j);
	return r < 0 ? -1 : r;
}

void core_journal_entry_deinit(struct core_journal_entry *e)
{
	free(e->unit);
	free(e->cmdline);
	free(e->cgroup);
	memset(e, 0, sizeof(*e));
}

void core_journal_send(const char *const *fields, size_t n)
{
	struct iovec iov[16];
	if (!sd_usable() || n > sizeof(iov) / sizeof(iov[0]))
		return;
	for (size_t i = 0; i < n; i++)
		iov[i] = (struct iovec){(void *)fields[i], strlen(fields[i])};
	sd.sendv(iov, (int)n);
}
