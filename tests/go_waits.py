#!/usr/bin/env python3
"""What fixtures/go_shop `prog leak`'s goroutines wait on, by gdb and the
Go runtime, against asyncore's `blocked_on` of each goroutine.

    go_waits.py globals PROG CORE|--pid PID     gdb's values of the globals as JSON
    go_waits.py check ASYNCORE.json GLOBALS.json RUNTIME.json [--proc DIR]

`globals`: gdb (language c) reads each global the fixture's goroutines
wait behind: a channel variable's value (the hchan it points at), a sync
object's address.  JSON {"main.orders": "0x...", ...}.

`check`: for each function of the fixture that waits behind a global
(the fixture's source says which: main.consume receives on main.orders,
main.payLedger locks main.muLedger, main.waitRestock waits on the Cond
main.restock points at, ...), the goroutines with a frame of
that function: as many in asyncore as in the runtime's dump
(RUNTIME.json, go_oracle.py runtime), each with blocked_on.object gdb's
address of the global, object_name the global's name, owner_tid null (Go's
sync objects record no holder), and the same in `wait`.  The goroutine in
Accept is in IO wait with an fd; with --proc, that fd of the live process
is a listening TCP socket: DIR holds what /proc/PID said while it ran,
`fds` (lines "N TARGET" of /proc/PID/fd/N) and `tcp`, `tcp6`
(/proc/PID/net).  The cause
names the biggest group as the runtime counts it: "N goroutines wait on
chan receive of main.orders in main.consume, created by F" (F the
runtime's `created by`).  Prints the first difference and exits 1, else one
line of what matched.
"""
import json
import os
import re
import subprocess
import sys

# function -> (the global it waits behind, whether the global holds a
# pointer to the object (a channel) or is the object)
WAITS = {
    "main.consume": ("main.orders", True),
    "main.holdLedgerLock": ("main.holdLedger", True),
    "main.payLedger": ("main.muLedger", False),
    "main.auditBooks": ("main.rwBooks", False),
    "main.rewriteBooks": ("main.rwBooks", False),
    "main.ship": ("main.wgShip", False),
    "main.waitRestock": ("main.restock", True),
    "main.waitShelf": ("main.shelf", False),
}


def gdb_globals(prog, target):
    names = sorted({g for g, _ in WAITS.values()})
    exprs = []
    for name in names:
        pointer = any(g == name and p for g, p in WAITS.values())
        exprs.append("print/x *(unsigned long *)&'%s'" % name if pointer
                     else "print/x (unsigned long)&'%s'" % name)
    cmd = ["gdb", "-batch", "-nx", "-iex", "set auto-load python-scripts off", "-ex", "set language c"]
    for e in exprs:
        cmd += ["-ex", e]
    cmd += [prog] + (["-p", target[1]] if target[0] == "--pid" else [target[0]])
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300).stdout
    values = re.findall(r"^\$\d+ = (0x[0-9a-f]+)$", out, re.M)
    if len(values) != len(names):
        sys.exit("gdb printed %d of %d globals: %s" % (len(values), len(names), out[-300:]))
    print(json.dumps(dict(zip(names, values))))


def functions(frames):
    return {f.get("function") for f in frames}


def listening_socket(proc, fd):
    links = dict(l.split(" ", 1) for l in open(os.path.join(proc, "fds")).read().splitlines() if " " in l)
    target = links.get(str(fd))
    if target is None:
        return "fd %d was not open" % fd
    m = re.match(r"socket:\[(\d+)\]$", target)
    if not m:
        return "fd %d is %s, no socket" % (fd, target)
    for table in ("tcp", "tcp6"):
        try:
            lines = open(os.path.join(proc, table)).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) > 9 and f[9] == m.group(1):
                return None if f[3] == "0A" else "fd %d: socket state %s, not LISTEN" % (fd, f[3])
    return "fd %d (%s) is in no TCP table" % (fd, target)


def check(asy_path, globals_path, rt_path, proc):
    asy = json.load(open(asy_path))
    glob = json.load(open(globals_path))
    rt = json.load(open(rt_path))
    tasks = [t for t in asy.get("tasks", []) if t.get("runtime") == "go"]
    diffs, matched = [], 0
    for fn, (name, _) in sorted(WAITS.items()):
        want = int(glob[name], 16)
        rt_n = sum(1 for g in rt["goroutines"] if fn in functions(g["frames"]))
        mine = [t for t in tasks if fn in functions(t.get("frames") or [])]
        if len(mine) != rt_n or not rt_n:
            diffs.append("%s: %d goroutines in asyncore, %d in the runtime's dump" % (fn, len(mine), rt_n))
            continue
        for t in mine:
            b, w = t.get("blocked_on") or {}, t.get("wait") or {}
            got = (b.get("object"), b.get("object_name"), w.get("address"), w.get("object_name"))
            if got != (hex(want), name, hex(want), name) or b.get("owner_tid") is not None:
                diffs.append("goroutine %s in %s: blocked_on/wait %r, owner %r; gdb says %s is %s"
                             % (t["id"], fn, got, b.get("owner_tid"), name, hex(want)))
            else:
                matched += 1
    io = [t for t in tasks if "main.acceptor" in functions(t.get("frames") or [])]
    fds = [(t.get("blocked_on") or {}).get("fd") for t in io]
    if len(io) != 1 or (io[0]["wait"] or {}).get("kind") != "IO wait" or not isinstance(fds[0], int):
        diffs.append("the goroutine in Accept: %r" % [(t["id"], t.get("wait"), f) for t, f in zip(io, fds)])
    elif proc:
        problem = listening_socket(proc, fds[0])
        if problem:
            diffs.append("the goroutine in Accept waits on fd %d, but %s" % (fds[0], problem))
    consumers = [g for g in rt["goroutines"] if "main.consume" in functions(g["frames"])]
    by = {(g.get("created_by") or {}).get("function") for g in consumers}
    states = {g["state"] for g in consumers}
    if len(by) == 1 and len(states) == 1:
        want = "%d goroutines wait on %s of main.orders in main.consume, created by %s" % (
            len(consumers), states.pop(), by.pop())
        summary = (asy.get("cause") or {}).get("summary") or ""
        if asy["cause"].get("kind") != "hang" or not summary.startswith(want + " ("):
            diffs.append("cause %s: %r, the runtime's dump says %r" % (asy["cause"].get("kind"), summary, want))
    else:
        diffs.append("the runtime's consumers: created by %r, states %r" % (by, states))
    if diffs:
        print("\n".join(diffs))
        sys.exit(1)
    print("%d goroutines wait on what gdb says (%d globals), the goroutine in Accept on fd %s%s; cause as the runtime counts"
          % (matched, len(glob), fds[0], " (a listening socket)" if proc else ""))


def main():
    a = sys.argv[1:]
    if len(a) >= 3 and a[0] == "globals":
        gdb_globals(a[1], a[2:])
    elif len(a) >= 4 and a[0] == "check":
        check(a[1], a[2], a[3], a[5] if len(a) > 5 and a[4] == "--proc" else None)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
