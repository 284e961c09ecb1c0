#!/usr/bin/env bash
# bRPC bthreads on aarch64: fixtures/bthread cross-compiled at -O2 (its
# context switch is bRPC's arm64 one: d8..d15, x19..x30 and the pc saved
# in 0xb0 bytes) and crashed under qemu-aarch64.  The report must hold the
# truth the program wrote before crashing (ids, entry functions, states,
# waits, OS threads) and each saved context's stack must be gdb-multiarch's,
# unwound by gdb from the same saved registers (tests/gdb_bthread.py), and
# with --locals all each frame's locals gdb-multiarch's `bt full`.
# qemu-user's cores save no thread pointer: a running bthread is matched to
# the OS thread whose stack pointer lies on the bthread's stack.  Also built
# as PIE, and stripped.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "bthread-aarch64: no asyncore at $ASYNCORE (run make)"; exit 0; }
source "$ROOT/tests/aarch64_lib.sh"
aarch64_deps bthread-aarch64
CMP=$ROOT/tests/bthread_compare.py

# qemu_run VARIANT: the variant's core and truth in CORE and TRUTH, false
# (after a FAIL) when it does not build or qemu wrote neither.
qemu_run() {
	fix_build bthread "$1" || return 1
	local run=$FIX_DIR/run-$$-$RANDOM
	mkdir -p "$run"
	(cd "$run" && ulimit -c unlimited && exec timeout 120 qemu-aarch64 -L "$SYSROOT" "$FIX_DIR/prog") \
		>"$run/stdout" 2>&1
	rm -f "$run"/core "$run"/core.[0-9]*
	FIX_RUNS+=("$run")
	CORE=$(ls "$run"/qemu_prog_*.core 2>/dev/null | head -1)
	TRUTH=$run/truth.json
	if [ -z "$CORE" ] || [ ! -s "$TRUTH" ]; then
		fail "bthread-$1: qemu-aarch64 wrote no core or no truth: $(tail -2 "$run/stdout" | tr '\n' ' ')"
		return 1
	fi
}

# PIE: the same bthreads, each suspended one unwound to its base.
if qemu_run aarch64-pie; then
	asy_json "$TMPD/pie.json" "$CORE" "$FIX_DIR/prog" --sysroot "$SYSROOT"
	if python3 "$CMP" truth "$TRUTH" "$TMPD/pie.json" >"$TMPD/cmp" 2>&1; then
		pass "bthread-aarch64-pie: the fixture's bthreads (states, waits, OS threads)"
	else
		fail "bthread-aarch64-pie: the fixture's bthreads: $(head -1 "$TMPD/cmp")"
	fi
	check "bthread-aarch64-pie: every suspended bthread unwound down to task_runner" \
		[ "$(jget "$TMPD/pie.json" 'sum(t["state"] == "suspended" and t["frames"][-1]["function"].startswith("bthread::TaskGroup::task_runner") for t in j["tasks"])')" = \
		  "$(jget "$TRUTH" 'sum(b["state"] == "suspended" for b in j["bthreads"])')" ]
fi

# Stripped: aarch64's TaskMeta is not the documented x86_64 size (its
# pthread_mutex_t is 8 bytes longer): no bthreads, never a guess, a warning.
if qemu_run aarch64-nodebug; then
	asy_json "$TMPD/nd.json" "$CORE" "$FIX_DIR/prog" --sysroot "$SYSROOT"
	check "bthread-aarch64-nodebug: no bthreads" [ "$(jget "$TMPD/nd.json" 'len(j["tasks"])')" = 0 ]
	check "bthread-aarch64-nodebug: a warning says why" \
		grep -q 'bthread: .*without debug info' <(jget "$TMPD/nd.json" '"\n".join(j["warnings"])')
fi

qemu_run aarch64 || exit 0
JSON=$TMPD/a64.json
asy_json "$JSON" "$CORE" "$FIX_DIR/prog" --sysroot "$SYSROOT"
if [ "$ASY_JSON_OK" -ne 0 ]; then
	fail "bthread-aarch64: no JSON (exit $ASY_RC): $(head -2 "$JSON.err")"; exit 0
fi
check "bthread-aarch64: core.arch is aarch64" [ "$(jget "$JSON" 'j["core"]["arch"]')" = aarch64 ]
check "bthread-aarch64: exit status 0, no warnings ($(jget "$JSON" '"; ".join(j["warnings"])'))" \
	[ "$ASY_RC" -eq 0 ]
if python3 "$CMP" truth "$TRUTH" "$JSON" >"$TMPD/cmp" 2>&1; then
	pass "bthread-aarch64: the fixture's bthreads (states, waits, OS threads)"
else
	fail "bthread-aarch64: the fixture's bthreads: $(head -1 "$TMPD/cmp")"
	tail -n +2 "$TMPD/cmp" | head -10 | sed 's/^/    /'
