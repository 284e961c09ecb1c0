#!/usr/bin/env python3
"""Compare a report's JavaScript frames with llnode's `v8 bt` of the same core.

llnode_compare.py REPORT.json BT.txt
    BT is lldb's output of `v8 bt` (llnode's plugin loaded) on the core the
    report read: one "frame #N: 0xPC NAME(this=..., ...) at SCRIPT:LINE:COL
    fn=0x..." line per JavaScript frame, LINE:COL the function's own start.
    The crashing thread's script frames, innermost first, must be llnode's:
    the same number, each with llnode's name (V8's stack traces add the
    receiver's type, "Type.name", and "new " for a constructor; llnode's
    empty name is V8's anonymous function) and script, and for a script that
    is a file, a line at or after the function's start (llnode reads no line
    of node's own built-in scripts: it gives them all line 1).  A frame
    llnode could not read ("<non-function>": it reads no class constructor's
    frame) is counted, not compared.  Prints one
    line per mismatch, then a summary; exit 1 when any.
"""
import json
import re
import sys

FRAME = re.compile(r'(?:^|\n)\s*\*?\s*frame #\d+: 0x[0-9a-f]+ ')
PLACE = re.compile(r' at (\S*?)(?::(\d+):(\d+))? fn=0x[0-9a-f]+\s*$', re.S)


def llnode_frames(path):
    """llnode's JavaScript frames, innermost first: (name, script, line),
    name None for a frame llnode could not read ("<non-function>") between
    two it could.  A frame's line goes on as long as its arguments do (a
    string argument may hold newlines)."""
    out = []
    for chunk in FRAME.split(open(path, errors='replace').read())[1:]:
        m = PLACE.search(chunk)
        if m:
            out.append((chunk.split('(this=', 1)[0], m.group(1), int(m.group(2) or 0)))
        elif chunk.startswith('<non-function>') and out:
            out.append((None, None, 0))
    while out and out[-1][0] is None:
        out.pop()
    return out


def same_name(mine, theirs):
    if not theirs:
        return mine == '(anonymous)' or mine.endswith('.<anonymous>')
    return mine in (theirs, 'new ' + theirs) or mine.endswith('.' + theirs)


def main():
    j = json.load(open(sys.argv[1]))
    t = next(t for t in j['threads'] if t['crashing'])
    mine = [(f['function'], f.get('file') or '', f.get('line') or 0) for f in t['frames']
            if f['kind'] == 'script' and f.get('runtime') == 'node' and
            '(inlined)' not in (f.get('detail') or '')]
    theirs = llnode_frames(sys.argv[2])
    bad = 0
    if not theirs:
        print('llnode gave no JavaScript frame')
        return 1
    if len(mine) != len(theirs):
        print('frames: llnode has %d, the report %d' % (len(theirs), len(mine)))
        bad += 1
    lines = unread = 0
    for i, (m, o) in enumerate(zip(mine, theirs)):
        if o[0] is None:
            unread += 1
            continue
        if not same_name(m[0], o[0]) or m[1] != o[1]:
            print('frame %d: llnode %s in %s, the report %s in %s' % (i, o[0] or '(anonymous)', o[1], m[0], m[1]))
            bad += 1
        elif o[1].startswith('/'):
            lines += 1
            if not 0 < o[2] <= m[2]:
                print('frame %d: %s at line %d, before its start (line %d) in llnode' % (i, m[0], m[2], o[2]))
                bad += 1
    print('%d frames, %d of them in files with lines, %d llnode could not read' % (len(theirs), lines, unread))
    return 1 if bad else 0


sys.exit(main())
