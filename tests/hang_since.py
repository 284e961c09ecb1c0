#!/usr/bin/env python3
"""How long each blocked thread has waited (blocked_on.since), read live,
from a snapshot, from a core and from a minidump.

    hang_since.py ASYNCORE PROG RUN_DIR CORE_TO_MINIDUMP

PROG is fixtures/hangs' program, run as `PROG since` in RUN_DIR with core
dumps on: its await_order thread writes "waiting TID" to its stdout just
before each read of its stdin, so the moment each wait starts is the moment
this script reads that line; crunch computes; tick sleeps 10 ms at a time.
The oracle is this script's own clock: a reading taken between BEFORE and
AFTER seconds into the wait says a since in [BEFORE - 1, AFTER + 1] (the
kernel's account leaves out what the CPU spent on interrupts and the
hypervisor's steal, a few per cent).  The waits are made at least MIN_WAIT
long by waiting that measured interval on the clock.

The stop of a reading wakes a sleeping thread (it runs to its ptrace stop
and back into its call), so a reading after another counts from when the
other let the process go: that is checked too.  A snapshot keeps what was
read when it was taken: its reports, however much later, say the same since
in JSON, text and HTML.  A core and a minidump cannot know: null.

Prints "PASS: ...", "FAIL: ..." or "SKIP: ..." lines.
"""
import html
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time

MIN_WAIT = 2.5      # seconds each wait lasts at least before it is read

asyncore, prog, run, to_minidump = sys.argv[1:5]
os.makedirs(run, exist_ok=True)


def result(ok, name, why):
    print("%s: hang-since-%s: %s" % ("PASS" if ok else "FAIL", name, why))


