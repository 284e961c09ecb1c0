#include "store_sqlite.h"
#include "store_internal.h"
#include "store_rows.h"

#include "../base/array.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bytes.h"

/* How long one connection waits for a lock, and how long a write keeps
 * retrying BEGIN IMMEDIATE after that before it gives up. */
#define REP_BUSY_TIMEOUT_MS 5000
#define REP_RETRY_SECONDS 300

/* Schema 10's bucket_days: the row of each group of cores (one bucket's
 * cores of one program, build, architecture and cause on one day), grouped
 * by its first six columns: the table's fill and its triggers' recount. */
#define BUCKET_DAYS_ROW \
	"    SELECT ifnull(signature_hash, ''), ifnull(executable, ''), ifnull(build_id, ''), arch," \
	"           ifnull(cause_kind, ''), ifnull(substr(coalesce(crashed_at, file_mtime), 1, 10), '')," \
	"           max(signature), count(*), min(coalesce(crashed_at, file_mtime))," \
	"           max(coalesce(crashed_at, file_mtime))"

/* In a trigger on cores: the group of bucket_days of ROW (OLD or NEW)
 * counted again from cores, gone when no core is left in it. */
#define BUCKET_DAYS_RECOUNT(ROW) \
	"  DELETE FROM bucket_days WHERE signature_hash = ifnull(" ROW ".signature_hash, '')" \
	"    AND executable = ifnull(" ROW ".executable, '') AND build_id = ifnull(" ROW ".build_id, '')" \
	"    AND arch = " ROW ".arch AND cause_kind = ifnull(" ROW ".cause_kind, '')" \
	"    AND day = ifnull(substr(coalesce(" ROW ".crashed_at, " ROW ".file_mtime), 1, 10), '');" \
	"  INSERT INTO bucket_days" \
	BUCKET_DAYS_ROW \
	"    FROM cores WHERE signature_hash IS " ROW ".signature_hash AND executable IS " ROW ".executable" \
	"      AND build_id IS " ROW ".build_id AND arch = " ROW ".arch AND cause_kind IS " ROW ".cause_kind" \
	"      AND substr(coalesce(crashed_at, file_mtime), 1, 10)" \
	"          IS substr(coalesce(" ROW ".crashed_at, " ROW ".file_mtime), 1, 10)" \
	"    GROUP BY 1, 2, 3, 4, 5, 6;"

/* Schema 12's set_days: the cores of one term set (reports/store_rows.h)
 * in one group of bucket_days.  SEEN is a crash time, as everywhere. */
#define SEEN(ROW) "coalesce(" ROW "crashed_at, " ROW "file_mtime)"
#define SET_DAYS_ROW \
	"    SELECT term_set, ifnull(signature_hash, ''), ifnull(executable, ''), ifnull(build_id, '')," \
	"           arch, ifnull(cause_kind, ''), ifnull(substr(" SEEN("") ", 1, 10), ''), count(*)," \
	"           max(" SEEN("") ")"

/* In a trigger on cores: the group of set_days of ROW counted again from
 * cores, by index (cores_term_set): that set's cores of that bucket on
 * that day, or undated. */
#define SET_DAYS_RECOUNT(ROW) \
	"  DELETE FROM set_days WHERE term_set = " ROW ".term_set" \
	"    AND signature_hash = ifnull(" ROW ".signature_hash, '')" \
	"    AND executable = ifnull(" ROW ".executable, '') AND build_id = ifnull(" ROW ".build_id, '')" \
	"    AND arch = " ROW ".arch AND cause_kind = ifnull(" ROW ".cause_kind, '')" \
	"    AND day = ifnull(substr(" SEEN(ROW ".") ", 1, 10), '');" \
	"  INSERT INTO set_days" \
	SET_DAYS_ROW \
	"    FROM cores WHERE term_set = " ROW ".term_set AND signature_hash IS " ROW ".signature_hash" \
	"      AND ((" SEEN("") " >= substr(" SEEN(ROW ".") ", 1, 10)" \
	"            AND " SEEN("") " < substr(" SEEN(ROW ".") ", 1, 10) || '~')" \
	"           OR (" SEEN("") " IS NULL AND " SEEN(ROW ".") " IS NULL))" \
	"      AND executable IS " ROW ".executable AND build_id IS " ROW ".build_id" \
	"      AND arch = " ROW ".arch AND cause_kind IS " ROW ".cause_kind" \
	"    GROUP BY 1, 2, 3, 4, 5, 6, 7;"

/* Schema 12's names of each stored core, as rep_core_terms() takes them
 * from an analysis: a migration's and resign's term sets. */
#define STORED_CORE_TERMS \
	"SELECT core_id, function AS name FROM frames WHERE function <> ''" \
	" UNION SELECT core_id, module FROM frames WHERE module <> ''" \
	" UNION SELECT core_id, file FROM frames WHERE file <> ''" \
	" UNION SELECT core_id, function FROM task_frames WHERE function <> ''" \
	" UNION SELECT core_id, module FROM task_frames WHERE module <> ''" \
	" UNION SELECT core_id, file FROM task_frames WHERE file <> ''" \
	" UNION SELECT id, cause_summary FROM cores WHERE cause_summary <> ''"

/* Migrations: entry V-1 takes the schema from version V-1 to V.  Keep this
 * in step with reports/SCHEMA.md; never edit a released entry, add one. */
