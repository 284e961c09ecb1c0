#!/usr/bin/env python3
"""Where a CPython (3.8 to 3.13) keeps its thread states and frames in a
core, by a shipped description's layout, for tests/t_cpython_versions.sh to
damage them with corrupt_core.py poke.

  cpython_frames.py CORE RUNTIME_ADDR DESCRIPTION

RUNTIME_ADDR is _PyRuntime's address.  Prints JSON: {"threads": [{"tstate",
"thread", "frames": [{"frame", "code"}...]}...], "next": OFFSET,
"code_members": {MEMBER: OFFSET}} (innermost frame first; "next" is the
offset of the link from a frame to its caller, "code_members" the offsets
of the code object's members the description reads), numbers as integers.
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corrupt_core import phdrs, file_offset

core, runtime, desc = sys.argv[1], int(sys.argv[2], 0), sys.argv[3]
data = open(core, 'rb').read()
loads = [p for p in phdrs(data)[2] if p[0] == 1]
d = json.load(open(desc))
layout = d['layout']


def u64(addr):
    i = file_offset(loads, addr, 8) if addr else None
    return struct.unpack_from('<Q', data, i)[0] if i is not None else None


def follow(obj, typ, path):
    """The value of member PATH ("a->b" through pointers) of TYPE at OBJ."""
    steps = path.split('->')
    for k, step in enumerate(steps):
        m = layout[typ][step]
        obj = u64(obj + m[0]) if obj else None
        if k + 1 < len(steps):
            typ = m[2]
    return obj


def chain(first, next_off, limit=64):
    out, at = [], first
    while at and len(out) < limit and at not in out:
        out.append(at)
        at = u64(at + next_off)
    return out


lists = d['root']['lists']
objs = [runtime]
for i, l in enumerate(lists):
    elem = lists[i + 1]['type'] if i + 1 < len(lists) else d['stack']['type']
    nxt = layout[elem][l['next']][0]
    objs = [e for o in objs for e in chain(follow(o, l['type'], l['head']), nxt)]
entry = d['entry']['type']
next_off = layout[entry][d['stack']['next']][0]
code_ptr = d['entry']['fields']['file']['member'].split('->')[0]
code_type = layout[entry][code_ptr][2]
threads = []
for ts in objs:
    frames = [{'frame': f, 'code': u64(f + layout[entry][code_ptr][0])}
              for f in chain(follow(ts, d['stack']['type'], d['stack']['top']), next_off)]
    threads.append({'tstate': ts, 'thread': follow(ts, d['stack']['type'], d['root']['thread']),
                    'frames': frames})
members = {f['member'].split('->')[1]: layout[code_type][f['member'].split('->')[1]][0]
           for f in d['entry']['fields'].values()
           if f.get('member', '').startswith(code_ptr + '->')}
print(json.dumps({'threads': threads, 'next': next_off, 'code_members': members}))
