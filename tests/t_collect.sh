#!/bin/bash
# `asyncore collect` driven by hand, as the kernel runs it (empty
# environment, cwd /, the core on standard input), from fixture cores.  It
# never touches core_pattern: t_collect_kernel.sh (run alone) does.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/fixlib.sh"

have_asyncore || { skip "no asyncore at $ASYNCORE"; exit 0; }
fix_core threads4; rc=$?
[ $rc -eq 0 ] || { no_core threads4 $rc; exit 0; }
CORE=$FIX_CORE
PROG=$FIX_DIR/prog
fix_core abort1 && CORE2=$FIX_CORE || CORE2=

T=$TMPD
CRASH_TIME=1700000000
CRASH_AT=2023-11-14T22:13:20.000000Z
# A PID no process has: the process is gone, as without core_pipe_limit.
GONE_PID=$(( $(cat /proc/sys/kernel/pid_max) - 7 ))
EXE_ARG=$(printf '%s' "$PROG" | tr / !)

# collect_run ASYNCORE_PROGRAM INPUT [OPTIONS...]: collect from INPUT as the
# kernel would; sets CRC (its exit status) and WRC (the writer's: 0 when it
# could write every byte, i.e. the pipe was drained); stderr in $T/err.
collect_run() {
	local prog=$1 input=$2; shift 2
	(cd / && cat "$input" | env -i ${COLLECT_ENV:-} "$prog" collect "$@" \
		"$GONE_PID" "$GONE_PID" 11 "$CRASH_TIME" "$EXE_ARG" 2>"$T/err"
	 echo "${PIPESTATUS[0]} ${PIPESTATUS[1]}" >"$T/status")
	read -r WRC CRC <"$T/status"
}
sql() { sqlite3 "$1" "$2" 2>/dev/null; }
kept() { ls "$1" 2>/dev/null | grep '^core\.' ; }

asy_json "$T/core.json" "$CORE"
SIG=$(jget "$T/core.json" 'j["signature"]')
CAUSE=$(jget "$T/core.json" 'j["cause"]["summary"]')
UID_=$(jget "$T/core.json" 'j["core"]["uid"]')
[ -n "$SIG" ] || fail "the fixture core reports no signature"

# --- the default: stored, the minicore kept -----------------------------
D=$T/mini; DB=$T/mini.db
collect_run "$ASYNCORE" "$CORE" --db "$DB" --dir "$D"
check "collect: exit 0" [ "$CRC" = 0 ]
check "collect: the pipe drained" [ "$WRC" = 0 ]
check "collect: nothing on stderr when stored" [ ! -s "$T/err" ]
check "collect: one row" [ "$(sql "$DB" 'select count(*) from cores')" = 1 ]
check "collect: crashed_at from %t" [ "$(sql "$DB" 'select crashed_at from cores')" = "$CRASH_AT" ]
check "collect: the row's signature is the core's" [ "$(sql "$DB" 'select signature from cores')" = "$SIG" ]
MINI=$(kept "$D")
check "collect: one minicore kept, named as systemd-coredump names cores" \
	[ "$(echo "$MINI" | wc -l)" = 1 ] && [[ $MINI == core.prog.*.$GONE_PID.${CRASH_TIME}000000.zst ]]
check "collect: the row's path is the minicore" [ "$(sql "$DB" 'select path from cores')" = "$D/$MINI" ]
check "collect: no temporary file left" [ -z "$(ls -A "$D" | grep -v '^core\.')" ]
check "collect: the minicore is smaller than the core" \
	[ "$(stat -c %s "$D/$MINI")" -lt "$(( $(stat -c %s "$CORE") / 20 ))" ]
asy_json "$T/mini.json" "$D/$MINI"
check "minicore: same signature as the core" [ "$(jget "$T/mini.json" 'j["signature"]')" = "$SIG" ]
check "minicore: same cause as the core" [ "$(jget "$T/mini.json" 'j["cause"]["summary"]')" = "$CAUSE" ]
check "minicore: same fingerprint as the core" \
	[ "$(jget "$T/mini.json" 'j["core"]["fingerprint"]')" = "$(jget "$T/core.json" 'j["core"]["fingerprint"]')" ]