static const char *const rep_migrations[] = {
	/* 1: first version */
	"CREATE TABLE cores ("
	"  id INTEGER PRIMARY KEY,"
	"  fingerprint TEXT NOT NULL UNIQUE,"
	"  sha256 TEXT,"
	"  path TEXT NOT NULL,"
	"  size INTEGER NOT NULL,"
	"  crashed_at TEXT,"
	"  analysed_at TEXT NOT NULL,"
	"  analyzer_version TEXT NOT NULL,"
	"  executable TEXT,"
	"  build_id TEXT,"
	"  pid INTEGER,"
	"  uid INTEGER,"
	"  signal INTEGER,"
	"  signal_name TEXT,"
	"  code INTEGER,"
	"  code_name TEXT,"
	"  fault_address INTEGER,"
	"  crashing_tid INTEGER,"
	"  signature TEXT,"
	"  signature_hash TEXT,"
	"  async_key INTEGER,"
	"  nthreads INTEGER NOT NULL,"
	"  nframes INTEGER NOT NULL,"
	"  nwarnings INTEGER NOT NULL);"
	"CREATE INDEX cores_signature ON cores(signature_hash, crashed_at);"
	"CREATE INDEX cores_build_id ON cores(build_id);"
	"CREATE INDEX cores_executable ON cores(executable);"
	"CREATE INDEX cores_crashed_at ON cores(crashed_at);"
	"CREATE TABLE modules ("
	"  core_id INTEGER NOT NULL REFERENCES cores(id) ON DELETE CASCADE,"
	"  idx INTEGER NOT NULL,"
	"  path TEXT,"
	"  start_addr INTEGER,"
	"  end_addr INTEGER,"
	"  build_id TEXT,"
	"  debuginfo TEXT,"
	"  PRIMARY KEY (core_id, idx)) WITHOUT ROWID;"
	"CREATE INDEX modules_build_id ON modules(build_id);"
	"CREATE TABLE threads ("
	"  core_id INTEGER NOT NULL REFERENCES cores(id) ON DELETE CASCADE,"
	"  idx INTEGER NOT NULL,"
	"  tid INTEGER NOT NULL,"
	"  crashing INTEGER NOT NULL,"
	"  rip INTEGER, rsp INTEGER, rbp INTEGER, fs_base INTEGER,"
	"  nframes INTEGER NOT NULL,"
	"  unwind_error TEXT,"
	"  async_root INTEGER,"
	"  PRIMARY KEY (core_id, idx)) WITHOUT ROWID;"
	"CREATE TABLE frames ("
	"  core_id INTEGER NOT NULL REFERENCES cores(id) ON DELETE CASCADE,"
	"  thread_idx INTEGER NOT NULL,"
	"  idx INTEGER NOT NULL,"
	"  kind TEXT NOT NULL CHECK (kind IN ('native', 'async')),"
	"  pc INTEGER NOT NULL,"
	"  activation INTEGER NOT NULL,"
	"  function TEXT,"
	"  function_offset INTEGER,"
	"  module TEXT,"
	"  module_offset INTEGER,"
	"  file TEXT,"
	"  line INTEGER,"
	"  inlined INTEGER NOT NULL,"
	"  inline_depth INTEGER NOT NULL,"
	"  cfa INTEGER,"
	"  seam INTEGER NOT NULL,"
	"  PRIMARY KEY (core_id, thread_idx, idx)) WITHOUT ROWID;"
	"CREATE INDEX frames_function ON frames(function);"
	"CREATE TABLE async_roots ("
	"  core_id INTEGER NOT NULL REFERENCES cores(id) ON DELETE CASCADE,"
	"  thread_idx INTEGER NOT NULL,"
	"  tid INTEGER NOT NULL,"
	"  address INTEGER NOT NULL,"
	"  PRIMARY KEY (core_id, thread_idx)) WITHOUT ROWID;"
	"CREATE TABLE suspended ("
	"  core_id INTEGER NOT NULL REFERENCES cores(id) ON DELETE CASCADE,"
	"  idx INTEGER NOT NULL,"
	"  leaf INTEGER NOT NULL,"
	"  nframes INTEGER NOT NULL,"
	"  PRIMARY KEY (core_id, idx)) WITHOUT ROWID;"
	"CREATE TABLE suspended_frames ("
	"  core_id INTEGER NOT NULL REFERENCES cores(id) ON DELETE CASCADE,"
	"  chain_idx INTEGER NOT NULL,"
	"  idx INTEGER NOT NULL,"
	"  kind TEXT NOT NULL CHECK (kind IN ('native', 'async')),"
	"  pc INTEGER NOT NULL,"
	"  function TEXT,"
	"  function_offset INTEGER,"
	"  module TEXT,"
	"  module_offset INTEGER,"
	"  file TEXT,"
	"  line INTEGER,"
	"  inlined INTEGER NOT NULL,"
	"  inline_depth INTEGER NOT NULL,"
	"  PRIMARY KEY (core_id, chain_idx, idx)) WITHOUT ROWID;"
	"CREATE TABLE recorders ("
	"  core_id INTEGER NOT NULL REFERENCES cores(id) ON DELETE CASCADE,"
	"  idx INTEGER NOT NULL,"
	"  name TEXT,"
	"  layout TEXT,"
	"  address INTEGER,"
	"  size INTEGER, writer INTEGER, reader INTEGER, committed INTEGER, overflow INTEGER,"
	"  recovered INTEGER, in_flight INTEGER, overwritten INTEGER,"
	"  nevents INTEGER NOT NULL,"
	"  PRIMARY KEY (core_id, idx)) WITHOUT ROWID;"
	"CREATE TABLE recorder_events ("
	"  core_id INTEGER NOT NULL REFERENCES cores(id) ON DELETE CASCADE,"
	"  recorder_idx INTEGER NOT NULL,"
	"  idx INTEGER NOT NULL,"
	"  event_order INTEGER NOT NULL,"
	"  timestamp INTEGER,"
	"  location TEXT,"
	"  function TEXT,"
	"  format TEXT,"
	"  message TEXT,"
	"  args TEXT,"
	"  strings_read INTEGER NOT NULL,"
	"  in_flight INTEGER NOT NULL,"
	"  PRIMARY KEY (core_id, recorder_idx, idx)) WITHOUT ROWID;"
	"CREATE INDEX recorder_events_order ON recorder_events(core_id, event_order);"
	"CREATE TABLE warnings ("
	"  core_id INTEGER NOT NULL REFERENCES cores(id) ON DELETE CASCADE,"
	"  idx INTEGER NOT NULL,"
	"  message TEXT NOT NULL,"
	"  PRIMARY KEY (core_id, idx)) WITHOUT ROWID;"
	"CREATE TABLE ingest_errors ("
	"  id INTEGER PRIMARY KEY,"
	"  ident TEXT NOT NULL UNIQUE,"
	"  fingerprint TEXT,"
	"  path TEXT NOT NULL,"
	"  size INTEGER,"
	"  reason TEXT NOT NULL,"
	"  attempts INTEGER NOT NULL,"
	"  first_at TEXT NOT NULL,"
	"  last_at TEXT NOT NULL);"
	"CREATE VIEW crash_stacks AS"
	"  SELECT c.id AS core_id, c.path AS core, c.signature_hash, f.idx AS frame, f.kind,"
	"         printf('0x%x', f.pc) AS pc, f.function, f.file, f.line, f.module, f.inline_depth"
	"  FROM cores c"
	"  JOIN threads t ON t.core_id = c.id AND t.crashing"
	"  JOIN frames f ON f.core_id = c.id AND f.thread_idx = t.idx;"
	"CREATE VIEW top_signatures AS"
	"  SELECT c.signature_hash, c.signature, count(*) AS cores,"
	"         min(c.crashed_at) AS first_seen, max(c.crashed_at) AS last_seen,"
	"         (SELECT e.path FROM cores e WHERE e.signature_hash IS c.signature_hash"
	"          ORDER BY e.crashed_at DESC, e.id DESC LIMIT 1) AS example_core"
	"  FROM cores c GROUP BY c.signature_hash"
	"  ORDER BY cores DESC, last_seen DESC, c.signature_hash;"
	"CREATE VIEW last_events AS"
	"  SELECT core_id, core, recency, recorder, event_order, timestamp, location, function,"
	"         message, in_flight FROM ("
	"    SELECT e.core_id, c.path AS core, r.name AS recorder, e.event_order, e.timestamp,"
	"           e.location, e.function, e.message, e.in_flight,"
	"           row_number() OVER (PARTITION BY e.core_id ORDER BY e.event_order DESC) AS recency"
	"    FROM recorder_events e"
	"    JOIN recorders r ON r.core_id = e.core_id AND r.idx = e.recorder_idx"
	"    JOIN cores c ON c.id = e.core_id)"
	"  WHERE recency <= 10;",
	/* 2: one core identity (file_size as given, size decompressed), the
	 * abort message, tail-call frames, readable names and arguments;
	 * buckets seen by crash time, else by ingest time */
	"ALTER TABLE cores ADD COLUMN file_size INTEGER;"
	"ALTER TABLE cores ADD COLUMN abort_message TEXT;"
	"ALTER TABLE frames ADD COLUMN tailcall INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE frames ADD COLUMN display TEXT;"
	"ALTER TABLE frames ADD COLUMN args TEXT;"
	"ALTER TABLE suspended_frames ADD COLUMN tailcall INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE suspended_frames ADD COLUMN display TEXT;"
	"ALTER TABLE suspended_frames ADD COLUMN args TEXT;"
	"DROP VIEW top_signatures;"
	"CREATE VIEW top_signatures AS"
	"  SELECT c.signature_hash, c.signature, count(*) AS cores,"
	"         min(coalesce(c.crashed_at, c.analysed_at)) AS first_seen,"
	"         max(coalesce(c.crashed_at, c.analysed_at)) AS last_seen,"
	"         (SELECT e.path FROM cores e WHERE e.signature_hash IS c.signature_hash"
	"          ORDER BY coalesce(e.crashed_at, e.analysed_at) DESC, e.id DESC LIMIT 1)"
	"           AS example_core"
	"  FROM cores c GROUP BY c.signature_hash"
	"  ORDER BY cores DESC, last_seen DESC, c.signature_hash;",
	/* 3: systemd-coredump's boot id and UID from the file name, the unit and
	 * command line from its journal entry; trends per bucket (crashes in
	 * the last 7 days, the builds it occurs in, new: only in the newest
	 * build of its program, programs known by the executable's file name) */
	"ALTER TABLE cores ADD COLUMN boot_id TEXT;"
	"ALTER TABLE cores ADD COLUMN coredump_uid INTEGER;"
	"ALTER TABLE cores ADD COLUMN unit TEXT;"
	"ALTER TABLE cores ADD COLUMN cmdline TEXT;"
	"DROP VIEW top_signatures;"
	"CREATE VIEW top_signatures AS"
	"  WITH seen AS MATERIALIZED ("
	"    SELECT id, path, signature_hash, signature, build_id,"
	"           coalesce(crashed_at, analysed_at) AS seen_at,"
	"           replace(executable, rtrim(executable, replace(executable, '/', '')), '')"
	"             AS program FROM cores),"
	"  builds AS MATERIALIZED ("
	"    SELECT program, build_id, min(seen_at) AS first_at FROM seen"
	"    WHERE build_id IS NOT NULL GROUP BY program, build_id),"
	"  bucket_builds AS MATERIALIZED ("
	"    SELECT signature_hash, build_id, min(seen_at) AS first_at FROM seen"
	"    WHERE build_id IS NOT NULL GROUP BY signature_hash, build_id),"
	"  newest AS MATERIALIZED ("
	"    SELECT b.program, b.build_id FROM builds b"
	"    WHERE b.first_at = (SELECT max(x.first_at) FROM builds x WHERE x.program IS b.program)"
	"      AND (SELECT count(*) FROM builds x WHERE x.program IS b.program) > 1)"
	"  SELECT s.signature_hash, s.signature, count(*) AS cores,"
	"         min(s.seen_at) AS first_seen, max(s.seen_at) AS last_seen,"
	"         sum(julianday(s.seen_at) >= julianday('now', '-7 days')) AS last_7_days,"
	"         (SELECT group_concat(g.build_id, ' ') FROM ("
	"            SELECT x.build_id FROM bucket_builds x WHERE x.signature_hash IS s.signature_hash"
	"            ORDER BY x.first_at, x.build_id) g) AS build_ids,"
	"         min(EXISTS (SELECT 1 FROM newest n WHERE n.program IS s.program"
	"                     AND n.build_id = s.build_id)) AS new,"
	"         (SELECT e.path FROM cores e WHERE e.signature_hash IS s.signature_hash"
	"          ORDER BY coalesce(e.crashed_at, e.analysed_at) DESC, e.id DESC LIMIT 1)"
	"           AS example_core"
	"  FROM seen s GROUP BY s.signature_hash"
	"  ORDER BY cores DESC, last_seen DESC, s.signature_hash;",
	/* 4: the tasks of runtimes (bRPC bthreads) and their frames; the crash
	 * stack of a crash in a bthread starts with its frames */
	"CREATE TABLE tasks ("
	"  core_id INTEGER NOT NULL REFERENCES cores(id) ON DELETE CASCADE,"
	"  idx INTEGER NOT NULL,"
	"  runtime TEXT NOT NULL,"
	"  task_id INTEGER NOT NULL,"
	"  state TEXT NOT NULL CHECK (state IN ('running', 'ready', 'suspended', 'created')),"
	"  wait_kind TEXT,"
	"  wait_address INTEGER,"
	"  wait_target INTEGER,"
	"  tid INTEGER,"
	"  fn TEXT,"
	"  fn_address INTEGER,"
	"  address INTEGER NOT NULL,"
	"  nframes INTEGER NOT NULL,"
	"  unwind_error TEXT,"
	"  PRIMARY KEY (core_id, idx)) WITHOUT ROWID;"
	"CREATE INDEX tasks_state ON tasks(core_id, state);"
	"CREATE TABLE task_frames ("
	"  core_id INTEGER NOT NULL REFERENCES cores(id) ON DELETE CASCADE,"
	"  task_idx INTEGER NOT NULL,"
	"  idx INTEGER NOT NULL,"
	"  kind TEXT NOT NULL CHECK (kind IN ('native', 'async')),"
	"  pc INTEGER NOT NULL,"
	"  function TEXT,"
	"  function_offset INTEGER,"
	"  module TEXT,"
	"  module_offset INTEGER,"
	"  file TEXT,"
	"  line INTEGER,"
	"  inlined INTEGER NOT NULL,"
	"  inline_depth INTEGER NOT NULL,"
	"  tailcall INTEGER NOT NULL,"
	"  display TEXT,"
	"  args TEXT,"
	"  activation INTEGER NOT NULL,"
	"  cfa INTEGER,"
	"  seam INTEGER NOT NULL,"
	"  PRIMARY KEY (core_id, task_idx, idx)) WITHOUT ROWID;"
	"CREATE INDEX task_frames_function ON task_frames(function);"
	"DROP VIEW crash_stacks;"
	"CREATE VIEW crash_stacks AS"
	"  SELECT c.id AS core_id, c.path AS core, c.signature_hash, f.idx AS frame, f.kind,"
	"         printf('0x%x', f.pc) AS pc, f.function, f.file, f.line, f.module, f.inline_depth"
	"  FROM cores c"
	"  JOIN threads t ON t.core_id = c.id AND t.crashing"
	"  JOIN tasks k ON k.core_id = c.id AND k.state = 'running' AND k.tid = t.tid"
	"  JOIN task_frames f ON f.core_id = c.id AND f.task_idx = k.idx"
	"  UNION ALL"
	"  SELECT c.id, c.path, c.signature_hash,"
	"         f.idx + coalesce((SELECT k.nframes FROM tasks k WHERE k.core_id = c.id"
	"                           AND k.state = 'running' AND k.tid = t.tid), 0),"
	"         f.kind, printf('0x%x', f.pc), f.function, f.file, f.line, f.module, f.inline_depth"
	"  FROM cores c"
	"  JOIN threads t ON t.core_id = c.id AND t.crashing"
	"  JOIN frames f ON f.core_id = c.id AND f.thread_idx = t.idx;",
	/* 5: frames from runtime descriptions: kind 'script' and 'label' (a
	 * CHECK constraint, so the table is rebuilt, as SQLite's ALTER TABLE
	 * documentation prescribes), no pc of their own, runtime and detail */
	"PRAGMA legacy_alter_table = ON;"
	"DROP VIEW crash_stacks;"
	"CREATE TABLE frames_new ("
	"  core_id INTEGER NOT NULL REFERENCES cores(id) ON DELETE CASCADE,"
	"  thread_idx INTEGER NOT NULL,"
	"  idx INTEGER NOT NULL,"
	"  kind TEXT NOT NULL CHECK (kind IN ('native', 'async', 'script', 'label')),"
	"  pc INTEGER,"
	"  activation INTEGER NOT NULL,"
	"  function TEXT,"
	"  function_offset INTEGER,"
	"  module TEXT,"
	"  module_offset INTEGER,"
	"  file TEXT,"
	"  line INTEGER,"
	"  inlined INTEGER NOT NULL,"
	"  inline_depth INTEGER NOT NULL,"
	"  cfa INTEGER,"
	"  seam INTEGER NOT NULL,"
	"  tailcall INTEGER NOT NULL DEFAULT 0,"
	"  display TEXT,"
	"  args TEXT,"
	"  runtime TEXT,"
	"  detail TEXT,"
	"  PRIMARY KEY (core_id, thread_idx, idx)) WITHOUT ROWID;"
	"INSERT INTO frames_new (core_id, thread_idx, idx, kind, pc, activation, function,"
	"  function_offset, module, module_offset, file, line, inlined, inline_depth, cfa, seam,"
	"  tailcall, display, args)"
	"  SELECT core_id, thread_idx, idx, kind, pc, activation, function, function_offset, module,"
	"         module_offset, file, line, inlined, inline_depth, cfa, seam, tailcall, display, args"
	"  FROM frames;"
	"DROP TABLE frames;"
	"ALTER TABLE frames_new RENAME TO frames;"
	"CREATE INDEX frames_function ON frames(function);"
	"CREATE VIEW crash_stacks AS"
	"  SELECT c.id AS core_id, c.path AS core, c.signature_hash, f.idx AS frame, f.kind,"
	"         printf('0x%x', f.pc) AS pc, f.function, f.file, f.line, f.module, f.inline_depth,"
	"         NULL AS runtime, NULL AS detail"
	"  FROM cores c"
	"  JOIN threads t ON t.core_id = c.id AND t.crashing"
	"  JOIN tasks k ON k.core_id = c.id AND k.state = 'running' AND k.tid = t.tid"
	"  JOIN task_frames f ON f.core_id = c.id AND f.task_idx = k.idx"
	"  UNION ALL"
	"  SELECT c.id, c.path, c.signature_hash,"
	"         f.idx + coalesce((SELECT k.nframes FROM tasks k WHERE k.core_id = c.id"
	"                           AND k.state = 'running' AND k.tid = t.tid), 0),"
	"         f.kind, CASE WHEN f.pc IS NOT NULL THEN printf('0x%x', f.pc) END, f.function,"
	"         f.file, f.line, f.module, f.inline_depth, f.runtime, f.detail"
	"  FROM cores c"
	"  JOIN threads t ON t.core_id = c.id AND t.crashing"
	"  JOIN frames f ON f.core_id = c.id AND f.thread_idx = t.idx;"
	"PRAGMA legacy_alter_table = OFF;",
	/* 6: what killed the program (DESIGN.md's `cause`): its kind and its
	 * one-line summary; cores stored before have NULL */
	"ALTER TABLE cores ADD COLUMN cause_kind TEXT;"
	"ALTER TABLE cores ADD COLUMN cause_summary TEXT;"
	"CREATE INDEX cores_cause_kind ON cores(cause_kind);",
	/* 7: the core's architecture (core.arch); only x86_64 cores could be
	 * stored before */
	"ALTER TABLE cores ADD COLUMN arch TEXT NOT NULL DEFAULT 'x86_64';"
	"CREATE INDEX cores_arch ON cores(arch);",
	/* 8: crashes a program's own signal handler caught (DESIGN.md "Signal
	 * frames and crash handlers"): each frame's role, NULL for a plain
	 * frame; the caught fault and its handler, NULL when no handler caught
	 * the crash (every core stored before) */
	"ALTER TABLE frames ADD COLUMN role TEXT;"
	"ALTER TABLE task_frames ADD COLUMN role TEXT;"
	"ALTER TABLE cores ADD COLUMN caught_signal INTEGER;"
	"ALTER TABLE cores ADD COLUMN caught_signal_name TEXT;"
	"ALTER TABLE cores ADD COLUMN caught_code INTEGER;"
	"ALTER TABLE cores ADD COLUMN caught_code_name TEXT;"
	"ALTER TABLE cores ADD COLUMN caught_address INTEGER;"
	"ALTER TABLE cores ADD COLUMN handled_by TEXT;"
	"ALTER TABLE cores ADD COLUMN handler_action TEXT;",
	/* 9: goroutines (DESIGN.md "Go programs"): the runtime's own states (a
	 * CHECK constraint, so tasks is rebuilt as in 5), where each was
	 * created, how long it has waited, whether it is locked to its thread;
	 * a crashing thread's goroutine is already in its frames, so
	 * crash_stacks splices bthreads only; a Go program's panic or fatal
	 * error on cores (its core's signal is always the runtime's SIGABRT,
	 * so resign needs the panic's to sign as the analysis did) */
	"PRAGMA legacy_alter_table = ON;"
	"DROP VIEW crash_stacks;"
	"CREATE TABLE tasks_new ("
	"  core_id INTEGER NOT NULL REFERENCES cores(id) ON DELETE CASCADE,"
	"  idx INTEGER NOT NULL,"
	"  runtime TEXT NOT NULL,"
	"  task_id INTEGER NOT NULL,"
	"  state TEXT NOT NULL CHECK (state IN ('running', 'ready', 'suspended', 'created',"
	"    'runnable', 'syscall', 'waiting', 'preempted', 'idle')),"
	"  wait_kind TEXT,"
	"  wait_address INTEGER,"
	"  wait_target INTEGER,"
	"  tid INTEGER,"
	"  fn TEXT,"
	"  fn_address INTEGER,"
	"  address INTEGER NOT NULL,"
	"  nframes INTEGER NOT NULL,"
	"  unwind_error TEXT,"
	"  created_by TEXT,"
	"  created_file TEXT,"
	"  created_line INTEGER,"
	"  wait_since INTEGER,"
	"  locked INTEGER NOT NULL DEFAULT 0,"
	"  PRIMARY KEY (core_id, idx)) WITHOUT ROWID;"
	"INSERT INTO tasks_new (core_id, idx, runtime, task_id, state, wait_kind, wait_address,"
	"  wait_target, tid, fn, fn_address, address, nframes, unwind_error)"
	"  SELECT core_id, idx, runtime, task_id, state, wait_kind, wait_address, wait_target, tid,"
	"         fn, fn_address, address, nframes, unwind_error FROM tasks;"
	"DROP TABLE tasks;"
	"ALTER TABLE tasks_new RENAME TO tasks;"
	"CREATE INDEX tasks_state ON tasks(core_id, state);"
	"CREATE VIEW crash_stacks AS"
	"  SELECT c.id AS core_id, c.path AS core, c.signature_hash, f.idx AS frame, f.kind,"
	"         printf('0x%x', f.pc) AS pc, f.function, f.file, f.line, f.module, f.inline_depth,"
	"         NULL AS runtime, NULL AS detail"
	"  FROM cores c"
	"  JOIN threads t ON t.core_id = c.id AND t.crashing"
	"  JOIN tasks k ON k.core_id = c.id AND k.state = 'running' AND k.tid = t.tid"
	"    AND k.runtime <> 'go'"
	"  JOIN task_frames f ON f.core_id = c.id AND f.task_idx = k.idx"
	"  UNION ALL"
	"  SELECT c.id, c.path, c.signature_hash,"
	"         f.idx + coalesce((SELECT k.nframes FROM tasks k WHERE k.core_id = c.id"
	"                           AND k.state = 'running' AND k.tid = t.tid"
	"                           AND k.runtime <> 'go'), 0),"
	"         f.kind, CASE WHEN f.pc IS NOT NULL THEN printf('0x%x', f.pc) END, f.function,"
	"         f.file, f.line, f.module, f.inline_depth, f.runtime, f.detail"
	"  FROM cores c"
	"  JOIN threads t ON t.core_id = c.id AND t.crashing"
	"  JOIN frames f ON f.core_id = c.id AND f.thread_idx = t.idx;"
	"PRAGMA legacy_alter_table = OFF;"
	"ALTER TABLE cores ADD COLUMN go_crash TEXT;"
	"ALTER TABLE cores ADD COLUMN go_signal INTEGER;"
	"ALTER TABLE cores ADD COLUMN go_signal_name TEXT;"
	"ALTER TABLE cores ADD COLUMN go_message TEXT;",
	/* 10: a crash's time is crashed_at, else the core file's modification
	 * time (file_mtime), never the ingest time; what the served pages read
	 * over many cores kept small: bucket_days (the cores per bucket, program,
	 * build, architecture, cause and day, kept by triggers so any writer
	 * keeps it), search_terms (the names of each core's frames) and
	 * search_names (every name a search can match, few) */
	"ALTER TABLE cores ADD COLUMN file_mtime TEXT;"
	"CREATE INDEX cores_seen ON cores(signature_hash, coalesce(crashed_at, file_mtime));"
	"CREATE INDEX cores_cause_summary ON cores(cause_summary);"
	"CREATE TABLE bucket_days ("
	"  signature_hash TEXT NOT NULL,"
	"  executable TEXT NOT NULL,"
	"  build_id TEXT NOT NULL,"
	"  arch TEXT NOT NULL,"
	"  cause_kind TEXT NOT NULL,"
	"  day TEXT NOT NULL,"
	"  signature TEXT,"
	"  cores INTEGER NOT NULL,"
	"  first_at TEXT,"
	"  last_at TEXT,"
	"  PRIMARY KEY (signature_hash, executable, build_id, arch, cause_kind, day)) WITHOUT ROWID;"
	"INSERT INTO bucket_days"
	BUCKET_DAYS_ROW
	"  FROM cores GROUP BY 1, 2, 3, 4, 5, 6;"
	"CREATE TABLE search_terms ("
	"  name TEXT NOT NULL,"
	"  core_id INTEGER NOT NULL,"
	"  PRIMARY KEY (name, core_id)) WITHOUT ROWID;"
	"INSERT OR IGNORE INTO search_terms"
	"  SELECT function, core_id FROM frames WHERE function IS NOT NULL"
	"  UNION SELECT module, core_id FROM frames WHERE module IS NOT NULL"
	"  UNION SELECT file, core_id FROM frames WHERE file IS NOT NULL"
	"  UNION SELECT function, core_id FROM task_frames WHERE function IS NOT NULL"
	"  UNION SELECT module, core_id FROM task_frames WHERE module IS NOT NULL"
	"  UNION SELECT file, core_id FROM task_frames WHERE file IS NOT NULL;"
	"CREATE TABLE search_names (name TEXT PRIMARY KEY) WITHOUT ROWID;"
	"INSERT OR IGNORE INTO search_names"
	"  SELECT DISTINCT name FROM search_terms"
	"  UNION SELECT cause_summary FROM cores WHERE cause_summary IS NOT NULL;"
	/* a core's group of bucket_days: one more, or counted again */
	"CREATE TRIGGER cores_bucket_add AFTER INSERT ON cores BEGIN"
	"  INSERT INTO bucket_days VALUES (ifnull(NEW.signature_hash, ''), ifnull(NEW.executable, ''),"
	"    ifnull(NEW.build_id, ''), NEW.arch, ifnull(NEW.cause_kind, ''),"
	"    ifnull(substr(coalesce(NEW.crashed_at, NEW.file_mtime), 1, 10), ''), NEW.signature, 1,"
	"    coalesce(NEW.crashed_at, NEW.file_mtime), coalesce(NEW.crashed_at, NEW.file_mtime))"
	"  ON CONFLICT DO UPDATE SET cores = cores + 1, signature = excluded.signature,"
	"    first_at = min(first_at, excluded.first_at), last_at = max(last_at, excluded.last_at);"
	"  INSERT OR IGNORE INTO search_names SELECT NEW.cause_summary WHERE NEW.cause_summary IS NOT NULL;"
	"END;"
	"CREATE TRIGGER cores_bucket_drop AFTER DELETE ON cores BEGIN"
	BUCKET_DAYS_RECOUNT("OLD")
	"  DELETE FROM search_terms WHERE core_id = OLD.id;"
	"END;"
	/* an update that moves a core (resign) is a delete and an insert */
	"CREATE TRIGGER cores_bucket_move AFTER UPDATE OF signature_hash, signature, executable,"
	"  build_id, arch, cause_kind, cause_summary, crashed_at, file_mtime ON cores"
	"  WHEN OLD.signature_hash IS NOT NEW.signature_hash OR OLD.signature IS NOT NEW.signature"
	"    OR OLD.executable IS NOT NEW.executable OR OLD.build_id IS NOT NEW.build_id"
	"    OR OLD.arch IS NOT NEW.arch OR OLD.cause_kind IS NOT NEW.cause_kind"
	"    OR OLD.cause_summary IS NOT NEW.cause_summary OR OLD.crashed_at IS NOT NEW.crashed_at"
	"    OR OLD.file_mtime IS NOT NEW.file_mtime BEGIN"
	BUCKET_DAYS_RECOUNT("OLD")
	BUCKET_DAYS_RECOUNT("NEW")
	"  INSERT OR IGNORE INTO search_names SELECT NEW.cause_summary WHERE NEW.cause_summary IS NOT NULL;"
	"END;"
	"CREATE TRIGGER frames_search AFTER INSERT ON frames BEGIN"
	"  INSERT OR IGNORE INTO search_terms SELECT v, NEW.core_id FROM (SELECT NEW.function AS v"
	"    UNION SELECT NEW.module UNION SELECT NEW.file) WHERE v IS NOT NULL;"
	"END;"
	"CREATE TRIGGER task_frames_search AFTER INSERT ON task_frames BEGIN"
	"  INSERT OR IGNORE INTO search_terms SELECT v, NEW.core_id FROM (SELECT NEW.function AS v"
	"    UNION SELECT NEW.module UNION SELECT NEW.file) WHERE v IS NOT NULL;"
	"END;"
	"CREATE TRIGGER search_terms_name AFTER INSERT ON search_terms BEGIN"
	"  INSERT OR IGNORE INTO search_names VALUES (NEW.name);"
	"END;"
	"DROP VIEW IF EXISTS top_signatures;"
	"CREATE VIEW top_signatures AS"
	"  WITH seen AS MATERIALIZED ("
	"    SELECT id, path, signature_hash, signature, build_id,"
	"           coalesce(crashed_at, file_mtime) AS seen_at,"
	"           replace(executable, rtrim(executable, replace(executable, '/', '')), '')"
	"             AS program FROM cores),"
	"  builds AS MATERIALIZED ("
	"    SELECT program, build_id, min(seen_at) AS first_at FROM seen"
	"    WHERE build_id IS NOT NULL GROUP BY program, build_id),"
	"  bucket_builds AS MATERIALIZED ("
	"    SELECT signature_hash, build_id, min(seen_at) AS first_at FROM seen"
	"    WHERE build_id IS NOT NULL GROUP BY signature_hash, build_id),"
	"  newest AS MATERIALIZED ("
	"    SELECT b.program, b.build_id FROM builds b"
	"    WHERE b.first_at IS (SELECT max(x.first_at) FROM builds x WHERE x.program IS b.program)"
	"      AND (SELECT count(*) FROM builds x WHERE x.program IS b.program) > 1)"
	"  SELECT s.signature_hash, s.signature, count(*) AS cores,"
	"         min(s.seen_at) AS first_seen, max(s.seen_at) AS last_seen,"
	"         coalesce(sum(julianday(s.seen_at) >= julianday('now', '-7 days')), 0) AS last_7_days,"
	"         (SELECT group_concat(g.build_id, ' ') FROM ("
	"            SELECT x.build_id FROM bucket_builds x WHERE x.signature_hash IS s.signature_hash"
	"            ORDER BY x.first_at, x.build_id) g) AS build_ids,"
	"         min(EXISTS (SELECT 1 FROM newest n WHERE n.program IS s.program"
	"                     AND n.build_id = s.build_id)) AS new,"
	"         (SELECT e.path FROM cores e WHERE e.signature_hash IS s.signature_hash"
	"          ORDER BY coalesce(e.crashed_at, e.file_mtime) DESC, e.id DESC LIMIT 1)"
	"           AS example_core"
	"  FROM seen s GROUP BY s.signature_hash"
	"  ORDER BY cores DESC, last_seen DESC, s.signature_hash;",
	/* 11: the cores newest first by index (a broad search walks them and
	 * stops at the page's newest matching cores) */
	"CREATE INDEX cores_seen_at ON cores(coalesce(crashed_at, file_mtime), id);",
	/* 12: term sets (reports/store_rows.h) instead of search_terms: a
	 * search reads the sets holding a name (term_names) and their cores
	 * per bucket and day (set_days, kept by triggers), never each core
	 * holding it; the names of cores already stored taken from their rows */
	"ALTER TABLE cores ADD COLUMN term_set TEXT;"
	"CREATE INDEX cores_term_set ON cores(term_set, signature_hash, coalesce(crashed_at, file_mtime));"
	"CREATE TABLE term_names ("
	"  name TEXT NOT NULL,"
	"  term_set TEXT NOT NULL,"
	"  PRIMARY KEY (name, term_set)) WITHOUT ROWID;"
	"CREATE TABLE set_days ("
	"  term_set TEXT NOT NULL,"
	"  signature_hash TEXT NOT NULL,"
	"  executable TEXT NOT NULL,"
	"  build_id TEXT NOT NULL,"
	"  arch TEXT NOT NULL,"
	"  cause_kind TEXT NOT NULL,"
	"  day TEXT NOT NULL,"
	"  cores INTEGER NOT NULL,"
	"  last_at TEXT,"
	"  PRIMARY KEY (term_set, signature_hash, executable, build_id, arch, cause_kind, day))"
	"  WITHOUT ROWID;"
	"CREATE TEMP TABLE core_sets (core_id INTEGER PRIMARY KEY, term_set TEXT);"
	"INSERT INTO core_sets SELECT core_id, asyncore_term_set(name)"
	"  FROM (" STORED_CORE_TERMS ") GROUP BY core_id;"
	"UPDATE cores SET term_set = (SELECT s.term_set FROM core_sets s WHERE s.core_id = cores.id);"
	"INSERT OR IGNORE INTO term_names SELECT DISTINCT t.name, c.term_set"
	"  FROM (" STORED_CORE_TERMS ") t JOIN cores c ON c.id = t.core_id;"
	"DROP TABLE core_sets;"
	"INSERT INTO set_days"
	SET_DAYS_ROW
	"  FROM cores WHERE term_set IS NOT NULL GROUP BY 1, 2, 3, 4, 5, 6, 7;"
	"DROP TRIGGER frames_search;"
	"DROP TRIGGER task_frames_search;"
	"DROP TRIGGER search_terms_name;"
	"DROP TRIGGER cores_bucket_drop;"
	"DROP TABLE search_terms;"
	"CREATE TRIGGER cores_bucket_drop AFTER DELETE ON cores BEGIN"
	BUCKET_DAYS_RECOUNT("OLD")
	"END;"
	"CREATE TRIGGER term_names_name AFTER INSERT ON term_names BEGIN"
	"  INSERT OR IGNORE INTO search_names VALUES (NEW.name);"
	"END;"
	"CREATE TRIGGER cores_set_add AFTER INSERT ON cores WHEN NEW.term_set IS NOT NULL BEGIN"
	"  INSERT INTO set_days VALUES (NEW.term_set, ifnull(NEW.signature_hash, ''),"
	"    ifnull(NEW.executable, ''), ifnull(NEW.build_id, ''), NEW.arch, ifnull(NEW.cause_kind, ''),"
	"    ifnull(substr(" SEEN("NEW.") ", 1, 10), ''), 1, " SEEN("NEW.") ")"
	"  ON CONFLICT DO UPDATE SET cores = cores + 1, last_at = max(last_at, excluded.last_at);"
	"END;"
	"CREATE TRIGGER cores_set_drop AFTER DELETE ON cores WHEN OLD.term_set IS NOT NULL BEGIN"
	SET_DAYS_RECOUNT("OLD")
	"END;"
	"CREATE TRIGGER cores_set_move AFTER UPDATE OF term_set, signature_hash, executable, build_id,"
	"  arch, cause_kind, crashed_at, file_mtime ON cores"
	"  WHEN OLD.term_set IS NOT NEW.term_set OR OLD.signature_hash IS NOT NEW.signature_hash"
	"    OR OLD.executable IS NOT NEW.executable OR OLD.build_id IS NOT NEW.build_id"
	"    OR OLD.arch IS NOT NEW.arch OR OLD.cause_kind IS NOT NEW.cause_kind"
	"    OR OLD.crashed_at IS NOT NEW.crashed_at OR OLD.file_mtime IS NOT NEW.file_mtime BEGIN"
	SET_DAYS_RECOUNT("OLD")
	SET_DAYS_RECOUNT("NEW")
	"END;",
};

