#!/usr/bin/env bash
# Damaged Go cores and binaries: a copy of a go_shop nil core with the Go
# runtime's structures patched (addresses from the undamaged core's report,
# tasks[].address the gs, and from `go tool nm`: runtime.allgs,
# runtime.allm; offsets are Go 1.19's: g.stack {lo 0, hi 8}, g._panic 32,
# g.sched {sp 56, pc 64}, m.alllink 336, _panic.link 24): allgs' array
# pointer garbage, allgs' length huge, one g's stack bounds swapped, one
# g's saved sp outside its stack, one g's saved pc in data, allm cyclic, the
# panicking goroutine's _panic chain cyclic; and copies of the binary whose
# .gopclntab is damaged (its magic, its function table, its pc-value
# tables, its function records).  Each: asyncore exits 0 or 1 within 60 s
# with a JSON report; the goroutines it can still read are listed as in the
# undamaged core (and none invented); where the damage is detectable a
# warning (or the damaged goroutine's unwind error) names it.  A few run
# again under AddressSanitizer (build/asan/asyncore, build-asan/asyncore) or
# else valgrind.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"
source "$ROOT/tests/go_lib.sh"

have_asyncore || { fail "go-bad: no asyncore at $ASYNCORE (run make)"; exit 0; }
go_deps go-bad

rc=0; fix_core go_shop "" nil || rc=$?
[ $rc -eq 1 ] && exit 0
[ $rc -ne 0 ] && { no_core go-bad $rc; exit 0; }
CORE=$FIX_CORE PROG=$FIX_DIR/prog
asy_json "$TMPD/base.json" "$CORE" "$PROG"
if [ "$ASY_JSON_OK" -ne 0 ] || [ "$(jget "$TMPD/base.json" 'len(j["tasks"]) > 10')" != True ]; then
	fail "go-bad: the undamaged core gives no goroutines (exit $ASY_RC)"
	exit 0
fi

# sym NAME: the address of the binary's symbol NAME.
sym() { go tool nm "$PROG" | awk -v n="$1" '$3 == n && !found { print "0x" $1; found = 1 }'; }
# peek ADDR: the 8-byte word at ADDR in the undamaged core.
peek() {
	python3 - "$CORE" "$1" <<'EOF'
import struct, sys
data = open(sys.argv[1], 'rb').read()
addr = int(sys.argv[2], 0)
phoff, = struct.unpack_from('<Q', data, 0x20)
phentsize, phnum = struct.unpack_from('<HH', data, 0x36)
for i in range(phnum):
    t, _f, off, va, _pa, filesz = struct.unpack_from('<IIQQQQ', data, phoff + i * phentsize)
    if t == 1 and va <= addr and addr + 8 <= va + filesz:
        print('0x%x' % struct.unpack_from('<Q', data, off + addr - va)[0])
        break
EOF
}
# task FUNCTION FIELD: FIELD (id, address) of the goroutine with a frame of
# FUNCTION in the undamaged report.
task() { jget "$TMPD/base.json" "[t['$2'] for t in j['tasks'] if any(f.get('function') == '$1' for f in t['frames'])][0]"; }
hex() { printf '0x%x' "$(($1))"; }

ALLGS=$(sym runtime.allgs) ALLM=$(sym runtime.allm)
if [ -z "$ALLGS" ] || [ -z "$ALLM" ]; then
	fail "go-bad: no runtime.allgs or runtime.allm in $PROG (go tool nm)"
	exit 0
fi
G1=$(task main.main address)
LOCKER=$(task main.locker address) LOCKER_ID=$(task main.locker id)
SENDER=$(task main.sender address) SENDER_ID=$(task main.sender id)
RECEIVER=$(task main.receiver address)
M0=$(peek "$ALLM") PANIC=$(peek "$(hex "$G1 + 32")")
LO=$(peek "$LOCKER") HI=$(peek "$(hex "$LOCKER + 8")") RHI=$(peek "$(hex "$RECEIVER + 8")")
for v in G1 LOCKER SENDER RECEIVER M0 PANIC LO HI RHI; do
	[ -n "${!v}" ] && [ "${!v}" != 0x0 ] || { fail "go-bad: no $v in the undamaged core"; exit 0; }
