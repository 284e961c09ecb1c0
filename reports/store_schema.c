/* The SQLite store's schema (reports/SCHEMA.md): the migrations that take
 * a database from each version to the next, applied by store_sqlite.c. */
#include "store_internal.h"

#include <stddef.h>

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

/* Migrations: entry V-1 takes the schema from version V-1 to V.  Keep this
 * in step with reports/SCHEMA.md; never edit a released entry, add one. */
/* crash_stacks from version 9 on, after its select list: the running
 * task's frames (not a goroutine's), then the crashing thread's. */
#define CRASH_STACKS_FROM_FRAMES \
	"  FROM cores c" \
	"  JOIN threads t ON t.core_id = c.id AND t.crashing" \
	"  JOIN tasks k ON k.core_id = c.id AND k.state = 'running' AND k.tid = t.tid" \
	"    AND k.runtime <> 'go'" \
	"  JOIN task_frames f ON f.core_id = c.id AND f.task_idx = k.idx" \
	"  UNION ALL" \
	"  SELECT c.id, c.path, c.signature_hash," \
	"         f.idx + coalesce((SELECT k.nframes FROM tasks k WHERE k.core_id = c.id" \
	"                           AND k.state = 'running' AND k.tid = t.tid" \
	"                           AND k.runtime <> 'go'), 0)," \
	"         f.kind, CASE WHEN f.pc IS NOT NULL THEN printf('0x%x', f.pc) END, f.function," \
	"         f.file, f.line, f.module, f.inline_depth, f.runtime, f.detail" \
	"  FROM cores c" \
	"  JOIN threads t ON t.core_id = c.id AND t.crashing" \
	"  JOIN frames f ON f.core_id = c.id AND f.thread_idx = t.idx;"

