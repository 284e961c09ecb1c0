#!/usr/bin/env bash
# CPython 3.11's Python frames through the shipped runtime description
# (share/asyncore/runtimes/cpython-3.11.json, found without --runtime):
# Debian's python3.11 crashing in C code called through ctypes, with threads
# asleep in time.sleep and a lock wait, and with a generator and a
# coroutine on the stack; with DWARF (python3.11-dbg's debug file, a
# description without layout) and without (a copy whose build-id matches
# no debug file: the layout).  Each thread's script frames are compared
# with faulthandler's dump of every thread, written by the script at the
# crash.  Then hostile thread-state lists and frames, patched into a core.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/cpython_lib.sh"

W=$(mktemp -d)
RUN_DIRS=()
trap '[ -n "${KEEP:-}" ] || rm -rf "$W" "${RUN_DIRS[@]}"' EXIT
export XDG_CONFIG_HOME=$W/config
SHIPPED=$ROOT/share/asyncore/runtimes/cpython-3.11.json
CMP="python3 $ROOT/tests/cpython_compare.py"

report() { report_json "$@"; }

warnings() { json_get "$1" '"\n".join(j["warnings"])'; }

# py_core VARIANT SCRIPT: build and crash; sets DIR, CORE, RUN.
py_core() {
	if ! DIR=$(fixture_build cpython "$1"); then fail "cpython/${1:-default}: build failed"; return 1; fi
	if ! CORE=$(fixture_core "$DIR" "$2" 2>"$W/core.err"); then
		skip "cpython/${1:-default} $2: $(head -1 "$W/core.err")"; return 1
	fi
	RUN=$(dirname "$CORE")
	RUN_DIRS+=("$RUN")
	[ -s "$RUN/faulthandler.txt" ] || { fail "cpython/${1:-default} $2: no faulthandler.txt"; return 1; }
}

# compare NAME OUT: the report OUT against the run's own dump.
compare() { $CMP "$1" "$2" "$RUN/faulthandler.txt" "$RUN/threads.txt"; }

# oracle NAME OUT WHAT: the report OUT is the run's own dump, without
# warnings, and its crashing thread's frames are fixtures/cpython/expect/NAME.runtime.
oracle() {
	compare "$1" "$2"
	check "$1: exit 0, no warnings" [ $RC -eq 0 -a -z "$(warnings "$2")" ]
	interleaved "$2" >"$W/$1.order"
	if diff -u "$ROOT/fixtures/cpython/expect/$1.runtime" "$W/$1.order" >"$W/diff"; then
		pass "$1: $3"
	else
		fail "$1: $3"; sed 's/^/    /' "$W/diff" | head -20
	fi
}

# The debug file found for the interpreter of report $1, or None.
debuginfo() { json_get "$1" '[m.get("debuginfo") for m in j["modules"] if m["path"].endswith("/python3.11")][0]'; }

if ! test_dep python3.11 python3.11 "$W/apt.log"; then
	skip "cpython: python3.11 cannot be installed: $(tail -1 "$W/apt.log")"; exit 0
fi
# the debug file of Debian's python3.11 (and python3.11d)
test_dep python3.11d python3.11-dbg "$W/apt-dbg.log" || true

# ---- found without options, in the checkout and installed --------------------------

