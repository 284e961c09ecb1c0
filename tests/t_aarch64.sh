#!/usr/bin/env bash
# aarch64 cores analysed on this host: the kernel cores of elfutils' test
# suite (fixtures/aarch64, see its README.md) against their expectations:
# CFI through libdwfl's aarch64 backend, frame records where a function has
# no CFI, the registers by their aarch64 names, core.arch.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "aarch64: no asyncore at $ASYNCORE (run make)"; exit 0; }
FIX=$ROOT/fixtures/aarch64
if ! test_dep bzip2 bzip2 "$TMPD/apt.log"; then
	skip "aarch64: bzip2 could not be installed: $(tail -1 "$TMPD/apt.log")"
	exit 0
fi

# kernel_core NAME: decompress backtrace.NAME.{core,exec} into $TMPD.
kernel_core() {
	bzip2 -dc "$FIX/backtrace.$1.core.bz2" >"$TMPD/$1.core" &&
		bzip2 -dc "$FIX/backtrace.$1.exec.bz2" >"$TMPD/$1.exec"
}

for v in aarch64 aarch64.fp; do
	name=${v/aarch64/backtrace}
	if ! kernel_core "$v"; then
		fail "aarch64 $v: cannot decompress the fixture"
		continue
	fi
	j=$TMPD/$v.json
	asy_json "$j" "$TMPD/$v.core" "$TMPD/$v.exec" --frame-registers
	if [ "$ASY_JSON_OK" -ne 0 ]; then
		fail "aarch64 $v: no JSON (exit $ASY_RC): $(head -3 "$j.err")"
		continue
	fi
	check "aarch64 $v: exit 0 (no warning)" test "$ASY_RC" -eq 0
	python3 "$ROOT/tests/arch_stacks.py" "$j" >"$TMPD/$v.stacks"
	expect_lines "aarch64 $v: every thread's frames" "$FIX/expect/$name.stacks" "$TMPD/$v.stacks"
	# elfutils' own checks (backtrace-subr.sh check_core).
	check "aarch64 $v: a thread shows main" grep -qw main "$TMPD/$v.stacks"
	check "aarch64 $v: a thread shows backtracegen" grep -qw backtracegen "$TMPD/$v.stacks"
	check "aarch64 $v: no thread shows gsignal" bash -c "! grep -qw gsignal '$TMPD/$v.stacks'"
	check_eq() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: expected '$2', got '$3'"; fi; }
	check_eq "aarch64 $v: core.arch" aarch64 "$(jget "$j" "j['core']['arch']")"
	check_eq "aarch64 $v: thread registers by aarch64 names" \
		"x0 x29 x30 sp pc pstate tpidr_el0 35" \
		"$(jget "$j" "' '.join(k for k in j['threads'][0]['registers'] if k in ('x0','x29','x30','sp','pc','pstate','tpidr_el0')) + ' ' + str(len(j['threads'][0]['registers']))")"
	check_eq "aarch64 $v: frame registers by DWARF name (x19..x30, sp in callers)" True \
		"$(jget "$j" "all(set(f['registers']) <= {'x%d' % i for i in range(19, 31)} | {'sp'} and 'sp' in f['registers'] for f in j['threads'][0]['frames'][1:])")"
	check_eq "aarch64 $v: pc and the frames' own pcs agree" True \
		"$(jget "$j" "int(j['threads'][0]['registers']['pc'], 16) == int(j['threads'][0]['frames'][0]['pc'], 16)")"
	# Without the executable: no CFI, no symbols, no code (the kernel did
	# not save the text), only the stack: frame records and the link
	# register give the same frames.
	"$ASYNCORE" report "$TMPD/$v.core" --format json >"$TMPD/$v-alone.json" 2>/dev/null
	pcs="[[f['pc'] for f in t['frames']] for t in j['threads']]"
	check_eq "aarch64 $v: without the executable, the same pcs from frame records and x30" \
		"$(jget "$j" "$pcs")" "$(jget "$TMPD/$v-alone.json" "$pcs")"
	"$ASYNCORE" report "$TMPD/$v.core" "$TMPD/$v.exec" >"$TMPD/$v.txt" 2>&1
	check "aarch64 $v: text names pc, sp, x29, tpidr_el0" \
		grep -qE '^  pc 0x[0-9a-f]+  sp 0x[0-9a-f]+  x29 0x[0-9a-f]+  tpidr_el0 0x[0-9a-f]+$' "$TMPD/$v.txt"
