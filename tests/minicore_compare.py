#!/usr/bin/env python3
# minicore_compare.py CORE.json MINI.json: the two reports field by field;
# prints each difference (path: core's != minicore's) and exits 1 when any.
# Ignored, since they describe the file and not the crash: core.path,
# core.file_size, core.size, core.sha256.
import json, sys
# Fields that must differ between a core and its minicore: the file's own.
IGNORE = {('core', 'path'), ('core', 'file_size'), ('core', 'size'), ('core', 'sha256')}
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
diffs = []
def walk(x, y, p):
    if isinstance(x, dict) and isinstance(y, dict):
        for k in sorted(set(x) | set(y)):
            if tuple(p[-1:] + [k]) in IGNORE and len(p) == 1:
                continue
            walk(x.get(k, '<absent>'), y.get(k, '<absent>'), p + [k])
    elif isinstance(x, list) and isinstance(y, list):
        if len(x) != len(y):
            diffs.append('/'.join(map(str, p)) + ': %d items, %d' % (len(x), len(y)))
        for i, (u, v) in enumerate(zip(x, y)):
            walk(u, v, p + [i])
    elif x != y:
        diffs.append('/'.join(map(str, p)) + ': %r != %r' % (str(x)[:80], str(y)[:80]))
walk(a, b, [])
for d in diffs[:20]:
    print(d)
sys.exit(1 if diffs else 0)
