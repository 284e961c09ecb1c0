#!/usr/bin/env python3
"""Compare asyncore's --locals with gdb's `bt full` (the oracle).

usage: locals_compare.py GDB_OUTPUT ASYNCORE_JSON [all]

GDB_OUTPUT is `thread apply all bt full` (or `bt full` of the crashing
thread) run with `set width 0` and `set backtrace past-main on`.  For every
thread asyncore gave locals to (the crashing one; with "all", every one),
each frame gdb printed is matched by index with asyncore's frame: the
function names must agree, and the locals must be gdb's, in gdb's order,
with gdb's values, except that a struct, union or array, or a reference to
one (gdb prints it in full, "{...}" or a char array's string), is "..." in
asyncore's, as frame arguments are with `set print frame-arguments scalars`.  "No locals." is an
empty list; "No symbol table info available." is no list.
Prints one line per difference and a summary; exit 1 on any difference."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle_compare import norm, same  # noqa: E402  (aliases, clones, lambdas)

FRAME = re.compile(r'^#(\d+)\s+(?:0x[0-9a-f]+ in )?(.+?) \(')
THREAD = re.compile(r'^Thread \d+ .*\(LWP (\d+)\)')
LOCAL = re.compile(r'^        (\S+) = (.*)$')


def gdb_threads(path, crashing_tid):
    """{tid: [(function, locals or None)]} from gdb's output."""
    threads, frames, tid = {}, None, crashing_tid
    for line in open(path, errors='replace'):
        line = line.rstrip('\n')
        m = THREAD.match(line)
        if m:
            tid = int(m.group(1))
            frames = threads[tid] = []
            continue
        m = FRAME.match(line)
        if m:
            if frames is None:
                frames = threads.setdefault(tid, [])
            frames.append([m.group(2), []])
            continue
        if not frames:
            continue
        if line.strip() == 'No symbol table info available.':
            frames[-1][1] = None
            continue
        m = LOCAL.match(line)
        if m and frames[-1][1] is not None:
            frames[-1][1].append((m.group(1), m.group(2)))
    return threads


def expected(value):
    """What asyncore shows for gdb's VALUE of a local."""
    if re.match(r'(@0x[0-9a-f]+: )?[{"]', value):    # (a reference to) an aggregate
        return '...'
    return value


def base(name):
    return norm(name or '??')


def main():
    gdb_path, json_path = sys.argv[1], sys.argv[2]
    want_all = len(sys.argv) > 3 and sys.argv[3] == 'all'
    report = json.load(open(json_path))
    crashing = report['crashing_tid']
    gdb = gdb_threads(gdb_path, crashing)
    problems, frames_seen, locals_seen, threads_seen = [], 0, 0, 0
    for t in report['threads']:
        has = any('locals' in f for f in t['frames'])
        if t['tid'] != crashing and not want_all:
            if has:
                problems.append('thread %d: locals without --locals all' % t['tid'])
            continue
        if t['tid'] not in gdb:
            problems.append('thread %d: not in gdb\'s output' % t['tid'])
            continue
        threads_seen += 1
        ours = [f for f in t['frames'] if f['kind'] == 'native']
        for i, (fn, theirs) in enumerate(gdb[t['tid']]):
            where = 'thread %d #%d %s' % (t['tid'], i, fn)
            if i >= len(ours):
                problems.append('%s: asyncore has no frame %d' % (where, i))
                break
            f = ours[i]
            if not same(base(f.get('function')), base(fn)):
                problems.append('%s: asyncore\'s frame is %s' % (where, f.get('function')))
                break
            frames_seen += 1
            mine = f.get('locals')
            if theirs is None:
                if mine is not None:
                    problems.append('%s: gdb has no symbols, asyncore has locals' % where)
                continue
            if mine is None:
                problems.append('%s: gdb lists locals, asyncore none' % where)
                continue
            got = [(v['name'], v['value']) for v in mine]
            want = [(n, expected(v)) for n, v in theirs]
            locals_seen += len(want)
            if got != want:
                problems.append('%s:\n      gdb      %s\n      asyncore %s' % (where, want, got))
    for p in problems:
        print('  ' + p)
    print('compared %d threads, %d frames, %d locals; %d differences' %
          (threads_seen, frames_seen, locals_seen, len(problems)))
    sys.exit(1 if problems or not locals_seen else 0)


main()
