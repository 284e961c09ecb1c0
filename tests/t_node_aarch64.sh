#!/usr/bin/env bash
# Node.js on aarch64: Debian 12's arm64 node 18 (V8 10.2; libnode108 keeps
# V8's postmortem metadata in its dynamic symbols but none of its builtins'
# names), unpacked into a sysroot under the build tree
# (tests/aarch64_node.sh) and run under qemu-aarch64 with
# --abort-on-uncaught-exception on fixtures/node_crash's scripts.  From
# qemu's arm64 core read with --sysroot: the JavaScript frames against
# node's own stack trace (names, paths, lines, columns; Sparkplug's frames
# at their function's start) and the cause against its message.
. "$(dirname "$0")/lib.sh"

W=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
CMP="python3 $ROOT/tests/node_compare.py"

test_dep qemu-aarch64 qemu-user "$W/apt.log" ||
	{ skip "node-aarch64: qemu-user could not be installed: $(tail -1 "$W/apt.log")"; exit 0; }
BASE=$BUILD_FIX/node-arm64
if ! with_lock node-arm64 sh "$ROOT/tests/aarch64_node.sh" "$BASE" 2>"$W/fetch.err"; then
	skip "node-aarch64: $(tail -1 "$W/fetch.err")"; exit 0
fi
SYSROOT=$BASE/root
DIR=$(fixture_build node_crash) || { fail "node-aarch64: fixture build failed"; exit 0; }

# arm_case NAME SCRIPT STARTS [FLAGS]: SCRIPT under qemu's node, its core
# read; STARTS of its frames placed at their function's start.
arm_case() {
	local name=$1 script=$2 starts=$3 run=$W/$1
	shift 3
	mkdir -p "$run"
	(cd "$run" && ulimit -c unlimited &&
	 exec timeout 120 qemu-aarch64 -L "$SYSROOT" "$SYSROOT/usr/bin/node" --abort-on-uncaught-exception \
		"$@" "$DIR/$script") >/dev/null 2>"$run/stderr.raw"
	rm -f "$run"/core "$run"/core.[0-9]*   # the host's core of qemu itself
	local core; core=$(ls "$run"/qemu_node_*.core 2>/dev/null | head -1)
	if [ -z "$core" ]; then
		fail "node-aarch64/$name: qemu-aarch64 wrote no core: $(tail -2 "$run/stderr.raw" | tr '\n' ' ')"; return
	fi
	# node writes no line break after its last frame: qemu's own words follow.
	sed 's/qemu: uncaught target signal.*$//' "$run/stderr.raw" >"$run/stderr"
	local out=$W/$name.json
	"$ASYNCORE" report "$core" --sysroot "$SYSROOT" --format json >"$out" 2>"$out.err"
	json_ok "$out" || { fail "node-aarch64/$name: no JSON: $(head -2 "$out.err" | tr '\n' ' ')"; return; }
	check "node-aarch64/$name: an aarch64 core" [ "$(json_get "$out" 'j["core"]["arch"]')" = aarch64 ]
	if $CMP frames "$out" "$run/stderr" >"$W/$name.diff" && grep -q ", $starts of them at" "$W/$name.diff"; then
		pass "node-aarch64/$name: JavaScript frames are node's stack trace ($(tail -1 "$W/$name.diff"); names, files, lines, columns)"
	else
		fail "node-aarch64/$name: frames differ from node's: $(head -3 "$W/$name.diff" | tr '\n' ' ')"
	fi
	if [ "$starts" != 0 ]; then
		check "node-aarch64/$name: cause is node's uncaught error, in its function ($(json_get "$out" 'j["cause"]["summary"]'))" \
			[ "$(json_get "$out" 'j["cause"]["exception"]["type"] + ": " + j["cause"]["exception"]["what"]')" = \
			  "$(sed -n 's/^Uncaught //p' "$run/stderr" | head -1)" ]
	elif $CMP cause "$out" "$run/stderr" >"$W/$name.cause"; then
		pass "node-aarch64/$name: cause is the uncaught $(json_get "$out" 'j["cause"]["exception"]["type"]') with node's message and site"
	else
		fail "node-aarch64/$name: $(head -2 "$W/$name.cause" | tr '\n' ' ')"
	fi
	local warned; warned=$(json_get "$out" '"; ".join(w for w in j["warnings"] if w.startswith("node:") and
		not w.endswith("JavaScript frames after its last native frame"))')
	check "node-aarch64/$name: no warning reading V8's frames${warned:+ (got: $warned)}" [ -z "$warned" ]
	rm -f "$core"
}

arm_case interpreted crash.js 0
arm_case classes crash_class.js 0
# Sparkplug's code: V8 10.2 exports no offset of its Code objects' tables,
# so each frame is placed at its function's start (a line at or before
# node's); qemu's cores list no file of JIT code, so the native unwinder
# stops at it (a warning) and the JavaScript frames follow the last native
# frame.
arm_case baseline crash.js 10 --always-sparkplug
