#!/usr/bin/env bash
# report --pid and snapshot on hung programs the test starts (and always
# kills): fixtures/live_hang (a deadlock, a condition wait, a spinner, many
# threads parked deep).  Oracles: gdb attached after asyncore has let the
# process go (the hung state does not move), the snapshot's report and
# gdb's reading of the snapshot, gcore's core of the same process.  The
# pause is measured from inside (the fixture's watcher thread: the longest
# gap between its 1 ms sleeps) and by asyncore (process.paused_us), both
# printed; the process must make progress afterwards.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/fixlib.sh"

have_asyncore || { skip "live: no asyncore binary"; exit 0; }
command -v gdb >/dev/null || { skip "live: no gdb"; exit 0; }
fix_build live_hang || exit 0
PROG=$FIX_DIR/prog

LIVE_PIDS=()
live_cleanup() {
	local p
	for p in "${LIVE_PIDS[@]}"; do
		kill -CONT "$p" 2>/dev/null
		{ kill -9 "$p" && wait "$p"; } 2>/dev/null
	done
	fix_cleanup
}
trap live_cleanup EXIT

# start MODE: the fixture ($PROG) hung in MODE; sets HUNG (pid) and GAP
# (its report file).
start() {
	GAP=$TMPD/gap-$1-$RANDOM
	local out=$GAP.out i
	"$PROG" "$1" "$GAP" >"$out" 2>&1 &
	HUNG=$!
	LIVE_PIDS+=("$HUNG")
	for i in $(seq 200); do grep -q ready "$out" 2>/dev/null && break; sleep 0.02; done
	sleep 0.2   # every thread at its hang
}

# inside PID: "GAP_US COUNTER" as the fixture's watcher saw them (and
# starts a new measurement).
inside() {
	rm -f "$GAP"
	kill -USR1 "$1" 2>/dev/null || return 1
	local i
	for i in $(seq 100); do [ -s "$GAP" ] && break; sleep 0.02; done
	cat "$GAP"
}

# state PID: the one-letter state of /proc/PID/stat.
state() { sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null; }

# progress NAME PID: PASS when the counter moves and the process runs.
progress() {
	local a b
	a=$(inside "$2" | cut -d' ' -f2); sleep 0.1; b=$(inside "$2" | cut -d' ' -f2)
	if [ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ] && [ "$(state "$2")" != t ]; then
		pass "$1: the process runs on (counter $a -> $b)"
	else
		fail "$1: the process does not run on (counter '$a' -> '$b', state $(state "$2"))"
	fi
}

gdb_live() {
	LC_ALL=C timeout 120 gdb -batch -nx -iex 'set auto-load python-scripts off' -ex 'set width 0' \
		-ex 'set print frame-arguments scalars' -ex 'set backtrace past-main on' \
		-x "$ROOT/tests/gdb_frames.py" "$@" 2>/dev/null |
		sed -n '/^GDB_FRAMES_BEGIN$/,/^GDB_FRAMES_END$/p' | sed '1d;$d'
}

# names JSON: per thread (by tid), its functions, one line a thread.
names() {
	python3 - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for t in sorted(d["threads"], key=lambda t: t["tid"]):
    print(t["tid"], " ".join(f.get("function") or "?" for f in t["frames"]))
EOF
}

# ---- the hung C program: report --pid against gdb attached afterwards ----
start all
inside "$HUNG" >/dev/null
"$ASYNCORE" report --pid "$HUNG" "$PROG" --format json --threads all --no-async >"$TMPD/live.json" 2>"$TMPD/live.err"
rc=$?
gap=$(inside "$HUNG" | cut -d' ' -f1)
paused=$(jget "$TMPD/live.json" 'j["process"]["paused_us"]')
if [ $rc -eq 0 ] && [ "$(jget "$TMPD/live.json" 'j["core"]')" = None ] &&
   [ "$(jget "$TMPD/live.json" 'j["process"]["pid"]')" = "$HUNG" ] &&
   [ -n "$(jget "$TMPD/live.json" 'j["process"]["taken_at"]')" ]; then
	pass "live-json: core null, process {pid, paused_us, taken_at}"
else
	fail "live-json: rc $rc, $(head -2 "$TMPD/live.err")"
fi
kind=$(jget "$TMPD/live.json" 'j["cause"]["kind"]')
first=$("$ASYNCORE" report --pid "$HUNG" "$PROG" --no-async 2>/dev/null | head -1)
if [ "$kind" = deadlock ] && [[ "$first" == "cause:       deadlock: thread "*" holds lock_"*" and waits for lock_"*" (process $HUNG read while running, stopped for "*" ms at "*")" ]]; then
	pass "live-cause: the deadlock, first in the text report ($first)"
