#!/usr/bin/env python3
"""Function sequences per thread of a folly report (tests/frames.py's
lines): GCC's coroutine bodies are clones ("f(f()::_Z1fv.Frame*) [clone
.actor]") that the report displays as written ("f() [coroutine]", JSON
`display`): the sequences use that name, its parameters dropped
("f [coroutine]"); other clone suffixes are dropped.
Usage: folly_frames.py REPORT.json"""
import json, os, re, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frames import strip_params
j = json.load(open(sys.argv[1]))
def fix(frames):
    for f in frames:
        d = f.get("display")
        m = re.match(r"(.*) (\[coroutine[^]]*\])", d or "")
        if m:
            f["function"] = strip_params(m.group(1)) + " " + m.group(2)
        elif f.get("function"):
            f["function"] = re.sub(r"(\s*\[clone [^]]*\])+$", "", f["function"])
for t in j.get("threads", []):
    fix(t.get("frames", []))
for s in j.get("suspended", []):
    fix(s.get("frames", []))
sys.stdout.flush()
subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "frames.py"),
                "--sorted", "--suspended", "--strip-params"], input=json.dumps(j), text=True, check=True)
