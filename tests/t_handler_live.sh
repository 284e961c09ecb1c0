#!/usr/bin/env bash
# A live process stopped inside its own crash handler (fixtures/handler_c,
# shape "wait": the handler logs, then waits): report --pid and snapshot
# name the fault the handler caught, as a core of the crash would, with the
# handler still running it.  Oracles: the handler's own log line (the fault
# address), gdb attached after asyncore let the process go (its
# `<signal handler called>` frame and the frame past it), and the core of
# the same bug without a handler (the signature).  The process is always
# killed.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/fixlib.sh"

have_asyncore || { skip "handler-live: no asyncore binary"; exit 0; }
command -v gdb >/dev/null || { skip "handler-live: no gdb"; exit 0; }

fix_core handler_c "" none null; rc=$?
[ $rc -eq 0 ] || { no_core handler-live-plain $rc; exit 0; }
PLAIN=$TMPD/plain.json
asy_json "$PLAIN" "$FIX_CORE" "$FIX_DIR/prog"
PROG=$FIX_DIR/prog

WAITING=
trap '[ -n "$WAITING" ] && { kill -9 "$WAITING"; wait "$WAITING"; } 2>/dev/null; fix_cleanup' EXIT
RUN=$TMPD/run
mkdir -p "$RUN"
(cd "$RUN" && exec "$PROG" wait null) 2>"$RUN/stderr" &
WAITING=$!
# The handler writes "ready" once it has logged; it then only waits.  The
# bound only keeps a broken fixture from hanging the test.
for _ in $(seq 600); do [ -f "$RUN/ready" ] && break; sleep 0.05; done
if [ ! -f "$RUN/ready" ]; then
	fail "handler-live: the fixture never reached its handler: $(head -2 "$RUN/stderr")"
	exit 0
fi
addr=$(sed -n 's/^fatal signal 11 (Segmentation fault) code 1 at \(0x[0-9a-f]*\)$/\1/p' "$RUN/stderr")

# check_handled NAME JSON: the caught fault, its handler still running.
check_handled() {
	local name=$1 j=$2
	check "$name-kind" test "$(jget "$j" "j['cause']['kind']")" = null_dereference
	check "$name-handler" test "$(jget "$j" "j['cause']['handled_by']['function']")" = on_fatal
	check "$name-action" test "$(jget "$j" "j['cause']['handled_by']['action']")" = running
	check "$name-address-is-the-handler's" test "$(jget "$j" "j['cause']['handled_by']['address']")" = "$addr"
	local summary; summary=$(jget "$j" "j['cause']['summary']")
	case $summary in
	"write of a->quota->used at NULL + 0x8 in charge (main.c:"*"); caught by on_fatal, still running it")
		pass "$name-summary" ;;
	*) fail "$name-summary: '$summary'" ;;
	esac
	check "$name-signature-as-without-handler" test "$(jget "$j" "j['signature']")" = \
		"$(jget "$PLAIN" "j['signature']")"
}

LIVE=$TMPD/live.json
"$ASYNCORE" report --pid "$WAITING" "$PROG" --format json >"$LIVE" 2>"$LIVE.err"
check_handled handler-live "$LIVE"

# gdb attached after asyncore let go: the trampoline and the crash site are
# where gdb shows them.
st=$(sed 's/.*) \(.\).*/\1/' "/proc/$WAITING/stat" 2>/dev/null)
check "handler-live-left-running (state $st)" test "$st" = S
gdb -batch -nx -p "$WAITING" -ex bt 2>/dev/null | grep '^#' >"$TMPD/gdb.bt"
k=$(sed -n 's/^#\([0-9]*\) *<signal handler called>.*/\1/p' "$TMPD/gdb.bt" | head -1)
site=$(sed -n "s/^#$((k + 1)) .* in \([A-Za-z_0-9]*\) (.*/\1/p" "$TMPD/gdb.bt")
ours=$(jget "$LIVE" "[f['index'] for f in j['threads'][0]['frames'] if f['role'] == 'trampoline'][0]")
check "handler-live-trampoline-at-gdb's-#$k" test -n "$k" -a "$ours" = "$k"
check "handler-live-crash-site-is-gdb's-$site" test -n "$site" -a \
	"$(jget "$LIVE" "[f['function'] for f in j['threads'][0]['frames'] if f['role'] == 'crash_site'][0]")" = "$site"

SNAP=$TMPD/snap.core
if "$ASYNCORE" snapshot "$WAITING" -o "$SNAP" >/dev/null 2>&1; then
	asy_json "$TMPD/snap.json" "$SNAP" "$PROG"
	check_handled handler-snapshot "$TMPD/snap.json"
else
	fail "handler-snapshot: asyncore snapshot failed"
fi