else
	fail "live-cause: kind '$kind', first line '$first'"
fi
nthreads=$(jget "$TMPD/live.json" 'len(j["threads"])')
if [ "$nthreads" = 6 ]; then pass "live-threads: 6 threads"; else fail "live-threads: '$nthreads' threads, not 6"; fi
if [ -n "$paused" ] && [ "$paused" -gt 0 ] && [ "$paused" -lt 1000000 ]; then
	pass "live-pause-small: stopped ${paused} us by asyncore's clock, longest gap ${gap} us seen inside (6 threads)"
else
	fail "live-pause-small: paused_us '$paused', gap inside '$gap'"
fi
if gdb_live "$PROG" -p "$HUNG" >"$TMPD/live.gdb" && [ -s "$TMPD/live.gdb" ]; then
	if python3 "$ROOT/tests/oracle_compare.py" "$TMPD/live.json" "$TMPD/live.gdb" live >"$TMPD/o"; then
		pass "live-gdb: every thread as gdb attached afterwards shows it"
	else
		fail "live-gdb: $(head -5 "$TMPD/o" | tr '\n' ' ')"
	fi
else
	fail "live-gdb: gdb could not attach"
fi
progress live-progress "$HUNG"

# The deadlocked pair, named.
for f in take_second lock_in_order deadlock_ab deadlock_ba wait_for_never cond_waiter spin_forever watcher; do
	grep -q "\"$f\"" "$TMPD/live.json" || { fail "live-functions: $f missing"; break; }
done && pass "live-functions: the deadlock, the condition wait, the spinner and the watcher named"

# Text: the header says how long the process was stopped.
"$ASYNCORE" report --pid "$HUNG" "$PROG" >"$TMPD/live.txt" 2>"$TMPD/live.txt.err"
if grep -qE "^process: +$HUNG, stopped for [0-9]+\.[0-9]{3} ms at 20" "$TMPD/live.txt"; then
	pass "live-text: $(head -1 "$TMPD/live.txt")"
else
	fail "live-text: $(head -1 "$TMPD/live.txt") $(head -1 "$TMPD/live.txt.err")"
fi
"$ASYNCORE" report --pid "$HUNG" "$PROG" --format html >"$TMPD/live.html" 2>/dev/null
if grep -q "stopped for" "$TMPD/live.html" && grep -q "lock_in_order" "$TMPD/live.html"; then
	pass "live-html"
else
	fail "live-html: no process fact or stacks"
fi

# ---- snapshot: report, gdb and gcore agree ----
"$ASYNCORE" snapshot "$HUNG" -o "$TMPD/snap.core" "$PROG" 2>"$TMPD/snap.err"
rc=$?
"$ASYNCORE" snapshot "$HUNG" -o "$TMPD/snap.core.zst" "$PROG" 2>/dev/null
gdb -batch -nx -q -p "$HUNG" -ex "gcore $TMPD/gcore.core" >/dev/null 2>&1
if [ $rc -eq 0 ] && [ -s "$TMPD/snap.core" ] && [ -s "$TMPD/snap.core.zst" ]; then
	pass "snapshot-written: $(tail -1 "$TMPD/snap.err" | sed 's/^asyncore: //')"
else
	fail "snapshot-written: rc $rc $(head -2 "$TMPD/snap.err")"
fi
asy_json "$TMPD/snap.json" "$TMPD/snap.core" "$PROG" --no-async
asy_json "$TMPD/snapz.json" "$TMPD/snap.core.zst" "$PROG" --no-async
asy_json "$TMPD/gcore.json" "$TMPD/gcore.core" "$PROG" --no-async
# The spinner moves between two stops: its innermost line is left out.
names "$TMPD/live.json" | sed 's/^[0-9]* //' | sort >"$TMPD/n.live"
names "$TMPD/snap.json" | sed 's/^[0-9]* //' | sort >"$TMPD/n.snap"
names "$TMPD/snapz.json" | sed 's/^[0-9]* //' | sort >"$TMPD/n.snapz"
names "$TMPD/gcore.json" | sed 's/^[0-9]* //' | sort >"$TMPD/n.gcore"
if cmp -s "$TMPD/n.live" "$TMPD/n.snap" && cmp -s "$TMPD/n.snap" "$TMPD/n.snapz" &&
   cmp -s "$TMPD/n.snap" "$TMPD/n.gcore"; then
	pass "snapshot-stacks: report --pid, the snapshot (.core and .zst) and gcore's core show the same stacks"
