"""Timing shared by the benchmarks: every command's runs interleaved in
rounds (a load that comes and goes on a shared machine falls on all of them
alike), the median wall time and each command's own peak RSS.

The peak RSS comes from GNU time (Debian's `time`): a process forked from
this interpreter would report the interpreter's own peak, which the kernel
carries over exec."""
import os
import statistics
import subprocess
import tempfile
import time

GNU_TIME = '/usr/bin/time'


def run_once(cmd, env=None):
    """(seconds, peak RSS in KiB, exit status) of one run, output discarded."""
    with tempfile.NamedTemporaryFile('r') as rss:
        t0 = time.perf_counter()
        rc = subprocess.run([GNU_TIME, '-f', '%M', '-o', rss.name] + cmd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env).returncode
        elapsed = time.perf_counter() - t0
        lines = rss.read().split()
    return elapsed, int(lines[-1]) if lines and lines[-1].isdigit() else 0, rc


def measure(rows):
    """ROWS: dicts with name, cmd, runs and optionally env (a function
    returning the environment of one run, called before it).  Each command
    runs once untimed (the first reader of a fresh core pays for its
    write-back), then in rounds.  Returns {name: (median ms, peak RSS KiB)},
    leaving out commands that failed (exit status other than 0 and 1)."""
    res, times, rss, failed = {}, {}, {}, set()
    for r in rows:
        env = r['env']() if r.get('env') else None
        if run_once(r['cmd'], env)[2] not in (0, 1):
            failed.add(r['name'])
    for i in range(max(r['runs'] for r in rows)):
        for r in rows:
            if i >= r['runs'] or r['name'] in failed:
                continue
            env = r['env']() if r.get('env') else None
            t, m, rc = run_once(r['cmd'], env)
            if rc not in (0, 1):
                failed.add(r['name'])
            times.setdefault(r['name'], []).append(t)
            rss[r['name']] = max(rss.get(r['name'], 0), m)
    for r in rows:
        if r['name'] in failed:
            print('  %-34s failed' % r['name'])
        elif r['name'] not in times:
            print('  %-34s not run' % r['name'])
        else:
            med = statistics.median(times[r['name']]) * 1000
            res[r['name']] = (med, rss[r['name']])
            print('  %-34s median %8.1f ms over %2d runs, peak RSS %6.1f MB'
                  % (r['name'], med, r['runs'], rss[r['name']] / 1024))
    return res


def load():
    with open('/proc/loadavg') as f:
        return ' '.join(f.read().split()[:3])


def record(name, value, target, met):
    """One row of the table bench/run prints at the end (when BENCH_RESULTS
    names its file): what was measured, the figure, the target, met or not."""
    path = os.environ.get('BENCH_RESULTS')
    if path:
        with open(path, 'a') as f:
            f.write('%s\t%s\t%s\t%s\n' % (name, value, target, 'met' if met else 'NOT met'))
