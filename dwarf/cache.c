/* Debug-info files kept across sessions, keyed by build-id, each in an
 * offline Dwfl of its own so its DWARF is parsed once per batch. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

static const char default_debug_path[] = "-.debug:/usr/lib/debug";

/* The cache's files find their debug files with their own search path. */
static int file_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			       Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			       GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	(void)modname;
	(void)base;
	struct dbg_file *f = *userdata;
	return dbg_find_debuginfo(mod, f, f ? f->cache : NULL, file_name,
				  debuglink_file, debuglink_crc, debuginfo_file_name);
}

struct dbg_cache *dbg_cache_create(void)
{
	elf_version(EV_CURRENT);   /* libelf's start, for files read outside any core */
	struct dbg_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->debuginfo_path = strdup(default_debug_path);
	if (!c->debuginfo_path) {
		free(c);
		return NULL;
	}
	c->offline_callbacks.find_elf = dwfl_build_id_find_elf;
	c->offline_callbacks.find_debuginfo = file_find_debuginfo;
	c->offline_callbacks.section_address = dwfl_offline_section_address;
	c->offline_callbacks.debuginfo_path = &c->debuginfo_path;
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&c->lock, &attr);
	pthread_mutexattr_destroy(&attr);
	return c;
}

static void file_destroy(struct dbg_file *f)
{
	if (!f)
		return;
	dbg_lines_destroy(f->lines);   /* its handles read the ELF the Dwfl owns */
	if (f->dwfl)
		dwfl_end(f->dwfl);
	dbg_memo_destroy(f->memo);
	dbg_param_memo_destroy(f->params);
	dbg_type_memo_destroy(f->types);
	dbg_symindex_destroy(f->symbols);
	dbg_addrindex_destroy(f->addrs);
	dbg_symnames_close(&f->names);
	dbg_prefix_matches_destroy(f->prefixes, f->nprefixes);
	dbg_callsites_destroy(f->callsites);
	dbg_funcmap_destroy(f->funcmap);
	dbg_cuindex_destroy(f->cus);
	free(f->build_id);
	free(f->path);
	free(f->debuginfo);
	free(f);
}

void dbg_cache_destroy(struct dbg_cache *cache)
{
	if (!cache)
		return;
	for (size_t i = 0; i < cache->nfiles; i++)
		file_destroy(cache->files[i]);
	free(cache->files);
	dbg_cache_write_copies(cache);
	free(cache->debuginfo_path);
	pthread_mutex_destroy(&cache->lock);
	free(cache);
}

struct core_error *dbg_cache_set_debug_dirs(struct dbg_cache *cache, const char *const *dirs,
					    size_t ndirs)
{
	size_t len = sizeof(default_debug_path);
	for (size_t i = 0; i < ndirs; i++)
		len += strlen(dirs[i]) + 1;
	char *path = malloc(len);
	if (!path)
		return &core_error_nomem;
	strcpy(path, default_debug_path);
	for (size_t i = 0; i < ndirs; i++) {
		strcat(path, ":");
		strcat(path, dirs[i]);
	}
	/* Sessions of other threads may be reading the current string: keep it
	 * when nothing changes (a batch gives every core the same directories). */
	pthread_mutex_lock(&cache->lock);
	if (strcmp(path, cache->debuginfo_path) == 0) {
		free(path);
	} else {
		free(cache->debuginfo_path);
		cache->debuginfo_path = path;
	}
	pthread_mutex_unlock(&cache->lock);
	return NULL;
}

static struct dbg_file *file_open(struct dbg_cache *cache, const char *build_id, const char *path)
{
	struct dbg_file *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->cache = cache;
	f->build_id = strdup(build_id ? build_id : path);
	f->path = strdup(path);
	if (!f->build_id || !f->path)
		goto fail;
	f->dwfl = dwfl_begin(&cache->offline_callbacks);
	if (!f->dwfl)
		goto fail;
	int fd = core_open_regular(path);
	if (fd < 0)
		goto fail;
	dwfl_report_begin(f->dwfl);
	f->mod = dwfl_report_elf(f->dwfl, path, path, fd, 0, false);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->mod) {
		close(fd);
		goto fail;
	}
	void **userdata;   /* file_find_debuginfo() finds the file through it */
	dwfl_module_info(f->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = f;
	dbg_debuginfod_attach(f->dwfl);
	return f;
fail:
	file_destroy(f);
	return NULL;
}