else
	fail "snapshot-stacks: $(diff "$TMPD/n.snap" "$TMPD/n.gcore" | head -6 | tr '\n' ' ')"
fi
if gdb_live "$PROG" "$TMPD/snap.core" >"$TMPD/snap.gdb" &&
   python3 "$ROOT/tests/oracle_compare.py" "$TMPD/snap.json" "$TMPD/snap.gdb" snapshot >"$TMPD/o"; then
	pass "snapshot-gdb: gdb reads the snapshot and shows the same stacks"
else
	fail "snapshot-gdb: $(head -5 "$TMPD/o" 2>/dev/null | tr '\n' ' ')"
fi
snap=$(stat -c %s "$TMPD/snap.core"); gc=$(stat -c %s "$TMPD/gcore.core" 2>/dev/null || echo 0)
if [ "$gc" -gt 0 ] && [ $((snap * 10)) -le "$gc" ]; then
	pass "snapshot-size: $snap bytes against gcore's $gc"
else
	fail "snapshot-size: $snap bytes against gcore's $gc"
fi
for j in snap snapz; do
	summary=$(jget "$TMPD/$j.json" 'j["cause"]["kind"] + ": " + j["cause"]["summary"]')
	gcore=$(jget "$TMPD/gcore.json" 'j["cause"]["kind"] + ": " + j["cause"]["summary"]')
	if [[ "$summary" == "deadlock: "*" (process $HUNG read while running, stopped for "*" ms at "*"Z)" ]] &&
	   [ "$(jget "$TMPD/$j.json" '"process" in j')" = False ] &&
	   [ "${gcore% (*}" = "${summary% (*}" ] && [[ "$gcore" == *" (dumped while running, with no fatal signal)" ]]; then
		pass "snapshot-cause-$j: the snapshot's note says when it was read ($summary); gcore's core of the same process names the same deadlock"
	else
		fail "snapshot-cause-$j: '$summary', gcore's '$gcore'"
	fi
done
if [ "$(jget "$TMPD/snap.json" 'j["signal"]')" = None ] &&
   [ "$(jget "$TMPD/snap.json" 'j["threads"][0]["tid"]')" = "$HUNG" ]; then
	pass "snapshot-main-first: no signal, the main thread first"
else
	fail "snapshot-main-first: signal $(jget "$TMPD/snap.json" 'j["signal"]'), first $(jget "$TMPD/snap.json" 'j["threads"][0]["tid"]')"
fi
tid=$(jget "$TMPD/live.json" '[t["tid"] for t in j["threads"] if any(f.get("function")=="deadlock_ab" for f in t["frames"])][0]')
"$ASYNCORE" snapshot "$HUNG" -o "$TMPD/snapt.core" --thread "$tid" "$PROG" 2>/dev/null
if [ "$("$ASYNCORE" report "$TMPD/snapt.core" "$PROG" --format json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["threads"][0]["tid"])')" = "$tid" ]; then
	pass "snapshot-thread: --thread puts that thread first"
else
	fail "snapshot-thread: --thread $tid not first"
fi
"$ASYNCORE" report --pid "$HUNG" "$PROG" --thread "$tid" --format json >"$TMPD/livet.json" 2>/dev/null
first=$(jget "$TMPD/livet.json" 'j["threads"][0]["tid"]')
sig=$(jget "$TMPD/livet.json" 'j["signature"]')
snap_sig=$("$ASYNCORE" report "$TMPD/snapt.core" "$PROG" --format json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["signature"])')
if [ "$first" = "$tid" ] && [ "$sig" = "$snap_sig" ] && [[ "$sig" != *"__libc_pause < main"* ]]; then
	pass "report-thread: report --pid --thread shows that thread first and signs the hang with it, as the snapshot does ($sig)"
else
	fail "report-thread: first $first, signature '$sig'"
fi
"$ASYNCORE" report --pid "$HUNG" "$PROG" --thread 2147483647 >/dev/null 2>"$TMPD/livet.err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$TMPD/livet.err")" = 1 ] && grep -q "no such thread" "$TMPD/livet.err"; then
	pass "report-thread-missing: a thread the process lacks is refused in one line (exit 2)"
else
	fail "report-thread-missing: exit $rc: $(head -2 "$TMPD/livet.err")"
