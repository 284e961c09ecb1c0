#!/usr/bin/env bash
# A C service's own fatal-signal handler on aarch64 (DESIGN.md "Signal frames
# and crash handlers", "Architectures"): fixtures/handler_c's program
# cross-built (fixtures/handler_c_aarch64) and crashed under qemu-aarch64 with
# the bug "null" (charge() writes a->quota->used through a NULL quota) and the
# handler shapes nodefer (raise() inside the handler), abort, nested (the
# handler faults in turn) and none (no handler: the plain core).  The cause is
# the caught fault's, cause.handled_by {function, action, signal, code,
# address}, the crashing thread's frames have roles, the signature is the one
# the bug has without the handler.  Checks by tests/handler_compare.py, as
# tests/t_handler.sh makes them for x86_64.
#
# What qemu-user (Debian's 7.2) does, checked on these cores: the handler runs
# on the sigaltstack with sp at the signal frame qemu wrote, { siginfo (128
# bytes); ucontext (uc_mcontext at +176) } then the frame record {x29, x30} of
# the interrupted code at +4688, as the kernel lays it out; x1 = sp (the
# siginfo, si_addr at +16), x2 = sp + 128, x29 = sp + 4688; x30 is the start
# of a page qemu mapped for the trampoline (r-x, anonymous, not a vDSO: qemu
# gives none) holding mov x8, #139; svc #0.  Its core has no NT_SIGINFO
# (prstatus: pr_cursig 11 or 6, si_code 0): the fault's code and address are
# only in that signal frame.
#
# Oracles: the program's own log line ("fatal signal 11 (Segmentation fault)
# code 1 at 0x8", what the handler received), and gdb-multiarch on the same
# core (tests/gdb_sigframe.py: its frames, `<signal handler called>`
# where its sigtramp unwinder recognises the trampoline, and the signal frame
# read at that frame's sp), for the non-PIE build (gdb-multiarch 13 does not
# relocate a PIE executable from a qemu-user core: the PIE build must give
# the non-PIE build's answer).  qemu runs with -cpu max,sve=off: with qemu's
# default CPU (SVE on) the signal frame holds an SVE record, and gdb 13, which
# sees no SVE registers in a qemu core, loops forever over that record
# (aarch64_linux_sigframe_init); one core of the default CPU is checked
# against the SVE-less one instead.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "handler-aarch64: no asyncore at $ASYNCORE (run make)"; exit 0; }
source "$ROOT/tests/aarch64_lib.sh"

aarch64_deps handler-aarch64

OUTS=$TMPD/out
mkdir -p "$OUTS"
QEMU_OPTS=(-cpu max,sve=off)

check_eq() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: expected '$2', got '$3'"; fi; }

# crash NAME DIR SHAPE: qemu's core of DIR/prog SHAPE null; its JSON report
# in $OUTS/NAME.json, its text in $OUTS/NAME.txt; sets C (the core) and LOG
# (the program's output).  1 when there is nothing to check (a FAIL or SKIP
# line said why).
crash() {
	local name=$1 dir=$2 shape=$3
	if ! C=$(qemu_core "$dir" "$shape" null 2>"$TMPD/core.err"); then
		skip "$name: $(head -1 "$TMPD/core.err")"
		return 1
	fi
	FIX_RUNS+=("$(dirname "$C")")
	LOG=$(dirname "$C")/stdout
	asy_json "$OUTS/$name.json" "$C" "$dir/prog" --sysroot "$SYSROOT"
	if [ "$ASY_JSON_OK" -ne 0 ] || [ "$ASY_RC" -gt 1 ]; then
		fail "$name: asyncore exited $ASY_RC without a report: $(head -2 "$OUTS/$name.json.err" | tr '\n' ' ')"
		return 1
	fi
	check_eq "$name: exit 0, no warning" "0 []" "$ASY_RC $(jget "$OUTS/$name.json" "j['warnings']")"
	"$ASYNCORE" report "$C" "$dir/prog" --sysroot "$SYSROOT" >"$OUTS/$name.txt" 2>/dev/null
	return 0
}

# gdb_sigframe PROG CORE OUT: tests/gdb_sigframe.py's JSON into OUT.
gdb_sigframe() {
	LC_ALL=C timeout 120 gdb-multiarch -batch -nx -iex 'set auto-load python-scripts off' \
		-iex "set sysroot $SYSROOT" -x "$ROOT/tests/gdb_sigframe.py" "$1" "$2" 2>/dev/null |
		sed -n '/^GDB_SIGFRAME_BEGIN$/,/^GDB_SIGFRAME_END$/p' | sed '1d;$d' >"$3"
	[ -s "$3" ]
}

