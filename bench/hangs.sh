#!/usr/bin/env bash
# What the hang analysis (blocked_on, the GIL, the wait-for graph) costs:
# stacks.sh's sparse core (201 threads x ~80 frames on 8 MiB stacks),
# `report --format json` and `--format text` with it and without it
# (ASYNCORE_BENCH_NO_HANGS, which skips only it), interleaved in the same
# run, wall and CPU time (user + system: a shared machine's load swings the
# wall time more than the cost measured; valgrind's instruction count,
# where installed, not at all); and the live pause
# (`process.paused_us`) of fixtures/hangs' pool (6 threads) read with and
# without it.
# Usage: bench/hangs.sh /abs/path/asyncore   (RUNS to change the count)
# Target: the report's instructions (else its CPU time) within +10% of the
# one without the hang analysis; the pause within +1 ms of the one without
# it.
set -u
ASYNCORE=${1:?usage: bench/hangs.sh /path/to/asyncore}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${BENCH_DIR:-$ROOT/build/bench/hangs}
RUNS=${RUNS:-21}
status=0
source "$ROOT/bench/lib.sh"

echo "hangs: $(nproc) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg) (a busy machine inflates every number)"
d=$OUT/sparse
mkdir -p "$d"
if ! { gcc -O2 -g -fomit-frame-pointer -DDEFAULT_STACKS -fPIC -shared -o "$d/libbench.so" "$ROOT/bench/stacks/lib.c" &&
       gcc -O2 -g -fomit-frame-pointer -DDEFAULT_STACKS -pthread -o "$d/prog" "$ROOT/bench/stacks/stacks.c" \
	   -L"$d" -lbench -Wl,-rpath,'$ORIGIN'; }; then
	echo "build failed"; exit 1
fi
if ! core=$(make_core "$d"); then
	echo "no core could be made"; exit 1
fi
sync
gcc -O2 -g -pthread -o "$OUT/hangs" "$ROOT/fixtures/hangs/main.c" || { echo "fixture build failed"; exit 1; }
python3 - "$ASYNCORE" "$d/prog" "$core" "$RUNS" "$ROOT/bench" "$OUT" <<'PY' || status=1
import json, os, re, resource, shutil, statistics, subprocess, sys, time
asy, prog, core, runs, bench, out = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6]
sys.path.insert(0, bench)
import timing

def without():
    e = dict(os.environ)
    e['ASYNCORE_BENCH_NO_HANGS'] = '1'
    return e

def cpu_ms(cmd, env):
    """(wall ms, CPU ms: user + system) of one run."""
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    return (t1 - t0) * 1000, (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000

# Wall time swings with a shared machine's load, the CPU time less, the
# instructions executed not at all: the verdict on the instructions where
# valgrind is installed, else on the CPU time.
print('  load average before: %s' % timing.load())
ok = True
counted = shutil.which('valgrind') is not None
for form in ('json', 'text'):
    cmd = [asy, 'report', core, prog, '--format', form, '--threads', 'all']
    got = {'with': [], 'without': []}
    cpu_ms(cmd, None)
    for i in range(runs):
        for k in ('with', 'without'):
            got[k].append(cpu_ms(cmd, without() if k == 'without' else None))
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in got.items()}
    pct_wall = (med['with'][0] - med['without'][0]) / med['without'][0] * 100
    pct_cpu = (med['with'][1] - med['without'][1]) / med['without'][1] * 100
    print('  report %s: median %.1f ms wall, %.1f ms CPU with the hang analysis; %.1f ms wall, %.1f ms CPU '
          'without (%d runs each): %+.1f%% wall, %+.1f%% CPU'
          % (form, med['with'][0], med['with'][1], med['without'][0], med['without'][1], runs, pct_wall, pct_cpu))
    if counted:   # the instructions decide; the times are figures
        timing.record('hangs: sparse core report --format %s, hang analysis (CPU time)' % form,
                      '%+.1f%%' % pct_cpu, '(figure)', True)
    else:
        timing.record('hangs: sparse core report --format %s, hang analysis (CPU time)' % form,
                      '%+.1f%%' % pct_cpu, '<= +10%', pct_cpu <= 10)
        ok = ok and pct_cpu <= 10

# Instructions (valgrind's callgrind, where installed): the same measure,
# free of the machine's load.
if counted:
    def instructions(env):
        log = os.path.join(out, 'callgrind.log')
        subprocess.run(['valgrind', '--tool=callgrind', '--callgrind-out-file=/dev/null', '--log-file=' + log,
                        asy, 'report', core, prog, '--format', 'json', '--threads', 'all'],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        m = re.search(r'Collected : (\d+)', open(log).read())
        return int(m.group(1)) if m else None
    a, b = instructions(None), instructions(without())
    if a and b:
        pct = (a - b) / b * 100
        print('  report json: %.1f M instructions with the hang analysis, %.1f M without: %+.2f%%'
              % (a / 1e6, b / 1e6, pct))
        timing.record('hangs: sparse core report --format json, hang analysis (instructions)', '%+.2f%%' % pct,
                      '<= +10%', pct <= 10)
        ok = ok and pct <= 10

# the live pause: the pool fixture, read alternately with and without it
run = os.path.join(out, 'run-pool')
os.makedirs(run, exist_ok=True)
if os.path.exists(os.path.join(run, 'ready')):
    os.unlink(os.path.join(run, 'ready'))
p = subprocess.Popen([os.path.join(out, 'hangs'), 'pool'], cwd=run, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    for _ in range(600):
        if os.path.exists(os.path.join(run, 'ready')):
            break
        time.sleep(0.05)
    pauses = {'with': [], 'without': []}
    for i in range(runs):
        for k in ('with', 'without'):
            r = subprocess.run([asy, 'report', '--pid', str(p.pid), os.path.join(out, 'hangs'), '--format', 'json'],
                               capture_output=True, text=True, env=without() if k == 'without' else None)
            try:
                pauses[k].append(json.loads(r.stdout)['process']['paused_us'])
            except (ValueError, KeyError, TypeError):
                pass
finally:
    p.kill()
    p.wait()
if pauses['with'] and pauses['without']:
    a, b = statistics.median(pauses['with']), statistics.median(pauses['without'])
    print('  live pause (pool, 6 threads): median %.3f ms with the hang analysis, %.3f ms without (%d runs each)'
          % (a / 1000, b / 1000, len(pauses['with'])))
    timing.record('hangs: live pause, hang analysis', '%+.3f ms' % ((a - b) / 1000), '<= +1 ms', a - b <= 1000)
    ok = ok and a - b <= 1000
else:
    print('  live pause: no reading')
    ok = False
print('  load average after:  %s' % timing.load())
print('  targets (report %s <= +10%%, pause <= +1 ms): %s' % ('instructions' if counted else 'CPU time', 'met' if ok else 'NOT met'))
PY
exit $status