fi
"$ASYNCORE" report "$TMPD/snapt.core" "$PROG" --thread "$tid" >/dev/null 2>"$TMPD/livet.err"
rc=$?
if [ $rc -eq 2 ] && grep -q "needs --pid" "$TMPD/livet.err"; then
	pass "report-thread-core: --thread on a core is refused (exit 2): $(head -1 "$TMPD/livet.err")"
else
	fail "report-thread-core: exit $rc: $(head -2 "$TMPD/livet.err")"
fi
db=$TMPD/live.db
"$ASYNCORE" ingest --db "$db" --quiet "$TMPD/snap.core" >/dev/null 2>&1
n=$("$ASYNCORE" query --db "$db" --format csv "select count(*) from cores" 2>/dev/null | tail -1)
sig=$("$ASYNCORE" query --db "$db" --format csv "select signature from cores" 2>/dev/null | tail -1)
if [ "$n" = 1 ] && [ "$sig" = '"deadlock: take_second, take_second"' ]; then
	pass "snapshot-ingest: stored like any core, signed by its deadlock's waiting functions ($sig)"
else
	fail "snapshot-ingest: $n rows, signature '$sig'"
fi
progress snapshot-progress "$HUNG"

# ---- a process stopped before stays stopped ----
kill -STOP "$HUNG"; sleep 0.1
"$ASYNCORE" report --pid "$HUNG" "$PROG" >/dev/null 2>&1
rc=$?
sleep 0.1
if [ $rc -le 1 ] && [ "$(state "$HUNG")" = T ]; then
	pass "live-stopped: a stopped process is read and stays stopped"
else
	fail "live-stopped: rc $rc, state $(state "$HUNG")"
fi
kill -CONT "$HUNG"
progress live-continued "$HUNG"
{ kill -9 "$HUNG" && wait "$HUNG"; } 2>/dev/null

# ---- 201 threads x 80 frames: the pause, and --max-pause ----
start deep:200:80
inside "$HUNG" >/dev/null
"$ASYNCORE" report --pid "$HUNG" "$PROG" --format json >"$TMPD/deep.json" 2>"$TMPD/deep.err"
rc=$?
gap=$(inside "$HUNG" | cut -d' ' -f1)
paused=$(jget "$TMPD/deep.json" 'j["process"]["paused_us"]')
frames=$(jget "$TMPD/deep.json" 'sum(len(t["frames"]) for t in j["threads"])')
if [ $rc -eq 0 ] && [ "$(jget "$TMPD/deep.json" 'len(j["threads"])')" = 202 ] && [ "${frames:-0}" -gt 16000 ]; then
	pass "live-pause-201: stopped ${paused} us by asyncore's clock, longest gap ${gap} us seen inside (202 threads, $frames frames)"
else
	fail "live-pause-201: rc $rc, $(jget "$TMPD/deep.json" 'len(j["threads"])') threads, $frames frames"
fi
progress live-201-progress "$HUNG"

{ kill -9 "$HUNG" && wait "$HUNG"; } 2>/dev/null

# ---- threads created and exiting all the time, during every attach ----
start churn
ok=0 why=""
for i in 1 2 3 4 5; do
	# Threads keep coming: on a loaded machine stopping them all may take
	# longer than the default --max-pause; the bound has tests of its own.
	"$ASYNCORE" report --pid "$HUNG" "$PROG" --max-pause 10000 >"$TMPD/churn.txt" 2>"$TMPD/churn.err"
	rc=$?
	if [ $rc -le 1 ] && grep -q wait_for_never "$TMPD/churn.txt"; then
		ok=$((ok + 1))
	else   # what the failed run said, kept past the runs after it
		why="$why [run $i: rc $rc, $(grep -c '^Thread' "$TMPD/churn.txt") threads, $(head -2 "$TMPD/churn.err" | tr '\n' ' ')]"
	fi
done
if [ $ok -eq 5 ] && [ "$(cat /proc/"$HUNG"/task/*/stat 2>/dev/null | sed 's/.*) \(.\).*/\1/' | grep -c '[tT]')" = 0 ]; then
	pass "live-churn: 5 reports while threads come and go, none left stopped"
else
	fail "live-churn: $ok of 5 reports$why"
fi
progress live-churn-progress "$HUNG"
{ kill -9 "$HUNG" && wait "$HUNG"; } 2>/dev/null

