#!/usr/bin/env bash
# Node.js benchmark (fixtures/node_crash): the core of an uncaught TypeError
# under --abort-on-uncaught-exception, `asyncore report --format json` with
# its JavaScript frames against the same core's native-only report (node's
# binary given with its v8dbg_ symbols stripped, so nothing of V8 is read);
# live, a script in a hot loop, `asyncore report --pid` (its own paused_us).
# Usage: bench/node.sh /abs/path/asyncore   (RUNS to change counts)
# Targets: the JavaScript frames cost at most 2x the native-only report; a
# live pause of at most 10 ms.
set -u
ASYNCORE=${1:?usage: bench/node.sh /path/to/asyncore}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-5}
source "$ROOT/tests/lib.sh"
command -v node >/dev/null || { echo "bench node: no node" >&2; exit 1; }
dir=$(fixture_build node_crash) || { echo "bench node: cannot build fixtures/node_crash" >&2; exit 1; }
core_pattern_is_local || { echo "bench node: core_pattern is not a plain file name" >&2; exit 1; }
run=$ROOT/build/bench/node
rm -rf "$run"; mkdir -p "$run"
( (cd "$run" && ulimit -c unlimited && exec "$dir/prog" crash.js) >/dev/null 2>&1 ) 2>/dev/null
core=$(ls "$run"/core* 2>/dev/null | head -1)
[ -n "$core" ] || { echo "bench node: no core" >&2; exit 1; }
objcopy --wildcard --strip-symbol='v8dbg_*' --strip-symbol='nodedbg_*' "$(command -v node)" "$run/node-nometa" ||
	{ echo "bench node: objcopy failed" >&2; exit 1; }
echo "node: $(nproc) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg) (a busy machine inflates every number)"

PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done' EXIT
python3 - "$ASYNCORE" "$core" "$run/node-nometa" "$RUNS" "$ROOT/bench" <<'PY' || exit 1
import json, os, subprocess, sys
asy, core, nometa, runs, bench = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
sys.path.insert(0, bench)
import timing
j = json.loads(subprocess.run([asy, 'report', core, '--format', 'json'], capture_output=True, text=True).stdout)
n = sum(1 for t in j['threads'] for f in t['frames'] if f['kind'] == 'script')
print('== core of %.0f MB, %d JavaScript frames' % (os.path.getsize(core) / 2**20, n))
rows = [
    {'name': 'asyncore report (json)', 'cmd': [asy, 'report', core, '--format', 'json'], 'runs': runs},
    {'name': 'asyncore report (json), native only', 'cmd': [asy, 'report', core, nometa, '--format', 'json'],
     'runs': runs},
]
res = timing.measure(rows)
a, b = res.get('asyncore report (json)'), res.get('asyncore report (json), native only')
if a and b:
    ratio = a[0] / b[0]
    print('  with JavaScript frames %.0f ms, native only %.0f ms: %.2fx' % (a[0], b[0], ratio))
    timing.record('node core: JavaScript frames vs native only', '%.0f ms vs %.0f ms (%.2fx)' % (a[0], b[0], ratio),
                  '<= 2x', ratio <= 2)
PY

mkdir -p "$run/live"
(cd "$run/live" && exec node "$dir/spin.js") >/dev/null 2>&1 &
pid=$!
PIDS+=("$pid")
for i in $(seq 6000); do [ -f "$run/live/ready" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
[ -f "$run/live/ready" ] || { echo "  live: the script never reached its loop" >&2; exit 1; }
python3 - "$ASYNCORE" "$pid" "$RUNS" "$ROOT/bench" <<'PY'
import json, statistics, subprocess, sys
asy, pid, runs, bench = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, bench)
import timing
paused, frames = [], 0
for i in range(runs + 1):
    j = json.loads(subprocess.run([asy, 'report', '--pid', pid, '--format', 'json'],
                                  capture_output=True, text=True).stdout)
    frames = sum(1 for f in j['threads'][0]['frames'] if f['kind'] == 'script')
    if i:
        paused.append(j['process']['paused_us'] / 1000)
med = statistics.median(paused)
print('  live, %d JavaScript frames on the main thread: paused %.2f ms median (%s) over %d runs'
      % (frames, med, ' '.join('%.2f' % p for p in paused), runs))
timing.record('node live pause', '%.2f ms' % med, '<= 10 ms', med <= 10)
PY