done

# The same program with and without CFI crashed the same way: one bucket.
s1=$(jget "$TMPD/aarch64.json" "j['signature']"); s2=$(jget "$TMPD/aarch64.fp.json" "j['signature']")
if [ -n "$s1" ] && [ "$s1" = "$s2" ]; then pass "aarch64: CFI and frame-record builds share a signature ($s1)"
else fail "aarch64: signatures differ: '$s1' and '$s2'"; fi

# Hostile: an ELF machine field that lies.  set_machine CORE MACHINE OUT.
set_machine() {
	python3 - "$@" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
data[18:20] = struct.pack('<H', int(sys.argv[2]))
open(sys.argv[3], 'wb').write(data)
PY
}
if [ -f "$TMPD/aarch64.core" ] && set_machine "$TMPD/aarch64.core" 62 "$TMPD/lie64.core"; then
	asy_json "$TMPD/lie64.json" "$TMPD/lie64.core"
	if [ "$ASY_RC" -le 1 ] && [ "$ASY_JSON_OK" -eq 0 ] &&
		jget "$TMPD/lie64.json" "j['core']['arch']" | grep -qx x86_64 &&
		jget "$TMPD/lie64.json" "'\n'.join(j['warnings'])" | grep -q "NT_PRSTATUS note of 392 bytes where x86_64's has 336"; then
		pass "aarch64: a core calling itself x86_64 is read as x86_64 with a warning on its prstatus"
	else
		fail "aarch64: core calling itself x86_64: exit $ASY_RC, $(head -2 "$TMPD/lie64.json.err")"
	fi
fi
if fix_core threads4 && set_machine "$FIX_CORE" 183 "$TMPD/lie86.core"; then
	"$ASYNCORE" report "$TMPD/lie86.core" >"$TMPD/lie86.out" 2>&1; rc=$?
	if [ $rc -eq 2 ] && grep -q "no NT_PRSTATUS note fits aarch64's layout (one has 336 bytes" "$TMPD/lie86.out"; then
		pass "aarch64: an x86_64 core calling itself aarch64 is refused, saying why (exit 2)"
	else
		fail "aarch64: x86_64 core calling itself aarch64: exit $rc: $(head -2 "$TMPD/lie86.out")"
	fi
	set_machine "$FIX_CORE" 40 "$TMPD/arm32.core"
	"$ASYNCORE" report "$TMPD/arm32.core" >"$TMPD/arm32.out" 2>&1; rc=$?
	if [ $rc -eq 2 ] && grep -q "neither x86_64 nor aarch64 (machine 40" "$TMPD/arm32.out"; then
		pass "aarch64: a core of another machine is refused (exit 2)"
	else
		fail "aarch64: machine 40: exit $rc: $(head -2 "$TMPD/arm32.out")"
	fi
fi

check_arch() { if [ "$2" = "$3" ]; then pass "$1 ($2)"; else fail "$1: got '$2', want '$3'"; fi; }

