#!/usr/bin/env bash
# CPython benchmark: a 50-thread Python process (bench/cpython/fifty.py: 50
# threads three Python calls deep in time.sleep), on the newest CPython
# 3.8-3.13 installed (pyenv's, else Debian's python3.11).
#   core  the report of its core with the shipped descriptions against a
#         copy of asyncore that has none (native frames only), median wall
#         time of RUNS interleaved runs; target: within twice the native one
#   live  report --pid's pause (process.paused_us), median of RUNS reads
#         (the native-only copy's beside it); target: at most 10 ms
# Usage: bench/cpython.sh /abs/path/asyncore   (RUNS to change the count)
set -u
ASYNCORE=${1:?usage: bench/cpython.sh /path/to/asyncore}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${BENCH_DIR:-$ROOT/build/bench/cpython}
RUNS=${RUNS:-11}
source "$ROOT/tests/lib.sh"

pyenv_dir=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
PY=
for v in 3.13 3.12 3.11 3.10 3.9 3.8; do
	PY=$(ls -d "$pyenv_dir"/versions/$v.[0-9]*/bin/python$v 2>/dev/null | sort -V | tail -1)
	[ -n "$PY" ] && break
done
[ -n "$PY" ] || PY=$(command -v python3.11 || true)
[ -n "$PY" ] || { echo "bench cpython: no CPython 3.8-3.13 installed; skipped"; exit 0; }

mkdir -p "$OUT"
rm -rf "$OUT"/run-*
printf '#!/bin/sh\nexec %s "%s/bench/cpython/fifty.py" "$@"\n' "$PY" "$ROOT" >"$OUT/prog"
chmod +x "$OUT/prog"
core=$(fixture_core "$OUT" crash 2>&1) || { echo "bench cpython: no core: $core"; exit 1; }
# the program under test as a checkout's ./asyncore (this share/), and a copy
# with no share/ beside it: native frames only
W=$(mktemp -d)
PARKED=
trap '[ -z "$PARKED" ] || { kill -9 "$PARKED"; wait "$PARKED"; } 2>/dev/null; rm -rf "$W"' EXIT
mkdir -p "$W/co" "$W/bare"
cp "$ASYNCORE" "$W/co/asyncore"
ln -s "$ROOT/share" "$W/co/share"
cp "$ASYNCORE" "$W/bare/asyncore"
export XDG_CONFIG_HOME=$W/config
echo "cpython: $PY, $(nproc) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# the live process: parked when its 50 threads all wait in a system call
(cd "$W" && exec "$OUT/prog" park) >"$W/park.out" 2>&1 &
PARKED=$!
asleep() {
	local t n=0
	for t in /proc/"$PARKED"/task/*; do
		[ "$(cut -d' ' -f1 "$t/syscall" 2>/dev/null)" != running ] || return 1
		n=$((n + 1))
	done
	[ "$n" -eq 50 ]
}
for i in $(seq 1200); do asleep && break; sleep 0.05; done

python3 - "$W/co/asyncore" "$W/bare/asyncore" "$core" "$RUNS" "$PARKED" "$ROOT/bench" <<'PY'
import json, statistics, subprocess, sys
sys.path.insert(0, sys.argv[6])
import timing
asy, bare, core, runs, pid = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]

def script_frames(cmd):
    r = subprocess.run(cmd + ['--format', 'json'], capture_output=True, text=True)
    j = json.loads(r.stdout) if r.stdout else {'threads': []}
    return sum(f['kind'] == 'script' for t in j['threads'] for f in t['frames']), j

n_py, _ = script_frames([asy, 'report', core])
n_bare, _ = script_frames([bare, 'report', core])
print('  core: %d script frames with the descriptions, %d without' % (n_py, n_bare))
res = timing.measure([
    {'name': 'core, Python frames', 'cmd': [asy, 'report', core], 'runs': runs},
    {'name': 'core, native frames only', 'cmd': [bare, 'report', core], 'runs': runs},
])
if len(res) == 2:
    ratio = res['core, Python frames'][0] / res['core, native frames only'][0]
    timing.record('cpython core, 50 threads: Python / native-only report', '%.2fx' % ratio,
                  '<= 2x', ratio <= 2 and n_py >= 150)
pauses = {asy: [], bare: []}
for _ in range(runs):               # interleaved: a load that comes and goes hits both
    for prog in (asy, bare):
        n, j = script_frames([prog, 'report', '--pid', pid])
        if j.get('process'):
            pauses[prog].append(j['process']['paused_us'] / 1000)
if pauses[asy] and pauses[bare]:
    med, med_bare = statistics.median(pauses[asy]), statistics.median(pauses[bare])
    print('  live: pause median %.2f ms over %d reads, %.2f ms with native frames only'
          % (med, len(pauses[asy]), med_bare))
    timing.record('cpython live pause, 50 threads', '%.2f ms (native only %.2f)' % (med, med_bare),
                  '<= 10 ms', med <= 10)
else:
    print('  live: no report of the process')
PY
