#!/usr/bin/env bash
# Every example query of reports/SCHEMA.md runs against a database of fixture
# cores; the documented tables, views and schema version exist.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/store_lib.sh"

W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
DB=$W/crashes.db
store_cores "$W/cores" >/dev/null; rc=$?
if [ $rc -eq 77 ]; then skip "store schema: no fixture cores"; exit 0; fi
[ $rc -eq 0 ] || { fail "store schema: building fixture cores"; exit 0; }
# A recorder fixture core, when that fixture builds, so last_events has rows.
if d=$(fixture_build recorder 2>/dev/null); then
	c=$(fixture_core "$d" 2>/dev/null) && mv "$c" "$W/cores/recorder.core" && rm -rf "$(dirname "$c")"
fi
# And a folly coroutine core, so the async tables and examples have rows.
if d=$(fixture_build folly_cpp O2 2>/dev/null); then
	c=$(fixture_core "$d" 2>/dev/null) && mv "$c" "$W/cores/folly.core" && rm -rf "$(dirname "$c")"
fi
# And a bthread core, so the tasks tables and examples have rows.
if d=$(fixture_build bthread 2>/dev/null); then
	c=$(fixture_core "$d" 2>/dev/null) && mv "$c" "$W/cores/bthread.core" && rm -rf "$(dirname "$c")"
fi
"$ASYNCORE" ingest --db "$DB" --jobs 2 "$W/cores" >/dev/null 2>"$W/err" ||
	{ fail "store schema: ingest: $(tail -1 "$W/err")"; exit 0; }

python3 - "$ROOT/reports/SCHEMA.md" "$W/q" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
for i, q in enumerate(re.findall(r"```sql\n(.*?)```", text, re.S)):
    open("%s.%02d" % (sys.argv[2], i), "w").write(q)
PY
n=0
for q in "$W"/q.*; do
	n=$((n + 1))
	first=$(head -1 "$q")
	if "$ASYNCORE" query --db "$DB" "$(cat "$q")" >"$W/out" 2>"$W/err"; then
		pass "store schema: example query $n ($first)"
	else
		fail "store schema: example query $n ($first): $(head -1 "$W/err")"
	fi
done
check "store schema: SCHEMA.md has example queries" [ $n -ge 8 ]

for t in cores modules threads frames async_roots suspended suspended_frames recorders recorder_events \
	warnings ingest_errors crash_stacks top_signatures last_events tasks task_frames blocked_on \
	deadlocks deadlock_members hang_waits; do
	check "store schema: $t exists" [ "$(store_q "$DB" "SELECT count(*) FROM sqlite_schema WHERE name = '$t'")" = 1 ]
	grep -q "\`$t\`" "$ROOT/reports/SCHEMA.md" || fail "store schema: $t not documented in SCHEMA.md"
done
v=$(sed -n 's/^#define REP_SCHEMA_VERSION \([0-9]*\)$/\1/p' "$ROOT/reports/store_sqlite.h")
check "store schema: version $v" [ -n "$v" -a "$(store_q "$DB" "PRAGMA user_version")" = "$v" ]
check "store schema: WAL" [ "$(store_q "$DB" "SELECT journal_mode FROM pragma_journal_mode")" = wal ]
check "store schema: top_signatures has rows" [ "$(store_q "$DB" "SELECT count(*) FROM top_signatures")" -ge 6 ]
check "store schema: crash_stacks has rows" [ "$(store_q "$DB" "SELECT count(*) FROM crash_stacks")" -gt 0 ]
if [ -f "$W/cores/recorder.core" ]; then
	check "store schema: last_events has rows" [ "$(store_q "$DB" "SELECT count(*) FROM last_events")" -gt 0 ]
fi
if [ -f "$W/cores/folly.core" ]; then
	check "store schema: async frames of the crashing stack" \
		[ "$(store_q "$DB" "SELECT count(*) FROM crash_stacks WHERE kind = 'async'")" -gt 0 ]
	check "store schema: suspended chains and async roots" \
		[ "$(store_q "$DB" "SELECT (SELECT count(*) FROM suspended_frames) > 0 AND (SELECT count(*) FROM async_roots) > 0")" = 1 ]
	check "store schema: an async stack's signature is its call chain, no mark of how frames were found" \
		[ "$(store_q "$DB" "SELECT signature LIKE '%<%' AND signature NOT LIKE '%@%' FROM cores WHERE path LIKE '%folly.core'")" = 1 ]
