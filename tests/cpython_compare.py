#!/usr/bin/env python3
"""Compare asyncore's CPython frames with what the crashing script itself
wrote (tests/t_cpython.sh).

  cpython_compare.py NAME REPORT FAULTHANDLER THREADS [live]

FAULTHANDLER is faulthandler's dump of every thread's Python stack at the
crash (thread headers name the pthread_t), THREADS maps each thread's
pthread_t (hex) to its OS thread id and its name (one thread a line).  Prints PASS/FAIL lines:
  - each thread's script frames (runtime "cpython", innermost first) are the
    thread's frames in the dump: the function (the last part of the
    qualified name), the file and the line, in the name "QUALNAME
    (BASENAME:LINE)" and the detail "FILE:LINE";
  - threads the dump does not list have no script frames;
  - the current thread of the dump is the crashing thread (not for a live
    process, "live": the dump was taken on a signal after asyncore read it);
  - placement: every run of script frames comes right after a
    _PyEval_EvalFrameDefault frame, and every such frame is followed by one.
"""
import json
import os
import re
import sys

name, report, dump, threads = sys.argv[1:5]
live = sys.argv[5:6] == ['live']
EVAL = '_PyEval_EvalFrameDefault'


def out(ok, what):
    print('%s: %s %s' % ('PASS' if ok else 'FAIL', name, what))
    return ok


def read_dump(path):
    stacks, current, cur = {}, None, None
    for line in open(path, errors='replace'):
        m = re.match(r'(Current thread|Thread) (0x[0-9a-f]+) \(most recent call first\):', line)
        if m:
            cur = int(m.group(2), 16)
            stacks[cur] = []
            if m.group(1) == 'Current thread':
                current = cur
            continue
        m = re.match(r'  File "(.*)", line (\d+|\?\?\?) in (.*)$', line.rstrip('\n'))
        if m and cur is not None:
            stacks[cur].append((m.group(3), m.group(1), m.group(2)))
    return stacks, current


def script_frames(thread):
    got = []
    for f in thread['frames']:
        if f.get('kind') != 'script':
            continue
        m = re.match(r'(.*) \((.*):(\d+|\?)\)$', f.get('function') or '')
        d = re.match(r'(.*):(\d+|\?)$', f.get('detail') or '')
        if not m or not d or f.get('runtime') != 'cpython':
            got.append(('?', f.get('function'), f.get('detail')))
            continue
        qual, base, line = m.groups()
        path, dline = d.groups()
        ok = base == os.path.basename(path) and line == dline
        got.append((qual.split('.')[-1] if ok else '?', path, line.replace('?', '???')))
    return got


def placement(thread):
    frames = thread['frames']
    for i, f in enumerate(frames):
        prev = frames[i - 1] if i else None
        if f.get('kind') == 'script':
            if not prev or not (prev.get('kind') == 'script' or
                                (prev.get('function') or '').startswith(EVAL)):
                return 'script frame %d follows %s' % (i, prev and prev.get('function'))
        elif (f.get('function') or '').startswith(EVAL) and f.get('kind') == 'native':
            nxt = frames[i + 1] if i + 1 < len(frames) else None
            if not nxt or nxt.get('kind') != 'script':
                return 'frame %d (%s) owns no script frames' % (i, EVAL)
    return None


stacks, current = read_dump(dump)
tids, names = {}, {}
for line in open(threads):
    ident, tid, tname = line.split(None, 2)
    tids[int(ident, 16)] = int(tid)
    names[int(ident, 16)] = tname.strip()
j = json.load(open(report))
by_tid = {t['tid']: t for t in j['threads']}
out(len(stacks) > 0 and all(s for s in stacks.values()), 'faulthandler wrote every thread\'s stack')
listed = set()
for ident, want in stacks.items():
    tid = tids.get(ident)
    t = by_tid.get(tid)
    listed.add(tid)
    if not out(t is not None, 'thread %s is in the report' % names.get(ident, hex(ident))):
        continue
    got = script_frames(t)
    if not out(got == want, 'thread %s: %d script frames are faulthandler\'s' % (
            names[ident], len(want))):
        for g, w in zip(got + [None] * len(want), want + [None] * len(got)):
            print('    asyncore %s / faulthandler %s' % (g, w))
    if ident == current and not live:
        out(t.get('crashing'), 'the current thread is the crashing one')
    why = placement(t)
    out(why is None, 'thread %s: script frames right after their %s activations%s' % (
        names[ident], EVAL, ': ' + why if why else ''))
rest = [t['tid'] for t in j['threads'] if t['tid'] not in listed and script_frames(t)]
out(not rest, 'threads without Python frames get none%s' % (': %s' % rest if rest else ''))
