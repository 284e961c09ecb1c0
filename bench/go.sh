#!/usr/bin/env bash
# Go benchmark: fixtures/go_shop with 10,000 more goroutines parked on a
# channel.  From its core (GOTRACEBACK=crash): `asyncore report` (JSON and
# text) against delve (`dlv core` with `goroutines -t`, Debian's delve), wall
# time and peak RSS, medians.  Live: the same program hung, `asyncore report
# --pid` (its own paused_us), with the shop's goroutines (built with cgo, and
# without: CGO_ENABLED=0) and with 10,000 more.
# Usage: bench/go.sh /abs/path/asyncore   (RUNS to change counts)
# Targets: the core's report at least 5x faster than delve, at a lower peak
# RSS; a live pause of at most 5 ms with 18 goroutines and 50 ms with 10,000.
set -u
ASYNCORE=${1:?usage: bench/go.sh /path/to/asyncore}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-5}
source "$ROOT/tests/lib.sh"
source "$ROOT/bench/lib.sh"
command -v go >/dev/null || { echo "bench go: no go (Debian's golang-go)" >&2; exit 1; }
dir=$(fixture_build go_shop) || { echo "bench go: cannot build fixtures/go_shop" >&2; exit 1; }
core_pattern_is_local || { echo "bench go: core_pattern is not a plain file name" >&2; exit 1; }
run=$ROOT/build/bench/go
rm -rf "$run"; mkdir -p "$run"
( (cd "$run" && ulimit -c unlimited && GOTRACEBACK=crash exec "$dir/prog" many 10000) >/dev/null 2>&1 ) 2>/dev/null
core=$(ls "$run"/core* 2>/dev/null | head -1)
[ -n "$core" ] || { echo "bench go: no core" >&2; exit 1; }
sync
echo "go: $(nproc) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg) (a busy machine inflates every number)"

PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done' EXIT
python3 - "$ASYNCORE" "$dir/prog" "$core" "$RUNS" "$ROOT/bench" <<'PY' || exit 1
import json, os, subprocess, sys, tempfile
asy, prog, core, runs, bench = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
sys.path.insert(0, bench)
import timing

n = len(json.loads(subprocess.run([asy, 'report', core, prog, '--format', 'json'],
                                  capture_output=True, text=True).stdout)['tasks'])
print('== core of %d goroutines, %.0f MB' % (n, os.path.getsize(core) / 2**20))
init = tempfile.NamedTemporaryFile('w', suffix='.dlv', delete=False)
init.write('goroutines -t\nexit\n')
init.close()
rows = [
    {'name': 'asyncore report (json)', 'cmd': [asy, 'report', core, prog, '--format', 'json'], 'runs': runs},
    {'name': 'asyncore report (text)', 'cmd': [asy, 'report', core, prog], 'runs': runs},
]
dlv = subprocess.run(['sh', '-c', 'command -v dlv'], capture_output=True, text=True).stdout.strip()
if dlv:
    rows.append({'name': 'dlv core + goroutines -t', 'runs': runs,
                 'cmd': [dlv, 'core', prog, core, '--init', init.name, '--allow-non-terminal-interactive=true']})
res = timing.measure(rows)
os.unlink(init.name)
a = res.get('asyncore report (json)')
d = res.get('dlv core + goroutines -t')
if a and d:
    ratio = d[0] / a[0]
    met = ratio >= 5 and a[1] < d[1]
    print('  asyncore (json) is %.1fx faster than delve, peak RSS %.1f MB against %.1f MB: target %s'
          % (ratio, a[1] / 1024, d[1] / 1024, 'met' if met else 'NOT met'))
    timing.record('go core, %d goroutines: asyncore vs dlv' % n,
                  '%.0f ms vs %.0f ms (%.1fx), %.0f vs %.0f MB' % (a[0], d[0], ratio, a[1] / 1024, d[1] / 1024),
                  '>= 5x, lower RSS', met)
elif not d:
    print('  delve not run (Debian delve missing or it failed)')
PY

# live_pause N TARGET_MS [VARIANT]: paused_us of `report --pid` on `prog hang N`
# (built with cgo, or as VARIANT), RUNS times.
live_pause() {
	local n=$1 target=$2 variant=${3:-} dir_run=$run/hang-$1${3:+-$3} pid i dir=$dir
	if [ -n "$variant" ]; then
		dir=$(fixture_build go_shop "$variant") || { echo "  hang $n: cannot build go_shop $variant" >&2; return 1; }
	fi
	mkdir -p "$dir_run"
	(cd "$dir_run" && exec "$dir/prog" hang "$n") >/dev/null 2>&1 &
	pid=$!
	PIDS+=("$pid")
	for i in $(seq 6000); do [ -f "$dir_run/ready" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
	[ -f "$dir_run/ready" ] || { echo "  hang $n: the program never got ready" >&2; return 1; }
	python3 - "$ASYNCORE" "$pid" "$n" "$target" "$RUNS" "$ROOT/bench" "${variant:-cgo}" <<'PY'
import json, statistics, subprocess, sys
asy, pid, n, target, runs, bench = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
variant = sys.argv[7]
sys.path.insert(0, bench)
import timing
paused, count = [], 0
for i in range(runs + 1):
    r = subprocess.run([asy, 'report', '--pid', pid, '--format', 'json'], capture_output=True, text=True)
    j = json.loads(r.stdout)
    count = len(j['tasks'])
    if i:
        paused.append(j['process']['paused_us'] / 1000)
med = statistics.median(paused)
print('  live (%s), %d goroutines: paused %.2f ms median (%s) over %d runs' % (variant, count, med,
      ' '.join('%.2f' % p for p in paused), runs))
timing.record('go live pause (%s), %d goroutines' % (variant, count), '%.2f ms' % med, '<= %g ms' % target,
              med <= target)
PY
	kill -9 "$pid" 2>/dev/null
}
live_pause 0 5
live_pause 0 5 nocgo
live_pause 10000 50
