#include "cli.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* DIR (PATH_MAX bytes) = EXEDIR/REL when that is a directory. */
static bool share_dir_at(char *dir, const char *exedir, const char *rel)
{
	struct stat st;
	return snprintf(dir, PATH_MAX, "%s/%s", exedir, rel) < PATH_MAX && stat(dir, &st) == 0 &&
	       S_ISDIR(st.st_mode);
}

/* An installed asyncore lives in PREFIX/bin and its files in
 * PREFIX/share/asyncore; the checkout's ./asyncore has them in
 * ./share/asyncore.  Found from /proc/self/exe, so an install under any
 * PREFIX or DESTDIR, and the checkout, find their own files. */
const char *cli_share_dir(void)
{
	static char dir[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';   /* PREFIX/bin, or the checkout */
	if (!share_dir_at(dir, exe, "../share/asyncore") && !share_dir_at(dir, exe, "share/asyncore"))
		return NULL;
	char *real = realpath(dir, NULL);
	if (real) {
		snprintf(dir, sizeof(dir), "%s", real);
		free(real);
	}
	return dir;
}