fi
if [ -f "$W/cores/bthread.core" ]; then
	check "store schema: bthreads and their frames" \
		[ "$(store_q "$DB" "SELECT (SELECT count(*) FROM tasks WHERE state = 'suspended') > 0 AND (SELECT count(*) FROM task_frames) > 0")" = 1 ]
	check "store schema: crash_stacks starts in the crashing bthread" \
		[ "$(store_q "$DB" "SELECT s.function FROM crash_stacks s JOIN cores c ON c.id = s.core_id WHERE c.path LIKE '%bthread.core' AND s.frame = 0")" = "parse_header(Request const*)" ]
fi
check "store schema: the fixture cores are x86_64 (cores.arch)" \
	[ "$(store_q "$DB" "SELECT group_concat(DISTINCT arch) FROM cores")" = x86_64 ]

# The columns schema version 8 added (crashes a program's own signal
# handler caught): dropped, they make a store of version 7.
DROP8="ALTER TABLE frames DROP COLUMN role; ALTER TABLE task_frames DROP COLUMN role;"
for c in caught_signal caught_signal_name caught_code caught_code_name caught_address handled_by \
	handler_action; do
	DROP8="$DROP8 ALTER TABLE cores DROP COLUMN $c;"
done

# The columns schema version 9 added (goroutines, Go crashes): dropped,
# they make a store of version 8 (the wider state CHECK stays: no row of 8
# breaks it).
DROP9=
for c in created_by created_file created_line wait_since locked; do
	DROP9="$DROP9 ALTER TABLE tasks DROP COLUMN $c;"
done
for c in go_crash go_signal go_signal_name go_message; do
	DROP9="$DROP9 ALTER TABLE cores DROP COLUMN $c;"
done
# What schema version 10 added (the file's mtime, the served pages'
# tables, their triggers and indexes): dropped, they make a store of
# version 9 (its top_signatures view goes too: it reads file_mtime; the
# migration makes it again).
DROP10="DROP TRIGGER cores_bucket_add; DROP TRIGGER cores_bucket_drop; DROP TRIGGER cores_bucket_move;
	DROP TRIGGER frames_search; DROP TRIGGER task_frames_search; DROP TRIGGER search_terms_name;
	DROP TABLE bucket_days; DROP TABLE search_terms; DROP TABLE search_names; DROP VIEW top_signatures;
	DROP INDEX cores_seen; DROP INDEX cores_cause_summary; ALTER TABLE cores DROP COLUMN file_mtime;"
# What schema version 11 added (the index of cores by crash time, newest
# first for a broad search): dropped, it makes a store of version 10.
DROP11="DROP INDEX cores_seen_at;"
# What schema version 12 added (term sets): dropped, and version 10's
# search_terms made again with its triggers, it makes a store of version 11.
TERMS10="SELECT function AS name, core_id FROM frames WHERE function IS NOT NULL
	UNION SELECT module, core_id FROM frames WHERE module IS NOT NULL
	UNION SELECT file, core_id FROM frames WHERE file IS NOT NULL
	UNION SELECT function, core_id FROM task_frames WHERE function IS NOT NULL
	UNION SELECT module, core_id FROM task_frames WHERE module IS NOT NULL
	UNION SELECT file, core_id FROM task_frames WHERE file IS NOT NULL"
DROP12="DROP TRIGGER cores_set_add; DROP TRIGGER cores_set_drop; DROP TRIGGER cores_set_move;
	DROP TRIGGER term_names_name; DROP TRIGGER cores_bucket_drop; DROP TABLE set_days;
	DROP TABLE term_names; DROP INDEX cores_term_set; ALTER TABLE cores DROP COLUMN term_set;
	CREATE TABLE search_terms (name TEXT NOT NULL, core_id INTEGER NOT NULL,
	  PRIMARY KEY (name, core_id)) WITHOUT ROWID;
	INSERT INTO search_terms $TERMS10;
	CREATE TRIGGER cores_bucket_drop AFTER DELETE ON cores BEGIN
	  DELETE FROM search_terms WHERE core_id = OLD.id; END;
	CREATE TRIGGER frames_search AFTER INSERT ON frames BEGIN
	  INSERT OR IGNORE INTO search_terms SELECT v, NEW.core_id FROM (SELECT NEW.function AS v
	  UNION SELECT NEW.module UNION SELECT NEW.file) WHERE v IS NOT NULL; END;
	CREATE TRIGGER task_frames_search AFTER INSERT ON task_frames BEGIN
	  INSERT OR IGNORE INTO search_terms SELECT v, NEW.core_id FROM (SELECT NEW.function AS v
	  UNION SELECT NEW.module UNION SELECT NEW.file) WHERE v IS NOT NULL; END;
	CREATE TRIGGER search_terms_name AFTER INSERT ON search_terms BEGIN
	  INSERT OR IGNORE INTO search_names VALUES (NEW.name); END;"
