#!/usr/bin/env bash
# CPython 3.11 on aarch64, read on this host: Debian's arm64 python3.11 (a
# static executable; tests/aarch64_python.sh unpacks it, its standard
# library, python3.11-dbg's debug files and the libraries it loads into a
# sysroot under the build tree) runs fixtures/cpython's crash.py (a crash
# in a C call a few Python calls deep, two threads asleep in Python) and
# gen.py (a crash in a generator a coroutine iterates) under qemu-aarch64,
# whose cores carry no NT_FILE.  Read with --sysroot through the shipped
# description (share/asyncore/runtimes/cpython-3.11.json): without DWARF
# (its layout) and with python3.11-dbg's (--debug-dir; the description
# without its layout, every member from DWARF).  The oracle is the script's
# own faulthandler dump of every thread at the crash (tests/cpython_compare.py)
# and the x86_64 tests' frame order (fixtures/cpython/expect/*.runtime);
# the crash's minicore too.
# Debian has arm64 packages of its own python3.11 only: pyenv's other
# versions are this host's, so no other version is run for aarch64.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"
source "$ROOT/tests/cpython_lib.sh"

have_asyncore || { fail "cpython-aarch64: no asyncore at $ASYNCORE (run make)"; exit 0; }
source "$ROOT/tests/aarch64_lib.sh"
if ! test_dep qemu-aarch64 qemu-user "$TMPD/apt.log"; then
	skip "cpython-aarch64: qemu-user cannot be installed: $(tail -1 "$TMPD/apt.log")"; exit 0
fi
PYDIR=$(dirname "$BUILD_FIX")/aarch64-python
if ! with_lock aarch64-python sh "$ROOT/tests/aarch64_python.sh" "$PYDIR" 2>"$TMPD/py.err"; then
	skip "cpython-aarch64: Debian's arm64 python3.11 could not be had: $(tail -1 "$TMPD/py.err")"; exit 0
fi
SYSROOT=$PYDIR/root     # qemu_core's -L, and asyncore's --sysroot
# the python3.11 debug files found only where the test says (--debug-dir)
export XDG_CACHE_HOME=$TMPD/cache XDG_CONFIG_HOME=$TMPD/config
unset DEBUGINFOD_URLS
CMP="python3 $ROOT/tests/cpython_compare.py"
ASYNCORE=$(checkout_asyncore "$TMPD/co")

check_eq() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: expected '$2', got '$3'"; fi; }
warnings() { jget "$1" '"\n".join(j["warnings"])'; }

