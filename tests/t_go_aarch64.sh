#!/usr/bin/env bash
# Go on arm64: fixtures/go_shop built for arm64 (cgo through
# aarch64-linux-gnu-gcc: the arm64 and arm64-stripped variants), crashed
# under qemu-aarch64 with GOTRACEBACK=crash: qemu's core and the runtime's
# traceback of every goroutine.  asyncore (--sysroot for the C libraries)
# against that traceback (go_oracle.py compare: ids, states, waits, frames,
# pcs, created by), its cause against the runtime's message, and the crash's
# kind, crash site and signature (go_oracle.py crash).  The stripped build
# (-s -w) has only the runtime's pclntab.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"
source "$ROOT/tests/go_lib.sh"
source "$ROOT/tests/aarch64_lib.sh"

have_asyncore || { fail "go-aarch64: no asyncore at $ASYNCORE (run make)"; exit 0; }
go_deps go-aarch64
aarch64_deps go-aarch64


# arm_case VARIANT CRASH: build VARIANT crashed with CRASH under qemu.
arm_case() {
	local variant=$1 crash=$2 name=go-aarch64/$1/$2 core
	fix_build go_shop "$variant" || return
	if ! core=$(qemu_core "$FIX_DIR" "$crash" 2>"$TMPD/core.err"); then
		skip "$name: $(head -1 "$TMPD/core.err")"
		return
	fi
	local run; run=$(dirname "$core")
	FIX_RUNS+=("$run")
	# qemu_core sends the program's stdout and stderr to run/stdout.
	local rt=$run/runtime.json asy=$run/asyncore.json
	if ! python3 "$ORACLE" runtime "$run/stdout" >"$rt" 2>"$TMPD/rt.err" ||
		[ "$(jget "$rt" 'len(j["goroutines"]) > 0 and bool(j["message"])')" != True ]; then
		fail "$name: cannot read the runtime's traceback: $(head -2 "$run/stdout" | tr '\n' ' ')"
		return
	fi
	asy_json "$asy" "$core" "$FIX_DIR/prog" --sysroot "$SYSROOT"
	if [ "$ASY_JSON_OK" -ne 0 ] || [ "$ASY_RC" -gt 1 ]; then
		fail "$name: asyncore exited $ASY_RC: $(tail -2 "$asy.err" | tr '\n' ' ' | cut -c1-300)"
		return
	fi
	oracle_crash "$name" "$crash" "$rt" "$asy"
}

for crash in nil index error mapwrites; do
	arm_case arm64 "$crash"
done
for crash in nil index; do
	arm_case arm64-stripped "$crash"
done
exit 0
