#!/usr/bin/env bash
# A Go service that leaks goroutines (fixtures/go_shop `prog leak`: 300
# goroutines receiving on main.orders, three behind main.muLedger, held by
# a parked goroutine, three behind main.rwBooks, two in main.wgShip.Wait,
# three on sync.Conds (main.restock points at one, main.shelf is one),
# one in Accept), read live, from its snapshot, and from the core the Go
# runtime leaves on SIGQUIT (GOTRACEBACK=crash: it prints every goroutine,
# then raises SIGABRT itself).  Each waiting goroutine's blocked_on and wait
# against gdb's values of the globals and the runtime's own dump
# (tests/go_waits.py); the cause is the hang's, its biggest group as the
# runtime counts it; the core's cause says the SIGQUIT came from this
# script's pid, not a crash; the core's goroutines, states and frames
# against the dump the runtime printed (go_oracle.py compare); text and
# HTML open with the cause and group the waiting goroutines.  The stripped
# build's SIGQUIT core: the same cause, no global named.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"
source "$ROOT/tests/go_lib.sh"
WAITS=$ROOT/tests/go_waits.py

have_asyncore || { fail "go-hang: no asyncore at $ASYNCORE (run make)"; exit 0; }
go_deps go-hang
test_dep gdb gdb "$TMPD/apt-gdb.log" || { skip "go-hang: no gdb (gdb could not be installed)"; exit 0; }

LIVE_PID=
hang_cleanup() {
	[ -n "$LIVE_PID" ] && kill -9 "$LIVE_PID" 2>/dev/null
	wait 2>/dev/null
	fix_cleanup
}
trap hang_cleanup EXIT
trap 'exit 130' INT TERM

# waits NAME ASY GLOBALS [--proc DIR]: go_waits.py check against the dump.
waits() {
	local name=$1 asy=$2 globals=$3; shift 3
	if python3 "$WAITS" check "$asy" "$globals" "$RUN/rt.json" "$@" >"$TMPD/w" 2>&1; then
		pass "$name: $(tail -1 "$TMPD/w")"
	else
		fail "$name: $(head -1 "$TMPD/w" | cut -c1-300)"
		tail -n +2 "$TMPD/w" | head -8 | cut -c1-300 | sed 's/^/    /'
	fi
}

fix_build go_shop || exit 0
PROG=$FIX_DIR/prog
RUN=$(mktemp -d "$TMPD/run-XXXX")
(
	cd "$RUN" && ulimit -c unlimited || exit
	GOTRACEBACK=crash "$PROG" leak >"$RUN/stdout" 2>"$RUN/stderr" &
	echo $! >"$RUN/pid"
	wait
) >/dev/null 2>&1 &
SHELL_PID=$!
for i in $(seq 200); do LIVE_PID=$(cat "$RUN/pid" 2>/dev/null) && [ -n "$LIVE_PID" ] && break; sleep 0.05; done
[ -n "$LIVE_PID" ] || { fail "go-hang: the program did not start"; exit 0; }
# Until the program says every goroutine is parked (the bound only keeps a
# broken fixture from hanging the test).
for i in $(seq 6000); do
	[ -f "$RUN/ready" ] || ! kill -0 "$LIVE_PID" 2>/dev/null && break
	sleep 0.05
done
[ -f "$RUN/ready" ] || { fail "go-hang: the program never got ready: $(tail -2 "$RUN/stderr" | tr '\n' ' ')"; exit 0; }

report_json "go-hang/live" "$RUN/live.json" --pid "$LIVE_PID" "$PROG" --threads all || exit 0
"$ASYNCORE" snapshot "$LIVE_PID" -o "$RUN/snap.core.zst" 2>"$RUN/snap.err" ||
	fail "go-hang/snapshot: $(head -2 "$RUN/snap.err" | tr '\n' ' ')"
