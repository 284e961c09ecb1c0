# Shared helpers for tests/t_*.sh.  Source it; it sets ROOT, ASYNCORE, WORK.
#
# fixture_build CASE [VARIANT]   builds fixtures/CASE (its build.sh) into
#                                $BUILD_FIX/CASE[-VARIANT]; prints that dir.
# fixture_core DIR [ARGS...]     runs DIR/prog ARGS in DIR with core dumps on;
#                                prints the core's path, or returns 77 with the
#                                reason on stderr when no core can be had.
# fixture_gcore DIR [ARGS...]    starts DIR/prog, waits for DIR/ready, dumps it
#                                with gdb's gcore, kills it; prints the path.
# expect_file CASE VARIANT KIND  prints the path of a fixture's expectation
#                                (see below).
# fixture_private DIR DEST       a copy of the built fixture DIR at DEST, for
#                                a test that moves or changes its files
#                                (others may be running the shared one);
#                                prints DEST.
# apt_install LOG PACKAGE...     installs test-only Debian packages.
#
# Tests run in parallel (tests/run -j): whatever two scripts share is made
# under a lock ($BUILD_FIX/.lock-NAME): each fixture build, the store's
# batch of cores, apt-get.  Everything else a script makes is its own
# (mktemp, run-PID-RANDOM directories, free ports).
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ASYNCORE=${ASYNCORE:-$ROOT/asyncore}
BUILD_FIX=${BUILD_FIX:-$ROOT/build/fixtures}
ASYNCORE_HOOKS=${ASYNCORE_HOOKS:-$ROOT/build/hooks/asyncore}
mkdir -p "$BUILD_FIX"

# Debian's python3 (make deps installs it) first on PATH: a python3 found
# before it, such as a version manager's shim (a shell script and several
# processes on every call), makes the scripts' many short calls slow.
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ]; then
	TEST_BIN=$(dirname "$BUILD_FIX")/test-bin
	mkdir -p "$TEST_BIN"
	[ -L "$TEST_BIN/python3" ] || ln -s /usr/bin/python3 "$TEST_BIN/python3" 2>/dev/null
	export PATH=$TEST_BIN:$PATH
fi

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; }
skip() { echo "SKIP: $*"; }

# open_files PID: the paths of the files process PID has open, one a line.
open_files() { ls -l "/proc/$1/fd" 2>/dev/null | sed -n 's/.* -> //p'; }

# check NAME CMD...: PASS when CMD succeeds, FAIL otherwise.
check() {
	local name=$1; shift
	if "$@"; then pass "$name"; else fail "$name"; fi
}

# A fixture's expectations are fixtures/CASE/expect/VARIANT.KIND.  VARIANT
# names the build or run ("O2", "pie", "nokey"); "default" is the case's
# only one, or what its variants share.  KIND says what the file holds:
#   stacks    threads' function chains (tests/fixture_lines.py, tests/frames.py)
#   lines     "function file:line [inlined]" of the crashing thread's frames
#   signal    "NUMBER CODE_NAME ADDRESS"
#   warnings  regular expressions, one a line, each matching one warning
#   runtime   script and label frames among their modules' native frames
#             (tests/runtime_frames.py stacks)
# expect_file prints VARIANT's file when it exists, else default.KIND.
expect_file() {
	local dir=$ROOT/fixtures/$1/expect variant=${2:-default}
	if [ -f "$dir/$variant.$3" ]; then echo "$dir/$variant.$3"; else echo "$dir/default.$3"; fi
}

# with_lock NAME CMD...: CMD while holding the lock NAME (one process of
# all the scripts running at once).
with_lock() {
	local name=$1; shift
	( flock 9 && "$@" ) 9>>"$BUILD_FIX/.lock-$name"
}

# fixture_fresh SRC STAMP: the build STAMP is newer than every source file.
# fixture_fresh SRC STAMP: no file of SRC, nor of the directories SRC/uses
# names (one a line, relative to SRC: the sources a build shares with other
# fixtures), is newer than STAMP.
fixture_fresh() {
	local src=$1 stamp=$2 dir
	[ -f "$stamp" ] || return 1
	for dir in "$src" $([ -f "$src/uses" ] && sed "s|^|$src/|" "$src/uses"); do
		[ -z "$(find "$dir" -newer "$stamp" -type f | head -1)" ] || return 1
	done
}

fixture_make() {
	local case=$1 variant=$2 src=$3 out=$4
	fixture_fresh "$src" "$out/.built" && return 0
	rm -rf "$out"; mkdir -p "$out"
	if ! (cd "$out" && SRC=$src OUT=$out VARIANT=$variant bash "$src/build.sh") >"$out/build.log" 2>&1; then
		echo "build of fixture $case${variant:+ ($variant)} failed:" >&2
		tail -20 "$out/build.log" >&2
		return 1
	fi
	touch "$out/.built"
}

