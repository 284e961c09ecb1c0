#!/usr/bin/env python3
"""Damage a Node.js core the way a bad heap or stack would, for t_node.sh.

node_patch.py CORE REPORT.json KIND OUT
    REPORT is asyncore's JSON report of CORE (for the frames' CFAs: the
    frame pointer of a native frame in V8's interpreter trampoline is its
    CFA - 16).  Writes to OUT a copy of CORE with one kind of damage:
      loop       the second JavaScript frame's saved frame pointer points at
                 itself (a frame chain through garbage that never ends)
      functions  every JavaScript frame's function slot holds garbage
      shared     the innermost frame's JSFunction's shared info points back
                 at the JSFunction (a cycle of wrong types)
      positions  the innermost frame's bytecode source position table bytes
                 all set to 0xff (a VLQ that never ends)
      error      the uncaught exception's map pointer is garbage
"""
import json
import mmap
import shutil
import struct
import sys

core, report, kind, out = sys.argv[1:5]
shutil.copyfile(core, out)
f = open(out, 'r+b')
m = mmap.mmap(f.fileno(), 0)
phoff, = struct.unpack_from('<Q', m, 0x20)
phnum, = struct.unpack_from('<H', m, 0x38)
segs = []
for i in range(phnum):
    t, fl, off, va, pa, fs, ms, al = struct.unpack_from('<IIQQQQQQ', m, phoff + i * 56)
    if t == 1:
        segs.append((va, fs, off))


def at(a, n=8):
    for va, fs, off in segs:
        if va <= a and a + n <= va + fs:
            return off + a - va
    sys.exit('address %#x is not in the core' % a)


def rd(a):
    return struct.unpack_from('<Q', m, at(a))[0]


def wr(a, v):
    struct.pack_into('<Q', m, at(a), v & 0xffffffffffffffff)


j = json.load(open(report))
t = next(t for t in j['threads'] if t['crashing'])
fps = [int(fr['cfa'], 16) - 16 for fr in t['frames']
       if fr['kind'] == 'native' and fr.get('function') == 'Builtins_InterpreterEntryTrampoline' and fr.get('cfa')]
GARBAGE = 0x4141414141414141
if kind == 'loop':
    wr(fps[1], fps[1])
elif kind == 'functions':
    for fp in fps:
        wr(fp - 16, GARBAGE | 1)
elif kind == 'shared':
    fn = rd(fps[0] - 16)
    wr(fn - 1 + 24, fn)
elif kind == 'positions':
    bytecode = rd(fps[0] - 32)
    table = rd(bytecode - 1 + 32)
    n = rd(table - 1 + 8) >> 32
    for k in range(n):
        m[at(table - 1 + 16 + k, 1)] = 0xff
elif kind == 'error':
    sp = int(t['registers']['rsp'], 16) if t.get('registers') else None
    # The exception is the JSError among the words of the throwing frames.
    lo = int(t['frames'][0]['cfa'], 16) - 0x1000
    hi = int(t['frames'][3]['cfa'], 16)
    hit = 0
    for a in range(lo & ~7, hi, 8):
        try:
            w = rd(a)
            if w & 3 == 1 and w > 0x10000:
                mp = rd(w - 1)
                tp = struct.unpack_from('<H', m, at(mp - 1 + 12, 2))[0]
                if tp == int(sys.argv[5]):
                    wr(w - 1, GARBAGE | 1)
                    hit += 1
                    break
        except SystemExit:
            continue
    if not hit:
        sys.exit('no exception found')
else:
    sys.exit('unknown damage ' + kind)
m.flush()
