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
Prints one line per difference and a summary; exit 1 on any difference.
tests/gdb_frames.py reads `bt full` with read_line, tests/bthread_compare.py
compares a frame's locals with locals_diff: the same rules."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle_compare import norm, same  # noqa: E402  (aliases, clones, lambdas)

FRAME = re.compile(r'^#(\d+)\s+(?:0x[0-9a-f]+ in )?(.+?) \(')
THREAD = re.compile(r'^Thread \d+ .*\(LWP (\d+)\)')
LOCAL = re.compile(r'^        (\S+) = (.*)$')


def read_line(frames, line):
    """Fold one line of gdb's `bt full` into FRAMES ([function, locals] in
    frame-level order): a frame's line opens its entry and its locals
    ((name, value)) follow it; "No symbol table info available." makes them
    None.  False for a line that is neither."""
    m = FRAME.match(line)
    if m:
        frames.append([m.group(2), []])
        return True
    if not frames:
        return False
    if line.strip() == 'No symbol table info available.':
        frames[-1][1] = None
        return True
    m = LOCAL.match(line)
    if m and frames[-1][1] is not None:
        frames[-1][1].append((m.group(1), m.group(2)))
        return True
    return False


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
        if frames is None and FRAME.match(line):
            frames = threads.setdefault(tid, [])
        if frames is not None:
            read_line(frames, line)
    return threads


def expected(value):
    """What asyncore shows for gdb's VALUE of a local."""
    if re.match(r'(@0x[0-9a-f]+: )?[{"]', value):    # (a reference to) an aggregate
        return '...'
    return value


def base(name):
    return norm(name or '??')


def locals_diff(mine, theirs):
    """Why asyncore's locals of a frame (its "locals") differ from gdb's
    THEIRS (read_line's), or None."""
    if theirs is None:
        return None if mine is None else 'gdb has no symbols, asyncore has locals'
    if mine is None:
        return 'gdb lists locals, asyncore none'
    got = [(v['name'], v['value']) for v in mine]
    want = [(n, expected(v)) for n, v in theirs]
    if got != want:
        return 'locals differ:\n      gdb      %s\n      asyncore %s' % (want, got)
    return None


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
            why = locals_diff(f.get('locals'), theirs)
            if why:
                problems.append('%s: %s' % (where, why))
            elif theirs:
                locals_seen += len(theirs)
    for p in problems:
        print('  ' + p)
    print('compared %d threads, %d frames, %d locals; %d differences' %
          (threads_seen, frames_seen, locals_seen, len(problems)))
    sys.exit(1 if problems or not locals_seen else 0)


if __name__ == '__main__':      # not when imported by tests/bthread_compare.py
    main()
