#!/usr/bin/env bash
# The ClickHouse store against real servers: two clickhouse-server processes
# (Debian's package) on loopback ports, one shard each of the cluster
# asyncore_test.  Ingest through one shard, read through the other; the
# buckets equal SQLite's on the same cores; a re-ingest changes nothing; a
# shard killed during an ingest loses nothing; a query that writes is
# refused; resign gives SQLite's answer, and the served buckets' counts stay
# SQLite's after a core's row is written again or moved.  A bthread core among them: its
# tasks and task frames, crash stack and signature (the crashing bthread's
# frames, before and after resign) equal SQLite's; stack overflows' frames
# symbolized again keep the jump over the recursion's run.  Hang cores and
# an asyncio core stored as their reports say, top's hang column and the
# served buckets' marks SQLite's.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/store_lib.sh"
source "$(dirname "$0")/clickhouse_lib.sh"
source "$(dirname "$0")/hang_lib.sh"

W=$(mktemp -d)
trap 'hang_kill_all; ch_cluster_stop; rm -rf "$W"' EXIT
if ! ch_available "$W/apt.log"; then
	skip "clickhouse: clickhouse-server could not be installed ($(tail -1 "$W/apt.log"))"
	exit 0
fi
N=$(store_cores "$W/plain"); rc=$?
if [ $rc -eq 77 ]; then skip "clickhouse: no fixture cores"; exit 0; fi
[ $rc -eq 0 ] || { fail "clickhouse: building fixture cores"; exit 0; }
BTHREAD=
if d=$(fixture_build bthread 2>/dev/null) && c=$(fixture_core "$d" 2>/dev/null); then
	mv "$c" "$W/plain/zz-bthread.core" && rm -rf "$(dirname "$c")"
	N=$((N + 1))
else
	skip "clickhouse: no bthread core (the bthread checks are left out)"
fi

# systemd-coredump names give every core its own crash time (some this
# week, some a month ago), so first/last seen, last_7_days, new and the
# example core do not depend on when each store ingested it.
mkdir "$W/cores"
boot=$(tr -d '-' </proc/sys/kernel/random/boot_id)
now=$(date +%s)
i=0
for c in "$W"/plain/*.core; do
	i=$((i + 1))
	age=$(( i % 3 == 0 ? 30 * 86400 + i * 3600 : i * 3600 ))
	mv "$c" "$W/cores/core.prog.0.$boot.$((1000 + i)).$(( (now - age) * 1000000 + i ))"
	[ "$(basename "$c")" = zz-bthread.core ] && BTHREAD=$((1000 + i))
done

if ! ch_cluster_start "$W/ch" 2; then
	fail "clickhouse: starting two servers"
	tail -5 "$W"/ch/s*/stdout.log "$W"/ch/s*/error.log 2>/dev/null | sed 's/^/    /'
	exit 0
fi
U1="clickhouse://127.0.0.1:${CH_HTTP[1]}/crashes?cluster=$CH_CLUSTER_NAME"
U2="clickhouse://127.0.0.1:${CH_HTTP[2]}/crashes?cluster=$CH_CLUSTER_NAME"
chq() { "$ASYNCORE" query --db "$1" --format csv "$2" | tail -n +2; }

"$ASYNCORE" store init --db "$U1" 2>"$W/err" && "$ASYNCORE" store init --db "$U2" 2>>"$W/err"; rc=$?
check "clickhouse: store init on both shards" [ $rc -eq 0 ]
[ $rc -eq 0 ] || sed 's/^/    /' "$W/err"
"$ASYNCORE" store init --db "$U1" 2>"$W/err"; rc=$?
check "clickhouse: store init again changes nothing and succeeds" [ $rc -eq 0 ]
check "clickhouse: a store without init is refused with the command to run" \
	bash -c '"$1" ingest --db "${2%%/crashes*}/nowhere" "$3" 2>&1 >/dev/null | grep -q "store init"' \
	_ "$ASYNCORE" "$U1" "$W/cores"

"$ASYNCORE" ingest --db "$U1" --jobs 2 "$W/cores" >"$W/out" 2>"$W/err"; rc=$?
check "clickhouse: ingest through shard 1 exits 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || sed 's/^/    /' "$W/err" | head
check "clickhouse: summary line" grep -q "^ingested $N, already present 0, failed 0 of $N cores" "$W/out"
s1=$(ch_q 1 "SELECT count() FROM crashes.cores_local FINAL")
s2=$(ch_q 2 "SELECT count() FROM crashes.cores_local FINAL")
check "clickhouse: both shards hold cores ($s1 + $s2 = $N)" [ "$s1" -gt 0 -a "$s2" -gt 0 -a $((s1 + s2)) -eq "$N" ]
check "clickhouse: a core's rows live on its cores row's shard" \
	[ "$(ch_q 1 "SELECT count() FROM crashes.frames_local WHERE fingerprint NOT IN (SELECT fingerprint FROM crashes.cores_local)")" = 0 ]
check "clickhouse: every core has its threads and frames (through shard 2)" \
	[ "$(chq "$U2" "SELECT countIf(nthreads != t OR nframes != f OR nframes = 0) FROM
	      (SELECT fingerprint, nthreads, nframes FROM cores FINAL) GLOBAL ALL LEFT JOIN
	      (SELECT fingerprint, uniqExact(idx) AS t, sum(nframes) AS f FROM threads FINAL
	       GROUP BY fingerprint) USING fingerprint")" = 0 ]

# The same cores into SQLite: the buckets are the same.
DB=$W/crashes.db
"$ASYNCORE" ingest --db "$DB" --jobs 2 --quiet "$W/cores" 2>/dev/null
"$ASYNCORE" top --db "$DB" --format csv >"$W/top.sqlite"
"$ASYNCORE" top --db "$U2" --format csv >"$W/top.ch" 2>"$W/err"; rc=$?
check "clickhouse: top through shard 2 exits 0" [ $rc -eq 0 ]
check "clickhouse: top has buckets" [ "$(wc -l <"$W/top.ch")" -gt 3 ]
check "clickhouse: top through shard 2 equals SQLite's" cmp -s "$W/top.sqlite" "$W/top.ch"
cmp -s "$W/top.sqlite" "$W/top.ch" || diff "$W/top.sqlite" "$W/top.ch" | head | sed 's/^/    /'
"$ASYNCORE" top --db "$DB" --format json >"$W/top.sqlite.json"
"$ASYNCORE" top --db "$U1" --format json >"$W/top.ch.json"
check "clickhouse: top as JSON through shard 1 equals SQLite's" cmp -s "$W/top.sqlite.json" "$W/top.ch.json"
check "clickhouse: crash_stacks has SQLite's rows" \
	[ "$(chq "$U2" "SELECT count() FROM crash_stacks")" = "$(store_q "$DB" "SELECT count(*) FROM crash_stacks")" ]
check "clickhouse: crash_stacks frame 0 functions as in SQLite" \
	[ "$(chq "$U2" "SELECT function FROM crash_stacks WHERE frame = 0 ORDER BY core, function" | md5sum)" = \
	  "$(store_q "$DB" "SELECT function FROM crash_stacks WHERE frame = 0 ORDER BY core, function" | md5sum)" ]
check "clickhouse: last_events has SQLite's rows" \
	[ "$(chq "$U2" "SELECT count() FROM last_events")" = "$(store_q "$DB" "SELECT count(*) FROM last_events")" ]
check "clickhouse: cause_kind counts as in SQLite" \
	[ "$(chq "$U2" "SELECT cause_kind, count() FROM cores FINAL GROUP BY cause_kind ORDER BY cause_kind")" = \
	  "$(store_q "$DB" "SELECT cause_kind, count(*) FROM cores GROUP BY cause_kind ORDER BY cause_kind")" ]
check "clickhouse: arch counts as in SQLite" \
	[ "$(chq "$U2" "SELECT arch, count() FROM cores FINAL GROUP BY arch ORDER BY arch")" = \
	  "$(store_q "$DB" "SELECT arch, count(*) FROM cores GROUP BY arch ORDER BY arch")" ]
# A store made before cores.arch: store init adds it (x86_64, the only
# machine stored then) to the local and the Distributed tables of each shard.
for i in 1 2; do
	ch_q $i "ALTER TABLE crashes.cores DROP COLUMN arch" >/dev/null &&
		ch_q $i "ALTER TABLE crashes.cores_local DROP COLUMN arch" >/dev/null ||
		fail "clickhouse: dropping cores.arch on shard $i"
done
"$ASYNCORE" store init --db "$U1" 2>"$W/err" && "$ASYNCORE" store init --db "$U2" 2>>"$W/err"; rc=$?
check "clickhouse: store init adds cores.arch to an older store (exit $rc)" [ $rc -eq 0 ]
check "clickhouse: ... its $N cores are x86_64" \
	[ "$(chq "$U2" "SELECT arch, count() FROM cores FINAL GROUP BY arch")" = "x86_64,$N" ]
# A store made before the crash-handler columns: store init adds the frames'
# role and the caught fault's columns of cores (NULL for the cores stored
# then) to the local and the Distributed tables of each shard.
CAUGHT="caught_signal caught_signal_name caught_code caught_code_name caught_address handled_by handler_action"
added=0
for i in 1 2; do
	for t in cores frames task_frames cores_local frames_local task_frames_local; do
		cols=role; [ "${t%_local}" = cores ] && cols=$CAUGHT
		for c in $cols; do
			ch_q $i "ALTER TABLE crashes.$t DROP COLUMN $c" >/dev/null &&
				added=$((added + 1)) || fail "clickhouse: dropping $t.$c on shard $i"
		done
	done
