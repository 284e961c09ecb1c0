#!/usr/bin/env bash
# gdb as the oracle: for every core of the foundation and native fixtures,
# every thread's function sequence must equal gdb's
#   LC_ALL=C gdb -batch -nx -ex 'set print frame-arguments scalars'
#       -ex 'set backtrace past-main on' -ex 'thread apply all bt'
# (walked by tests/gdb_frames.py, the same unwinder), threads matched by LWP,
# with only the normalisations documented in tests/oracle_compare.py; source
# lines, inline levels, tail-call frames (gdb's TAILCALL frames, restored
# from DWARF call sites) and every frame's arguments are compared too.
# The async fixtures are compared with --no-async.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "oracle: no asyncore at $ASYNCORE (run make)"; exit 0; }
command -v gdb >/dev/null || { skip "oracle: gdb not installed"; exit 0; }

oracle() {   # oracle NAME PROG CORE [ASYNCORE ARGS...]
	local name=$1 prog=$2 core=$3 json=$TMPD/$1.json
	shift 3
	# No debuginfo cache: asyncore sees exactly the debug info gdb sees (a
	# cache filled while libc6-dbg was installed would outlive it).
	ASYNCORE_CACHE_DIR= asy_json "$json" "$core" "$prog" "$@"
	if [ "$ASY_RC" -gt 1 ]; then
		fail "oracle-$name: asyncore exited $ASY_RC: $(head -2 "$json.err")"; return
	fi
	if [ "$ASY_JSON_OK" -ne 0 ]; then
		fail "oracle-$name: the report is not valid JSON"; return
	fi
	if ! gdb_frames "$prog" "$core" "$TMPD/$name.gdb"; then
		skip "oracle-$name: gdb printed no frames"; return
	fi
	if python3 "$ROOT/tests/oracle_compare.py" "$json" "$TMPD/$name.gdb" "$name" >"$TMPD/$name.diff"; then
		pass "oracle-$name"
	else
		fail "oracle-$name: $(head -1 "$TMPD/$name.diff")"
		tail -n +2 "$TMPD/$name.diff" | head -20 | cut -c1-400 | sed 's/^/    /'
	fi
}

for spec in abort1: threads4: native_o2: native_link:pie native_link:static native_nofp: \
	native_debuglink: native_shlib: native_deep: native_cxx: native_moved: native_clone3: \
	native_tailcall: native_args:; do
	case=${spec%%:*} variant=${spec#*:}
	if fix_core "$case" "$variant"; then
		oracle "$case${variant:+-$variant}" "$FIX_DIR/prog" "$FIX_CORE"
	else
		no_core "oracle-$case" $?
	fi
done
# native_tailcall's other runs: main leaves by a jump to from_main (glibc
# called main through a pointer, so gdb restores no tail-call frame and
# reads no @entry value there); bounce may tail-call itself (gdb trusts
# none of its entry values); two chains of tail calls lead to land (gdb
# restores only their common part).
for run in from-main bounce fork; do
	if fix_core native_tailcall "" "$run"; then
		oracle "native_tailcall-$run" "$FIX_DIR/prog" "$FIX_CORE"
	else
		no_core "oracle-native_tailcall-$run" $?
	fi
done
if fix_gcore running; then
	oracle running "$FIX_DIR/prog" "$FIX_CORE"
else
	no_core oracle-running $?
fi

# The other engineers' fixtures that crash with no arguments: their native
# stacks (--no-async: gdb knows nothing of async frames) against gdb's.
for case in folly_c folly_cpp recorder elfe store_crash store_cxx; do
	[ -f "$ROOT/fixtures/$case/build.sh" ] || continue
	if fix_core "$case"; then
		oracle "$case" "$FIX_DIR/prog" "$FIX_CORE" --no-async
	else
		no_core "oracle-$case" $?
	fi
done
exit 0
