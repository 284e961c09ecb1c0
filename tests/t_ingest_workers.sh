#!/usr/bin/env bash
# One bad core never costs the batch: workers killed by SIGKILL and SIGSEGV
# and one stopped past --timeout, in the middle of an ingest, each cost
# only the core they held (in ingest_errors with the reason), the batch goes
# on and exits 1, and a rerun completes it.  Ctrl-C stops cleanly (exit
# 130, nothing half-written, no worker left).  A memory ceiling too small
# for any core fails each core with the limit named.  Progress: a plain
# line per 1,000 cores when stderr is not a terminal, a live line when it is.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/store_lib.sh"

W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
N=$(store_cores "$W/cores"); rc=$?
if [ $rc -eq 77 ]; then skip "ingest workers: no fixture cores"; exit 0; fi
[ $rc -eq 0 ] || { fail "ingest workers: building fixture cores"; exit 0; }
store_clone_cores "$W/cores/store_crash-segv-1.core" "$W/cores" 250 ||
	{ fail "ingest workers: cloning cores"; exit 0; }
N=$((N + 250))
# A worker killed by SIGSEGV must die of it: AddressSanitizer would catch
# the signal and exit 1 instead.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0

q() { sqlite3 "$1" "$2" 2>/dev/null; }

# check_complete NAME DB: every core is stored or in ingest_errors, none in
# both, none twice, and the database is intact.
check_complete() {
	local name=$1 db=$2
	local stored errors both
	stored=$(q "$db" 'SELECT count(DISTINCT fingerprint) FROM cores')
	errors=$(q "$db" 'SELECT count(*) FROM ingest_errors')
	both=$(q "$db" "SELECT count(*) FROM cores c JOIN ingest_errors e
		ON e.fingerprint = c.fingerprint OR e.ident = 'path:' || c.path")
	check "$name: every core stored or in ingest_errors ($stored + $errors of $N)" \
		test "$((stored + errors))" = "$N"
	check "$name: none both stored and failed, none stored twice" \
		test "$both/$(q "$db" 'SELECT count(*) FROM cores')" = "0/$stored"
	check "$name: integrity ok" test "$(q "$db" 'PRAGMA integrity_check')" = ok
}

# --- workers killed and stopped in the middle of a batch -----------------
# The hooks program holds the workers that take cores 40, 80 and 120 while
# they analyse them (each has finished the cores before it): the first is
# stopped until the time limit kills it, the next two are killed.
kill_mid_batch() {
	DB=$W/kill.db
	HOLD=$W/hold
	hold_cores "$HOLD" clone-00040.core clone-00080.core clone-00120.core
	# The time limit: the held core passes it, the others (a few ms each)
	# stay far below it even on a loaded machine.
	ASYNCORE_TEST_HOLD=$HOLD "$ASYNCORE_HOOKS" ingest --db "$DB" --jobs 2 --timeout 5 "$W/cores" \
		>"$W/out" 2>"$W/err" &
	sup=$!
	killed=""
	for held in STOP:40 KILL:80 SEGV:120; do
		victim=$(hold_wait "$HOLD" "$(printf 'clone-%05d.core' "${held#*:}")")
		[ -n "$victim" ] || break
		kill -"${held%%:*}" "$victim" || break
		killed="$killed${held%%:*} "
	done
	wait "$sup"; rc=$?
	check "kill: three workers stopped or killed mid-batch ($killed)" test "$killed" = "STOP KILL SEGV "
	check "kill: the batch goes on and exits 1 (exit $rc)" test "$rc" = 1
	for reason in "killed by SIGKILL while analysing" "killed by SIGSEGV while analysing" \
		"timed out after 5 s"; do
		n=$(q "$DB" "SELECT count(*) FROM ingest_errors WHERE reason = '$reason'")
		check "kill: one core in ingest_errors as '$reason' ($n)" test "$n" = 1
		check "kill: its line on stderr" grep -q ": $reason\$" "$W/err"
	done
	check_complete kill "$DB"
	check "kill: the summary counts them as failed" grep -q "failed 3 of $N cores" "$W/out"
	"$ASYNCORE" ingest --db "$DB" --jobs 2 "$W/cores" >"$W/out2" 2>"$W/err2"; rc=$?
	check "kill: a rerun exits 0 (exit $rc)" test "$rc" = 0
	check "kill: the rerun stores the three it retried" grep -q "^ingested 3, already present $((N - 3)), failed 0" "$W/out2"
	check "kill: after the rerun, all $N cores are in and no error is left" \
		test "$(q "$DB" 'SELECT count(*) FROM cores')/$(q "$DB" 'SELECT count(*) FROM ingest_errors')" = "$N/0"
}

# --- Ctrl-C and SIGTERM ---------------------------------------------------
stop_mid_batch() {
	for how in ctrl-c sigterm; do
		# Both workers held at cores 40 and 41: the 40 before them are stored.
		DB=$W/$how.db
		HOLD=$W/hold-$how
		hold_cores "$HOLD" clone-00040.core clone-00041.core
		ASYNCORE_TEST_HOLD=$HOLD setsid "$ASYNCORE_HOOKS" ingest --db "$DB" --jobs 2 "$W/cores" \
			>"$W/out" 2>"$W/err" &
		sup=$!
		ws=$(hold_wait "$HOLD" clone-00040.core; hold_wait "$HOLD" clone-00041.core)
		if [ $how = ctrl-c ]; then
			kill -INT -- "-$sup"   # the terminal signals the whole process group
		else
			kill -TERM "$sup"
		fi
		wait "$sup"; rc=$?
		check "$how: exit 130 (exit $rc)" test "$rc" = 130
		left=""
		for p in $ws; do
			[ -e "/proc/$p" ] && [ "$(awk '{print $3}' "/proc/$p/stat")" != Z ] && left="$left $p"
		done
		check "$how: no worker left behind${left:+ (left:$left)}" test -z "$left"
		stored=$(q "$DB" 'SELECT count(*) FROM cores')
		check "$how: finished cores stay, the rest not started ($stored of $N)" test "$stored" = 40
		check "$how: nothing counted as failed" test "$(q "$DB" 'SELECT count(*) FROM ingest_errors')" = 0
		check "$how: integrity ok" test "$(q "$DB" 'PRAGMA integrity_check')" = ok
		check "$how: the summary says so" grep -q 'interrupted, the rest not started' "$W/out"
		"$ASYNCORE" ingest --db "$DB" --jobs 2 --quiet "$W/cores" 2>"$W/err2"; rc=$?
		check "$how: a rerun completes the batch (exit $rc)" \
			test "$rc/$(q "$DB" 'SELECT count(*) FROM cores')" = "0/$N"
	done
}

if have_hooks; then
	kill_mid_batch
	stop_mid_batch
else
	skip "kill, stop: no program with test hooks at '$ASYNCORE_HOOKS' (make unit builds it)"
fi

# --- the memory ceiling ---------------------------------------------------
if ldd "$ASYNCORE" 2>/dev/null | grep -q libasan; then
	skip "memory: no ceiling under AddressSanitizer (its shadow memory exceeds any)"
else
	DB=$W/mem.db
	ls "$W"/cores/store_*.core | head -4 >"$W/four"
	"$ASYNCORE" ingest --db "$DB" --jobs 2 --max-memory 8M --quiet $(cat "$W/four") 2>"$W/err"; rc=$?
	check "memory: cores past the ceiling fail, exit 1 (exit $rc)" test "$rc" = 1
	n=$(q "$DB" "SELECT count(*) FROM ingest_errors WHERE reason = 'memory limit of 8 MiB reached (--max-memory)'")
	check "memory: each is in ingest_errors naming the limit ($n of 4)" test "$n" = 4
	"$ASYNCORE" ingest --db "$DB" --quiet $(cat "$W/four"); rc=$?
	check "memory: with the default ceiling they go in (exit $rc)" \
		test "$rc/$(q "$DB" 'SELECT count(*) FROM cores')" = 0/4
fi

# --- progress ---------------------------------------------------------------
mkdir -p "$W/junk"
for i in $(seq -w 1 1000); do echo "not a core $i" >"$W/junk/j$i"; done
"$ASYNCORE" ingest --db "$W/junk.db" --jobs 2 "$W/junk" >"$W/out" 2>"$W/err"; rc=$?
check "progress: 1,000 unusable files, exit 1 (exit $rc)" test "$rc" = 1
lines=$(grep -c '^asyncore: ingest: ' "$W/err")
check "progress: one plain line per 1,000 cores ($lines)" test "$lines" = 1
check "progress: it says done, failed, rate and time left" \
	grep -qE '^asyncore: ingest: 1000/1000 cores, 1000 failed, [0-9.]+ cores/s, 0s left$' "$W/err"
if command -v script >/dev/null; then
	ls "$W"/cores/store_*.core | head -6 >"$W/six"
	script -qec "'$ASYNCORE' ingest --db '$W/tty.db' --jobs 2 $(tr '\n' ' ' <"$W/six")" /dev/null \
		>"$W/tty" 2>&1
	check "progress: on a terminal, a live line with done, failed, rate and time left" \
		grep -qaE $'\r\033\\[K6/6 cores, 0 failed, [0-9.]+ cores/s, 0s left' "$W/tty"
else
	skip "progress: no script(1) to give ingest a terminal"
fi