"$ASYNCORE" ingest --db "$DB" -q "$D" >/dev/null 2>&1
check "collect: ingest DIR of what was stored adds nothing" [ "$(sql "$DB" 'select count(*) from cores')" = 1 ]

# --- --keep full and none ------------------------------------------------
D=$T/full; DB=$T/full.db
collect_run "$ASYNCORE" "$CORE" --db "$DB" --dir "$D" --keep full
FULL=$(kept "$D")
check "keep full: stored" [ "$CRC" = 0 ] && [ "$(sql "$DB" 'select count(*) from cores')" = 1 ]
check "keep full: the whole core, zstd-compressed" \
	[ -n "$FULL" ] && zstd -qdc "$D/$FULL" | cmp -s - "$CORE"

D=$T/none; DB=$T/none.db
collect_run "$ASYNCORE" "$CORE" --db "$DB" --dir "$D" --keep none
check "keep none: stored, nothing kept" \
	[ "$CRC" = 0 ] && [ "$(sql "$DB" 'select count(*) from cores')" = 1 ] && [ -z "$(ls -A "$D")" ]

# --- --max-size: the oldest go ----------------------------------------------
D=$T/evict; DB=$T/evict.db; mkdir -p "$D"
for i in 1 2 3; do
	head -c 20000 /dev/urandom >"$D/core.old$i.0.00000000000000000000000000000000.$i.1000000.zst"
	touch -d "2020-01-0$i" "$D/core.old$i.0.00000000000000000000000000000000.$i.1000000.zst"
done
echo keep >"$D/notes.txt"
collect_run "$ASYNCORE" "$CORE" --db "$DB" --dir "$D" --max-size 50K
NEW=$(ls "$D" | grep "\.$GONE_PID\.")
left=$(ls "$D" | grep -c '^core\.old')
total=$(cat "$D"/core.* | wc -c)
check "max-size: the new minicore stays" [ -n "$NEW" ]
check "max-size: the oldest dropped, the newest old one kept ($left left, $total bytes)" \
	[ ! -e "$D/core.old1.0.00000000000000000000000000000000.1.1000000.zst" ] &&
	[ -e "$D/core.old3.0.00000000000000000000000000000000.3.1000000.zst" ] && [ "$total" -le 51200 ]
check "max-size: files not collected are left alone" [ -e "$D/notes.txt" ]
collect_run "$ASYNCORE" "$CORE" --db "$DB" --dir "$D" --max-size 1x
check "max-size: a bad size is refused, the pipe still drained" [ "$CRC" = 2 ] && [ "$WRC" = 0 ]

# --- the store unreachable, then ingest DIR ---------------------------------
D=$T/unreach; : >"$T/not-a-dir"; BAD_DB=$T/not-a-dir/crashes.db
collect_run "$ASYNCORE" "$CORE" --db "$BAD_DB" --dir "$D" --keep none
check "store unreachable: exit 2, the pipe drained" [ "$CRC" = 2 ] && [ "$WRC" = 0 ]
check "store unreachable: one line on stderr naming it" \
	[ "$(wc -l <"$T/err")" -ge 1 ] && grep -q "pid $GONE_PID .*store unreachable" "$T/err"
check "store unreachable: the minicore kept even with --keep none" [ -n "$(kept "$D")" ]
"$ASYNCORE" ingest --db "$T/later.db" -q "$D" >/dev/null 2>&1
check "store unreachable: ingest DIR stores it later, with its crash time" \
	[ "$(sql "$T/later.db" 'select count(*) from cores')" = 1 ] &&
	[ "$(sql "$T/later.db" 'select crashed_at from cores')" = "$CRASH_AT" ] &&
	[ "$(sql "$T/later.db" 'select signature from cores')" = "$SIG" ]

