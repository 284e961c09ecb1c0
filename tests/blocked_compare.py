#!/usr/bin/env python3
"""Whether two reports of one hung moment say the same of its waits.

    blocked_compare.py CORE.json OTHER.json

Each thread's blocked_on (by tid) and the deadlocks must be equal; the
core's must hold some (at least two blocked threads and a deadlock), so a
report that finds none cannot pass.  Prints what differs, or a summary."""
import json
import sys


def waits(path):
    d = json.load(open(path))
    return {t["tid"]: t.get("blocked_on") for t in d["threads"]}, d.get("deadlocks") or []


def main():
    core, core_dl = waits(sys.argv[1])
    other, other_dl = waits(sys.argv[2])
    bad = []
    if sum(1 for b in core.values() if b) < 2 or not core_dl:
        bad.append("the core's report holds too few waits: %d blocked, %d deadlocks" %
                   (sum(1 for b in core.values() if b), len(core_dl)))
    for tid in sorted(set(core) | set(other)):
        if core.get(tid) != other.get(tid):
            bad.append("thread %s: core %s, other %s" % (tid, json.dumps(core.get(tid)), json.dumps(other.get(tid))))
    if core_dl != other_dl:
        bad.append("deadlocks: core %s, other %s" % (json.dumps(core_dl), json.dumps(other_dl)))
    for b in bad:
        print(b)
    if not bad:
        print("%d threads, %d blocked (%s), %d deadlocks alike" % (
            len(core), sum(1 for b in core.values() if b),
            ", ".join(sorted({b["syscall"] for b in core.values() if b and b.get("syscall")})), len(core_dl)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