# access PROG PC: "read" or "write", what the load or store instruction at
# PC (hex) of the non-PIE ELF PROG does; nothing when it is neither.
access() {
	local w
	w=$(elf_word "$1" "$2" 4)
	[ -n "$w" ] || return 0
	if (( (w & 0x3a000000) == 0x28000000 )); then     # load/store pair: L is bit 22
		(( w >> 22 & 1 )) && echo read || echo write
	elif (( (w & 0x3b000000) == 0x39000000 || (w & 0x3b000000) == 0x38000000 )); then
		# load/store register (unsigned immediate, imm9, register offset):
		# opc (bits 23:22) 00 stores, anything else loads
		(( (w >> 22 & 3) == 0 )) && echo write || echo read
	fi
	return 0
}

# roles NAME JSON: every frame of the crashing thread has a role of the
# contract, one trampoline and one crash_site (the frame after it), nothing
# but crash_handler above the trampoline and null below the crash site.
roles() {
	python3 - "$1" "$2" <<'PY'
import json, sys
name = sys.argv[1]
j = json.load(open(sys.argv[2]))
frames = [f for t in j['threads'] if t['crashing'] for f in t['frames']]
native = [f for f in frames if f.get('kind') == 'native']
roles = [f.get('role', 'absent') for f in native]
why = []
bad = sorted({str(r) for r in roles if r not in (None, 'crash_handler', 'trampoline', 'crash_site')})
if bad:
    why.append('roles outside the contract: %s' % bad)
if roles.count('trampoline') != 1 or roles.count('crash_site') != 1:
    why.append('%d trampolines, %d crash sites' % (roles.count('trampoline'), roles.count('crash_site')))
elif roles.index('crash_site') != roles.index('trampoline') + 1:
    why.append('the crash site is not the frame after the trampoline')
else:
    k = roles.index('trampoline')
    if any(r != 'crash_handler' for r in roles[:k]) or any(r is not None for r in roles[k + 2:]):
        why.append('roles around them')
print('PASS: %s: frame roles' % name if not why else
      'FAIL: %s: frame roles: %s (%s)' % (name, '; '.join(why),
                                          ', '.join('%s=%s' % (f.get('function'), f.get('role', 'absent')) for f in native)))
PY
}

# oracle NAME JSON GDB: the crashing thread's frames agree with
# gdb-multiarch's (tests/gdb_frames.py), frame by frame, as
# tests/oracle_compare.py compares them (functions, lines, arguments), but
# for the trampoline's name: gdb's "<signal handler called>", null in
# asyncore (qemu's trampoline page has no symbol).
oracle() {
	python3 - "$ROOT/tests" "$@" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from oracle_compare import frame_diff, gdb_frames
name, aj, gj = sys.argv[2], json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
a = [f for t in aj['threads'] if t['crashing'] for f in t['frames'] if f.get('kind', 'native') == 'native']
tid = [t['tid'] for t in aj['threads'] if t['crashing']]
g = [gdb_frames(t) for t in gj['threads'] if tid and t['lwp'] == tid[0]]
g = g[0] if g else []
why = None
for i in range(max(len(a), len(g))):
    if i >= len(a) or i >= len(g):
        why = 'asyncore has %d frames, gdb-multiarch %d' % (len(a), len(g))
    elif g[i].get('type') == 'SIGTRAMP':
        continue
    else:
        why = frame_diff(a[i], g[i])
    if why:
        why = 'frame %d: %s' % (i, why)
        break
print("PASS: %s: every frame but the trampoline is gdb-multiarch's (functions, lines, arguments)" % name
      if not why else 'FAIL: %s: differs from gdb-multiarch: %s' % (name, why))
PY
}

# chain JSON: what two builds or runs of one crash must agree on: the cause
# (kind, summary, handled_by), the signature, and the crashing thread's
# frames' functions and roles.
chain() {
	jget "$1" "json.dumps([j['cause'].get('kind'), j['cause'].get('summary'), j['cause'].get('handled_by'), j.get('signature'), [(f.get('function'), f.get('role', 'absent')) for t in j['threads'] if t['crashing'] for f in t['frames']]])"
}

declare -A ACTION=([nodefer]=re-raised [abort]=aborted [nested]=faulted)

fix_build handler_c_aarch64 nopie || exit 0
DIR=$FIX_DIR
if crash handler-aarch64-none "$DIR" none; then
	if gdb_sigframe "$DIR/prog" "$C" "$OUTS/none.gdb"; then
		check_eq "handler-aarch64-none: frame 0 is gdb-multiarch's (no signal frame there)" "charge None charge" \
			"$(jget "$OUTS/none.gdb" "j['frames'][0]['name'] + ' ' + str(j['trampoline'])") $(jget "$OUTS/handler-aarch64-none.json" "[f['function'] for t in j['threads'] if t['crashing'] for f in t['frames']][0]")"
	else
		fail "handler-aarch64-none: gdb-multiarch printed no frames"
	fi
	check_eq "handler-aarch64-none: null_dereference, handled_by null" "null_dereference None" \
		"$(jget "$OUTS/handler-aarch64-none.json" "str(j['cause'].get('kind')) + ' ' + str(j['cause'].get('handled_by', 'absent'))")"
	if gdb_multiarch_frames "$DIR/prog" "$C" "$OUTS/none.frames"; then
		oracle handler-aarch64-none "$OUTS/handler-aarch64-none.json" "$OUTS/none.frames"
	else
		fail "handler-aarch64-none: gdb-multiarch printed no frames (tests/gdb_frames.py)"
	fi