fixture_build() {
	local case=$1 variant=${2:-}
	local src=$ROOT/fixtures/$case
	local out=$BUILD_FIX/$case${variant:+-$variant}
	if ! fixture_fresh "$src" "$out/.built"; then
		with_lock "fixture-$case${variant:+-$variant}" fixture_make "$case" "$variant" "$src" "$out" ||
			return 1
	fi
	echo "$out"
}

fixture_private() {
	local dir=$1 dest=$2
	mkdir -p "$dest" &&
	tar -C "$dir" --exclude='./run-*' -cf - . | tar -C "$dest" -xf - &&
	echo "$dest"
}

# The kernel writes "core" or "core.PID" in the crashing process's cwd when
# core_pattern is a plain name; a pipe sends it elsewhere, so gdb takes it.
core_pattern_is_local() {
	local p; p=$(cat /proc/sys/kernel/core_pattern 2>/dev/null)
	[ -n "$p" ] && [ "${p:0:1}" != "|" ] && [ "${p:0:1}" != "/" ]
}

# The kernel's core_pattern and core_pipe_limit, as a test that changes them
# (a script with "# run: alone") found them: core_pattern_save keeps them in
# $CORE_PATTERN_SAVED before the change; core_pattern_restore puts them back
# and forgets them (tests/run calls it at its start and end too, so a test
# that died cannot leave the machine changed).
CORE_PATTERN_SAVED=$(dirname "$BUILD_FIX")/core_pattern.saved
core_pattern_save() {
	[ -f "$CORE_PATTERN_SAVED" ] && return 0   # the first saved state is the machine's
	{ cat /proc/sys/kernel/core_pattern && cat /proc/sys/kernel/core_pipe_limit; } \
		>"$CORE_PATTERN_SAVED.tmp" 2>/dev/null && mv "$CORE_PATTERN_SAVED.tmp" "$CORE_PATTERN_SAVED"
}
core_pattern_restore() {
	[ -f "$CORE_PATTERN_SAVED" ] || return 0
	local pattern limit
	{ IFS= read -r pattern && IFS= read -r limit; } <"$CORE_PATTERN_SAVED"
	printf '%s\n' "$pattern" >/proc/sys/kernel/core_pattern 2>/dev/null &&
		printf '%s\n' "$limit" >/proc/sys/kernel/core_pipe_limit 2>/dev/null &&
		rm -f "$CORE_PATTERN_SAVED"
}

fixture_core() {
	local dir=$1; shift
	local run=$dir/run-$$-$RANDOM
	rm -rf "$run"; mkdir -p "$run"
	if core_pattern_is_local; then
		(cd "$run" && ulimit -c unlimited && exec "$dir/prog" "$@") >"$run/stdout" 2>"$run/stderr"
		local c; c=$(ls "$run"/core* 2>/dev/null | head -1)
		if [ -n "$c" ]; then
			[ "$c" = "$run/core" ] || mv "$c" "$run/core"
			echo "$run/core"; return 0
		fi
	fi
	if command -v gdb >/dev/null; then
		(cd "$run" && gdb -batch -nx -q -ex 'set confirm off' -ex run -ex "gcore $run/core" \
			-ex kill --args "$dir/prog" "$@") >"$run/gdb.log" 2>&1
		if [ -s "$run/core" ]; then echo "$run/core"; return 0; fi
	fi
	echo "no core: kernel core_pattern '$(cat /proc/sys/kernel/core_pattern)' and gdb gcore failed" >&2
	return 77
}

fixture_gcore() {
	local dir=$1; shift
	local run=$dir/run-$$-$RANDOM
	rm -rf "$run"; mkdir -p "$run"
	command -v gdb >/dev/null || { echo "no gdb for gcore" >&2; return 77; }
	(cd "$run" && exec "$dir/prog" "$@") >"$run/stdout" 2>&1 &
	local pid=$! i
	# Until the program says it is ready (or is gone): a loaded machine may
	# take long; the bound only keeps a broken fixture from hanging.
	for i in $(seq 6000); do
		[ -f "$run/ready" ] || ! kill -0 "$pid" 2>/dev/null && break
		sleep 0.05
	done
	gdb -batch -nx -q -p "$pid" -ex "gcore $run/core" >"$run/gdb.log" 2>&1
	kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	if [ -s "$run/core" ]; then echo "$run/core"; return 0; fi
	echo "gcore failed: $(tail -1 "$run/gdb.log")" >&2
	return 77
}