const char *rep_store_migration(int version)
{
	size_t n = sizeof(rep_migrations) / sizeof(rep_migrations[0]);
	return version >= 1 && (size_t)version <= n ? rep_migrations[version - 1] : NULL;
}

enum {
	Q_HAS, Q_CORE, Q_MODULE, Q_THREAD, Q_FRAME, Q_ROOT, Q_SUSPENDED, Q_SFRAME, Q_RECORDER,
	Q_EVENT, Q_WARNING, Q_CLEAR_ERROR, Q_ERROR, Q_TASK, Q_TFRAME, Q_TERM, Q_SET_STORED, Q_COUNT
};

static const char *const rep_queries[Q_COUNT] = {
	[Q_HAS] = "SELECT 1 FROM cores WHERE fingerprint = ?1",
	[Q_CORE] = "INSERT INTO cores (fingerprint, sha256, path, file_size, size, crashed_at,"
		   " analysed_at, analyzer_version, executable, build_id, pid, uid, signal, signal_name,"
		   " code, code_name, fault_address, crashing_tid, abort_message, signature,"
		   " signature_hash, async_key, nthreads, nframes, nwarnings, boot_id, coredump_uid,"
		   " unit, cmdline, cause_kind, cause_summary, arch, caught_signal, caught_signal_name,"
		   " caught_code, caught_code_name, caught_address, handled_by, handler_action, go_crash,"
		   " go_signal, go_signal_name, go_message, file_mtime, term_set) VALUES"
		   " (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,"
		   " ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36,"
		   " ?37, ?38, ?39, ?40, ?41, ?42, ?43, ?44, ?45)"
		   " ON CONFLICT (fingerprint) DO NOTHING",
	[Q_MODULE] = "INSERT INTO modules VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[Q_THREAD] = "INSERT INTO threads VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
	[Q_FRAME] = "INSERT INTO frames (core_id, thread_idx, idx, kind, pc, function,"
		    " function_offset, module, module_offset, file, line, inlined, inline_depth,"
		    " tailcall, display, args, activation, cfa, seam, role, runtime, detail) VALUES (?1,"
		    " ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,"
		    " ?20, ?21, ?22)",
	[Q_ROOT] = "INSERT INTO async_roots VALUES (?1, ?2, ?3, ?4)",
	[Q_SUSPENDED] = "INSERT INTO suspended VALUES (?1, ?2, ?3, ?4)",
	[Q_SFRAME] = "INSERT INTO suspended_frames (core_id, chain_idx, idx, kind, pc, function,"
		     " function_offset, module, module_offset, file, line, inlined, inline_depth,"
		     " tailcall, display, args) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
		     " ?12, ?13, ?14, ?15, ?16)",
	[Q_RECORDER] = "INSERT INTO recorders VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
		       " ?12, ?13, ?14)",
	[Q_EVENT] = "INSERT INTO recorder_events VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,"
		    " ?11, ?12)",
	[Q_WARNING] = "INSERT INTO warnings VALUES (?1, ?2, ?3)",
	[Q_CLEAR_ERROR] = "DELETE FROM ingest_errors WHERE fingerprint = ?1 OR ident = 'path:' || ?2",
	[Q_TASK] = "INSERT INTO tasks (core_id, idx, runtime, task_id, state, wait_kind, wait_address,"
		   " wait_target, tid, fn, fn_address, address, nframes, unwind_error, created_by,"
		   " created_file, created_line, wait_since, locked) VALUES (?1, ?2, ?3, ?4, ?5, ?6,"
		   " ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)",
	[Q_TFRAME] = "INSERT INTO task_frames (core_id, task_idx, idx, kind, pc, function,"
		     " function_offset, module, module_offset, file, line, inlined, inline_depth,"
		     " tailcall, display, args, activation, cfa, seam, role) VALUES (?1, ?2, ?3, ?4, ?5,"
		     " ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
	[Q_TERM] = "INSERT OR IGNORE INTO term_names VALUES (?1, ?2)",
	/* a set some core holds has its names stored with that core */
	[Q_SET_STORED] = "SELECT 1 FROM cores WHERE term_set = ?1 LIMIT 1",
	[Q_ERROR] = "INSERT INTO ingest_errors (ident, fingerprint, path, size, reason, attempts,"
		    " first_at, last_at) VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?6)"
		    " ON CONFLICT (ident) DO UPDATE SET path = excluded.path, reason = excluded.reason,"
		    " attempts = attempts + 1, last_at = excluded.last_at",
};