fi
check "bthread-aarch64: every suspended bthread unwound down to task_runner" \
	[ "$(jget "$JSON" 'sum(t["state"] == "suspended" and t["frames"][-1]["function"].startswith("bthread::TaskGroup::task_runner") for t in j["tasks"])')" = \
	  "$(jget "$TRUTH" 'sum(b["state"] == "suspended" for b in j["bthreads"])')" ]
check "bthread-aarch64: signature names the crashing bthread's frames" \
	[ "$(jget "$JSON" 'j["signature"]')" = "SIGSEGV: parse_header < handle_request < crasher" ]

LC_ALL=C BTHREAD_LOCALS=1 BTHREAD_TRUTH=$TRUTH timeout 300 gdb-multiarch -batch -nx -iex 'set auto-load python-scripts off' \
	-iex "set sysroot $SYSROOT" -ex 'set width 0' -ex 'set print frame-arguments scalars' \
	-x "$ROOT/tests/gdb_bthread.py" "$FIX_DIR/prog" "$CORE" 2>/dev/null |
	sed -n '/^GDB_BTHREAD_BEGIN$/,/^GDB_BTHREAD_END$/p' | sed '1d;$d' >"$TMPD/gdb.json"
if [ ! -s "$TMPD/gdb.json" ]; then
	fail "bthread-aarch64: gdb-multiarch printed nothing"
elif (cd "$ROOT/tests" && python3 "$CMP" stacks "$TRUTH" "$JSON" "$TMPD/gdb.json") >"$TMPD/cmp" 2>&1; then
	pass "bthread-aarch64: stacks equal gdb-multiarch's from the saved contexts"
else
	fail "bthread-aarch64: stacks differ from gdb-multiarch's: $(head -1 "$TMPD/cmp")"
	tail -n +2 "$TMPD/cmp" | head -10 | cut -c1-300 | sed 's/^/    /'
fi
# --locals all: every bthread's and thread's locals, gdb-multiarch's `bt full`.
asy_json "$TMPD/a64-locals.json" "$CORE" "$FIX_DIR/prog" --sysroot "$SYSROOT" --locals all
if [ ! -s "$TMPD/gdb.json" ]; then
	:   # failed above
elif (cd "$ROOT/tests" && python3 "$CMP" stacks "$TRUTH" "$TMPD/a64-locals.json" "$TMPD/gdb.json" all) >"$TMPD/cmp" 2>&1; then
	pass "bthread-aarch64 --locals all: locals equal gdb-multiarch's bt full: $(tail -1 "$TMPD/cmp")"
else
	fail "bthread-aarch64 --locals all: locals differ from gdb-multiarch's bt full: $(head -1 "$TMPD/cmp")"
	tail -n +2 "$TMPD/cmp" | head -10 | cut -c1-300 | sed 's/^/    /'
fi

# The same core with each thread's TPIDR_EL0, as an arm64 kernel saves it:
# aarch64's thread pointer is not pthread_self() (struct pthread lies below
# it), so the running bthreads are still matched by their stacks.
python3 "$ROOT/tests/add_arm_tls.py" "$CORE" "$TMPD/tls.core" 0x5550000000
asy_json "$TMPD/tls.json" "$TMPD/tls.core" "$FIX_DIR/prog" --sysroot "$SYSROOT"
check "bthread-aarch64/with NT_ARM_TLS: the threads have their thread pointers" \
	[ "$(jget "$TMPD/tls.json" 'sum("tpidr_el0" in t["registers"] and t["registers"]["tpidr_el0"] != "0x0" for t in j["threads"])')" = \
	  "$(jget "$TMPD/tls.json" 'len(j["threads"])')" ]
if python3 "$CMP" truth "$TRUTH" "$TMPD/tls.json" >"$TMPD/cmp" 2>&1; then
	pass "bthread-aarch64/with NT_ARM_TLS: the fixture's bthreads (states, waits, OS threads)"
else
	fail "bthread-aarch64/with NT_ARM_TLS: the fixture's bthreads: $(head -1 "$TMPD/cmp")"
fi

# A saved context whose pc is junk (bRPC's arm64 layout: the pc at
# ctx+0xa0): that bthread's walk stops early, with a warning naming it.
joiner=$(jget "$TRUTH" '[b["id"] for b in j["bthreads"] if b["fn"] == "joiner"][0]')
ctx=$(jget "$TRUTH" '[b["context"] for b in j["bthreads"] if b["fn"] == "joiner"][0]')
if python3 "$ROOT/tests/corrupt_core.py" "$CORE" "$TMPD/damaged.core" poke "$ctx+0xa0=0x10"; then
	asy_json "$TMPD/damaged.json" "$TMPD/damaged.core" "$FIX_DIR/prog" --sysroot "$SYSROOT"
	check "bthread-aarch64/damaged context: warning names the joiner" \
		grep -q "^bthread: bthread $joiner: unwinding from its saved context stopped before task_runner" \
		<(jget "$TMPD/damaged.json" '"\n".join(j["warnings"])')
else
	fail "bthread-aarch64/damaged context: cannot patch the core"
fi
exit 0
