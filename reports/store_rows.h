/* Column values both store backends write the same way (store_sqlite.c,
 * store_clickhouse.c), so the two stores hold the same text. */
#ifndef REPORTS_STORE_ROWS_H
#define REPORTS_STORE_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../analyzer/analysis.h"
#include "store.h"

/* Room for rep_event_args_json(): 12 arguments as "0x..." strings. */
#define REP_EVENT_ARGS_MAX (12 * 24 + 8)

/* T (seconds since the epoch) as ISO 8601 UTC, "2024-05-01T12:00:00Z". */
void rep_store_time(int64_t t, char out[32]);

/* The modification time of AN's core file as ISO 8601 UTC into OUT (the
 * crash time of a core whose name does not say it): OUT, or NULL when the
 * file cannot be read (a core given on a pipe). */
const char *rep_core_file_mtime(const struct analysis *an, char out[32]);

/* Frames of every thread of AN. */
size_t rep_total_frames(const struct analysis *an);

/* The cores.arch of AN: its architecture's name ("x86_64", "aarch64"). */
const char *rep_core_arch(const struct analysis *an);

/* The columns of cores that hold the fault a crash handler caught
 * (analysis.h: an_caught), as both stores write them: each unknown (has_*
 * false, text NULL) when no handler caught the crash. */
struct rep_caught_columns {
	bool has_signal, has_code, has_address;
	int64_t signal, code;
	uint64_t address;
	const char *signal_name, *code_name;
	const char *handled_by;     /* the handler's function */
	const char *action;         /* an_handler_action_name() */
};

/* The caught columns of AN. */
struct rep_caught_columns rep_core_caught(const struct analysis *an);

/* The columns of cores that hold a Go program's crash (analysis.h:
 * an_go_crash), as both stores write them: all unknown (crash NULL) when
 * it is none.  The names are an_crash_signals_of()'s, so resign reads back
 * what the analysis signed with. */
struct rep_go_columns {
	const char *crash;          /* "panic", "fatal error" */
	bool has_signal;
	int64_t signal;
	const char *signal_name;
	const char *message;        /* the runtime's first line */
};

/* The Go columns of AN. */
struct rep_go_columns rep_core_go(const struct analysis *an);

/* A blocked_on row (reports/SCHEMA.md) as both stores write it: what a
 * thread waits for (its an_blocked), or a task's wait in the same shape
 * (the JSON report's task blocked_on).  Text borrowed from the analysis. */
struct rep_blocked_columns {
	const char *waiter;         /* "thread" or "task" */
	size_t waiter_idx;          /* threads.idx or tasks.idx */
	bool has_tid;               /* the thread's tid, a task's OS thread */
	int32_t tid;
	const char *kind;           /* "mutex", ...; a task's wait kind */
	bool has_object;
	uint64_t object;
	const char *object_name;
	bool has_owner_tid;
	int32_t owner_tid;
	bool owner_gone;
	bool has_owner_task;
	uint64_t owner_task;
	const char *syscall;
	bool has_fd;
	int64_t fd;
	const char *fd_target;
	bool has_since;
	uint64_t since;
	const char *via;            /* the C library's function it waits in */
	const char *function;       /* the waiter's first function outside it */
	const char *summary;
};

/* Row K of AN's blocked_on rows into *OUT: K < nthreads is thread K's,
 * then task K - nthreads's; false when that one waits for nothing. */
bool rep_blocked_row(const struct analysis *an, size_t k, struct rep_blocked_columns *out);

/* The frame's arguments as JSON text, the one encoding of the JSON report
 * and both stores ([{"name","type","value","entry_value","entry_equal"}],
 * compact, strings made valid UTF-8), or NULL when it has none or on
 * out-of-memory (caller frees). */
char *rep_frame_args_json(const struct an_frame *f);

/* N variables (arguments or locals) in that encoding; NULL on
 * out-of-memory (caller frees). */
