#!/usr/bin/env python3
"""Write tests/unit/data/cpython311_lines.txt for test_rtdecode: run with
CPython 3.11 (Debian's python3.11), it takes every code object of a few
standard modules and writes, one a line,
    QUALNAME FIRSTLINENO LINETABLE_HEX START:END:LINE,...
where the ranges are co_lines()'s (LINE "-" for an instruction without
one): CPython's own answer for the line of each instruction offset."""
import json.decoder, sys, threading, types

assert sys.version_info[:2] == (3, 11), sys.version


def codes(co):
    yield co
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            yield from codes(c)


for mod in (threading, json.decoder):
    src = open(mod.__file__).read()
    for co in codes(compile(src, mod.__file__, 'exec')):
        ranges = ','.join('%d:%d:%s' % (s, e, '-' if l is None else l) for s, e, l in co.co_lines())
        print(co.co_qualname, co.co_firstlineno, co.co_linetable.hex(), ranges)
