#include "cli.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* An installed asyncore lives in PREFIX/bin and its files in
 * PREFIX/share/asyncore: found from /proc/self/exe, so an install under any
 * PREFIX or DESTDIR finds its own files, and a build tree finds none. */
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
	*slash = '\0';   /* PREFIX/bin */
	struct stat st;
	if (snprintf(dir, sizeof(dir), "%s/../share/asyncore", exe) >= (int)sizeof(dir) ||
	    stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return NULL;
	char *real = realpath(dir, NULL);
	if (real) {
		snprintf(dir, sizeof(dir), "%s", real);
		free(real);
	}
	return dir;
}
