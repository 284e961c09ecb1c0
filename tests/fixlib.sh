# Helpers shared by t_basic, t_badinput, t_native and t_oracle.  Source it
# after tests/lib.sh.
#
# fix_core CASE [VARIANT] [ARGS...]  builds the fixture and crashes it; sets
#                                    FIX_DIR, FIX_CORE (returns 77: no core,
#                                    1 with a FAIL line: the build failed)
# fix_gcore CASE                     same, with gdb's gcore of a running prog
# fix_core_private CASE [VARIANT] [ARGS...]
#                                    fix_core with the fixture copied to a
#                                    directory of the test's own first (FIX_DIR
#                                    is the copy: the test may move its files)
# asy_json OUT CORE [ARGS...]        asyncore report --format json --threads
#                                    all into OUT; sets ASY_RC, and
#                                    ASY_JSON_OK (0 when OUT parses as JSON)
# gdb_threads PROG CORE OUT          gdb -batch -ex 'info threads' into OUT as
#                                    lines "lwp N current 0|1" and
#                                    "signal NUMBER" (when gdb names one)
# gdb_frames PROG CORE OUT           tests/gdb_frames.py's JSON into OUT
# expect_lines NAME EXPECT ACTUAL    PASS when the files are equal, else FAIL
#                                    with a diff
FIX_RUNS=()
fix_cleanup() { local r; for r in "${FIX_RUNS[@]}"; do rm -rf "$r"; done; }
trap fix_cleanup EXIT
TMPD=$(mktemp -d)
FIX_RUNS+=("$TMPD")

# jget FILE PYEXPR: tests/lib.sh's json_get, empty output when FILE is no JSON.
jget() { json_get "$@" 2>/dev/null; }

have_asyncore() { [ -x "$ASYNCORE" ]; }

# A fixture that does not build is a failure; no core is a skip (77).
fix_build() {
	if ! FIX_DIR=$(fixture_build "$@" 2>"$TMPD/build.err"); then
		fail "build-$1${2:+-$2}: $(tail -3 "$TMPD/build.err" | tr '\n' ' ')"
		return 1
	fi
}

# no_core NAME RC: the SKIP line for a fixture that gave no core (RC 77).
no_core() { [ "$2" -eq 77 ] && skip "$1: $(head -1 "$TMPD/core.err")"; return 0; }

fix_core() {
	local case=$1 variant=${2:-}; shift $(( $# >= 2 ? 2 : $# ))
	fix_build "$case" "$variant" || return 1
	FIX_CORE=$(fixture_core "$FIX_DIR" "$@" 2>"$TMPD/core.err") || return 77
	FIX_RUNS+=("$(dirname "$FIX_CORE")")
}

fix_core_private() {
	local case=$1 variant=${2:-}; shift $(( $# >= 2 ? 2 : $# ))
	fix_build "$case" "$variant" || return 1
	FIX_DIR=$(fixture_private "$FIX_DIR" "$TMPD/fixture-$case${variant:+-$variant}") ||
		{ fail "build-$case${variant:+-$variant}: copying the fixture"; return 1; }
	FIX_CORE=$(fixture_core "$FIX_DIR" "$@" 2>"$TMPD/core.err") || return 77
	FIX_RUNS+=("$(dirname "$FIX_CORE")")
}

fix_gcore() {
	fix_build "$1" || return 1
	FIX_CORE=$(fixture_gcore "$FIX_DIR" 2>"$TMPD/core.err") || return 77
	FIX_RUNS+=("$(dirname "$FIX_CORE")")
}

asy_json() {
	local out=$1; shift
	"$ASYNCORE" report "$@" --format json --threads all >"$out" 2>"$out.err"
	ASY_RC=$?
	json_ok "$out"
	ASY_JSON_OK=$?
}

gdb_threads() {
	local prog=$1 core=$2 out=$3
	gdb -batch -nx -ex 'info threads' "$prog" "$core" 2>/dev/null | python3 -c '
import re, signal, sys
for line in sys.stdin:
    m = re.match(r"Program terminated with signal (SIG\w+)", line)
    if m:
        print("signal %d" % getattr(signal, m.group(1)))
    m = re.match(r"^(\*?)\s+\d+\s+.*?\bLWP (\d+)\)?", line)
    if m:
        print("lwp %s current %d" % (m.group(2), 1 if m.group(1) else 0))
' >"$out"
	grep -q '^lwp ' "$out"
}

gdb_frames() {
	local prog=$1 core=$2 out=$3
	LC_ALL=C gdb -batch -nx -iex 'set auto-load python-scripts off' -ex 'set width 0' \
		-ex 'set print frame-arguments scalars' \
		-ex 'set backtrace past-main on' \
		-x "$ROOT/tests/gdb_frames.py" "$prog" "$core" 2>/dev/null |
		sed -n '/^GDB_FRAMES_BEGIN$/,/^GDB_FRAMES_END$/p' | sed '1d;$d' >"$out"
	[ -s "$out" ]
}

expect_lines() {
	local name=$1 expect=$2 actual=$3
	if diff -u "$expect" "$actual" >"$TMPD/diff" 2>&1; then
		pass "$name"
	else
		fail "$name: output differs from ${expect#"$ROOT"/}"
		head -30 "$TMPD/diff" | cut -c1-400 | sed 's/^/    /'
	fi
}