# test_dep COMMAND PACKAGE LOG: a test-only Debian package, installed with
# apt-get (output in LOG) when COMMAND is missing; false when it still is.
test_dep() {
	command -v "$1" >/dev/null && return 0
	apt_install "$3" "$2"
	command -v "$1" >/dev/null
}

# apt_install LOG PACKAGE...: apt-get install (then update and install again
# when that fails), one script at a time, waiting for dpkg's lock when
# something else on the machine holds it; the output goes to LOG.
apt_install() {
	local log=$1; shift
	with_lock apt apt_install_locked "$log" "$@"
}

apt_install_locked() {
	local log=$1; shift
	local sudo=; [ "$(id -u)" -ne 0 ] && sudo=sudo
	local wait=(-o DPkg::Lock::Timeout=600)
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get "${wait[@]}" install -y -qq "$@" >"$log" 2>&1 ||
		{ $sudo apt-get "${wait[@]}" update -qq >>"$log" 2>&1 &&
		  $sudo env DEBIAN_FRONTEND=noninteractive apt-get "${wait[@]}" install -y -qq "$@" >>"$log" 2>&1; }
}

# debuginfod_start DIR BUILD_ID STATE: a debuginfod server (Debian's
# debuginfod) on a free loopback port serving the ELF/DWARF files under DIR,
# its database and log at STATE.sqlite and STATE.log; sets DEBUGINFOD_PID
# (the caller stops it) and DEBUGINFOD_URL, and returns once the server
# serves BUILD_ID's debug info (1 when it never does).
debuginfod_start() {
	local dir=$1 id=$2 state=$3 port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	debuginfod -p "$port" -d "$state.sqlite" -F -t 0 -g 0 -c 1 "$dir" >"$state.log" 2>&1 &
	DEBUGINFOD_PID=$!
	DEBUGINFOD_URL=http://127.0.0.1:$port
	# Until it serves (its first scan may be slow on a loaded machine) or
	# is gone.
	python3 - "$DEBUGINFOD_URL/buildid/$id/debuginfo" "$DEBUGINFOD_PID" <<'PY'
import os, sys, time, urllib.request
end = time.time() + 300
while time.time() < end:
    try:
        if urllib.request.urlopen(sys.argv[1], timeout=2).status == 200:
            sys.exit(0)
    except Exception:
        try:
            os.kill(int(sys.argv[2]), 0)
        except OSError:
            sys.exit(1)
        time.sleep(0.1)
sys.exit(1)
PY
}

# report_json NAME OUT CORE ARGS...: asyncore report --format json into OUT
# (its stderr in OUT.err), the exit status in RC; false, with a FAIL, when
# asyncore crashed or wrote no JSON.
report_json() {
	local name=$1 out=$2; shift 2
	"$ASYNCORE" report "$@" --format json >"$out" 2>"$out.err"
	RC=$?
	if [ $RC -gt 2 ] || ! json_ok "$out"; then
		fail "$name: asyncore exited $RC without JSON: $(tail -2 "$out.err" | tr '\n' ' ')"
		return 1
	fi
}

# json_ok FILE: FILE holds one JSON document (the unit build's json_ok, a
# C program: much quicker to start than Python, which it falls back to).
JSON_OK_BIN=${UNIT_DIR:-$ROOT/build/unit}/json_ok
json_ok() {
	if [ -x "$JSON_OK_BIN" ]; then
		"$JSON_OK_BIN" "$1"
	else
		python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null
	fi
}

# json_get FILE PYEXPR: evaluate a Python expression over the JSON as `j`.
json_get() {
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); v=eval(sys.argv[2]); print(v if not isinstance(v,(list,dict)) else json.dumps(v))' "$1" "$2"
}

# Holding an ingest worker at a known point (tests/hooks/hold.c): the
# program $ASYNCORE_HOOKS, run with ASYNCORE_TEST_HOLD=DIR, stops each
# worker that starts analysing a core named in hold_cores until
# hold_release; the test acts in between, no clock involved.
# hold_cores DIR NAME...    hold the workers that take the cores NAME...
# hold_wait DIR NAME        waits until a worker holds core NAME; prints its
#                           pid (nothing when none came within 300 s: the
#                           bound only keeps a broken test from hanging)
# hold_release DIR NAME     lets that worker go on
have_hooks() { [ -x "${ASYNCORE_HOOKS:-}" ]; }
hold_cores() {
	local dir=$1 name; shift
	mkdir -p "$dir"
	for name; do mkfifo "$dir/$name.held" "$dir/$name.go" || return 1; done
}
hold_wait() { timeout 300 cat "$1/$2.held"; }
hold_release() { timeout 300 sh -c ': >"$1"' sh "$1/$2.go"; }
