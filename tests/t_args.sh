#!/usr/bin/env bash
# Frame arguments (fixtures/native_args, -O2): each listed function's
# arguments as gdb's backtrace prints them (fixtures/native_args/args, lines
# "function|args" with addresses as 0xADDR, "null" for a frame without
# DWARF); the text report's frame line; --no-args.  gdb itself is the
# oracle for every frame of every core in t_oracle.sh.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "args: no asyncore at $ASYNCORE (run make)"; exit 0; }
if ! fix_core native_args; then no_core args $?; exit 0; fi
json=$TMPD/args.json
asy_json "$json" "$FIX_CORE" "$FIX_DIR/prog"
if [ "$ASY_JSON_OK" -ne 0 ]; then fail "args-json: not valid JSON: $(head -2 "$json.err")"; exit 0; fi

python3 - "$json" "$ROOT/tests" >"$TMPD/args.got" <<'PY'
import json, re, sys
sys.path.insert(0, sys.argv[2])
from oracle_compare import render_args
want = {'fail_at', 'check_limit', 'classify', 'apply_fee', 'relay', '_start', 'park', 'parker'}
for t in json.load(open(sys.argv[1]))['threads']:
    for f in t['frames']:
        name = re.sub(r'\(.*', '', f.get('function') or '??')
        if name in want:
            a = f.get('args')
            shown = 'null' if a is None else re.sub(r'0x[0-9a-f]{5,}', '0xADDR', render_args(a))
            print('%s|%s' % (name, shown))
PY
expect_lines args-values "$ROOT/fixtures/native_args/args" "$TMPD/args.got"

# Every argument has a name, a type and a value; async-less native frames
# without DWARF have null.
bad=$(jget "$json" "[f['function'] for t in j['threads'] for f in t['frames'] if f['args'] is not None and any(not a['name'] or a['value'] is None or 'type' not in a for a in f['args'])]")
check args-fields [ "$bad" = "[]" ]

"$ASYNCORE" report "$FIX_CORE" "$FIX_DIR/prog" >"$TMPD/text" 2>&1
if grep -Eq '^#[0-9]+ +0x[0-9a-f]+ in apply_fee \(memo=0x[0-9a-f]+ "late fee", cents=250, acct=0x[0-9a-f]+ <global_acct>\) \(\+0x[0-9a-f]+\) at ([^ ]*/)?main\.c:[0-9]+ ' "$TMPD/text"; then
	pass args-text
else
	fail "args-text: no '#N 0x... in apply_fee (memo=0x... \"late fee\", cents=250, acct=0x... <global_acct>) (+0x..) at main.c:N' line"
	grep -m2 apply_fee "$TMPD/text" | sed 's/^/    /'
fi
"$ASYNCORE" report "$FIX_CORE" "$FIX_DIR/prog" --no-args >"$TMPD/noargs" 2>&1
"$ASYNCORE" report "$FIX_CORE" "$FIX_DIR/prog" --no-args --format=json >"$TMPD/noargs.json" 2>&1
if grep -Eq '^#[0-9]+ +0x[0-9a-f]+ in apply_fee \(\+0x' "$TMPD/noargs" &&
   [ "$(jget "$TMPD/noargs.json" "all(f['args'] is None for t in j['threads'] for f in t['frames'])")" = True ]; then
	pass args-off
else
	fail "args-off: --no-args still shows arguments"
fi
exit 0
