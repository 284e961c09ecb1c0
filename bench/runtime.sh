#!/usr/bin/env bash
# Runtime-description benchmark: what descriptions cost `asyncore report` on
# one core (bench/runtime/deep.c: 1,000 native frames, each with an entry on
# an array stack and one on a list).  The CPU time of each run (user +
# system: a shared machine stretches the wall clock, not this), medians of
# RUNS runs, the configurations interleaved:
#   none      no description at all
#   absent    the shipped SpiderMonkey and the toy descriptions, whose roots are not
#             in the core
#   array     the 1,000-entry array stack, placed by anchor (bench/runtime/array.json)
#   list      the 1,000-entry list through a thread-local, placed by owner (list.json)
# Budgets, for the text report: "absent" within 2 ms of "none" (nothing is
# read when the root is absent); "array" and "list" under 5 ms more than
# "none".  The JSON report is timed too: there the writer's own cost of
# 1,000 more frames shows.
# Usage: bench/runtime.sh /abs/path/asyncore   (RUNS to change the count)
set -u
ASYNCORE=${1:?usage: bench/runtime.sh /path/to/asyncore}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=$ROOT/bench/runtime
OUT=${BENCH_DIR:-$ROOT/build/bench/runtime}
RUNS=${RUNS:-21}
source "$ROOT/tests/lib.sh"

mkdir -p "$OUT"
gcc -std=c11 -g -O1 -fno-omit-frame-pointer -o "$OUT/prog" "$SRC/deep.c" || { echo "bench runtime: build failed"; exit 1; }
rm -rf "$OUT"/run-*
core=$(fixture_core "$OUT" 2>&1) || { echo "bench runtime: no core: $core"; exit 1; }
# A copy of asyncore with no share/ beside it, and no user descriptions:
# "none" is truly none.
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cp "$ASYNCORE" "$W/asyncore"
export XDG_CONFIG_HOME=$W/config
sync
echo "runtime: $(nproc) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg) (a busy machine inflates every number)"
python3 - "$W/asyncore" "$OUT/prog" "$core" "$RUNS" "$ROOT" <<'PY'
import json, os, statistics, subprocess, sys, time
asy, prog, core, runs, root = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
base = [asy, 'report', core, prog]
absent = ['--runtime', root + '/share/asyncore/runtimes/spidermonkey.json',
          '--runtime', root + '/fixtures/toyvm/toy-tls.json']
configs = {
    'none': [],
    'absent': absent,
    'array': ['--runtime', root + '/bench/runtime/array.json'],
    'list': ['--runtime', root + '/bench/runtime/list.json'],
}

def entries(extra):
    r = subprocess.run(base + extra + ['--format', 'json'], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit('bench runtime: exit %d: %s' % (r.returncode, r.stderr.strip()[:200]))
    j = json.loads(r.stdout)
    return sum(f['kind'] in ('script', 'label') for t in j['threads'] for f in t['frames'])

def cpu_ms(cmd):
    # The child's own CPU time: a machine shared with other work stretches
    # the wall clock, not this.
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, ru = os.wait4(p.pid, 0)
    p.returncode = 0
    return (ru.ru_utime + ru.ru_stime) * 1000

n = {name: entries(extra) for name, extra in configs.items()}
ok = True
for fmt in ('text', 'json'):
    times = {name: [] for name in configs}
    for _ in range(runs):            # interleaved, so drift hits every configuration alike
        for name, extra in configs.items():
            times[name].append(cpu_ms(base + extra + ['--format', fmt]))
    med = {name: statistics.median(v) for name, v in times.items()}
    print('  --format %s, CPU time (user + system), median of %d runs:' % (fmt, runs))
    for name in configs:
        print('    %-7s %4d entries  %7.2f ms  (%+.2f ms)' % (name, n[name], med[name],
                                                           med[name] - med['none']))
    if fmt != 'text':
        continue                     # JSON: the writer's own cost of 1,000 more frames, shown
    if med['absent'] - med['none'] >= 2:
        print('  FAIL: descriptions whose root is absent cost %.2f ms (budget 2)'
              % (med['absent'] - med['none']))
        ok = False
    for name in ('array', 'list'):
        if n[name] != 1000 or med[name] - med['none'] >= 5:
            print('  FAIL: the 1,000-entry %s stack: %d entries, %.2f ms (budget 5)'
                  % (name, n[name], med[name] - med['none']))
            ok = False
sys.exit(0 if ok else 1)
PY
