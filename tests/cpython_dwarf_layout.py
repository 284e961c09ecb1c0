#!/usr/bin/env python3
"""Check a CPython description's layout against a build's own DWARF, read
by gdb (tests/t_cpython_asyncio.sh): the layout's types that no header
declares (_asyncio's TaskObj and futureiterobject, from
Modules/_asynciomodule.c) and the others alike.

  cpython_dwarf_layout.py [--except TYPE.MEMBER]... NAME DESCRIPTION FILE...

--except: a member whose offset the analyzer reads from the process (the
collector's generations, from generation0), so the build's own value is
printed, not held to the layout's.

FILE: the interpreter's library or executable, the _asyncio module, or
their debug files; each type is looked up in each FILE until one describes
it (a typedef, else a struct of that tag).  Every layout member's offset and
size and every "size" is gdb's `&((T *)0)->M`, `sizeof(((T *)0)->M)` and
`sizeof(T)`.  Prints one PASS/FAIL line; a type no FILE describes fails
(the layout would be untested)."""
import json
import re
import subprocess
import sys

args, excepted = sys.argv[1:], set()
while len(args) > 1 and args[0] == '--except':
    excepted.add(args[1])
    args = args[2:]
name, desc, files = args[0], args[1], args[2:]
layout = json.load(open(desc))['layout']


def gdb_values(path, exprs):
    """gdb's value of each expression in PATH's DWARF (None: not there)."""
    args = ['gdb', '-batch', '-nx', '-q', path]
    for e in exprs:
        args += ['-ex', 'print/d %s' % e, '-ex', 'echo --\\n']
    out = subprocess.run(args, capture_output=True, text=True).stdout
    got = []
    for chunk in out.split('--\n')[:len(exprs)]:
        m = re.search(r'^\$\d+ = (-?\d+)$', chunk, re.M)
        got.append(int(m.group(1)) if m else None)
    return got + [None] * (len(exprs) - len(got))


def exprs_of(ctype, members):
    exprs, want = [], []
    for m, v in members.items():
        if m == 'size':
            exprs.append('sizeof(%s)' % ctype)
            want.append(('sizeof', v))
        else:
            exprs.append('(long)&((%s *)0)->%s' % (ctype, m))
            exprs.append('sizeof(((%s *)0)->%s)' % (ctype, m))
            want += [('offsetof ' + m, v[0]), ('sizeof ' + m, v[1])]
    return exprs, want


# one gdb a file: every type's expressions, as a typedef and as a tag
plan = [(typ, ctype) + exprs_of(ctype, members)
        for typ, members in layout.items() for ctype in (typ, 'struct ' + typ)]
values = {}
for path in files:
    got = gdb_values(path, [e for p in plan for e in p[2]])
    for typ, ctype, exprs, want in plan:
        mine, got = got[:len(exprs)], got[len(exprs):]
        if typ not in values and any(g is not None for g in mine):
            values[typ] = list(zip(want, mine))
wrong, checked, own = [], 0, []
for typ in layout:
    for (what, w), g in values.get(typ, []):
        if what.startswith('offsetof ') and typ + '.' + what[len('offsetof '):] in excepted:
            own.append('%s %s: DWARF %s, the layout %d' % (typ, what, g, w))
            continue
        checked += 1
        if g != w:
            wrong.append('%s %s: DWARF %s, the layout %d' % (typ, what, g, w))
missing = [t for t in layout if t not in values]
ok = not wrong and not missing
print('%s: %s layout against DWARF: %d offsets and sizes%s%s%s' % (
    'PASS' if ok else 'FAIL', name, checked,
    '; wrong: ' + '; '.join(wrong[:6]) if wrong else '',
    '; no DWARF describes ' + ', '.join(missing) if missing else '',
    '; read from the process: ' + '; '.join(own) if own else ''))
