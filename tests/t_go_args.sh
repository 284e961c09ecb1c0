#!/usr/bin/env bash
# Go frames' arguments against gdb's: fixtures/go_shop (Go 1.19's DWARF:
# its own units have no .debug_aranges entry, cgo's C units do) crashed by a
# nil pointer with GOTRACEBACK=crash.  Each frame of every thread and of
# goroutine 1 (the crashing goroutine, on the crashing thread) that gdb's
# `thread apply all bt` shows at the same pc with the same function has the
# arguments gdb prints (`set print frame-arguments scalars`; Go's register
# ABI makes many <optimized out>); a frame gdb gives arguments has some;
# main.applyDiscount and main.checkout are among those compared.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"
source "$ROOT/tests/go_lib.sh"

have_asyncore || { fail "go-args: no asyncore at $ASYNCORE (run make)"; exit 0; }
go_deps go-args
command -v gdb >/dev/null || { skip "go-args: no gdb"; exit 0; }

rc=0
fix_core go_shop "" nil || rc=$?
[ $rc -eq 1 ] && exit 0
[ $rc -ne 0 ] && { no_core go-args $rc; exit 0; }
json=$TMPD/go_args.json
asy_json "$json" "$FIX_CORE" "$FIX_DIR/prog"
if [ "$ASY_JSON_OK" -ne 0 ]; then fail "go-args: not valid JSON: $(head -2 "$json.err")"; exit 0; fi
if ! gdb_frames "$FIX_DIR/prog" "$FIX_CORE" "$TMPD/gdb.json"; then
	fail "go-args: no frames from gdb"; exit 0
fi

python3 - "$json" "$TMPD/gdb.json" "$ROOT/tests" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[3])
from oracle_compare import render_args, args_diff
asy, gdb = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
by_lwp = {t['lwp']: t['frames'] for t in gdb['threads']}

def stacks():
    for t in asy['threads']:
        yield 'thread %d' % t['tid'], t['tid'], t['frames']
    for k in asy.get('tasks') or []:
        if k.get('runtime') == 'go' and k.get('id') == 1:
            yield 'goroutine 1', k.get('tid'), k['frames']

for label, tid, frames in stacks():
    theirs = by_lwp.get(tid)
    if theirs is None:
        print('FAIL: go-args/%s: gdb has no thread %s' % (label, tid))
        continue
    compared, diffs, seen, at = 0, [], set(), 0
    for f in frames:
        if f.get('kind') != 'native':
            continue
        # gdb's frame with this pc and function, after the last one matched
        # (gdb's walk of a Go stack may wander off past a stack switch).
        m = next((i for i in range(at, len(theirs))
                  if theirs[i]['pc'] == f['pc'] and theirs[i]['name'] == f['function']), None)
        if m is None:
            continue
        at = m + 1
        g = theirs[m]
        if g.get('args') is None:
            continue
        compared += 1
        seen.add(f['function'])
        if f.get('args') is None and g['args'] != '':
            diffs.append('#%d %s: no args, gdb (%s)' % (f['index'], f['function'], g['args']))
            continue
        d = args_diff(f, g)
        if d:
            diffs.append('#%d %s' % (f['index'], d))
    if label == 'goroutine 1':
        for want in ('main.applyDiscount', 'main.checkout'):
            if want not in seen:
                diffs.append('%s not among the frames compared' % want)
    with_args = [g for g in theirs if g.get('args') is not None]
    if not compared and not with_args and label != 'goroutine 1':
        # a thread caught in the runtime's assembly (the signal the crash
        # sent every thread, a clone) has no frame gdb gives arguments
        print('PASS: go-args/%s: no frame with arguments in gdb either (%s)'
              % (label, ' < '.join(g['name'] or '??' for g in theirs[:4])))
        continue
    if not compared:
        diffs.append('no frame at the same pc as gdb (gdb: %s)'
                     % ' < '.join('%s@%s' % (g['name'], g['pc']) for g in theirs[:6]))
    if diffs:
        print('FAIL: go-args/%s: %d of %d frames differ from gdb' % (label, len(diffs), compared))
        for d in diffs[:12]:
            print('    ' + d[:300])
    else:
        print('PASS: go-args/%s: %d frames as gdb prints them' % (label, compared))
PY
exit 0
