#!/usr/bin/env bash
# Signal frames that lie (DESIGN.md "Signal frames and crash handlers"): a
# crash handler's core (fixtures/handler_c, shape nodefer) whose signal
# frame gets a siginfo naming no signal, a code no kernel writes, a saved pc
# in no code; and a plain crash's core whose return address is made
# glibc's __restore_rt, so the unwinder walks into a "signal frame" of
# stack garbage.  Each gives the plain kind with a warning, never a crash
# and never an invented caught fault.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/fixlib.sh"

have_asyncore || { skip "handler-bad: no asyncore binary"; exit 0; }

fix_core handler_c "" nodefer null; rc=$?
[ $rc -eq 0 ] || { no_core handler-bad $rc; exit 0; }
HCORE=$FIX_CORE PROG=$FIX_DIR/prog
asy_json "$TMPD/h.json" "$HCORE" "$PROG"
# The trampoline's stack pointer is the CFA of the frame it returns from.
sp=$(jget "$TMPD/h.json" "[f['cfa'] for f, g in zip(j['threads'][0]['frames'], j['threads'][0]['frames'][1:]) if g['role'] == 'trampoline'][0]")
tramp_off=$(jget "$TMPD/h.json" "[f['module_offset'] for f in j['threads'][0]['frames'] if f['role'] == 'trampoline'][0]")
if [ -z "$sp" ]; then
	fail "handler-bad: no trampoline in the handler's core"
	exit 0
fi

# poked NAME POKE: the report of the core with POKE (corrupt_core.py's
# poke) into $TMPD/NAME.json; false, with a FAIL line, when there is none.
poked() {
	local name=$1 poke=$2 out=$TMPD/$1.core j=$TMPD/$1.json
	python3 "$ROOT/tests/corrupt_core.py" "$HCORE" "$out" poke $poke ||
		{ fail "handler-bad-$name: cannot write the core"; return 1; }
	asy_json "$j" "$out" "$PROG"
	if [ "$ASY_JSON_OK" -ne 0 ] || [ "$ASY_RC" -gt 1 ]; then
		fail "handler-bad-$name: asyncore exited $ASY_RC: $(head -2 "$j.err")"
		return 1
	fi
}

# lie NAME POKE WARNING: the core with POKE gives the plain kind, no
# handled_by, and a warning matching WARNING.
lie() {
	local name=$1 j=$TMPD/$1.json want=$3
	poked "$name" "$2" || return
	check "handler-bad-$name-plain-kind" test "$(jget "$j" "j['cause']['kind']")" = signal
	check "handler-bad-$name-not-handled" test "$(jget "$j" "j['cause']['handled_by']")" = None
	check "handler-bad-$name-warned" test -n "$(jget "$j" "[w for w in j['warnings'] if '$want' in w][0]")"
}

# trusted NAME POKE: a siginfo that lies is not believed, but the trap the
# sigcontext records (trap number, error code, fault address) agrees with
# the interrupted instruction: the caught fault is still the cause, with
# no warning (faulthandler's frames hold no siginfo at all, only what its
# stack held before).
trusted() {
	local name=$1 j=$TMPD/$1.json
	poked "$name" "$2" || return
	check "handler-bad-$name-trap-kind" test "$(jget "$j" "j['cause']['kind']")" = null_dereference
	check "handler-bad-$name-trap-handled" test "$(jget "$j" "j['cause']['handled_by'] is not None")" = True
	check "handler-bad-$name-trap-no-warning" test "$(jget "$j" "[w for w in j['warnings'] if 'signal frame' in w]")" = "[]"
}

x=$(printf '0x%x' $((sp)))
# The sigcontext's trap number (x86_64: mcontext + 160) and fault address
# (cr2, + 176) beside the siginfo (at 304).
notrap="$x+200=99 $x+216=0x4141"
trusted no-signal-trap "$x+304=99:4"
trusted bad-code-trap "$x+312=0x7777:4"
trusted other-signal-trap "$x+304=10:4"
lie no-signal "$x+304=99:4 $notrap" "names no signal"
lie bad-code "$x+312=0x7777:4 $notrap" "code is no signal code"
lie disagrees "$x+320=0x4141:8 $notrap" "does not agree with the interrupted instruction"
lie pc-in-no-code "$x+168=0x4141414141" "saved pc is in no code"
lie pc-not-the-next-frames "$x+168=$(printf '0x%x' $((sp + 64)))" "not believed"

# A plain crash whose return address is made __restore_rt.
fix_core handler_c "" none null; rc=$?
[ $rc -eq 0 ] || { no_core handler-bad-fake $rc; exit 0; }
asy_json "$TMPD/p.json" "$FIX_CORE" "$PROG"
libc=$(jget "$TMPD/p.json" "[m['start'] for m in j['modules'] if 'libc.so' in m['path']][0]")
cfa=$(jget "$TMPD/p.json" "j['threads'][0]['frames'][0]['cfa']")
if [ -z "$libc" ] || [ -z "$cfa" ] || [ -z "$tramp_off" ]; then
	fail "handler-bad-fake: no libc, CFA or trampoline offset ($libc $cfa $tramp_off)"
	exit 0
fi
python3 "$ROOT/tests/corrupt_core.py" "$FIX_CORE" "$TMPD/fake.core" poke \
	"$(printf '0x%x=0x%x' $((cfa - 8)) $((libc + tramp_off)))" ||
	{ fail "handler-bad-fake: cannot write the core"; exit 0; }
asy_json "$TMPD/fake.json" "$TMPD/fake.core" "$PROG"
if [ "$ASY_JSON_OK" -ne 0 ] || [ "$ASY_RC" -gt 1 ]; then
	fail "handler-bad-fake: asyncore exited $ASY_RC: $(head -2 "$TMPD/fake.json.err")"
else
	check "handler-bad-fake-restore-rt-kind-kept" test "$(jget "$TMPD/fake.json" "j['cause']['kind']")" = null_dereference
	check "handler-bad-fake-restore-rt-not-handled" test "$(jget "$TMPD/fake.json" "j['cause']['handled_by']")" = None
fi
