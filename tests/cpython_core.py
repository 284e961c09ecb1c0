#!/usr/bin/env python3
"""Where CPython 3.11 keeps its thread states and frames in a core, for
tests/t_cpython.sh to damage them with corrupt_core.py poke.

  cpython_core.py CORE RUNTIME_ADDR DESCRIPTION

RUNTIME_ADDR is _PyRuntime's address; the offsets are DESCRIPTION's layout
(the shipped cpython-3.11.json).  Prints JSON: {"interpreters": [ADDR...],
"threads": [{"tstate", "tid", "cframe", "frames": [{"frame", "code",
"qualname"}...]}...]} (innermost frame first), numbers as integers.
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
layout = json.load(open(desc))['layout']


def off(t, m):
    return layout[t][m][0]


def u64(addr):
    i = file_offset(loads, addr, 8)
    return struct.unpack_from('<Q', data, i)[0] if i is not None else None


def chain(first, next_off, limit=64):
    out, at = [], first
    while at and len(out) < limit and at not in out:
        out.append(at)
        at = u64(at + next_off)
    return out


interps = chain(u64(runtime + off('_PyRuntimeState', 'interpreters.head')),
                off('PyInterpreterState', 'next'))
threads = []
for i in interps:
    for ts in chain(u64(i + off('PyInterpreterState', 'threads.head')), off('PyThreadState', 'next')):
        cframe = u64(ts + off('PyThreadState', 'cframe'))
        top = u64(cframe + off('_PyCFrame', 'current_frame'))
        frames = []
        for fr in chain(top, off('_PyInterpreterFrame', 'previous')):
            code = u64(fr + off('_PyInterpreterFrame', 'f_code'))
            frames.append({'frame': fr, 'code': code,
                           'qualname': u64(code + off('PyCodeObject', 'co_qualname'))})
        threads.append({'tstate': ts, 'tid': u64(ts + off('PyThreadState', 'native_thread_id')),
                        'cframe': cframe, 'frames': frames})
print(json.dumps({'interpreters': interps, 'threads': threads}))
