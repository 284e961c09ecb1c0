/* Modules of stored cores: a module's debug info found by its build-id,
 * outside any core, and offsets in it symbolized, for a store's frames
 * whose debug info turned up after their cores were stored. */
#include "internal.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The build-id (hex, malloc'd) of the ELF file at PATH; NULL when it
 * cannot be read or has none. */
static char *file_build_id(const char *path)
{
	int fd = core_open_regular(path);
	if (fd < 0)
		return NULL;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *bits = NULL;
	ssize_t len = elf && elf_kind(elf) == ELF_K_ELF ? dwelf_elf_gnu_build_id(elf, &bits) : -1;
	char *hex = len > 0 ? dbg_hex(bits, (size_t)len) : NULL;
	if (elf)
		elf_end(elf);
	close(fd);
	return hex;
}

/* One search for a module's debug file. */
struct lookup {
	const char *build_id;       /* wanted */
	const char *module;         /* the stored module's path, for the warning */
	char *found;                /* the file with that build-id */
	char *warning;              /* the first file passed over */
};

/* Try FILE (taken): kept as L's find when it has the build-id; a
 * readable file with another is passed over, and the first such is L's
 * warning. */
static void try_file(struct lookup *l, char *file)
{
	if (!file || l->found || access(file, R_OK) != 0) {
		free(file);
		return;
	}
	char *have = file_build_id(file);
	if (have && strcmp(have, l->build_id) == 0) {
		l->found = file;
		file = NULL;
	} else if (!l->warning &&
		   asprintf(&l->warning, "%s has build-id %s but the stored cores' %s has build-id %s:"
			    " not used", file, have ? have : "(none)", l->module ? l->module : "module",
			    l->build_id) < 0) {
		l->warning = NULL;
	}
	free(have);
	free(file);
}

/* The elements of the search path DIRS (a copy, cut up here), each
 * without its CRC-checking mark, one at a time: NULL after the last. */
static char *next_dir(char **dirs)
{
	char *d;
	while ((d = strsep(dirs, ":")) && (d[0] == '\0' || (d[0] == '-' && d[1] == '\0')))
		;
	if (d && (*d == '-' || *d == '+'))
		d++;
	return d;
}

/* The build-id directories: .build-id/NN/REST.debug under each absolute
 * directory of the search path. */
static void search_build_id(struct lookup *l, const char *path_setting)
{
	char *copy = strdup(path_setting), *dirs = copy, *d;
	while (copy && !l->found && (d = next_dir(&dirs)))
		if (d[0] == '/')
			try_file(l, dbg_build_id_file(d, l->build_id));
	free(copy);
}

/* DIR/SUB/BASE.debug (DIR/BASE.debug when SUB is empty). */
static char *named(const char *dir, const char *sub, const char *base)
{
	char *p = NULL;
	if (asprintf(&p, "%s%s%s/%s.debug", dir, sub[0] ? "/" : "", sub, base) < 0)
		return NULL;
	return p;
}

/* The module's file name + ".debug" where libdwfl's search by name looks:
 * for a module /a/b/NAME, under an absolute directory D of the search path
 * D/a/b/NAME.debug, D/b/NAME.debug and D/NAME.debug; under a relative one
 * R, /a/b/R/NAME.debug. */
static void search_by_name(struct lookup *l, const char *path_setting)
{
	const char *path = l->module, *slash = path ? strrchr(path, '/') : NULL;
	const char *base = slash ? slash + 1 : path;
	char *parent = slash ? strndup(path, (size_t)(slash - path)) : strdup("");
	char *copy = strdup(path_setting), *dirs = copy, *d;
	while (base && *base && parent && copy && !l->found && (d = next_dir(&dirs))) {
		if (d[0] != '/') {
			try_file(l, named(parent, d, base));
			continue;
		}
		for (const char *sub = parent; !l->found;) {
			const char *s = strchr(sub, '/');
			sub = s ? s + 1 : "";
			try_file(l, named(d, sub, base));
			if (!*sub)
				break;
		}
	}
	free(copy);
	free(parent);
}

/* A debuginfod lookup that failed with ERROR (an errno value) other than
 * "not there" (or "no server") is L's warning. */
