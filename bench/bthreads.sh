#!/usr/bin/env bash
# bthread benchmark: a core of fixtures/bthread scaled to 10,000 suspended
# idle bthreads (each on its own 32 KiB mmap'd stack with a guard page, as
# bRPC allocates them: about 20,000 segments in the core).  Times the text
# and JSON reports, each against the same report with --no-tasks (the rest of
# the analysis), and prints medians of wall time, CPU time and peak RSS, and
# what the bthreads cost: CPU and RSS per bthread.
# Usage: bench/bthreads.sh /abs/path/asyncore [IDLE]   (RUNS to change counts)
# Target: the text and the JSON report of the core each in under 1 s and
# under 100 MB of peak RSS.
set -u
ASYNCORE=${1:?usage: bench/bthreads.sh /path/to/asyncore [IDLE]}
IDLE=${2:-10000}
RUNS=${RUNS:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tests/lib.sh"

dir=$(fixture_build bthread) || { echo "bench bthreads: cannot build fixtures/bthread" >&2; exit 1; }
core_pattern_is_local || { echo "bench bthreads: core_pattern is not a plain file name" >&2; exit 1; }
run=$ROOT/build/bench/bthreads
rm -rf "$run"; mkdir -p "$run"
( (cd "$run" && ulimit -c unlimited && exec "$dir/prog" "$IDLE") >/dev/null 2>&1 ) 2>/dev/null
core=$(ls "$run"/core* 2>/dev/null | head -1)
[ -n "$core" ] || { echo "bench bthreads: no core" >&2; exit 1; }
sync

echo "bthreads: $(nproc) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg) (a busy machine inflates every number)"
# The counts come from a python of their own: the one that measures stays
# small, since a child's peak RSS starts from its parent's at the fork.
counts=$("$ASYNCORE" report "$core" "$dir/prog" --format json 2>/dev/null | python3 -c '
import json, sys
tasks = json.load(sys.stdin)["tasks"]
states = {}
for t in tasks:
    states[t["state"]] = states.get(t["state"], 0) + 1
print(len(tasks), ", ".join("%d %s" % (v, k) for k, v in sorted(states.items())))')
python3 - "$ASYNCORE" "$dir/prog" "$core" "$RUNS" "$counts" <<'PY'
import os, statistics, subprocess, sys
asy, prog, core, runs, counts = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]

def measure(args):
    """Median wall s, CPU s and peak RSS MB of RUNS runs (after one untimed)."""
    out = []
    for i in range(runs + 1):
        t0 = os.times().elapsed
        p = subprocess.Popen([asy] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = os.times().elapsed - t0
        if os.waitstatus_to_exitcode(status) > 1:
            sys.exit('asyncore %s: exit %d' % (' '.join(args), os.waitstatus_to_exitcode(status)))
        if i:
            out.append((wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024))
    return tuple(statistics.median(x[k] for x in out) for k in range(3))

n, states = counts.split(' ', 1)
n = int(n)
if n == 0:
    sys.exit('bench bthreads: the report lists no bthreads')
size = os.path.getsize(core)
print('== bthreads: %d in the core (%s), core %.0f MB (%.0f MB on disk), %d segments'
      % (n, states, size / 2**20, os.stat(core).st_blocks * 512 / 2**20,
         int(subprocess.run(['sh', '-c', 'readelf -lW %s | grep -c LOAD' % core],
                            capture_output=True, text=True).stdout or 0)))
status = 0
for fmt in ('text', 'json'):
    base = ['report', core, prog, '--format', fmt]
    wall, cpu, rss = measure(base)
    wall0, cpu0, rss0 = measure(base + ['--no-tasks'])
    print('%-4s report: %6.3f s wall, %6.3f s CPU, %5.0f MB peak RSS | --no-tasks: %6.3f s wall, '
          '%6.3f s CPU, %5.0f MB' % (fmt, wall, cpu, rss, wall0, cpu0, rss0))
    print('     the bthreads: %+.3f s CPU (%.1f us per bthread), %+.0f MB (%.1f KB per bthread)'
          % (cpu - cpu0, 1e6 * (cpu - cpu0) / n, rss - rss0, 1024 * (rss - rss0) / n))
    ok = wall < 1.0 and rss < 100
    print('     target: under 1 s and under 100 MB: %s' % ('met' if ok else 'MISSED'))
    status |= 0 if ok else 1
print('     (CPU counts both threads: the JSON report hashes the whole file for core.sha256 on a '
      'thread of its own, beside the analysis)')
sys.exit(status)
PY