LIVE_OK=0
python3 "$WAITS" globals "$PROG" --pid "$LIVE_PID" >"$RUN/live-globals.json" 2>"$RUN/gdb.err" && LIVE_OK=1
[ $LIVE_OK -eq 1 ] || fail "go-hang/live: gdb -p: $(tail -1 "$RUN/gdb.err")"

# What /proc says of the fds while the program runs.
mkdir -p "$RUN/proc"
for f in /proc/"$LIVE_PID"/fd/*; do echo "${f##*/} $(readlink "$f")"; done >"$RUN/proc/fds" 2>/dev/null
cp /proc/"$LIVE_PID"/net/tcp /proc/"$LIVE_PID"/net/tcp6 "$RUN/proc/" 2>/dev/null

# The runtime's dump, then its own abort: the core.
SENDER=$$
kill -QUIT "$LIVE_PID"
for i in $(seq 1200); do kill -0 "$LIVE_PID" 2>/dev/null || break; sleep 0.05; done
wait "$SHELL_PID" 2>/dev/null
if ! python3 "$ORACLE" runtime "$RUN/stderr" >"$RUN/rt.json" 2>"$RUN/rt.err" ||
	[ "$(jget "$RUN/rt.json" 'len(j["goroutines"]) > 300')" != True ]; then
	fail "go-hang: no goroutine dump on SIGQUIT: $(head -3 "$RUN/stderr" | tr '\n' ' ')"
	exit 0
fi
if [ $LIVE_OK -eq 1 ]; then
	waits "go-hang/live: blocked_on of each goroutine" "$RUN/live.json" "$RUN/live-globals.json" --proc "$RUN/proc"
fi
oracle "go-hang/live: goroutines as the runtime dumped them on SIGQUIT afterwards" compare-later "$RUN/rt.json" "$RUN/live.json"
if [ -s "$RUN/snap.core.zst" ] && report_json "go-hang/snapshot" "$RUN/snap.json" "$RUN/snap.core.zst" "$PROG" --threads all; then
	[ $LIVE_OK -eq 1 ] && waits "go-hang/snapshot: blocked_on of each goroutine" "$RUN/snap.json" "$RUN/live-globals.json"
	oracle "go-hang/snapshot: the snapshot's report has the live report's tasks" tasks-equal "$RUN/live.json" "$RUN/snap.json"
fi

CORE=$(ls "$RUN"/core* 2>/dev/null | head -1)
if [ -z "$CORE" ]; then
	core_pattern_is_local || { skip "go-hang/core: core_pattern '$(cat /proc/sys/kernel/core_pattern)' sends cores elsewhere"; exit 0; }
	fail "go-hang/core: the runtime's SIGABRT left no core in $RUN"; exit 0
fi
report_json "go-hang/core" "$RUN/core.json" "$CORE" "$PROG" --threads all || exit 0
if python3 "$WAITS" globals "$PROG" "$CORE" >"$RUN/core-globals.json" 2>"$RUN/gdb.err"; then
	waits "go-hang/core: blocked_on of each goroutine" "$RUN/core.json" "$RUN/core-globals.json"
else
	fail "go-hang/core: gdb: $(tail -1 "$RUN/gdb.err")"
fi
oracle "go-hang/core: goroutines as the runtime printed them on SIGQUIT" compare "$RUN/rt.json" "$RUN/core.json"
got=$(jget "$RUN/core.json" 'j["signal"]["name"] + " | " + j["cause"]["summary"]')
if [[ "$got" == "SIGABRT | "*" (dumped on SIGQUIT sent by pid $SENDER: the runtime printed its dump, then raised SIGABRT itself)" ]]; then
	pass "go-hang/core: the core's SIGABRT is the runtime's own; the cause names the SIGQUIT from pid $SENDER"
else
	fail "go-hang/core: signal | cause: '$got' (the SIGQUIT came from pid $SENDER)"