fi
for shape in nodefer abort nested; do
	n=handler-aarch64-$shape
	crash "$n" "$DIR" "$shape" || continue
	line=$(grep -m1 '^fatal signal ' "$LOG")
	if [ "$line" != "fatal signal 11 (Segmentation fault) code 1 at 0x8" ]; then
		fail "$n: the handler did not log 'fatal signal 11 (Segmentation fault) code 1 at 0x8': '$line'"
		continue
	fi
	g=$OUTS/$shape.gdb
	if ! gdb_sigframe "$DIR/prog" "$C" "$g"; then
		fail "$n: gdb-multiarch printed no frames"
		continue
	fi
	# The oracle itself: gdb-multiarch shows the trampoline between on_fatal
	# and charge, and the signal frame at its sp holds what the handler got.
	ora=$(jget "$g" "' '.join(map(str, [j['frames'][j['trampoline'] - 1]['name'], j['frames'][j['trampoline'] + 1]['name'], j['sigframe']['signo'], j['sigframe']['code'], hex(j['sigframe']['addr']), hex(j['sigframe']['pc']) == j['frames'][j['trampoline'] + 1]['pc']])) if j['trampoline'] else 'no <signal handler called> in ' + ' < '.join(str(f['name']) for f in j['frames'])")
	check_eq "$n: gdb-multiarch: on_fatal, <signal handler called>, charge; the signal frame's siginfo and pc" \
		"on_fatal charge 11 1 0x8 True" "$ora"
	# What the summary says of the access is the faulting instruction's:
	# aarch64 loads a->quota->used (ldr) before it stores the sum, so the
	# access that faults is a read (x86_64's add to memory faults as a write).
	site=$(jget "$g" "j['frames'][j['trampoline'] + 1]['pc']")
	acc=$(access "$DIR/prog" "$site")
	[ -n "$acc" ] || fail "$n: the instruction at the crash site $site is not a load or a store"
	python3 "$ROOT/tests/handler_compare.py" "$n" json="$OUTS/$n.json" text="$OUTS/$n.txt" gdb="$g" \
		base="$OUTS/handler-aarch64-none.json" kind=null_dereference action="${ACTION[$shape]}" \
		signal=SIGSEGV code=SEGV_MAPERR address=0x8 \
		prefix="${acc:-write} of a->quota->used at NULL + 0x8 in charge (main.c:"
	roles "$n" "$OUTS/$n.json"
	if gdb_multiarch_frames "$DIR/prog" "$C" "$OUTS/$shape.frames"; then
		oracle "$n" "$OUTS/$n.json" "$OUTS/$shape.frames"
	else
		fail "$n: gdb-multiarch printed no frames (tests/gdb_frames.py)"
	fi
done

# qemu's default CPU (SVE on: the signal frame holds SVE, TPIDR2 and ZA
# records) gives the same answer.
QEMU_OPTS=()
if [ -f "$OUTS/handler-aarch64-nodefer.json" ] && crash handler-aarch64-sve-nodefer "$DIR" nodefer; then
	check_eq "handler-aarch64-sve-nodefer: the same as without SVE" \
		"$(chain "$OUTS/handler-aarch64-nodefer.json")" "$(chain "$OUTS/handler-aarch64-sve-nodefer.json")"
fi

# The PIE build (qemu's default CPU): the non-PIE build's answer, its
# signature the one the same bug has there without the handler.
if fix_build handler_c_aarch64 pie; then
	PDIR=$FIX_DIR
	if crash handler-aarch64-pie-none "$PDIR" none && crash handler-aarch64-pie-nodefer "$PDIR" nodefer; then
		check_eq "handler-aarch64-pie-nodefer: the non-PIE build's cause, signature, functions and roles" \
			"$(chain "$OUTS/handler-aarch64-nodefer.json")" "$(chain "$OUTS/handler-aarch64-pie-nodefer.json")"
		check_eq "handler-aarch64-pie-nodefer: the signature without the handler" \
			"$(jget "$OUTS/handler-aarch64-pie-none.json" "j['signature']")" \
			"$(jget "$OUTS/handler-aarch64-pie-nodefer.json" "j['signature']")"
	fi
fi
