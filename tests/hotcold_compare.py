#!/usr/bin/env python3
"""Compare asyncore with gdb on a program whose functions GCC split in hot
and cold parts, with gdb 13's one failure on such programs set apart.

    hotcold_compare.py ASYNCORE.json GDB.json GDB_UNSPLIT.json LABEL

ASYNCORE.json and GDB.json (tests/gdb_frames.py) read the same core of the
split build; GDB_UNSPLIT.json is gdb on a core of the same program and run
built with -fno-reorder-blocks-and-partition (no part is split off).

1. asyncore's frames (function, inline and tail-call status) must be gdb's
   frames of the unsplit build: splitting a function changes no frame.
2. Against gdb on the split build every frame must agree as
   tests/oracle_compare.py requires (names, lines, inline and tail-call
   status, arguments), except where gdb 13 fails on a split function:
   gdb takes every start of a call target's DW_AT_ranges for a function
   entry (gdb/dwarf2/loc.c, call_site_target ADDRESSES); the start of a
   NAME.cold part is none, so looking it up as one throws, and gdb drops
   a) a chain of tail calls through a split function: a tail-call frame
      that the unsplit build's gdb shows may be missing;
   b) the entry values of a function that tail-calls a split function
      (func_verify_no_selftailcall), and so of its callees: an argument
      that the unsplit build's gdb shows as NAME@entry may be, in gdb on
      the split build, <optimized out> or its plain value without @entry.
   Each such difference is printed as "gdb13: ..." and allowed only when
   the unsplit build's gdb shows the frame or the @entry value.
Prints the differences ("LABEL: frame N: why") and exits 1 when there is
any, 0 otherwise.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_compare as oc  # noqa: E402


def split_args(text):
    """gdb's argument text as [(name, "name=..." text)], an entry value
    written apart ("e=1, e@entry=2") kept with its argument."""
    parts, depth, quote, cur = [], 0, None, ''
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            cur += c
            if c == '\\' and i + 1 < len(text):
                cur += text[i + 1]
                i += 1
            elif c == quote:
                quote = None
        elif c in '"\'':
            quote = c
            cur += c
        elif c in '({[<':
            depth += 1
            cur += c
        elif c in ')}]>':
            depth -= 1
            cur += c
        elif text.startswith(', ', i) and depth == 0:
            parts.append(cur)
            cur = ''
            i += 1
        else:
            cur += c
        i += 1
    if cur:
        parts.append(cur)
    out = []
    for p in parts:
        name = p.split('=', 1)[0]
        if name.endswith('@entry') and out and out[-1][0] == name[:-len('@entry')]:
            out[-1] = (out[-1][0], out[-1][1] + ', ' + p)
        else:
            out.append((name, p))
    return out


def without_entry(name, text):
    """NAME's text with its @entry part dropped: "n=n@entry=3" -> "n=3"."""
    same = '%s=%s@entry=' % (name, name)
    if text.startswith(same):
        return '%s=%s' % (name, text[len(same):])
    return text.split(', %s@entry=' % name)[0]


def args_gdb13(a, g, u, notes, where):
    """Whether asyncore's arguments of frame a differ from gdb's (g) only
    as 2b allows, with u the unsplit build's frame."""
    if g.get('args') is None:
        return True
    got = split_args(oc.render_args(a.get('args')))
    want = split_args(g['args'])
    unsplit = dict(split_args(u.get('args') or ''))
    if [n for n, _ in got] != [n for n, _ in want]:
        return False
    for (name, at), (_, gt) in zip(got, want):
        if at == gt:
            continue
        ok = ('%s@entry=' % name in at and '@entry=' not in gt and
              '%s@entry=' % name in unsplit.get(name, '') and
              gt in ('%s=<optimized out>' % name, without_entry(name, at)))
        if not ok:
            return False
        notes.append('gdb13: %s: %s: asyncore %s, gdb %s' % (where, a.get('function'), at, gt))
    return True


def shape(frames, name_key, tail_of):
    return [(oc.norm(f.get(name_key)), tail_of(f)) for f in frames]


def compare(aj, gj, uj, label):
    diffs, notes = [], []
    gthreads = {t['lwp']: t for t in gj['threads']}
    athreads = {t['tid']: t for t in aj.get('threads', [])}
    uthreads = [t for t in uj['threads'] if t.get('current')] or uj['threads']
    crashing = [t for t in aj.get('threads', []) if t.get('crashing')]
    if len(uthreads) != 1 or len(crashing) != 1 or len(gthreads) != len(athreads):
        return ['%s: expected one crashing thread in each core' % label], notes
    at = crashing[0]
    a = [f for f in at.get('frames', []) if f.get('kind', 'native') == 'native']
    g = oc.gdb_frames(gthreads.get(at['tid'], {'frames': []}))
    u = oc.gdb_frames(uthreads[0])
    # 1: the frames are the unsplit build's.
    ashape = shape(a, 'function', lambda f: 'tail' if f.get('tailcall') else
                   'inline' if f.get('inlined') else '')
    ushape = shape(u, 'name', lambda f: {'TAILCALL': 'tail', 'INLINE': 'inline'}.get(f.get('type'), ''))
    for i in range(max(len(ashape), len(ushape))):
        x = ashape[i] if i < len(ashape) else None
        y = ushape[i] if i < len(ushape) else None
        if x is None or y is None or not oc.same(x[0], y[0]) or x[1] != y[1]:
            diffs.append('%s: frame %d: asyncore %s, gdb on the unsplit build %s' % (label, i, x, y))
            return diffs, notes
    # 2: gdb on the split build, but for 2a and 2b.
    j = 0
    for i, f in enumerate(a):
        gf = g[j] if j < len(g) else None
        if gf is not None and oc.same(oc.norm(f.get('function')), oc.norm(gf.get('name'))):
            why = oc.frame_diff(dict(f, args=None), dict(gf, args=None))
            if why is None and oc.args_diff(f, gf) and not args_gdb13(f, gf, u[i], notes, 'frame %d' % i):
                why = oc.args_diff(f, gf)
            if why:
                diffs.append('%s: frame %d: %s' % (label, i, why))
                return diffs, notes
            j += 1
        elif f.get('tailcall') and u[i].get('type') == 'TAILCALL':
            notes.append('gdb13: frame %d: %s: a tail-call frame gdb drops' % (i, f.get('function')))
        else:
            diffs.append('%s: frame %d: asyncore %r, gdb %r' % (
                label, i, f.get('function'), gf.get('name') if gf else None))
            return diffs, notes
    if j != len(g):
        diffs.append('%s: gdb has %d more frames' % (label, len(g) - j))
    return diffs, notes


def main():
    aj, gj, uj = (json.load(open(p)) for p in sys.argv[1:4])
    label = sys.argv[4] if len(sys.argv) > 4 else 'core'
    diffs, notes = compare(aj, gj, uj, label)
    for n in notes:
        print('%s: %s' % (label, n), file=sys.stderr)
    for d in diffs:
        print(d)
    return 1 if diffs else 0


if __name__ == '__main__':
    sys.exit(main())
