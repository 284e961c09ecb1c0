#!/usr/bin/env bash
# A live Go program (fixtures/go_shop `prog hang`: every goroutine parked,
# main in select{}), read with `report --pid` (and always killed): the
# process is left running, not stopped; its goroutines against the
# runtime's own dump of every goroutine, asked for afterwards with SIGQUIT
# (GOTRACEBACK=crash: the runtime prints them all, then dies; the program
# is hung, so nothing changes between the two moments: go_oracle.py
# compare); a snapshot (`snapshot PID -o FILE.zst`) reported from the file
# gives the same tasks.  The default build (DWARF) and the stripped one
# (pclntab only).  The pause is printed (process.paused_us), never asserted:
# `make bench` measures it.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"
source "$ROOT/tests/go_lib.sh"

have_asyncore || { fail "go-live: no asyncore at $ASYNCORE (run make)"; exit 0; }
go_deps go-live

LIVE_PIDS=()
live_cleanup() {
	local p
	for p in "${LIVE_PIDS[@]}"; do
		kill -CONT "$p" 2>/dev/null
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
	fix_cleanup
}
trap live_cleanup EXIT
trap 'exit 130' INT TERM

# state PID: the State letter of /proc/PID/status ("" when gone).
state() { sed -n 's/^State:\t\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null; }

# live_case NAME VARIANT: go_shop (build VARIANT) hung, read live.
live_case() {
	local name=go-live/$1 variant=$2
	fix_build go_shop "$variant" || return
	local prog=$FIX_DIR/prog run started
	run=$(mktemp -d "$TMPD/run-XXXX")
	started=$(date +%s)
	# The runtime prints its dump on SIGQUIT then aborts: no core of that.
	# Started by a subshell of its own, whose wait takes the news of its
	# death by a signal (the script's shell would print it).
	(
		cd "$run" && ulimit -c 0 || exit
		GOTRACEBACK=crash "$prog" hang >"$run/stdout" 2>"$run/stderr" &
		echo $! >"$run/pid"
		wait
	) >/dev/null 2>&1 &
	local shell=$! pid="" i
	for i in $(seq 200); do pid=$(cat "$run/pid" 2>/dev/null) && [ -n "$pid" ] && break; sleep 0.05; done
	[ -n "$pid" ] || { fail "$name: the program did not start"; return; }
	LIVE_PIDS+=("$pid")
	# Until the program says every goroutine is parked (or is gone): the
	# bound only keeps a broken fixture from hanging the test.
	for i in $(seq 6000); do
		[ -f "$run/ready" ] || ! kill -0 "$pid" 2>/dev/null && break
		sleep 0.05
	done
	if [ ! -f "$run/ready" ]; then
		fail "$name: the program never got ready: $(tail -2 "$run/stderr" | tr '\n' ' ')"
		return
	fi
	"$ASYNCORE" report --pid "$pid" --format json --threads all >"$run/live.json" 2>"$run/live.err"
	local rc=$?
	local paused n
	paused=$(jget "$run/live.json" 'j["process"]["paused_us"]')
	n=$(jget "$run/live.json" 'len([t for t in j["tasks"] if t["runtime"] == "go"])')
	if [ $rc -le 1 ] && json_ok "$run/live.json" && [ "$(jget "$run/live.json" 'j["process"]["pid"]')" = "$pid" ] &&
	   [ "${n:-0}" -gt 0 ]; then
		pass "$name: report --pid: exit $rc, $n goroutines, stopped $paused us (paused_us)"
	else
		fail "$name: report --pid: exit $rc, '$n' goroutines: $(head -2 "$run/live.err" | tr '\n' ' ')"
	fi
	# The program ran a collection once parked: each parked goroutine's
	# wait is stamped, and it has waited no longer than the program ran.
	local ran=$(( $(date +%s) - started + 1 )) since
	since=$(jget "$run/live.json" "sorted(set(str(t['wait']['since']) for t in j['tasks'] if t['state'] == 'waiting' and (t['fn'] or '').startswith('main.')))")
	if [ -n "$since" ] && [ "$(jget "$run/live.json" "all(isinstance(t['wait']['since'], int) and 0 <= t['wait']['since'] <= $ran for t in j['tasks'] if t['state'] == 'waiting' and (t['fn'] or '').startswith('main.'))")" = True ]; then
		pass "$name: each parked goroutine's wait.since is known, within the program's $ran s ($since)"
	else
		fail "$name: wait.since of the parked goroutines: $since (the program ran $ran s)"
	fi
	local st; st=$(state "$pid")
	if kill -0 "$pid" 2>/dev/null && [ -n "$st" ] && [ "$st" != T ] && [ "$st" != t ] && [ "$st" != Z ]; then
		pass "$name: the process is alive and not stopped afterwards (State $st)"
	else
		fail "$name: after report --pid the process is in State '$st'"
	fi

	"$ASYNCORE" snapshot "$pid" -o "$run/snap.core.zst" 2>"$run/snap.err"
	rc=$?
	if [ $rc -le 1 ] && [ -s "$run/snap.core.zst" ]; then
		"$ASYNCORE" report "$run/snap.core.zst" "$prog" --format json --threads all >"$run/snap.json" 2>"$run/snap.json.err"
		rc=$?
		if [ $rc -le 1 ] && json_ok "$run/snap.json"; then
			oracle "$name: the snapshot's report has the live report's tasks" tasks-equal "$run/live.json" "$run/snap.json"
		else
			fail "$name: report of the snapshot: exit $rc: $(head -2 "$run/snap.json.err" | tr '\n' ' ')"
		fi
	else
		fail "$name: snapshot: exit $rc: $(head -2 "$run/snap.err" | tr '\n' ' ')"
	fi
	st=$(state "$pid")
	if [ -n "$st" ] && [ "$st" != T ] && [ "$st" != t ]; then
		pass "$name: the process is alive and not stopped after the snapshot (State $st)"
	else
		fail "$name: after snapshot the process is in State '$st'"
	fi

	# The runtime's own dump of every goroutine, then its exit.
	kill -QUIT "$pid"
	for i in $(seq 1200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
	kill -9 "$pid" 2>/dev/null
	wait "$shell" 2>/dev/null
	if ! python3 "$ORACLE" runtime "$run/stderr" >"$run/rt.json" 2>"$run/rt.err" ||
		[ "$(jget "$run/rt.json" 'len(j["goroutines"]) > 0')" != True ]; then
		fail "$name: no goroutine dump on SIGQUIT: $(head -3 "$run/stderr" | tr '\n' ' ')"
		return
	fi
	oracle "$name: the program's goroutines as the runtime dumped them on SIGQUIT afterwards" compare-later "$run/rt.json" "$run/live.json"
}

live_case default ""
live_case stripped stripped
exit 0
