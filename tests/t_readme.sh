#!/usr/bin/env bash
# The README's examples stay true: every fenced block marked `sh readme-test`
# runs (bash -e -o pipefail) in a scratch directory holding `core`, a crash of
# fixtures/debuginfod, with asyncore on PATH, HOME in the scratch directory,
# `make` meaning this tree's Makefile, and DEBUGINFOD_URLS naming a debuginfod
# server on a loopback port that serves the core's debug info.  The address
# 127.0.0.1:8080 in a block becomes a free loopback port, and what a block
# leaves running in the background (a process to read live, `serve`) is
# ended when the block ends.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "readme: no asyncore at $ASYNCORE (run make)"; exit 0; }
command -v debuginfod >/dev/null || { skip "readme: no debuginfod server (tests/t_debuginfod.sh installs it)"; exit 0; }
fix_core debuginfod; rc=$?
[ $rc -eq 77 ] && { no_core readme 77; exit 0; }
[ $rc -eq 0 ] || exit 0
W=$TMPD/work
mkdir -p "$W/bin" "$W/home" && cp "$FIX_CORE" "$W/core" && ln -s "$ASYNCORE" "$W/bin/asyncore"
BUILD_ID=$(readelf -n "$FIX_DIR/prog" | sed -n 's/.*Build ID: //p')
debuginfod_start "$FIX_DIR/debug" "$BUILD_ID" "$TMPD/server"; rc=$?
trap 'kill $DEBUGINFOD_PID 2>/dev/null; wait $DEBUGINFOD_PID 2>/dev/null; fix_cleanup' EXIT
[ $rc -eq 0 ] || { fail "readme: the debuginfod server did not come up: $(tail -2 "$TMPD/server.log")"; exit 0; }

python3 - "$ROOT/README.md" "$TMPD/block" <<'PY'
import re, socket, sys
text = open(sys.argv[1]).read()
s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()
for i, body in enumerate(re.findall(r"^```sh readme-test\n(.*?)^```", text, re.S | re.M)):
    open("%s%02d.sh" % (sys.argv[2], i), "w").write(body.replace("127.0.0.1:8080", "127.0.0.1:%d" % port))
PY
n=0
for block in "$TMPD"/block*.sh; do
	[ -f "$block" ] || continue
	n=$((n + 1))
	first=$(head -1 "$block")
	(cd "$W" && env -u NO_COLOR HOME="$W/home" PATH="$W/bin:$PATH" DEBUGINFOD_URLS="$DEBUGINFOD_URL" \
		DEBUGINFOD_CACHE_PATH="$W/debuginfod" ASYNCORE_CACHE_DIR= MAKE_ROOT="$ROOT" MAKE_PROGRAM="$ASYNCORE" \
		timeout 300 bash -e -o pipefail -c 'make() { command make -s -C "$MAKE_ROOT" PROGRAM="$MAKE_PROGRAM" "$@"; }
			trap '\''rc=$?; kill $(jobs -p) 2>/dev/null || :; wait || :; exit $rc'\'' EXIT
			source "$1"' _ "$block") >"$block.out" 2>&1
	rc=$?
	check "readme: example '$first' runs (exit $rc)" test $rc = 0
	[ $rc = 0 ] || tail -5 "$block.out" | sed 's/^/    /'
done
check "readme: the README has examples to run ($n)" test $n -ge 6
check "readme: the report example found the debug info on the debuginfod server" \
	grep -q '(debuginfod)' "$TMPD"/block*.sh.out
check "readme: the live example read the process (cause hang)" \
	grep -q '^cause: *hang: ' "$TMPD"/block*.sh.out
check "readme: the query example printed the stored core's cause" \
	grep -q '^[a-z_]*  *SIG[A-Z]*: ' "$TMPD"/block*.sh.out
check "readme: the serve example answered with the buckets as JSON" \
	grep -q '"signature_hash"\|"hash":' "$TMPD"/block*.sh.out
check "readme: the HTML examples wrote their pages" \
	grep -q '</html>' "$W/crash.html" "$W/buckets.html"
check "readme: the install example installed under HOME" test -x "$W/home/.local/bin/asyncore"
