#!/usr/bin/env bash
# Minidump benchmark: the report of lldb's minidump of fixtures/minidump_c
# (five threads on 8 MiB stacks, `--style stack`) against lldb reading the
# same file (`lldb -c FILE -b -o 'bt all'`), and against asyncore's report
# of the kernel's core of the same crash.  Medians of RUNS (default 5).
# Targets: the minidump's report at least 5x faster than lldb's backtrace
# of it, and within 1.5x of the core's report.
set -u
ASYNCORE=${1:?usage: bench/minidump.sh /path/to/asyncore}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=${BENCH_DIR:-$ROOT/build/bench}
RUNS=${RUNS:-5}
source "$ROOT/bench/lib.sh"

echo "== minidump: lldb's minidump of a five-thread crash ($(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg))"
command -v lldb >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq lldb >/dev/null 2>&1
command -v lldb >/dev/null || { echo "  lldb could not be installed: skipped"; exit 0; }
d=$BENCH/minidump
mkdir -p "$d"
OUT=$d SRC=$ROOT/fixtures/minidump_c bash "$ROOT/fixtures/minidump_c/build.sh" || exit 1
core=$(make_core "$d") || { echo "  no core"; exit 1; }
rm -f "$d/crash.dmp"
(cd "$d" && lldb -b -o run -k "process save-core --plugin-name=minidump --style stack $d/crash.dmp" ./prog \
	</dev/null >"$d/lldb.log" 2>&1)
[ -s "$d/crash.dmp" ] || { echo "  lldb wrote no minidump"; exit 1; }
python3 - "$ASYNCORE" "$d" "$core" "$RUNS" "$ROOT" <<'PY'
import os, sys
asy, d, core, runs, root = sys.argv[1:6]
runs = int(runs)
sys.path.insert(0, os.path.join(root, 'bench'))
import timing
dmp, prog = os.path.join(d, 'crash.dmp'), os.path.join(d, 'prog')
res = timing.measure([
    {'name': 'asyncore report minidump', 'cmd': [asy, 'report', dmp, prog, '--format', 'json'], 'runs': runs},
    {'name': 'asyncore report core', 'cmd': [asy, 'report', core, prog, '--format', 'json'], 'runs': runs},
    {'name': 'lldb -c minidump bt all', 'cmd': ['lldb', '-c', dmp, prog, '-b', '-o', 'bt all'], 'runs': runs},
])
need = ('asyncore report minidump', 'asyncore report core', 'lldb -c minidump bt all')
if not all(k in res for k in need):
    sys.exit(1)
m, c, l = (res[k][0] for k in need)
print('  the minidump: %.1fx faster than lldb, %.2fx the core\'s report' % (l / m, m / c))
timing.record('minidump report vs lldb bt all', '%.1fx' % (l / m), '>= 5x', l / m >= 5)
timing.record('minidump report vs its core\'s', '%.2fx' % (m / c), '<= 1.5x', m / c <= 1.5)
PY