# ---- a process in another mount namespace (a container) ----
# Its executable exists only there: found through /proc/PID/root.
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null; then
	mnt=$TMPD/ns
	mkdir -p "$mnt"
	unshare -m --propagation private sh -c "mount -t tmpfs none '$mnt' && cp '$PROG' '$mnt/prog' &&
		exec '$mnt/prog' all '$TMPD/ns.gap'" >"$TMPD/ns.out" 2>&1 &
	ns=$!
	LIVE_PIDS+=("$ns")
	for i in $(seq 200); do grep -q ready "$TMPD/ns.out" 2>/dev/null && break; sleep 0.02; done
	sleep 0.2
	if [ -e "$mnt/prog" ]; then
		skip "live-namespace: the mount is visible outside its namespace"
	else
		"$ASYNCORE" report --pid "$ns" --format json >"$TMPD/ns.json" 2>"$TMPD/ns.err"
		rc=$?
		if [ $rc -eq 0 ] && grep -q '"lock_in_order"' "$TMPD/ns.json" &&
		   [ "$(jget "$TMPD/ns.json" '[m["debuginfo"] for m in j["modules"] if m["path"].endswith("/ns/prog")][0]' 2>/dev/null)" != None ]; then
			pass "live-namespace: the executable read through /proc/PID/root, stacks with lines"
		else
			python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print([ (m["path"], m["debuginfo"]) for m in j["modules"]])' "$TMPD/ns.json" >"$TMPD/ns.mods" 2>&1
			fail "live-namespace: rc $rc: $(head -2 "$TMPD/ns.err" | tr '\n' ' ') $(head -c 300 "$TMPD/ns.mods")"
		fi
	fi
	{ kill -9 "$ns" && wait "$ns"; } 2>/dev/null
else
	skip "live-namespace: not root or no unshare"
fi

# ---- a recorder ring that keeps moving: read while stopped ----
REC=$FIX_DIR/prog_rec
PROG=$REC start deep:200:80
ticks() {
	python3 - "$1" <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
r = [r for r in d["recorders"] if r["name"] == "ticks"]
ev = [int(re.search(r"tick (\d+)", e["message"]).group(1)) for e in r[0]["events"]] if r else []
ok = len(ev) == 64 and ev == list(range(ev[0], ev[0] + 64))
print("%s %s" % ("consecutive" if ok else "broken", ev[-1] if ev else "none"))
EOF
}
"$ASYNCORE" report --pid "$HUNG" "$REC" --format json >"$TMPD/rec.json" 2>"$TMPD/rec.err"
rc=$?
"$ASYNCORE" snapshot "$HUNG" -o "$TMPD/rec.core" "$REC" 2>/dev/null
asy_json "$TMPD/recsnap.json" "$TMPD/rec.core" "$REC"
a=$(ticks "$TMPD/rec.json"); b=$(ticks "$TMPD/recsnap.json")
if [ $rc -eq 0 ] && [ "${a%% *}" = consecutive ] && [ "${b%% *}" = consecutive ] && [ "${b#* }" -gt "${a#* }" ]; then
	pass "live-recorder: the moving ring read whole while stopped, live (last tick ${a#* }) and in a later snapshot (${b#* })"
else
	fail "live-recorder: rc $rc, live '$a', snapshot '$b'"
fi
# Held while the process is stopped (tests/hooks/hold.c) until --max-pause
# has let it go: detached by the deadline, a report with its warning.
if have_hooks; then
	H=$TMPD/hold-stopped
	hold_cores "$H" "stopped-$HUNG"
	ASYNCORE_TEST_HOLD=$H "$ASYNCORE_HOOKS" report --pid "$HUNG" "$REC" --format json --max-pause 15 \
		>"$TMPD/short.json" 2>"$TMPD/short.err" &
	reader=$!
	held=$(hold_wait "$H" "stopped-$HUNG")
	for i in $(seq 1000); do [ "$(state "$HUNG")" != t ] && break; sleep 0.01; done
	let_go=$(state "$HUNG")
	hold_release "$H" "stopped-$HUNG"
	wait "$reader"; rc=$?
	paused=$(jget "$TMPD/short.json" 'j["process"]["paused_us"]')
	if [ -n "$held" ] && [ "$let_go" != t ] && [ $rc -eq 1 ] &&
	   grep -q "stopped for --max-pause (15 ms): detached, the report is partial" "$TMPD/short.err" &&
	   [ -n "$paused" ] && [ "$paused" -ge 15000 ] && [ "$paused" -lt 500000 ]; then
		pass "live-max-pause: detached after --max-pause 15 (stopped ${paused} us), a report with a warning"
	elif [ $rc -eq 2 ] && grep -q "not every thread stopped within --max-pause" "$TMPD/short.err"; then
		pass "live-max-pause: the threads took longer than --max-pause 15 to stop: detached, exit 2"
	else
		fail "live-max-pause: held '$held', state '$let_go', rc $rc, paused '$paused', $(head -2 "$TMPD/short.err" | tr '\n' ' ')"
	fi
