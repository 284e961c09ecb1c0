/* `asyncore collect`: the kernel's core_pattern pipe helper.
 *
 *   |/usr/bin/asyncore collect --db URL --dir DIR [...] %P %i %s %t %E
 *
 * The parent reads the core from standard input to its end into DIR, then
 * a child analyses it, stores the report and keeps the minicore (or the
 * whole core, or nothing) in DIR, within --timeout; the parent holds the
 * pipe (so the kernel keeps /proc/PID) until the child is done, then trims
 * DIR to --max-size.  Kept files are named as systemd-coredump names its
 * cores (core.COMM.UID.BOOTID.PID.USEC.zst), so `ingest DIR` stores them
 * later with their crash time.  --install and --uninstall set and restore
 * core_pattern (collect_install.c). */
#ifndef CLI_COLLECT_H
#define CLI_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum collect_keep { COLLECT_KEEP_MINI, COLLECT_KEEP_FULL, COLLECT_KEEP_NONE };

struct collect_opts {
	const char *db;
	const char *dir;
	enum collect_keep keep;
	const char *keep_name;      /* as given, for --install */
	uint64_t max_size;          /* bytes of DIR's kept files */
	const char *max_size_arg;   /* as given, or NULL */
	unsigned timeout;           /* seconds for the analysis and the store */
	bool timeout_given;
	bool install, uninstall;
};

/* `asyncore collect ...`: 0 stored, 1 stored with warnings, 2 not stored
 * (logged to stderr and the journal). */
int cli_collect(int argc, char **argv);

/* --install: core_pattern runs this program's collect with O's options
 * (core_pipe_limit 16 when it was 0); the previous values are kept in
 * O->dir.  --uninstall puts them back.  0, or 2 with the reason on stderr. */
int collect_install(const struct collect_opts *o);
int collect_uninstall(const struct collect_opts *o);

/* The first line of PATH into BUF (no newline); false when unreadable. */
bool collect_read_line(const char *path, char *buf, size_t len);

#endif
