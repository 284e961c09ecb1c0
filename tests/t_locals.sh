#!/usr/bin/env bash
# --locals: each frame's local variables, with gdb's `bt full` as the oracle
# (tests/locals_compare.py) for every frame gdb shows: fixtures/native_locals
# at -O0 and -O2 (nested blocks in gdb's hashed order, static locals, a local
# enum, an inlined function with its own block, locals no location holds)
# and its C++ program (C++'s hash of names, references, lambdas, range-for),
# and the other native fixtures at -O2, C and C++ (every thread, --locals
# all).  Then: only the crashing thread without "all", the text and HTML
# reports, no "locals" member without the option, a bad value refused.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "locals: no asyncore at $ASYNCORE (run make)"; exit 0; }
command -v gdb >/dev/null || { skip "locals: no gdb"; exit 0; }

# gdb_full PROG CORE OUT: gdb's `thread apply all bt full` into OUT.
gdb_full() {
	LC_ALL=C gdb -batch -nx -iex 'set auto-load python-scripts off' -ex 'set width 0' \
		-ex 'set backtrace past-main on' -ex 'thread apply all bt full' "$1" "$2" \
		>"$3" 2>/dev/null
	grep -q '^#0 ' "$3"
}

# compare NAME CORE PROG MODE: asyncore --locals MODE against gdb.
compare() {
	local name=$1 core=$2 prog=$3 mode=$4 out=$TMPD/$1
	"$ASYNCORE" report "$core" "$prog" --locals "$mode" --format json >"$out.json" 2>"$out.err"
	if ! gdb_full "$prog" "$core" "$out.gdb"; then
		fail "$name: gdb gave no backtrace"; return 1
	fi
	if python3 "$ROOT/tests/locals_compare.py" "$out.gdb" "$out.json" \
		"$([ "$mode" = all ] && echo all)" >"$out.cmp" 2>&1; then
		pass "$name: $(tail -1 "$out.cmp")"
	else
		fail "$name: differs from gdb's bt full"
		head -30 "$out.cmp" | cut -c1-400 | sed 's/^/    /'
		return 1
	fi
}

for v in O0 O2; do
	if ! fix_core native_locals "$v"; then no_core "locals-$v" $?; continue; fi
	compare "locals-$v-all" "$FIX_CORE" "$FIX_DIR/prog" all
	compare "locals-$v-crashing" "$FIX_CORE" "$FIX_DIR/prog" crashing
	json=$TMPD/locals-$v-all.json
	# what the fixture exists for, present whatever gdb says
	want="DRAFT POSTED VOID Xcount _under alpha fee grade history label mid origin posted pr small st tag total__sum urgent zeta"
	[ "$v" = O0 ] && want="$want rate share"
	got=$(jget "$json" "' '.join(sorted(l['name'] for f in j['threads'][0]['frames'] if f.get('function') == 'post' for l in (f.get('locals') or [])))")
	check "locals-$v: post's nested block, static, enum, strings" \
		[ "$got" = "$(printf '%s\n' $want | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')" ]
	check "locals-$v: every native frame of the thread has locals, null without DWARF (_start)" \
		[ "$(jget "$json" "all('locals' in f for f in j['threads'][0]['frames'] if f['kind'] == 'native') and [f['locals'] for f in j['threads'][0]['frames'] if f.get('function') == '_start'] == [None]")" = True ]
	check "locals-$v: every local has a name, a type or none, a value" \
		[ "$(jget "$json" "all(isinstance(l['name'], str) and 'type' in l and isinstance(l['value'], str) for t in j['threads'] for f in t['frames'] for l in (f.get('locals') or []))")" = True ]
done

# C++: its own hash of names orders a nested block; references, lambdas, range-for
if fix_core native_locals cxx; then
	compare "locals-cxx-all" "$FIX_CORE" "$FIX_DIR/prog" all
	check "locals-cxx: the lambda's and the loop block's locals" \
		[ "$(jget "$TMPD/locals-cxx-all.json" "set(l['name'] for f in j['threads'][0]['frames'] for l in (f.get('locals') or [])) >= {'applied', 'Xcount', 'zeta', 'total__sum', 'charged', 'total', '__for_range'}")" = True ]
else
	no_core locals-cxx $?
fi

for fx in native_args native_o2 native_cxx native_tailcall threads4 store_cxx; do
	if ! fix_core "$fx"; then no_core "locals-$fx" $?; continue; fi
	compare "locals-$fx" "$FIX_CORE" "$FIX_DIR/prog" all
done

if fix_core native_locals O2; then
	"$ASYNCORE" report "$FIX_CORE" "$FIX_DIR/prog" --locals >"$TMPD/text" 2>&1
	if grep -Eq '^#[0-9]+ +0x[0-9a-f]+ in post ' "$TMPD/text" &&
	   awk '/ in post /{p=1; next} /^#/{p=0} p' "$TMPD/text" | grep -qx '        zeta = 151' &&
	   awk '/ in post /{p=1; next} /^#/{p=0} p' "$TMPD/text" | grep -qx '        tag = \.\.\.' &&
	   awk '/ in crash_here /{p=1; next} /^#/{p=0} p' "$TMPD/text" | grep -qx '        target = 0x0'; then
		pass "locals-text: '        name = value' lines under their frame"
	else
		fail "locals-text: no 'zeta = 151' under post, 'target = 0x0' under crash_here"
		grep -A4 ' in post ' "$TMPD/text" | head -8 | sed 's/^/    /'
	fi
	check "locals-text: other threads' frames without locals" \
		[ "$(awk '/^Thread [0-9]+:/{p=1} /^Thread [0-9]+ \(crashing/{p=0} p' "$TMPD/text" | grep -c '^        [a-z_]* = ')" = 0 ]
	"$ASYNCORE" report "$FIX_CORE" "$FIX_DIR/prog" --format=html --locals=all >"$TMPD/page.html" 2>&1
	check "locals-html: folded under the frames, each a row" python3 - "$TMPD/page.html" <<'PY'
import re, sys
page = open(sys.argv[1]).read()
folds = re.findall(r'<details class="locals"><summary>locals \((\d+)\)</summary><table class="locals">(.*?)</table></details>', page)
rows = [r for n, t in folds for r in re.findall(r'<tr><td class="n">([^<]*)</td>', t)]
sys.exit(0 if folds and sum(int(n) for n, _ in folds) == len(rows) and 'zeta' in rows and 'napped' in rows else 1)
PY
	"$ASYNCORE" report "$FIX_CORE" "$FIX_DIR/prog" --format json >"$TMPD/plain.json" 2>&1
	check "locals-off: no \"locals\" member without --locals" \
		[ "$(jget "$TMPD/plain.json" "any('locals' in f for t in j['threads'] for f in t['frames'])")" = False ]
	"$ASYNCORE" report "$FIX_CORE" "$FIX_DIR/prog" --locals=every >/dev/null 2>"$TMPD/bad.err"
	check "locals-option: --locals=every refused (exit 2, one line)" \
		[ $? -eq 2 -a "$(wc -l <"$TMPD/bad.err")" -eq 1 ]
fi
exit 0
