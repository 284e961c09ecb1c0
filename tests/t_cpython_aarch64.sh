#!/usr/bin/env bash
# CPython 3.11 and 3.13 on aarch64, read on this host: Debian's arm64
# python3.11 (Debian 12) and python3.13 (Debian 13), static executables
# (tests/aarch64_python.sh unpacks each, its standard library,
# python3.X-dbg's debug files and the libraries it loads into a sysroot
# under the build tree), run fixtures/cpython's crash.py (a crash
# in a C call a few Python calls deep, two threads asleep in Python) and
# gen.py (a crash in a generator a coroutine iterates) under qemu-aarch64,
# whose cores carry no NT_FILE.  Read with --sysroot through the shipped
# descriptions (share/asyncore/runtimes/cpython-3.X.json): without DWARF
# (the layout; 3.13's own offsets) and with python3.X-dbg's (--debug-dir;
# for 3.11 also the description without its layout, every member from
# DWARF); the crash's minicore too.  The oracle is the script's own
# faulthandler dump of every thread at the crash (tests/cpython_compare.py)
# and, for 3.11, the x86_64 tests' frame order (fixtures/cpython/expect).
# Debian ships no arm64 3.8-3.10 or 3.12, and pyenv's are this host's: no
# other version is run for aarch64.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"
source "$ROOT/tests/cpython_lib.sh"

have_asyncore || { fail "cpython-aarch64: no asyncore at $ASYNCORE (run make)"; exit 0; }
source "$ROOT/tests/aarch64_lib.sh"
if ! test_dep qemu-aarch64 qemu-user "$TMPD/apt.log"; then
	skip "cpython-aarch64: qemu-user cannot be installed: $(tail -1 "$TMPD/apt.log")"; exit 0
fi
PYDIR=$(dirname "$BUILD_FIX")/aarch64-python
# the debug files found only where the test says (--debug-dir)
export XDG_CACHE_HOME=$TMPD/cache XDG_CONFIG_HOME=$TMPD/config
unset DEBUGINFOD_URLS
CMP="python3 $ROOT/tests/cpython_compare.py"
ASYNCORE=$(checkout_asyncore "$TMPD/co")
fix_build cpython || exit 0   # the scripts, and 3.11's description without its layout

check_eq() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: expected '$2', got '$3'"; fi; }
warnings() { jget "$1" '"\n".join(j["warnings"])'; }

# arm_core SCRIPT: SCRIPT's core under qemu-aarch64 in $ARM; sets CORE and RUN.
arm_core() {
	if ! CORE=$(qemu_core "$ARM" "$ARM/$1" 2>"$TMPD/core.err"); then
		skip "cpython-aarch64 $V $1: $(head -1 "$TMPD/core.err")"; return 1
	fi
	RUN=$(dirname "$CORE")
	FIX_RUNS+=("$RUN")
	[ -s "$RUN/faulthandler.txt" ] || { fail "cpython-aarch64 $V $1: no faulthandler.txt: $(tail -2 "$RUN/stdout")"; return 1; }
}

# read_core NAME OUT ARGS...: the report of $CORE; true when there is one.
read_core() {
	local name=$1 out=$2; shift 2
	asy_json "$out" "$CORE" --sysroot "$SYSROOT" "$@"
	[ "$ASY_JSON_OK" -eq 0 ] || { fail "$name: no JSON (exit $ASY_RC): $(head -3 "$out.err")"; return 1; }
}

