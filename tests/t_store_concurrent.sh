#!/usr/bin/env bash
# Four ingest processes on one (new) database at once: no core lost, none
# failed, no "database is locked".
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/store_lib.sh"

W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
DB=$W/crashes.db
N=$(store_cores "$W/cores"); rc=$?
if [ $rc -eq 77 ]; then skip "store concurrent: no fixture cores"; exit 0; fi
[ $rc -eq 0 ] || { fail "store concurrent: building fixture cores"; exit 0; }

ls "$W"/cores/*.core >"$W/list"
# Each process gets every core, in its own order, so they race on the same ones.
pids=()
for p in 1 2 3 4; do
	case $p in
	1) cat "$W/list" ;; 2) tac "$W/list" ;; *) shuf "$W/list" ;;
	esac >"$W/list.$p"
	"$ASYNCORE" ingest --db "$DB" --jobs 2 $(cat "$W/list.$p") >"$W/out.$p" 2>"$W/err.$p" &
	pids+=($!)
done
ok=1
for i in 0 1 2 3; do
	wait "${pids[$i]}" || { ok=0; fail "store concurrent: process $((i + 1)) exited $?: $(tail -1 "$W/err.$((i + 1))")"; }
done
[ $ok = 1 ] && pass "store concurrent: four processes exit 0"
check "store concurrent: no 'database is locked'" [ -z "$(cat "$W"/err.* | grep -i locked)" ]
check "store concurrent: all $N cores in, once" [ "$(sqlite3 "$DB" "SELECT count(*), count(DISTINCT fingerprint) FROM cores")" = "$N|$N" ]
check "store concurrent: no ingest errors" [ "$(sqlite3 "$DB" "SELECT count(*) FROM ingest_errors")" = 0 ]
stored=$(cat "$W"/out.* | sed -n 's/^ingested \([0-9]*\),.*/\1/p' | paste -sd+ | bc)
check "store concurrent: each core stored by exactly one process ($stored)" [ "$stored" = "$N" ]
check "store concurrent: integrity ok" [ "$(sqlite3 "$DB" "PRAGMA integrity_check")" = ok ]
