#!/usr/bin/env python3
"""Print each thread's function chain of an asyncore JSON report, one line a
thread: "TID f0 f1 ...", innermost first ("??" for a frame without a name).
Usage: arch_stacks.py REPORT.json [--crashing]"""
import json
import sys

report = json.load(open(sys.argv[1]))
for t in report['threads']:
    if '--crashing' in sys.argv[2:] and not t['crashing']:
        continue
    names = [f.get('function') or '??' for f in t['frames']]
    print(' '.join([str(t['tid'])] + names))