def core_dumps_on():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def asy(*args):
    """asyncore's stdout (its exit status may say warnings: 1)."""
    p = subprocess.run([asyncore, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if not 0 <= p.returncode <= 2:
        raise RuntimeError("asyncore %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.decode()[-300:]))
    return p.stdout.decode()


def report(target, *extra, fmt="json"):
    out = asy("report", *target, prog, "--threads", "each" if fmt != "json" else "all", "--format", fmt, *extra)
    return json.loads(out) if fmt == "json" else out


def measured(start, fn):
    """fn() and the seconds since START before and after it."""
    before = time.monotonic() - start
    value = fn()
    return value, before, time.monotonic() - start


def wait_out(start, seconds):
    """Until SECONDS have passed since START by the clock."""
    left = start + seconds - time.monotonic()
    if left > 0:
        time.sleep(left)


def wait_started(p):
    """The moment await_order said its wait starts, and its tid."""
    line = p.stdout.readline().decode()
    at = time.monotonic()
    m = re.match(r"waiting (\d+)$", line.strip())
    if not m:
        raise RuntimeError("the fixture said %r" % line)
    return at, int(m.group(1))


def by_tid(j):
    return {t["tid"]: t for t in j["threads"]}


def since_of(j, tid):
    return (by_tid(j).get(tid, {}).get("blocked_on") or {}).get("since")


def in_range(v, before, after):
    return isinstance(v, int) and before - 1 <= v <= after + 1


def ready_roles():
    path = os.path.join(run, "ready")
    deadline = time.monotonic() + 300     # only a broken fixture's bound
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise RuntimeError("the fixture never wrote its ready file")
        time.sleep(0.05)
    return {k: int(v) for k, v in (l.split() for l in open(path))}


def live_checks(p, roles):
    start, tid = wait_started(p)
    wait_out(start, MIN_WAIT)
    j, before, after = measured(start, lambda: report(["--pid", str(p.pid)]))
    got = since_of(j, tid)
    result(in_range(got, before, after), "live",
           "await_order waited %.2f~%.2f s by the clock, the live report says %s" % (before, after, got))
    threads = by_tid(j)
    crunch = threads.get(roles["crunch"], {})
    result(crunch.get("blocked_on") is None and crunch.get("state") == "R", "running",
           "crunch (state %s) on the CPU: blocked_on %s" % (crunch.get("state"), crunch.get("blocked_on")))
    result(*tick_agrees(threads.get(roles["tick"], {})))


def tick_agrees(t, header=None):
    """Whether tick, asleep 10 ms at a time (or caught runnable, state R),
    says so: (ok, name, why) for result()."""
    b = t.get("blocked_on") or {}
    if t.get("state") == "R":
        ok = not b and (header is None or ", for " not in header)
    else:
        ok = b.get("kind") == "sleep" and b.get("since") in (0, 1) and (
            header is None or re.search(r", for %s s$" % b.get("since"), header) is not None)
    return ok, "tick" if header is None else "tick-header", "tick in state %s has waited %s s in its %s%s" % (
        t.get("state"), b.get("since"), b.get("kind"), "" if header is None else ": %r" % header)


def snapshot_checks(p, roles):
    p.stdin.write(b"x")
    p.stdin.flush()
    start, tid = wait_started(p)
    wait_out(start, MIN_WAIT)
    snap = os.path.join(run, "since.core")
    _, before, after = measured(start, lambda: asy("snapshot", str(p.pid), "-o", snap))
    let_go = time.monotonic()
    # the live reading right after: the snapshot's stop woke the thread
    live, lb, la = measured(let_go, lambda: report(["--pid", str(p.pid)]))
    got_live = since_of(live, tid)
    result(in_range(got_live, lb, la + (after - before)), "after-a-stop",
           "a reading %.2f~%.2f s after the snapshot (which took %.2f s) counts from its stop: %s s" %
           (lb, la, after - before, got_live))
    first = report([snap])
    got = since_of(first, tid)
    result(in_range(got, before, after), "snapshot",
           "await_order waited %.2f~%.2f s when the snapshot was taken, its report says %s" % (before, after, got))
    # a reading of the snapshot well after it was taken says the same
    later_at = time.monotonic()
    wait_out(later_at, 1.5)
    again = report([snap])
    text = report([snap], fmt="text")
    page = report([snap], fmt="html")
    head = [l for l in text.splitlines() if l.startswith("Thread %d " % tid)]
    # the HTML summary: what it waits for in its span, how long after it
    summ = [html.unescape(s).rstrip() for s in
            re.findall(r'<summary>Thread %d [^<]*<span class="wait">[^<]*</span>([^<]*)<' % tid, page)]
    want = ", for %s s" % got
    ok = since_of(again, tid) == got and head and head[0].endswith(want) and summ == [want]
    result(ok, "snapshot-later", "%.1f s later: JSON %s, text %r, HTML %r" %
           (time.monotonic() - later_at, since_of(again, tid), head[:1], summ[:1]))
    heads = {int(m.group(1)): m.group(0) for m in re.finditer(r"^Thread (\d+) .*$", text, re.M)}
    result(*tick_agrees(by_tid(first).get(roles["tick"], {}), heads.get(roles["tick"], "")))
    crunch = heads.get(roles["crunch"], "")
    result(crunch.startswith("Thread %d (crunch):" % roles["crunch"]) and ", for " not in crunch,
           "running-header", "crunch's header says no wait: %r" % crunch)


def core_of(p):
    """The core an outside SIGABRT leaves, else gdb's gcore of the process."""
    pattern = open("/proc/sys/kernel/core_pattern").read().strip()
    if pattern and pattern[0] not in "|/":
        p.send_signal(signal.SIGABRT)
        p.wait(timeout=120)
        cores = [f for f in os.listdir(run) if f.startswith("core")]
        if cores:
            return os.path.join(run, cores[0])
        return None
    out = os.path.join(run, "gcore")
    subprocess.run(["gdb", "-batch", "-nx", "-q", "-p", str(p.pid), "-ex", "gcore " + out],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    return out if os.path.exists(out) else None


def dead_checks(p, roles):
    core = core_of(p)
    if not core:
        print("SKIP: hang-since-core: no core of the process")
        return
    j = report([core])
    tid = roles["await_order"]
    b = by_tid(j).get(tid, {}).get("blocked_on") or {}
    known = [t["tid"] for t in j["threads"] if (t.get("blocked_on") or {}).get("since") is not None]
    result(b.get("kind") == "io" and not known, "core",
           "await_order blocked in %s, no thread's since known (%s)" % (b.get("syscall"), known))
    text = report([core], fmt="text")
    result(not re.search(r"^Thread .*, for \d+ s$", text, re.M), "core-text", "no header says how long")
    md = os.path.join(run, "since.dmp")
    conv = subprocess.run([sys.executable, to_minidump, core, md], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
    if conv.returncode != 0:
        result(False, "minidump", "core_to_minidump.py: %s" % conv.stdout.decode()[-200:])
        return
    m = report([md])
    b = by_tid(m).get(tid, {}).get("blocked_on") or {}
    known = [t["tid"] for t in m["threads"] if (t.get("blocked_on") or {}).get("since") is not None]
    result(b.get("kind") == "io" and not known, "minidump",
           "await_order blocked in %s, no thread's since known (%s)" % (b.get("syscall"), known))


def main():
    p = subprocess.Popen([prog, "since"], cwd=run, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=open(os.path.join(run, "err"), "w"), preexec_fn=core_dumps_on)
    try:
        roles = ready_roles()
        live_checks(p, roles)
        snapshot_checks(p, roles)
        dead_checks(p, roles)
    except (RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError) as e:
        print("FAIL: hang-since: %s" % e)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


main()