# the binary under test as ./asyncore of a checkout (this one's share/) and installed
mkdir -p "$W/co" "$W/inst/usr/bin" "$W/inst/usr/share/asyncore/runtimes"
cp "$ASYNCORE" "$W/co/asyncore"
ln -s "$ROOT/share" "$W/co/share"
cp "$ASYNCORE" "$W/inst/usr/bin/asyncore"
cp "$ROOT"/share/asyncore/runtimes/*.json "$W/inst/usr/share/asyncore/runtimes/"
ASYNCORE=$W/co/asyncore
"$ASYNCORE" runtimes >"$W/runtimes" 2>&1
check "runtimes: cpython listed from the checkout's share/asyncore/runtimes" \
	grep -qE "^cpython-3.11 +$ROOT/share/asyncore/runtimes/cpython-3.11.json$" "$W/runtimes"
check "runtimes: the search path listed" grep -qF "  $XDG_CONFIG_HOME/asyncore/runtimes (absent)" "$W/runtimes"
"$W/inst/usr/bin/asyncore" runtimes >"$W/runtimes-inst" 2>&1
check "runtimes: cpython listed from an installed share/asyncore/runtimes" \
	grep -qE "^cpython-3.11 +$W/inst/usr/share/asyncore/runtimes/cpython-3.11.json$" "$W/runtimes-inst"
"$ASYNCORE" runtimes --runtime "$ROOT/fixtures/toyvm/toy-tls.json" >"$W/runtimes-given" 2>&1
check "runtimes --runtime FILE: the file given listed first" \
	[ "$(head -1 "$W/runtimes-given" | awk '{print $1}')" = toy ]

# stale_siginfo REPORT: faulthandler installs its handler without SA_SIGINFO,
# so the siginfo area of its signal frame holds whatever its alternate stack
# held before.  The core of REPORT with that area made the garbage a used
# stack leaves gives the same cause: the caught fault, from the sigcontext's
# trap and the interrupted instruction, without a warning.
stale_siginfo() {
	local sp want
	# the crashing thread comes first; the trampoline's stack pointer is the
	# CFA of the frame it returns from
	sp=$(json_get "$1" '[f["cfa"] for f, g in zip(j["threads"][0]["frames"], j["threads"][0]["frames"][1:]) if g["role"] == "trampoline"][0]')
	want=$(json_get "$1" 'j["cause"]["kind"] + " " + j["cause"]["summary"]')
	check "crash: the cause is the caught NULL read (the siginfo area clean)" \
		grep -q '^null_dereference ' <<<"$want"
	python3 "$ROOT/tests/corrupt_core.py" "$CORE" "$W/stale.core" poke \
		"$sp+304=0x97888000978880:8" "$sp+312=0x55d0c2a1e4f0:8" "$sp+320=0x7f3a9c0012a0:8" 2>"$W/poke.err" ||
		{ fail "crash stale siginfo: cannot patch the core: $(cat "$W/poke.err")"; return; }
	report "crash stale siginfo" "$W/stale.json" "$W/stale.core"
	check "crash stale siginfo: the same cause ($want)" \
		[ "$(json_get "$W/stale.json" 'j["cause"]["kind"] + " " + j["cause"]["summary"]')" = "$want" ]
	check "crash stale siginfo: no warning" [ -z "$(warnings "$W/stale.json")" ]
	rm -f "$W/stale.core"
}

# ---- Debian's python3.11: crash.py ------------------------------------------------

if py_core "" crash.py; then
	DEFAULT_CORE=$CORE DEFAULT_RUN=$RUN
	out=$W/crash.json
	if report crash "$out" "$CORE"; then
		oracle crash "$out" "the crashing thread's frames in order"
		ASYNCORE=$W/inst/usr/bin/asyncore report "crash installed" "$W/crash-inst.json" "$CORE" &&
			check "crash: an installed asyncore finds the shipped description too" \
				[ "$(json_get "$W/crash-inst.json" 'j["threads"]')" = "$(json_get "$out" 'j["threads"]')" ]
		"$ASYNCORE" "$CORE" >"$W/crash.txt" 2>/dev/null
		check "crash text: [cpython] frames" grep -qE '^#[0-9]+ +\[cpython\] gamma \(crash\.py:41\)  -- /.*/crash\.py:41$' "$W/crash.txt"
		stale_siginfo "$out"
	fi
	# DWARF: every member by name from python3.11-dbg's debug file
	out=$W/crash-dwarf.json
	if report "crash dwarf" "$out" "$CORE" --runtime "$DIR/cpython-dwarf.json"; then
		if [ "$(debuginfo "$out")" = None ]; then
			skip "crash dwarf: python3.11 has no debug info here (python3.11-dbg: $(tail -1 "$W/apt-dbg.log"))"
		else
			compare "crash dwarf" "$out"
			check "crash dwarf: exit 0, no warnings" [ $RC -eq 0 -a -z "$(warnings "$out")" ]
		fi
	fi
fi

# ---- a generator and a coroutine ----------------------------------------------------

if py_core "" gen.py; then
	out=$W/gen.json
	report gen "$out" "$CORE" &&
		oracle gen "$out" "generator, coroutine and caller each after their own activation"
fi

# ---- without DWARF: the layout ------------------------------------------------------

