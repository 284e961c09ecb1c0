#!/usr/bin/env python3
"""The report of a minidump against the report of its crash's core.

    minidump_compare.py CORE.json MINIDUMP.json

The same crash, whichever file it came as: the same cause (kind and
summary), signal, signature and signature hash; the crashing thread's frames
(function, file, line, inlined) in order; and the other threads' stacks,
matched as a set (their thread ids differ between two runs).  Prints the
first difference, exit 1; else one line counting what matched, exit 0.
"""
import json
import sys


def stack(t):
    return tuple((f.get('function'), (f.get('file') or '').rsplit('/', 1)[-1], f.get('line'),
                  bool(f.get('inlined'))) for f in t['frames'])


def main(argv):
    core, dmp = (json.load(open(p)) for p in argv[1:3])
    for what in (lambda j: j['cause']['kind'], lambda j: j['cause']['summary'],
                 lambda j: j['signal']['number'], lambda j: j['signature'],
                 lambda j: j['signature_hash']):
        if what(core) != what(dmp):
            print('differ: core %r, minidump %r' % (what(core), what(dmp)))
            return 1
    crashing = [stack(t) for j in (core, dmp) for t in j['threads'] if t['crashing']]
    if len(crashing) != 2 or crashing[0] != crashing[1]:
        print('the crashing thread differs: core %r, minidump %r' % tuple((crashing + [None, None])[:2]))
        return 1
    others = [sorted(stack(t) for t in j['threads'] if not t['crashing']) for j in (core, dmp)]
    if others[0] != others[1]:
        missing = [s for s in others[0] if s not in others[1]]
        print('other threads differ: %d in the core, %d in the minidump; the core\'s %r not in it'
              % (len(others[0]), len(others[1]), missing[:1]))
        return 1
    print('%d threads, %d frames, cause, signal and signature equal'
          % (len(others[0]) + 1, len(crashing[0]) + sum(len(s) for s in others[0])))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