# What schema version 13 added (hangs, task names, task frames' runtime
# columns): dropped, and version 9's crash_stacks made again, it makes a
# store of version 12 (task_frames keeps its wider kinds: no row of 12
# breaks them).
CRASH_STACKS12="CREATE VIEW crash_stacks AS
	SELECT c.id AS core_id, c.path AS core, c.signature_hash, f.idx AS frame, f.kind,
	  printf('0x%x', f.pc) AS pc, f.function, f.file, f.line, f.module, f.inline_depth,
	  NULL AS runtime, NULL AS detail
	FROM cores c
	JOIN threads t ON t.core_id = c.id AND t.crashing
	JOIN tasks k ON k.core_id = c.id AND k.state = 'running' AND k.tid = t.tid AND k.runtime <> 'go'
	JOIN task_frames f ON f.core_id = c.id AND f.task_idx = k.idx
	UNION ALL
	SELECT c.id, c.path, c.signature_hash,
	  f.idx + coalesce((SELECT k.nframes FROM tasks k WHERE k.core_id = c.id
	    AND k.state = 'running' AND k.tid = t.tid AND k.runtime <> 'go'), 0),
	  f.kind, CASE WHEN f.pc IS NOT NULL THEN printf('0x%x', f.pc) END, f.function,
	  f.file, f.line, f.module, f.inline_depth, f.runtime, f.detail
	FROM cores c
	JOIN threads t ON t.core_id = c.id AND t.crashing
	JOIN frames f ON f.core_id = c.id AND f.thread_idx = t.idx;"
DROP13="DROP VIEW hang_waits; DROP TABLE deadlock_members; DROP TABLE deadlocks; DROP TABLE blocked_on;
	ALTER TABLE tasks DROP COLUMN name; DROP VIEW crash_stacks;
	ALTER TABLE task_frames DROP COLUMN runtime; ALTER TABLE task_frames DROP COLUMN detail;
	$CRASH_STACKS12"
DROP12="$DROP13 $DROP12"
DROP11="$DROP12 $DROP11"
DROP10="$DROP11 $DROP10"
DROP9="$DROP10 $DROP9"
DROP8="$DROP9 $DROP8"

# old_store N DROP: $W/vN.db, a copy of $DB made a store of schema version
# N by DROP (SQL that undoes what the versions after N added).
old_store() {
	cp "$DB" "$W/v$1.db"
	sqlite3 "$W/v$1.db" "$2 PRAGMA user_version = $1;"
}

# terms_exact N: in $W/vN.db, each core's term set holds exactly the names
# of its frames, its tasks' frames and its cause, and set_days counts each
# core once, in its set and group.
terms_exact() {
	local names="SELECT * FROM (SELECT name, core_id FROM ($TERMS10) WHERE name <> ''
		UNION SELECT cause_summary, id FROM cores WHERE cause_summary <> '')"
	local held="SELECT n.name, c.id FROM cores c JOIN term_names n ON n.term_set = c.term_set"
	check "store schema: ... each core's term set holds its frames' and cause's names, no other" \
		[ "$(store_q "$W/v$1.db" "SELECT (SELECT count(*) FROM ($names EXCEPT $held))
			+ (SELECT count(*) FROM ($held EXCEPT $names)) AS n")" = 0 ]
	local groups="SELECT term_set, ifnull(signature_hash, ''), ifnull(executable, ''),
		ifnull(build_id, ''), arch, ifnull(cause_kind, ''),
		ifnull(substr(coalesce(crashed_at, file_mtime), 1, 10), ''), count(*),
		max(coalesce(crashed_at, file_mtime)) FROM cores WHERE term_set IS NOT NULL
		GROUP BY 1, 2, 3, 4, 5, 6, 7"
	check "store schema: ... set_days counts each core once, by set and group" \
		[ "$(store_q "$W/v$1.db" "SELECT (SELECT count(*) FROM ($groups EXCEPT SELECT * FROM set_days))
			+ (SELECT count(*) FROM (SELECT * FROM set_days EXCEPT $groups)) AS n")" = 0 ]
}

