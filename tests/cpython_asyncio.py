"""Check the asyncio tasks of a report against fixtures/hangs/asyncio_tasks.py's
own account of them (its tasks.txt; see the fixture for the format).

usage: cpython_asyncio.py REPORT.json TASKS.txt NAME [DAMAGE TASK]
Without DAMAGE: every pending task is listed once (runtime "asyncio", id its
address) with its name, its state, its await chain innermost first and the
type of the future it awaits (none for the one running); a task awaiting a
task names it as its wait's target.
DAMAGE says what the test wrote into the core for the task named
TASK (the first whose FRAMES hold that text):
  cycle    what its innermost coroutine awaits points back to its coroutine
  garbage  ... points to garbage
  gclist   the collector's link from the task to the next object is garbage
  gccycle  ... points back to the task (a cycle)
Prints PASS/FAIL lines."""
import json
import re
import sys


def oracle(path):
    tasks = {}
    for line in open(path):
        name, frames, awaited, tid, chain, last, state = line.rstrip("\n").split("|")
        tasks[int(tid)] = {"name": name, "frames": frames.split(";") if frames else [], "state": state,
                           "awaited": awaited, "chain": [int(x) for x in chain.split(",") if x],
                           "last": int(last)}
    return tasks


def listed(j):
    return {int(t["id"], 16): t for t in j.get("tasks", []) if t["runtime"] == "asyncio"}


def differs(want, got):
    frames = [f["function"] for f in got["frames"]]
    kind = (got["wait"] or {}).get("kind")
    bad = []
    if got.get("name") != want["name"]:
        bad.append("name %r" % got.get("name"))
    if frames != want["frames"]:
        bad.append("frames %s" % frames)
    if kind != (want["awaited"] or None):
        bad.append("awaits %r" % kind)
    if got["state"] != want["state"]:
        bad.append("state %r" % got["state"])
    return bad


def check_all(name, j, want, got):
    bad = []
    for tid, w in sorted(want.items()):
        g = got.get(tid)
        if g is None:
            bad.append("%s (0x%x) missing" % (w["name"], tid))
        else:
            bad += ["%s: %s" % (w["name"], d) for d in differs(w, g)]
    bad += ["0x%x is no pending task" % t for t in got if t not in want]
    if bad:
        print("FAIL: %s: %s" % (name, "; ".join(bad)))
    else:
        print("PASS: %s: %d tasks, each with the runtime's name, state, await chain and awaited "
              "future" % (name, len(want)))
    running = [w for w in want.values() if w["state"] == "running"]
    summary = j["cause"]["summary"]
    if running and j["cause"]["kind"] == "hang" and running[0]["frames"][0] in summary:
        print("PASS: %s: the cause names the running task's line: %s" % (name, summary.split(" (process")[0]))
    elif running:
        print("FAIL: %s: the cause '%s' does not name %s" % (name, summary, running[0]["frames"][0]))
    by_name = {w["name"]: t for t, w in want.items()}
    joiner, slow = by_name.get("joiner"), by_name.get("slow")
    target = ((got.get(joiner) or {}).get("wait") or {}).get("target")
    if joiner and slow and target == "0x%x" % slow:
        print("PASS: %s: the task awaiting a task names it" % name)
    else:
        print("FAIL: %s: the joiner's wait target %r, the task it awaits 0x%x"
              % (name, target, slow or 0))


def pick(want, prefix):
    for tid, w in want.items():
        if prefix in ";".join(w["frames"]):
            return tid
    raise SystemExit("no task with frames %r" % prefix)


def check_damage(name, j, want, got, damage, prefix):
    tid = pick(want, prefix)
    w, g = want[tid], got.get(tid)
    warnings = "\n".join(j["warnings"])
    others = [differs(want[t], got[t]) for t in want if t != tid and t in got]
    if damage == "cycle":
        ok = (g is not None and [f["function"] for f in g["frames"]] == w["frames"] and
              re.search(r"asyncio: task 0x%x: the await chain repeats \(a cycle\) at 0x%x; cut there"
                        % (tid, w["chain"][0]), warnings))
        what = "a cycle in the await chain: warned, the task's frames kept"
    elif damage == "garbage":
        ok = (g is not None and [f["function"] for f in g["frames"]] == w["frames"] and
              re.search(r"asyncio: task 0x%x: the object 0x4141414141414140 it awaits has no "
                        r"readable type; the chain is cut there" % tid, warnings))
        what = "an awaited object of garbage: warned, the task's frames kept"
    elif damage == "gccycle":
        ids = [t["id"] for t in j.get("tasks", [])]
        ok = (re.search(r"asyncio: generation \d's list is cut at 0x%x: the next object 0x%x "
                        r"does not link back" % (tid - 16, tid - 16), warnings) and
              tid in got and len(ids) == len(set(ids)) and all(t in want for t in got))
        what = "a cycle in a collector's list: warned, the task listed once"
        others = [differs(want[t], got[t]) for t in want if t in got]
    else:
        ok = (re.search(r"asyncio: generation \d's list is cut at 0x%x: the next object "
                        r"0x4141414141414140 (does not link back|is not readable)" % (tid - 16), warnings) and
              all(t in want for t in got))
        what = "a collector's list of garbage: warned, the tasks before it listed"
        others = [differs(want[t], got[t]) for t in want if t in got]
    ok = ok and not any(others)
    print("%s: %s: %s%s" % ("PASS" if ok else "FAIL", name, what,
                            "" if ok else ": task %s, warnings %r, others %s" %
                            (json.dumps(g and [f["function"] for f in g["frames"]]), warnings, others)))


def main():
    report, tasks_txt, name = sys.argv[1:4]
    j = json.load(open(report))
    want, got = oracle(tasks_txt), listed(j)
    if len(sys.argv) > 4:
        check_damage(name, j, want, got, sys.argv[4], sys.argv[5])
    else:
        check_all(name, j, want, got)


main()
