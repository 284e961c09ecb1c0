#!/usr/bin/env bash
# Functions GCC splits in hot and cold parts (NAME.cold, DW_AT_ranges whose
# lowest address is not the entry), C and C++ at -O2 and -O3: a crash in a
# cold part, in the hot part of a function reached by a tail call, a chain
# of tail calls through a split function, an exception thrown from a cold
# part.  gdb is the oracle (tests/hotcold_compare.py): asyncore's frames are
# gdb's on the same program built unsplit, and agree with gdb's on the
# split build but for gdb 13's own failures there, each printed and allowed
# only where gdb on the unsplit build shows what asyncore shows.  Then:
# a frame in a .cold part is named after its function, its offset is from
# the part's start, and the tail-call frames and @entry values are there.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "hotcold: no asyncore at $ASYNCORE (run make)"; exit 0; }
command -v gdb >/dev/null || { skip "hotcold: gdb not installed"; exit 0; }

# compare NAME CASE OPT HOW: the split and unsplit builds' cores of run HOW.
compare() {
	local name=$1 case=$2 opt=$3 how=$4 split unsplit json=$TMPD/$1.json
	fix_core "$case" "$opt-unsplit" "$how" || { no_core "$name" $?; return 1; }
	unsplit=$FIX_CORE
	gdb_frames "$FIX_DIR/prog" "$unsplit" "$TMPD/$name.unsplit" || { skip "$name: gdb printed no frames"; return 1; }
	fix_core "$case" "$opt" "$how" || { no_core "$name" $?; return 1; }
	split=$FIX_CORE
	if ! nm "$FIX_DIR/prog" | grep -q '\.cold$'; then
		fail "$name: the compiler split no function (no .cold symbol)"; return 1
	fi
	ASYNCORE_CACHE_DIR= asy_json "$json" "$split" "$FIX_DIR/prog"
	if [ "$ASY_RC" -gt 1 ] || [ "$ASY_JSON_OK" -ne 0 ]; then
		fail "$name: asyncore exited $ASY_RC: $(head -2 "$json.err")"; return 1
	fi
	gdb_frames "$FIX_DIR/prog" "$split" "$TMPD/$name.gdb" || { skip "$name: gdb printed no frames"; return 1; }
	if python3 "$ROOT/tests/hotcold_compare.py" "$json" "$TMPD/$name.gdb" "$TMPD/$name.unsplit" \
		"$name" >"$TMPD/$name.diff" 2>"$TMPD/$name.notes"; then
		pass "$name"
	else
		fail "$name: $(head -1 "$TMPD/$name.diff")"
		tail -n +2 "$TMPD/$name.diff" | head -10 | cut -c1-300 | sed 's/^/    /'
	fi
	sed 's/^/    /' "$TMPD/$name.notes"
	"$ASYNCORE" report "$split" "$FIX_DIR/prog" >"$TMPD/$name.txt" 2>/dev/null
}

# expect_report NAME PYEXPR...: each Python expression over the crashing
# thread's frames F (asyncore's JSON) and the binary's symbols SYMS (name ->
# address) is true.
expect_report() {
	local name=$1; shift
	if out=$(python3 - "$TMPD/${name%%:*}.json" "$FIX_DIR/prog" "$@" <<'PY'
import json, subprocess, sys
j = json.load(open(sys.argv[1]))
F = [f for t in j['threads'] if t.get('crashing') for f in t['frames']]
SYMS = {}
for line in subprocess.run(['nm', sys.argv[2]], capture_output=True, text=True).stdout.splitlines():
    p = line.split()
    if len(p) == 3:
        SYMS[p[2]] = int(p[0], 16)
def fn(name):
    return next((f for f in F if (f.get('function') or '').split('(')[0] == name), None)
def off(f):
    return int(f['offset'], 16) if f.get('offset') else None
def mod(f):
    return int(f['module_offset'], 16)
bad = [e for e in sys.argv[3:] if not eval(e)]
print('; '.join(bad))
sys.exit(1 if bad else 0)
PY
	); then pass "$name"; else fail "$name: not true: $out"; fi
}

for opt in O2 O3; do
	n=hotcold-c-$opt
	if compare "$n-cold" hotcold_c "$opt" cold; then
		# The abort's caller is in post_entry.cold: named post_entry, its
		# offset from the part's start; settle_batch restored, tag@entry.
		expect_report "$n-cold:names" \
			"fn('post_entry') and not fn('post_entry.cold')" \
			"mod(fn('post_entry')) - off(fn('post_entry')) == SYMS['post_entry.cold']" \
			"fn('settle_batch') and fn('settle_batch')['tailcall']" \
			"any(a['name'] == 'tag' and a.get('entry_value') for a in fn('post_entry')['args'])"
	fi
	if compare "$n-hot" hotcold_c "$opt" hot; then
		expect_report "$n-hot:entry" \
			"mod(fn('post_entry')) - off(fn('post_entry')) == SYMS['post_entry']" \
			"fn('settle_batch') and fn('settle_batch')['tailcall']" \
			"any(a['name'] == 'tag' and a.get('entry_value') for a in fn('post_entry')['args'])"
	fi
	if compare "$n-through" hotcold_c "$opt" through; then
		expect_report "$n-through:chain" "fn('route_entry') and fn('route_entry')['tailcall']"
	fi
	n=hotcold-cxx-$opt
	if compare "$n-cold" hotcold_cxx "$opt" cold; then
		expect_report "$n-cold:names" \
			"F[0]['function'] == 'ledger::Book::post(ledger::Entry*, char const*)'" \
			"mod(F[0]) - off(F[0]) == SYMS['_ZN6ledger4Book4postEPNS_5EntryEPKc.cold']" \
			"fn('ledger::Book::settle')['tailcall']"
	fi
	compare "$n-hot" hotcold_cxx "$opt" hot
	if compare "$n-throw" hotcold_cxx "$opt" throw; then
		expect_report "$n-throw:names" \
			"'[clone' not in fn('ledger::Book::post')['function']" \
			"fn('ledger::Book::settle')['tailcall']"
	fi
done
exit 0