# migrated N: the next ingest into $W/vN.db brings it to version $v.
migrated() {
	"$ASYNCORE" ingest --db "$W/v$1.db" --quiet "$W/cores" >/dev/null 2>"$W/err"; rc=$?
	check "store schema: a version $1 store is migrated to $v" \
		[ $rc -eq 0 -a "$(store_q "$W/v$1.db" "PRAGMA user_version")" = "$v" ]
}

# resign_keeps N CORES WHOSE: resign of $W/vN.db gives its CORES cores
# (WHOSE, as the check names them) the signatures they had.
resign_keeps() {
	"$ASYNCORE" resign --db "$W/v$1.db" >"$W/resign" 2>"$W/err"; rc=$?
	check "store schema: ... resign gives $3 the signatures they had ($(cat "$W/resign"))" \
		[ $rc -eq 0 -a -n "$(grep "^resigned $2 cores, 0 signatures changed" "$W/resign")" ]
}

# A store of schema version 6 (no cores.arch) is migrated by the next
# ingest: its cores were x86_64, the only machine stored then.
sqlite3 "$DB" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
old_store 6 "$DROP8 DROP INDEX cores_arch; ALTER TABLE cores DROP COLUMN arch;"
n6=$(store_q "$W/v6.db" "SELECT count(*) FROM cores")
migrated 6
check "store schema: its $n6 cores are x86_64 after the migration" \
	[ "$(store_q "$W/v6.db" "SELECT count(*) FROM cores WHERE arch = 'x86_64'")" = "$n6" ]
check "store schema: cores.arch is indexed after the migration" \
	[ "$(store_q "$W/v6.db" "SELECT count(*) FROM sqlite_schema WHERE name = 'cores_arch'")" = 1 ]

# A store of schema version 7 (no frame roles, no caught fault) is migrated
# by the next ingest: every row is kept as it was, the new columns are NULL
# (no handler caught a crash stored before), and resign gives every core
# the signature it had.
old_store 7 "$DROP8"
tables="cores modules threads frames async_roots suspended suspended_frames tasks task_frames
	recorders recorder_events warnings ingest_errors"
declare -A cols   # each table's columns in the version keep_columns read
keep_columns() {   # keep_columns DB: each table's columns in DB, for rows
	local t
	for t in $tables; do
		cols[$t]=$(sqlite3 "$1" "SELECT group_concat(name, ', ') FROM pragma_table_info('$t')")
	done
}
rows() {   # rows DB: every row of every table, in the columns keep_columns read
	local t
	for t in $tables; do
		echo "== $t"
		sqlite3 "$1" "SELECT ${cols[$t]} FROM $t ORDER BY 1, 2, 3"
	done
}
keep_columns "$W/v7.db"
rows "$W/v7.db" >"$W/v7.rows"
n7=$(store_q "$W/v7.db" "SELECT count(*) FROM cores")
migrated 7
rows "$W/v7.db" >"$W/v8.rows"
check "store schema: ... every row of every table kept ($n7 cores, $(wc -l <"$W/v7.rows") lines)" \
	bash -c '[ "$1" -gt 0 ] && cmp -s "$2" "$3"' _ "$n7" "$W/v7.rows" "$W/v8.rows"
check "store schema: ... frames.role and task_frames.role added, NULL" \
	[ "$(store_q "$W/v7.db" "SELECT (SELECT count(*) FROM frames WHERE role IS NULL) =
		(SELECT count(*) FROM frames) AND (SELECT count(*) FROM task_frames WHERE role IS NULL) =
		(SELECT count(*) FROM task_frames) AS ok")" = 1 ]
check "store schema: ... the caught columns added, NULL for its $n7 cores" \
	[ "$(store_q "$W/v7.db" "SELECT count(*) FROM cores WHERE caught_signal IS NULL AND
		caught_signal_name IS NULL AND caught_code IS NULL AND caught_code_name IS NULL AND
		caught_address IS NULL AND handled_by IS NULL AND handler_action IS NULL")" = "$n7" ]
resign_keeps 7 "$n7" "its cores"

