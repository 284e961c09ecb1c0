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
# one: warnings and the rest of the tasks.  ingest stores the core with
# its tasks and their script frames.  Then
# the same without DWARF anywhere (pyenv's build: its executable, libpython
# and every extension module copied stripped; Debian's: copies whose
# build-ids match no debug file), live, from a snapshot and from a core:
# the layouts the description's (warned once, naming it), the tasks those
# of the runtime's own account and of the run with DWARF.  Each layout the
# asyncio reader uses is also checked against each build's DWARF
# (tests/cpython_dwarf_layout.py): pyenv's, and Debian's python3.11 on
# x86_64 and arm64 where their debug files are here.  A version that is
# not installed skips.
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

# hung NAME RUN LAUNCHER: the fixture run by LAUNCHER (the interpreter, or a
# script that execs it) in RUN, core dumps on, until it has written its
# account; sets HUNG.
hung() {
	local name=$1 run=$2 launcher=$3 i
	mkdir -p "$run"
	(cd "$run" && ulimit -c unlimited && exec "$launcher" "$ROOT/fixtures/hangs/asyncio_tasks.py") >"$run/out" 2>&1 &
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

# version NAME PY [LAUNCHER WITH]: live, snapshot, core (and its minicore),
# the core damaged, stored; sets LAST to its run.  With LAUNCHER (the
# interpreter without DWARF): live, snapshot (its exit status 1 for the
# layout's warning alone) and core, each also against WITH (the run with
# DWARF).
version() {
	local name=$1 py=$2 launcher=${3:-$2} with=${4:-} run=$W/run-${1// /-} core=
	hung "$name" "$run" "$launcher" || { unhang; return; }
	report_json "$name live" "$run/live.json" --pid "$HUNG" "$py" &&
		$CHECK "$run/live.json" "$run/tasks.txt" "$name live" && nodwarf "$name live" "$run/live.json" "$with"
	if "$ASYNCORE" snapshot "$HUNG" -o "$run/snap.core" >/dev/null 2>"$run/snap.err" ||
		{ [ $? -eq 1 ] && [ -n "$with" ] && [ -s "$run/snap.core" ] &&
		  ! grep "warning:" "$run/snap.err" | grep -qv "warning: asyncio: the program's debug info does not describe"; }; then
		report_json "$name snapshot" "$run/snap.json" "$run/snap.core" "$py" &&
			$CHECK "$run/snap.json" "$run/tasks.txt" "$name snapshot" &&
			nodwarf "$name snapshot" "$run/snap.json" "$with"
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
			$CHECK "$run/core.json" "$run/tasks.txt" "$name core" &&
			nodwarf "$name core" "$run/core.json" "$with"
		[ -z "$with" ] || { LAST=$run; return; }
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
	LAST=$run
}

# nodwarf NAME REPORT WITH: (WITH a run with DWARF; none: nothing to check)
# no module of the interpreter has debug info, the description used is
# warned once, and the tasks are the run with DWARF's (by name: frames,
# state, what each awaits).
nodwarf() {
	local name=$1 report=$2 with=$3
	[ -n "$with" ] || return 0
	python3 - "$report" "$with/live.json" "$name" <<'PY'
import json, re, sys
j, w = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
name = sys.argv[3]
mods = [m["path"] for m in j["modules"] if m.get("debuginfo") and re.search(r"python|/dynload/", m["path"])]
warned = [x for x in j["warnings"] if x.startswith("asyncio: the program's debug info does not describe")]
ok = not mods and len(warned) == 1 and re.search(r"; their layout is .*/cpython-3\.\d+\.json's", warned[0])
print("%s: %s: no DWARF; the description's layout, warned once%s" % (
    "PASS" if ok else "FAIL", name, "" if ok else ": debug info in %s, warnings %s" % (mods, warned)))
def tasks(r):
    return sorted((t.get("name") or "", [f["function"] for f in t["frames"]], t["state"],
                   (t.get("wait") or {}).get("kind") or "") for t in r["tasks"] if t["runtime"] == "asyncio")
ok = tasks(j) and tasks(j) == tasks(w)
print("%s: %s: the tasks are the run with DWARF's (%d)%s" % (
    "PASS" if ok else "FAIL", name, len(tasks(j)), "" if ok else ": %s, with DWARF %s" % (tasks(j), tasks(w))))
PY
}

# dwarf_layout NAME DESC FILE...: the description's layout against the
# DWARF of FILEs.
dwarf_layout() { python3 "$ROOT/tests/cpython_dwarf_layout.py" "$@"; }

# debug_file SYSROOT ELF: the debug file of ELF under SYSROOT, by build-id.
debug_file() {
	local id
	id=$(readelf -n "$2" 2>/dev/null | awk '/Build ID/ {print $3}')
	[ -n "$id" ] && [ -f "$1/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] &&
		echo "$1/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
}

for v in 3.8 3.9 3.10 3.11 3.12 3.13; do
	py=$(ls -d "$PYENV_DIR"/versions/$v.*/bin/python$v 2>/dev/null | sort -V | tail -1)
	if [ -z "$py" ]; then
		skip "cpython $v asyncio: not installed (pyenv install $v)"
		continue
	fi
	prefix=$(dirname "$(dirname "$py")")
	dwarf_layout "cpython $v" "$ROOT/share/asyncore/runtimes/cpython-$v.json" "$prefix/lib/libpython$v.so.1.0" \
		"$prefix"/lib/python$v/lib-dynload/_asyncio.*.so
	LAST=
	version "cpython $v asyncio" "$py"
	if ! DIR=$(fixture_build cpython "py$v-nodwarf"); then
		fail "cpython $v asyncio without DWARF: build failed"
	elif [ -n "$LAST" ]; then
		version "cpython $v asyncio without DWARF" "$DIR/bin/python$v" "$DIR/python" "$LAST"
	fi
done
if [ -x /usr/bin/python3.11 ]; then
	LAST=
	version "debian python3.11 asyncio" /usr/bin/python3.11
	if ! DIR=$(fixture_build cpython stripped); then
		fail "debian python3.11 asyncio without DWARF: build failed"
	elif [ -n "$LAST" ]; then
		version "debian python3.11 asyncio without DWARF" "$DIR/python3.11" "$DIR/python" "$LAST"
	fi
	if exe=$(debug_file / /usr/bin/python3.11) &&
		aso=$(debug_file / /usr/lib/python3.11/lib-dynload/_asyncio.cpython-311-x86_64-linux-gnu.so); then
		dwarf_layout "debian python3.11" "$ROOT/share/asyncore/runtimes/cpython-3.11.json" "$exe" "$aso"
	else
		skip "debian python3.11 layout against DWARF: no debug files (python3.11-dbg)"
	fi
else
	skip "debian python3.11 asyncio: no /usr/bin/python3.11"
fi
# Debian's arm64 python3.11 and python3.13, where make test-deps unpacked
# them (tests/aarch64_python.sh) with their debug files; 3.13's generations
# lie at 20 there (24 everywhere else), which the analyzer reads from the
# collector's generation0
for v in 3.11 3.13; do
	arm=$(dirname "$BUILD_FIX")/aarch64-python/python$v/root
	if exe=$(debug_file "$arm" "$arm/usr/bin/python$v") &&
		aso=$(debug_file "$arm" "$(ls "$arm"/usr/lib/python$v/lib-dynload/_asyncio.*.so 2>/dev/null | head -1)"); then
		dwarf_layout --except _gc_runtime_state.generations "debian arm64 python$v" \
			"$ROOT/share/asyncore/runtimes/cpython-$v.json" "$exe" "$aso"
	else
		skip "debian arm64 python$v layout against DWARF: no debug files under $arm"
	fi
done
