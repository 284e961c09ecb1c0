#!/usr/bin/env bash
# asyncio's pending tasks on every CPython from 3.8 to 3.13 that pyenv has
# installed here, and Debian's python3.11: fixtures/hangs/asyncio_tasks.py
# (tasks awaiting a queue, an event, sleeps, a gather, a task; one blocking
# the loop in time.sleep) read live (report --pid), from its snapshot, from
# the core an outside SIGABRT leaves (gcore's when the kernel's core_pattern
# pipes cores elsewhere) and from that core's minicore.  The oracle is the
# runtime's own account of its tasks, written by the fixture once every
# task is suspended (asyncio.all_tasks(), each task's name, its coroutines'
# cr_await chain with each frame's line, the type of its _fut_waiter; the
# running one's own line).  The cause names the line of the task that
# blocks the loop.  Then the core damaged: a cycle in an await chain, an
# awaited object of garbage, a collector's list of garbage and a cycle in
# one: warnings and the rest of the tasks.  ingest stores the core with its
# tasks and their script frames.  A version that is not installed skips.
. "$(dirname "$0")/lib.sh"

W=$(mktemp -d)
HUNG=
unhang() {
	[ -z "$HUNG" ] || { kill -9 "$HUNG"; wait "$HUNG"; } 2>/dev/null
	HUNG=
}
cleanup() {
	unhang
	[ -n "${KEEP:-}" ] || rm -rf "$W"
}
trap cleanup EXIT
PYENV_DIR=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
CHECK="python3 $ROOT/tests/cpython_asyncio.py"

# hung NAME PY RUN: the fixture under PY in RUN, core dumps on, until it
# has written its account; sets HUNG.
hung() {
	local name=$1 py=$2 run=$3 i
	mkdir -p "$run"
	(cd "$run" && ulimit -c unlimited && exec "$py" "$ROOT/fixtures/hangs/asyncio_tasks.py") >"$run/out" 2>&1 &
	HUNG=$!
	for i in $(seq 6000); do
		[ -f "$run/ready" ] || ! kill -0 "$HUNG" 2>/dev/null && break
		sleep 0.05
	done
	[ -f "$run/ready" ] || { fail "$name: the fixture did not start: $(tail -1 "$run/out")"; return 1; }
}

# the field FIELD (1-based, of tasks.txt) of the first task whose frames
# hold TEXT
field() { awk -F'|' -v t="$2" -v f="$3" 'index($2, t) {print $f; exit}' "$1"; }

# damage NAME PY RUN CORE: the core with each damage, read.
damage() {
	local name=$1 py=$2 run=$3 core=$4 tasks=$3/tasks.txt iter coro tid
	iter=$(field "$tasks" "middle (" 6)
	coro=$(field "$tasks" "middle (" 5 | cut -d, -f1)
	python3 "$ROOT/tests/corrupt_core.py" "$core" "$run/cycle.core" poke "$iter+16=$coro" &&
		report_json "$name cycle" "$run/cycle.json" "$run/cycle.core" "$py" &&
		$CHECK "$run/cycle.json" "$tasks" "$name cycle" cycle "middle ("
	iter=$(field "$tasks" "consumer (" 6)
	python3 "$ROOT/tests/corrupt_core.py" "$core" "$run/garbage.core" poke "$iter+16=0x4141414141414140" &&
		report_json "$name garbage" "$run/garbage.json" "$run/garbage.core" "$py" &&
		$CHECK "$run/garbage.json" "$tasks" "$name garbage" garbage "consumer ("
	tid=$(field "$tasks" "joiner (" 4)
	# the task's PyGC_Head (16 bytes before it): its _gc_next
	python3 "$ROOT/tests/corrupt_core.py" "$core" "$run/gclist.core" poke "$((tid - 16))=0x4141414141414140" &&
		report_json "$name gclist" "$run/gclist.json" "$run/gclist.core" "$py" &&
		$CHECK "$run/gclist.json" "$tasks" "$name gclist" gclist "joiner ("
	python3 "$ROOT/tests/corrupt_core.py" "$core" "$run/gccycle.core" poke "$((tid - 16))=$((tid - 16))" &&
		report_json "$name gccycle" "$run/gccycle.json" "$run/gccycle.core" "$py" &&
		$CHECK "$run/gccycle.json" "$tasks" "$name gccycle" gccycle "joiner ("
}