# The fixture's scripts (and cpython-dwarf.json) with prog, the arm64
# python3.11; its cores are read from here.
fix_build cpython || exit 0
ARM=$TMPD/arm
mkdir -p "$ARM" && cp "$FIX_DIR"/*.py "$FIX_DIR/cpython-dwarf.json" "$ARM/" &&
	ln -s "$SYSROOT/usr/bin/python3.11" "$ARM/prog" || { fail "cpython-aarch64: cannot set up $ARM"; exit 0; }

# arm_core SCRIPT: SCRIPT's core under qemu-aarch64; sets CORE and RUN.
arm_core() {
	if ! CORE=$(qemu_core "$ARM" "$ARM/$1" 2>"$TMPD/core.err"); then
		skip "cpython-aarch64 $1: $(head -1 "$TMPD/core.err")"; return 1
	fi
	RUN=$(dirname "$CORE")
	FIX_RUNS+=("$RUN")
	[ -s "$RUN/faulthandler.txt" ] || { fail "cpython-aarch64 $1: no faulthandler.txt: $(tail -2 "$RUN/stdout")"; return 1; }
}

# read_core NAME OUT ARGS...: the report of $CORE; true when there is one.
read_core() {
	local name=$1 out=$2; shift 2
	asy_json "$out" "$CORE" --sysroot "$SYSROOT" "$@"
	[ "$ASY_JSON_OK" -eq 0 ] || { fail "$name: no JSON (exit $ASY_RC): $(head -3 "$out.err")"; return 1; }
}

# oracle NAME OUT EXPECT: OUT's frames are faulthandler's, without a
# warning, and its crashing thread's frames in order are expect/EXPECT.runtime.
oracle() {
	$CMP "$1" "$2" "$RUN/faulthandler.txt" "$RUN/threads.txt"
	if [ "$ASY_RC" -eq 0 ] && [ "$(jget "$2" 'len(j["warnings"])')" = 0 ]; then
		pass "$1: exit 0, no warnings"
	else
		fail "$1: exit 0, no warnings: exit $ASY_RC: $(warnings "$2" | head -3 | tr '\n' ' ')"
	fi
	interleaved "$2" >"$TMPD/$1.order"
	if diff -u "$ROOT/fixtures/cpython/expect/$3.runtime" "$TMPD/$1.order" >"$TMPD/diff"; then
		pass "$1: the crashing thread's script frames, each after its _PyEval_EvalFrameDefault, as on x86_64"
	else
		fail "$1: the crashing thread's frames differ from expect/$3.runtime: $(head -12 "$TMPD/diff" | tr '\n' ' ')"
	fi
}

# The debug file found for the interpreter in report $1, or None.
debuginfo() { jget "$1" '[m.get("debuginfo") for m in j["modules"] if m["path"].endswith(("/prog", "/python3.11"))][0]'; }

if arm_core crash.py; then
	out=$TMPD/crash.json
	if read_core "cpython-aarch64 crash" "$out"; then
		check_eq "cpython-aarch64 crash: an aarch64 core" aarch64 "$(jget "$out" "j['core']['arch']")"
		check_eq "cpython-aarch64 crash: python3.11 without debug info (the layout)" None "$(debuginfo "$out")"
		oracle "cpython-aarch64 crash" "$out" crash
		check_eq "cpython-aarch64 crash: the cause is the caught NULL read in strlen" \
			"null_dereference" "$(jget "$out" "j['cause']['kind']")"
	fi
	"$ASYNCORE" "$CORE" --sysroot "$SYSROOT" >"$TMPD/crash.txt" 2>/dev/null
	check "cpython-aarch64 crash text: [cpython] frames" \
		grep -qE '^#[0-9]+ +\[cpython\] gamma \(crash\.py:41\)  -- /.*/crash\.py:41$' "$TMPD/crash.txt"
	# its minicore keeps what the frames are read from (python3.11's
	# .rodata, Py_Version, from the file again)
	if "$ASYNCORE" minicore "$CORE" -o "$TMPD/mini.core" --sysroot "$SYSROOT" >/dev/null 2>"$TMPD/mini.err"; then
		CORE=$TMPD/mini.core read_core "cpython-aarch64 crash minicore" "$TMPD/mini.json" &&
			oracle "cpython-aarch64 crash minicore" "$TMPD/mini.json" crash
		rm -f "$TMPD/mini.core"
	else
		fail "cpython-aarch64 crash minicore: $(tail -1 "$TMPD/mini.err")"
	fi
	# python3.11-dbg's DWARF: the shipped description and the one without
	# its layout (every member by name)
	for d in shipped dwarf; do
		out=$TMPD/crash-$d.json
		runtime=(); [ $d = dwarf ] && runtime=(--runtime "$ARM/cpython-dwarf.json")
		read_core "cpython-aarch64 crash $d" "$out" --debug-dir "$SYSROOT/usr/lib/debug" ${runtime[@]+"${runtime[@]}"} ||
			continue
		# (the file, or the copy asyncore keeps of it decompressed)
		id=$(jget "$out" '[m["build_id"] for m in j["modules"] if m["path"].endswith(("/prog", "/python3.11"))][0]')
		check "cpython-aarch64 crash $d: python3.11's debug file from python3.11-dbg (build-id $id)" \
			grep -qE "^($SYSROOT/usr/lib/debug/.build-id/${id:0:2}/${id:2}|$XDG_CACHE_HOME/asyncore/debuginfo/$id)\.debug$" <<<"$(debuginfo "$out")"
		oracle "cpython-aarch64 crash $d" "$out" crash
	done
fi

if arm_core gen.py; then
	out=$TMPD/gen.json
	read_core "cpython-aarch64 gen" "$out" && oracle "cpython-aarch64 gen" "$out" gen
fi