else
	skip "live-max-pause: no test build at $ASYNCORE_HOOKS (make unit)"
fi
progress live-max-pause-progress "$HUNG"

# Killed while the process is stopped (traced, its 201 threads analysed):
# SIGKILL (the kernel detaches), SIGTERM and SIGINT (asyncore detaches).
tracer_of() { sed -n 's/^TracerPid:\t//p' "/proc/$1/status" 2>/dev/null; }
stopped_threads() { cat /proc/"$1"/task/*/stat 2>/dev/null | sed 's/.*) \(.\).*/\1/' | grep -c '[tT]'; }
# kill_when_traced SIG ARGS...: start asyncore ARGS, send it SIG (0: the
# fixture SIGKILL instead) as soon as it traces the fixture (its stop began;
# polled without sleeping: the stop may last a few ms); prints "TRACED RC
# ASYNCORE_PID" (TRACED 1 when the signal was sent during the stop).
kill_when_traced() {
	python3 - "$HUNG" "$@" <<'EOF'
import os, signal, subprocess, sys, time
hung, sig, cmd = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(os.environ["ERR"], "w"))
traced, end = 0, time.monotonic() + 60
while p.poll() is None and time.monotonic() < end:
    try:
        status = open("/proc/%d/status" % hung).read()
    except OSError:
        break
    if "\nTracerPid:\t%d\n" % p.pid in status:
        traced = 1
        os.kill(p.pid, sig) if sig else os.kill(hung, signal.SIGKILL)
        break
print(traced, p.wait(), p.pid)
EOF
}
for sig in KILL TERM INT; do
	read -r traced rc a < <(ERR=$TMPD/sig.err kill_when_traced "$(kill -l "$sig")" \
		"$ASYNCORE" report --pid "$HUNG" "$REC" --max-pause 0)
	sleep 0.1
	if [ "$traced" != 1 ]; then
		skip "live-sig$sig: asyncore ended (exit $rc) before it was seen tracing the process"
	elif [ "$(tracer_of "$HUNG")" = 0 ] && [ "$(stopped_threads "$HUNG")" = 0 ]; then
		pass "live-sig$sig: killed while the process was stopped (exit $rc): no thread left stopped or traced"
	else
		fail "live-sig$sig: asyncore $a, now tracer $(tracer_of "$HUNG"), $(stopped_threads "$HUNG") threads stopped"
	fi
	progress "live-sig$sig-progress" "$HUNG"
done

# The process killed while stopped: a clean error, exit 2.
{
	read -r traced rc a < <(ERR=$TMPD/gone.err kill_when_traced 0 "$ASYNCORE" report --pid "$HUNG" "$REC" --max-pause 0)
	wait "$HUNG"
} 2>/dev/null
if [ "$traced" != 1 ]; then
	skip "live-exit-mid-snapshot: asyncore ended (exit $rc) before it was seen tracing the process"
elif [ $rc -eq 2 ] && [ "$(wc -l <"$TMPD/gone.err")" -eq 1 ] &&
   grep -qE "exited (during the snapshot|while it was being stopped)" "$TMPD/gone.err"; then
	pass "live-exit-mid-snapshot: $(cat "$TMPD/gone.err")"
else
	fail "live-exit-mid-snapshot: rc $rc: $(head -3 "$TMPD/gone.err" | tr '\n' ' ')"
fi

