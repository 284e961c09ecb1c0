#include "runtimes.h"
#include "cli.h"
#include "options.h"


#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../reports/bytes.h"

#define SEARCH_DIRS 2

static bool is_description(const char *name)
{
	size_t n = strlen(name);
	return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".json") == 0;
}

/* DIR/TAIL into OUT; false when it does not fit. */
static bool join(char out[PATH_MAX], const char *dir, const char *tail)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", dir, tail);
	return n > 0 && n < PATH_MAX;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every description in DIR, in name order; a missing directory has none. */
static struct core_error *load_dir(struct an_runtimes *set, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;
	struct core_error *err = NULL;
	if (!d)
		return NULL;
	while (!err && (e = readdir(d))) {
		if (!is_description(e->d_name))
			continue;
		char **v = realloc(names, (n + 1) * sizeof(*v));
		if (!v || !(v[n] = strdup(e->d_name)))
			err = &core_error_nomem;
		if (v)
			names = v;
		if (!err)
			n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX];
		if (!err && join(path, dir, names[i]))
			err = an_runtimes_load(set, path, true);
		free(names[i]);
	}
	free(names);
	return err;
}

/* The search path as configured: the user's directory, then the one
 * shipped with asyncore (cli_share_dir()), whether they exist or not. */
static size_t search_candidates(char candidates[SEARCH_DIRS][PATH_MAX])
{
	size_t nc = 0;
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME"), *share = cli_share_dir();
	if (xdg && xdg[0] == '/')
		nc += join(candidates[nc], xdg, "asyncore/runtimes");
	else if (home && home[0])
		nc += join(candidates[nc], home, ".config/asyncore/runtimes");
	if (share)
		nc += join(candidates[nc], share, "runtimes");
	return nc;
}

/* The search path's directories that exist, each once. */
static size_t search_dirs(char dirs[SEARCH_DIRS][PATH_MAX])
{
	char candidates[SEARCH_DIRS][PATH_MAX];
	size_t nc = search_candidates(candidates), n = 0;
	for (size_t i = 0; i < nc; i++) {
		char real[PATH_MAX];
		if (!realpath(candidates[i], real))
			continue;
		bool seen = false;
		for (size_t j = 0; j < n; j++)
			seen = seen || strcmp(dirs[j], real) == 0;
		if (!seen)
			memcpy(dirs[n++], real, PATH_MAX);
	}
	return n;
}

struct an_runtimes *cli_runtimes_load(const char *const *files, size_t nfiles)
{
	char dirs[SEARCH_DIRS][PATH_MAX];
	struct an_runtimes *set = an_runtimes_create();
	struct core_error *err = set ? NULL : &core_error_nomem;
	for (size_t i = 0; i < nfiles && !err; i++)
		err = an_runtimes_load(set, files[i], false);
	size_t ndirs = err ? 0 : search_dirs(dirs);
	for (size_t i = 0; i < ndirs && !err; i++)
		err = load_dir(set, dirs[i]);
	if (!err)
		return set;
	rep_say(stderr, err->message, NULL);   /* it may quote the file */
	core_error_destroy(err);
	an_runtimes_destroy(set);
	return NULL;
}

enum runtimes_option { O_RUNTIME };

static const struct cli_option runtimes_options[] = {
	{"--runtime", true, O_RUNTIME},
	{NULL, false, 0},
};

int cli_runtimes(int argc, char **argv)
{
	struct cli_args args;
	const char *files[CLI_MAX_RUNTIMES], *v;
	char candidates[SEARCH_DIRS][PATH_MAX];
	size_t nfiles = 0;
	int id;
	cli_args_init(&args, "runtimes", argc, argv);
	while ((id = cli_next(&args, runtimes_options, &v)) != CLI_END) {
		if (id == CLI_ERROR)
			return CLI_EXIT_UNUSABLE;
		if (id != O_RUNTIME) {
			cli_error("runtimes", "unexpected argument %s", v);
			return CLI_EXIT_UNUSABLE;
		}
		if (!cli_repeated("runtimes", "--runtime", files, &nfiles, CLI_MAX_RUNTIMES, v))
			return CLI_EXIT_UNUSABLE;
	}
	struct an_runtimes *set = cli_runtimes_load(files, nfiles);
	if (!set)
		return CLI_EXIT_UNUSABLE;
	for (size_t i = 0; i < set->n; i++)
		printf("%-16s %s\n", set->v[i].name, set->v[i].file);
	size_t nc = search_candidates(candidates);
	printf("search path:\n");
	for (size_t i = 0; i < nc; i++) {
		char real[PATH_MAX];
		bool there = realpath(candidates[i], real) != NULL;
		printf("  %s%s\n", there ? real : candidates[i], there ? "" : " (absent)");
	}
	an_runtimes_destroy(set);
	return CLI_EXIT_OK;
}
