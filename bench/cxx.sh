#!/usr/bin/env bash
# C++ benchmark: a real-sized C++ program (bench/cxx: over 10 MB of
# .debug_info from generated template-heavy units and Boost, a shared library,
# coroutines on the folly async-stack ABI with a suspended chain) crashed with
# 11 threads.  Times asyncore's full report (native frames, lines, inlines,
# arguments, async splice, suspended chains) with its debug-file cache cold
# (ASYNCORE_CACHE_DIR an empty directory each run) and warm, against gdb's
# `thread apply all bt` and `eu-stack -i -s -m` on the same core, the runs of
# every tool interleaved; prints medians, peak RSS and ratios.
# Usage: bench/cxx.sh /abs/path/asyncore   (RUNS, GDB_RUNS to change counts)
# Target: >= 15x faster than gdb and >= 4x faster than eu-stack, cold and
# warm, with a peak RSS below both.
set -u
ASYNCORE=${1:?usage: bench/cxx.sh /path/to/asyncore}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${BENCH_DIR:-$ROOT/build/bench}/cxx
RUNS=${RUNS:-11}
GDB_RUNS=${GDB_RUNS:-3}
source "$ROOT/bench/lib.sh"

echo "== cxx: a C++ program with Boost, generated templates and folly-ABI coroutines"
if [ ! -d /usr/include/boost/geometry ]; then
	echo "  installing libboost-dev (the benchmark's headers)..."
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libboost-dev >/dev/null 2>&1 ||
		{ echo "  bench cxx: libboost-dev could not be installed"; exit 1; }
fi
mkdir -p "$OUT"
if ! bash "$ROOT/bench/cxx/build.sh" "$OUT" >"$OUT.log" 2>&1; then
	echo "  bench cxx: the program did not build: $(tail -3 "$OUT.log")"; exit 1
fi
if ! core=$(make_core "$OUT"); then
	echo "  bench cxx: no core could be made (core_pattern: $(cat /proc/sys/kernel/core_pattern))"; exit 1
fi
sync   # the fresh core's write-back is not part of anyone's time
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
python3 - "$ASYNCORE" "$OUT/prog" "$OUT/libcxxbench.so" "$core" "$RUNS" "$GDB_RUNS" "$ROOT/bench" "$W" <<'PY'
import json, os, shutil, subprocess, sys, tempfile
asy, prog, lib, core, runs, gdb_runs, bench, work = sys.argv[1:9]
runs, gdb_runs = int(runs), int(gdb_runs)
sys.path.insert(0, bench)
import timing

def debug_info_size(path):
    out = subprocess.run(['readelf', '-S', '-W', path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.replace('[ ', '[').split()
        if len(f) > 5 and f[1] == '.debug_info':
            return int(f[5], 16)
    return 0

warm = os.path.join(work, 'warm-cache')
os.mkdir(warm)
def env_with(cache):
    e = dict(os.environ)
    e['ASYNCORE_CACHE_DIR'] = cache
    return e
def cold():
    return env_with(tempfile.mkdtemp(dir=work))
def warmed():
    return env_with(warm)

# What the report holds, so the numbers compare like with like.
r = subprocess.run([asy, 'report', core, prog, '--format', 'json'], capture_output=True, text=True, env=warmed())
try:
    j = json.loads(r.stdout)
    frames = [f for t in j['threads'] for f in t['frames']]
    print('  .debug_info: prog %.1f MB, libcxxbench.so %.1f MB; core %.1f MB' % (
        debug_info_size(prog) / 1e6, debug_info_size(lib) / 1e6, os.path.getsize(core) / 1e6))
    print('  asyncore: %d threads, %d frames (%d async, %d inlined, %d with arguments), '
          '%d suspended chains of %d frames' % (
          len(j['threads']), len(frames), sum(f['kind'] == 'async' for f in frames),
          sum(bool(f['inlined']) for f in frames), sum(bool(f.get('args')) for f in frames),
          len(j['suspended']), sum(len(s['frames']) for s in j['suspended'])))
except (ValueError, KeyError) as e:
    print('  asyncore output unusable (exit %d): %s' % (r.returncode, (r.stderr or str(e)).strip()[:200]))
    sys.exit(1)

report = [asy, 'report', core, prog]
rows = [dict(name='asyncore report (cold cache)', cmd=report, runs=runs, env=cold),
        dict(name='asyncore report (warm cache)', cmd=report, runs=runs, env=warmed),
        dict(name='asyncore report --format json (warm)', cmd=report + ['--format', 'json'], runs=runs,
             env=warmed)]
if shutil.which('eu-stack'):
    rows.append(dict(name='eu-stack -i -s -m', cmd=['eu-stack', '-i', '-s', '-m', '--core=' + core, '-e', prog],
                     runs=runs))
if shutil.which('gdb'):
    rows.append(dict(name='gdb thread apply all bt', cmd=['gdb', '-batch', '-nx', '-ex', 'thread apply all bt',
                     prog, core], runs=gdb_runs))
print('  load average before: %s' % timing.load())
res = timing.measure(rows)
print('  load average after:  %s' % timing.load())
ok = True
for name in [r['name'] for r in rows if r['name'].startswith('asyncore')]:
    if name not in res:
        ok = False
        continue
    t, m = res[name]
    verdicts = []
    for other, want in (('gdb thread apply all bt', 15), ('eu-stack -i -s -m', 4)):
        if other in res:
            x = res[other][0] / t
            good = x >= want and m < res[other][1]
            ok = ok and good
            timing.record('cxx: %s / %s' % (other, name), '%.1fx, RSS %.0f < %.0f MB' % (
                x, m / 1024, res[other][1] / 1024), '>= %dx, RSS below' % want, good)
            verdicts.append('%.1fx %s (>= %dx, RSS %.0f < %.0f MB: %s)' % (
                x, other.split()[0], want, m / 1024, res[other][1] / 1024, 'met' if good else 'NOT met'))
    print('  %-36s %s' % (name, '; '.join(verdicts)))
sys.exit(0 if ok else 1)
PY