/* The statements over a frames table that resign runs once per owner
 * (thread, task, chain), prepared on first use and kept with the store. */
enum { FQ_OWNERS, FQ_READ, FQ_DELETE, FQ_COUNT_FRAMES, FQ_COUNT };

struct rep_sqlite {
	sqlite3 *db;
	sqlite3_stmt *q[Q_COUNT];
	sqlite3_stmt *frames_q[REP_FRAMES_TABLES][FQ_COUNT];
	/* FQ_READ's columns as frame fields, looked up when it was prepared */
	enum rep_frame_field *read_fields[REP_FRAMES_TABLES];
};

static bool is_busy(int rc)
{
	rc &= 0xff;
	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

/* Run SQL, retrying while another connection holds the lock (the busy
 * timeout already waited; this covers the cases SQLite does not wait for,
 * such as switching a fresh database to WAL). */
static int exec_retry(sqlite3 *db, const char *sql)
{
	time_t deadline = time(NULL) + REP_RETRY_SECONDS;
	unsigned delay_us = 1000;
	for (;;) {
		int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
		if (!is_busy(rc) || time(NULL) > deadline)
			return rc;
		struct timespec now;   /* jitter, so waiting writers do not retry in step */
		clock_gettime(CLOCK_MONOTONIC, &now);
		usleep(delay_us + (unsigned)(now.tv_nsec % 1000));
		if (delay_us < 50000)
			delay_us *= 2;
	}
}

static void set_why(char *why, size_t whylen, const char *what, sqlite3 *db)
{
	snprintf(why, whylen, "%s: %s", what, db ? sqlite3_errmsg(db) : "out of memory");
}

/* asyncore_term_set(name): the aggregate giving rep_term_set_key() of its
 * names (any order, repeats and empty ones ignored), NULL for none: the
 * term sets of stored rows (schema 12's migration, resign). */
struct term_set_agg {
	char **names;
	size_t n, cap;
};

static void term_set_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	struct term_set_agg *a = sqlite3_aggregate_context(ctx, sizeof(*a));
	const char *name = (const char *)sqlite3_value_text(argv[0]);
	if (!a) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (!name || !name[0])
		return;
	char *copy = strdup(name);
	char **slot = copy ? base_array_push(&a->names, &a->n, &a->cap, sizeof(*slot)) : NULL;
	if (!slot) {
		free(copy);
		sqlite3_result_error_nomem(ctx);
		return;
	}
	*slot = copy;
}

