#!/usr/bin/env bash
# Every CPython from 3.8 to 3.13 that pyenv has installed here (a small
# executable over libpython3.X.so, DWARF in the library), through the
# shipped descriptions (share/asyncore/runtimes/cpython-3.X.json), the
# version chosen from the process.  The oracle is the interpreter's own
# faulthandler dump: at the fatal signal for a core, on SIGUSR1 sent after
# asyncore has detached for a live process.
# - each description's layout (and 3.13's offsets block) against the
#   version's own headers compiled for x86_64 and aarch64;
# - a crash inside a C call (ctypes.string_at(0)) a few Python calls deep
#   with two threads asleep in Python, read from its core: DWARF first,
#   DWARF only (the description without its layout), the layout alone, a
#   layout all wrong under DWARF, and without DWARF in libpython (stripped);
#   and its minicore;
# - a crash in a generator that a coroutine iterates;
# - a live process parked in Python (threads asleep, the GIL released, and
#   one spinning in a loop of one line, holding it), read with report --pid
#   and from a snapshot;
# - a thread with a thread state in a sub-interpreter too, live;
# - a cycle in a frame chain and a code object of garbage, patched into a
#   core: partial results and warnings; 3.13's own offsets
#   (_Py_DebugOffsets) preferred to the layout;
# - a CPython no description is of (3.7), said so;
# - Debian's static python3.11, with its debug file and without, live and
#   from a snapshot.
# A version that is not installed skips, saying which.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/cpython_lib.sh"

W=$(mktemp -d)
RUN_DIRS=()
PARKED=
# unpark: the parked process (if any) killed and reaped.
unpark() {
	[ -z "$PARKED" ] || { kill -9 "$PARKED"; wait "$PARKED"; } 2>/dev/null
	PARKED=
}
cleanup() {
	unpark
	[ -n "${KEEP:-}" ] || rm -rf "$W" "${RUN_DIRS[@]}"
}
trap cleanup EXIT
export XDG_CONFIG_HOME=$W/config
ASYNCORE=$(checkout_asyncore "$W/co")
CMP="python3 $ROOT/tests/cpython_compare.py"
PYENV_DIR=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")

warnings() { json_get "$1" '"\n".join(j["warnings"])'; }

# The debug file found for libpython in report $1, or None.
lib_debuginfo() {
	json_get "$1" '[m.get("debuginfo") for m in j["modules"] if "/libpython" in m["path"]][0]'
}

# compare NAME OUT RUN [live]: the report OUT against the run's own dump.
compare() { $CMP "$1" "$2" "$3/faulthandler.txt" "$3/threads.txt" ${4:+"$4"}; }

# clean NAME OUT: exit 0 and no warning.
clean() {
	if [ "$RC" -eq 0 ] && [ -z "$(warnings "$2")" ]; then
		pass "$1: exit 0, no warnings"
	else
		fail "$1: exit 0, no warnings: exit $RC: $(warnings "$2" | head -3 | tr '\n' ' ')"
	fi
}

# py_core V VARIANT [SCRIPT]: build and crash SCRIPT (crash.py); sets DIR,
# CORE, RUN.
py_core() {
	local name="cpython $1${2:+ ($2)}${3:+ $3}"
	if ! DIR=$(fixture_build cpython "$2"); then fail "$name: build failed"; return 1; fi
	if ! CORE=$(fixture_core "$DIR" "${3:-crash.py}" 2>"$W/core.err"); then
		skip "$name: $(head -1 "$W/core.err")"; return 1
	fi
	RUN=$(dirname "$CORE")
	RUN_DIRS+=("$RUN")
	[ -s "$RUN/faulthandler.txt" ] || { fail "$name: no faulthandler.txt"; return 1; }
}

# The syscalls a thread asleep in time.sleep waits in (x86_64: select,
# nanosleep, clock_nanosleep, pselect6; aarch64: pselect6, nanosleep,
# clock_nanosleep).
SLEEPS=" 23 35 230 270 72 101 115 "
READ=0   # x86_64's read