done

# judge NAME BASE OUT WANT WARN [DAMAGED_ID]: the checks on OUT's report
# against the undamaged BASE.
#   WANT  all        every goroutine listed, with the undamaged core's frames
#                    (but DAMAGED_ID's)
#         all-but    every goroutine but DAMAGED_ID, the same frames
#         ids        every goroutine listed (frames may differ: the binary's
#                    tables are damaged)
#         none       no goroutine to expect (their index is gone)
#   WARN  a regular expression a warning (or DAMAGED_ID's unwind error)
#         matches; empty when the damage cannot be told from good data
judge() {
	python3 - "$@" <<'EOF'
import json, re, sys
name, base, out, want, warn = sys.argv[1:6]
damaged = int(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[6] else None
b, j = json.load(open(base)), json.load(open(out))
go = lambda r: [t for t in r.get('tasks') or [] if t.get('runtime') == 'go']
fns = lambda t: [f.get('function') for f in t['frames']]
bt, jt = {t['id']: t for t in go(b)}, go(j)
ids = [t['id'] for t in jt]
def line(ok, what):
    print('%s: %s: %s' % ('PASS' if ok else 'FAIL', name, what))
invented = [i for i in ids if i not in bt]
dup = sorted({i for i in ids if ids.count(i) > 1})
line(not invented and not dup, 'no goroutine invented (%d listed%s%s)' % (
    len(ids), ', not in the core: %s' % invented[:8] if invented else '',
    ', listed twice or more: %s' % dup[:8] if dup else ''))
if want != 'none':
    expect = [i for i in bt if not (want == 'all-but' and i == damaged)]
    got = {t['id']: t for t in jt}
    missing = [i for i in expect if i not in got]
    differ = [i for i in expect if i in got and i != damaged and want != 'ids' and fns(got[i]) != fns(bt[i])]
    line(not missing and not differ, '%d of %d undamaged goroutines listed%s%s' % (
        len(expect) - len(missing), len(expect), ', missing %s' % missing[:8] if missing else '',
        ', frames differ: goroutine %s: %s' % (differ[0], ' < '.join(map(str, fns(got[differ[0]])[:6]))) if differ else
        (' with the same frames' if want != 'ids' else '')))
if warn:
    said = list(j.get('warnings') or [])
    said += ['goroutine %s: %s' % (t['id'], t['unwind_error']) for t in jt
             if t['id'] == damaged and t.get('unwind_error')]
    hit = [w for w in said if re.search(warn, w)]
    line(bool(hit), 'warned: %s' % hit[0][:200] if hit else
         'no warning matches /%s/ (warnings: %s)' % (warn, '; '.join(w[:100] for w in said[:3]) or 'none'))
EOF
}

# run NAME CORE PROG: asyncore's JSON report into $TMPD/NAME.json; one line:
# exit 0 or 1 within 60 s, never a signal, and JSON.
run() {
	local name=$1 core=$2 prog=$3 out=$TMPD/$1.json
	timeout 60 "$ASYNCORE" report "$core" "$prog" --format json --threads all >"$out" 2>"$out.err"
	local rc=$?
	if [ $rc -eq 124 ]; then
		fail "$name: no result within 60 s"; return 1
	elif [ $rc -gt 128 ]; then
		fail "$name: killed by signal $((rc - 128)): $(tail -2 "$out.err" | tr '\n' ' ')"; return 1
	elif [ $rc -gt 1 ] || ! json_ok "$out"; then
		fail "$name: exit $rc without JSON: $(tail -2 "$out.err" | tr '\n' ' ')"; return 1
	fi
	pass "$name: exit $rc with a JSON report"
}

# damage NAME WANT WARN DAMAGED_ID POKE...: the core with corrupt_core.py's
# pokes (VADDR=VALUE[:SIZE]).
damage() {
	local name=go-bad/$1 want=$2 warn=$3 id=$4; shift 4
	if ! python3 "$ROOT/tests/corrupt_core.py" "$CORE" "$TMPD/$1.core" poke "$@"; then
		fail "$name: cannot write the core"; return
	fi
	run "$name" "$TMPD/$1.core" "$PROG" || return
	judge "$name" "$TMPD/base.json" "$TMPD/$name.json" "$want" "$warn" "$id"
	rm -f "$TMPD/$1.core"
}
mkdir -p "$TMPD/go-bad"

damage allgs-array none "runtime\.allgs.*0x4141414141414140" "" "$ALLGS=0x4141414141414140"
damage allgs-huge all "runtime\.allgs holds 140737488355327" "" \
	"$(hex "$ALLGS + 8")=0x7fffffffffff" "$(hex "$ALLGS + 16")=0x7fffffffffff"
damage stack-swapped all-but "$LOCKER" "$LOCKER_ID" "$LOCKER=$HI" "$(hex "$LOCKER + 8")=$LO"
# The sender's saved sp in the receiver's stack; its saved pc in data.
damage sched-sp all "outside its stack|$SENDER|goroutine $SENDER_ID\b" "$SENDER_ID" \
	"$(hex "$SENDER + 56")=$(hex "$RHI - 0x100")"
damage sched-pc all "$ALLGS|$SENDER|goroutine $SENDER_ID\b" "$SENDER_ID" "$(hex "$SENDER + 64")=$ALLGS"
damage allm-cycle all "allm|cycl" "" "$(hex "$M0 + 336")=$M0"
damage panic-cycle all "_panic|panic chain|panics|cycl" "" "$(hex "$PANIC + 24")=$PANIC"
# The cause still read from the first panic of the chain.
if [ -f "$TMPD/go-bad/panic-cycle.json" ]; then
	want=$(jget "$TMPD/base.json" 'j["cause"]["kind"] + ": " + j["cause"]["summary"]')
	got=$(jget "$TMPD/go-bad/panic-cycle.json" 'j["cause"]["kind"] + ": " + j["cause"]["summary"]')
	if [ -n "$want" ] && [ "$got" = "$want" ]; then
		pass "go-bad/panic-cycle: the cause as in the undamaged core"
	else
		fail "go-bad/panic-cycle: cause '$got', undamaged '$want'"
	fi
fi

# ---- a damaged .gopclntab (a copy of the binary) ----
# pclntab NAME BINARY OUT MODE SEED: BINARY's copy at OUT with its
# .gopclntab damaged: magic (zeroed), functab (bits flipped in the sorted
# function table), pctab (in the pc-value tables), funcs (in the function
# records after the table).  Go 1.18's header: magic, pad, minLC, ptrSize,
# then nfunc, nfiles, textStart, funcnameOffset, cuOffset, filetabOffset,
# pctabOffset, pclnOffset (8 bytes each).
pclntab() {
	python3 - "$@" <<'EOF'
import random, struct, subprocess, sys
src, out, mode, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
data = bytearray(open(src, 'rb').read())
sec = subprocess.run(['readelf', '-SW', src], capture_output=True, text=True).stdout
f = [l for l in sec.splitlines() if ' .gopclntab ' in l][0].split(']', 1)[1].split()
off, size = int(f[3], 16), int(f[4], 16)
nfunc, _nfiles, _text, names, cu, filetab, pctab, pcln = struct.unpack_from('<8Q', data, off + 8)
rnd = random.Random(seed)
if mode == 'magic':
    data[off:off + 4] = bytes(4)
else:
    lo, hi = {'functab': (pcln, pcln + (nfunc + 1) * 8), 'pctab': (pctab, pcln),
              'funcs': (pcln + (nfunc + 1) * 8, size)}[mode]
    for _ in range(512):
        data[off + rnd.randrange(lo, hi)] ^= 1 << rnd.randrange(8)
open(out, 'wb').write(data)
EOF
	chmod +x "$2"
}
rc=0; fix_core go_shop stripped nil || rc=$?
if [ $rc -eq 0 ]; then
	SCORE=$FIX_CORE SPROG=$FIX_DIR/prog
	asy_json "$TMPD/sbase.json" "$SCORE" "$SPROG"
	bad_table() {
		local name=go-bad/$1 core=$2 prog=$3 base=$4 mode=$5 want=$6 warn=$7
		mkdir -p "$TMPD/bin-$1"
		pclntab "$prog" "$TMPD/bin-$1/prog" "$mode" 1 || { fail "$name: cannot write the binary"; return; }
		run "$name" "$core" "$TMPD/bin-$1/prog" || return
		judge "$name" "$base" "$TMPD/$name.json" "$want" "$warn"
	}
	bad_table pclntab-magic "$SCORE" "$SPROG" "$TMPD/sbase.json" magic none "pclntab"
	bad_table pclntab-functab "$CORE" "$PROG" "$TMPD/base.json" functab none "pclntab"
	bad_table pclntab-pctab "$SCORE" "$SPROG" "$TMPD/sbase.json" pctab ids ""
	bad_table pclntab-funcs "$SCORE" "$SPROG" "$TMPD/sbase.json" funcs ids ""
else
	[ $rc -eq 77 ] && skip "go-bad/pclntab: $(head -1 "$TMPD/core.err")"
fi

# ---- the same under AddressSanitizer (or valgrind) ----
SAN_BIN=""
for b in "$ROOT/build/asan/asyncore" "$ROOT/build-asan/asyncore"; do
	[ -x "$b" ] && ldd "$b" 2>/dev/null | grep -q libasan && { SAN_BIN=$b; break; }
done
san_run() {
	local name=$1 core=$2 prog=$3 out=$TMPD/san.out rc
	if [ -n "$SAN_BIN" ]; then
		ASAN_OPTIONS=detect_leaks=1 timeout 600 "$SAN_BIN" report "$core" "$prog" --format json --threads all \
			>"$out" 2>"$out.err"
		rc=$?
		local tool="AddressSanitizer (${SAN_BIN#"$ROOT"/})"
	else
		timeout 600 valgrind -q --error-exitcode=99 "$ASYNCORE" report "$core" "$prog" --format json --threads all \
			>"$out" 2>"$out.err"
		rc=$?
		local tool=valgrind
	fi
	if [ $rc -le 1 ] && json_ok "$out" &&
	   ! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:|Invalid (read|write)|uninitialised' "$out.err"; then
		pass "$name: under $tool: exit $rc, clean"
	else
		fail "$name: under $tool: exit $rc: $(grep -m2 -E 'ERROR|runtime error|Invalid|uninit|.' "$out.err" | tr '\n' ' ' | cut -c1-300)"
	fi
}
if [ -z "$SAN_BIN" ] && ! test_dep valgrind valgrind "$TMPD/apt-valgrind.log"; then
	skip "go-bad/sanitizer: no ASan build (make asan) and valgrind cannot be installed"
else
	python3 "$ROOT/tests/corrupt_core.py" "$CORE" "$TMPD/huge.core" poke \
		"$(hex "$ALLGS + 8")=0x7fffffffffff" "$(hex "$ALLGS + 16")=0x7fffffffffff" &&
		san_run go-bad/allgs-huge "$TMPD/huge.core" "$PROG"
	python3 "$ROOT/tests/corrupt_core.py" "$CORE" "$TMPD/sp.core" poke \
		"$(hex "$SENDER + 56")=$(hex "$RHI - 0x100")" "$(hex "$M0 + 336")=$M0" &&
		san_run go-bad/sched-sp+allm-cycle "$TMPD/sp.core" "$PROG"
	if [ -x "$TMPD/bin-pclntab-pctab/prog" ]; then
		san_run go-bad/pclntab-pctab "$SCORE" "$TMPD/bin-pclntab-pctab/prog"
	fi
fi
exit 0
