#!/usr/bin/env bash
# Live benchmark: how long a hung program is stopped while a tool reads every
# thread's stack, measured the same way for every tool: by the program itself
# (fixtures/live_hang's watcher thread sleeps 1 ms at a time and records the
# longest gap it sees), and the tool's whole time.  Three programs: 6 threads
# (a deadlock, a condition wait, a spinner, the watcher, main), 202 threads
# (200 parked 80 frames deep) and 2002 threads (2000 parked 20 deep; gdb
# once: it takes seconds a thread hundred).  Tools: `asyncore report --pid` (text,
# all threads; its own paused_us too), gdb's attach + `thread apply all bt`,
# `eu-stack -p`.
# Usage: bench/live.sh /abs/path/asyncore   (RUNS, GDB_RUNS to change counts)
# Target: a pause of at most 10 ms for the small program, at most 50 ms for
# 202 threads; 2002 threads: a scale check, no target.
set -u
ASYNCORE=${1:?usage: bench/live.sh /path/to/asyncore}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${BENCH_DIR:-$ROOT/build/bench/live}
RUNS=${RUNS:-7}
GDB_RUNS=${GDB_RUNS:-3}
mkdir -p "$OUT"
gcc -O2 -g -pthread -Wno-infinite-recursion -o "$OUT/prog" "$ROOT/fixtures/live_hang/main.c" || exit 1
echo "live: $(nproc) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg) (a busy machine inflates every number)"

PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done' EXIT
status=0
for mode in all deep:200:80 deep:2000:20; do
	gap=$OUT/gap-$$
	"$OUT/prog" "$mode" "$gap" >"$OUT/prog.out" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	for i in $(seq 200); do grep -q ready "$OUT/prog.out" && break; sleep 0.02; done
	sleep 0.5
	python3 - "$ASYNCORE" "$OUT/prog" "$pid" "$gap" "$mode" "$RUNS" "$GDB_RUNS" <<'PY' || status=1
import os, re, signal, statistics, subprocess, sys, time
asy, prog, pid, gap, mode, runs, gdb_runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6]), int(sys.argv[7])

def inside():
    """The watcher's longest gap (us) since the last call, and its counter."""
    try:
        os.unlink(gap)
    except FileNotFoundError:
        pass
    os.kill(pid, signal.SIGUSR1)
    for _ in range(200):
        if os.path.exists(gap) and os.path.getsize(gap) > 0:
            break
        time.sleep(0.01)
    g, c = open(gap).read().split()
    return int(g), int(c)

def measure(cmd):
    inside()
    time.sleep(0.05)
    t0 = time.monotonic()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    time.sleep(0.05)
    g, _ = inside()
    m = re.search(r"stopped for (\d+)\.(\d+) ms", r.stdout)
    own = int(m.group(1)) * 1000 + int(m.group(2)) if m else None
    return g, wall, own

threads = len(os.listdir("/proc/%d/task" % pid))
inside(); time.sleep(0.3); idle, _ = inside()
print("== %s: %d threads (the watcher's longest gap when nothing reads it: %.1f ms)" % (mode, threads, idle / 1000))
tools = [
    ("asyncore report --pid", [asy, "report", "--pid", str(pid), prog], runs),
    ("gdb -p, thread apply all bt", ["gdb", "-batch", "-nx", "-p", str(pid), "-ex", "thread apply all bt"],
     min(gdb_runs, 1) if threads > 1000 else gdb_runs),
    ("eu-stack -p", ["eu-stack", "-p", str(pid)], runs),
]
results = {}
for name, cmd, n in tools:
    if subprocess.run(["which", cmd[0]], capture_output=True).returncode:
        print("  %-30s not installed" % name)
        continue
    rs = [measure(cmd) for _ in range(n)]
    gaps = [r[0] / 1000 for r in rs]
    walls = [r[1] * 1000 for r in rs]
    owns = [r[2] / 1000 for r in rs if r[2] is not None]
    results[name] = statistics.median(gaps)
    print("  %-30s pause %7.1f ms (median of %d, range %.1f-%.1f), whole %7.1f ms%s" % (
        name, statistics.median(gaps), n, min(gaps), max(gaps), statistics.median(walls),
        ", asyncore's own count %.1f ms" % statistics.median(owns) if owns else ""))
target = {"all": 10, "deep:200:80": 50}.get(mode)
a = results.get("asyncore report --pid")
if a is not None and target is not None:
    print("  target: pause <= %d ms: %s" % (target, "met" if a <= target else "NOT met"))
PY
	kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
done
exit $status
