/* A running process analysed live (report --pid, snapshot): the same
 * analysis as a core's, over corefile/live.h's target. */
#ifndef CLI_LIVE_H
#define CLI_LIVE_H

#include <sys/types.h>

#include "../analyzer/driver.h"
#include "../corefile/live.h"

/* The default of --max-pause, in milliseconds. */
#define CLI_DEFAULT_MAX_PAUSE 1000

/* Stop process PID (at most MAX_PAUSE_MS; 0: no bound), analyse it with
 * OPTS while it is stopped, let it go, and return the analysis in *AN (the
 * caller destroys it) and the process's target in *LIVE (the caller
 * destroys it; it holds what was read, for core_live_writer()).  FIRST_TID,
 * when nonzero, is the thread to put first (the one a signature is built
 * from; default the main thread).  TASKS_FROM_WARM_UP (report --pid, not a
 * snapshot): the stopped analysis reads only the asyncio tasks the warm-up
 * found, not the collector's lists again.  Errors are one line, for exit 2. */
struct core_error *cli_live_analyze(pid_t pid, unsigned max_pause_ms, pid_t first_tid,
				    const struct an_options *opts, bool tasks_from_warm_up, struct core_live **live,
				    struct analysis **an);

/* `asyncore snapshot PID -o FILE[.zst] [options]`. */
int cli_snapshot(int argc, char **argv);

#endif