char *rep_vars_json(const struct an_arg *vars, size_t n);

/* The arguments of rep_frame_args_json()'s TEXT (NULL: none) into F, as
 * one block (analysis.h: an_args_pack); -1 on out-of-memory. */
int rep_frame_args_parse(struct an_frame *f, const char *text);

/* One column value read back from a store: NULL, an integer or text
 * (borrowed). */
struct rep_cell {
	bool null;
	int64_t i;
	const char *s;
};

/* The field of struct an_frame a frames table's column holds, looked up
 * once per result set by rep_frame_field_of(COLUMN) (REP_FIELD_NONE: keys
 * such as "core_id", "idx", which are no field). */
enum rep_frame_field {
	REP_FIELD_NONE, REP_FIELD_KIND, REP_FIELD_PC, REP_FIELD_CFA, REP_FIELD_FUNCTION,
	REP_FIELD_MODULE, REP_FIELD_FILE, REP_FIELD_DISPLAY, REP_FIELD_RUNTIME, REP_FIELD_DETAIL,
	REP_FIELD_FUNCTION_OFFSET, REP_FIELD_MODULE_OFFSET, REP_FIELD_LINE, REP_FIELD_INLINE_DEPTH,
	REP_FIELD_INLINED, REP_FIELD_TAILCALL, REP_FIELD_ACTIVATION, REP_FIELD_SEAM, REP_FIELD_ARGS,
	REP_FIELD_ROLE,
};
enum rep_frame_field rep_frame_field_of(const char *column);

/* Set FIELD of F (the columns rep_frame_args_json() and the writers fill,
 * "args" parsed back from its JSON text, "role" from its name) to V,
 * strings copied; NONE is left alone.  0, or -1 when out of memory. */
int rep_frame_set_field(struct an_frame *f, enum rep_frame_field field, const struct rep_cell *v);

/* Every frames table's leading columns: its core's (core_id, or
 * ClickHouse's fingerprint), its owner's idx, then its own idx. */
enum { REP_FRAME_OWNER_COLUMN = 1, REP_FRAME_INDEX_COLUMN = 2 };

/* Frame N (from 0) of a stack read back in order was stored at index IDX:
 * the first jump of the indexes, where a recursion's run was left out, is
 * noted in *GAP (zeroed before the first frame). */
void rep_index_gap_note(struct an_index_gap *gap, size_t n, int64_t idx);

/* The event's arguments as a JSON array of hex strings into BUF (LEN of at
 * least REP_EVENT_ARGS_MAX holds them all). */
void rep_event_args_json(const struct an_event *e, char *buf, size_t len);

/* The ingest_errors key of ID: its fingerprint, or "path:" and its path
 * when the core could not be read (caller frees; NULL: out of memory). */
char *rep_error_ident(const struct rep_core_id *id);

/* ---- Term sets: what a search matches by name ---------------------------
 *
 * A core's search names are the distinct function, module and file of
 * every thread's and task's frame, and its cause summary.  Cores holding
 * the same names share one term set, named by rep_term_set_key(): the
 * stores keep each set's names once (term_names) and count cores per set
 * and bucket (set_days), so a search over many cores reads the few sets
 * holding a name, never every core holding it. */

/* Room for a term set's key: 32 hex digits and a NUL. */
#define REP_TERM_SET_KEY 33

/* The search names of AN (borrowed from it), sorted and distinct, in
 * *NAMES (caller frees the array); -1 on out-of-memory. */
int rep_core_terms(const struct analysis *an, const char ***names, size_t *n);

/* Sort V[0 .. *N) and drop repeats and empty names, *N their count. */
void rep_terms_unique(const char **v, size_t *n);

/* The key of the term set of N names sorted and distinct: the first 128
 * bits of SHA-256 over each name and its NUL, in hex. */
void rep_term_set_key(const char *const *names, size_t n, char key[REP_TERM_SET_KEY]);

#endif
