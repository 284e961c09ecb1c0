#!/usr/bin/env bash
# The ranges of CORE the analysis reads most from memory it cannot check
# against anything: the recorder rings (recorder_info and entries), the
# threads' AsyncStackRoots, the suspended leaves, the bthreads' TaskMetas
# and saved contexts (below their first frame's stack pointer), the
# kernel's signal frames at the trampolines' stack pointers, as
# "VADDR:LEN,..." for ASYNCORE_FUZZ_HOT (the patch-mode harnesses) and
# mutate's --hot.
#   fuzz/hot-ranges.sh CORE [ASYNCORE]
ROOT=$(cd "$(dirname "$0")/.." && pwd)
"${2:-$ROOT/asyncore}" report "$1" --format json --threads all --frame-registers 2>/dev/null |
	python3 -c '
import json, sys
j = json.load(sys.stdin)
r = ["%s:%d" % (x["address"], 176 + 64 * min(x["size"] or 0, 4096)) for x in j.get("recorders", []) if x.get("address")]
r += ["%s:64" % t["async_root"] for t in j.get("threads", []) if t.get("async_root")]
r += ["%s:64" % s["leaf"] for s in j.get("suspended", []) if s.get("leaf")]
r += ["%s:240" % t["address"] for t in j.get("tasks", []) if t.get("address")]
r += ["0x%x:128" % (int(t["frames"][0]["registers"]["rsp"], 16) - 64) for t in j.get("tasks", [])
      if t["state"] == "suspended" and t["frames"] and "rsp" in t["frames"][0].get("registers", {})]
r += ["0x%x:640" % int(f["registers"].get("rsp", f["registers"].get("sp")), 16)
      for t in j.get("threads", []) for f in t["frames"]
      if f.get("role") == "trampoline" and ("rsp" in f.get("registers", {}) or "sp" in f.get("registers", {}))]
print(",".join(r))' || true