# stored NAME RUN CORE PY: ingest stores the core with the report's asyncio
# tasks and their script frames (the report of the core, $RUN/core.json).
stored() {
	local name=$1 run=$2 core=$3 got want
	"$ASYNCORE" ingest --db "$run/store.db" --jobs 1 --binary "$4" "$core" >"$run/ingest.out" 2>&1
	got=$("$ASYNCORE" query --db "$run/store.db" --format csv \
		"SELECT (SELECT count(*) FROM cores), (SELECT count(*) FROM tasks WHERE runtime = 'asyncio'),
		 (SELECT count(*) FROM task_frames WHERE kind = 'script')" 2>&1 | tail -1)
	want=$(json_get "$run/core.json" '"1,%d,%d" % (sum(t["runtime"] == "asyncio" for t in j["tasks"]),
		sum(f["kind"] == "script" for t in j["tasks"] for f in t["frames"]))')
	check "$name ingest: the core is stored with its asyncio tasks and their script frames ($got, the report $want)" \
		[ "$got" = "$want" ]
}

# version NAME PY: live, snapshot, core (and its minicore), the core
# damaged, stored.
version() {
	local name=$1 py=$2 run=$W/run-${1// /-} core=
	hung "$name" "$py" "$run" || { unhang; return; }
	report_json "$name live" "$run/live.json" --pid "$HUNG" "$py" &&
		$CHECK "$run/live.json" "$run/tasks.txt" "$name live"
	if "$ASYNCORE" snapshot "$HUNG" -o "$run/snap.core" >/dev/null 2>"$run/snap.err"; then
		report_json "$name snapshot" "$run/snap.json" "$run/snap.core" "$py" &&
			$CHECK "$run/snap.json" "$run/tasks.txt" "$name snapshot"
	else
		fail "$name snapshot: $(head -1 "$run/snap.err")"
	fi
	if core_pattern_is_local; then
		kill -ABRT "$HUNG"
		wait "$HUNG" 2>/dev/null
		core=$(ls "$run"/core* 2>/dev/null | head -1)
	fi
	if [ -z "$core" ] && kill -0 "$HUNG" 2>/dev/null; then
		gdb -batch -nx -q -p "$HUNG" -ex "gcore $run/gcore" >"$run/gcore.log" 2>&1
		core=$run/gcore
	fi
	unhang
	if [ -s "$core" ]; then
		report_json "$name core" "$run/core.json" "$core" "$py" &&
			$CHECK "$run/core.json" "$run/tasks.txt" "$name core"
		if "$ASYNCORE" minicore "$core" -o "$run/mini.core" >/dev/null 2>"$run/mini.err" &&
			report_json "$name minicore" "$run/mini.json" "$run/mini.core" "$py"; then
			check "$name minicore: its tasks are the core's" \
				[ "$(json_get "$run/mini.json" 'j["tasks"]')" = "$(json_get "$run/core.json" 'j["tasks"]')" ]
		fi
		damage "$name" "$py" "$run" "$core"
		stored "$name" "$run" "$core" "$py"
	else
		skip "$name core: no core of the hung process"
	fi
}

for v in 3.8 3.9 3.10 3.11 3.12 3.13; do
	py=$(ls -d "$PYENV_DIR"/versions/$v.*/bin/python$v 2>/dev/null | sort -V | tail -1)
	if [ -z "$py" ]; then
		skip "cpython $v asyncio: not installed (pyenv install $v)"
		continue
	fi
	version "cpython $v asyncio" "$py"
done
if [ -x /usr/bin/python3.11 ]; then
	version "debian python3.11 asyncio" /usr/bin/python3.11
else
	skip "debian python3.11 asyncio: no /usr/bin/python3.11"
fi