/* top_signatures from version 12 on, up to its example_core column. */
#define TOP_SIGNATURES_TO_EXAMPLE \
	"CREATE VIEW top_signatures AS" \
	"  WITH seen AS MATERIALIZED (" \
	"    SELECT id, path, signature_hash, signature, build_id," \
	"           coalesce(crashed_at, file_mtime) AS seen_at," \
	"           replace(executable, rtrim(executable, replace(executable, '/', '')), '')" \
	"             AS program FROM cores)," \
	"  builds AS MATERIALIZED (" \
	"    SELECT program, build_id, min(seen_at) AS first_at FROM seen" \
	"    WHERE build_id IS NOT NULL GROUP BY program, build_id)," \
	"  bucket_builds AS MATERIALIZED (" \
	"    SELECT signature_hash, build_id, min(seen_at) AS first_at FROM seen" \
	"    WHERE build_id IS NOT NULL GROUP BY signature_hash, build_id)," \
	"  newest AS MATERIALIZED (" \
	"    SELECT b.program, b.build_id FROM builds b" \
	"    WHERE b.first_at IS (SELECT max(x.first_at) FROM builds x WHERE x.program IS b.program)" \
	"      AND (SELECT count(*) FROM builds x WHERE x.program IS b.program) > 1)" \
	"  SELECT s.signature_hash, s.signature, count(*) AS cores," \
	"         min(s.seen_at) AS first_seen, max(s.seen_at) AS last_seen," \
	"         coalesce(sum(julianday(s.seen_at) >= julianday('now', '-7 days')), 0) AS last_7_days," \
	"         (SELECT group_concat(g.build_id, ' ') FROM (" \
	"            SELECT x.build_id FROM bucket_builds x WHERE x.signature_hash IS s.signature_hash" \
	"            ORDER BY x.first_at, x.build_id) g) AS build_ids," \
	"         min(EXISTS (SELECT 1 FROM newest n WHERE n.program IS s.program" \
	"                     AND n.build_id = s.build_id)) AS new," \
	"         (SELECT e.path FROM cores e WHERE e.signature_hash IS s.signature_hash" \
	"          ORDER BY coalesce(e.crashed_at, e.file_mtime) DESC, e.id DESC LIMIT 1)" \
	"           AS example_core"

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
	CRASH_STACKS_FROM_FRAMES
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
	TOP_SIGNATURES_TO_EXAMPLE
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
	/* 13: hangs (DESIGN.md "Hangs"): what each blocked thread and task
	 * waits for (blocked_on), the wait-for graph's cycles (deadlocks and
	 * their members), a task's name; task frames of every kind (asyncio's
	 * script frames: a CHECK constraint and pc NOT NULL, so task_frames is
	 * rebuilt as frames was in 5) with their runtime and detail; top's
	 * hang column (the bucket's most recent core's cause) and hang_waits */
	"PRAGMA legacy_alter_table = ON;"
	"DROP VIEW crash_stacks;"
	"CREATE TABLE task_frames_new ("
	"  core_id INTEGER NOT NULL REFERENCES cores(id) ON DELETE CASCADE,"
	"  task_idx INTEGER NOT NULL,"
	"  idx INTEGER NOT NULL,"
	"  kind TEXT NOT NULL CHECK (kind IN ('native', 'async', 'script', 'label')),"
	"  pc INTEGER,"
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
	"  role TEXT,"
	"  runtime TEXT,"
	"  detail TEXT,"
	"  PRIMARY KEY (core_id, task_idx, idx)) WITHOUT ROWID;"
	"INSERT INTO task_frames_new (core_id, task_idx, idx, kind, pc, function, function_offset,"
	"  module, module_offset, file, line, inlined, inline_depth, tailcall, display, args,"
	"  activation, cfa, seam, role)"
	"  SELECT core_id, task_idx, idx, kind, pc, function, function_offset, module, module_offset,"
	"         file, line, inlined, inline_depth, tailcall, display, args, activation, cfa, seam,"
	"         role FROM task_frames;"
	"DROP TABLE task_frames;"
	"ALTER TABLE task_frames_new RENAME TO task_frames;"
	"CREATE INDEX task_frames_function ON task_frames(function);"
	"CREATE VIEW crash_stacks AS"
	"  SELECT c.id AS core_id, c.path AS core, c.signature_hash, f.idx AS frame, f.kind,"
	"         CASE WHEN f.pc IS NOT NULL THEN printf('0x%x', f.pc) END AS pc, f.function, f.file,"
	"         f.line, f.module, f.inline_depth, f.runtime, f.detail"
	CRASH_STACKS_FROM_FRAMES
	"PRAGMA legacy_alter_table = OFF;"
	"ALTER TABLE tasks ADD COLUMN name TEXT;"
	"CREATE TABLE blocked_on ("
	"  core_id INTEGER NOT NULL REFERENCES cores(id) ON DELETE CASCADE,"
	"  waiter TEXT NOT NULL CHECK (waiter IN ('thread', 'task')),"
	"  waiter_idx INTEGER NOT NULL,"
	"  tid INTEGER,"
	"  kind TEXT NOT NULL,"
	"  object INTEGER,"
	"  object_name TEXT,"
	"  owner_tid INTEGER,"
	"  owner_gone INTEGER NOT NULL,"
	"  owner_task INTEGER,"
	"  syscall TEXT,"
	"  fd INTEGER,"
	"  fd_target TEXT,"
	"  since INTEGER,"
	"  via TEXT,"
	"  function TEXT,"
	"  summary TEXT,"
	"  PRIMARY KEY (core_id, waiter, waiter_idx)) WITHOUT ROWID;"
	"CREATE INDEX blocked_on_object_name ON blocked_on(object_name);"
	"CREATE TABLE deadlocks ("
	"  core_id INTEGER NOT NULL REFERENCES cores(id) ON DELETE CASCADE,"
	"  idx INTEGER NOT NULL,"
	"  summary TEXT,"
	"  nmembers INTEGER NOT NULL,"
	"  PRIMARY KEY (core_id, idx)) WITHOUT ROWID;"
	"CREATE TABLE deadlock_members ("
	"  core_id INTEGER NOT NULL REFERENCES cores(id) ON DELETE CASCADE,"
	"  deadlock_idx INTEGER NOT NULL,"
	"  pos INTEGER NOT NULL,"
	"  tid INTEGER NOT NULL,"
	"  object INTEGER,"
	"  PRIMARY KEY (core_id, deadlock_idx, pos)) WITHOUT ROWID;"
	"CREATE VIEW hang_waits AS"
	"  SELECT c.id AS core_id, c.path AS core, c.signature_hash, c.cause_kind, b.waiter,"
	"         b.waiter_idx, b.tid, b.kind,"
	"         CASE WHEN b.object IS NOT NULL THEN printf('0x%x', b.object) END AS object,"
	"         b.object_name, b.owner_tid, b.owner_gone, b.syscall, b.fd, b.fd_target, b.since,"
	"         b.function, b.summary,"
	"         (SELECT min(m.deadlock_idx) FROM deadlock_members m WHERE m.core_id = c.id"
	"          AND b.waiter = 'thread' AND m.tid = b.tid) AS deadlock"
	"  FROM cores c JOIN blocked_on b ON b.core_id = c.id"
	"  WHERE c.cause_kind IN ('hang', 'deadlock');"
	"DROP VIEW top_signatures;"
	TOP_SIGNATURES_TO_EXAMPLE ","
	"         (SELECT ifnull(e.cause_kind, '') IN ('hang', 'deadlock') FROM cores e"
	"          WHERE e.signature_hash IS s.signature_hash"
	"          ORDER BY coalesce(e.crashed_at, e.file_mtime) DESC, e.id DESC LIMIT 1) AS hang"
	"  FROM seen s GROUP BY s.signature_hash"
	"  ORDER BY cores DESC, last_seen DESC, s.signature_hash;",
};

_Static_assert(sizeof(rep_migrations) / sizeof(rep_migrations[0]) == REP_SCHEMA_VERSION,
	       "one migration per schema version");

const char *rep_store_migration(int version)
{
	size_t n = sizeof(rep_migrations) / sizeof(rep_migrations[0]);
	return version >= 1 && (size_t)version <= n ? rep_migrations[version - 1] : NULL;
}
