#!/usr/bin/env python3
"""Compare asyncore's bthreads with the fixture's truth and with gdb.

    bthread_compare.py truth TRUTH.json ASYNCORE.json
    bthread_compare.py stacks TRUTH.json ASYNCORE.json GDB.json [all|crashing]

TRUTH.json is what fixtures/bthread wrote before crashing; ASYNCORE.json is
`asyncore report CORE --format json`; GDB.json is tests/gdb_bthread.py's.
`truth`: the same bthreads (ids), and for each its entry function, state,
wait (kind, butex address, joined id), blocked_on's object_name (the global
holding the mutex or butex) and owner_task (the holder a mutex built with
BRPC_DEBUG_LOCK records, else null; both null for a program without DWARF),
the OS thread of a running one; the
crashing thread is the one running the crashing bthread; every stack ends at
task_runner, with no unwind error.
`stacks`: each suspended bthread's frames equal gdb's from its saved context,
each running one's equal gdb's backtrace of its worker down to task_runner,
and each worker thread's equal gdb's from the context its main task saved,
frame by frame with tests/oracle_compare.py's rules.
`stacks ... all` (ASYNCORE.json made with --locals all, GDB.json with
BTHREAD_LOCALS=1): also every frame of every bthread and every thread has
"locals", and those of each stack compared are gdb's `bt full`'s, with
tests/locals_compare.py's rules; `stacks ... crashing` (--locals): only
the crashing bthread and its thread have them, and they are gdb's.  Then a
last line counts the frames and locals compared (none is a difference).
Prints each difference; exits 1 when there is any.
"""
import json
import sys

from locals_compare import locals_diff
from oracle_compare import frame_diff, gdb_frames, norm

RUNNER = 'bthread::TaskGroup::task_runner'


def strip_params(name):
    return name.split('(')[0] if name else name


def check_truth(truth, aj):
    diffs = []
    tasks = {t['id']: t for t in aj.get('tasks', [])}
    want = {b['id']: b for b in truth['bthreads']}
    for i in sorted(set(want) - set(tasks)):
        diffs.append('bthread %s (%s, %s) missing' % (i, want[i]['fn'], want[i]['state']))
    for i in sorted(set(tasks) - set(want)):
        diffs.append('bthread %s (%s) listed, never made' % (i, tasks[i].get('fn')))
    lwp_of = {w['running']: w['lwp'] for w in truth['workers']}
    dwarf = any(m.get('debuginfo') for m in aj.get('modules', []) if m.get('path', '').endswith('/prog'))
    for i in sorted(set(want) & set(tasks)):
        b, t = want[i], tasks[i]
        wait = t.get('wait') or {}
        got = (strip_params(t.get('fn')), t.get('state'), wait.get('kind'), wait.get('address'),
               wait.get('target'), t.get('tid'), t.get('runtime'))
        expect = (b['fn'], b['state'], b.get('wait'), b.get('address'), b.get('target'),
                  lwp_of.get(i) if b['state'] == 'running' else None, 'bthread')
        if got != expect:
            diffs.append('bthread %s: (fn, state, wait, address, target, tid, runtime) %r, truth %r'
                         % (i, got, expect))
        blocked = t.get('blocked_on') or {}
        named = (blocked.get('object_name'), blocked.get('owner_task'))
        # without DWARF no layout of bthread_mutex_t is known: nothing named
        want_named = (b.get('object_name'), b.get('owner')) if dwarf else (None, None)
        if named != want_named:
            diffs.append('bthread %s: blocked_on (object_name, owner_task) %r, truth %r'
                         % (i, named, want_named))
        frames = t.get('frames', [])
        if b['state'] in ('running', 'suspended') and (
                not frames or strip_params(frames[-1].get('function')) != RUNNER):
            diffs.append('bthread %s: stack does not end at task_runner: %s' % (
                i, ' < '.join(str(f.get('function')) for f in frames[-3:])))
        if t.get('unwind_error'):
            diffs.append('bthread %s: %s' % (i, t['unwind_error']))
    crashing = want.get(truth['crashing'])
    if crashing is None or aj.get('crashing_tid') != lwp_of.get(truth['crashing']):
        diffs.append('crashing thread %r is not the worker of bthread %s'
                     % (aj.get('crashing_tid'), truth['crashing']))
    return diffs