# A store of schema version 8 (no goroutine or Go crash columns) is
# migrated by the next ingest: its tasks kept, the new columns NULL (locked
# 0), a goroutine's state is then accepted, and resign gives its cores the
# signatures they had.
old_store 8 "$DROP9"
cols8=$(sqlite3 "$W/v8.db" "SELECT group_concat(name, ', ') FROM pragma_table_info('tasks')")
sqlite3 "$W/v8.db" "SELECT $cols8 FROM tasks ORDER BY 1, 2" >"$W/v8.tasks"
migrated 8
check "store schema: ... its tasks kept" \
	cmp -s "$W/v8.tasks" <(sqlite3 "$W/v8.db" "SELECT $cols8 FROM tasks ORDER BY 1, 2")
check "store schema: ... the goroutine columns added, NULL (locked 0)" \
	[ "$(store_q "$W/v8.db" "SELECT count(*) FROM tasks WHERE created_by IS NOT NULL OR
		created_file IS NOT NULL OR created_line IS NOT NULL OR wait_since IS NOT NULL OR
		locked <> 0")" = 0 ]
check "store schema: ... a waiting goroutine is accepted" \
	sqlite3 "$W/v8.db" "INSERT INTO tasks (core_id, idx, runtime, task_id, state, wait_kind,
		address, nframes, created_by, wait_since, locked) SELECT id, 100000, 'go', 19,
		'waiting', 'chan receive', 0, 0, 'main.start', 600, 1 FROM cores LIMIT 1"
n8=$(store_q "$W/v8.db" "SELECT count(*) FROM cores")
check "store schema: ... the Go crash columns added, NULL for its $n8 cores" \
	[ "$(store_q "$W/v8.db" "SELECT count(*) FROM cores WHERE go_crash IS NULL AND
		go_signal IS NULL AND go_signal_name IS NULL AND go_message IS NULL")" = "$n8" ]
resign_keeps 8 "$n8" "the version 8 store's cores"

# A store of schema version 9 (no file_mtime, no bucket_days or search
# tables) is migrated by the next ingest: its cores keep no file time
# (NULL), bucket_days counts every core, the search tables hold every
# frame's names, and a core stored after it has its file's mtime.
old_store 9 "$DROP10"
n9=$(store_q "$W/v9.db" "SELECT count(*) FROM cores")
sqlite3 "$W/v9.db" "PRAGMA foreign_keys = ON; DELETE FROM cores WHERE id = (SELECT max(id) FROM cores)"
migrated 9
check "store schema: ... bucket_days counts its $n9 cores, by bucket as cores does" \
	[ "$(store_q "$W/v9.db" "SELECT (SELECT sum(cores) FROM bucket_days) = $n9 AND NOT EXISTS (
		SELECT signature_hash, count(*) FROM cores GROUP BY 1 EXCEPT SELECT nullif(signature_hash, ''),
		sum(cores) FROM bucket_days GROUP BY 1) AS ok")" = 1 ]
terms_exact 9
check "store schema: ... only the core stored after it has its file's mtime" \
	[ "$(store_q "$W/v9.db" "SELECT count(file_mtime) FROM cores")" = 1 ]

# A store of schema version 10 (no cores_seen_at) is migrated by the next
# ingest: the index is made over the cores it holds.
old_store 10 "$DROP11"
migrated 10
check "store schema: ... the version 10 store has cores_seen_at" \
	[ "$(store_q "$W/v10.db" "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'cores_seen_at'")" = 1 ]

# A store of schema version 11 (search_terms, no term sets) is migrated by
# the next ingest: each core's term set is taken from its rows, the same
# set the analysis gave a core ingested since.
old_store 12 "$DROP13"
terms_exact 12
old_store 11 "$DROP12"
migrated 11
terms_exact 11
check "store schema: ... the migration's term sets are those ingest gives" \
	[ "$(sqlite3 "$W/v11.db" "ATTACH '$DB' AS fresh; SELECT count(*) FROM cores c
		JOIN fresh.cores f USING (fingerprint) WHERE c.term_set IS NOT f.term_set")" = 0 ]
sqlite3 "$W/v11.db" "UPDATE cores SET signature_hash = 'moved' WHERE id = (SELECT min(id) FROM cores);
	PRAGMA foreign_keys = ON; DELETE FROM cores WHERE id = (SELECT max(id) FROM cores)"
terms_exact 11