bool dbg_file_has_dwarf(struct dbg_file *f)
{
	if (f->dwarf_tried)
		return f->has_dwarf;
	f->dwarf_tried = true;
	Dwarf_Addr bias;
	f->has_dwarf = dwfl_module_getdwarf(f->mod, &bias) != NULL;
	const char *debugfile = NULL;
	dwfl_module_info(f->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	/* Keep a path found before loading: it names the original file, not
	 * the decompressed copy in the on-disk cache. */
	if (!f->has_dwarf) {
		free(f->debuginfo);
		f->debuginfo = NULL;
	} else if (!f->debuginfo) {
		f->debuginfo = strdup(debugfile ? debugfile : f->path);
	}
	return f->has_dwarf;
}

static bool elf_has_section(Elf *elf, const char *wanted)
{
	size_t shstrndx;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (name && strcmp(name, wanted) == 0 && sh.sh_type != SHT_NOBITS)
			return true;
	}
	return false;
}

static bool readable(const char *path)
{
	return access(path, R_OK) == 0;
}

char *dbg_build_id_file(const char *dir, const char *build_id)
{
	char *p = NULL;
	if (!build_id || strlen(build_id) < 3 ||
	    asprintf(&p, "%s/.build-id/%.2s/%s.debug", dir, build_id, build_id + 2) < 0)
		return NULL;
	return p;
}

char *dbg_build_id_on_path(const char *search, const char *build_id)
{
	char *dirs = strdup(search), *save = NULL, *found = NULL;
	for (char *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d && !found;
	     d = strtok_r(NULL, ":", &save)) {
		if (*d == '-' || *d == '+')
			d++;
		if (*d != '/')
			continue;
		char *p = dbg_build_id_file(d, build_id);
		if (!p)
			break;
		if (readable(p))
			found = p;
		else
			free(p);
	}
	free(dirs);
	return found;
}

const char *dbg_file_debuginfo_path(struct dbg_cache *cache, struct dbg_file *f)
{
	if (f->dwarf_tried || f->debuginfo)
		return f->has_dwarf || !f->dwarf_tried ? f->debuginfo : NULL;
	Dwarf_Addr bias;
	if (elf_has_section(dwfl_module_getelf(f->mod, &bias), ".debug_info"))
		f->debuginfo = strdup(f->path);
	else if (strcmp(f->build_id, f->path) != 0)
		f->debuginfo = dbg_build_id_on_path(cache->debuginfo_path, f->build_id);
	/* A .gnu_debuglink file is only found by loading it. */
	if (!f->debuginfo && dbg_file_has_dwarf(f))
		return f->debuginfo;
	return f->debuginfo;
}

void dbg_cache_stats(struct dbg_cache *cache, size_t *files, size_t *dwarf_parsed)
{
	pthread_mutex_lock(&cache->lock);
	*files = cache->nfiles;
	*dwarf_parsed = 0;
	for (size_t i = 0; i < cache->nfiles; i++)
		*dwarf_parsed += cache->files[i]->has_dwarf;
	pthread_mutex_unlock(&cache->lock);
}

void dbg_lock(struct dbg_session *s)
{
	pthread_mutex_lock(&s->cache->lock);
}

void dbg_unlock(struct dbg_session *s)
{
	pthread_mutex_unlock(&s->cache->lock);
}

struct dbg_file *dbg_cache_file(struct dbg_cache *cache, const char *build_id, const char *path)
{
	const char *key = build_id ? build_id : path;
	for (size_t i = 0; i < cache->nfiles; i++)
		if (strcmp(cache->files[i]->build_id, key) == 0)
			return cache->files[i];
	struct dbg_file **files = realloc(cache->files, (cache->nfiles + 1) * sizeof(*files));
	if (!files)
		return NULL;
	cache->files = files;
	struct dbg_file *f = file_open(cache, build_id, path);
	if (!f)
		return NULL;
	cache->files[cache->nfiles++] = f;
	return f;
}
