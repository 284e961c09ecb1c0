#!/usr/bin/env bash
# Debug info by build-id from a real debuginfod server (Debian's debuginfod,
# a test dependency installed here when missing) on a loopback port, serving
# the fixture's split debug file: the frames get their source lines only
# through it, the module list says so, a terminal sees a progress line, and
# an unreachable or silent server costs a bounded time and a warning.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "debuginfod: no asyncore at $ASYNCORE (run make)"; exit 0; }
test_dep debuginfod debuginfod "$TMPD/apt.log" ||
	{ skip "debuginfod: the server could not be installed: $(tail -1 "$TMPD/apt.log")"; exit 0; }
fix_core_private debuginfod; rc=$?   # its prog is moved away below
[ $rc -eq 77 ] && { no_core debuginfod 77; exit 0; }
[ $rc -eq 0 ] || exit 0
unset DEBUGINFOD_URLS DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE
export DEBUGINFOD_CACHE_PATH=$TMPD/client-cache ASYNCORE_CACHE_DIR=

PIDS=()
stop_all() { local p; for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; fix_cleanup; }
trap stop_all EXIT

# frames FILE: the crashing thread's "function file:line" lines of a JSON report.
frames() { json_get "$1" "'\n'.join('%s %s:%s' % (f['function'], f['file'], f['line']) for f in j['threads'][0]['frames'][:3])"; }

"$ASYNCORE" report "$FIX_CORE" --format json >"$TMPD/none.json" 2>/dev/null
check "debuginfod: without a server the frames have no source lines" \
	test "$(json_get "$TMPD/none.json" "[f['file'] for f in j['threads'][0]['frames'][:3]]")" = "[null, null, null]"
# Without a server, libdebuginfod (and its libcurl and TLS libraries) is
# never loaded, though the program's module has no debug file to be found.
LD_DEBUG=files "$ASYNCORE" report "$FIX_CORE" >/dev/null 2>"$TMPD/ld.log"
check "debuginfod: without a server libdebuginfod is not loaded" \
	bash -c "grep -q 'calling init' '$TMPD/ld.log' && ! grep -q 'file=libdebuginfod' '$TMPD/ld.log'"
mkdir -p "$TMPD/local" && cp "$FIX_DIR/prog" "$TMPD/local/" && cp "$FIX_DIR/debug/prog.debug" "$TMPD/local/"
"$ASYNCORE" report "$FIX_CORE" --debug-dir "$TMPD/local" --format json >"$TMPD/local.json" 2>/dev/null
check "debuginfod: a debug file beside a copy of the program, by its debuglink, is found" \
	test "$(frames "$TMPD/local.json")" != "$(frames "$TMPD/none.json")"
BUILD_ID=$(json_get "$TMPD/local.json" "j['core']['build_id']")