static void term_set_final(sqlite3_context *ctx)
{
	struct term_set_agg *a = sqlite3_aggregate_context(ctx, 0);
	size_t n = a ? a->n : 0;
	const char **v = n ? malloc(n * sizeof(*v)) : NULL;
	char key[REP_TERM_SET_KEY];
	if (n && !v)
		sqlite3_result_error_nomem(ctx);
	for (size_t i = 0; v && i < n; i++)
		v[i] = a->names[i];
	if (v) {
		rep_terms_unique(v, &n);
		rep_term_set_key(v, n, key);
		sqlite3_result_text(ctx, key, -1, SQLITE_TRANSIENT);
	}
	free(v);
	for (size_t i = 0; a && i < a->n; i++)
		free(a->names[i]);
	if (a)
		free(a->names);
}

/* Apply the migrations this database lacks, in one transaction. */
static int migrate(sqlite3 *db, char *why, size_t whylen)
{
	sqlite3_stmt *st = NULL;
	int version = -1, rc = -1;
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if (version == REP_SCHEMA_VERSION)
		return 0;   /* the usual case: no lock needed */
	version = -1;
	if (exec_retry(db, "BEGIN IMMEDIATE") != SQLITE_OK) {
		set_why(why, whylen, "cannot lock the database", db);
		return -1;
	}
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (version < 0) {
		set_why(why, whylen, "cannot read the schema version", db);
		goto out;
	}
	if (version > REP_SCHEMA_VERSION) {
		snprintf(why, whylen, "database schema version %d is newer than this asyncore's (%d)",
			 version, REP_SCHEMA_VERSION);
		goto out;
	}
	for (int v = version; v < REP_SCHEMA_VERSION; v++) {
		char pragma[64];
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v + 1);
		if (sqlite3_exec(db, rep_migrations[v], NULL, NULL, NULL) != SQLITE_OK ||
		    sqlite3_exec(db, pragma, NULL, NULL, NULL) != SQLITE_OK) {
			char what[64];
			snprintf(what, sizeof(what), "migration to schema version %d failed", v + 1);
			set_why(why, whylen, what, db);
			goto out;
		}
	}
	rc = 0;
