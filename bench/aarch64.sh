#!/usr/bin/env bash
# aarch64 benchmark: the stack benchmark's program (bench/stacks: 201
# threads, ~80 frames each, a shared library) cross-compiled for aarch64
# (non-PIE: gdb-multiarch 13 cannot relocate a PIE executable from a
# qemu-user core), crashed under qemu-aarch64, and elfutils' aarch64 kernel
# core (fixtures/aarch64).  Times `asyncore report --format json --threads
# all` against gdb-multiarch's `thread apply all bt` and `eu-stack -i -s -m`
# on the same cores, runs interleaved; prints medians, peak RSS, the frames
# each tool showed, and ratios.  eu-stack (0.188) has no --sysroot: on the
# qemu core it finds no libc and stops early.
# Usage: bench/aarch64.sh /abs/path/asyncore   (RUNS, GDB_RUNS to change counts)
set -u
ASYNCORE=${1:?usage: bench/aarch64.sh /path/to/asyncore}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${BENCH_DIR:-$ROOT/build/bench/aarch64}
RUNS=${RUNS:-11}
GDB_RUNS=${GDB_RUNS:-3}
SYSROOT=/usr/aarch64-linux-gnu
source "$ROOT/bench/lib.sh"

for tool in aarch64-linux-gnu-gcc qemu-aarch64 gdb-multiarch; do
	command -v $tool >/dev/null || { echo "aarch64: no $tool (make check installs it): skipped"; exit 0; }
done
mkdir -p "$OUT"
echo "aarch64: $(nproc) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg) (a busy machine inflates every number)"

# The qemu core of the stack benchmark built with FLAGS into $OUT/NAME.
qemu_stacks_core() {
	local d=$OUT/$1; shift
	rm -rf "$d"; mkdir -p "$d"
	aarch64-linux-gnu-gcc -O2 -g "$@" -fPIC -shared -o "$d/libbench.so" "$ROOT/bench/stacks/lib.c" &&
	aarch64-linux-gnu-gcc -O2 -g "$@" -fno-pie -no-pie -pthread -o "$d/prog" "$ROOT/bench/stacks/stacks.c" \
		-L"$d" -lbench -Wl,-rpath,'$ORIGIN' || return 1
	(cd "$d" && ulimit -c unlimited && exec timeout 300 qemu-aarch64 -L "$SYSROOT" ./prog) >/dev/null 2>&1
	rm -f "$d"/core "$d"/core.[0-9]*
	ls "$d"/qemu_prog_*.core 2>/dev/null | head -1
}

status=0
bzip2 -dc "$ROOT/fixtures/aarch64/backtrace.aarch64.core.bz2" >"$OUT/kernel.core" &&
	bzip2 -dc "$ROOT/fixtures/aarch64/backtrace.aarch64.exec.bz2" >"$OUT/kernel.exec" || status=1
cases=("kernel|$OUT/kernel.exec|$OUT/kernel.core|elfutils' kernel core, 2 threads, static")
for variant in fp:-fno-omit-frame-pointer nofp:-fomit-frame-pointer; do
	v=${variant%%:*}
	if core=$(qemu_stacks_core "stacks-$v" "${variant#*:}") && [ -n "$core" ]; then
		cases+=("stacks-$v|$OUT/stacks-$v/prog|$core|qemu core, 201 threads x ~80 frames, ${variant#*:}")
	else
		echo "== stacks-$v: no qemu core could be made"; status=1
	fi
done
sync
for c in "${cases[@]}"; do
	IFS='|' read -r name prog core what <<<"$c"
	echo "== $name: $what"
	python3 - "$ASYNCORE" "$prog" "$core" "$RUNS" "$GDB_RUNS" "$ROOT/bench" "$SYSROOT" <<'PY' || status=1
import json, os, re, shutil, subprocess, sys
asy, prog, core, runs, gdb_runs, sysroot = sys.argv[1:4] + [int(sys.argv[4]), int(sys.argv[5]), sys.argv[7]]
sys.path.insert(0, sys.argv[6])
import timing

asy_cmd = [asy, 'report', core, prog, '--format', 'json', '--threads', 'all', '--sysroot', sysroot]
gdb_cmd = ['gdb-multiarch', '-batch', '-nx', '-iex', 'set sysroot ' + sysroot,
           '-ex', 'set solib-search-path ' + os.path.dirname(prog), '-ex', 'set print frame-arguments none',
           '-ex', 'thread apply all bt', prog, core]
eu_cmd = ['eu-stack', '-i', '-s', '-m', '--core=' + core, '-e', prog]
try:
    j = json.loads(subprocess.run(asy_cmd, capture_output=True, text=True).stdout)
    frames = sum(len(t['frames']) for t in j['threads'])
except (ValueError, KeyError):
    print('  asyncore output unusable'); sys.exit(1)
def count(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    return len(re.findall(r'^#\d+ ', out, re.M))
print('  frames shown: asyncore %d (inline levels included), gdb-multiarch %d, eu-stack %s'
      % (frames, count(gdb_cmd), count(eu_cmd) if shutil.which('eu-stack') else '-'))
rows = [dict(name='asyncore', cmd=asy_cmd, runs=runs),
        dict(name='gdb-multiarch thread apply all bt', cmd=gdb_cmd, runs=gdb_runs)]
if shutil.which('eu-stack'):
    rows.append(dict(name='eu-stack -i -s -m', cmd=eu_cmd, runs=runs))
res = timing.measure(rows)
a = res.get('asyncore', (None,))[0]
for name in res:
    if name != 'asyncore' and a:
        print('  ratio %-34s %6.1fx vs asyncore' % (name, res[name][0] / a))
sys.exit(0 if a is not None else 1)
PY
done
exit $status
