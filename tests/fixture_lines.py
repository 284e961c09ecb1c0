#!/usr/bin/env python3
"""Golden lines for a fixture: tests/frames.py's lines, system frames folded.

    fixture_lines.py --own prog,libnative.so [--strip-params] [--sorted] REPORT.json

Frames whose module's basename is not in --own (libc, ld.so, libstdc++...)
are printed as "[sys]", and a run of them as one "[sys]": their names depend
on the C library build and on whether its debug info is installed, which
golden files must not.  The oracle test (t_oracle.sh) compares those frames
against gdb instead.  Without --own every frame is kept (plain frames.py).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frames  # noqa: E402


def fold(frame_list, own):
    out = []
    for f in frame_list:
        mod = os.path.basename(f.get('module') or '')
        if own is not None and mod not in own:
            if out and out[-1].get('function') == '[sys]':
                continue
            f = {'function': '[sys]', 'kind': 'native'}
        out.append(f)
    return out


def main():
    argv = sys.argv[1:]
    own = None
    if '--own' in argv:
        i = argv.index('--own')
        own = set(argv[i + 1].split(','))
        del argv[i:i + 2]
    flags = set(a for a in argv if a.startswith('--'))
    args = [a for a in argv if not a.startswith('--')]
    j = json.load(open(args[0]) if args else sys.stdin)
    strip = '--strip-params' in flags
    crashing, others = [], []
    for t in j.get('threads', []):
        line = frames.seq(fold(t.get('frames', []), own), strip)
        (crashing if t.get('crashing') else others).append(line)
    if '--sorted' in flags:
        others.sort()
    for line in crashing:
        print('crashing: ' + line)
    for line in others:
        print('thread: ' + line)


if __name__ == '__main__':
    main()
