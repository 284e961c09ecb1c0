#!/usr/bin/env python3
"""Compare asyncore's bthreads with the fixture's truth and with gdb.

    bthread_compare.py truth TRUTH.json ASYNCORE.json
    bthread_compare.py stacks TRUTH.json ASYNCORE.json GDB.json

TRUTH.json is what fixtures/bthread wrote before crashing; ASYNCORE.json is
`asyncore report CORE --format json`; GDB.json is tests/gdb_bthread.py's.
`truth`: the same bthreads (ids), and for each its entry function, state,
wait (kind, butex address, joined id), the OS thread of a running one; the
crashing thread is the one running the crashing bthread; every stack ends at
task_runner, with no unwind error.
`stacks`: each suspended bthread's frames equal gdb's from its saved context,
each running one's equal gdb's backtrace of its worker down to task_runner,
and each worker thread's equal gdb's from the context its main task saved,
frame by frame with tests/oracle_compare.py's rules.
Prints each difference; exits 1 when there is any.
"""
import json
import sys

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


def compare(label, mine, theirs):
    g = gdb_frames({'frames': theirs})
    for i in range(max(len(mine), len(g))):
        if i >= len(mine) or i >= len(g):
            why = 'asyncore has %d frames, gdb %d' % (len(mine), len(g))
        else:
            why = frame_diff(mine[i], g[i])
        if why:
            return ['%s frame %d: %s' % (label, i, why),
                    '    asyncore: ' + ' < '.join(str(f.get('function')) for f in mine[:i + 3]),
                    '    gdb:      ' + ' < '.join(str(f.get('name')) for f in g[:i + 3])]
    return []


def check_stacks(truth, aj, gj):
    diffs = []
    tasks = {t['id']: t for t in aj.get('tasks', [])}
    threads = {t['tid']: t for t in aj.get('threads', [])}
    gthreads = {t['lwp']: t['frames'] for t in gj['threads']}
    for b in truth['bthreads']:
        t = tasks.get(b['id'])
        if t is None:
            continue
        if b['state'] == 'suspended':
            diffs += compare('bthread %s (suspended)' % b['id'], t['frames'],
                             through_runner(gj['contexts'].get(b['context'], [])))
    for w in truth['workers']:
        t = tasks.get(w['running'])
        if t is not None:
            diffs += compare('bthread %s (running)' % w['running'], t['frames'],
                             through_runner(gthreads.get(w['lwp'], [])))
        th = threads.get(w['lwp'])
        if th is None:
            diffs.append('worker %d missing' % w['lwp'])
        else:
            diffs += compare('worker %d' % w['lwp'], th['frames'],
                             gj['contexts'].get(w['main_context'], []))
    return diffs


def main():
    mode, truth, aj = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
    if mode == 'truth':
        diffs = check_truth(truth, aj)
    else:
        diffs = check_stacks(truth, aj, json.load(open(sys.argv[4])))
    for d in diffs:
        print(d)
    return 1 if diffs else 0


if __name__ == '__main__':
    sys.exit(main())