# parked PID N [R [reading]]: the process has N threads waiting in one of
# SLEEPS and R (default 1: park.py's spinner) running, in no system call;
# with "reading", one more waits in read (arrive.py's main thread).
parked() {
	local t n=0 running=0 reads=0 nr
	for t in /proc/"$1"/task/*; do
		nr=$(cut -d' ' -f1 "$t/syscall" 2>/dev/null) || return 1
		case "$SLEEPS" in
			*" $nr "*) n=$((n + 1)) ;;
			*) if [ "$nr" = "$READ" ]; then reads=$((reads + 1))
			   else [ "$nr" = running ] || return 1; running=$((running + 1)); fi ;;
		esac
	done
	[ "$n" -eq "$2" ] && [ "$running" -eq "${3:-1}" ] && [ "$reads" -eq "$([ "${4:-}" = reading ] && echo 1 || echo 0)" ]
}

# parked_or_gone PID N R: parked, or the process has exited.
parked_or_gone() { parked "$@" || ! kill -0 "$1" 2>/dev/null; }

# wait_until TRIES CMD...: CMD until it holds, polled (bounded: a broken
# fixture must not hang the suite).
wait_until() {
	local tries=$1 i; shift
	for i in $(seq "$tries"); do "$@" && return 0; sleep 0.05; done
	return 1
}

# dumped FILE [N]: faulthandler's dump of N (4) threads is complete.
dumped() { [ "$(grep -cE '^(Current thread|Thread) ' "$1")" -eq "${2:-4}" ] && grep -q ' in <module>$' "$1"; }

# live V DIR: park.py under V; report --pid and a snapshot, then
# faulthandler's dump on SIGUSR1, compared.
live() {
	local v=$1 dir=$2 run=$dir/run-live-$$
	rm -rf "$run"; mkdir -p "$run"; RUN_DIRS+=("$run")
	(cd "$run" && exec "$dir/prog" park.py) >"$run/stdout" 2>&1 &
	PARKED=$!
	if ! wait_until 1200 parked "$PARKED" 3 || [ ! -s "$run/threads.txt" ]; then
		fail "cpython $v live: the process did not park: $(head -3 "$run/stdout" | tr '\n' ' ')"
		unpark
		return
	fi
	local out=$W/live-$v.json snap=$W/snap-$v.core
	report_json "cpython $v live" "$out" --pid "$PARKED"
	local live_rc=$RC
	"$ASYNCORE" snapshot "$PARKED" -o "$snap" >/dev/null 2>"$W/snap.err" ||
		fail "cpython $v snapshot: $(head -1 "$W/snap.err")"
	kill -USR1 "$PARKED"
	wait_until 400 dumped "$run/faulthandler.txt" ||
		fail "cpython $v live: faulthandler wrote no dump of 4 threads"
	unpark
	if [ -s "$out" ]; then
		compare "cpython $v live" "$out" "$run" live
		RC=$live_rc clean "cpython $v live" "$out"
	fi
	if [ -s "$snap" ] && report_json "cpython $v snapshot" "$W/snap-$v.json" "$snap"; then
		compare "cpython $v snapshot" "$W/snap-$v.json" "$run" live
		clean "cpython $v snapshot" "$W/snap-$v.json"
	fi
}

# arrive V DIR: arrive.py under V, read by report --pid held between its
# warm-up and its stop (ASYNCORE_TEST_HOLD) while the process starts a
# thread the warm-up never read: the stop's reading misses its pages, and
# the report, read again on a second stop, has that thread's frames as
# faulthandler dumps them after.
arrive() {
	local v=$1 dir=$2 run=$dir/run-arrive-$$ hold=$W/hold-arrive-$1 out=$W/arrive-$1.json
	if ! have_hooks; then
		skip "cpython $v arriving thread: no test build at $ASYNCORE_HOOKS (make all)"; return
	fi
	rm -rf "$run"; mkdir -p "$run"; RUN_DIRS+=("$run")
	mkfifo "$run/in"
	(cd "$run" && exec "$dir/prog" arrive.py <in) >"$run/stdout" 2>&1 &
	PARKED=$!
	exec 7>"$run/in"
	if ! wait_until 1200 parked "$PARKED" 1 0 reading || [ ! -s "$run/threads.txt" ]; then
		fail "cpython $v arriving thread: the process did not park: $(head -3 "$run/stdout" | tr '\n' ' ')"
		exec 7>&-; unpark; return
	fi
	hold_cores "$hold" "live-$PARKED"
	ASYNCORE_TEST_HOLD=$hold "$ASYNCORE_HOOKS" report --pid "$PARKED" --format json >"$out" 2>"$out.err" &
	local reader=$!
	if [ -z "$(hold_wait "$hold" "live-$PARKED")" ]; then
		fail "cpython $v arriving thread: report --pid never reached its stop"
	else
		echo go >&7
		wait_until 1200 arrived "$run/threads.txt" "$PARKED" ||
			fail "cpython $v arriving thread: no newcomer thread asleep"
		hold_release "$hold" "live-$PARKED"
	fi
	wait "$reader"; RC=$?
	exec 7>&-
	kill -USR1 "$PARKED"
	wait_until 400 dumped "$run/faulthandler.txt" 3 ||
		fail "cpython $v arriving thread: faulthandler wrote no dump of 3 threads"
	unpark
	[ -s "$out" ] || { fail "cpython $v arriving thread: no report: $(head -2 "$out.err")"; return; }
	compare "cpython $v arriving thread" "$out" "$run" live
	clean "cpython $v arriving thread" "$out"
	check "cpython $v arriving thread: its frames are in the report" \
		grep -q '"newcomer (arrive.py:' "$out"
}

# arrived THREADS PID: THREADS names the newcomer, and every thread of PID
# sleeps.
arrived() { grep -q ' newcomer$' "$1" && parked "$2" 3 0; }

# subinterp V DIR: a thread with a thread state in a sub-interpreter and
# one in the main interpreter, live: the sub-interpreter's frames in the
# activations inside run_string, the main one's outside, in the order
# faulthandler dumps the main interpreter's (it dumps one interpreter; the
# sub-interpreter's frames are the ones its code, written here, runs).
subinterp() {
	local v=$1 dir=$2 run=$dir/run-sub-$$
	rm -rf "$run"; mkdir -p "$run"; RUN_DIRS+=("$run")
	(cd "$run" && exec "$dir/prog" subinterp.py) >"$run/stdout" 2>&1 &
	PARKED=$!
	if ! wait_until 1200 parked_or_gone "$PARKED" 2 0; then
		fail "cpython $v subinterpreter: the process did not park: $(head -3 "$run/stdout" | tr '\n' ' ')"
		unpark
		return
	fi
	if ! kill -0 "$PARKED" 2>/dev/null; then
		wait "$PARKED" 2>/dev/null
		skip "cpython $v subinterpreter: $(head -1 "$run/stdout")"
		PARKED=
		return
	fi
	local out=$W/sub-$v.json
	report_json "cpython $v subinterpreter" "$out" --pid "$PARKED"
	kill -USR1 "$PARKED"
	wait_until 400 dumped "$run/faulthandler.txt" 2 ||
		fail "cpython $v subinterpreter: faulthandler wrote no dump of 2 threads"
	unpark
	[ -s "$out" ] || return
	python3 - "$out" "$run/faulthandler.txt" "$run/threads.txt" "cpython $v subinterpreter" <<'PY'
import json, os, re, sys
j = json.load(open(sys.argv[1]))
name = sys.argv[4]
tids = {l.split()[2]: (int(l.split()[0], 16), int(l.split()[1])) for l in open(sys.argv[3])}
stacks, cur = {}, None
for line in open(sys.argv[2]):
    m = re.match(r'(?:Current thread|Thread) (0x[0-9a-f]+)', line)
    if m:
        cur = stacks.setdefault(int(m.group(1), 16), [])
    m = re.match(r'  File "(.*)", line (\d+) in (.*)', line)
    if m and cur is not None:
        cur.append("%s (%s:%s)" % (m.group(3), os.path.basename(m.group(1)), m.group(2)))
ident, tid = tids["host"]
host = [t for t in j["threads"] if t["tid"] == tid][0]
got = [f["function"] for f in host["frames"] if f["kind"] == "script"]
got = [re.sub(r"^\w+\.", "", g) for g in got]     # 3.11+: qualified names
want = ["deep (<string>:4)", "<module> (<string>:5)"] + stacks[ident]
print("%s: %s: the host thread's frames: the sub-interpreter's, then the main one's" %
      ("PASS" if got == want else "FAIL", name))
if got != want:
    print("    asyncore %s\n    expected %s" % (got, want))
names = [f["kind"] == "script" and f["function"] or f.get("function") or "" for f in host["frames"]]
at = lambda pred: min([i for i, n in enumerate(names) if pred(n)] or [-1])
run = at(lambda n: n.startswith(("interp_run_string", "_run_script")))
inner = at(lambda n: n.startswith("<module> (<string>"))
outer = at(lambda n: n.startswith(("host (", "Thread.host (")))
ok = -1 < inner < run < outer
print("%s: %s: the sub-interpreter's frames inside run_string, the main one's outside" %
      ("PASS" if ok else "FAIL", name))
ok = j["warnings"] == []
print("%s: %s: no warnings%s" % ("PASS" if ok else "FAIL", name, "" if ok else ": %s" % j["warnings"][:3]))
PY
}

# poke NAME SPEC...: a copy of CORE with SPECs written (corrupt_core.py
# poke) reported into $W/NAME.json; false when it could not be made.
poke() {
	local name=$1; shift
	python3 "$ROOT/tests/corrupt_core.py" "$CORE" "$W/$name.core" poke "$@" 2>"$W/poke.err" ||
		{ fail "$name: cannot patch the core: $(cat "$W/poke.err")"; return 1; }
	report_json "$name" "$W/$name.json" "$W/$name.core"
	local rc=$RC
	rm -f "$W/$name.core"
	RC=$rc
}

# script_frames REPORT TID: a thread's script frames, one a line.
script_frames() {
	json_get "$1" '"\n".join(f["function"] or "-" for t in j["threads"] if t["tid"] == '"$2"'
	                         for f in t["frames"] if f["kind"] == "script")'
}

# shifted_layout V OUT: the shipped description of V with every layout
# offset 8 bytes off (on, or back where a type's size ends it): right only
# where DWARF (or 3.13's own block) wins.
shifted_layout() {
	python3 - "$ROOT/share/asyncore/runtimes/cpython-$1.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for members in d["layout"].values():
    for m, v in members.items():
        if m != "size":
            v[0] += 8 if v[0] + 8 + v[1] <= members.get("size", 1 << 20) else -8
json.dump(d, open(sys.argv[2], "w"))
PY
}

# runtime_at REPORT: _PyRuntime's address in the core of REPORT.
runtime_at() {
	local lib base sym
	lib=$(json_get "$1" '[m["path"] for m in j["modules"] if "/libpython" in m["path"]][0]')
	base=$(json_get "$1" '[m["start"] for m in j["modules"] if "/libpython" in m["path"]][0]')
	sym=$(nm -D "$lib" | awk '$3 == "_PyRuntime" {print $1}')
	printf '0x%x' $((base + 0x$sym))
}

# debug_offsets: 3.13's _Py_DebugOffsets, read from the process first: a
# description whose layout is wrong still reads every frame; a core whose
# block lost its cookie, or holds an offset that is none, is read through
# the layout, warned.
debug_offsets() {
	local runtime wrong=$W/wrong-layout.json
	runtime=$(runtime_at "$W/core-3.13.json")
	python3 - "$ROOT/share/asyncore/runtimes/cpython-3.13.json" "$wrong" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
L = d["layout"]
L["PyThreadState"]["native_thread_id"] = [152, 8]      # thread_id: a pthread_t
L["_PyInterpreterFrame"]["previous"] = [16, 8]         # f_funcobj
L["PyCodeObject"]["co_qualname"] = [120, 8]            # co_name
json.dump(d, open(sys.argv[2], "w"))
PY
	if report_json "cpython 3.13 offsets first" "$W/offsets.json" "$CORE" --runtime "$wrong"; then
		compare "cpython 3.13 offsets first" "$W/offsets.json" "$RUN"
		clean "cpython 3.13 offsets first" "$W/offsets.json"
	fi
	if poke "cpython 3.13 no cookie" "$runtime=0"; then
		local got=$W/cpython\ 3.13\ no\ cookie.json
		check "cpython 3.13 no cookie: warned, the layout used" \
			grep -qE '^runtime cpython \(cpython-3.13\): _PyRuntime does not start with the offsets block.s cookie "xdebugpy"; the offsets are .*/cpython-3.13.json.s$' <(warnings "$got")
		compare "cpython 3.13 no cookie" "$got" "$RUN"
	fi
	if poke "cpython 3.13 bad offset" "$runtime+200=0x7fffffff"; then
		local got=$W/cpython\ 3.13\ bad\ offset.json
		check "cpython 3.13 bad offset: warned, the layout's used" \
			grep -qE '^runtime cpython \(cpython-3.13\): the offset of PyThreadState.native_thread_id in _PyRuntime.s offsets block \(at \+200\) is not one' <(warnings "$got")
		compare "cpython 3.13 bad offset" "$got" "$RUN"
	fi
}