# ---- folly: a blockingWait nest waiting for good, a suspended chain ----
# Spliced stacks as t_folly.sh shows them (a coroutine's frame is "f
# [coroutine]"), against the crashing build's expectation.
folly_frames() {
	python3 "$ROOT/tests/folly_frames.py" "$1"
}
if FOLLY=$(fixture_build folly_cpp hang 2>"$TMPD/fb.err"); then
	"$FOLLY/prog" >/dev/null 2>&1 &
	HUNG=$!
	LIVE_PIDS+=("$HUNG")
	sleep 0.5   # every thread at its hang
	sed 's/^crashing: /thread: /' "$(expect_file folly_cpp O2 stacks)" | sort >"$TMPD/folly.want"
	"$ASYNCORE" report --pid "$HUNG" "$FOLLY/prog" --format json >"$TMPD/folly.json" 2>"$TMPD/folly.err"
	rc=$?
	folly_frames "$TMPD/folly.json" | sort >"$TMPD/folly.live"
	"$ASYNCORE" snapshot "$HUNG" -o "$TMPD/folly.core.zst" "$FOLLY/prog" 2>/dev/null
	asy_json "$TMPD/follysnap.json" "$TMPD/folly.core.zst" "$FOLLY/prog"
	folly_frames "$TMPD/follysnap.json" | sort >"$TMPD/folly.snap"
	paused=$(jget "$TMPD/folly.json" 'j["process"]["paused_us"]')
	if [ $rc -eq 0 ] && cmp -s "$TMPD/folly.want" "$TMPD/folly.live" && cmp -s "$TMPD/folly.want" "$TMPD/folly.snap"; then
		pass "live-folly: async stacks and the suspended chain, live (stopped $paused us) and from a snapshot"
	else
		fail "live-folly: rc $rc: $(diff "$TMPD/folly.want" "$TMPD/folly.live" | head -4 | tr '\n' ' ') / $(diff "$TMPD/folly.want" "$TMPD/folly.snap" | head -4 | tr '\n' ' ')"
	fi
	if [ "$(state "$HUNG")" = R ] || [ "$(state "$HUNG")" = S ]; then
		pass "live-folly-runs: the process runs on"
	else
		fail "live-folly-runs: state $(state "$HUNG")"
	fi
	{ kill -9 "$HUNG" && wait "$HUNG"; } 2>/dev/null
else
	fail "live-folly: the fixture does not build: $(tail -2 "$TMPD/fb.err" | tr '\n' ' ')"
fi

# ---- bRPC bthreads in every wait kind, the workers busy for good ----
# Against the truth the fixture wrote (ids, entry functions, states, waits,
# workers; no thread crashed), live and from a snapshot.
bthread_truth() {
	(cd "$ROOT/tests" && python3 bthread_compare.py truth "$1" "$2") 2>&1 |
		grep -v "^crashing thread None is not the worker"
}
if BT=$(fixture_build bthread hang 2>"$TMPD/bb.err"); then
	"$BT/prog" 5 "$TMPD/bt.truth" >/dev/null 2>&1 &
	HUNG=$!
	LIVE_PIDS+=("$HUNG")
	for i in $(seq 200); do [ -s "$TMPD/bt.truth" ] && break; sleep 0.05; done
	sleep 0.3
	"$ASYNCORE" report --pid "$HUNG" "$BT/prog" --format json >"$TMPD/bt.json" 2>"$TMPD/bt.err"
	rc=$?
	"$ASYNCORE" snapshot "$HUNG" -o "$TMPD/bt.core" "$BT/prog" 2>/dev/null
	asy_json "$TMPD/btsnap.json" "$TMPD/bt.core" "$BT/prog"
	d1=$(bthread_truth "$TMPD/bt.truth" "$TMPD/bt.json")
	d2=$(bthread_truth "$TMPD/bt.truth" "$TMPD/btsnap.json")
	n=$(jget "$TMPD/bt.json" 'len(j["tasks"])')
	if [ $rc -eq 0 ] && [ -z "$d1" ] && [ -z "$d2" ] && [ "${n:-0}" -gt 0 ]; then
		pass "live-bthread: $n bthreads as the fixture made them, live (stopped $(jget "$TMPD/bt.json" 'j["process"]["paused_us"]') us) and from a snapshot"
	else
		fail "live-bthread: rc $rc: live: $(echo "$d1" | head -3 | tr '\n' ' ') snapshot: $(echo "$d2" | head -3 | tr '\n' ' ')"
	fi
	{ kill -9 "$HUNG" && wait "$HUNG"; } 2>/dev/null
else
	fail "live-bthread: the fixture does not build: $(tail -2 "$TMPD/bb.err" | tr '\n' ' ')"
fi

# ---- CPython 3.11: threads in threading.Event().wait(), one spinning ----
# The script frames of every thread against faulthandler's dump of every
# thread, asked for (SIGUSR2) after asyncore let the process go.
PY=/usr/bin/python3.11
if [ -x "$PY" ]; then
	cat >"$TMPD/hang.py" <<'EOF'
import faulthandler, signal, sys, threading
faulthandler.register(signal.SIGUSR2, file=open(sys.argv[1], "w"), all_threads=True)
event = threading.Event()

def waiter_leaf():
    event.wait()

def waiter():
    waiter_leaf()

