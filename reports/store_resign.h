/* Recomputing the stored signatures: the store reads each core's crashing
 * stack back as plain frames, a caller-given function signs it (cli/ hands
 * in the analyzer's), and every changed signature is written, all in one
 * transaction.  Before that, the frames of modules that had no debug info
 * when their cores were stored, and have some now, are symbolized again
 * by caller-given functions (cli/ hands in dwarf/'s lookup and the
 * analyzer's symbolization). */
#ifndef REPORTS_STORE_RESIGN_H
#define REPORTS_STORE_RESIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../analyzer/analysis.h"
#include "../analyzer/signature.h"
#include "store.h"

/* One stored core as its signature is computed: its signals (the core's,
 * the one a crash handler caught, a Go crash's: cores.signal ...
 * go_signal_name) and the crashing thread's frames (kind, function, module,
 * module_offset, pc and role filled; borrowed for the call), all of them:
 * the signature's signal (an_signature_set_signal()) and where it starts
 * among the frames (an_signature_start(), the caught fault's crash site)
 * are the signing function's to find, as an_signature_compute() finds
 * them. */
struct rep_stored_crash {
	int64_t id;
	struct an_crash_signals signals;   /* strings borrowed for the call */
	const struct an_frame *frames;
	size_t nframes;
	size_t collapsed_at;        /* > 0: the stored indexes jump before
				       frames[collapsed_at] (a recursion's run) */
};

/* Sign C: 0 with *SIGNATURE and *HASH (malloc'd; the store frees them), or
 * -1 (out of memory). */
typedef int rep_sign_fn(void *ctx, const struct rep_stored_crash *c, char **signature,
			char **hash);

/* A module of a stored core that had no debug info when the core was
 * stored (modules.debuginfo NULL); strings borrowed for the call. */
struct rep_stored_module {
	const char *path;           /* as the module's frames name it */
	const char *build_id;       /* hex */
	uint64_t start, end;        /* where the core mapped it */
};

/* The debug info found now for the module with BUILD_ID that cores mapped
 * from PATH: the path of the file that holds it (malloc'd; the store frees
 * it), or NULL when there is none (its frames stay as they are).  Asked
 * once per build-id and path. */
typedef char *rep_debuginfo_fn(void *ctx, const char *build_id, const char *path);

/* Symbolize again the frames of *FRAMES (*N: one stored thread's, task's or
 * suspended chain's, innermost first, as rep_frame_set_field() reads them
 * back) that lie in MODULES (those of this core that DEBUGINFO found debug
 * info for): the number symbolized, and when > 0 *FRAMES and *N are the new
 * list (malloc'd, the old one freed) and *GAP, where their indexes jump
 * over a recursion's run (at 0: nowhere), is theirs
 * (an_frames_resymbolize()); -1 when out of memory. */
typedef int rep_resymbolize_fn(void *ctx, const struct rep_stored_module *modules, size_t nmodules,
			       struct an_frame **frames, size_t *n, struct an_index_gap *gap);

/* What resigning asks of its caller. */
struct rep_resign_fns {
	rep_sign_fn *sign;
	rep_debuginfo_fn *debuginfo;        /* NULL: no frame is symbolized again */
	rep_resymbolize_fn *resymbolize;
	void *ctx;                          /* the first argument of each */
};

struct rep_resign_result {
	size_t cores;               /* cores signed */
	size_t changed;             /* cores whose signature changed */
	size_t buckets_before, buckets_after;
	size_t merged;              /* buckets now holding cores of two or more old ones */
	size_t split;               /* old buckets whose cores now lie in two or more */
	size_t modules_found;       /* modules (build-id and path) with debug info found since */
	size_t frames_symbolized;   /* stored frames symbolized again */
	size_t cores_symbolized;    /* the cores they belong to */
};

/* Symbolize again the frames of modules whose debug info FNS->debuginfo
 * finds (each such module's modules.debuginfo set, the frames rewritten,
 * their owners' and cores' frame counts with them), then recompute the
 * signature of every core in ST with FNS->sign: in one transaction (all or
 * nothing) on SQLite.  Returns 0 and *OUT, or -1 with a one-line reason in
 * WHY. */
int rep_store_resign(struct rep_store *st, const struct rep_resign_fns *fns,
		     struct rep_resign_result *out, char *why, size_t whylen);

/* For the stores' own files: the debug info found for each module
 * (build-id and path) a resign asked about, so each is asked once. */
struct rep_found {
	char *build_id, *path;
	char *debuginfo;            /* NULL: none found */
};

struct rep_found_modules {
	struct rep_found *v;
	size_t n, cap;
};

/* The entry of BUILD_ID and PATH in M, asked of FNS->debuginfo the first
 * time; SIZE_MAX when out of memory. */
size_t rep_found_module(struct rep_found_modules *m, const struct rep_resign_fns *fns,
			const char *build_id, const char *path);

/* How many entries of M have debug info. */
size_t rep_found_count(const struct rep_found_modules *m);

void rep_found_modules_free(struct rep_found_modules *m);

#endif