# hostile V: a frame chain running back into itself and a code object of
# garbage, in the layout's terms (tests/cpython_frames.py).
hostile() {
	local v=$1 desc=$ROOT/share/asyncore/runtimes/cpython-$1.json runtime
	runtime=$(runtime_at "$W/core-$v.json")
	python3 "$ROOT/tests/cpython_frames.py" "$CORE" "$runtime" "$desc" >"$W/states-$v.json" ||
		{ fail "cpython $v hostile: cannot read the thread states"; return; }
	# at EXPR: a value of the thread states; N is the napper's thread state
	at() {
		python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
tid = {l.split()[2]: l.split()[0:2] for l in open(sys.argv[2])}
def T(name):
    pt, t = tid[name]
    return [x for x in s["threads"] if x["thread"] in (int(pt, 16), int(t))][0]
print(hex(eval(sys.argv[3])))' "$W/states-$v.json" "$RUN/threads.txt" "$1"
	}
	local napper main
	napper=$(awk '$3 == "napper" {print $2}' "$RUN/threads.txt")
	main=$(awk '$3 == "MainThread" {print $2}' "$RUN/threads.txt")
	script_frames "$W/core-$v.json" "$napper" >"$W/napper-$v.base"
	script_frames "$W/core-$v.json" "$main" >"$W/main-$v.base"
	# the napper's last frame points back to its first: a cycle
	if poke "cpython $v hostile cycle" \
		"$(at 'T("napper")["frames"][-1]["frame"]')+$(at 's["next"]')=$(at 'T("napper")["frames"][0]["frame"]')"; then
		local got=$W/cpython\ $v\ hostile\ cycle.json
		check "cpython $v hostile cycle: the cycle is cut, warned" \
			grep -qE 'runtime cpython \(cpython-'"$v"'\): thread [0-9]+: entry 0x[0-9a-f]+ repeats \(a cycle\)' \
			<(warnings "$got")
		check "cpython $v hostile cycle: the napper's frames before the cycle, once each" \
			[ "$(script_frames "$got" "$napper")" = "$(cat "$W/napper-$v.base")" ]
		check "cpython $v hostile cycle: the main thread's frames unchanged" \
			[ "$(script_frames "$got" "$main")" = "$(cat "$W/main-$v.base")" ]
	fi
	# gamma's code object (the main thread's second frame on 3.8-3.10; 3.11+
	# too) of garbage: every member the description reads points nowhere
	local code specs=() m
	code=$(at 'T("MainThread")["frames"][1]["code"]')
	for m in $(python3 -c 'import json,sys; print(" ".join(str(v) for v in json.load(open(sys.argv[1]))["code_members"].values()))' "$W/states-$v.json"); do
		specs+=("$code+$m=0x4141414141414141")
	done
	if poke "cpython $v hostile code" "${specs[@]}"; then
		local got=$W/cpython\ $v\ hostile\ code.json
		check "cpython $v hostile code: a code object of garbage: exit 1, warned" \
			[ "$RC" -eq 1 -a -n "$(warnings "$got" | grep -E 'runtime cpython \(cpython-'"$v"'\): thread [0-9]+: .*0x4141414141414141')" ]
		check "cpython $v hostile code: its frame is still there, the others unchanged" \
			[ "$(script_frames "$got" "$main" | sed 2d)" = "$(sed 2d "$W/main-$v.base")" -a \
			  "$(script_frames "$got" "$main" | wc -l)" = "$(wc -l <"$W/main-$v.base")" -a \
			  "$(script_frames "$got" "$napper")" = "$(cat "$W/napper-$v.base")" ]
	fi
}

