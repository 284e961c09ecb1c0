#!/usr/bin/env bash
# The store keeps hangs (reports/SCHEMA.md blocked_on, deadlocks,
# deadlock_members, hang_waits): the cores of a deadlock and of a pool whose
# lock holder reads a pipe (fixtures/hangs, tests/hang_lib.sh) and a crash's
# core ingested into SQLite.  Oracles: the JSON report of each core (each
# thread's blocked_on, the deadlocks), the report the store gives back
# (serve's /api/core/ID, written from the stored rows alone), and each
# core's cause kind for top's and serve's hang marks.  A re-ingest changes
# nothing.  An asyncio core (fixtures/hangs/asyncio_tasks.py under Debian's
# python3.11) is stored with its tasks, their script frames and what each
# waits for.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/fixlib.sh"
. "$ROOT/tests/hang_lib.sh"
. "$ROOT/tests/clickhouse_lib.sh"

have_asyncore || { fail "hang-store: no asyncore at $ASYNCORE (run make)"; exit 0; }
command -v gdb >/dev/null || { skip "hang-store: no gdb"; exit 0; }
command -v sqlite3 >/dev/null || { skip "hang-store: no sqlite3"; exit 0; }
test_dep curl curl "$TMPD/apt.log" || { skip "hang-store: curl could not be installed"; exit 0; }
fix_build hangs || exit 0
PROG=$FIX_DIR/prog
CHECK="python3 $ROOT/tests/hang_store_check.py"

