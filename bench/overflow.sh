#!/usr/bin/env bash
# Stack-overflow benchmark: the mutual recursion of fixtures/recursion (-O2)
# overflowing the main thread's 8 MiB stack (~260,000 frames).  Times
# `asyncore report CORE PROG` (text and JSON: the whole stack unwound, the
# cycle collapsed) against gdb's `bt` (every frame) and `eu-stack -i -s -m`
# (which stops at its default 256 frames) on the same core in the same run,
# interleaved; prints medians, peak RSS and ratios.
# Usage: bench/overflow.sh /abs/path/asyncore   (RUNS, GDB_RUNS to change counts)
# Target: under 1 s and under 200 MB peak RSS for text and JSON.
set -u
ASYNCORE=${1:?usage: bench/overflow.sh /path/to/asyncore}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${BENCH_DIR:-$ROOT/build/bench/overflow}
RUNS=${RUNS:-7}
GDB_RUNS=${GDB_RUNS:-3}
source "$ROOT/bench/lib.sh"

echo "overflow: $(nproc) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg) (a busy machine inflates every number)"
mkdir -p "$OUT"
if ! gcc -O2 -g -pthread -o "$OUT/prog" "$ROOT/fixtures/recursion/main.c"; then
	echo "build failed"; exit 1
fi
if ! core=$(ulimit -s 8192 && make_core "$OUT" mutual); then
	echo "no core could be made (core_pattern: $(cat /proc/sys/kernel/core_pattern))"; exit 1
fi
sync
python3 - "$ASYNCORE" "$OUT/prog" "$core" "$RUNS" "$GDB_RUNS" "$ROOT/bench" <<'PY'
import json, os, resource, shutil, statistics, subprocess, sys
asy, prog, core, runs, gdb_runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
sys.path.insert(0, sys.argv[6])
import timing

r = subprocess.run([asy, 'report', core, prog, '--format', 'json'], capture_output=True, text=True)
try:
    t = json.loads(r.stdout)['threads'][0]
    rec = t['recursion']
    frames_seen = '%d frames' % (t['frames'][-1]['index'] + 1)
    print('  core %.1f MiB; asyncore: %d frames unwound, %d shown, cycle %s x %d'
          % (os.path.getsize(core) / 2**20, t['frames'][-1]['index'] + 1, len(t['frames']),
             ' < '.join(rec['cycle']), rec['repeats']))
except (ValueError, KeyError, IndexError, TypeError) as e:
    print('  asyncore output unusable (exit %d): %s' % (r.returncode, (r.stderr or str(e)).strip()[:200]))
    sys.exit(1)

rows = [dict(name='asyncore (json)', cmd=[asy, 'report', core, prog, '--format', 'json'], runs=runs),
        dict(name='asyncore (text)', cmd=[asy, 'report', core, prog, '--format', 'text'], runs=runs)]
if shutil.which('eu-stack'):
    rows.append(dict(name='eu-stack -i -s -m (256 frames)',
                     cmd=['eu-stack', '-i', '-s', '-m', '--core=' + core, '-e', prog], runs=runs))
if shutil.which('gdb'):
    rows.append(dict(name='gdb bt (every frame)', cmd=['gdb', '-batch', '-nx', '-ex', 'set print frame-arguments none',
                     '-ex', 'bt', prog, core], runs=gdb_runs))
def cpu_ms(cmd, n=5):
    """Median CPU time (user + system) of N runs of CMD: what a loaded
    machine does not inflate as it does the wall time."""
    times = []
    for _ in range(n):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return statistics.median(times)

print('  load average before: %s' % timing.load())
res = timing.measure(rows)
print('  load average after:  %s' % timing.load())
a, tx = res.get('asyncore (json)'), res.get('asyncore (text)')
for name in res:
    if not name.startswith('asyncore') and a:
        print('  ratio %-32s %8.2fx vs asyncore json%s' % (
            name, res[name][0] / a[0], ', %.2fx vs text' % (res[name][0] / tx[0]) if tx else ''))
if not a or not tx:
    sys.exit(1)
for r in rows[:2]:
    print('  %-34s median CPU time %6.1f ms (user + system)' % (r['name'], cpu_ms(r['cmd'])))
ok = all(x[0] < 1000 and x[1] < 200 * 1024 for x in (a, tx))
print('  target under 1 s and 200 MB (text and json): %s' % ('met' if ok else 'NOT met'))
for form, x in (('json', a), ('text', tx)):
    timing.record('overflow: report --format %s, %s' % (form, frames_seen),
                  '%.0f ms, %.0f MB' % (x[0], x[1] / 1024), '< 1 s, < 200 MB', x[0] < 1000 and x[1] < 200 * 1024)
sys.exit(0)
PY