done
"$ASYNCORE" store init --db "$U1" 2>"$W/err" && "$ASYNCORE" store init --db "$U2" 2>>"$W/err"; rc=$?
in_list=$(printf "'%s'," $CAUGHT)
have=0
for i in 1 2; do
	have=$((have + $(ch_q $i "SELECT count() FROM system.columns WHERE database = 'crashes' AND
		((table IN ('cores', 'cores_local') AND name IN (${in_list%,})) OR
		 (table IN ('frames', 'frames_local', 'task_frames', 'task_frames_local') AND name = 'role'))")))
done
check "clickhouse: store init adds frames.role, task_frames.role and the caught columns to an older store ($have of $added, exit $rc)" \
	[ $rc -eq 0 -a "$added" = 36 -a "$have" = 36 ]
check "clickhouse: ... NULL for its $N cores and their frames" \
	[ "$(chq "$U2" "SELECT countIf(isNull(caught_signal) AND isNull(caught_signal_name) AND
		isNull(caught_code) AND isNull(caught_code_name) AND isNull(caught_address) AND
		isNull(handled_by) AND isNull(handler_action)) AS n FROM cores FINAL")" = "$N" -a \
	  "$(chq "$U2" "SELECT count() FROM frames FINAL WHERE isNotNull(role)")" = 0 ]
# A store made before goroutines: store init adds the goroutine columns of
# tasks (NULL, locked 0, for the tasks stored then), widens its state to
# the goroutines' words and adds the Go crash columns of cores (NULL), on the
# local and the Distributed tables of each shard.
GOCOLS="created_by created_file created_line wait_since locked"
GOCORE="go_crash go_signal go_signal_name go_message"
OLDSTATE="Enum8('running' = 1, 'ready' = 2, 'suspended' = 3, 'created' = 4)"
for i in 1 2; do
	for t in cores cores_local; do
		for c in $GOCORE; do
			ch_q $i "ALTER TABLE crashes.$t DROP COLUMN $c" >/dev/null ||
				fail "clickhouse: dropping $t.$c on shard $i"
		done
	done
	for t in tasks tasks_local; do
		for c in $GOCOLS; do
			ch_q $i "ALTER TABLE crashes.$t DROP COLUMN $c" >/dev/null ||
				fail "clickhouse: dropping $t.$c on shard $i"
		done
		ch_q $i "ALTER TABLE crashes.$t MODIFY COLUMN state $OLDSTATE" >/dev/null ||
			fail "clickhouse: narrowing $t.state on shard $i"
	done
done
"$ASYNCORE" store init --db "$U1" 2>"$W/err" && "$ASYNCORE" store init --db "$U2" 2>>"$W/err"; rc=$?
in_list=$(printf "'%s'," $GOCOLS)
have=0; wide=0
for i in 1 2; do
	have=$((have + $(ch_q $i "SELECT count() FROM system.columns WHERE database = 'crashes' AND
		table IN ('tasks', 'tasks_local') AND name IN (${in_list%,})")))
	wide=$((wide + $(ch_q $i "SELECT count() FROM system.columns WHERE database = 'crashes' AND
		table IN ('tasks', 'tasks_local') AND name = 'state' AND position(type, 'waiting') > 0")))
done
check "clickhouse: store init adds the goroutine columns of tasks and widens its state ($have of 20, $wide of 4, exit $rc)" \
	[ $rc -eq 0 -a "$have" = 20 -a "$wide" = 4 ]
check "clickhouse: ... NULL (locked 0) for the tasks stored then" \
	[ "$(chq "$U2" "SELECT count() FROM tasks FINAL WHERE isNotNull(created_by) OR
		isNotNull(created_file) OR isNotNull(created_line) OR isNotNull(wait_since) OR
		locked != 0")" = 0 ]
in_list=$(printf "'%s'," $GOCORE)
have=0
for i in 1 2; do
	have=$((have + $(ch_q $i "SELECT count() FROM system.columns WHERE database = 'crashes' AND
		table IN ('cores', 'cores_local') AND name IN (${in_list%,})")))
done
check "clickhouse: store init adds the Go crash columns of cores ($have of 16)" [ "$have" = 16 ]
check "clickhouse: ... NULL for its $N cores" \
	[ "$(chq "$U2" "SELECT countIf(isNull(go_crash) AND isNull(go_signal) AND
		isNull(go_signal_name) AND isNull(go_message)) FROM cores FINAL")" = "$N" ]
check "clickhouse: query --format json gives numbers" \
	bash -c '"$1" query --db "$2" --format json "SELECT count() AS n FROM cores FINAL" | python3 -c "import json,sys; assert json.load(sys.stdin) == [{\"n\": $3}]"' \
	_ "$ASYNCORE" "$U2" "$N"
if [ -n "$BTHREAD" ]; then
	# The bthread core: every column of its tasks and task frames, its crash
	# stack (the bthread's frames, then the worker's) and its signature.
	tasks_cols="idx, runtime, task_id, state, wait_kind, wait_address, wait_target, tid, fn,
		fn_address, address, nframes, unwind_error"
	tframe_cols="task_idx, idx, kind, pc, function, function_offset, module, module_offset, file,
		line, inlined, inline_depth, tailcall, display, args, activation, cfa, seam"
	bq() {   # bq TABLE COLUMNS ORDER: the bthread core's rows in both stores
		store_q "$DB" "SELECT $2 FROM $1 WHERE core_id = (SELECT id FROM cores
			WHERE path LIKE '%.$BTHREAD.%') ORDER BY $3" >"$W/$1.sqlite"
		chq "$U2" "SELECT $2 FROM $1 FINAL WHERE fingerprint = (SELECT any(fingerprint) FROM
			cores FINAL WHERE path LIKE '%.$BTHREAD.%') ORDER BY $3" >"$W/$1.ch"
	}
	same_rows() { [ "$(wc -l <"$2")" -gt "$3" ] && cmp -s "$1" "$2"; }
	bq tasks "$tasks_cols" idx
	check "clickhouse: the bthread core's tasks ($(wc -l <"$W/tasks.ch")) equal SQLite's" \
		same_rows "$W/tasks.sqlite" "$W/tasks.ch" 5
	bq task_frames "$tframe_cols" "task_idx, idx"
	check "clickhouse: the bthread core's task frames ($(wc -l <"$W/task_frames.ch")) equal SQLite's" \
		same_rows "$W/task_frames.sqlite" "$W/task_frames.ch" 20
	check "clickhouse: the bthread core's crash stack equals SQLite's, the bthread's frames first" \
		[ "$(chq "$U2" "SELECT frame, kind, pc, function FROM crash_stacks WHERE core LIKE '%.$BTHREAD.%'
		     ORDER BY frame")" = "$(store_q "$DB" "SELECT frame, kind, pc, function FROM crash_stacks
		     WHERE core LIKE '%.$BTHREAD.%' ORDER BY frame")" -a \
		  "$(chq "$U2" "SELECT function FROM crash_stacks WHERE core LIKE '%.$BTHREAD.%' AND frame = 0")" = \
		  "parse_header(Request const*)" ]
	bsig() { chq "$1" "SELECT signature, signature_hash FROM cores FINAL WHERE path LIKE '%.$BTHREAD.%'"; }
	check "clickhouse: the bthread core's signature names the bthread's frames, as SQLite's" \
		[ "$(bsig "$U1")" = "$(store_q "$DB" "SELECT signature, signature_hash FROM cores WHERE path LIKE '%.$BTHREAD.%'")" -a \
		  "$(bsig "$U1" | cut -d, -f1)" = "SIGSEGV: parse_header < handle_request < crasher" ]
fi
"$ASYNCORE" top --db "$U2" --format html >"$W/top.html" 2>"$W/err"; rc=$?
check "clickhouse: top --format html exits 0" [ $rc -eq 0 ]
check "clickhouse: the bucket page counts every core" grep -q "$N cores in $(($(wc -l <"$W/top.sqlite") - 1)) buckets" "$W/top.html"
check "clickhouse: the bucket page shows an example stack" grep -q "store_dispatch" "$W/top.html"

# Re-ingest: nothing is analysed or written.
dump() {
	local t
	for t in cores modules threads frames tasks task_frames recorders recorder_events warnings \
		ingest_errors; do
		ch_q 1 "SELECT '$t', count() FROM crashes.$t"
	done
	ch_q 1 "SELECT * FROM crashes.cores FINAL ORDER BY fingerprint"
}
dump >"$W/before"
"$ASYNCORE" ingest --db "$U2" --jobs 2 "$W/cores" >"$W/out2" 2>"$W/err2"; rc=$?
dump >"$W/after"
check "clickhouse: re-ingest exits 0" [ $rc -eq 0 ]
check "clickhouse: re-ingest finds every core present" grep -q "^ingested 0, already present $N, failed 0" "$W/out2"
check "clickhouse: re-ingest changes nothing" cmp -s "$W/before" "$W/after"

# A query that would write is refused by the server (readonly=1).
"$ASYNCORE" query --db "$U1" "INSERT INTO cores (fingerprint, path) VALUES ('x', 'y')" >/dev/null 2>"$W/err"; rc=$?
check "clickhouse: an INSERT through query is refused (exit 2)" [ $rc -eq 2 ]
check "clickhouse: the refusal says readonly" grep -qi "readonly" "$W/err"
"$ASYNCORE" query --db "$U1" "DROP TABLE crashes.frames_local" >/dev/null 2>&1; rc=$?
check "clickhouse: a DROP through query is refused" [ $rc -eq 2 ]
check "clickhouse: nothing was written" [ "$(ch_q 1 "SELECT count() FROM crashes.cores WHERE fingerprint = 'x'")" = 0 -a \
	"$(ch_q 1 "EXISTS TABLE crashes.frames_local")" = 1 ]

# The served bucket list (bucket_days, kept by views) against SQLite's when
# a core's row is written again: a retried batch's second copy, a resign
# that moves cores (read exactly until each shard's store init counts its
# bucket_days again).
api_buckets() {   # api_buckets DB OUT
	serve_start "$1" "$W/serve.out" || { cat "$W/serve.out.err" >&2; return 1; }
	curl -s "http://127.0.0.1:$SERVE_PORT/api/buckets" >"$2"
	kill $SERVE_PID; wait $SERVE_PID 2>/dev/null
}
same_buckets() {
	api_buckets "$DB" "$W/api.sqlite"
	api_buckets "$U1" "$W/api.ch"
	python3 -c '
import json, sys
key = lambda b: (b["hash"], b["count"], b["first_seen"], b["last_seen"], sorted(d["day"] + "=" + str(d["count"]) for d in b["days"]))
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert len(a) > 1 and sorted(map(key, a)) == sorted(map(key, b)), (a, b)' "$W/api.sqlite" "$W/api.ch"
}
same_search_in() {   # same_search_in SQLITE URL TERM: /api/search's buckets and cores on both stores
	local db out
	for db in "$1" "$2"; do
		out=$W/search.$([ "$db" = "$1" ] && echo sqlite || echo ch)
		serve_start "$db" "$W/serve.out" || { cat "$W/serve.out.err" >&2; return 1; }
		curl -sS "http://127.0.0.1:$SERVE_PORT/api/search?q=$3" >"$out" ||
			{ echo "serve of $db on port $SERVE_PORT:" >&2; cat "$W/serve.out" "$W/serve.out.err" >&2; }
		kill $SERVE_PID; wait $SERVE_PID 2>/dev/null
	done
	python3 -c '
import json, sys
key = lambda b: (b["hash"], b["count"], b["last_seen"])
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a["buckets"] and a["cores"], a
assert sorted(map(key, a["buckets"])) == sorted(map(key, b["buckets"])), (a["buckets"], b["buckets"])
assert sorted(c["id"] for c in a["cores"]) == sorted(c["id"] for c in b["cores"]), (a["cores"], b["cores"])' \
		"$W/search.sqlite" "$W/search.ch"
}
same_search() {   # same_search TERM: /api/search's buckets and cores on both stores
	same_search_in "$DB" "$U1" "$1"
}
one_group() {   # every core in one group of shard I's bucket_days
	ch_q "$1" "SELECT sum(c) = uniqExactMerge(s) FROM (SELECT uniqExactMerge(n) AS c, uniqExactMergeState(n) AS s
	           FROM crashes.bucket_days_local GROUP BY hash, exe, build, arch, cause, day)"
}
cols=$(ch_q 1 "SELECT arrayStringConcat(groupArray(name), ', ') FROM system.columns
               WHERE database = 'crashes' AND table = 'cores'")
ch_q 1 "INSERT INTO crashes.cores SELECT ${cols/, version, /, version + 1, } FROM crashes.cores FINAL" \
	insert_distributed_sync=1 >"$W/rewrite.out" 2>&1
check "clickhouse: every core's row written again (version + 1)" \
	[ -z "$(cat "$W/rewrite.out")" -a "$(ch_q 1 "SELECT count() = 2 * uniqExact(fingerprint) FROM crashes.cores")" = 1 ]
check "clickhouse: the served buckets' counts after a core's row is written again equal SQLite's" same_buckets
check "clickhouse: ... read from bucket_days (each core in one group)" [ "$(one_group 1)/$(one_group 2)" = 1/1 ]

# Resign: the same summary as SQLite's, and the same buckets after.
mkdir "$W/lists"
printf '@defaults\nstore_dispatch\nstore_parse_header\nparse_header\n' >"$W/lists/skip"
"$ASYNCORE" resign --db "$DB" --signature-lists "$W/lists" >"$W/resign.sqlite" 2>&1
"$ASYNCORE" resign --db "$U2" --signature-lists "$W/lists" >"$W/resign.ch" 2>&1; rc=$?
check "clickhouse: resign exits 0" [ $rc -eq 0 ]
check "clickhouse: resign reports what SQLite's does ($(cat "$W/resign.ch"))" cmp -s "$W/resign.sqlite" "$W/resign.ch"
"$ASYNCORE" top --db "$DB" --format csv >"$W/top2.sqlite"
"$ASYNCORE" top --db "$U1" --format csv >"$W/top2.ch"
check "clickhouse: top after resign equals SQLite's" cmp -s "$W/top2.sqlite" "$W/top2.ch"
check "clickhouse: resign changed the buckets" bash -c '! cmp -s "$1" "$2"' _ "$W/top.ch" "$W/top2.ch"
check "clickhouse: the served buckets' counts after resign equal SQLite's" same_buckets
check "clickhouse: ... a moved core is in two groups of bucket_days until then" [ "$(one_group 1)$(one_group 2)" != 11 ]
check "clickhouse: ... and a search for a moved core's signature finds what SQLite's does" same_search store
"$ASYNCORE" store init --db "$U1" >/dev/null 2>&1 && "$ASYNCORE" store init --db "$U2" >/dev/null 2>&1
check "clickhouse: store init on each shard counts bucket_days again after resign" \
	[ "$(one_group 1)/$(one_group 2)" = 1/1 ]
check "clickhouse: ... and the served buckets' counts still equal SQLite's" same_buckets
check "clickhouse: ... and its searches too" same_search store
[ -n "$BTHREAD" ] &&
	check "clickhouse: resign signs the bthread core with the bthread's frames, as SQLite's" \
		[ "$(bsig "$U2")" = "$(store_q "$DB" "SELECT signature, signature_hash FROM cores WHERE path LIKE '%.$BTHREAD.%'")" -a \
		  "$(bsig "$U2" | cut -d, -f1)" = "SIGSEGV: handle_request < crasher" ]

# Debug info found after ingest: a stripped program's cores stored without
# it, then resign --debug-dir symbolizes their frames again, as on SQLite.
D=$(fixture_build coredump_stripped v1 2>"$W/build.err") || { fail "clickhouse: fixture build: $(tail -1 "$W/build.err")"; D=; }
mkdir "$W/stripped"
for m in a b c; do
	[ -n "$D" ] && c=$(fixture_core "$D" $m 2>/dev/null) && mv "$c" "$W/stripped/core.$m" && rm -rf "$(dirname "$c")"
done
U5="clickhouse://127.0.0.1:${CH_HTTP[1]}/crashes5?cluster=$CH_CLUSTER_NAME"
"$ASYNCORE" store init --db "$U5" && "$ASYNCORE" store init --db "${U5/${CH_HTTP[1]}/${CH_HTTP[2]}}"
"$ASYNCORE" ingest --db "$U5" --quiet "$W/stripped" 2>/dev/null
"$ASYNCORE" ingest --db "$W/s5.db" --quiet "$W/stripped" 2>/dev/null
"$ASYNCORE" resign --db "$W/s5.db" --debug-dir "$D/debug" >"$W/resym.sqlite" 2>&1
"$ASYNCORE" resign --db "$U5" --debug-dir "$D/debug" >"$W/resym.ch" 2>&1; rc=$?
check "clickhouse: resign symbolizes 3 stored cores again ($(head -1 "$W/resym.ch"))" \
	[ $rc -eq 0 -a "$(ls "$W/stripped" | wc -l)" = 3 -a "$(head -c 30 "$W/resym.ch")" = "debug info found for 1 modules" ]
check "clickhouse: ... and reports what SQLite's does" cmp -s "$W/resym.sqlite" "$W/resym.ch"
stack='SELECT core, frame, coalesce(function, '"'-'"'), coalesce(file, '"'-'"'), coalesce(line, 0), inline_depth FROM crash_stacks ORDER BY core, frame'
check "clickhouse: ... crash_stacks with names, lines and inline levels as SQLite's" \
	[ "$(chq "$U5" "$stack" | tr -d '"')" = "$(store_q "$W/s5.db" "$stack" | tr -d '"')" -a \
	  "$(chq "$U5" "SELECT countIf(function = 'put_word') FROM crash_stacks")" = 1 ]
check "clickhouse: ... one row per frame, the counts with them" \
	[ "$(chq "$U5" "SELECT count() FROM frames FINAL")" = "$(store_q "$W/s5.db" "SELECT count(*) FROM frames")" -a \
	  "$(chq "$U5" "SELECT countIf(nframes != f) FROM (SELECT fingerprint, nframes FROM cores FINAL)
	      GLOBAL ALL LEFT JOIN (SELECT fingerprint, sum(nframes) AS f FROM threads FINAL GROUP BY fingerprint)
	      USING fingerprint")" = 0 ]
check "clickhouse: ... the modules name their debug file" \
	[ "$(chq "$U5" "SELECT count() FROM modules FINAL WHERE debuginfo = '$D/debug/prog.debug'")" = 3 ]
"$ASYNCORE" resign --db "$U5" --debug-dir "$D/debug" >"$W/resym2.ch" 2>&1
check "clickhouse: ... a second resign changes nothing" \
	[ "$(cat "$W/resym2.ch")" = "resigned 3 cores, 0 signatures changed; buckets 2 -> 2: 0 merged, 0 split" ]

# The same for a bthread core: its tasks' frames symbolized again as SQLite's.
if BD=$(fixture_build bthread split 2>/dev/null) && c=$(fixture_core "$BD" 2>/dev/null); then
	mkdir "$W/bsplit" && mv "$c" "$W/bsplit/core" && rm -rf "$(dirname "$c")"
	U6="clickhouse://127.0.0.1:${CH_HTTP[1]}/crashes6?cluster=$CH_CLUSTER_NAME"
	"$ASYNCORE" store init --db "$U6" && "$ASYNCORE" store init --db "${U6/${CH_HTTP[1]}/${CH_HTTP[2]}}"
	"$ASYNCORE" ingest --db "$U6" --quiet "$W/bsplit" 2>/dev/null
	"$ASYNCORE" ingest --db "$W/s6.db" --quiet "$W/bsplit" 2>/dev/null
	tf='SELECT task_idx, idx, kind, coalesce(function, '"'-'"'), coalesce(file, '"'-'"'), coalesce(line, 0), inline_depth FROM'
	named="SELECT count(*) FROM task_frames WHERE line > 0"
	before=$(store_q "$W/s6.db" "$named")
	"$ASYNCORE" resign --db "$W/s6.db" --debug-dir "$BD/debug" >/dev/null 2>&1
	"$ASYNCORE" resign --db "$U6" --debug-dir "$BD/debug" >"$W/bresym.ch" 2>&1
	check "clickhouse: resign gives a stored bthread core's task frames their lines ($before -> $(chq "$U6" "$named"))" \
		[ "$before" = 0 -a "$(chq "$U6" "$named")" -gt 0 ]
	check "clickhouse: ... task frames and task frame counts as SQLite's" \
		[ "$(chq "$U6" "$tf (SELECT * FROM task_frames FINAL) ORDER BY task_idx, idx" | tr -d '"')" = \
		  "$(store_q "$W/s6.db" "$tf task_frames ORDER BY task_idx, idx" | tr -d '"')" -a \
		  "$(chq "$U6" "SELECT idx, nframes FROM (SELECT * FROM tasks FINAL) ORDER BY idx" | tr -d '"')" = \
		  "$(store_q "$W/s6.db" "SELECT idx, nframes FROM tasks ORDER BY idx" | tr -d '"')" ]
else
	skip "clickhouse: no split-debug bthread core (task frames symbolized again left out)"
fi

# Stack overflows stored without their program's DWARF, then symbolized
# again: the frames keep the jump over the recursion's run.  mutual gains no
# inline level, so its indexes are SQLite's; inlined gains one a level, and
# ClickHouse, which cannot delete a row, keeps the first frame past the run
# at its stored index (every old row replaced), where SQLite moves it.
if RD=$(fixture_build recursion split 2>/dev/null); then
	mkdir "$W/rec"
	for m in mutual inlined; do
		c=$(ulimit -s 2048 && fixture_core "$RD" $m 2>/dev/null) && mv "$c" "$W/rec/core.$m" &&
			rm -rf "$(dirname "$c")"
	done
	U7="clickhouse://127.0.0.1:${CH_HTTP[1]}/crashes7?cluster=$CH_CLUSTER_NAME"
	"$ASYNCORE" store init --db "$U7" && "$ASYNCORE" store init --db "${U7/${CH_HTTP[1]}/${CH_HTTP[2]}}"
	"$ASYNCORE" ingest --db "$U7" --quiet "$W/rec" 2>/dev/null
	"$ASYNCORE" ingest --db "$W/s7.db" --quiet "$W/rec" 2>/dev/null
	past="SELECT min(frame) FROM crash_stacks WHERE core LIKE '%inlined' AND frame > 100"
	stored=$(chq "$U7" "$past")
	"$ASYNCORE" resign --db "$W/s7.db" --debug-dir "$RD/debug" >/dev/null 2>&1
	"$ASYNCORE" resign --db "$U7" --debug-dir "$RD/debug" >"$W/rec.ch" 2>&1
	rs() { echo "SELECT $1 coalesce(function, '-'), coalesce(line, 0) FROM crash_stacks WHERE core LIKE '%$2' ORDER BY frame"; }
	check "clickhouse: a collapsed stack symbolized again keeps its true indexes, as SQLite's ($(head -1 "$W/rec.ch"))" \
		[ "$(ls "$W/rec" | wc -l)" = 2 -a "$(chq "$U7" "$(rs frame, mutual)" | tr -d '"')" = \
		  "$(store_q "$W/s7.db" "$(rs frame, mutual)" | tr -d '"')" -a \
		  "$(chq "$U7" "SELECT countIf(line > 0) FROM crash_stacks WHERE core LIKE '%mutual'")" -gt 0 ]
	check "clickhouse: ... one row per frame where it gained inline levels, past the run from the stored index ($stored)" \
		[ "$(chq "$U7" "SELECT count() FROM frames FINAL")" = "$(store_q "$W/s7.db" "SELECT count(*) FROM frames")" -a \
		  "$(chq "$U7" "$(rs "" inlined)" | tr -d '"')" = "$(store_q "$W/s7.db" "$(rs "" inlined)" | tr -d '"')" -a \
		  "$(chq "$U7" "$past")" = "$stored" -a "$(store_q "$W/s7.db" "$past")" -gt "${stored:-0}" ]
else
	skip "clickhouse: no split-debug recursion build (collapsed stacks symbolized again left out)"
fi

# Crashes a program's own signal handler caught (fixtures/handler_c), as
# SQLite stores them: the caught fault, the handler, the frames' roles and
# the signatures (the same bug caught or not, one bucket); resign reads the
# roles and the caught signal back and signs each as ingest did.
if store_handler_cores "$W/handler"; then
	U9="clickhouse://127.0.0.1:${CH_HTTP[1]}/crashes9?cluster=$CH_CLUSTER_NAME"
	"$ASYNCORE" store init --db "$U9" && "$ASYNCORE" store init --db "${U9/${CH_HTTP[1]}/${CH_HTTP[2]}}"
	"$ASYNCORE" ingest --db "$U9" --quiet "$W/handler" 2>/dev/null
	"$ASYNCORE" ingest --db "$W/s9.db" --quiet "$W/handler" 2>/dev/null
	caught_cols="signal, caught_signal, caught_signal_name, caught_code, caught_code_name,
		caught_address, handled_by, handler_action, signature, signature_hash"
	caught_q="SELECT core, $caught_cols FROM (SELECT fingerprint, version, replaceAll(path,
		'$W/handler/', '') AS core, $caught_cols FROM cores FINAL) ORDER BY core"
	caught_s="SELECT replace(path, '$W/handler/', '') AS core, $caught_cols FROM cores ORDER BY core"
	check "clickhouse: caught faults and their handlers as SQLite's ($(chq "$U9" "SELECT countIf(isNotNull(handled_by)) FROM cores FINAL") of 6 caught)" \
		[ "$(chq "$U9" "$caught_q" | tr -d '"')" = "$(store_q "$W/s9.db" "$caught_s" | tr -d '"')" -a \
		  "$(chq "$U9" "SELECT uniqExact(signature_hash) FROM cores FINAL")" = 2 -a \
		  "$(chq "$U9" "SELECT countIf(isNotNull(handled_by)) FROM cores FINAL")" = 4 ]
	roles_c="SELECT core, frame, ifNull(role, '-') FROM (SELECT fingerprint, thread_idx, idx AS frame,
		role FROM frames FINAL) ALL INNER JOIN (SELECT fingerprint, replaceAll(path, '$W/handler/', '')
		AS core FROM cores FINAL) USING fingerprint ORDER BY core, thread_idx, frame"
	roles_q="SELECT core, frame, coalesce(role, '-') FROM (SELECT replace(c.path, '$W/handler/', '')
		AS core, f.thread_idx, f.idx AS frame, f.role AS role FROM frames f JOIN cores c ON
		c.id = f.core_id) ORDER BY core, thread_idx, frame"
	check "clickhouse: ... the frames' roles as SQLite's ($(chq "$U9" "SELECT count() FROM frames FINAL WHERE isNotNull(role)") with one)" \
		[ "$(chq "$U9" "$roles_c" | tr -d '"')" = "$(store_q "$W/s9.db" "$roles_q" | tr -d '"')" -a \
		  "$(chq "$U9" "SELECT countIf(role = 'crash_site') FROM frames FINAL")" = 4 ]
	"$ASYNCORE" resign --db "$U9" >"$W/resign9.ch" 2>&1; rc=$?
	check "clickhouse: ... resign signs them as ingest did ($(head -1 "$W/resign9.ch"))" \
		[ $rc -eq 0 -a -n "$(grep "^resigned 6 cores, 0 signatures changed" "$W/resign9.ch")" ]
	mkdir -p "$W/lists9"
	printf '@defaults\nsettle\n' >"$W/lists9/skip"
	"$ASYNCORE" resign --db "$W/s9.db" --signature-lists "$W/lists9" >"$W/resign9.sqlite" 2>&1
	"$ASYNCORE" resign --db "$U9" --signature-lists "$W/lists9" >"$W/resign9.ch" 2>&1
	check "clickhouse: ... with other lists, as SQLite's resign ($(head -1 "$W/resign9.ch"))" \
		[ "$(chq "$U9" "$caught_q" | tr -d '"')" = "$(store_q "$W/s9.db" "$caught_s" | tr -d '"')" -a \
		  "$(cat "$W/resign9.sqlite")" = "$(cat "$W/resign9.ch")" ]
else
	skip "clickhouse: no fixtures/handler_c cores (crash handlers left out)"
fi

# Go crashes: their core's signal is the runtime's SIGABRT, the Go crash
# columns say what killed them.  Two stored cores made Go crashes (a
# fatal error, a panic from SIGBUS) on both stores, their signatures
# stale: resign signs them as the analysis does, as SQLite's resign.
U10="clickhouse://127.0.0.1:${CH_HTTP[1]}/crashes10?cluster=$CH_CLUSTER_NAME"
"$ASYNCORE" store init --db "$U10" && "$ASYNCORE" store init --db "${U10/${CH_HTTP[1]}/${CH_HTTP[2]}}"
two=$(ls "$W/cores" | LC_ALL=C sort | head -2 | sed "s|^|$W/cores/|")
"$ASYNCORE" ingest --db "$U10" --quiet $two 2>/dev/null
"$ASYNCORE" ingest --db "$W/s10.db" --quiet $two 2>/dev/null
fatal=$(ls "$W/cores" | LC_ALL=C sort | head -1)
is_fatal="CASE WHEN path LIKE '%$fatal' THEN"
declare -A go_set=(
	[go_crash]="$is_fatal 'fatal error' ELSE 'panic' END"
	[go_signal]="$is_fatal NULL ELSE 7 END"
	[go_signal_name]="$is_fatal NULL ELSE 'SIGBUS' END"
	[go_message]="$is_fatal 'fatal error: concurrent map writes' ELSE 'panic: bus error' END"
	[signal]=6 [signal_name]="'SIGABRT'" [signature]="'stale'" [signature_hash]="'0'"
)
set_list=
for c in "${!go_set[@]}"; do set_list="$set_list, $c = ${go_set[$c]}"; done
sqlite3 "$W/s10.db" "UPDATE cores SET ${set_list#, }"
# Each shard's cores written again, a newer version of each row.
for i in 1 2; do
	cols= sel=
	for c in $(ch_q $i "SELECT name FROM system.columns WHERE database = 'crashes10' AND
			table = 'cores_local'"); do
		e=${go_set[$c]:-$c}
		[ "$c" = version ] && e="version + 1"
		cols="$cols, $c" sel="$sel, $e"
	done
	ch_q $i "INSERT INTO crashes10.cores_local (${cols#, }) SELECT ${sel#, }
		FROM crashes10.cores_local FINAL" >/dev/null ||
		fail "clickhouse: making shard $i's cores Go crashes"
done
"$ASYNCORE" resign --db "$W/s10.db" >"$W/resign10.sqlite" 2>&1
"$ASYNCORE" resign --db "$U10" >"$W/resign10.ch" 2>&1; rc=$?
go_cols="go_crash, go_signal, go_signal_name, go_message, signature, signature_hash"
got=$(chq "$U10" "SELECT $go_cols FROM (SELECT fingerprint, version, $go_cols FROM cores FINAL)
	ORDER BY go_crash" | tr -d '"')
check "clickhouse: resign signs Go crashes with their panic's signal or the runtime's word ($(head -1 "$W/resign10.ch"))" \
	[ $rc -eq 0 -a "$got" = "$(store_q "$W/s10.db" "SELECT $go_cols FROM cores ORDER BY go_crash" | tr -d '"')" -a \
	  "$(echo "$got" | cut -d, -f5 | cut -d: -f1 | tr '\n' ' ')" = "fatal error SIGBUS " ]

# Hangs (reports/SCHEMA.md blocked_on, deadlocks): the cores of a deadlock
# and of a pool whose lock holder reads a pipe (tests/hang_lib.sh) beside a
# crash's, and an asyncio core, stored as their reports say (each thread's
# and task's blocked_on, each deadlock, each task's frames); hang_waits and
# top (its hang column) are SQLite's; the served buckets say which are
# hangs as SQLite's do; each hang core read back from ClickHouse alone says
# what its report says.  A store made before tasks.name and task_frames'
# runtime and detail gets them from store init.
HCHECK="python3 $ROOT/tests/hang_store_check.py"
hang_verdict() {   # hang_verdict NAME OUT: the checker's lines as one PASS or FAIL
	if grep -q '^unreadable' "$2" || ! grep -q '^ok ' "$2"; then fail "$1: $(head -2 "$2" | tr '\n' ' ')"
	elif grep -q '^bad ' "$2"; then fail "$1: $(grep '^bad ' "$2" | head -3 | tr '\n' ' ')"
	else pass "$1: $(grep -c '^ok ' "$2") facts agree"; fi
}
hang_rows() {   # hang_rows FINGERPRINT TABLE ORDER OUT: the core's rows on ClickHouse as JSON
	"$ASYNCORE" query --db "$UH" --format json "SELECT * FROM $2 FINAL WHERE fingerprint = '$1'
		ORDER BY $3" >"$4" 2>"$4.err"
}
UH="clickhouse://127.0.0.1:${CH_HTTP[1]}/crasheshang?cluster=$CH_CLUSTER_NAME"
if command -v gdb >/dev/null && HD=$(fixture_build hangs 2>"$W/build.err") &&
   hang_store_cores "$HD/prog" "$W/hang"; then
	cp "$W/cores/$(ls "$W/cores" | head -1)" "$W/hang/crash.core"
	mkdir "$W/hangpy"
	if [ -x /usr/bin/python3.11 ] && hang_asyncio_core /usr/bin/python3.11 "$W/hangpy/run"; then
		mv "$CORE" "$W/hangpy/asyncio.core"
	fi
	"$ASYNCORE" store init --db "$UH" && "$ASYNCORE" store init --db "${UH/${CH_HTTP[1]}/${CH_HTTP[2]}}"
	for db in "$UH" "$W/sh.db"; do
		"$ASYNCORE" ingest --db "$db" --quiet "$W/hang" 2>>"$W/hang.err"
		[ -f "$W/hangpy/asyncio.core" ] &&
			"$ASYNCORE" ingest --db "$db" --quiet --binary /usr/bin/python3.11 "$W/hangpy/asyncio.core" 2>>"$W/hang.err"
	done
	for c in "$W"/hang/*.core "$W"/hangpy/*.core; do
		[ -f "$c" ] || continue
		m=$(basename "$c" .core) r=$W/hangrows-$(basename "$c" .core)
		mkdir -p "$r"
		bin=; [ $m = asyncio ] && bin=/usr/bin/python3.11
		"$ASYNCORE" report "$c" $bin --threads all --format json >"$r/report.json" 2>/dev/null
		fp=$(json_get "$r/report.json" 'j["core"]["fingerprint"]')
		hang_rows "$fp" blocked_on "waiter, waiter_idx" "$r/blocked.json"
		hang_rows "$fp" deadlocks idx "$r/deadlocks.json"
		hang_rows "$fp" deadlock_members "deadlock_idx, pos" "$r/members.json"
		hang_rows "$fp" tasks idx "$r/tasks.json"
		hang_rows "$fp" task_frames "task_idx, idx" "$r/frames.json"
		$HCHECK rows "$r/report.json" "$r/blocked.json" "$r/deadlocks.json" "$r/members.json" \
			"$r/tasks.json" "$r/frames.json" >"$r/check" 2>&1
		hang_verdict "clickhouse: the $m core's stored rows are its report's" "$r/check"
		[ $m = crash ] && continue
		serve_start "$UH" "$W/serve.out" &&
			curl -s "http://127.0.0.1:$SERVE_PORT/api/core/$fp" >"$r/back.json"
		kill $SERVE_PID; wait $SERVE_PID 2>/dev/null
		$HCHECK loaded "$r/report.json" "$r/back.json" >"$r/back.check" 2>&1
		hang_verdict "clickhouse: the $m core read back from ClickHouse alone says what its report says" "$r/back.check"
	done
	hw="core, waiter, waiter_idx, tid, kind, object, object_name, owner_tid, owner_gone, syscall, fd,
		fd_target, since, function, summary, deadlock"
	chq "$UH" "SELECT $hw FROM hang_waits" | LC_ALL=C sort >"$W/hw.ch"
	store_q "$W/sh.db" "SELECT $hw FROM hang_waits" | LC_ALL=C sort >"$W/hw.sqlite"
	check "clickhouse: hang_waits has SQLite's rows ($(wc -l <"$W/hw.sqlite") rows; $(diff "$W/hw.sqlite" "$W/hw.ch" | head -3 | tr '\n' ' '))" \
		bash -c '[ -s "$1" ] && cmp -s "$1" "$2" && [ "$3" -ge 2 ]' _ "$W/hw.sqlite" "$W/hw.ch" \
		"$(store_q "$W/sh.db" "SELECT count(DISTINCT core_id) FROM hang_waits")"
	"$ASYNCORE" top --db "$W/sh.db" --format csv >"$W/tophang.sqlite"
	"$ASYNCORE" top --db "$UH" --format csv >"$W/tophang.ch"
	HANGCOL=$(python3 -c 'import csv, sys; print(" ".join(sorted(set(r["hang"] for r in csv.DictReader(open(sys.argv[1]))))))' "$W/tophang.ch")
	check "clickhouse: top with hangs equals SQLite's, hang column and all (hang values: $HANGCOL; $(diff "$W/tophang.sqlite" "$W/tophang.ch" | head -3 | tr '\n' ' '))" \
		bash -c 'cmp -s "$1" "$2" && [ "$3" = "0 1" ]' _ "$W/tophang.sqlite" "$W/tophang.ch" "$HANGCOL"
	api_buckets "$W/sh.db" "$W/apihang.sqlite"
	api_buckets "$UH" "$W/apihang.ch"
	check "clickhouse: the served buckets say which are hangs, as SQLite's" python3 -c '
import json, sys
a, b = (sorted((x["hash"], x["hang"]) for x in json.load(open(p))) for p in sys.argv[1:3])
assert a == b and {h for _, h in a} == {True, False}, (a, b)' "$W/apihang.sqlite" "$W/apihang.ch"
	# A store made before tasks.name and task_frames' runtime and detail.
	for i in 1 2; do
		for t in tasks tasks_local; do
			ch_q $i "ALTER TABLE crasheshang.$t DROP COLUMN name" >/dev/null ||
				fail "clickhouse: dropping $t.name on shard $i"
		done
		for t in task_frames task_frames_local; do
			for c in runtime detail; do
				ch_q $i "ALTER TABLE crasheshang.$t DROP COLUMN $c" >/dev/null ||
					fail "clickhouse: dropping $t.$c on shard $i"
			done
		done
	done
	"$ASYNCORE" store init --db "$UH" 2>"$W/err" &&
		"$ASYNCORE" store init --db "${UH/${CH_HTTP[1]}/${CH_HTTP[2]}}" 2>>"$W/err"; rc=$?
	have=0
	for i in 1 2; do
		have=$((have + $(ch_q $i "SELECT count() FROM system.columns WHERE database = 'crasheshang' AND
			((table IN ('tasks', 'tasks_local') AND name = 'name') OR
			 (table IN ('task_frames', 'task_frames_local') AND name IN ('runtime', 'detail')))")))
	done
	check "clickhouse: store init adds tasks.name and task_frames' runtime and detail to an older store ($have of 12, exit $rc)" \
		[ $rc -eq 0 -a "$have" = 12 ]
	check "clickhouse: ... NULL for the rows stored then" \
		[ "$(chq "$UH" "SELECT count() FROM task_frames FINAL WHERE isNotNull(runtime) OR isNotNull(detail)")" = 0 ]
else
	skip "clickhouse: no core of a hung fixture (the hang checks are left out)"
fi

# A shard killed during an ingest, back within the retries: nothing lost.
# The worker that takes the batch's last core is held there (the hooks
# program) while the shard is killed: the batch it holds is written, and
# retried, while the shard is down.
U3="clickhouse://127.0.0.1:${CH_HTTP[1]}/crashes3?cluster=$CH_CLUSTER_NAME"
"$ASYNCORE" store init --db "$U3" && "$ASYNCORE" store init --db "${U3/${CH_HTTP[1]}/${CH_HTTP[2]}}"
last=$(ls "$W/cores" | LC_ALL=C sort | tail -1)
if have_hooks; then
	hold_cores "$W/hold-down" "$last"
	ASYNCORE_TEST_HOLD=$W/hold-down "$ASYNCORE_HOOKS" ingest --db "$U3" --jobs 2 "$W/cores" \
		>"$W/out3" 2>"$W/err3" &
	ing=$!
	hold_wait "$W/hold-down" "$last" >/dev/null
	ch_kill 2
	hold_release "$W/hold-down" "$last"
else
	"$ASYNCORE" ingest --db "$U3" --jobs 2 "$W/cores" >"$W/out3" 2>"$W/err3" &
	ing=$!
	ch_kill 2
fi
sleep 3   # the shard's time down, well within the retries (about 16 s)
ch_start 2
wait $ing; rc=$?
check "clickhouse: a shard back within the retries: ingest exits 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || sed 's/^/    /' "$W/err3" | head -5
check "clickhouse: ... and stored every core" \
	[ "$(chq "$U3" "SELECT count() FROM cores FINAL")" = "$N" ]

# A shard killed during an ingest and kept down: the batch's cores are
# reported failed (exit 1), none is half-visible; a rerun completes them.
U4="clickhouse://127.0.0.1:${CH_HTTP[1]}/crashes4?cluster=$CH_CLUSTER_NAME"
"$ASYNCORE" store init --db "$U4" && "$ASYNCORE" store init --db "${U4/${CH_HTTP[1]}/${CH_HTTP[2]}}"
"$ASYNCORE" ingest --db "$U4" --jobs 2 "$W/cores" >"$W/out4" 2>"$W/err4" &
ing=$!
ch_kill 2
wait $ing; rc=$?
check "clickhouse: a shard down: ingest exits 1" [ $rc -eq 1 ]
check "clickhouse: ... every core reported not stored" [ "$(grep -c ': not stored: ' "$W/err4")" = "$N" ]
check "clickhouse: ... the summary counts them failed" grep -q "^ingested 0, already present 0, failed $N of $N" "$W/out4"
check "clickhouse: ... no core visible on the live shard" \
	[ "$(ch_q 1 "SELECT count() FROM crashes4.cores_local FINAL")" = 0 ]
ch_start 2
"$ASYNCORE" ingest --db "$U4" --jobs 2 "$W/cores" >"$W/out5" 2>"$W/err5"; rc=$?
check "clickhouse: the rerun exits 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || sed 's/^/    /' "$W/err5" | head -5
check "clickhouse: the rerun stores every core" grep -q "^ingested $N, already present 0, failed 0" "$W/out5"
"$ASYNCORE" top --db "$U4" --format csv >"$W/top4.ch"
check "clickhouse: after the rerun the buckets are SQLite's" cmp -s "$W/top.sqlite" "$W/top4.ch"
check "clickhouse: one row per core and frame through FINAL" \
	[ "$(chq "$U4" "SELECT count() FROM frames FINAL")" = "$(store_q "$DB" "SELECT count(*) FROM frames")" ]

# A worker killed with cores in its batch (256 cores a batch: the workers
# hold every core they finish until they end): the cores it held are not
# lost without a word.  Each is stored or in ingest_errors, the batch exits
# 1, and a rerun completes it.  One worker, held at core 60 by the hooks
# program (tests/hooks/hold.c) and killed there, holds the 60 before it.
UK="clickhouse://127.0.0.1:${CH_HTTP[1]}/crasheskill?cluster=$CH_CLUSTER_NAME"
"$ASYNCORE" store init --db "$UK" && "$ASYNCORE" store init --db "${UK/${CH_HTTP[1]}/${CH_HTTP[2]}}"
mkdir "$W/kill"
NK=100
store_clone_cores "$(ls "$W"/cores/* | head -1)" "$W/kill" $NK || fail "clickhouse: cloning cores"
mid_batch() {
	hold_cores "$W/hold" clone-00060.core
	ASYNCORE_TEST_HOLD=$W/hold "$ASYNCORE_HOOKS" ingest --db "$UK" --jobs 1 "$W/kill" >"$W/out6" 2>"$W/err6" &
	ing=$!
	victim=$(hold_wait "$W/hold" clone-00060.core)
	[ -n "$victim" ] && kill -KILL "$victim"
	wait $ing; rc=$?
	held=$(grep -c 'not stored: its worker ended (killed by SIGKILL while analysing) before the batch holding it was written$' "$W/err6")
	check "clickhouse: a worker killed holding a batch: exit 1 (exit $rc)" [ -n "$victim" -a $rc -eq 1 ]
	check "clickhouse: ... the cores it held are said not stored ($held)" [ "$held" = 60 ]
	check "clickhouse: ... its core and those it held counted failed" \
		grep -q "^ingested $((NK - held - 1)), already present 0, failed $((held + 1)) of $NK cores" "$W/out6"
	stored=$(chq "$UK" "SELECT count() FROM cores FINAL")
	errors=$(chq "$UK" "SELECT count() FROM ingest_errors FINAL WHERE resolved = 0")
	both=$(chq "$UK" "SELECT count() FROM ingest_errors FINAL WHERE resolved = 0 AND fingerprint GLOBAL IN (SELECT fingerprint FROM cores FINAL)")
	check "clickhouse: ... every core stored or in ingest_errors ($stored + $errors of $NK), none both ($both)" \
		[ $((stored + errors)) -eq $NK -a "$both" = 0 ]
	"$ASYNCORE" ingest --db "$UK" --jobs 2 "$W/kill" >"$W/out7" 2>"$W/err7"; rc=$?
	check "clickhouse: ... a rerun stores them (exit $rc)" \
		grep -q "^ingested $((held + 1)), already present $((NK - held - 1)), failed 0" "$W/out7"
	check "clickhouse: ... then all $NK are in and no error is left" \
		[ "$(chq "$UK" "SELECT count() FROM cores FINAL")/$(chq "$UK" "SELECT count() FROM ingest_errors FINAL WHERE resolved = 0")" = "$NK/0" ]

	# SIGTERM in the middle of a batch: exit 130, no worker left; the workers
	# finish their core and write their batches, so the cores they finished
	# stay (none listed as failed); a rerun completes the batch.  Both workers
	# are held (cores 60 and 61) when the signal comes, and go on after it.
	UT="clickhouse://127.0.0.1:${CH_HTTP[1]}/crashesterm?cluster=$CH_CLUSTER_NAME"
	"$ASYNCORE" store init --db "$UT" && "$ASYNCORE" store init --db "${UT/${CH_HTTP[1]}/${CH_HTTP[2]}}"
	hold_cores "$W/hold-term" clone-00060.core clone-00061.core
	ASYNCORE_TEST_HOLD=$W/hold-term "$ASYNCORE_HOOKS" ingest --db "$UT" --jobs 2 "$W/kill" >"$W/out8" 2>"$W/err8" &
	ing=$!
	ws=$(hold_wait "$W/hold-term" clone-00060.core; hold_wait "$W/hold-term" clone-00061.core)
	kill -TERM $ing
	hold_release "$W/hold-term" clone-00060.core
	hold_release "$W/hold-term" clone-00061.core
	wait $ing; rc=$?
	left=""
	for p in $ws; do [ -e "/proc/$p" ] && [ "$(awk '{print $3}' "/proc/$p/stat")" != Z ] && left="$left $p"; done
	check "clickhouse: SIGTERM mid-batch: exit 130, no worker left (exit $rc${left:+, left:$left})" [ $rc -eq 130 -a -z "$left" ]
	stored=$(chq "$UT" "SELECT count() FROM cores FINAL")
	errors=$(chq "$UT" "SELECT count() FROM ingest_errors FINAL WHERE resolved = 0")
	check "clickhouse: ... the cores finished stay, the rest not started ($stored of $NK, $errors failed)" \
		[ "$stored" -ge 62 -a "$stored" -lt $NK -a "$errors" = 0 ]
	check "clickhouse: ... the summary says so" grep -q "interrupted, the rest not started" "$W/out8"
	"$ASYNCORE" ingest --db "$UT" --jobs 2 --quiet "$W/kill" 2>/dev/null; rc=$?
	check "clickhouse: ... a rerun completes the batch (exit $rc)" \
		[ "$rc/$(chq "$UT" "SELECT count() FROM cores FINAL")/$(chq "$UT" "SELECT count() FROM ingest_errors FINAL WHERE resolved = 0")" = "0/$NK/0" ]
}
if have_hooks; then
	mid_batch
else
	skip "clickhouse: mid-batch: no program with test hooks at '$ASYNCORE_HOOKS' (make unit builds it)"
fi

# Bytes from a core that are not UTF-8 (an executable path with 0xff and an
# escape sequence) are stored as the JSON report has them (U+FFFD for each
# invalid byte), and query's table escapes them.
python3 "$ROOT/tests/corrupt_core.py" "$W/kill/clone-00000.core" "$W/bytes.core" nt-file-bytes
"$ASYNCORE" report "$W/bytes.core" --format json >"$W/bytes.json" 2>/dev/null
fp=$(json_get "$W/bytes.json" 'j["core"]["fingerprint"]')
"$ASYNCORE" ingest --db "$UK" --quiet "$W/bytes.core" 2>/dev/null; rc=$?
check "clickhouse: the core with bytes that are not UTF-8 is stored (exit $rc)" [ $rc -le 1 ]
check "clickhouse: ... its module path as the JSON report has it (U+FFFD)" \
	[ "$(chq "$UK" "SELECT path FROM modules FINAL WHERE fingerprint = '$fp' AND idx = 0")" = \
	  "$(json_get "$W/bytes.json" 'j["modules"][0]["path"]')" ]
"$ASYNCORE" query --db "$UK" "SELECT path FROM modules FINAL WHERE fingerprint = '$fp' AND idx = 0" >"$W/bytes.txt"
check "clickhouse: ... query's table escapes the escape sequence" grep -qF '\x1b[2J' "$W/bytes.txt"


# An aarch64 core (elfutils' kernel core, fixtures/aarch64) beside an x86_64
# one: its machine, threads and frames stored as SQLite stores them (each
# core inserted once: no FINAL, which this server's sorting refuses here).
U8="clickhouse://127.0.0.1:${CH_HTTP[1]}/crashes8?cluster=$CH_CLUSTER_NAME"
mkdir "$W/arch"
bzip2 -dc "$ROOT/fixtures/aarch64/backtrace.aarch64.core.bz2" >"$W/arch/aarch64.core"
bzip2 -dc "$ROOT/fixtures/aarch64/backtrace.aarch64.exec.bz2" >"$W/arch/backtrace-child"
cp "$W/stripped/core.a" "$W/arch/x86_64.core" 2>/dev/null
"$ASYNCORE" store init --db "$U8" && "$ASYNCORE" store init --db "${U8/${CH_HTTP[1]}/${CH_HTTP[2]}}"
"$ASYNCORE" ingest --db "$U8" --quiet --binary "$W/arch/backtrace-child" "$W/arch/aarch64.core" 2>/dev/null
"$ASYNCORE" ingest --db "$W/s8.db" --quiet --binary "$W/arch/backtrace-child" "$W/arch/aarch64.core" 2>/dev/null
"$ASYNCORE" ingest --db "$U8" --quiet "$W/arch/x86_64.core" 2>/dev/null
"$ASYNCORE" ingest --db "$W/s8.db" --quiet "$W/arch/x86_64.core" 2>/dev/null
arch_q='SELECT arch, nthreads, nframes, signature FROM cores ORDER BY arch'
ch8=$(chq "$U8" "$arch_q" | tr -d '"')
sq8=$(store_q "$W/s8.db" "$arch_q" | tr -d '"')
if [ "$ch8" = "$sq8" ] && [ "$(echo "$sq8" | cut -d, -f1 | paste -sd' ')" = "aarch64 x86_64" ]; then
	pass "clickhouse: an aarch64 core beside an x86_64 one, stored as SQLite stores them"
else
	fail "clickhouse: an aarch64 core beside an x86_64 one: ClickHouse '$ch8', SQLite '$sq8'"
fi
stack8='SELECT frame, coalesce(function, '"'-'"'), coalesce(module, '"'-'"') FROM crash_stacks ORDER BY core, frame'
check "clickhouse: ... the crash_stacks of both as SQLite's" \
	[ "$(chq "$U8" "$stack8" | tr -d '"')" = "$(store_q "$W/s8.db" "$stack8" | tr -d '"')" -a \
	  "$(store_q "$W/s8.db" "SELECT count(*) FROM crash_stacks WHERE function = 'sigusr2'")" = 1 ]

# Term sets (reports/store_rows.h): each core's term set names its search
# names (its frames' and task frames' functions, modules and files, its
# cause summary), term_names holds each set's names, set_days counts each
# set's cores as bucket_days counts a bucket's.  After the ingests, store
# init on a store made before term sets, and a resign that symbolizes
# frames again: every core has a set whose names are its own, and set_days
# counts what cores FINAL holds, each core in one group.
core_names() {   # core_names DB: each core's search names, from its stored rows
	local names="arrayJoin(arrayFilter(x -> x != '', [ifNull(function, ''), ifNull(module, ''), ifNull(file, '')]))"
	echo "SELECT fingerprint, arraySort(groupUniqArray(name)) AS names FROM
		(SELECT fingerprint, $names AS name FROM $1.frames FINAL
		 UNION ALL SELECT fingerprint, $names AS name FROM $1.task_frames FINAL
		 UNION ALL SELECT fingerprint, s AS name FROM (SELECT fingerprint, ifNull(cause_summary, '') AS s,
		   version FROM $1.cores FINAL) WHERE s != '')
		GROUP BY fingerprint"
}
term_sets() {   # term_sets DB: "SETS CORES WRONG", a set wrong when it is '', its cores' names differ or term_names has others
	ch_q 1 "SELECT count(), sum(cores), countIf(term_set = '' OR variants != 1 OR core_names != stored) FROM
		(SELECT term_set, uniqExact(arrayStringConcat(names, '\n')) AS variants, any(names) AS core_names,
		  count() AS cores FROM
		  (SELECT fingerprint, term_set FROM (SELECT fingerprint, term_set, version FROM $1.cores FINAL))
		  GLOBAL ANY LEFT JOIN ($(core_names "$1")) USING fingerprint
		 GROUP BY term_set)
		GLOBAL ANY LEFT JOIN (SELECT term_set, arraySort(groupUniqArray(name)) AS stored FROM $1.term_names
		 GROUP BY term_set) USING term_set" | tr '\t' ' '
}
set_days_wrong() {   # set_days_wrong DB: groups whose count or last crash set_days and cores FINAL disagree on
	local key="term_set, hash, exe, build, arch, cause, day" seen="ifNull(ifNull(crashed_at, file_mtime), '')"
	ch_q 1 "SELECT count() FROM (SELECT $key FROM
		(SELECT $key, uniqExactMerge(n) AS c, maxMerge(last_at) AS l FROM $1.set_days GROUP BY $key
		 UNION ALL
		 SELECT term_set, ifNull(signature_hash, '') AS hash, ifNull(executable, '') AS exe,
		  ifNull(build_id, '') AS build, arch, ifNull(cause_kind, '') AS cause, substring($seen, 1, 10) AS day,
		  count() AS c, max($seen) AS l FROM (SELECT * FROM $1.cores FINAL) GROUP BY $key)
		GROUP BY $key, c, l HAVING count() != 2)"
}
counted_once() {   # counted_once I TABLE: every core in one group of server I's set_days TABLE
	ch_q "$1" "SELECT sum(c) = uniqExactMerge(s) FROM (SELECT uniqExactMerge(n) AS c, uniqExactMergeState(n) AS s
	           FROM $2 GROUP BY term_set, hash, exe, build, arch, cause, day)"
}
sets=$(term_sets crashes)
check "clickhouse: every core has a term set whose names term_names holds, its own ($sets: sets, cores, wrong)" \
	[ "${sets#* }" = "$N 0" -a "${sets%% *}" -gt 1 ]
check "clickhouse: ... set_days counts each set's cores as cores FINAL holds them, each core once on each shard" \
	[ "$(set_days_wrong crashes)/$(counted_once 1 crashes.set_days_local)/$(counted_once 2 crashes.set_days_local)" = 0/1/1 ]

# A store made before term sets: its cores without term_set, no term_names
# and set_days, its search_terms (the index they replace) there.
U11="clickhouse://127.0.0.1:${CH_HTTP[1]}/crashes11?cluster=$CH_CLUSTER_NAME"
"$ASYNCORE" store init --db "$U11" && "$ASYNCORE" store init --db "${U11/${CH_HTTP[1]}/${CH_HTTP[2]}}"
"$ASYNCORE" ingest --db "$U11" --quiet "$W/cores" 2>/dev/null
sets_q="SELECT fingerprint, term_set FROM (SELECT fingerprint, term_set, version FROM crashes11.cores FINAL) ORDER BY fingerprint"
ch_q 1 "$sets_q" >"$W/sets.ingest"
for i in 1 2; do
	for t in set_days_mv set_days set_days_local term_names term_names_local; do
		ch_q $i "DROP TABLE crashes11.$t" >/dev/null || fail "clickhouse: dropping crashes11.$t on shard $i"
	done
	for t in cores cores_local; do
		ch_q $i "ALTER TABLE crashes11.$t DROP COLUMN term_set" >/dev/null ||
			fail "clickhouse: dropping crashes11.$t.term_set on shard $i"
	done
	{ ch_q $i "CREATE TABLE crashes11.search_terms_local (name String, fingerprint String)
		ENGINE = ReplacingMergeTree ORDER BY (name, fingerprint)" &&
	  ch_q $i "CREATE TABLE crashes11.search_terms AS crashes11.search_terms_local
		ENGINE = Distributed($CH_CLUSTER_NAME, crashes11, search_terms_local)" &&
	  ch_q $i "CREATE MATERIALIZED VIEW crashes11.search_terms_frames_mv TO crashes11.search_terms_local AS
		SELECT DISTINCT assumeNotNull(function) AS name, fingerprint FROM crashes11.frames_local
		WHERE isNotNull(function)"; } >/dev/null || fail "clickhouse: making shard $i's search_terms"
done
"$ASYNCORE" store init --db "$U11" 2>"$W/err" && "$ASYNCORE" store init --db "${U11/${CH_HTTP[1]}/${CH_HTTP[2]}}" 2>>"$W/err"; rc=$?
[ $rc -eq 0 ] || sed 's/^/    /' "$W/err"
ch_q 1 "$sets_q" >"$W/sets.init"
same=$(cmp -s "$W/sets.ingest" "$W/sets.init" && echo same)
check "clickhouse: store init gives the cores of a store made before term sets the sets ingest gives them (exit $rc)" \
	[ $rc -eq 0 -a "$(wc -l <"$W/sets.ingest")" = "$N" -a "$same" = same ]
sets=$(term_sets crashes11)
check "clickhouse: ... term_names holds their names ($sets)" [ "${sets#* }" = "$N 0" ]
check "clickhouse: ... set_days counts them as cores FINAL holds them, each core once on each shard" \
	[ "$(set_days_wrong crashes11)/$(counted_once 1 crashes11.set_days_local)/$(counted_once 2 crashes11.set_days_local)" = 0/1/1 ]
check "clickhouse: ... search_terms and its view are gone from both shards" \
	[ "$(ch_q 1 "SELECT count() FROM system.tables WHERE database = 'crashes11' AND name LIKE 'search_terms%'")/$(
	     ch_q 2 "SELECT count() FROM system.tables WHERE database = 'crashes11' AND name LIKE 'search_terms%'")" = 0/0 ]

# Resign symbolizing frames again: the cores get the sets of their new
# names; on one server resign counts set_days again, on a cluster each
# shard's store init does.
if [ -n "$D" ]; then
	U13="clickhouse://127.0.0.1:${CH_HTTP[1]}/crashes13"
	"$ASYNCORE" store init --db "$U13"
	"$ASYNCORE" ingest --db "$U13" --quiet "$W/stripped" 2>/dev/null
	sets_q="SELECT fingerprint, term_set FROM (SELECT fingerprint, term_set, version FROM crashes13.cores FINAL) ORDER BY fingerprint"
	ch_q 1 "$sets_q" >"$W/sets13.before"
	"$ASYNCORE" resign --db "$U13" --debug-dir "$D/debug" >"$W/resign13" 2>&1; rc=$?
	ch_q 1 "$sets_q" >"$W/sets13.after"
	moved=$(paste "$W/sets13.before" "$W/sets13.after" | awk '$1 == $3 && $2 != $4' | wc -l)
	check "clickhouse: resign gives the 3 cores whose frames it symbolizes again new term sets ($moved; $(head -1 "$W/resign13"))" \
		[ $rc -eq 0 -a "$moved" = 3 ]
	sets=$(term_sets crashes13)
	check "clickhouse: ... term_names holds their names ($sets)" [ "${sets#* }" = "3 0" ]
	check "clickhouse: ... on one server, resign counts set_days again: as cores FINAL holds them, each core once" \
		[ "$(set_days_wrong crashes13)/$(counted_once 1 crashes13.set_days)" = 0/1 ]
	check "clickhouse: ... on a cluster, a core given a new set is in two groups of set_days until store init" \
		[ "$(counted_once 1 crashes5.set_days_local)$(counted_once 2 crashes5.set_days_local)" != 11 ]
	"$ASYNCORE" store init --db "$U5" && "$ASYNCORE" store init --db "${U5/${CH_HTTP[1]}/${CH_HTTP[2]}}"
	sets=$(term_sets crashes5)
	check "clickhouse: ... then each shard's set_days counts them as cores FINAL holds them ($sets)" \
		[ "${sets#* }/$(set_days_wrong crashes5)/$(counted_once 1 crashes5.set_days_local)/$(counted_once 2 crashes5.set_days_local)" = "3 0/0/1/1" ]
fi

# The marks (aggregate_marks, reports/store_ch_served.c): a served search
# takes the aggregates as exact only when each shard's newest "rebuilt"
# mark is at or after the newest mark that may have left them inexact
# (resign's "rewriting" and "rewritten", for every shard), without merging
# their states.  A resign on the cluster that moves cores: marked inexact,
# and a search served reads cores (SQLite's answer) until store init has
# run on each shard.
marks_exact() {   # marks_exact DB SHARDS: 1 when DB's marks say its aggregates are exact on SHARDS (['1','2'], or [''])
	ch_q 1 "WITH $2 AS shards, (SELECT maxIf(at, kind != 'rebuilt' AND shard = '') FROM $1.aggregate_marks) AS every
		SELECT countIf(has(shards, shard) AND r < greatest(d, every)) = 0
		 AND (every = 0 OR countIf(has(shards, shard)) = length(shards)) FROM
		 (SELECT shard, maxIf(at, kind = 'rebuilt') AS r, maxIf(at, kind != 'rebuilt') AS d
		  FROM $1.aggregate_marks GROUP BY shard)"
}
check "clickhouse: marks: the cluster's aggregates counted again by each shard's store init are marked exact" \
	[ "$(marks_exact crashes "['1','2']")/$(ch_q 1 "SELECT uniqExact(shard) FROM crashes.aggregate_marks WHERE kind = 'rebuilt'")" = 1/2 ]
printf '@defaults\nstore_dispatch\n' >"$W/lists/skip"
"$ASYNCORE" resign --db "$DB" --signature-lists "$W/lists" >"$W/resign3.sqlite" 2>&1
"$ASYNCORE" resign --db "$U2" --signature-lists "$W/lists" >"$W/resign3.ch" 2>&1; rc=$?
check "clickhouse: ... a resign moving cores back ($(head -1 "$W/resign3.ch")) marks them inexact, in two groups until store init" \
	[ $rc -eq 0 -a "$(cat "$W/resign3.sqlite")" = "$(cat "$W/resign3.ch")" -a \
	  "$(marks_exact crashes "['1','2']")" = 0 -a "$(one_group 1)$(one_group 2)" != 11 -a \
	  "$(ch_q 1 "SELECT argMax(kind, at) FROM crashes.aggregate_marks")" = rewritten ]
check "clickhouse: ... a search served then gives SQLite's buckets and cores" same_search store
"$ASYNCORE" store init --db "$U1" >/dev/null 2>&1
check "clickhouse: ... store init on one shard: still inexact (the other's are)" \
	[ "$(marks_exact crashes "['1','2']")/$(marks_exact crashes "['1']")/$(one_group 1)" = 0/1/1 ]
check "clickhouse: ... a search served then gives SQLite's" same_search store
"$ASYNCORE" store init --db "$U2" >/dev/null 2>&1
check "clickhouse: ... store init on both: exact, each core in one group" \
	[ "$(marks_exact crashes "['1','2']")/$(one_group 1)/$(one_group 2)" = 1/1/1 ]
check "clickhouse: ... and a search served from the aggregates gives SQLite's" same_search store
check "clickhouse: ... its marks read without an error" bash -c '! grep -v "stopped by SIGTERM" "$1"' _ "$W/serve.out.err"

# A resign that died rewriting (its "rewriting" the newest mark): store init
# counts the aggregates again but does not mark them exact (rows the resign
# wrote after would be missed), and says so; the next resign to complete
# closes it ("rewritten"), then store init marks them.
at=$(ch_q 1 "SELECT max(at) + 1 FROM crashes.aggregate_marks")
ch_q 1 "INSERT INTO crashes.aggregate_marks VALUES ('rewriting', '', $at)" insert_distributed_sync=1 ||
	fail "clickhouse: writing a rewriting mark"
"$ASYNCORE" store init --db "$U1" 2>"$W/err.open" && "$ASYNCORE" store init --db "$U2" 2>>"$W/err.open"; rc=$?
check "clickhouse: ... a resign's open \"rewriting\": store init (exit $rc) does not mark the aggregates exact, and says why" \
	[ $rc -eq 0 -a "$(marks_exact crashes "['1','2']")" = 0 -a "$(grep -c "a resign is rewriting cores" "$W/err.open")" = 2 ]
check "clickhouse: ... a search served then gives SQLite's" same_search store
"$ASYNCORE" resign --db "$U1" --signature-lists "$W/lists" >"$W/resign4.ch" 2>&1; rc=$?
check "clickhouse: ... a resign moving nothing ($(head -1 "$W/resign4.ch")) closes it" \
	[ $rc -eq 0 -a "$(ch_q 1 "SELECT argMax(kind, at) FROM crashes.aggregate_marks WHERE kind != 'rebuilt'")" = rewritten ]
"$ASYNCORE" store init --db "$U1" 2>"$W/err.open" && "$ASYNCORE" store init --db "$U2" 2>>"$W/err.open"; rc=$?
check "clickhouse: ... then store init on both marks them exact (exit $rc)" \
	[ $rc -eq 0 -a "$(marks_exact crashes "['1','2']")" = 1 -a ! -s "$W/err.open" ]

# A store made before the marks: searches read cores until store init makes
# the table (a cluster's shards each their own, the first while the other
# has none yet: its search reads cores meanwhile).
for i in 1 2; do
	ch_q $i "DROP TABLE crashes.aggregate_marks" >/dev/null && ch_q $i "DROP TABLE crashes.aggregate_marks_local" >/dev/null ||
		fail "clickhouse: dropping shard $i's aggregate_marks"
done
check "clickhouse: a cluster store made before the marks: a search served gives SQLite's" same_search store
"$ASYNCORE" resign --db "$U1" --signature-lists "$W/lists" >"$W/resign5.ch" 2>&1; rc=$?
check "clickhouse: ... resign refuses it until store init ($(head -1 "$W/resign5.ch"))" \
	[ $rc -ne 0 -a -n "$(grep "run asyncore store init" "$W/resign5.ch")" ]
"$ASYNCORE" store init --db "$U1" 2>"$W/err"; rc=$?
check "clickhouse: ... store init on one shard (exit $rc)" [ $rc -eq 0 -a ! -s "$W/err" ]
check "clickhouse: ... a search served meanwhile gives SQLite's" same_search store
"$ASYNCORE" store init --db "$U2" 2>"$W/err"; rc=$?
check "clickhouse: ... store init on the other (exit $rc): exact" \
	[ $rc -eq 0 -a "$(marks_exact crashes "['1','2']")" = 1 ]
check "clickhouse: ... a search served then gives SQLite's" same_search store

# The marks are what a search trusts: a cores row written again in another
# bucket behind their back (not by resign) is counted from the aggregates,
# in both buckets, until store init counts them again.
bucket_total() { python3 -c 'import json, sys; print(sum(b["count"] for b in json.load(open(sys.argv[1]))["buckets"]))' "$1"; }
fp=$(ch_q 1 "SELECT any(fingerprint) FROM crashes.cores_local WHERE position(signature, 'store') > 0")
h=$(ch_q 1 "SELECT signature_hash FROM (SELECT fingerprint, signature_hash, version FROM crashes.cores_local FINAL) WHERE fingerprint = '$fp'")
cols=$(ch_q 1 "SELECT arrayStringConcat(groupArray(name), ', ') FROM system.columns
               WHERE database = 'crashes' AND table = 'cores_local'")
cols=${cols/, version, /, version + 1, }
behind() {   # behind HASH: shard 1's cores row of $fp written again with HASH
	local hash="'$1'"
	ch_q 1 "INSERT INTO crashes.cores_local SELECT ${cols/, signature_hash, /, $hash, } FROM
		(SELECT * FROM crashes.cores_local FINAL) WHERE fingerprint = '$fp'"
}
behind "$h-behind" || fail "clickhouse: writing a cores row behind the marks' back"
same_search store 2>/dev/null
check "clickhouse: a cores row moved behind the marks' back: a search served counts it twice, from the aggregates ($(bucket_total "$W/search.sqlite") + 1 = $(bucket_total "$W/search.ch"))" \
	[ -n "$fp" -a $(($(bucket_total "$W/search.sqlite") + 1)) = "$(bucket_total "$W/search.ch")" ]
behind "$h" || fail "clickhouse: writing a cores row behind the marks' back"
"$ASYNCORE" store init --db "$U1" 2>"$W/err"; rc=$?
check "clickhouse: ... moved back, store init (exit $rc) counts them again: SQLite's" \
	[ $rc -eq 0 -a "$(one_group 1)/$(marks_exact crashes "['1','2']")" = 1/1 ]
check "clickhouse: ... a search served then gives SQLite's" same_search store

# store init filling a store's term sets (crashes11, made before them):
# each shard marked its own aggregates inexact first ("filling"), then
# exact once counted again.
check "clickhouse: marks: store init filling term sets marked each shard's aggregates inexact, then exact" \
	[ "$(ch_q 1 "SELECT uniqExactIf(shard, kind = 'filling'), uniqExactIf(shard, kind = 'rebuilt')
		FROM crashes11.aggregate_marks" | tr '\t' ' ')/$(marks_exact crashes11 "['1','2']")" = "2 2/1" ]

# One server: resign moving cores counts the aggregates again and marks them
# exact itself.
if [ -n "$D" ]; then
	check "clickhouse: marks on one server: resign moving cores marked its aggregates exact after counting them again" \
		[ "$(marks_exact crashes13 "['']")/$(ch_q 1 "SELECT countIf(kind = 'rewritten') > 0 AND
			countIf(kind = 'rebuilt') > 0 FROM crashes13.aggregate_marks")" = 1/1 ]
	check "clickhouse: ... a search served gives SQLite's" same_search_in "$W/s5.db" "$U13" put_word
	ch_q 1 "DROP TABLE crashes13.aggregate_marks" >/dev/null || fail "clickhouse: dropping crashes13.aggregate_marks"
	check "clickhouse: ... made before the marks: a search served gives SQLite's" same_search_in "$W/s5.db" "$U13" put_word
	"$ASYNCORE" store init --db "$U13" 2>"$W/err"; rc=$?
	check "clickhouse: ... store init makes them again (exit $rc)" \
		[ $rc -eq 0 -a "$(ch_q 1 "EXISTS TABLE crashes13.aggregate_marks")" = 1 -a "$(marks_exact crashes13 "['']")" = 1 ]
	# A name every term set holds, the old sets of the cores resign moved
	# too: the search reads every core's groups of bucket_days, not its sets.
	every=$(store_q "$W/s5.db" "SELECT name FROM term_names GROUP BY name
		HAVING count(DISTINCT term_set) = (SELECT count(DISTINCT term_set) FROM term_names)
		ORDER BY length(name), name LIMIT 1" | tr -d '"')
	held=$(ch_q 1 "SELECT uniqExact(term_set) FROM crashes13.term_names WHERE name = '$every'")
	check "clickhouse: ... '$every' is held with each of the store's $held term sets (term_sets)" \
		[ -n "$every" -a "$held" -ge 2 -a "$held" = "$(ch_q 1 "SELECT count() FROM crashes13.term_sets FINAL")" ]
	check "clickhouse: ... a search for it served from bucket_days alone gives SQLite's" \
		same_search_in "$W/s5.db" "$U13" "$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$every")"
fi