def through_runner(frames):
    """gdb's frames down to task_runner's (inclusive)."""
    out = []
    for f in frames:
        out.append(f)
        if norm(f.get('name')) == RUNNER:
            break
    return out


LOCALS_SEEN = {'stacks': 0, 'frames': 0, 'locals': 0}


def frame_locals_diff(a, g):
    """Why asyncore's locals of frame a are not gdb's of frame g, or None."""
    if 'locals' not in g:
        return '%s: gdb printed no locals for it' % g.get('name')
    why = locals_diff(a.get('locals'), g['locals'])
    if why:
        return '%s: %s' % (a.get('function'), why)
    LOCALS_SEEN['frames'] += 1
    LOCALS_SEEN['locals'] += len(g['locals'] or [])
    return None


def compare(label, mine, theirs, with_locals=False):
    g = gdb_frames({'frames': theirs})
    LOCALS_SEEN['stacks'] += with_locals
    for i in range(max(len(mine), len(g))):
        if i >= len(mine) or i >= len(g):
            why = 'asyncore has %d frames, gdb %d' % (len(mine), len(g))
        else:
            why = frame_diff(mine[i], g[i]) or (with_locals and frame_locals_diff(mine[i], g[i]))
        if why:
            return ['%s frame %d: %s' % (label, i, why),
                    '    asyncore: ' + ' < '.join(str(f.get('function')) for f in mine[:i + 3]),
                    '    gdb:      ' + ' < '.join(str(f.get('name')) for f in g[:i + 3])]
    return []


def locals_presence(truth, aj, mode):
    """Which stacks have "locals": with MODE all every native frame of every
    task and thread; with crashing those of the crashing bthread and of its
    thread only; with None, none."""
    crashing_tid = aj.get('crashing_tid')
    stacks = [('bthread %s' % t['id'], t['frames'], t['id'] == truth['crashing'])
              for t in aj.get('tasks', [])]
    stacks += [('thread %d' % t['tid'], t['frames'], t['tid'] == crashing_tid)
               for t in aj.get('threads', [])]
    diffs = []
    for label, frames, crashing in stacks:
        want = mode == 'all' or (mode == 'crashing' and crashing)
        has = ['locals' in f for f in frames if f.get('kind', 'native') == 'native']
        if want and not all(has):
            diffs.append('%s: %d of its %d native frames without "locals"' % (
                label, has.count(False), len(has)))
        elif not want and any(has):
            diffs.append('%s: "locals" without --locals%s' % (
                label, ' all' if mode else ''))
    return diffs


def check_stacks(truth, aj, gj, mode=None):
    diffs = locals_presence(truth, aj, mode)
    tasks = {t['id']: t for t in aj.get('tasks', [])}
    threads = {t['tid']: t for t in aj.get('threads', [])}
    gthreads = {t['lwp']: t['frames'] for t in gj['threads']}
    for b in truth['bthreads']:
        t = tasks.get(b['id'])
        if t is None:
            continue
        if b['state'] == 'suspended':
            diffs += compare('bthread %s (suspended)' % b['id'], t['frames'],
                             through_runner(gj['contexts'].get(b['context'], [])), mode == 'all')
    for w in truth['workers']:
        with_locals = mode == 'all' or (mode == 'crashing' and w['running'] == truth['crashing'])
        t = tasks.get(w['running'])
        if t is not None:
            diffs += compare('bthread %s (running)' % w['running'], t['frames'],
                             through_runner(gthreads.get(w['lwp'], [])), with_locals)
        th = threads.get(w['lwp'])
        if th is None:
            diffs.append('worker %d missing' % w['lwp'])
        else:
            diffs += compare('worker %d' % w['lwp'], th['frames'],
                             gj['contexts'].get(w['main_context'], []), with_locals)
    if mode and not LOCALS_SEEN['locals']:
        diffs.append('no locals compared')
    return diffs


def main():
    command, truth, aj = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
    if command == 'truth':
        diffs = check_truth(truth, aj)
    else:
        locals_mode = sys.argv[5] if len(sys.argv) > 5 else None
        diffs = check_stacks(truth, aj, json.load(open(sys.argv[4])), locals_mode)
    for d in diffs:
        print(d)
    if LOCALS_SEEN['stacks']:
        print('compared the locals of %(stacks)d stacks, %(frames)d frames, %(locals)d locals'
              % LOCALS_SEEN)
    return 1 if diffs else 0


if __name__ == '__main__':
    sys.exit(main())
