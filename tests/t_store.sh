#!/usr/bin/env bash
# Crash database: ingest a batch of fixture cores, check counts, signatures,
# re-ingest, failed cores, query and top.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/store_lib.sh"

W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
DB=$W/crashes.db
N=$(store_cores "$W/cores"); rc=$?
if [ $rc -eq 77 ]; then skip "store: no fixture cores"; exit 0; fi
[ $rc -eq 0 ] || { fail "store: building fixture cores"; exit 0; }

# Cores of other fixture programs, when they build (not required).
for fix in abort1 threads4; do
	d=$(fixture_build "$fix" 2>/dev/null) || continue
	for i in 1 2; do
		c=$(fixture_core "$d" 2>/dev/null) || continue
		mv "$c" "$W/cores/$fix-$i.core"; rm -rf "$(dirname "$c")"
	done
done
N=$(ls "$W"/cores/*.core | wc -l)

"$ASYNCORE" ingest --db "$DB" --jobs 2 "$W"/cores/*.core >"$W/out" 2>"$W/err"; rc=$?
check "store: ingest exits 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || sed 's/^/    /' "$W/err" | head -20
check "store: $N cores in the database (>= 50)" [ "$(store_q "$DB" "SELECT count(*) FROM cores")" = "$N" -a "$N" -ge 50 ]
check "store: no ingest errors" [ "$(store_q "$DB" "SELECT count(*) FROM ingest_errors")" = 0 ]
check "store: summary line" grep -q "^ingested $N, already present 0, failed 0 of $N cores" "$W/out"
check "store: every core has its threads and frames" \
	[ -z "$(store_q "$DB" "SELECT c.id FROM cores c WHERE c.nthreads != (SELECT count(*) FROM threads t WHERE t.core_id = c.id) OR c.nframes != (SELECT count(*) FROM frames f WHERE f.core_id = c.id) OR c.nframes = 0")" ]
check "store: one crashing thread per core" \
	[ "$(store_q "$DB" "SELECT count(*) FROM threads WHERE crashing")" = "$N" ]

# Signatures: one bucket per crash place, whatever the addresses.
sigs() { store_q "$DB" "SELECT count(DISTINCT signature_hash) FROM cores WHERE path LIKE '%/$1-%'"; }
check "store: same place, different addresses -> one signature (segv)" [ "$(sigs store_crash-segv)" = 1 ]
check "store: same place -> one signature (abort)" [ "$(sigs store_crash-abort)" = 1 ]
check "store: same place -> one signature (deep)" [ "$(sigs store_crash-deep)" = 1 ]
check "store: same place -> one signature (c++ a)" [ "$(sigs store_cxx-a)" = 1 ]
check "store: different places -> different signatures" [ "$(sigs store_crash)" = 4 -a "$(sigs store_cxx)" = 2 ]
check "store: addresses differ within a bucket" \
	[ "$(store_q "$DB" "SELECT count(DISTINCT pc) FROM crash_stacks WHERE core LIKE '%/store_crash-segv-%' AND frame = 0")" -gt 1 ]
sig() { store_q "$DB" "SELECT DISTINCT signature FROM cores WHERE path LIKE '%/$1-%'"; }
check "store: segv signature" [ "$(sig store_crash-segv)" = "SIGSEGV: store_parse_header < store_dispatch < main" ]
check "store: abort signature skips abort machinery" \
	[ "$(sig store_crash-abort)" = "SIGABRT: store_check_invariant < store_dispatch < main" ]
check "store: fpe signature" [ "$(sig store_crash-fpe)" = "SIGFPE: store_compute_ratio < store_dispatch < main" ]
check "store: recursion collapsed" \
	[ "$(sig store_crash-deep)" = "SIGSEGV: store_leaf < store_recurse < store_dispatch < main" ]
s=$(sig store_cxx-a)
check "store: c++ signature normalised ($s)" \
	bash -c '[[ "$1" =~ ^"SIGSEGV: "(Parser::)?"parse < run::{lambda}::operator() < run < main"$ ]]' _ "$s"

c1=$W/cores/store_crash-segv-1.core
"$ASYNCORE" report "$c1" --format json >"$W/r.json" 2>/dev/null
check "store: without --sha256, cores.sha256 and the JSON report's core.sha256 are null" \
	[ "$(json_get "$W/r.json" 'j["core"]["sha256"]')" = None -a \
	  "$(store_q "$DB" "SELECT count(*) FROM cores WHERE sha256 IS NOT NULL")" = 0 ]

# Re-ingest: nothing changes.
sqlite3 "$DB" .dump >"$W/before"
"$ASYNCORE" ingest --db "$DB" --jobs 2 "$W/cores" >"$W/out2" 2>"$W/err2"; rc=$?
sqlite3 "$DB" .dump >"$W/after"
check "store: re-ingest exits 0" [ $rc -eq 0 ]
check "store: re-ingest finds all present" grep -q "^ingested 0, already present $N, failed 0" "$W/out2"
check "store: re-ingest changes nothing" cmp -s "$W/before" "$W/after"

# A file that is not a core and a truncated core: recorded, batch goes on.
mkdir "$W/bad"
echo "not a core" >"$W/bad/a-text.core"
head -c 3000 "$(ls "$W"/cores/store_crash-segv-1.core)" >"$W/bad/b-truncated.core"
cp "$W/cores/store_crash-segv-1.core" "$W/bad/c-good.core"
"$ASYNCORE" ingest --db "$W/bad.db" "$W/bad" >"$W/out3" 2>"$W/err3"; rc=$?
check "store: failed cores give exit 1" [ $rc -eq 1 ]
check "store: failed cores recorded with a reason" \
	[ "$(store_q "$W/bad.db" "SELECT count(*) FROM ingest_errors WHERE reason != ''")" = 2 ]
check "store: the good core of that batch is in" [ "$(store_q "$W/bad.db" "SELECT count(*) FROM cores")" = 1 ]
"$ASYNCORE" ingest --db "$W/bad.db" "$W/bad" >/dev/null 2>&1
check "store: a retried failure counts attempts" \
	[ "$(store_q "$W/bad.db" "SELECT min(attempts) FROM ingest_errors")" = 2 ]

# query: read-only, formats.
"$ASYNCORE" query --db "$DB" "DELETE FROM cores" >/dev/null 2>"$W/qerr"; rc=$?
check "store: query refuses writes" [ $rc -eq 2 -a -n "$(grep writes "$W/qerr")" ]
check "store: nothing deleted" [ "$(store_q "$DB" "SELECT count(*) FROM cores")" = "$N" ]
"$ASYNCORE" query --db "$DB" "ATTACH '$W/x.db' AS x" >/dev/null 2>&1
check "store: query refuses ATTACH" [ ! -e "$W/x.db" ]
check "store: query json" python3 -c '
import json, subprocess, sys
rows = json.loads(subprocess.check_output([sys.argv[1], "query", "--db", sys.argv[2], "--format", "json",
    "SELECT id, signature, fault_address FROM cores ORDER BY id"]))
assert len(rows) == int(sys.argv[3]) and isinstance(rows[0]["id"], int), rows[:1]' "$ASYNCORE" "$DB" "$N"
check "store: query csv quotes" [ "$("$ASYNCORE" query --db "$DB" --format csv "SELECT 'a,b' AS x, NULL AS y")" = $'x,y\n"a,b",' ]
"$ASYNCORE" query --db "$DB" "SELECT signal_name, count(*) AS n FROM cores GROUP BY 1 ORDER BY 1" >"$W/table"
check "store: query table" grep -qE '^SIGSEGV +[0-9]+$' "$W/table"
"$ASYNCORE" query --db "$W/missing.db" "SELECT 1" >/dev/null 2>&1
check "store: query on a missing database fails" [ $? -eq 2 -a ! -e "$W/missing.db" ]

# top: buckets by signature, most frequent first.
"$ASYNCORE" top --db "$DB" >"$W/top"; rc=$?
check "store: top exits 0" [ $rc -eq 0 ]
check "store: top lists every bucket" [ "$(tail -n +3 "$W/top" | wc -l)" = "$(store_q "$DB" "SELECT count(DISTINCT signature_hash) FROM cores")" ]
check "store: top shows counts and an example core" grep -qE '^9 +SIGSEGV: store_parse_header .*store_crash-segv-[0-9]\.core' "$W/top"
first=$("$ASYNCORE" top --db "$DB" --format csv | sed -n 2p | cut -d, -f1)
check "store: top is most frequent first" [ "$first" = "$(store_q "$DB" "SELECT max(n) FROM (SELECT count(*) n FROM cores GROUP BY signature_hash)")" ]

# Crashes a program's own signal handler caught (fixtures/handler_c): the
# same bug caught by handlers that re-raise or abort and not caught at all
# is one bucket; each caught fault is the one the uncaught core shows, the
# handler and what it did are named, the frames have their roles (the
# handler's, the trampoline, the crash site: the uncaught core's first
# frame); resign signs them again as ingest did.
if store_handler_cores "$W/handler"; then
	HDB=$W/handler.db
	"$ASYNCORE" ingest --db "$HDB" --quiet "$W/handler" 2>"$W/herr"; rc=$?
	hq() { store_q "$HDB" "$1"; }
	check "store: handler cores ingested (exit $rc)" [ $rc -eq 0 -a "$(hq "SELECT count(*) FROM cores")" = 6 ]
	check "store: caught or not, one bucket per bug" \
		[ "$(hq "SELECT count(DISTINCT signature_hash) FROM cores WHERE path LIKE '%-null.core'")" = 1 -a \
		  "$(hq "SELECT count(DISTINCT signature_hash) FROM cores WHERE path LIKE '%-overflow.core'")" = 1 ]
	plain="(SELECT signal, code_name, fault_address FROM cores WHERE path LIKE '%/none-null.core')"
	check "store: each caught NULL write is the uncaught core's fault (signal, code, address)" \
		[ "$(hq "SELECT count(*) FROM cores c, $plain p WHERE c.path NOT LIKE '%/none-%' AND
			c.path LIKE '%-null.core' AND c.caught_signal = p.signal AND
			c.caught_code_name = p.code_name AND c.caught_address = p.fault_address")" = 3 ]
	got=$(hq "SELECT replace(replace(path, '$W/handler/', ''), '.core', '') || ' ' || signal_name || ' ' ||
		coalesce(handled_by, '-') || ' ' || coalesce(handler_action, '-') AS x FROM cores ORDER BY path" |
		tr '\n' ',')
	want="abort-null SIGABRT on_fatal aborted,nodefer-null SIGSEGV on_fatal re-raised,"
	want="${want}nodefer-overflow SIGSEGV on_fatal re-raised,none-null SIGSEGV - -,"
	want="${want}none-overflow SIGSEGV - -,redis-null SIGSEGV on_fatal re-raised,"
	check "store: the handler and what it did ($got)" [ "$got" = "$want" ]
	check "store: an uncaught core has no caught columns and no frame roles" \
		[ "$(hq "SELECT count(*) FROM cores WHERE path LIKE '%/none-%' AND coalesce(caught_signal,
			caught_signal_name, caught_code, caught_code_name, caught_address, handled_by,
			handler_action) IS NULL AND NOT EXISTS (SELECT 1 FROM frames f WHERE f.core_id = cores.id
			AND f.role IS NOT NULL)")" = 2 ]
	roles="SELECT group_concat(coalesce(role, '-'), ' ') AS roles FROM (SELECT f.role FROM frames f
		JOIN cores c ON c.id = f.core_id JOIN threads t ON t.core_id = c.id AND t.idx = f.thread_idx
		AND t.crashing WHERE c.path LIKE"
	check "store: the frames' roles: the handler's, the trampoline, the crash site, then plain" \
		bash -c '[[ "$1" =~ ^(crash_handler\ )+trampoline\ crash_site(\ -)+$ ]]' _ \
		"$(hq "$roles '%/abort-null.core' ORDER BY f.idx)")"
	site="SELECT group_concat(DISTINCT f.function) FROM frames f JOIN threads t ON t.core_id = f.core_id
		AND t.idx = f.thread_idx AND t.crashing WHERE"
	check "store: every caught core's crash site is the uncaught core's first frame" \
		[ "$(hq "$site f.role = 'crash_site' AND f.core_id IN (SELECT id FROM cores WHERE path LIKE '%-null.core')")" = \
		  "$(hq "$site f.idx = 0 AND f.core_id = (SELECT id FROM cores WHERE path LIKE '%/none-null.core')")" ]
	sqlite3 "$HDB" "SELECT path, signature, signature_hash FROM cores ORDER BY path" >"$W/hsig.before"
	sqlite3 "$HDB" "UPDATE cores SET signature = 'stale', signature_hash = '0'"
	"$ASYNCORE" resign --db "$HDB" >"$W/hresign" 2>&1; rc=$?
	sqlite3 "$HDB" "SELECT path, signature, signature_hash FROM cores ORDER BY path" >"$W/hsig.after"
	check "store: resign signs caught crashes as ingest did ($(head -1 "$W/hresign"))" \
		[ $rc -eq 0 -a "$(cat "$W/hsig.before")" = "$(cat "$W/hsig.after")" ]
else
	skip "store: no fixtures/handler_c cores (crash handlers left out)"
fi