# oracle NAME OUT EXPECT: OUT's frames are faulthandler's (placed after
# their _PyEval_EvalFrameDefault activations), without a warning; for
# 3.11, its crashing thread's frames in order are expect/EXPECT.runtime,
# the x86_64 tests' (another version's standard library has other lines).
oracle() {
	$CMP "$1" "$2" "$RUN/faulthandler.txt" "$RUN/threads.txt"
	if [ "$ASY_RC" -eq 0 ] && [ "$(jget "$2" 'len(j["warnings"])')" = 0 ]; then
		pass "$1: exit 0, no warnings"
	else
		fail "$1: exit 0, no warnings: exit $ASY_RC: $(warnings "$2" | head -3 | tr '\n' ' ')"
	fi
	[ "$V" = 3.11 ] || return 0
	interleaved "$2" >"$TMPD/$1.order"
	if diff -u "$ROOT/fixtures/cpython/expect/$3.runtime" "$TMPD/$1.order" >"$TMPD/diff"; then
		pass "$1: the crashing thread's script frames, each after its _PyEval_EvalFrameDefault, as on x86_64"
	else
		fail "$1: the crashing thread's frames differ from expect/$3.runtime: $(head -12 "$TMPD/diff" | tr '\n' ' ')"
	fi
}

# The interpreter's module in report $1: KEY's value.
interp() { jget "$1" '[m.get("'"$2"'") for m in j["modules"] if m["path"].endswith("/prog")][0]'; }

# layout_alone: 3.13 reads its own offsets (_Py_DebugOffsets, at the start
# of _PyRuntime) before the layout; with the block's cookie gone from the
# core, the shipped layout alone reads every frame, warned.
layout_alone() {
	local name="cpython-aarch64 $V layout alone" out=$TMPD/nocookie-$V.json sym
	sym=$(nm -D "$SYSROOT/usr/bin/python$V" | awk '$3 == "_PyRuntime" {print $1}')
	if ! python3 "$ROOT/tests/corrupt_core.py" "$CORE" "$TMPD/nocookie.core" poke "0x$sym=0" 2>"$TMPD/poke.err"; then
		fail "$name: cannot patch the core: $(cat "$TMPD/poke.err")"; return
	fi
	CORE=$TMPD/nocookie.core read_core "$name" "$out"
	rm -f "$TMPD/nocookie.core"
	[ -s "$out" ] || return
	$CMP "$name" "$out" "$RUN/faulthandler.txt" "$RUN/threads.txt"
	check_eq "$name: the one warning, the layout used" \
		"runtime cpython (cpython-$V): _PyRuntime does not start with the offsets block's cookie \"xdebugpy\"; the offsets are $ROOT/share/asyncore/runtimes/cpython-$V.json's" \
		"$(warnings "$out")"
}

# no_fault REPORT: faulthandler's signal frame holds no siginfo (it is
# installed without SA_SIGINFO), and aarch64's sigcontext no trap (qemu-user
# writes no ESR record): the cause is the fault the interrupted instruction
# makes with the saved registers.  With x0..x15 saved as a readable address
# it makes none: the signal frame is not believed, warned, and the cause is
# the plain signal's; the Python frames are unchanged.
no_fault() {
	local name="cpython-aarch64 $V no fault" out=$TMPD/nofault.json sp pokes=() n runtime
	sp=$(jget "$1" '[f["cfa"] for t in j["threads"] if t["crashing"] for f, g in zip(t["frames"], t["frames"][1:]) if g["role"] == "trampoline"][0]')
	runtime=0x$(nm -D "$SYSROOT/usr/bin/python$V" | awk '$3 == "_PyRuntime" {print $1}')
	[ -n "$sp" ] || { fail "$name: no signal trampoline on the crashing thread"; return; }
	for n in $(seq 0 15); do pokes+=("$((sp + 128 + 176 + 8 + 8 * n))=$runtime"); done
	if ! python3 "$ROOT/tests/corrupt_core.py" "$CORE" "$TMPD/nofault.core" poke "${pokes[@]}" 2>"$TMPD/poke.err"; then
		fail "$name: cannot patch the core: $(cat "$TMPD/poke.err")"; return
	fi
	CORE=$TMPD/nofault.core read_core "$name" "$out"
	rm -f "$TMPD/nofault.core"
	[ -s "$out" ] || return
	check "$name: the signal frame is not believed, warned" \
		grep -qE "^thread [0-9]+: the signal frame at $sp (is not believed: its siginfo|names no signal)" <(warnings "$out")
	check_eq "$name: the cause is the plain signal's" "bad_access" "$(jget "$out" "j['cause']['kind']")"
	check_eq "$name: the Python frames unchanged" "$(interleaved "$1")" "$(interleaved "$out")"
}

