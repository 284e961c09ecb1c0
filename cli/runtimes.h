/* The runtime descriptions a command uses (DESIGN.md, "Runtime
 * descriptions"): the files given with --runtime, then the search path. */
#ifndef CLI_RUNTIMES_H
#define CLI_RUNTIMES_H

#include <stdbool.h>
#include <stddef.h>

#include "../analyzer/rtdesc.h"

/* The most --runtime options one command takes. */
#define CLI_MAX_RUNTIMES 32

/* Load FILES (each must load), then every *.json (by name) of the search
 * path: $XDG_CONFIG_HOME/asyncore/runtimes (default ~/.config/...), then the
 * runtimes/ of asyncore's own share directory (cli_share_dir(): the
 * installed PREFIX/share/asyncore, or ./share/asyncore in a checkout).  On
 * the search path a description whose name is already loaded is skipped, so
 * a file given or a user's own description overrides a shipped one.
 * Returns the set (caller destroys it), or NULL after one line on stderr
 * naming the file, the JSON path and the problem (exit status 2). */
struct an_runtimes *cli_runtimes_load(const char *const *files, size_t nfiles);

#endif