def spin_leaf():
    x = 0
    while True:
        x += 1

def spinner():
    spin_leaf()

def main_wait():
    event.wait()

threading.Thread(target=waiter, daemon=True).start()
threading.Thread(target=spinner, daemon=True).start()
print("ready", flush=True)
main_wait()
EOF
	"$PY" "$TMPD/hang.py" "$TMPD/fh.txt" >"$TMPD/py.out" 2>&1 &
	HUNG=$!
	LIVE_PIDS+=("$HUNG")
	for i in $(seq 200); do grep -q ready "$TMPD/py.out" 2>/dev/null && break; sleep 0.02; done
	sleep 0.3
	# The shipped description, given: a build outside the checkout's root
	# (build/asan/asyncore) finds no share/ beside it.
	"$ASYNCORE" report --pid "$HUNG" "$PY" --format json \
		--runtime "$ROOT/share/asyncore/runtimes/cpython-3.11.json" >"$TMPD/py.json" 2>"$TMPD/py.err"
	rc=$?
	kill -USR2 "$HUNG"
	for i in $(seq 100); do grep -q "main_wait" "$TMPD/fh.txt" 2>/dev/null && break; sleep 0.02; done
	if python3 - "$TMPD/py.json" "$TMPD/fh.txt" >"$TMPD/py.cmp" <<'EOF'
import json, re, sys
j = json.load(open(sys.argv[1]))
def name(f):   # "Condition.wait (threading.py:327)" -> "wait"
    return f.split(" (")[0].split(".")[-1]
live = sorted(" < ".join(name(f["function"]) for f in t["frames"] if f["kind"] == "script")
              for t in j["threads"])
live = [l for l in live if l]
dump, cur = [], None
for line in open(sys.argv[2]):
    if line.startswith(("Thread ", "Current thread ")):
        cur = []
        dump.append(cur)
    m = re.match(r'\s+File ".*", line \d+ in (.*)', line)
    if m and cur is not None:
        cur.append(m.group(1))
dump = sorted(" < ".join(s) for s in dump)
print("live:", live)
print("faulthandler:", dump)
sys.exit(0 if live == dump and len(live) == 3 else 1)
EOF
	then
		pass "live-cpython: the Python frames of 3 threads (two waits, a spinner) as faulthandler dumps them afterwards (stopped $(jget "$TMPD/py.json" 'j["process"]["paused_us"]') us)"
	else
		fail "live-cpython: rc $rc: $(tr '\n' ' ' <"$TMPD/py.cmp") $(head -2 "$TMPD/py.err" | tr '\n' ' ')"
	fi
	{ kill -9 "$HUNG" && wait "$HUNG"; } 2>/dev/null
else
	skip "live-cpython: no /usr/bin/python3.11"
fi

# ---- errors: one line, exit 2 ----
err_case() {
	local name=$1 want=$2; shift 2
	"$@" >/dev/null 2>"$TMPD/err"
	local rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$TMPD/err")" -eq 1 ] && grep -qE "$want" "$TMPD/err"; then
		pass "$name: $(cat "$TMPD/err")"
	else
		fail "$name: rc $rc: $(head -3 "$TMPD/err" | tr '\n' ' ')"
	fi
}
err_case live-err-nosuch "no such process" "$ASYNCORE" report --pid 999999999
err_case live-err-kthread "kernel thread" "$ASYNCORE" report --pid 2
sh -c 'sleep 0 & exec sleep 30' &
parent=$!
LIVE_PIDS+=("$parent")
sleep 0.3
zombie=$(ps -o pid= --ppid "$parent" | tr -d ' ' | head -1)
if [ -n "$zombie" ] && [ "$(state "$zombie")" = Z ]; then
	err_case live-err-zombie "zombie" "$ASYNCORE" report --pid "$zombie"
else
	skip "live-err-zombie: no zombie made"
fi
start condwait
if test_dep strace strace "$TMPD/apt-strace.log"; then
	strace -p "$HUNG" -o /dev/null 2>/dev/null &
	tracer=$!
	sleep 0.3
	err_case live-err-traced "already traced by process $tracer \(strace\)" "$ASYNCORE" report --pid "$HUNG"
	kill "$tracer"; wait "$tracer" 2>/dev/null
else
	skip "live-err-traced: no strace"
fi
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	err_case live-err-user "another user \(uid 0" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$ASYNCORE" report --pid "$HUNG"
else
	skip "live-err-user: not root"
fi
progress live-err-progress "$HUNG"