# The server: the fixture's debug file only, on a free loopback port.
debuginfod_start "$FIX_DIR/debug" "$BUILD_ID" "$TMPD/server"; rc=$?
PIDS+=($DEBUGINFOD_PID)
[ $rc -eq 0 ] || { fail "debuginfod: the server never served $BUILD_ID: $(tail -3 "$TMPD/server.log")"; exit 0; }
URL=$DEBUGINFOD_URL PORT=${URL##*:}
rm -rf "$DEBUGINFOD_CACHE_PATH"

# On a terminal, a fresh cache: the download shows a progress line.
DEBUGINFOD_URLS=$URL python3 "$ROOT/tests/pty_run.py" "$TMPD/pty.err" stderr "$ASYNCORE" report "$FIX_CORE"
check "debuginfod: a download on a terminal shows a progress line" \
	grep -q "asyncore: downloading debug info for build-id ${BUILD_ID:0:12}... from $URL" "$TMPD/pty.err"
rm -rf "$DEBUGINFOD_CACHE_PATH"
DEBUGINFOD_URLS=$URL "$ASYNCORE" report "$FIX_CORE" --format json >"$TMPD/served.json" 2>"$TMPD/served.err"; rc=$?
check "debuginfod: the frames get their source lines through the server" \
	test "$(frames "$TMPD/served.json")" = "$(frames "$TMPD/local.json")" -a -n "$(json_get "$TMPD/served.json" "j['threads'][0]['frames'][0]['file']")"
check "debuginfod: a served module is no warning (exit 0)" test $rc = 0
check "debuginfod: no progress line into a file" bash -c "! grep -q downloading '$TMPD/served.err'"
check "debuginfod: the module's debug info is the file in debuginfod's cache" test "$(json_get "$TMPD/served.json" \
	"[m['debuginfo'].startswith('$DEBUGINFOD_CACHE_PATH/') for m in j['modules'] if m['build_id'] == '$BUILD_ID']")" = "[true]"
DEBUGINFOD_URLS=$URL "$ASYNCORE" report "$FIX_CORE" >"$TMPD/served.txt" 2>/dev/null
check "debuginfod: the text module list says (debuginfod)" \
	grep -qE "^  0x[0-9a-f]+-0x[0-9a-f]+ $FIX_DIR/prog  debug info: $DEBUGINFOD_CACHE_PATH/.* \(debuginfod\)\$" "$TMPD/served.txt"
check "debuginfod: locally found debug info is named by its path" \
	grep -qE "^  0x[0-9a-f]+-0x[0-9a-f]+ /.*  debug info: (in the file|/[^ ]+)\$" "$TMPD/served.txt"

# A store's frames kept without debug info get it from the server at resign,
# through the module's file and, with the file gone, by build-id alone.
prog_lines() {
	"$ASYNCORE" query --db "$1" --format csv "SELECT count(line) || '/' || count(*) FROM frames WHERE module = '$FIX_DIR/prog'" | tail -1
}
"$ASYNCORE" ingest --db "$TMPD/d.db" --quiet "$FIX_CORE" 2>/dev/null
before=$(prog_lines "$TMPD/d.db")
cp "$TMPD/d.db" "$TMPD/gone.db"
cp "$TMPD/d.db" "$TMPD/gone.db.0"
DEBUGINFOD_URLS=$URL "$ASYNCORE" resign --db "$TMPD/d.db" >"$TMPD/resign.out" 2>&1; rc=$?
after=$(prog_lines "$TMPD/d.db")
DEBUGINFOD_URLS=$URL "$ASYNCORE" ingest --db "$TMPD/fresh.db" --quiet "$FIX_CORE" 2>/dev/null
fresh=$(prog_lines "$TMPD/fresh.db")
check "debuginfod: stored without a server, prog's frames have no line ($before)" test "${before%%/*}" = 0 -a "${before#*/}" -gt 0
check "debuginfod: resign fetches prog's debug info: prog's frames get their lines, as an ingest with the server ($after, $fresh)" \
	test $rc = 0 -a "$(head -c 30 "$TMPD/resign.out")" = "debug info found for 1 modules" -a "$after" = "$fresh" -a "${fresh%%/*}" -gt 0
mv "$FIX_DIR/prog" "$FIX_DIR/prog.away"
DEBUGINFOD_URLS=$URL "$ASYNCORE" resign --db "$TMPD/gone.db" >"$TMPD/resign.gone" 2>&1
mv "$FIX_DIR/prog.away" "$FIX_DIR/prog"
check "debuginfod: ... and with prog gone, by its build-id alone, from debuginfod's cache" \
	test "$(prog_lines "$TMPD/gone.db")" = "$after" -a "$(head -1 "$TMPD/resign.gone")" = "$(head -1 "$TMPD/resign.out")" -a \
	"$("$ASYNCORE" query --db "$TMPD/gone.db" --format csv "SELECT count(*) FROM modules WHERE path = '$FIX_DIR/prog' AND debuginfo LIKE '$DEBUGINFOD_CACHE_PATH/%'" | tail -1)" = 1
kill "${PIDS[0]}" 2>/dev/null; wait "${PIDS[0]}" 2>/dev/null

# The server is gone: the cached file still serves, and with a fresh cache
# the refused connection is a warning, quickly.
DEBUGINFOD_URLS=$URL "$ASYNCORE" report "$FIX_CORE" --format json >"$TMPD/cached.json" 2>/dev/null
check "debuginfod: debuginfod's cache serves a stopped server's file" \
	test "$(frames "$TMPD/cached.json")" = "$(frames "$TMPD/local.json")"
rm -rf "$DEBUGINFOD_CACHE_PATH"
start=$(date +%s.%N)
DEBUGINFOD_URLS=$URL "$ASYNCORE" report "$FIX_CORE" --format json >"$TMPD/refused.json" 2>/dev/null; rc=$?
secs=$(python3 -c "print(round($(date +%s.%N) - $start, 1))")
check "debuginfod: a refused connection is a warning (exit 1, report complete) in ${secs}s" test "$rc/$(json_get "$TMPD/refused.json" \
	"any(w.startswith('debuginfod: ') and '$BUILD_ID' in w for w in j['warnings']) and len(j['threads'][0]['frames']) >= 3")" = 1/True
check "debuginfod: ... and costs little (${secs}s < 10s)" python3 -c "assert $secs < 10"
for how in own gone; do   # through prog's file (libdwfl's lookup), and by build-id alone
	cp "$TMPD/gone.db.0" "$TMPD/refused.db"
	[ $how = gone ] && mv "$FIX_DIR/prog" "$FIX_DIR/prog.away"
	DEBUGINFOD_URLS=$URL "$ASYNCORE" resign --db "$TMPD/refused.db" >"$TMPD/resign.refused" 2>"$TMPD/resign.refused.err"; rc=$?
	[ $how = gone ] && mv "$FIX_DIR/prog.away" "$FIX_DIR/prog"
	check "debuginfod: resign ($how): a refused connection is a warning (exit 1), the frames stay" \
		test $rc = 1 -a "$(grep -c "^asyncore: warning: debuginfod: no debug info for $FIX_DIR/prog (build-id $BUILD_ID) from $URL: " "$TMPD/resign.refused.err")" = 1 -a \
		"$(prog_lines "$TMPD/refused.db")" = "$before"
done

# A server that accepts and never answers: DEBUGINFOD_TIMEOUT bounds each try.
python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
held = []
end = time.time() + 120
while time.time() < end:
    s.settimeout(1)
    try:
        held.append(s.accept()[0])
    except socket.timeout:
        pass' "$PORT" &
PIDS+=($!)
python3 -c '
import socket, sys, time
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit(1)' "$PORT" || fail "debuginfod: the silent server did not start"
start=$(date +%s.%N)
DEBUGINFOD_URLS=$URL DEBUGINFOD_TIMEOUT=1 DEBUGINFOD_RETRY_LIMIT=0 \
	"$ASYNCORE" report "$FIX_CORE" --format json >"$TMPD/silent.json" 2>/dev/null; rc=$?
secs=$(python3 -c "print(round($(date +%s.%N) - $start, 1))")
check "debuginfod: a silent server is a timeout warning (exit 1) after DEBUGINFOD_TIMEOUT (1 <= ${secs}s < 15)" \
	test "$rc/$(json_get "$TMPD/silent.json" "any(w.startswith('debuginfod: ') and w.endswith(': Timer expired') for w in j['warnings'])")/$(python3 -c "print(1 <= $secs < 15)")" = 1/True/True