SERVE_PID=
stop_server() {
	[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
	SERVE_PID=
}
trap 'stop_server; hang_kill_all; fix_cleanup' EXIT

# verdict NAME OUT: the checker's lines OUT as one PASS or FAIL.
verdict() {
	if grep -q '^unreadable' "$2" || ! grep -q '^ok ' "$2"; then
		fail "$1: $(head -2 "$2" | tr '\n' ' ')"
	elif grep -q '^bad ' "$2"; then
		fail "$1: $(grep '^bad ' "$2" | head -3 | tr '\n' ' ')"
	else
		pass "$1: $(grep -c '^ok ' "$2") facts agree"
	fi
}

# rows DB FINGERPRINT TABLE ORDER OUT: TABLE's rows of the core as JSON.
rows() {
	"$ASYNCORE" query --db "$1" --format json "SELECT t.* FROM $3 t JOIN cores c ON c.id = t.core_id
		WHERE c.fingerprint = '$2' ORDER BY $4" >"$5" 2>"$5.err"
}

# stored_rows NAME DB REPORT WITH_TASKS: the core's rows against its report.
stored_rows() {
	local name=$1 db=$2 report=$3 fp w=$TMPD/rows-$1
	fp=$(jget "$report" 'j["core"]["fingerprint"]')
	mkdir -p "$w"
	rows "$db" "$fp" blocked_on "waiter, waiter_idx" "$w/blocked.json"
	rows "$db" "$fp" deadlocks idx "$w/deadlocks.json"
	rows "$db" "$fp" deadlock_members "deadlock_idx, pos" "$w/members.json"
	if [ "$4" = tasks ]; then
		rows "$db" "$fp" tasks idx "$w/tasks.json"
		rows "$db" "$fp" task_frames "task_idx, idx" "$w/frames.json"
		$CHECK rows "$report" "$w/blocked.json" "$w/deadlocks.json" "$w/members.json" \
			"$w/tasks.json" "$w/frames.json" >"$w/check" 2>&1
	else
		$CHECK rows "$report" "$w/blocked.json" "$w/deadlocks.json" "$w/members.json" >"$w/check" 2>&1
	fi
	verdict "hang-store-$name: the stored rows are the report's" "$w/check"
}

CORES=$TMPD/cores
if ! hang_store_cores "$PROG" "$CORES"; then
	skip "hang-store: no core of a hung fixture"
	exit 0
fi
if d=$(fixture_build store_crash 2>/dev/null) && c=$(fixture_core "$d" segv 1 2>/dev/null); then
	mv "$c" "$CORES/crash.core" && rm -rf "$(dirname "$c")"
else
	skip "hang-store: no crash core (top's and serve's crash bucket left out)"
fi
NCORES=$(ls "$CORES"/*.core | wc -l)
for c in "$CORES"/*.core; do
	m=$(basename "$c" .core)
	report_json "hang-store-$m-report" "$TMPD/$m.json" "$c" --threads all || exit 0
done
check "hang-store: the deadlock's core is a deadlock, the pool's a hang" \
	[ "$(jget "$TMPD/deadlock.json" 'j["cause"]["kind"]')/$(jget "$TMPD/pool.json" 'j["cause"]["kind"]')" = deadlock/hang ]

DB=$TMPD/h.db
"$ASYNCORE" ingest --db "$DB" --jobs 2 "$CORES" >"$TMPD/ingest.out" 2>"$TMPD/ingest.err"; rc=$?
check "hang-store: ingest stores the $NCORES cores (exit $rc: $(tail -1 "$TMPD/ingest.out"))" \
	grep -q "^ingested $NCORES, already present 0, failed 0" "$TMPD/ingest.out"
V=$(sed -n 's/^#define REP_SCHEMA_VERSION \([0-9]*\)$/\1/p' "$ROOT/reports/store_sqlite.h")
check "hang-store: the store is schema $V" [ -n "$V" -a "$(sqlite3 "$DB" "PRAGMA user_version")" = "$V" ]
for m in deadlock pool; do
	stored_rows "$m" "$DB" "$TMPD/$m.json"
done

# hang_waits: each hang core's blocked threads, a deadlock's members marked.
want=$(python3 - "$TMPD/deadlock.json" "$TMPD/pool.json" <<'PY'
import json, sys
waits = members = 0
for path in sys.argv[1:]:
    j = json.load(open(path))
    waits += sum(t["blocked_on"] is not None for t in j["threads"])
    members += len({t for d in j["deadlocks"] for t in d["threads"]})
print("%d,%d" % (waits, members))
PY
)
got=$(sqlite3 -csv "$DB" "SELECT count(*), count(deadlock) FROM hang_waits")
check "hang-store: hang_waits lists the hang cores' waiting threads, the deadlock's members marked ($got, the reports $want)" \
	[ "$got" = "$want" ]
got=$(sqlite3 "$DB" "SELECT count(*) FROM hang_waits w JOIN cores c ON c.id = w.core_id WHERE c.path LIKE '%crash.core'")
check "hang-store: hang_waits holds no crash ($got rows)" [ "$got" = 0 ]

# Re-ingest: nothing is written again.
dump() { sqlite3 "$DB" .dump | grep -v 'analysed_at' | sort; }
dump >"$TMPD/before"
"$ASYNCORE" ingest --db "$DB" "$CORES" >"$TMPD/ingest2.out" 2>&1
dump >"$TMPD/after"
check "hang-store: re-ingest finds every core present" \
	grep -q "^ingested 0, already present $NCORES, failed 0" "$TMPD/ingest2.out"
check "hang-store: re-ingest changes nothing" cmp -s "$TMPD/before" "$TMPD/after"

# top: the hang column says which buckets' cause is a hang's, as the
# reports' cause kinds and signature hashes say.
HANGS=$(for m in deadlock pool; do jget "$TMPD/$m.json" 'j["signature_hash"]'; done | sort -u | tr '\n' ' ')
check "hang-store: top --format csv has the hang column" \
	[ "$("$ASYNCORE" top --db "$DB" --format csv | head -1)" = "count,signature,first_seen,last_seen,last_7_days,new,build_ids,example_core,signature_hash,hang" ]
"$ASYNCORE" top --db "$DB" --format json >"$TMPD/top.json" 2>&1
got=$(python3 - "$TMPD/top.json" "$HANGS" <<'PY'
import json, sys
top, hangs = json.load(open(sys.argv[1])), set(sys.argv[2].split())
bad = [r["signature_hash"] for r in top if bool(r["hang"]) != (r["signature_hash"] in hangs)]
print("%d buckets, %d hangs, wrong: %s" % (len(top), sum(bool(r["hang"]) for r in top), bad))
PY
)
check "hang-store: top marks the hang buckets and not the crash's ($got)" \
	[ "$got" = "$NCORES buckets, 2 hangs, wrong: []" ]
"$ASYNCORE" top --db "$DB" >"$TMPD/top.txt" 2>&1
check "hang-store: top's table has the hang column" grep -q 'hang' <(sed -n 1p "$TMPD/top.txt")

# serve: /api/buckets says which are hangs, / and each bucket's page show
# the badge on the hang buckets only; each hang core read back from the
# store alone (/api/core/ID) says what the report says.
if ! serve_start "$DB" "$TMPD/serve.out"; then
	fail "hang-store: serve did not start: $(tail -2 "$TMPD/serve.out.err")"
	exit 0
fi
BASE=http://127.0.0.1:$SERVE_PORT
get() { curl -s -g --max-time 20 -o "$2" -w '%{http_code}' "$BASE$1"; }
st=$(get /api/buckets "$TMPD/buckets.json")
got=$(python3 - "$TMPD/buckets.json" "$HANGS" <<'PY'
import json, sys
buckets, hangs = json.load(open(sys.argv[1])), set(sys.argv[2].split())
bad = [b["hash"] for b in buckets if b.get("hang") is not (b["hash"] in hangs)]
print("%d buckets, %d hangs, wrong: %s" % (len(buckets), sum(b.get("hang") is True for b in buckets), bad))
PY
)
check "hang-store: /api/buckets says hang: true of the hang buckets, false of the crash's ($st: $got)" \
	[ "$st/$got" = "200/$NCORES buckets, 2 hangs, wrong: []" ]
st=$(get / "$TMPD/index.html")
got=$(grep -o 'class="badge hang"' "$TMPD/index.html" | wc -l)
check "hang-store: / shows the hang badge on the 2 hang buckets ($st, $got)" [ "$st/$got" = 200/2 ]
for m in deadlock pool crash; do
	[ -f "$TMPD/$m.json" ] || continue
	h=$(jget "$TMPD/$m.json" 'j["signature_hash"]')
	st=$(get "/bucket/$h" "$TMPD/bucket-$m.html")
	n=$(grep -c 'class="badge hang"' "$TMPD/bucket-$m.html")
	if [ $m = crash ]; then want=0; else want=1; fi
	check "hang-store: the $m bucket's page $([ $want = 1 ] && echo shows || echo has no) hang badge ($st)" \
		[ "$st/$((n > 0))" = "200/$want" ]
done
for m in deadlock pool; do
	fp=$(jget "$TMPD/$m.json" 'j["core"]["fingerprint"]')
	st=$(get "/api/core/$fp" "$TMPD/$m.back.json")
	$CHECK loaded "$TMPD/$m.json" "$TMPD/$m.back.json" >"$TMPD/$m.back.check" 2>&1
	[ "$st" = 200 ] || echo "unreadable: HTTP $st" >"$TMPD/$m.back.check"
	verdict "hang-store-$m: the core read back from the store says what its report says" "$TMPD/$m.back.check"
done
get "/core/$(jget "$TMPD/deadlock.json" 'j["core"]["fingerprint"]')" "$TMPD/deadlock.back.html" >/dev/null
check "hang-store: the deadlock's served page opens with the hang" \
	grep -q '<section[^>]*id="hang"' "$TMPD/deadlock.back.html"
stop_server

# asyncio: the core of fixtures/hangs/asyncio_tasks.py is stored with its
# tasks (their script frames) and what each waits for.
PY311=/usr/bin/python3.11
if [ ! -x "$PY311" ]; then
	skip "hang-store-asyncio: no $PY311"
	exit 0
fi
RUN=$TMPD/asyncio
if ! hang_asyncio_core "$PY311" "$RUN"; then
	skip "hang-store-asyncio: no core of the hung fixture ($(tail -1 "$RUN/out"))"
	exit 0
fi
report_json "hang-store-asyncio-report" "$RUN/core.json" "$CORE" "$PY311" || exit 0
ntasks=$(jget "$RUN/core.json" 'len([t for t in j["tasks"] if t["runtime"] == "asyncio"])')
nscript=$(jget "$RUN/core.json" 'sum(f["kind"] == "script" for t in j["tasks"] for f in t["frames"])')
ADB=$TMPD/asyncio.db
"$ASYNCORE" ingest --db "$ADB" --binary "$PY311" "$CORE" >"$RUN/ingest.out" 2>&1
got=$(sqlite3 -csv "$ADB" "SELECT (SELECT count(*) FROM tasks WHERE runtime = 'asyncio'),
	(SELECT count(*) FROM task_frames WHERE kind = 'script')")
check "hang-store-asyncio: its $ntasks tasks and their $nscript script frames are stored ($got)" \
	bash -c "[ '$got' = '$ntasks,$nscript' ] && [ $ntasks -gt 0 ] && [ $nscript -gt 0 ]"
stored_rows asyncio "$ADB" "$RUN/core.json" tasks
if serve_start "$ADB" "$TMPD/serve.out"; then
	BASE=http://127.0.0.1:$SERVE_PORT
	st=$(get "/api/core/$(jget "$RUN/core.json" 'j["core"]["fingerprint"]')" "$RUN/back.json")
	$CHECK loaded "$RUN/core.json" "$RUN/back.json" >"$RUN/back.check" 2>&1
	[ "$st" = 200 ] || echo "unreadable: HTTP $st" >"$RUN/back.check"
	verdict "hang-store-asyncio: the core read back from the store has its tasks, their frames and waits" "$RUN/back.check"
	stop_server
else
	fail "hang-store-asyncio: serve did not start: $(tail -2 "$TMPD/serve.out.err")"
fi
