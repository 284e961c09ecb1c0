#!/usr/bin/env bash
# Minicore benchmark: `asyncore minicore` of the sparse 1.6 GB core of
# bench/stacks.sh (201 threads on 8 MiB stacks) and of the C++ bench core
# (bench/cxx.sh), against the core's size and `zstd -1` of it (time, size).
# Usage: bench/minicore.sh /abs/path/asyncore   (RUNS to change the count)
# Targets: minicore <= 0.5% of the sparse core, <= 5% of the C++ core; the
# report of each minicore equals the core's (tests/minicore_compare.py).
set -u
ASYNCORE=${1:?usage: bench/minicore.sh /path/to/asyncore}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=${BENCH_DIR:-$ROOT/build/bench}
RUNS=${RUNS:-3}
status=0
source "$ROOT/bench/lib.sh"

# The sparse core as bench/stacks.sh builds it (its core reused when there).
sparse_core() {
	local d=$BENCH/stacks/sparse
	if [ ! -s "$d/core" ] || [ ! -x "$d/prog" ]; then
		VARIANTS=sparse RUNS=1 GDB_RUNS=1 bash "$ROOT/bench/stacks.sh" "$ASYNCORE" >/dev/null 2>&1
	fi
	[ -s "$d/core" ] && echo "$d/core"
}

# The C++ core as bench/cxx.sh builds it (reused when there).
cxx_core() {
	local d=$BENCH/cxx
	if [ ! -s "$d/core" ] || [ ! -x "$d/prog" ]; then
		mkdir -p "$d" && bash "$ROOT/bench/cxx/build.sh" "$d" >"$d.log" 2>&1 && make_core "$d" >/dev/null
	fi
	[ -s "$d/core" ] && echo "$d/core"
}

measure() {   # measure NAME CORE PROG PERMILLE_TARGET
	local name=$1 core=$2 prog=$3 target=$4
	local w; w=$(mktemp -d)
	python3 - "$ASYNCORE" "$core" "$prog" "$w" "$RUNS" "$ROOT" "$name" "$target" <<'PY'
import os, subprocess, sys, time
asy, core, prog, w, runs, root, name, target = sys.argv[1:9]
runs, target = int(runs), int(target)
sys.path.insert(0, os.path.join(root, 'bench'))
import timing

def timed(cmd, **kw):
    t = time.monotonic()
    r = subprocess.run(cmd, **kw)
    return time.monotonic() - t, r

mini = os.path.join(w, 'mini')
times = []
for _ in range(runs):
    t, r = timed([asy, 'minicore', core, prog, '-o', mini], stdout=subprocess.DEVNULL,
                 stderr=subprocess.DEVNULL)
    if r.returncode > 1:
        print('  %s: minicore exited %d' % (name, r.returncode)); sys.exit(1)
    times.append(t)
times.sort()
t_mini = times[len(times) // 2]
t_zst, _ = timed(['zstd', '-1', '-q', '-f', '-T1', core, '-o', os.path.join(w, 'core.zst')])
size_core = os.path.getsize(core)
size_mini = os.path.getsize(mini)
size_zst = os.path.getsize(os.path.join(w, 'core.zst'))
t_zmini, _ = timed([asy, 'minicore', core, prog, '-o', mini + '.zst'], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
size_zmini = os.path.getsize(mini + '.zst')
reports = []
for path in (core, mini):
    with open(os.path.join(w, os.path.basename(path) + '.json'), 'w') as out:
        subprocess.run([asy, 'report', path, prog, '--format', 'json', '--locals', 'all'], stdout=out,
                       stderr=subprocess.DEVNULL)
    reports.append(out.name)
same = subprocess.run(['python3', os.path.join(root, 'tests', 'minicore_compare.py')] + reports,
                      stdout=subprocess.DEVNULL).returncode == 0
pm = size_mini * 1000.0 / size_core
print('  %s: core %.1f MB; minicore %.0f KiB (%.2f per mille) in %.0f ms, .zst %.0f KiB in %.0f ms; '
      'zstd -1 of the core %.1f MB in %.0f ms; reports equal: %s' % (
          name, size_core / 1e6, size_mini / 1024.0, pm, t_mini * 1000, size_zmini / 1024.0,
          t_zmini * 1000, size_zst / 1e6, t_zst * 1000, 'yes' if same else 'NO'))
timing.record('minicore %s: size / core' % name, '%.2f per mille (%.0f KiB of %.1f MB)' % (
    pm, size_mini / 1024.0, size_core / 1e6), '<= %d per mille' % target, pm <= target)
timing.record('minicore %s: time' % name, '%.0f ms (zstd -1: %.0f ms, %.1f MB)' % (
    t_mini * 1000, t_zst * 1000, size_zst / 1e6), 'none (the analysis plus the write)', True)
timing.record('minicore %s: report equals the core\'s' % name, 'yes' if same else 'no', 'yes', same)
sys.exit(0 if same and pm <= target else 1)
PY
	local rc=$?
	rm -rf "$w"
	return $rc
}

echo "== minicore: the sparse 1.6 GB core and the C++ core, against zstd -1"
if core=$(sparse_core); then
	measure sparse "$core" "$BENCH/stacks/sparse/prog" 5 || status=1
else
	echo "  minicore sparse: no core (core_pattern: $(cat /proc/sys/kernel/core_pattern))"; status=1
fi
if core=$(cxx_core); then
	measure cxx "$core" "$BENCH/cxx/prog" 50 || status=1
else
	echo "  minicore cxx: no core"; status=1
fi
exit $status
