/* Whether libdwfl's local search for a debug file can find anything.
 *
 * dwfl_standard_find_debuginfo looks in the build-id directories and for
 * the .gnu_debuglink name along the search path, then, when both fail, asks
 * libdebuginfod, which libdw 0.188 loads for that (with libcurl and the TLS
 * libraries: some 6 MB and 10 ms) even when no server is set and it can only
 * answer "none".  A module without local debug info (a stripped libstdc++)
 * is common; before the standard search runs without a server, this checks
 * that at least one file it would try exists.  The names checked are a
 * superset of the ones it tries, so a debug file it would find is never
 * missed. */
#include "internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool exists(const char *dir, const char *sub, const char *name)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s%s%s/%s", dir ? dir : ".", sub ? "/" : "",
			 sub ? sub : "", name);
	return n > 0 && (size_t)n < sizeof(path) && access(path, F_OK) == 0;
}

/* NAME in DIR, under each tail of the absolute directory FILE_DIR ("a/b/c",
 * "b/c", "c"), and under DIR/.dwz. */
static bool in_absolute(const char *dir, const char *file_dir, const char *name)
{
	if (exists(dir, NULL, name) || exists(dir, ".dwz", name))
		return true;
	for (const char *sub = file_dir; sub && (sub = strchr(sub, '/')) != NULL;) {
		sub++;
		if (*sub && exists(dir, sub, name))
			return true;
	}
	return false;
}

/* NAME along SEARCH for a main file in FILE_DIR (NULL: a relative name);
 * in FILE_DIR itself too when OWN_DIR (the main file's own base name there
 * is the main file, which libdwfl skips). */
static bool on_path(const char *search, const char *file_dir, const char *name, bool own_dir)
{
	char *copy = strdup(search), *save = NULL;
	if (!copy)
		return true;
	bool found = false;
	for (char *p = strtok_r(copy, ":", &save); p && !found; p = strtok_r(NULL, ":", &save)) {
		if (*p == '-' || *p == '+')
			p++;
		if (*p == '/')
			found = in_absolute(p, file_dir, name);
		else
			found = exists(file_dir, *p ? p : NULL, name);
	}
	if (!found && own_dir)   /* an empty entry, which strtok_r skips */
		found = exists(file_dir, NULL, name);
	free(copy);
	return found;
}

static bool by_build_id(const char *search, Dwfl_Module *mod)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bits, &vaddr);
	char *hex = len > 0 ? dbg_hex(bits, (size_t)len) : NULL;
	char *found = hex ? dbg_build_id_on_path(search, hex) : NULL;
	bool any = found != NULL;
	free(hex);
	free(found);
	return any;
}

/* The names tried for FILE_NAME: the debuglink, else FILE_NAME's base name
 * with ".debug"; and the base names of both. */
static bool names_on_path(const char *search, const char *file_name, const char *debuglink)
{
	const char *base = strrchr(file_name, '/');
	base = base ? base + 1 : file_name;
	char *dir = base > file_name ? strndup(file_name, (size_t)(base - 1 - file_name)) : NULL;
	char *made = NULL;
	if (!debuglink && asprintf(&made, "%s.debug", base) < 0)
		made = NULL;
	const char *link = debuglink ? debuglink : made;
	const char *link_base = link ? strrchr(link, '/') : NULL;
	link_base = link_base ? link_base + 1 : link;
	bool found = (base > file_name && !dir) || !link ||
		     on_path(search, dir, link, true) || on_path(search, dir, base, false) ||
		     on_path(search, dir, link_base, true);
	free(made);
	free(dir);
	return found;
}

bool dbg_local_debuginfo_possible(const char *search, Dwfl_Module *mod, const char *file_name,
				  const char *debuglink, GElf_Word debuglink_crc)
{
	/* A supplementary (dwz) file is looked for with its own build-id and a
	 * link without a CRC: left to libdwfl. */
	if (!search || (debuglink && debuglink_crc == 0))
		return true;
	if (by_build_id(search, mod))
		return true;
	if (!file_name)   /* a module without a file, such as the vDSO */
		return debuglink && on_path(search, NULL, debuglink, true);
	if (names_on_path(search, file_name, debuglink))
		return true;
	char *canon = realpath(file_name, NULL);
	bool found = canon && strcmp(canon, file_name) != 0 &&
		     names_on_path(search, canon, debuglink);
	free(canon);
	return found;
}