out:
	if (rc == 0 && exec_retry(db, "COMMIT") != SQLITE_OK) {
		set_why(why, whylen, "cannot commit the schema", db);
		rc = -1;
	}
	if (rc != 0)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int rep_sqlite_open(const char *path, struct rep_sqlite **out, char *why, size_t whylen)
{
	struct rep_sqlite *st = calloc(1, sizeof(*st));
	if (!st) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
	if (sqlite3_open_v2(path, &st->db, flags, NULL) != SQLITE_OK) {
		set_why(why, whylen, path, st->db);
		goto fail;
	}
	sqlite3_busy_timeout(st->db, REP_BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(st->db, 1);
	/* WAL: readers never block the writer; NORMAL sync keeps every commit
	 * atomic (a crash loses at most the last commits, never half of one).
	 * A core's commit touches some 30 pages (its rows and every index's);
	 * checkpointing every 8,000 pages instead of SQLite's 1,000 copies a
	 * page that many cores touched once per 250 cores, not per 30. */
	if (exec_retry(st->db, "PRAGMA journal_mode = WAL") != SQLITE_OK ||
	    exec_retry(st->db, "PRAGMA synchronous = NORMAL") != SQLITE_OK ||
	    exec_retry(st->db, "PRAGMA wal_autocheckpoint = 8000") != SQLITE_OK ||
	    exec_retry(st->db, "PRAGMA foreign_keys = ON") != SQLITE_OK) {
		set_why(why, whylen, path, st->db);
		goto fail;
	}
	if (sqlite3_create_function_v2(st->db, "asyncore_term_set", 1, SQLITE_UTF8, NULL, NULL,
				       term_set_step, term_set_final, NULL) != SQLITE_OK) {
		set_why(why, whylen, path, st->db);
		goto fail;
	}
	if (migrate(st->db, why, whylen) != 0)
		goto fail;
	for (int i = 0; i < Q_COUNT; i++) {
		if (sqlite3_prepare_v3(st->db, rep_queries[i], -1, SQLITE_PREPARE_PERSISTENT, &st->q[i],
				       NULL) != SQLITE_OK) {
			set_why(why, whylen, "preparing statements", st->db);
			goto fail;
		}
	}
	*out = st;
	return 0;
fail:
	rep_sqlite_close(st);
	return -1;
}

void rep_sqlite_close(struct rep_sqlite *st)
{
	if (!st)
		return;
	for (int i = 0; i < Q_COUNT; i++)
		sqlite3_finalize(st->q[i]);
	for (int t = 0; t < REP_FRAMES_TABLES; t++) {
		for (int i = 0; i < FQ_COUNT; i++)
			sqlite3_finalize(st->frames_q[t][i]);
		free(st->read_fields[t]);
	}
	sqlite3_close(st->db);
	free(st);
}

/* One column value of an insert: SQL NULL, an integer (64-bit addresses
 * as their two's-complement int64) or borrowed text. */
struct rep_value {
	enum { V_NULL, V_INT, V_TEXT } type;
	int64_t i;
	const char *s;
};

static struct rep_value v_int(int64_t i)
{
	return (struct rep_value){.type = V_INT, .i = i};
}

static struct rep_value v_u64(uint64_t u)
{
	return v_int((int64_t)u);
}

static struct rep_value v_opt(bool known, uint64_t u)
{
	return known ? v_u64(u) : (struct rep_value){.type = V_NULL};
}

static struct rep_value v_text(const char *s)
{
	return s ? (struct rep_value){.type = V_TEXT, .s = s} : (struct rep_value){.type = V_NULL};
}

#define NVALUES(a) (sizeof(a) / sizeof((a)[0]))

/* Bind text from a core or a binary as valid UTF-8 (reports/bytes.h). */
static int bind_text(sqlite3_stmt *q, int col, const char *s)
{
	char *owned;
	const char *valid = rep_utf8(s, &owned);
	if (!valid)
		return SQLITE_NOMEM;
	return sqlite3_bind_text(q, col, valid, -1, owned ? free : SQLITE_STATIC);
}

/* The one bind-and-step of every insert: bind V[0..N) to Q's parameters
 * 1..N, run it, reset it.  SQLITE_DONE on success. */
static int insert_row(sqlite3_stmt *q, const struct rep_value *v, size_t n)
{
	int rc = SQLITE_OK;
	for (size_t k = 0; k < n && rc == SQLITE_OK; k++) {
		int col = (int)k + 1;
		if (v[k].type == V_INT)
			rc = sqlite3_bind_int64(q, col, v[k].i);
		else if (v[k].type == V_TEXT)
			rc = bind_text(q, col, v[k].s);
		else
			rc = sqlite3_bind_null(q, col);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_step(q);
	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	return rc;
}

/* AN's cores row, in term set TERM_SET (NULL: it holds no names). */
static int insert_core(struct rep_sqlite *st, const struct analysis *an, const char *term_set)
{
	char now[32], mtime[32];
	rep_store_time((int64_t)time(NULL), now);
	const struct rep_caught_columns c = rep_core_caught(an);
	const struct rep_go_columns g = rep_core_go(an);
	const struct rep_value v[] = {
		v_text(an->core_fingerprint), v_text(an->core_sha256), v_text(an->core_path),
		v_u64(an->core_file_size), v_u64(an->core_size), v_text(an->crashed_at), v_text(now),
		v_text(AN_VERSION), v_text(an->executable), v_text(an->build_id),
		v_opt(an->has_pid, (uint64_t)(int64_t)an->pid), v_opt(an->has_uid, an->uid),
		v_opt(an->has_signal, (uint64_t)(int64_t)an->signo), v_text(an->signal_name),
		v_opt(an->has_code, (uint64_t)(int64_t)an->code), v_text(an->code_name),
		v_opt(an->has_fault_address, an->fault_address), v_int(an->crashing_tid),
		v_text(an->abort_message), v_text(an->signature), v_text(an->signature_hash),
		v_opt(an->async_key_found, an->async_key), v_u64(an->nthreads),
		v_u64(rep_total_frames(an)), v_u64(an->nwarnings), v_text(an->boot_id),
		v_opt(an->has_coredump_uid, an->coredump_uid), v_text(an->unit), v_text(an->cmdline),
		v_text(an->cause.summary ? an_cause_kind_name(an->cause.kind) : NULL),
		v_text(an->cause.summary), v_text(rep_core_arch(an)),
		v_opt(c.has_signal, (uint64_t)c.signal), v_text(c.signal_name),
		v_opt(c.has_code, (uint64_t)c.code), v_text(c.code_name),
		v_opt(c.has_address, c.address), v_text(c.handled_by), v_text(c.action),
		v_text(g.crash), v_opt(g.has_signal, (uint64_t)g.signal), v_text(g.signal_name),
		v_text(g.message), v_text(rep_core_file_mtime(an, mtime)), v_text(term_set),
	};
	return insert_row(st->q[Q_CORE], v, NVALUES(v));
}

/* A frame of a thread, a task or a suspended chain: Q's statement takes
 * the leading columns of the list below (a suspended chain's frames have no
 * unwinder columns and no role, only a thread's have runtime ones). */
static int insert_frame(sqlite3_stmt *q, int64_t core, size_t owner, size_t idx,
			const struct an_frame *f)
{
	char *args = rep_frame_args_json(f);
	if (f->has_args && !args)
		return SQLITE_NOMEM;
	const struct rep_value v[] = {
		v_int(core), v_u64(owner), v_u64(idx),
		v_text(an_frame_kind_name(f->kind)), v_opt(!AN_FRAME_IS_RUNTIME(f), f->pc),
		v_text(f->function), v_opt(f->has_offset, f->offset), v_text(f->module),
		v_opt(f->has_module_offset, f->module_offset), v_text(f->file),
		v_opt(f->line > 0, (uint64_t)f->line), v_int(f->inlined), v_int(f->inline_depth),
		v_int(f->tailcall), v_text(f->display), v_text(args),
		v_int(f->activation), v_opt(f->cfa != 0, f->cfa), v_int(f->seam),
		v_text(an_frame_role_name(f->role)), v_text(f->runtime), v_text(f->detail),
	};
	size_t ncolumns = (size_t)sqlite3_bind_parameter_count(q);
	int rc = insert_row(q, v, ncolumns < NVALUES(v) ? ncolumns : NVALUES(v));
	free(args);
	return rc;
}

/* Frames keep their true index: past a recursion's run (GAP; NULL: none)
 * it jumps, which is how a stored core still says where the run was. */
static int insert_frames(sqlite3_stmt *q, int64_t core, size_t owner, const struct an_frame *f,
			 size_t n, const struct an_index_gap *gap)
{
	for (size_t j = 0; j < n; j++)
		if (insert_frame(q, core, owner, an_index_gap_index(gap, j), &f[j]) != SQLITE_DONE)
			return -1;
	return 0;
}

/* Each frames table with its owner column, its owners' table and the
 * statement that inserts into it. */
static const struct {
	const char *table, *owner, *owners;
	int insert;
} frame_tables[REP_FRAMES_TABLES] = {
	[REP_FRAMES_THREAD] = {"frames", "thread_idx", "threads", Q_FRAME},
	[REP_FRAMES_TASK] = {"task_frames", "task_idx", "tasks", Q_TFRAME},
	[REP_FRAMES_CHAIN] = {"suspended_frames", "chain_idx", "suspended", Q_SFRAME},
};

/* The frames-table statement WHICH of table T, prepared on first use from
 * its text, whose %s are the names of the table, its owner column and its
 * owners' table (in that order, as %1$s %2$s %3$s); reset, ready to bind.
 * NULL on error. */
static sqlite3_stmt *frames_sql(struct rep_sqlite *st, enum rep_frames_table t, int which)
{
	static const char *const fmts[FQ_COUNT] = {
		[FQ_OWNERS] = "SELECT idx FROM %3$s WHERE core_id = ?1 ORDER BY idx",
		[FQ_READ] = "SELECT * FROM %1$s WHERE core_id = ?1 AND %2$s = ?2 ORDER BY idx",
		[FQ_DELETE] = "DELETE FROM %1$s WHERE core_id = ?1 AND %2$s = ?2",
		[FQ_COUNT_FRAMES] = "UPDATE %3$s SET nframes = ?3 WHERE core_id = ?1 AND idx = ?2",
	};
	sqlite3_stmt **q = &st->frames_q[t][which];
	char *sql = NULL;
	if (*q) {
		sqlite3_reset(*q);
		sqlite3_clear_bindings(*q);
		return *q;
	}
	if (asprintf(&sql, fmts[which], frame_tables[t].table, frame_tables[t].owner,
		     frame_tables[t].owners) >= 0)
		sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, q, NULL);
	free(sql);
	return *q;
}

int rep_sqlite_frame_owners(struct rep_sqlite *st, enum rep_frames_table t, int64_t core,
			    int64_t **owners, size_t *n)
{
	sqlite3_stmt *q = frames_sql(st, t, FQ_OWNERS);
	size_t cap = 0;
	int step = SQLITE_ERROR;
	*owners = NULL;
	*n = 0;
	sqlite3_bind_int64(q, 1, core);
	while (q && (step = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t *o = base_array_push(owners, n, &cap, sizeof(**owners));
		if (!o)
			break;
		*o = sqlite3_column_int64(q, 0);
	}
	sqlite3_reset(q);
	return step == SQLITE_DONE ? 0 : -1;
}

/* The read statement of table T with its columns' fields in *FIELDS. */
static sqlite3_stmt *frames_read_sql(struct rep_sqlite *st, enum rep_frames_table t,
				     const enum rep_frame_field **fields)
{
	sqlite3_stmt *q = frames_sql(st, t, FQ_READ);
	int ncols = q ? sqlite3_column_count(q) : 0;
	if (q && !st->read_fields[t]) {
		st->read_fields[t] = calloc(ncols ? (size_t)ncols : 1, sizeof(*st->read_fields[t]));
		for (int c = 0; st->read_fields[t] && c < ncols; c++)
			st->read_fields[t][c] = rep_frame_field_of(sqlite3_column_name(q, c));
	}
	*fields = st->read_fields[t];
	return *fields ? q : NULL;
}

/* One row of Q (SELECT *) as a frame: every column that is a field. */
static int frame_of_row(sqlite3_stmt *q, const enum rep_frame_field *fields, struct an_frame *f)
{
	for (int c = 0; c < sqlite3_column_count(q); c++) {
		if (fields[c] == REP_FIELD_NONE)
			continue;
		const struct rep_cell v = {sqlite3_column_type(q, c) == SQLITE_NULL,
					   sqlite3_column_int64(q, c),
					   (const char *)sqlite3_column_text(q, c)};
		if (rep_frame_set_field(f, fields[c], &v) != 0)
			return -1;
	}
	return 0;
}

int rep_sqlite_read_frames(struct rep_sqlite *st, enum rep_frames_table t, int64_t core,
			   int64_t owner, struct an_frame **frames, size_t *n,
			   struct an_index_gap *gap)
{
	const enum rep_frame_field *fields = NULL;
	sqlite3_stmt *q = frames_read_sql(st, t, &fields);
	size_t cap = 0;
	int step = SQLITE_ERROR;
	*frames = NULL;
	*n = 0;
	*gap = (struct an_index_gap){0, 0};
	sqlite3_bind_int64(q, 1, core);
	sqlite3_bind_int64(q, 2, owner);
	while (q && (step = sqlite3_step(q)) == SQLITE_ROW) {
		rep_index_gap_note(gap, *n, sqlite3_column_int64(q, REP_FRAME_INDEX_COLUMN));
		struct an_frame *f = base_array_push(frames, n, &cap, sizeof(**frames));
		if (!f || frame_of_row(q, fields, f) != 0) {
			step = SQLITE_NOMEM;
			break;
		}
	}
	sqlite3_reset(q);
	return step == SQLITE_DONE ? 0 : -1;
}

int rep_sqlite_replace_frames(struct rep_sqlite *st, enum rep_frames_table t, int64_t core,
			      int64_t owner, const struct an_frame *frames, size_t n,
			      const struct an_index_gap *gap)
{
	sqlite3_stmt *del = frames_sql(st, t, FQ_DELETE);
	sqlite3_stmt *count = frames_sql(st, t, FQ_COUNT_FRAMES);
	const struct rep_value v[] = {v_int(core), v_int(owner), v_u64(n)};
	return del && count && insert_row(del, v, 2) == SQLITE_DONE &&
	       insert_frames(st->q[frame_tables[t].insert], core, (size_t)owner, frames, n, gap) == 0 &&
	       insert_row(count, v, 3) == SQLITE_DONE ? 0 : -1;
}

int rep_sqlite_retally_terms(struct rep_sqlite *st, int64_t core)
{
	static const char *const sql[] = {
		"UPDATE cores SET term_set = (SELECT asyncore_term_set(name) FROM (" STORED_CORE_TERMS ")"
		" WHERE core_id = ?1) WHERE id = ?1",
		"INSERT OR IGNORE INTO term_names SELECT DISTINCT t.name, c.term_set FROM (" STORED_CORE_TERMS ") t"
		" JOIN cores c ON c.id = t.core_id WHERE t.core_id = ?1",
	};
	for (size_t i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
		sqlite3_stmt *q = NULL;
		int ok = sqlite3_prepare_v2(st->db, sql[i], -1, &q, NULL) == SQLITE_OK &&
			 sqlite3_bind_int64(q, 1, core) == SQLITE_OK && sqlite3_step(q) == SQLITE_DONE;
		sqlite3_finalize(q);
		if (!ok)
			return -1;
	}
	return 0;
}

static int insert_threads(struct rep_sqlite *st, int64_t core, const struct analysis *an)
{
	for (size_t i = 0; i < an->nthreads; i++) {
		const struct an_thread *t = &an->threads[i];
		const struct rep_value v[] = {
			v_int(core), v_u64(i), v_int(t->tid), v_int(t->crashing),
			v_u64(t->pc), v_u64(t->sp), v_u64(t->fp), v_u64(t->tp), v_u64(t->nframes),
			v_text(t->unwind_error), v_opt(t->async_root != 0, t->async_root),
		};
		const struct rep_value root[] = {v_int(core), v_u64(i), v_int(t->tid),
						 v_u64(t->async_root)};
		const struct an_index_gap gap = an_thread_index_gap(t);
		if (insert_row(st->q[Q_THREAD], v, NVALUES(v)) != SQLITE_DONE ||
		    insert_frames(st->q[Q_FRAME], core, i, t->frames, t->nframes, &gap) != 0)
			return -1;
		if (t->async_root && insert_row(st->q[Q_ROOT], root, NVALUES(root)) != SQLITE_DONE)
			return -1;
	}
	return 0;
}

static int insert_modules(struct rep_sqlite *st, int64_t core, const struct analysis *an)
{
	for (size_t i = 0; i < an->nmodules; i++) {
		const struct an_module *m = &an->modules[i];
		const struct rep_value v[] = {v_int(core), v_u64(i), v_text(m->path), v_u64(m->start),
					      v_u64(m->end), v_text(m->build_id), v_text(m->debuginfo)};
		if (insert_row(st->q[Q_MODULE], v, NVALUES(v)) != SQLITE_DONE)
			return -1;
	}
	return 0;
}

static int insert_suspended(struct rep_sqlite *st, int64_t core, const struct analysis *an)
{
	for (size_t i = 0; i < an->nsuspended; i++) {
		const struct an_suspended *s = &an->suspended[i];
		const struct rep_value v[] = {v_int(core), v_u64(i), v_u64(s->leaf), v_u64(s->nframes)};
		if (insert_row(st->q[Q_SUSPENDED], v, NVALUES(v)) != SQLITE_DONE ||
		    insert_frames(st->q[Q_SFRAME], core, i, s->frames, s->nframes, NULL) != 0)
			return -1;
	}
	return 0;
}

static int insert_tasks(struct rep_sqlite *st, int64_t core, const struct analysis *an)
{
	for (size_t i = 0; i < an->ntasks; i++) {
		const struct an_task *t = &an->tasks[i];
		const struct rep_value v[] = {
			v_int(core), v_u64(i), v_text(t->runtime), v_u64(t->id),
			v_text(an_task_state_name(t->state)), v_text(t->wait_kind),
			v_opt(t->has_wait_address, t->wait_address),
			v_opt(t->has_wait_target, t->wait_target),
			v_opt(t->has_tid, (uint64_t)(int64_t)t->tid), v_text(t->fn),
			v_opt(t->fn_address != 0, t->fn_address), v_u64(t->address), v_u64(t->nframes),
			v_text(t->unwind_error), v_text(t->created_by), v_text(t->created_file),
			v_opt(t->created_file && t->created_line > 0, (uint64_t)t->created_line),
			v_opt(t->has_wait_since, t->wait_since), v_int(t->locked),
		};
		if (insert_row(st->q[Q_TASK], v, NVALUES(v)) != SQLITE_DONE ||
		    insert_frames(st->q[Q_TFRAME], core, i, t->frames, t->nframes, NULL) != 0)
			return -1;
	}
	return 0;
}

static int insert_events(struct rep_sqlite *st, int64_t core, size_t r, const struct an_recorder *rec)
{
	char args[REP_EVENT_ARGS_MAX];
	for (size_t i = 0; i < rec->nevents; i++) {
		const struct an_event *e = &rec->events[i];
		rep_event_args_json(e, args, sizeof(args));
		const struct rep_value v[] = {
			v_int(core), v_u64(r), v_u64(i), v_u64(e->order), v_u64(e->timestamp),
			v_text(e->location), v_text(e->function), v_text(e->format), v_text(e->message),
			v_text(args), v_int(e->strings_read), v_int(e->in_flight),
		};
		if (insert_row(st->q[Q_EVENT], v, NVALUES(v)) != SQLITE_DONE)
			return -1;
	}
	return 0;
}

static int insert_recorders(struct rep_sqlite *st, int64_t core, const struct analysis *an)
{
	for (size_t i = 0; i < an->nrecorders; i++) {
		const struct an_recorder *r = &an->recorders[i];
		const struct rep_value v[] = {
			v_int(core), v_u64(i), v_text(r->name), v_text(r->layout), v_u64(r->address),
			v_u64(r->size), v_u64(r->writer), v_u64(r->reader), v_u64(r->commit),
			v_u64(r->overflow), v_u64(r->recovered), v_u64(r->in_flight),
			v_u64(r->overwritten), v_u64(r->nevents),
		};
		if (insert_row(st->q[Q_RECORDER], v, NVALUES(v)) != SQLITE_DONE ||
		    insert_events(st, core, i, r) != 0)
			return -1;
	}
	return 0;
}

static int insert_warnings(struct rep_sqlite *st, int64_t core, const struct analysis *an)
{
	for (size_t i = 0; i < an->nwarnings; i++) {
		const struct rep_value v[] = {v_int(core), v_u64(i),
					      v_text(an->warnings[i] ? an->warnings[i] : "")};
		if (insert_row(st->q[Q_WARNING], v, NVALUES(v)) != SQLITE_DONE)
			return -1;
	}
	return 0;
}

/* Everything below the cores row, inside the open transaction. */
static int insert_children(struct rep_sqlite *st, int64_t core, const struct analysis *an)
{
	/* Its earlier failures: under its fingerprint, or under its path when
	 * it failed before its fingerprint was known. */
	const struct rep_value clear[] = {v_text(an->core_fingerprint), v_text(an->core_path)};
	if (insert_modules(st, core, an) != 0 || insert_threads(st, core, an) != 0 ||
	    insert_suspended(st, core, an) != 0 || insert_tasks(st, core, an) != 0 ||
	    insert_recorders(st, core, an) != 0 ||
	    insert_warnings(st, core, an) != 0)
		return -1;
	return insert_row(st->q[Q_CLEAR_ERROR], clear, NVALUES(clear)) == SQLITE_DONE ? 0 : -1;
}

/* The names of term set KEY, each once in the store: none to write when
 * another core holds the set (STORED). */
static int insert_terms(struct rep_sqlite *st, const char *const *names, size_t n, const char *key,
			bool stored)
{
	for (size_t i = 0; !stored && i < n; i++) {
		const struct rep_value v[] = {v_text(names[i]), v_text(key)};
		if (insert_row(st->q[Q_TERM], v, NVALUES(v)) != SQLITE_DONE)
			return -1;
	}
	return 0;
}

enum rep_write_result rep_sqlite_write(struct rep_sqlite *st, const struct analysis *an, char *why,
				      size_t whylen)
{
	if (exec_retry(st->db, "BEGIN IMMEDIATE") != SQLITE_OK) {
		set_why(why, whylen, "cannot lock the database", st->db);
		return REP_WRITE_FAILED;
	}
	if (!an->core_fingerprint) {
		snprintf(why, whylen, "the analysis has no core fingerprint");
		return REP_WRITE_FAILED;
	}
	const char **names = NULL;
	size_t nnames = 0;
	char key[REP_TERM_SET_KEY];
	if (rep_core_terms(an, &names, &nnames) != 0) {
		snprintf(why, whylen, "out of memory");
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		return REP_WRITE_FAILED;
	}
	rep_term_set_key(names, nnames, key);
	const struct rep_value set[] = {v_text(key)};
	bool stored = nnames == 0 || insert_row(st->q[Q_SET_STORED], set, 1) == SQLITE_ROW;
	if (insert_core(st, an, nnames ? key : NULL) != SQLITE_DONE)
		goto fail;
	if (sqlite3_changes(st->db) == 0) {
		free(names);
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		return REP_WRITE_DUPLICATE;
	}
	if (insert_children(st, sqlite3_last_insert_rowid(st->db), an) != 0 ||
	    insert_terms(st, names, nnames, key, stored) != 0)
		goto fail;
	if (exec_retry(st->db, "COMMIT") != SQLITE_OK)
		goto fail;
	free(names);
	return REP_WRITE_STORED;
fail:
	free(names);
	set_why(why, whylen, "writing the core", st->db);
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return REP_WRITE_FAILED;
}

int rep_sqlite_record_error(struct rep_sqlite *st, const struct rep_core_id *id, const char *reason,
			   char *why, size_t whylen)
{
	sqlite3_stmt *q = st->q[Q_ERROR];
	char now[32], *ident = rep_error_ident(id);
	rep_store_time((int64_t)time(NULL), now);
	if (!ident) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	int rc = -1;
	if (exec_retry(st->db, "BEGIN IMMEDIATE") != SQLITE_OK) {
		set_why(why, whylen, "cannot lock the database", st->db);
		goto out;
	}
	const struct rep_value v[] = {v_text(ident), v_text(id->fingerprint), v_text(id->path),
				      v_opt(id->fingerprint != NULL, id->file_size), v_text(reason),
				      v_text(now)};
	/* Known by its fingerprint now: an error recorded under its path alone
	 * (its worker lost before it was read) is the same core. */
	const struct rep_value by_path[] = {v_text(NULL), v_text(id->path)};
	if ((id->fingerprint &&
	     insert_row(st->q[Q_CLEAR_ERROR], by_path, NVALUES(by_path)) != SQLITE_DONE) ||
	    insert_row(q, v, NVALUES(v)) != SQLITE_DONE || exec_retry(st->db, "COMMIT") != SQLITE_OK) {
		set_why(why, whylen, "recording an ingest error", st->db);
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		goto out;
	}
	rc = 0;
out:
	free(ident);
	return rc;
}

int rep_sqlite_has(struct rep_sqlite *st, const char *fingerprint)
{
	sqlite3_stmt *q = st->q[Q_HAS];
	sqlite3_bind_text(q, 1, fingerprint, -1, SQLITE_STATIC);
	int rc;
	time_t deadline = time(NULL) + REP_RETRY_SECONDS;
	while (is_busy(rc = sqlite3_step(q)) && time(NULL) <= deadline) {
		sqlite3_reset(q);
		usleep(10000);
	}
	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

sqlite3 *rep_sqlite_db(struct rep_sqlite *st)
{
	return st->db;
}

int rep_sqlite_exec(struct rep_sqlite *st, const char *sql)
{
	return exec_retry(st->db, sql);
}

static int ops_has(void *backend, const char *fingerprint)
{
	return rep_sqlite_has(backend, fingerprint);
}

static enum rep_write_result ops_write(void *backend, const struct analysis *an, char *why,
				       size_t whylen)
{
	return rep_sqlite_write(backend, an, why, whylen);
}

static int ops_record_error(void *backend, const struct rep_core_id *id, const char *reason,
			    char *why, size_t whylen)
{
	return rep_sqlite_record_error(backend, id, reason, why, whylen);
}

/* Every core was committed by its own write: nothing is held back. */
static size_t ops_close(void *backend)
{
	rep_sqlite_close(backend);
	return 0;
}

/* Each core and error is written when it is given: nothing is held. */
static void ops_pending(void *backend, size_t *held, size_t *lost)
{
	(void)backend;
	*held = *lost = 0;
}

const struct rep_store_ops rep_sqlite_ops = {ops_has, ops_write, ops_record_error, ops_close,
					     ops_pending};
