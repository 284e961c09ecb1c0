#!/usr/bin/env bash
# kill -9 an ingest's supervisor at several points: its workers die with it,
# the database stays intact, no core is half-written, and a re-run completes
# the batch.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/store_lib.sh"

W=$(mktemp -d); trap 'rm -rf "$W"' EXIT; [ -n "${KEEP:-}" ] && trap - EXIT && echo "work dir $W" >&2
DB=$W/crashes.db
N=$(store_cores "$W/cores"); rc=$?
if [ $rc -eq 77 ]; then skip "store kill: no fixture cores"; exit 0; fi
[ $rc -eq 0 ] || { fail "store kill: building fixture cores"; exit 0; }

# 1,000 more cores (copies of one with a distinct byte in its notes) make the
# batch long enough to be killed in the middle.
store_clone_cores "$W/cores/store_crash-segv-1.core" "$W/cores" 1000 || { fail "store kill: cloning cores"; exit 0; }
N=$((N + 1000))

count() { sqlite3 "$DB" "SELECT count(*) FROM cores" 2>/dev/null || echo 0; }
# core_name I: the name of the batch's core I (in the order ingest takes them).
ls "$W/cores" | LC_ALL=C sort >"$W/names"
core_name() { sed -n "$(($1 + 1))p" "$W/names"; }

# Start an ingest and kill -9 it when the database holds AT cores: its two
# workers are held (tests/hooks/hold.c) at the cores AT and AT + 1, so
# every core before them is in; or, for a number with a dot, after that
# many seconds (any moment will do: early ones hit the schema's creation
# and the workers' start).
kill_at() {
	local at=$1 pid hold=$W/hold-$1
	if [[ $at == *.* ]]; then
		"$ASYNCORE" ingest --db "$DB" --jobs 2 --quiet "$W/cores" >/dev/null 2>>"$W/err" &
		pid=$!
		sleep "$at"
	else
		hold_cores "$hold" "$(core_name "$at")" "$(core_name $((at + 1)))"
		ASYNCORE_TEST_HOLD=$hold "$ASYNCORE_HOOKS" ingest --db "$DB" --jobs 2 --quiet "$W/cores" \
			>/dev/null 2>>"$W/err" &
		pid=$!
		hold_wait "$hold" "$(core_name "$at")" >/dev/null
		hold_wait "$hold" "$(core_name $((at + 1)))" >/dev/null
	fi
	local ws p i
	ws=$(pgrep -P "$pid")
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	# Its workers die with it (a zombie left to init is dead).
	for p in $ws; do
		for i in $(seq 1000); do
			[ -e "/proc/$p" ] && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ] || break
			sleep 0.01
		done
		[ -e "/proc/$p" ] && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ] &&
			orphans="$orphans $p"
	done
}
orphans=""

half_written="SELECT c.id FROM cores c
 WHERE c.nthreads != (SELECT count(*) FROM threads t WHERE t.core_id = c.id)
    OR c.nframes != (SELECT count(*) FROM frames f WHERE f.core_id = c.id)
    OR c.nwarnings != (SELECT count(*) FROM warnings w WHERE w.core_id = c.id)
    OR c.nframes = 0"
# hold_point +K: the core K past those already in (a timed kill may have
# taken the batch anywhere), and never the batch's last two.
hold_point() {
	local at=$((prev + ${1#+}))
	[ $at -le $((N - 2)) ] || at=$((N - 2))
	echo "$at"
}
prev=0 ok=1
for at in 0.02 0.1 0.15 +20 +40 +40 +40 end; do
	case $at in
	+*) at=$(hold_point "$at") ;;
	end) at=$((N - 150)); [ $at -gt $((prev + 2)) ] || at=$(hold_point +2) ;;
	esac
	if [ "$prev" -ge $((N - 2)) ]; then
		fail "store kill: the timed kills left no core to hold ($prev of $N in)"
		break
	fi
	kill_at "$at"
	[ -f "$DB" ] || continue
	ic=$(sqlite3 "$DB" "PRAGMA integrity_check" 2>&1)
	if [ "$(sqlite3 "$DB" "SELECT count(*) FROM sqlite_schema WHERE name = 'cores'")" = 0 ]; then
		hw=""   # killed before the schema transaction committed: an empty database
	else
		hw=$(sqlite3 "$DB" "$half_written" 2>&1)
	fi
	now=$(count)
	if [ "$ic" != ok ] || [ -n "$hw" ] || [ "$now" -lt "$prev" ]; then
		fail "store kill: after kill at $at: integrity '$ic', half-written '$hw', cores $prev -> $now"
		ok=0
	fi
	prev=$now
done
[ $ok = 1 ] && pass "store kill: integrity ok and no core half-written after 8 kills (last count $prev of $N)"
check "store kill: no worker outlives its killed supervisor${orphans:+ (left:$orphans)}" test -z "$orphans"
check "store kill: the kills interrupted the batch" [ "$prev" -lt "$N" ]
"$ASYNCORE" ingest --db "$DB" --jobs 2 "$W/cores" >"$W/out" 2>>"$W/err"; rc=$?
check "store kill: re-run exits 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || { echo "exit $rc"; tail -5 "$W/err"; }
check "store kill: re-run completes the batch" [ "$(count)" = "$N" ]
check "store kill: re-run skips what was in" grep -q "already present $prev," "$W/out"
check "store kill: integrity ok at the end" [ "$(sqlite3 "$DB" "PRAGMA integrity_check")" = ok ]
check "store kill: no ingest errors" [ "$(sqlite3 "$DB" "SELECT count(*) FROM ingest_errors")" = 0 ]
