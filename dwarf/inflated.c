/* An on-disk cache of decompressed debug-info files, keyed by build-id.
 *
 * Distribution debug files (libc6-dbg and friends) store their .debug_*
 * sections zlib-compressed; libelf inflates them on every open, which costs
 * more than unwinding and symbolizing a whole core.  The first use of such a
 * file writes a decompressed copy to $ASYNCORE_CACHE_DIR (default
 * $XDG_CACHE_HOME/asyncore or ~/.cache/asyncore); later sessions open the
 * copy.  Setting ASYNCORE_CACHE_DIR to an empty string turns the cache off.
 * Any failure simply leaves the original file in use. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/array.h"

static char *cache_dir(void)
{
	const char *env = getenv("ASYNCORE_CACHE_DIR");
	if (env)
		return env[0] ? strdup(env) : NULL;
	char buf[4096];
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	if (xdg && xdg[0] == '/')
		snprintf(buf, sizeof(buf), "%s/asyncore/debuginfo", xdg);
	else if (home && home[0] == '/')
		snprintf(buf, sizeof(buf), "%s/.cache/asyncore/debuginfo", home);
	else
		return NULL;
	return strdup(buf);
}

static bool make_dirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		int rc = mkdir(path, 0755);
		*p = '/';
		if (rc != 0 && errno != EEXIST)
			return false;
	}
	return mkdir(path, 0755) == 0 || errno == EEXIST;
}

static bool has_compressed_sections(Elf *elf)
{
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED))
			return true;
	}
	return false;
}

static bool copy_fd(int from, int to)
{
	char buf[1 << 16];
	ssize_t n;
	if (lseek(from, 0, SEEK_SET) < 0)
		return false;
	while ((n = read(from, buf, sizeof(buf))) > 0)
		if (write(to, buf, (size_t)n) != n)
			return false;
	return n == 0;
}

/* Rewrite the ELF file open read-write at FD with every section inflated. */
static bool inflate_in_place(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_RDWR, NULL);
	if (!elf)
		return false;
	bool ok = true;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn && ok; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED))
			ok = elf_compress(scn, 0, 0) >= 0;
	}
	ok = ok && elf_update(elf, ELF_C_WRITE) >= 0;
	elf_end(elf);
	return ok;
}

static int write_copy(int fd, const char *final)
{
	size_t len = strlen(final) + 32;
	char *tmp = malloc(len);
	if (!tmp)
		return -1;
	snprintf(tmp, len, "%s.tmp.%d", final, (int)getpid());
	int out = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	bool ok = out >= 0 && copy_fd(fd, out) && inflate_in_place(out);
	if (out >= 0)
		close(out);
	/* rename() makes the copy appear whole or not at all, even with
	 * several analyses filling the cache at once. */
	if (ok)
		ok = rename(tmp, final) == 0;
	if (!ok)
		unlink(tmp);
	free(tmp);
	return ok ? open(final, O_RDONLY | O_CLOEXEC) : -1;
}

char *dbg_inflated_path(const char *build_id, char **dir)
{
	*dir = build_id ? cache_dir() : NULL;
	char *path = NULL;
	if (*dir && asprintf(&path, "%s/%s.debug", *dir, build_id) < 0)
		path = NULL;
	return path;
}

/* Path of the cached copy for MOD's build-id; malloc'd, NULL when the cache
 * is off or the module has no build-id. */
static char *cached_path(Dwfl_Module *mod, char **dir)
{
	const unsigned char *bid;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bid, &vaddr);
	char *hex = len > 0 ? dbg_hex(bid, (size_t)len) : NULL;
	char *path = dbg_inflated_path(hex, dir);
	free(hex);
	return path;
}

/* Keep a decompressed copy of the debug file open at FD, when it has
 * compressed sections, for the next session. */
static void fill_cache(int fd, char *dir, const char *path)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	bool worth = elf && has_compressed_sections(elf);
	if (elf)
		elf_end(elf);
	/* Another analysis may have written it meanwhile. */
	if (worth && access(path, F_OK) != 0 && make_dirs(dir)) {
		int copy = write_copy(fd, path);
		if (copy >= 0)
			close(copy);
	}
}

/* The copy is written when the cache closes (dbg_cache_write_copies), once
 * what the analysis held is freed: libelf holds the whole file and every
 * inflated section while it writes (13 MB for glibc's debug file), which on
 * top of an analysis would set its peak. */
static bool copy_pending(const struct dbg_cache *cache, const char *path)
{
	for (size_t i = 0; i < cache->ncopies; i++)
		if (strcmp(cache->copies[i].path, path) == 0)
			return true;
	return false;
}

/* Once per file: each core of an ingest batch finds glibc's debug file again,
 * and the cache outlives the batch's sessions. */
static void defer_copy(struct dbg_cache *cache, int fd, char *dir, char *path)
{
	int kept = cache && !copy_pending(cache, path) ? dup(fd) : -1;
	if (kept < 0 || !base_array_reserve(&cache->copies, &cache->copies_cap, cache->ncopies + 1,
					    sizeof(*cache->copies))) {
		if (kept >= 0)
			close(kept);
		free(dir);
		free(path);
		return;
	}
	cache->copies[cache->ncopies++] = (struct dbg_pending_copy){ kept, dir, path };
}

void dbg_cache_write_copies(struct dbg_cache *cache)
{
	for (size_t i = 0; i < cache->ncopies; i++) {
		struct dbg_pending_copy *c = &cache->copies[i];
		fill_cache(c->fd, c->dir, c->path);
		close(c->fd);
		free(c->dir);
		free(c->path);
	}
	free(cache->copies);
	cache->copies = NULL;
	cache->ncopies = cache->copies_cap = 0;
}

int dbg_find_debuginfo(Dwfl_Module *mod, struct dbg_file *f, struct dbg_cache *cache,
		       const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		       char **debuginfo_file_name)
{
	const char *search = cache ? cache->debuginfo_path : NULL;
	char *dir = NULL;
	char *path = cached_path(mod, &dir);
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		*debuginfo_file_name = path;
		free(dir);
		return fd;
	}
	if (!dbg_debuginfod_enabled() &&
	    !dbg_local_debuginfo_possible(search, mod, file_name, debuglink_file, debuglink_crc)) {
		free(path);
		free(dir);
		errno = 0;
		return -1;
	}
	void *unused = NULL;
	fd = dwfl_standard_find_debuginfo(mod, &unused, NULL, 0, file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	dbg_debuginfod_result(f, fd, debuginfo_file_name);
	/* A server's file stays in debuginfod's own cache only. */
	if (fd >= 0 && path && !(f && f->debuginfod) &&
	    !(file_name && *debuginfo_file_name && strcmp(file_name, *debuginfo_file_name) == 0)) {
		defer_copy(cache, fd, dir, path);
		return fd;
	}
	free(path);
	free(dir);
	return fd;
}