# --- bad input: truncated, garbage, empty, an unwritable DIR -----------------
D=$T/bad; DB=$T/bad.db
collect_run "$ASYNCORE" "$CORE" --db "$DB" --dir "$D"   # a good row first
head -c $(( $(stat -c %s "$CORE") / 3 )) "$CORE" >"$T/truncated"
collect_run "$ASYNCORE" "$T/truncated" --db "$DB" --dir "$D"
check "truncated core: the pipe drained, no crash of the collector" [ "$WRC" = 0 ] && [ "$CRC" -le 2 ]
check "truncated core: what was stored is still there" \
	[ "$(sql "$DB" "select count(*) from cores where signature = '$SIG'")" = 1 ]
head -c 3000000 /dev/urandom >"$T/garbage"
before=$(ls -A "$D" | wc -l)
collect_run "$ASYNCORE" "$T/garbage" --db "$DB" --dir "$D"
check "garbage: exit 2, the pipe drained" [ "$CRC" = 2 ] && [ "$WRC" = 0 ]
check "garbage: one line on stderr" grep -q "pid $GONE_PID .*unusable core" "$T/err"
check "garbage: nothing left in DIR" [ "$(ls -A "$D" | wc -l)" = "$before" ]
check "garbage: the store unchanged" [ "$(sql "$DB" "select count(*) from cores where signature = '$SIG'")" = 1 ]
: >"$T/empty"
collect_run "$ASYNCORE" "$T/empty" --db "$DB" --dir "$D"
check "empty input: exit 2 with a reason" [ "$CRC" = 2 ] && grep -q 'empty core' "$T/err"
collect_run "$ASYNCORE" "$CORE" --db "$DB" --dir "$T/not-a-dir/sub"
check "unwritable DIR: the pipe still drained, exit 2" [ "$WRC" = 0 ] && [ "$CRC" = 2 ]

# --- two at once into one SQLite store ---------------------------------------
if [ -n "$CORE2" ]; then
	D=$T/two; DB=$T/two.db
	(cd / && env -i "$ASYNCORE" collect --db "$DB" --dir "$D" "$GONE_PID" 1 11 "$CRASH_TIME" x <"$CORE") &
	a=$!
	(cd / && env -i "$ASYNCORE" collect --db "$DB" --dir "$D" $((GONE_PID - 1)) 1 6 "$CRASH_TIME" y <"$CORE2") &
	b=$!
	wait $a; ra=$?; wait $b; rb=$?
	check "two at once: both exit 0 ($ra $rb)" [ $ra = 0 ] && [ $rb = 0 ]
	check "two at once: both stored" [ "$(sql "$DB" 'select count(*) from cores')" = 2 ]
	check "two at once: both minicores kept" [ "$(kept "$D" | wc -l)" = 2 ]
fi

# --- --timeout: the analysis held, killed, the core kept ---------------------
if have_hooks; then
	D=$T/slow; DB=$T/slow.db; H=$T/hold; mkdir -p "$D"
	NAME=core.prog.$UID_.$(tr -d - </proc/sys/kernel/random/boot_id).$GONE_PID.${CRASH_TIME}000000
	# Held at the start of its analysis and never let go: only the
	# timeout ends it.
	hold_cores "$H" "$NAME"
	start=$(date +%s)
	COLLECT_ENV="ASYNCORE_TEST_HOLD=$H" collect_run "$ASYNCORE_HOOKS" "$CORE" --db "$DB" --dir "$D" --timeout 2
	took=$(( $(date +%s) - start ))
	check "timeout: exit 2, the pipe drained ($took s)" [ "$CRC" = 2 ] && [ "$WRC" = 0 ] && [ "$took" -lt 30 ]
	check "timeout: logged" grep -q "timed out after 2 s" "$T/err"
	check "timeout: nothing stored" [ "$(sql "$DB" 'select count(*) from cores' || echo 0)" = 0 ]
	check "timeout: the whole core kept for later" [ -e "$D/$NAME.zst" ]
	check "timeout: no analysis left running" [ -z "$(pgrep -f "collect --db $DB")" ]
	"$ASYNCORE" ingest --db "$DB" -q "$D" >/dev/null 2>&1
	check "timeout: ingest DIR stores it" [ "$(sql "$DB" 'select crashed_at from cores')" = "$CRASH_AT" ]
