#!/usr/bin/env python3
"""Compare a report's JavaScript frames with node's own stack trace.

node_compare.py frames REPORT.json ORACLE.txt
    ORACLE is node's stderr for an uncaught exception under
    --abort-on-uncaught-exception: "Uncaught TYPE: MESSAGE", a blank line,
    "FROM", then one "name (path:line:col)" or "path:line:col" per frame
    (at most Error.stackTraceLimit, 10; node 18 runs them together on one
    line).  The crashing thread's script
    frames, innermost first, must be those frames: name, path, line and
    column.  Prints one line per mismatch; exit 1 when any.
node_compare.py cause REPORT.json ORACLE.txt
    The cause must be uncaught_exception with the oracle's class and
    message, in its first frame: "TYPE: MESSAGE in NAME (FILE:LINE:COL)".
node_compare.py printed REPORT.json STDERR
    The cause must be uncaught_exception "TYPE: MESSAGE in NAME (FILE:LINE:COL)"
    as node printed the error it aborted on (the first "at" line of its
    stack, the line before it).
node_compare.py interleaved REPORT.json
    Every script frame of the crashing thread follows a native frame of
    V8's code (a Builtins_* frame or JIT code without a module).
"""
import json
import os
import re
import sys


def oracle(path):
    lines = open(path, errors='replace').read().splitlines()
    head = next((l for l in lines if l.startswith('Uncaught ')), None)
    frames = []
    if 'FROM' in lines:
        # Node 18 writes the frames with no line break between them.
        after = [f for l in lines[lines.index('FROM') + 1:]
                 for f in re.sub(r'(:\d+:\d+\)?|\((?:<anonymous>|native)\))(?=[^\d)])', '\\1\n', l).split('\n')]
        for l in after:
            m = re.match(r'^(.*) \((.*):(\d+):(\d+)\)$', l) or re.match(r'^()(.*):(\d+):(\d+)$', l)
            if not m:
                # A builtin's frame: "Array.reduce (<anonymous>)", no line.
                b = re.match(r'^(.*) \((<anonymous>|native)\)$', l)
                if not b:
                    break
                frames.append((b.group(1), '<anonymous>', 0, 0))
                continue
            # V8's " [as alias]" (the property a method was called through)
            # is not read: the function's own name is compared.
            name = re.sub(r' \[as [^]]*\]$', '', m.group(1)) or '(anonymous)'
            frames.append((name, m.group(2), int(m.group(3)), int(m.group(4))))
    return head, frames


def crashing(report):
    j = json.load(open(report))
    return j, next(t for t in j['threads'] if t['crashing'])


def script_frames(t):
    out = []
    for f in t['frames']:
        if f['kind'] != 'script' or f.get('runtime') != 'node':
            continue
        m = re.match(r'^(.*):(\d+):(\d+)', f.get('detail') or '')
        out.append((f['function'], m.group(1) if m else f.get('file') or f.get('detail'),
                    int(m.group(2)) if m else 0, int(m.group(3)) if m else 0,
                    '(function start)' in (f.get('detail') or '')))
    return out


def main():
    what, report = sys.argv[1], sys.argv[2]
    j, t = crashing(report)
    bad = 0
    if what == 'frames':
        _, want = oracle(sys.argv[3])
        got = script_frames(t)
        if not want:
            print('no frames in the oracle')
            return 1
        starts = 0
        for i, w in enumerate(want):
            g = got[i] if i < len(got) else None
            # A frame of optimized code is placed at its function's start
            # (its code's own positions are not read): the name, the file
            # and a line at or before node's must agree.
            if g and g[4] and g[:2] == w[:2] and 0 < g[2] <= w[2]:
                starts += 1
                continue
            if not g or g[:4] != w:
                print('frame %d: want %s, got %s' % (i, w, g and g[:4]))
                bad += 1
        print('%d frames, %d of them at their function\'s start' % (len(want), starts))
    elif what == 'cause':
        head, want = oracle(sys.argv[3])
        name, path, line, col = want[0]
        expect = '%s in %s (%s:%d:%d)' % (head[len('Uncaught '):], name, os.path.basename(path), line, col)
        c = j['cause']
        if c['kind'] != 'uncaught_exception' or c['summary'] != expect:
            print('cause: want uncaught_exception %r, got %s %r' % (expect, c['kind'], c['summary']))
            bad += 1
        typ, _, msg = head[len('Uncaught '):].partition(': ')
        if (c.get('exception') or {}).get('type') != typ or (c.get('exception') or {}).get('what') != msg:
            print('exception: want %r %r, got %s' % (typ, msg, c.get('exception')))
            bad += 1
    elif what == 'printed':
        # node's own report of an error it aborts on: "TYPE: MESSAGE" and
        # "    at NAME (PATH:LINE:COL)" below the source line it shows.
        lines = open(sys.argv[3], errors='replace').read().splitlines()
        i = next(k for k, l in enumerate(lines) if l.startswith('    at '))
        head = lines[i - 1]
        m = re.match(r'^    at (.*) \((.*)\)$', lines[i]) or re.match(r'^    at ()(.*)$', lines[i])
        expect = '%s in %s (%s)' % (head, m.group(1) or '(anonymous)', m.group(2).rsplit('/', 1)[-1])
        c = j['cause']
        if c['kind'] != 'uncaught_exception' or c['summary'] != expect:
            print('cause: want uncaught_exception %r, got %s %r' % (expect, c['kind'], c['summary']))
            bad += 1
    elif what == 'interleaved':
        prev = None
        for f in t['frames']:
            if f['kind'] == 'script':
                ok = prev and prev['kind'] == 'native' and (
                    (prev.get('function') or '').startswith('Builtins_') or not prev.get('module'))
                if not ok:
                    print('script frame %s after %s' % (f['function'], prev and prev.get('function')))
                    bad += 1
            else:
                prev = f
    return 1 if bad else 0


sys.exit(main())
