#!/usr/bin/env python3
"""A stored hang against the JSON report of its core.

hang_store_check.py rows REPORT BLOCKED DEADLOCKS MEMBERS [TASKS FRAMES]
    the store's rows of the core (`asyncore query --format json` of its
    blocked_on, deadlocks and deadlock_members rows, ordered by waiter and
    index, by idx, by deadlock_idx and pos; of its tasks and task_frames)
    against the report: one blocked_on row per waiting thread (by tid) and
    per waiting task (by index), none for the others, each column the
    report's; each deadlock with its threads and objects in order; each
    task with its frames (kind, function, file, line, runtime).
hang_store_check.py loaded REPORT LOADED
    the report the store gives back (serve's /api/core/ID, written from the
    stored rows alone) against the report: each thread's and task's
    blocked_on, the deadlocks, the cause, the tasks' frames.

Prints "ok FACT" and "bad FACT" lines; exits 1 when the input is unreadable.
"""
import json
import sys

MASK = (1 << 64) - 1
COLUMNS = ("kind", "object", "object_name", "owner_tid", "syscall", "fd", "fd_target", "since",
           "summary")


def load(path):
    with open(path) as f:
        text = f.read()
    return json.loads(text) if text.strip() else []


def address(v):
    """An address as the report writes it ("0x...") or a store holds it (its
    two's complement, a number or, from ClickHouse, a quoted one)."""
    if v is None:
        return None
    if isinstance(v, str):
        return int(v, 0) & MASK
    return int(v) & MASK


def number(v):
    return None if v is None else int(v)


def same(column, want, got):
    if column in ("object", "owner_task"):
        return address(want) == address(got)
    if column in ("owner_tid", "fd", "since"):
        return number(want) == number(got)
    return want == got


class Verdict:
    def __init__(self):
        self.lines = []

    def fact(self, ok, what):
        self.lines.append(("ok " if ok else "bad ") + what)

    def done(self):
        print("\n".join(self.lines))


def waiters(report):
    """(waiter, key, blocked_on) of every thread (key: tid) and task (key:
    its index) of the report."""
    out = [("thread", t["tid"], t.get("blocked_on")) for t in report.get("threads", [])]
    out += [("task", i, t.get("blocked_on")) for i, t in enumerate(report.get("tasks", []))]
    return out


def frame_key(f):
    return (f.get("kind"), f.get("function"), f.get("file"), number(f.get("line")),
            f.get("runtime"))


def check_rows(v, report, blocked, deadlocks, members, tasks=None, frames=None):
    rows = {}
    for r in blocked:
        key = (r["waiter"], number(r["tid"]) if r["waiter"] == "thread" else number(r["waiter_idx"]))
        v.fact(key not in rows, "one blocked_on row for %s %s" % key)
        rows[key] = r
    for waiter, key, b in waiters(report):
        r = rows.pop((waiter, key), None)
        if b is None:
            v.fact(r is None, "%s %s runs: no blocked_on row" % (waiter, key))
            continue
        if r is None:
            v.fact(False, "%s %s waits (%s): no blocked_on row" % (waiter, key, b.get("summary")))
            continue
        for c in COLUMNS:
            v.fact(same(c, b.get(c), r.get(c)),
                   "%s %s blocked_on.%s: report %r, store %r" % (waiter, key, c, b.get(c), r.get(c)))
        if "owner_task" in b:
            v.fact(same("owner_task", b["owner_task"], r.get("owner_task")),
                   "%s %s blocked_on.owner_task" % (waiter, key))
        if waiter == "thread":
            gone = b.get("owner_tid") is not None and \
                b["owner_tid"] not in [t["tid"] for t in report["threads"]]
            v.fact(bool(number(r["owner_gone"])) == gone, "thread %s owner_gone %s" % (key, gone))
    v.fact(not rows, "no blocked_on row of a thread or task the report does not have (%s)"
           % sorted(rows))
    want = report.get("deadlocks", [])
    v.fact(len(deadlocks) == len(want), "%d deadlocks stored, the report has %d"
           % (len(deadlocks), len(want)))
    for i, d in enumerate(want):
        row = [x for x in deadlocks if number(x["idx"]) == i]
        ms = [m for m in members if number(m["deadlock_idx"]) == i]
        ms.sort(key=lambda m: number(m["pos"]))
        v.fact(len(row) == 1 and row[0]["summary"] == d["summary"] and
               number(row[0]["nmembers"]) == len(d["threads"]),
               "deadlock %d: its summary and size (%s)" % (i, d["summary"]))
        v.fact([number(m["tid"]) for m in ms] == d["threads"],
               "deadlock %d: threads %s" % (i, d["threads"]))
        v.fact([address(m["object"]) for m in ms] == [address(o) for o in d["objects"]],
               "deadlock %d: objects %s" % (i, d["objects"]))
    if tasks is None:
        return
    want = report.get("tasks", [])
    v.fact(len(tasks) == len(want), "%d tasks stored, the report has %d" % (len(tasks), len(want)))
    for i, t in enumerate(want):
        row = [x for x in tasks if number(x["idx"]) == i]
        fs = sorted((f for f in frames if number(f["task_idx"]) == i), key=lambda f: number(f["idx"]))
        v.fact(len(row) == 1 and row[0]["runtime"] == t["runtime"] and row[0]["name"] == t.get("name")
               and row[0]["fn"] == t.get("fn") and row[0]["state"] == t["state"],
               "task %d (%s %s): runtime, name, fn, state" % (i, t["runtime"], t.get("name")))
        v.fact([frame_key(f) for f in fs] == [frame_key(f) for f in t["frames"]],
               "task %d: its %d frames (%s)" % (i, len(t["frames"]),
                                                ", ".join(sorted({f["kind"] for f in t["frames"]}))))


def check_loaded(v, report, loaded):
    v.fact(loaded["cause"]["kind"] == report["cause"]["kind"] and
           loaded["cause"]["summary"] == report["cause"]["summary"],
           "cause %s: %s" % (report["cause"]["kind"], report["cause"]["summary"]))
    got = {(w, k): b for w, k, b in waiters(loaded)}
    for waiter, key, b in waiters(report):
        g = got.get((waiter, key), "missing")
        if b is None or g is None or g == "missing":
            v.fact(b == g, "%s %s blocked_on %r, read back %r" % (waiter, key, b, g))
            continue
        for c in set(COLUMNS) | set(b):
            v.fact(same(c, b.get(c), g.get(c)),
                   "%s %s blocked_on.%s read back: %r, %r" % (waiter, key, c, b.get(c), g.get(c)))
    v.fact(loaded.get("deadlocks") == report.get("deadlocks"),
           "deadlocks read back: %s" % [d["summary"] for d in report.get("deadlocks", [])])
    want, back = report.get("tasks", []), loaded.get("tasks", [])
    v.fact(len(want) == len(back), "%d tasks read back, the report has %d" % (len(back), len(want)))
    for i, (t, g) in enumerate(zip(want, back)):
        v.fact(t.get("name") == g.get("name") and
               [frame_key(f) for f in t["frames"]] == [frame_key(f) for f in g["frames"]],
               "task %d (%s) read back with its name and frames" % (i, t.get("name")))


def main():
    v = Verdict()
    try:
        if sys.argv[1] == "rows":
            args = [load(p) for p in sys.argv[2:]]
            check_rows(v, *args)
        elif sys.argv[1] == "loaded":
            check_loaded(v, load(sys.argv[2]), load(sys.argv[3]))
        else:
            raise ValueError("no such check: " + sys.argv[1])
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        print("unreadable: %r" % e)
        return 1
    v.done()
    return 0


sys.exit(main())