if py_core stripped crash.py; then
	out=$W/stripped.json
	if report stripped "$out" "$CORE"; then
		check "stripped: python3.11 has no debug info" [ "$(debuginfo "$out")" = None ]
		compare "stripped" "$out"
		check "stripped: exit 0, no warnings" [ $RC -eq 0 -a -z "$(warnings "$out")" ]
	fi
	"$ASYNCORE" report "$CORE" --runtime "$DIR/cpython-dwarf.json" >/dev/null 2>"$W/err"
	check "stripped: a description without layout is refused: exit 2, one line naming the member" \
		[ $? -eq 2 -a "$(wc -l <"$W/err")" -eq 1 -a -n "$(grep -E "cpython-dwarf\.json: \\\$\.[a-z_.]+: member [a-z_.]+ of [A-Za-z_]+ is neither" "$W/err")" ]
fi

# ---- hostile thread states and frames -----------------------------------------------

# poke NAME SPEC...: a copy of the crash.py core with SPECs written (corrupt_core.py
# poke) reported into $W/NAME.json; false when it could not be made.
poke() {
	local name=$1; shift
	python3 "$ROOT/tests/corrupt_core.py" "$DEFAULT_CORE" "$W/$name.core" poke "$@" 2>"$W/poke.err" ||
		{ fail "hostile $name: cannot patch the core: $(cat "$W/poke.err")"; return 1; }
	report "hostile $name" "$W/$name.json" "$W/$name.core"
	local rc=$RC
	rm -f "$W/$name.core"
	RC=$rc
}

# frames NAME THREAD: the script frames of the thread named THREAD (threads.txt).
frames() {
	python3 - "$W/$1.json" "$DEFAULT_RUN/threads.txt" "$2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
tid = [int(l.split()[1]) for l in open(sys.argv[2]) if l.split()[2] == sys.argv[3]][0]
for t in j["threads"]:
    if t["tid"] == tid:
        print("\n".join(f["function"] or "-" for f in t["frames"] if f["kind"] == "script"))
PY
}

# warned NAME ERE: one of the report's warnings matches ERE.
warned() { warnings "$W/$1.json" | grep -qE "$2"; }