# A store of schema version 12 (no hangs, task frames native or async only)
# is migrated by the next ingest: every row of every table is kept, the new
# tables are empty (what its cores waited for was not stored), a task's
# script frame is then accepted, top says no bucket of crashes is a hang,
# and resign gives its cores the signatures they had.
keep_columns "$W/v12.db"
rows "$W/v12.db" >"$W/v12.rows"
n12=$(store_q "$W/v12.db" "SELECT count(*) FROM cores")
migrated 12
rows "$W/v12.db" >"$W/v13.rows"
check "store schema: ... the version 12 store keeps every row of every table ($n12 cores)" \
	bash -c '[ "$1" -gt 0 ] && cmp -s "$2" "$3"' _ "$n12" "$W/v12.rows" "$W/v13.rows"
check "store schema: ... blocked_on, deadlocks and deadlock_members are empty" \
	[ "$(store_q "$W/v12.db" "SELECT (SELECT count(*) FROM blocked_on) + (SELECT count(*) FROM deadlocks)
		+ (SELECT count(*) FROM deadlock_members) AS n")" = 0 ]
check "store schema: ... a task's script frame, without a pc, is accepted" \
	sqlite3 "$W/v12.db" "INSERT INTO tasks (core_id, idx, runtime, task_id, state, address, nframes, name)
		SELECT id, 100000, 'asyncio', 1, 'suspended', 1, 1, 'Task-1' FROM cores LIMIT 1;
		INSERT INTO task_frames (core_id, task_idx, idx, kind, function, file, line, inlined,
		inline_depth, tailcall, activation, seam, runtime) SELECT id, 100000, 0, 'script',
		'main', 'app.py', 3, 0, 0, 0, 1, 0, 'cpython' FROM cores LIMIT 1"
check "store schema: ... top_signatures says no bucket of its crashes is a hang" \
	[ "$(store_q "$W/v12.db" "SELECT count(*) FROM top_signatures WHERE hang = 0")" = \
	  "$(store_q "$W/v12.db" "SELECT count(*) FROM top_signatures")" ]
sqlite3 "$W/v12.db" "DELETE FROM task_frames WHERE task_idx = 100000; DELETE FROM tasks WHERE idx = 100000"
resign_keeps 12 "$n12" "the version 12 store's cores"

# Go programs (fixtures/go_shop, when Go is installed): the core's signal is
# the runtime's SIGABRT; the Go crash columns say what killed it, and resign
# signs it from them as the analysis did.
if command -v go >/dev/null && d=$(fixture_build go_shop 2>/dev/null); then
	mkdir "$W/go"
	for kind in nil mapwrites; do
		c=$(GOTRACEBACK=crash fixture_core "$d" $kind 2>/dev/null) &&
			mv "$c" "$W/go/$kind.core" && rm -rf "$(dirname "$c")"
	done
	"$ASYNCORE" ingest --db "$W/go.db" --quiet "$W/go" >/dev/null 2>"$W/err"
	go_q="SELECT replace(path, '$W/go/', '') || ' ' || signal_name || ' ' || go_crash || ' ' ||
		coalesce(go_signal_name, '-') || ' ' || go_message || ' | ' || signature AS row
		FROM cores ORDER BY path"
	store_q "$W/go.db" "$go_q" | tr -d '"' >"$W/go.rows"
	check "store schema: a Go panic's signal on cores ($(sed -n 2p "$W/go.rows" | cut -c1-90)...)" \
		grep -q "^nil.core SIGABRT panic SIGSEGV panic: runtime error: invalid memory address.* | SIGSEGV: main\." "$W/go.rows"
	check "store schema: a Go fatal error on cores ($(sed -n 1p "$W/go.rows" | cut -c1-90)...)" \
		grep -q "^mapwrites.core SIGABRT fatal error - fatal error: concurrent map writes | fatal error: " "$W/go.rows"
	sqlite3 "$W/go.db" "UPDATE cores SET signature = 'stale', signature_hash = '0'"
	"$ASYNCORE" resign --db "$W/go.db" >"$W/resign" 2>"$W/err"; rc=$?
	check "store schema: resign signs Go crashes as the analysis did ($(cat "$W/resign"))" \
		[ $rc -eq 0 -a "$(store_q "$W/go.db" "$go_q" | tr -d '"')" = "$(cat "$W/go.rows")" ]
else
	skip "store schema: no Go toolchain or fixtures/go_shop (Go crashes left out)"
fi

sqlite3 "$DB" "PRAGMA user_version = 99"
"$ASYNCORE" ingest --db "$DB" "$W/cores" >/dev/null 2>"$W/err"; rc=$?
check "store schema: a newer database is refused" [ $rc -eq 2 -a -n "$(grep newer "$W/err")" ]