# ---- a version no description is of: said, no frames ---------------------------------
for v in 3.7 3.6; do
	ls -d "$PYENV_DIR"/versions/"$v".[0-9]*/bin/python"$v" >/dev/null 2>&1 || continue
	if DIR=$(fixture_build cpython "py$v") && CORE=$(fixture_core "$DIR" old.py 2>/dev/null); then
		RUN_DIRS+=("$(dirname "$CORE")")
		if report_json "cpython $v undescribed" "$W/old-$v.json" "$CORE"; then
			check "cpython $v undescribed: exit 1, the version is said, no script frame" \
				[ "$RC" -eq 1 -a "$(json_get "$W/old-$v.json" 'sum(f["kind"] == "script" for t in j["threads"] for f in t["frames"])')" = 0 -a \
				  -n "$(warnings "$W/old-$v.json" | grep -E '^runtime cpython: _PyRuntime is in .*/libpython'"$v"'m?\.so\.1\.0, but no description is of its version \(no Py_Version, and libpython'"$v"'m?\.so\.1\.0 is no module a description names\); its frames are not read$')" ]
		fi
	else
		skip "cpython $v undescribed: no core"
	fi
	break
done

for v in 3.8 3.9 3.10 3.11 3.12 3.13; do
	if ! ls -d "$PYENV_DIR"/versions/"$v".[0-9]*/bin/python"$v" >/dev/null 2>&1; then
		skip "cpython $v: not installed (no $PYENV_DIR/versions/$v.*/bin/python$v)"
		continue
	fi
	# ---- the layout is the headers', on x86_64 and aarch64 ------------------------
	inc=$(ls -d "$PYENV_DIR"/versions/"$v".[0-9]*/include/python"$v" 2>/dev/null | sort -V | tail -1)
	if [ -f "$inc/Python.h" ]; then
		python3 "$ROOT/tests/cpython_layout.py" "cpython $v" \
			"$ROOT/share/asyncore/runtimes/cpython-$v.json" "$inc"
	else
		skip "cpython $v layout: no headers under $PYENV_DIR/versions/$v.*/include"
	fi
	# ---- a core, through the layout; then DWARF only -----------------------------
	if py_core "$v" "py$v"; then
		out=$W/core-$v.json
		if report_json "cpython $v core" "$out" "$CORE"; then
			compare "cpython $v core" "$out" "$RUN"
			clean "cpython $v core" "$out"
			check "cpython $v core: libpython has DWARF" [ "$(lib_debuginfo "$out")" != None ]
			# a minicore of it keeps what the Python frames need
			if "$ASYNCORE" minicore "$CORE" -o "$W/mini-$v.core" >/dev/null 2>"$W/mini.err" &&
				report_json "cpython $v minicore" "$W/mini-$v.json" "$W/mini-$v.core"; then
				check "cpython $v minicore: its threads and frames are the core's" \
					[ "$(json_get "$W/mini-$v.json" 'j["threads"]')" = "$(json_get "$out" 'j["threads"]')" ]
			else
				fail "cpython $v minicore: $(head -1 "$W/mini.err")"
			fi
			rm -f "$W/mini-$v.core"
			hostile "$v"
			[ "$v" != 3.13 ] || debug_offsets
		fi
		if report_json "cpython $v dwarf" "$W/dwarf-$v.json" "$CORE" --runtime "$DIR/cpython-dwarf.json"; then
			compare "cpython $v dwarf" "$W/dwarf-$v.json" "$RUN"
			clean "cpython $v dwarf" "$W/dwarf-$v.json"
		fi
		# the layout alone, before DWARF (what a build without DWARF reads; the
		# executable's and the extensions' DWARF describe the same types, so
		# a stripped libpython alone does not make it so)
		python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d["prefer"] = "layout"; d.pop("offsets", None); json.dump(d, open(sys.argv[2], "w"))' \
			"$ROOT/share/asyncore/runtimes/cpython-$v.json" "$W/layout-$v.json"
		if report_json "cpython $v layout" "$W/layout-out-$v.json" "$CORE" --runtime "$W/layout-$v.json"; then
			compare "cpython $v layout" "$W/layout-out-$v.json" "$RUN"
			clean "cpython $v layout" "$W/layout-out-$v.json"
		fi
		# DWARF before the layout: a layout all wrong changes nothing here
		shifted_layout "$v" "$W/shifted-$v.json"
		if report_json "cpython $v dwarf first" "$W/first-$v.json" "$CORE" --runtime "$W/shifted-$v.json"; then
			compare "cpython $v dwarf first" "$W/first-$v.json" "$RUN"
			clean "cpython $v dwarf first" "$W/first-$v.json"
		fi
		# ---- live and a snapshot ----------------------------------------------------
		live "$v" "$DIR"
		arrive "$v" "$DIR"
		subinterp "$v" "$DIR"
	fi
	# ---- a generator that a coroutine iterates, each entered from C ---------------
	if py_core "$v" "py$v" gen.py && report_json "cpython $v gen" "$W/gen-$v.json" "$CORE"; then
		compare "cpython $v gen" "$W/gen-$v.json" "$RUN"
		clean "cpython $v gen" "$W/gen-$v.json"
	fi
	# ---- without DWARF: libpython stripped, the layout ----------------------------
	if py_core "$v" "py$v-stripped"; then
		out=$W/stripped-$v.json
		if report_json "cpython $v stripped" "$out" "$CORE"; then
			check "cpython $v stripped: libpython has no DWARF" [ "$(lib_debuginfo "$out")" = None ]
			compare "cpython $v stripped" "$out" "$RUN"
			clean "cpython $v stripped" "$out"
		fi

	fi
done

# ---- Debian's python3.11: one static executable, with DWARF (python3.11-dbg) and without
if [ -x /usr/bin/python3.11 ]; then
	for variant in "" stripped; do
		if DIR=$(fixture_build cpython "$variant"); then
			live "3.11-debian${variant:+-$variant}" "$DIR"
		else
			fail "cpython 3.11 (Debian${variant:+, $variant}): build failed"
		fi
	done
else
	skip "cpython 3.11 (Debian): no /usr/bin/python3.11"
fi