else
	skip "timeout: no test build at $ASYNCORE_HOOKS"
fi

# --- --install / --uninstall against a stand-in for /proc/sys/kernel --------
if have_hooks; then
	# The kernel keeps 127 characters of core_pattern: the store and the
	# directory get short paths, as /var/lib/asyncore's are.
	SHORT=$(mktemp -d /tmp/ac.XXXX)
	FIX_RUNS+=("$SHORT")
	S=$T/sysctl; mkdir -p "$S"
	COREDUMP='|/lib/systemd/systemd-coredump %P %u %g %s %t %c %h'
	echo "$COREDUMP" >"$S/core_pattern"; echo 0 >"$S/core_pipe_limit"
	D=$SHORT/i
	out=$(cd "$SHORT" && ASYNCORE_TEST_SYSCTL=$S "$ASYNCORE_HOOKS" collect --install --db c.db --dir "$D" \
		--keep full 2>&1); rc=$?
	want="|$ASYNCORE_HOOKS collect --db $SHORT/c.db --dir $D --keep full %P %i %s %t %E"
	check "install: exit 0 ($out)" [ $rc = 0 ]
	[ $rc = 0 ] && check "install: core_pattern runs this program with absolute paths" \
		[ "$(cat "$S/core_pattern")" = "$want" ]
	[ $rc = 0 ] && check "install: core_pipe_limit 16" [ "$(cat "$S/core_pipe_limit")" = 16 ]
	ASYNCORE_TEST_SYSCTL=$S "$ASYNCORE_HOOKS" collect --install --db "$SHORT/c.db" --dir "$D" >/dev/null 2>&1
	ASYNCORE_TEST_SYSCTL=$S "$ASYNCORE_HOOKS" collect --uninstall --dir "$D" >/dev/null 2>&1; rc=$?
	check "uninstall (after two installs): systemd-coredump's pattern back" \
		[ $rc = 0 ] && [ "$(cat "$S/core_pattern")" = "$COREDUMP" ]
	check "uninstall: core_pipe_limit back to 0" [ "$(cat "$S/core_pipe_limit")" = 0 ]
	ASYNCORE_TEST_SYSCTL=$S "$ASYNCORE_HOOKS" collect --uninstall --dir "$D" >/dev/null 2>"$T/err"; rc=$?
	check "uninstall twice: refused, nothing to restore" [ $rc = 2 ] && grep -q 'nothing to restore' "$T/err"
	long=$T/$(printf 'd%.0s' $(seq 120))
	ASYNCORE_TEST_SYSCTL=$S "$ASYNCORE_HOOKS" collect --install --db "$long/c.db" --dir "$D" \
		>/dev/null 2>"$T/err"; rc=$?
	check "install: a pattern past the kernel's 127 characters is refused" \
		[ $rc = 2 ] && grep -q 'kernel keeps 127' "$T/err" && [ "$(cat "$S/core_pattern")" = "$COREDUMP" ]
	echo 16 >"$S/core_pipe_limit"
	ASYNCORE_TEST_SYSCTL=$S "$ASYNCORE_HOOKS" collect --install --db "$SHORT/c.db" --dir "$D" >/dev/null 2>&1
	ASYNCORE_TEST_SYSCTL=$S "$ASYNCORE_HOOKS" collect --uninstall --dir "$D" >/dev/null 2>&1
	check "install/uninstall: a non-zero core_pipe_limit is left as it was" [ "$(cat "$S/core_pipe_limit")" = 16 ]
fi