hostile() {
	[ -n "${DEFAULT_CORE:-}" ] || return
	local runtime layout
	runtime=0x$(nm -D /usr/bin/python3.11 | awk '$3 == "_PyRuntime" {print $1}')
	python3 "$ROOT/tests/cpython_core.py" "$DEFAULT_CORE" "$runtime" "$SHIPPED" >"$W/states.json" ||
		{ fail "hostile: cannot read the thread states"; return; }
	# at NAME EXPR: a value of the thread states (tests/cpython_core.py) or the layout
	at() { python3 -c '
import json, sys
s = json.load(open(sys.argv[1])); L = json.load(open(sys.argv[2]))["layout"]
tid = {l.split()[2]: int(l.split()[1]) for l in open(sys.argv[3])}
T = {n: [t for t in s["threads"] if t["tid"] == i][0] for n, i in tid.items()}
o = lambda t, m: L[t][m][0]
print(hex(eval(sys.argv[4])))' "$W/states.json" "$SHIPPED" "$DEFAULT_RUN/threads.txt" "$1"; }
	frames_of() { frames "$1" "$2" | tr '\n' '|'; }
	for t in MainThread napper waiter; do frames crash-base "$t" >/dev/null 2>&1; done
	cp "$W/crash.json" "$W/base.json"

	# the thread-state list runs back into its first element
	local last first
	first=$(at 's["threads"][0]["tstate"]') last=$(at 's["threads"][-1]["tstate"]')
	if poke tcycle "$last+$(at 'o("PyThreadState", "next")')=$first"; then
		check "hostile tcycle: a cycle in the thread states is cut, warned" \
			warned tcycle 'root\.lists\[1\]: element 0x[0-9a-f]+ repeats \(a cycle\); the list is cut there'
		check "hostile tcycle: every thread's frames still once" \
			[ "$(json_get "$W/tcycle.json" 'j["threads"]')" = "$(json_get "$W/base.json" 'j["threads"]')" ]
	fi
	# the interpreter list runs back into itself
	local interp
	interp=$(at 's["interpreters"][0]')
	if poke icycle "$interp+$(at 'o("PyInterpreterState", "next")')=$interp"; then
		check "hostile icycle: a cycle in the interpreters is cut, warned" \
			warned icycle 'root\.lists\[0\]: element 0x[0-9a-f]+ repeats \(a cycle\)'
		check "hostile icycle: every thread's frames still once" \
			[ "$(json_get "$W/icycle.json" 'j["threads"]')" = "$(json_get "$W/base.json" 'j["threads"]')" ]
	fi
	# napper's third frame points back to its first: a cycle in the frames
	if poke fcycle "$(at 'T["napper"]["frames"][2]["frame"]')+$(at 'o("_PyInterpreterFrame", "previous")')=$(at 'T["napper"]["frames"][0]["frame"]')"; then
		check "hostile fcycle: the frame cycle is cut, warned" \
			warned fcycle 'runtime cpython \(cpython-3.11\): thread [0-9]+: entry 0x[0-9a-f]+ repeats \(a cycle\)'
		check "hostile fcycle: napper keeps its three frames before the cycle, once each" \
			[ "$(frames_of fcycle napper)" = "$(frames base napper | head -3 | tr '\n' '|')" ]
		check "hostile fcycle: the other threads' frames unchanged" \
			[ "$(frames_of fcycle MainThread)" = "$(frames_of base MainThread)" ]
	fi
	# waiter's current frame dangles
	if poke dangling "$(at 'T["waiter"]["cframe"]')+$(at 'o("_PyCFrame", "current_frame")')=0xdead0000"; then
		check "hostile dangling: a dangling frame is warned" \
			warned dangling 'entry 0xdead0000 is not readable; the list is cut there'
		check "hostile dangling: waiter has no frames, the others all theirs" \
			[ -z "$(frames dangling waiter)" -a "$(frames_of dangling napper)" = "$(frames_of base napper)" ]
	fi
	# gamma's qualified name dangles; beta's is huge
	local gamma_code beta_name
	gamma_code=$(at 'T["MainThread"]["frames"][1]["code"]') beta_name=$(at 'T["MainThread"]["frames"][2]["qualname"]')
	if poke names "$gamma_code+$(at 'o("PyCodeObject", "co_qualname")')=0xdead0000" \
		"$beta_name+$(at 'o("PyASCIIObject", "length")')=0x10000000000"; then
		check "hostile names: a dangling name is warned and left out" \
			[ -n "$(warnings "$W/names.json" | grep -E 'qualname 0xdead0000 is not readable')" -a \
			  "$(frames names MainThread | sed -n 2p)" = " (crash.py:41)" ]
		check "hostile names: a huge name is cut, warned" \
			[ -n "$(warnings "$W/names.json" | grep -E 'qualname at 0x[0-9a-f]+ is cut after 1023 bytes')" -a \
			  "$(frames names MainThread | sed -n 3p | cut -c1-4)" = "beta" ]
	fi
	# a thread state of no thread of the core; a line table too long to read
	local table
	table=$(python3 -c '
import json, struct, sys
sys.path.insert(0, sys.argv[3])
from corrupt_core import phdrs, file_offset
data = open(sys.argv[1], "rb").read(); loads = [p for p in phdrs(data)[2] if p[0] == 1]
code = int(sys.argv[2], 0)
i = file_offset(loads, code + 136, 8)
print(hex(struct.unpack_from("<Q", data, i)[0]))' "$DEFAULT_CORE" "$gamma_code" "$ROOT/tests")
	if poke strays "$(at 'T["napper"]["tstate"]')+$(at 'o("PyThreadState", "native_thread_id")')=999999" \
		"$table+$(at 'o("PyBytesObject", "ob_base.ob_size")')=0x7fffffff"; then
		check "hostile strays: a thread state of no thread: its entries counted in a warning" \
			warned strays 'thread 999999 \(its native_thread_id\) is no thread of the core; its 4 entries are not shown'
		check "hostile strays: a line table too long: the line is ?, warned once" \
			[ "$(warnings "$W/strays.json" | grep -cE 'line_table 0x[0-9a-f]+ is longer than the decoder reads')" = 1 -a \
			  "$(frames strays MainThread | sed -n 2p)" = "gamma (crash.py:?)" ]
	fi
}
hostile

# ---- a core of a program that is not Python costs nothing --------------------------

if dir=$(fixture_build threads4) && core=$(fixture_core "$dir" 2>/dev/null); then
	RUN_DIRS+=("$(dirname "$core")")
	report "not python" "$W/native.json" "$core" "$dir/prog" &&
		check "a core of a program that is not Python: no script frames, no runtime warnings" \
			[ "$(json_get "$W/native.json" 'sum(f["kind"] != "native" for t in j["threads"] for f in t["frames"])')" = 0 -a \
			  -z "$(warnings "$W/native.json" | grep '^runtime')" ]
fi
