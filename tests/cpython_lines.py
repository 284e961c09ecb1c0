#!/usr/bin/env python3
"""Write the line-table data of tests/unit/test_rtdecode.c: run with a
CPython, it takes every code object of a few standard modules and writes,
one a line,
    QUALNAME FIRSTLINENO TABLE_HEX START:END:LINE,...
where TABLE is the code's own line table (3.11's co_linetable into
tests/unit/data/cpython311_lines.txt, run by Debian's python3.11; 3.10's
co_linetable into cpython310_lines.txt; 3.8's co_lnotab into
cpython38_lines.txt) and the ranges are CPython's own answer for the line
of each instruction offset: co_lines() (3.10 on; LINE "-" for an
instruction without one), dis.findlinestarts() for 3.8 and 3.9."""
import dis, json.decoder, sys, threading, types


def codes(co):
    yield co
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            yield from codes(c)


def ranges(co):
    if sys.version_info >= (3, 10):
        return [(s, e, l) for s, e, l in co.co_lines()]
    starts = list(dis.findlinestarts(co)) + [(len(co.co_code), None)]
    return [(s, starts[i + 1][0], l) for i, (s, l) in enumerate(starts[:-1])]


mods = (threading, json.decoder) if sys.version_info[:2] == (3, 11) else (threading,)
for mod in mods:
    src = open(mod.__file__).read()
    for co in codes(compile(src, mod.__file__, 'exec')):
        table = co.co_linetable if sys.version_info >= (3, 10) else co.co_lnotab
        name = getattr(co, 'co_qualname', co.co_name)
        r = ','.join('%d:%d:%s' % (s, e, '-' if l is None else l) for s, e, l in ranges(co))
        print(name, co.co_firstlineno, table.hex(), r)