fi
"$ASYNCORE" report "$CORE" "$PROG" >"$RUN/text" 2>/dev/null
oracle "go-hang/core: text report's first line is the JSON's cause" text-cause "$RUN/text" "$RUN/core.json"
oracle "go-hang/core: text report's goroutine headers" text "$RUN/rt.json" "$RUN/text"
# The waiting section groups the consumers as the runtime counts them.
n=$(jget "$RUN/rt.json" 'sum(1 for g in j["goroutines"] if any(f["function"] == "main.consume" for f in g["frames"]))')
line="  $n goroutines: waits on chan receive of main.orders in main.consume, created by main.startConsumers"
if grep -qxF "$line" "$RUN/text"; then
	pass "go-hang/core: text report's waiting section:$line"
else
	fail "go-hang/core: text report has no line '$line': $(grep -m1 'goroutines: ' "$RUN/text")"
fi
"$ASYNCORE" report "$CORE" "$PROG" --format html >"$RUN/html" 2>/dev/null
if grep -qF "<li>$n goroutines: waits on chan receive of main.orders in main.consume, created by main.startConsumers</li>" "$RUN/html"; then
	pass "go-hang/core: the HTML page's waiting list groups the $n consumers"
else
	fail "go-hang/core: the HTML page's waiting list does not group the $n consumers"
fi
summary=$(jget "$RUN/core.json" 'j["cause"]["summary"]')
if [ -n "$summary" ] && grep -qF "$summary" "$RUN/html"; then
	pass "go-hang/core: the HTML page says the cause"
else
	fail "go-hang/core: the HTML page does not say '$summary'"
fi

# Stripped (-s -w: no symbols, no DWARF): the runtime's SIGQUIT core still
# names the hang by its biggest group as the runtime counts it, but no
# global: none is invented.
if fix_build go_shop stripped; then
	SRUN=$(mktemp -d "$TMPD/run-XXXX")
	(
		cd "$SRUN" && ulimit -c unlimited || exit
		GOTRACEBACK=crash "$FIX_DIR/prog" leak >"$SRUN/stdout" 2>"$SRUN/stderr" &
		echo $! >"$SRUN/pid"
		wait
	) >/dev/null 2>&1 &
	SHELL_PID=$!
	LIVE_PID=
	for i in $(seq 200); do LIVE_PID=$(cat "$SRUN/pid" 2>/dev/null) && [ -n "$LIVE_PID" ] && break; sleep 0.05; done
	for i in $(seq 6000); do
		[ -f "$SRUN/ready" ] || ! kill -0 "$LIVE_PID" 2>/dev/null && break
		sleep 0.05
	done
	kill -QUIT "$LIVE_PID" 2>/dev/null
	for i in $(seq 1200); do kill -0 "$LIVE_PID" 2>/dev/null || break; sleep 0.05; done
	wait "$SHELL_PID" 2>/dev/null
	SCORE=$(ls "$SRUN"/core* 2>/dev/null | head -1)
	if [ -n "$SCORE" ] && python3 "$ORACLE" runtime "$SRUN/stderr" >"$SRUN/rt.json" 2>/dev/null &&
		report_json "go-hang/stripped" "$SRUN/core.json" "$SCORE" "$FIX_DIR/prog" --threads all; then
		n=$(jget "$SRUN/rt.json" 'sum(1 for g in j["goroutines"] if any(f["function"] == "main.consume" for f in g["frames"]))')
		want="$n goroutines wait on chan receive in main.consume, created by main.startConsumers (dumped on SIGQUIT sent by pid $SENDER: "
		got=$(jget "$SRUN/core.json" 'j["cause"]["kind"] + ": " + j["cause"]["summary"]')
		named=$(jget "$SRUN/core.json" 'sorted(set(str((t["blocked_on"] or {}).get("object_name")) for t in j["tasks"]))')
		if [[ "$got" == "hang: $want"* ]] && [ "$named" = '["None"]' ]; then
			pass "go-hang/stripped: the cause as the runtime counts ($n consumers), no global named"
		else
			fail "go-hang/stripped: cause '$got', names $named (want 'hang: $want...', none)"
		fi
	else
		fail "go-hang/stripped: no core or no dump of the stripped build in $SRUN"
	fi
fi
exit 0