# crash: without DWARF, in text, its minicore, with python3.X-dbg's DWARF
crash() {
	local name="cpython-aarch64 $V crash" out=$TMPD/crash-$V.json d id runtime
	arm_core crash.py || return
	if read_core "$name" "$out"; then
		check_eq "$name: an aarch64 core" aarch64 "$(jget "$out" "j['core']['arch']")"
		check_eq "$name: python$V without debug info (the layout)" None "$(interp "$out" debuginfo)"
		oracle "$name" "$out" crash
		check_eq "$name: the cause is the caught NULL read in strlen" \
			"null_dereference" "$(jget "$out" "j['cause']['kind']")"
	fi
	"$ASYNCORE" "$CORE" --sysroot "$SYSROOT" >"$TMPD/crash.txt" 2>/dev/null
	check "$name text: [cpython] frames" \
		grep -qE '^#[0-9]+ +\[cpython\] gamma \(crash\.py:41\)  -- /.*/crash\.py:41$' "$TMPD/crash.txt"
	# its minicore keeps what the frames are read from (the executable's
	# .rodata, Py_Version, from the file again)
	if "$ASYNCORE" minicore "$CORE" -o "$TMPD/mini.core" --sysroot "$SYSROOT" >/dev/null 2>"$TMPD/mini.err"; then
		CORE=$TMPD/mini.core read_core "$name minicore" "$TMPD/mini.json" &&
			oracle "$name minicore" "$TMPD/mini.json" crash
		rm -f "$TMPD/mini.core"
	else
		fail "$name minicore: $(tail -1 "$TMPD/mini.err")"
	fi
	[ "$V" = 3.13 ] && layout_alone
	[ "$V" = 3.11 ] && [ -s "$out" ] && no_fault "$out"
	# python3.X-dbg's DWARF: the shipped description, and for 3.11 the
	# one without its layout (every member by name)
	for d in shipped dwarf; do
		runtime=()
		if [ $d = dwarf ]; then
			[ "$V" = 3.11 ] || continue
			runtime=(--runtime "$FIX_DIR/cpython-dwarf.json")
		fi
		out=$TMPD/crash-$V-$d.json
		read_core "$name $d" "$out" --debug-dir "$SYSROOT/usr/lib/debug" ${runtime[@]+"${runtime[@]}"} ||
			continue
		# (the file, or the copy asyncore keeps of it decompressed)
		id=$(interp "$out" build_id)
		check "$name $d: python$V's debug file from python$V-dbg (build-id $id)" \
			grep -qE "^($SYSROOT/usr/lib/debug/.build-id/${id:0:2}/${id:2}|$XDG_CACHE_HOME/asyncore/debuginfo/$id)\.debug$" \
			<<<"$(interp "$out" debuginfo)"
		oracle "$name $d" "$out" crash
	done
}

for V in $(sh "$ROOT/tests/aarch64_python.sh" --list); do
	if ! with_lock aarch64-python sh "$ROOT/tests/aarch64_python.sh" "$PYDIR" "$V" 2>"$TMPD/py.err"; then
		skip "cpython-aarch64 $V: Debian's arm64 python$V could not be had: $(tail -1 "$TMPD/py.err")"
		continue
	fi
	SYSROOT=$PYDIR/python$V/root    # qemu_core's -L, and asyncore's --sysroot
	# the fixture's scripts with prog, the arm64 interpreter; its cores are made here
	ARM=$TMPD/arm-$V
	mkdir -p "$ARM" && cp "$FIX_DIR"/*.py "$ARM/" && ln -s "$SYSROOT/usr/bin/python$V" "$ARM/prog" ||
		{ fail "cpython-aarch64 $V: cannot set up $ARM"; continue; }
	crash
	if arm_core gen.py; then
		read_core "cpython-aarch64 $V gen" "$TMPD/gen-$V.json" &&
			oracle "cpython-aarch64 $V gen" "$TMPD/gen-$V.json" gen
	fi
done