# ingest keeps aarch64 cores beside x86_64 ones, each with its own frames.
if [ -f "$TMPD/aarch64.core" ] && [ -f "$TMPD/aarch64.fp.core" ] && fix_core threads4; then
	db=$TMPD/mixed.db
	"$ASYNCORE" ingest --db "$db" --quiet --jobs 2 "$TMPD/aarch64.core" "$TMPD/aarch64.fp.core" "$FIX_CORE" \
		>"$TMPD/ingest.out" 2>&1; rc=$?
	got=$("$ASYNCORE" query --db "$db" --format csv \
		"SELECT c.nthreads || '/' || t.rip FROM cores c JOIN threads t ON t.core_id = c.id AND t.crashing = 1 ORDER BY c.path" 2>&1 | tail -n +2 | sort | tr '\n' ' ')
	want=""
	for c in "$TMPD/aarch64.core" "$TMPD/aarch64.fp.core"; do
		"$ASYNCORE" report "$c" --format json >"$TMPD/ing.json" 2>/dev/null
		want+="$(jget "$TMPD/ing.json" "str(len(j['threads'])) + '/' + str(int(j['threads'][0]['registers']['pc'], 16))") "
	done
	"$ASYNCORE" report "$FIX_CORE" --format json >"$TMPD/ing.json" 2>/dev/null
	want+="$(jget "$TMPD/ing.json" "str(len(j['threads'])) + '/' + str(int([t for t in j['threads'] if t['crashing']][0]['registers']['rip'], 16))") "
	want=$(tr ' ' '\n' <<<"$want" | grep . | sort | tr '\n' ' ')
	if [ $rc -eq 0 ] && [ "$got" = "$want" ]; then
		pass "aarch64: ingest stores aarch64 and x86_64 cores side by side (threads/pc: $got)"
	else
		fail "aarch64: ingest (exit $rc): got '$got', want '$want': $(head -2 "$TMPD/ingest.out")"
	fi
	# cores.arch is each report's core.arch; query groups by it.
	got=$("$ASYNCORE" query --db "$db" --format csv \
		"SELECT arch, count(*) FROM cores GROUP BY arch ORDER BY arch" 2>&1 | tail -n +2 | tr '\n' ' ')
	check_arch "aarch64: cores.arch groups the stored cores" "$got" "aarch64,2 x86_64,1 "
	# The bucket page names each bucket's architectures, as the store has them.
	"$ASYNCORE" top --db "$db" --format json >"$TMPD/top.json" 2>/dev/null
	"$ASYNCORE" top --db "$db" --format html >"$TMPD/top.html" 2>/dev/null
	"$ASYNCORE" query --db "$db" --format csv \
		"SELECT coalesce(signature_hash, ''), arch, count(*) FROM cores GROUP BY 1, 2" |
		python3 "$ROOT/tests/bucket_arches.py" >"$TMPD/arches.json"
	python3 "$ROOT/tests/html_dom.py" top "$TMPD/top.html" "$TMPD/top.json" "$TMPD/arches.json" |
		grep -E "^(PASS|FAIL): top: bucket .* architectures" | sed 's/^\(PASS\|FAIL\): /&aarch64: /'
	check_arch "aarch64: the bucket page shows aarch64 buckets" \
		"$(grep -c '<dd class="arch">aarch64 (1)</dd>' "$TMPD/top.html")" 2
fi

# resign: an aarch64 core stored without its executable is named once its
# debug info turns up (a .build-id tree), as the report with it names it.
if [ -f "$TMPD/aarch64.core" ] && [ -f "$TMPD/aarch64.exec" ]; then
	db=$TMPD/resign.db id=0f14ea767c369cb3e3cff7a4f05d8de3b5a4aeb7
	mkdir -p "$TMPD/dbg/.build-id/${id:0:2}" && cp "$TMPD/aarch64.exec" "$TMPD/dbg/.build-id/${id:0:2}/${id:2}.debug"
	"$ASYNCORE" ingest --db "$db" --quiet "$TMPD/aarch64.core" >/dev/null 2>&1
	before=$("$ASYNCORE" query --db "$db" --format csv "SELECT signature FROM cores" 2>/dev/null | tail -1)
	"$ASYNCORE" resign --db "$db" --debug-dir "$TMPD/dbg" >"$TMPD/resign.out" 2>&1; rc=$?
	after=$("$ASYNCORE" query --db "$db" --format csv "SELECT signature FROM cores" 2>/dev/null | tail -1)
	want=$(jget "$TMPD/aarch64.json" "j['signature']")
	if [ $rc -eq 0 ] && [ "$after" = "$want" ] && [ "$before" != "$want" ]; then
		pass "aarch64: resign names a stored aarch64 core's frames from its debug info ($after)"
	else
		fail "aarch64: resign (exit $rc): before '$before', after '$after', report '$want'"
	fi
	check_arch "aarch64: resign keeps cores.arch" \
		"$("$ASYNCORE" query --db "$db" --format csv "SELECT arch FROM cores" 2>/dev/null | tail -1)" aarch64
fi
