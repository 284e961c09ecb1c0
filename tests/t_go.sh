#!/usr/bin/env bash
# Go goroutines: fixtures/go_shop (goroutines waiting on channels, a mutex,
# a WaitGroup, select, sleep, a pipe read in [syscall], an Accept in
# [IO wait], a cgo call parked in C, a Go callback from C) crashed each way
# it can, with GOTRACEBACK=crash: a core and the runtime's own traceback of
# every goroutine (its stderr, next to the core).  For each crash,
# asyncore's `tasks` against that traceback (ids, states, wait reasons,
# frames, pcs, created by: tests/go_oracle.py compare), against delve's view
# of the same core, its cause against the runtime's panic or fatal error,
# and its text report's `goroutine N [reason]:` headers.  Builds: default
# (cgo, DWARF), stripped (-s -w: pclntab only; delve cannot read it), nocgo
# (the runtime detects a deadlock only without cgo); 10,000 parked
# goroutines; a live process dumped by gcore (delve only: no traceback).
# For each crash also its cause's kind, its crash site (the frame with role
# crash_site: in the goroutine the runtime printed first, or for a
# deadlock on the crashing thread's system stack) with the runtime's
# callers, its signature's first words (go_oracle.py crash), and the text
# report's first line against the JSON's cause.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"
source "$ROOT/tests/go_lib.sh"

have_asyncore || { fail "go: no asyncore at $ASYNCORE (run make)"; exit 0; }
go_deps go
test_dep dlv delve "$TMPD/apt-delve.log"
HAVE_DLV=0; command -v dlv >/dev/null && HAVE_DLV=1


# go_case NAME VARIANT ARGS...: crash the build VARIANT with ARGS and run
# every check on its core.
go_case() {
	local name=go/$1 variant=$2; shift 2
	local crash=$1 rc=0
	fix_core go_shop "$variant" "$@" || rc=$?
	[ $rc -eq 1 ] && return
	[ $rc -ne 0 ] && { no_core "$name" $rc; return; }
	local run; run=$(dirname "$FIX_CORE")
	local rt=$run/runtime.json asy=$run/asyncore.json
	# The runtime's traceback is the program's stderr (none when the core
	# came from gdb, which stops the program at its first signal).
	if ! grep -q '^goroutine [0-9]* \[' "$run/stderr" 2>/dev/null; then
		skip "$name: no runtime traceback on stderr (core from gdb?)"; return
	fi
	if ! python3 "$ORACLE" runtime "$run/stderr" >"$rt" 2>"$TMPD/rt.err" ||
		[ "$(jget "$rt" 'len(j["goroutines"]) > 0 and bool(j["message"])')" != True ]; then
		fail "$name: cannot read the runtime's traceback: $(tail -1 "$TMPD/rt.err")"; return
	fi
	asy_json "$asy" "$FIX_CORE" "$FIX_DIR/prog"
	if [ "$ASY_JSON_OK" -ne 0 ] || [ "$ASY_RC" -gt 2 ]; then
		fail "$name: asyncore exited $ASY_RC without JSON: $(tail -2 "$asy.err" | tr '\n' ' ' | cut -c1-300)"
		return
	fi
	oracle_crash "$name" "$crash" "$rt" "$asy"
	"$ASYNCORE" report "$FIX_CORE" "$FIX_DIR/prog" >"$run/text" 2>/dev/null
	oracle "$name: text report's goroutine headers" text "$rt" "$run/text"
	oracle "$name: text report's first line is the JSON's cause" text-cause "$run/text" "$asy"
	if [ "$variant" = stripped ]; then
		: # delve reads DWARF only
	elif [ $HAVE_DLV -eq 0 ]; then
		skip "$name: against delve: no dlv (delve)"
	elif python3 "$ORACLE" delve "$FIX_DIR/prog" "$FIX_CORE" 600 >"$run/delve.json" 2>"$TMPD/dlv.err"; then
		oracle "$name: against delve" delve-compare "$run/delve.json" "$asy"
	else
		fail "$name: delve: $(tail -1 "$TMPD/dlv.err" | cut -c1-300)"
	fi
}

for kind in nil index error string custom mapwrites; do
	go_case "$kind" "" "$kind"
done
for kind in nil index; do
	go_case "stripped/$kind" stripped "$kind"
done
go_case "nocgo/deadlock" nocgo deadlock
go_case "nocgo/nil" nocgo nil
go_case "many 10000" "" many 10000

# A live process (gcore): no traceback, delve's view only.
if [ $HAVE_DLV -eq 1 ] && fix_build go_shop; then
	if FIX_CORE=$(fixture_gcore "$FIX_DIR" hang 2>"$TMPD/core.err"); then
		FIX_RUNS+=("$(dirname "$FIX_CORE")")
		asy_json "$TMPD/hang.json" "$FIX_CORE" "$FIX_DIR/prog"
		if [ "$ASY_JSON_OK" -ne 0 ] || [ "$ASY_RC" -gt 2 ]; then
			fail "go/hang (gcore): asyncore exited $ASY_RC without JSON"
		elif python3 "$ORACLE" delve "$FIX_DIR/prog" "$FIX_CORE" 600 >"$TMPD/hang-delve.json" 2>"$TMPD/dlv.err"; then
			oracle "go/hang (gcore): against delve" delve-compare "$TMPD/hang-delve.json" "$TMPD/hang.json"
		else
			fail "go/hang (gcore): delve: $(tail -1 "$TMPD/dlv.err" | cut -c1-300)"
		fi
	else
		no_core "go/hang (gcore)" 77
	fi
fi
exit 0
