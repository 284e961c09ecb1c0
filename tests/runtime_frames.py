#!/usr/bin/env python3
"""Runtime-description frames from `asyncore report --format json`.

  runtime_frames.py stacks REPORT MODULES   each thread that has script or label
      frames (the crashing one first): "thread crashing" or "thread", then one line
      a frame, innermost first: "native NAME" for the native frames of the modules
      named in MODULES (comma-separated file names; parameter lists dropped; _start
      left out; "??" when unnamed) and "KIND NAME[ -- DETAIL]" for script and label
      frames (addresses in a detail written ADDR).
  runtime_frames.py live REPORT             the crashing thread's script and label
      frames as the fixture's live dump writes them: "kind|name|detail".
  runtime_frames.py scripts REPORT          the JSScript addresses of its script
      frames other than "js::RunScript", innermost first.
  runtime_frames.py backtrace FILE          the script addresses js::DumpBacktrace
      wrote, innermost first.
"""
import json, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frames import strip_params

RUNTIME = ('script', 'label')


def threads(report):
    j = json.load(open(report))
    ts = j.get('threads', [])
    return [t for t in ts if t.get('crashing')] + [t for t in ts if not t.get('crashing')]


def crashing(report):
    ts = threads(report)
    return ts[0].get('frames', []) if ts else []


def stacks(report, modules):
    wanted = set(modules.split(','))
    blocks = []
    for t in threads(report):
        frames = t.get('frames', [])
        if not any(f.get('kind') in RUNTIME for f in frames):
            continue
        lines = ['thread crashing' if t.get('crashing') else 'thread']
        for f in frames:
            name = f.get('function') or '??'
            if f.get('kind') in RUNTIME:
                detail = f.get('detail')
                detail = ' -- ' + re.sub(r'0x[0-9a-f]+', 'ADDR', detail) if detail else ''
                lines.append('%s %s%s' % (f['kind'], name, detail))
            elif os.path.basename(f.get('module') or '') in wanted and name != '_start':
                lines.append('native ' + strip_params(name))
        blocks.append(lines)
    first, rest = blocks[:1], sorted(blocks[1:])
    for b in first + rest:
        print('\n'.join(b))


def live(report):
    for f in crashing(report):
        if f.get('kind') in RUNTIME:
            print('%s|%s|%s' % (f['kind'], f.get('function') or '', f.get('detail') or ''))


def scripts(report):
    for f in crashing(report):
        if f.get('kind') == 'script' and f.get('function') != 'js::RunScript':
            m = re.match(r'JSScript (0x[0-9a-f]+)$', f.get('detail') or '')
            print(m.group(1) if m else '?')


def backtrace(path):
    for line in open(path):
        m = re.match(r'#\d+\s+\S+\s+\S\s+\S+ \(([0-9a-f]+) @ \d+\)', line)
        if m:
            print('0x' + m.group(1).lstrip('0'))


if __name__ == '__main__':
    cmd, args = sys.argv[1], sys.argv[2:]
    {'stacks': stacks, 'live': live, 'scripts': scripts, 'backtrace': backtrace}[cmd](*args)
