"""Check a report of fixtures/hangs/gil.py against the fixture's own account
of its threads (its ready file: "main TID", the thread holding the GIL in a
C call, then "waiter TID" for each thread spinning in Python).

usage: cpython_gil.py REPORT.json READY NAME
Prints PASS/FAIL lines: each waiter waits for the GIL, held by main; the
cause names the holder and counts the waiters."""
import json
import sys


def main():
    report, ready, name = sys.argv[1:4]
    j = json.load(open(report))
    ids = {}
    for line in open(ready):
        role, tid = line.split()
        ids.setdefault(role, []).append(int(tid))
    holder, waiters = ids["main"][0], ids["waiter"]
    threads = {t["tid"]: t for t in j["threads"]}
    bad = []
    for tid in waiters:
        b = (threads.get(tid) or {}).get("blocked_on")
        if not b or b.get("kind") != "gil" or b.get("owner_tid") != holder:
            bad.append("%d: %s" % (tid, json.dumps(b)))
    if bad:
        print("FAIL: %s: waiters for the GIL held by %d: %s" % (name, holder, "; ".join(bad)))
    else:
        print("PASS: %s: %d threads wait for the GIL, held by %d (the fixture's ids)"
              % (name, len(waiters), holder))
    b = (threads.get(holder) or {}).get("blocked_on")
    if b and b.get("kind") == "gil":
        print("FAIL: %s: the holder %d waits for the GIL itself" % (name, holder))
    summary = j["cause"]["summary"]
    want = "%d threads wait for the GIL, held by thread %d (" % (len(waiters), holder)
    if j["cause"]["kind"] == "hang" and summary.startswith(want) and "gil.py:" in summary:
        print("PASS: %s: the cause names the holder and its Python line" % name)
    else:
        print("FAIL: %s: cause %s '%s', wanted '%s...gil.py:...'"
              % (name, j["cause"]["kind"], summary, want))


main()