static void debuginfod_failed(struct lookup *l, int error)
{
	if (error && error != ENOENT && error != ENOSYS && !l->warning &&
	    asprintf(&l->warning, "debuginfod: no debug info for %s (build-id %s) from %s: %s",
		     l->module ? l->module : "module", l->build_id,
		     getenv("DEBUGINFOD_URLS") ? getenv("DEBUGINFOD_URLS") : "?", strerror(error)) < 0)
		l->warning = NULL;
}

/* debuginfod, last (as libdwfl asks it). */
static void search_debuginfod(struct lookup *l)
{
	char *file = NULL;
	int fd = dbg_debuginfod_find(l->build_id, &file);
	if (fd >= 0) {
		close(fd);
		try_file(l, file);
		return;
	}
	free(file);
	debuginfod_failed(l, -fd);
}

/* F when it has DWARF (its debug-info name set as a session sets it:
 * before the DWARF loads, so a decompressed copy is named by its
 * original), else NULL. */
static struct dbg_file *with_dwarf(struct dbg_cache *cache, struct dbg_file *f)
{
	if (!f)
		return NULL;
	dbg_file_debuginfo_path(cache, f);
	return dbg_file_has_dwarf(f) ? f : NULL;
}

struct dbg_file *dbg_cache_find_module(struct dbg_cache *cache, const char *build_id,
				       const char *path, char **warning)
{
	struct lookup l = {.build_id = build_id, .module = path};
	struct dbg_file *f = NULL;
	*warning = NULL;
	/* A stored build-id names files: hex digits only. */
	if (!build_id || strlen(build_id) < 2 || build_id[strspn(build_id, "0123456789abcdef")])
		return NULL;
	pthread_mutex_lock(&cache->lock);
	char *have = path ? file_build_id(path) : NULL;
	bool own = have && strcmp(have, build_id) == 0;
	free(have);
	if (own) {
		/* The module's own file: libdwfl's lookup, as in a session.  The
		 * search below only names what it passed over. */
		struct dbg_file *own_file = dbg_cache_file(cache, build_id, path);
		f = with_dwarf(cache, own_file);
		if (!f) {
			search_build_id(&l, cache->debuginfo_path);
			search_by_name(&l, cache->debuginfo_path);
			debuginfod_failed(&l, own_file ? own_file->debuginfod_error : 0);
		}
	} else {
		char *dir = NULL;
		try_file(&l, dbg_inflated_path(build_id, &dir));
		free(dir);
		search_build_id(&l, cache->debuginfo_path);
		search_by_name(&l, cache->debuginfo_path);
		if (!l.found)
			search_debuginfod(&l);
		if (l.found)
			f = with_dwarf(cache, dbg_cache_file(cache, build_id, l.found));
	}
	pthread_mutex_unlock(&cache->lock);
	if (!f)
		*warning = l.warning;
	else
		free(l.warning);
	free(l.found);
	return f;
}

const char *dbg_file_debuginfo(struct dbg_file *f)
{
	return f->debuginfo;
}

struct core_error *dbg_file_symbolize_offset(struct dbg_cache *cache, struct dbg_file *f,
					     const char *module, uint64_t module_offset,
					     bool activation, struct dbg_location **locs,
					     size_t *nlocs)
{
	Dwarf_Addr low = 0;
	*locs = NULL;
	*nlocs = 0;
	pthread_mutex_lock(&cache->lock);
	/* A module's offsets count from its lowest mapping, which is where
	 * libdwfl puts the module's start for a core and for a file alike. */
	dwfl_module_info(f->mod, NULL, &low, NULL, NULL, NULL, NULL, NULL);
	struct core_error *err = dbg_file_symbolize(f, low + module_offset, activation, locs, nlocs);
	pthread_mutex_unlock(&cache->lock);
	for (size_t i = 0; !err && i < *nlocs; i++) {
		free((*locs)[i].module);
		(*locs)[i].module = module ? strdup(module) : NULL;
		(*locs)[i].module_offset = module_offset;
		(*locs)[i].has_module_offset = true;
		if (module && !(*locs)[i].module)
			err = &core_error_nomem;
	}
	if (err) {
		dbg_locations_free(*locs, *nlocs);
		*locs = NULL;
		*nlocs = 0;
	}
	return err;
}
