#!/usr/bin/env bash
# Stack benchmark: a core of 201 threads each ~80 frames deep (static
# functions, a shared library, inlined functions), built with and without
# frame pointers on 256 KiB thread stacks, and without them on glibc's
# default 8 MiB stacks (a sparse core of 1.6 GB holding a few MB of data),
# and without them ~60 frames deep (nofp60).  Times `asyncore report CORE PROG --format json --threads
# all` against `eu-stack -i -s -m` and gdb's `thread apply all bt` on the
# same core in the same run (the tools' runs interleaved); prints medians,
# peak RSS and ratios.
# Usage: bench/stacks.sh /abs/path/asyncore   (RUNS, GDB_RUNS to change counts;
# VARIANTS="fp nofp sparse" to choose the cores)
# Target: <= 60 ms median for asyncore; text and JSON >= 8x faster than
# eu-stack (>= 10x on the sparse and nofp60 cores), with a peak RSS no larger than
# eu-stack's; the frames' arguments (against --no-args) cost at most 25% of
# the report's time.
set -u
ASYNCORE=${1:?usage: bench/stacks.sh /path/to/asyncore}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=$ROOT/bench/stacks
OUT=${BENCH_DIR:-$ROOT/build/bench/stacks}
RUNS=${RUNS:-11}
GDB_RUNS=${GDB_RUNS:-3}
status=0
source "$ROOT/bench/lib.sh"

build() {   # build VARIANT CFLAGS...
	local v=$1; shift
	local d=$OUT/$v
	mkdir -p "$d"
	gcc -O2 -g "$@" -fPIC -shared -o "$d/libbench.so" "$SRC/lib.c" &&
	gcc -O2 -g "$@" -pthread -o "$d/prog" "$SRC/stacks.c" -L"$d" -lbench -Wl,-rpath,'$ORIGIN'
}

echo "stacks: $(nproc) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg) (a busy machine inflates every number)"
for variant in fp:-fno-omit-frame-pointer nofp:-fomit-frame-pointer \
	       "sparse:-fomit-frame-pointer -DDEFAULT_STACKS" "nofp60:-fomit-frame-pointer -DDEPTH=55"; do
	v=${variant%%:*} flags=${variant#*:}
	[[ " ${VARIANTS:-fp nofp sparse nofp60} " == *" $v "* ]] || continue
	echo "== stacks ($v): 201 threads x ~$([ "$v" = nofp60 ] && echo 60 || echo 80) frames, $flags"
	if ! build "$v" $flags; then echo "build failed"; status=1; continue; fi
	d=$OUT/$v
	if ! core=$(make_core "$d"); then
		echo "no core could be made (core_pattern: $(cat /proc/sys/kernel/core_pattern))"
		status=1; continue
	fi
	sync   # the fresh core's write-back is not part of anyone's time
	python3 - "$ASYNCORE" "$d/prog" "$core" "$RUNS" "$GDB_RUNS" "$ROOT/bench" "$v" <<'PY' || status=1
import json, os, shutil, subprocess, sys
asy, prog, core, runs, gdb_runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
variant = sys.argv[7]
want = 10 if variant in ('sparse', 'nofp60') else 8
sys.path.insert(0, sys.argv[6])
import timing

# What asyncore sees: threads and frames, so the numbers compare like with like.
r = subprocess.run([asy, 'report', core, prog, '--format', 'json', '--threads', 'all'],
                   capture_output=True, text=True)
try:
    j = json.loads(r.stdout)
    th = j['threads']
    crash = [t for t in th if t.get('crashing')] or th
    print('  core %.1f MiB (%.1f MiB of data); asyncore: %d threads, %d frames in all, crashing thread '
          '%d frames, %d inlined'
          % (os.path.getsize(core) / 2**20, os.stat(core).st_blocks * 512 / 2**20, len(th),
             sum(len(t['frames']) for t in th), len(crash[0]['frames']),
             sum(1 for t in th for f in t['frames'] if f.get('inlined'))))
except (ValueError, KeyError, IndexError) as e:
    print('  asyncore output unusable (exit %d): %s' % (r.returncode, (r.stderr or str(e)).strip()[:200]))
    sys.exit(1)

rows = [dict(name='asyncore', cmd=[asy, 'report', core, prog, '--format', 'json', '--threads', 'all'], runs=runs),
        dict(name='asyncore (text form)', cmd=[asy, 'report', core, prog, '--format', 'text', '--threads', 'all'], runs=runs),
        dict(name='asyncore --no-args', cmd=[asy, 'report', core, prog, '--format', 'json', '--threads', 'all',
                                             '--no-args'], runs=runs),
        dict(name='asyncore (text form) --no-args', cmd=[asy, 'report', core, prog, '--format', 'text',
                                                         '--threads', 'all', '--no-args'], runs=runs)]
if shutil.which('eu-stack'):
    rows.append(dict(name='eu-stack -i -s -m', cmd=['eu-stack', '-i', '-s', '-m', '--core=' + core, '-e', prog], runs=runs))
if shutil.which('gdb'):
    rows.append(dict(name='gdb thread apply all bt', cmd=['gdb', '-batch', '-nx', '-ex', 'set print frame-arguments none',
                     '-ex', 'thread apply all bt', prog, core], runs=gdb_runs))
print('  load average before: %s' % timing.load())
res = timing.measure(rows)
print('  load average after:  %s' % timing.load())
a = res.get('asyncore', (None,))[0]
t = res.get('asyncore (text form)', (None,))[0]
args_cost = []
for form, with_args in (('json', 'asyncore'), ('text', 'asyncore (text form)')):
    without = res.get(with_args + ' --no-args')
    if with_args in res and without:
        args_cost.append((form, (res[with_args][0] - without[0]) / without[0] * 100))
if args_cost:
    print('  arguments cost: %s of the report without them' % ', '.join(
        '%+.0f%% (%s)' % (pct, form) for form, pct in args_cost))
for name in res:
    if not name.startswith('asyncore') and a:
        print('  ratio %-26s %6.1fx vs asyncore json%s' % (
            name, res[name][0] / a, ', %.1fx vs text' % (res[name][0] / t) if t else ''))
if a is not None:
    eu = res.get('eu-stack -i -s -m')
    verdict = 'target <= 60 ms: %s' % ('met' if a <= 60 else 'NOT met')
    if eu:
        verdict += '; >= %dx eu-stack: %s' % (want, 'met' if eu[0] / a >= want else 'NOT met')
        if t:
            verdict += ' (text %s)' % ('met' if eu[0] / t >= want else 'NOT met')
        rss = max(res['asyncore'][1], res.get('asyncore (text form)', (0, 0))[1])
        verdict += '; peak RSS <= eu-stack\'s: %s' % ('met' if rss <= eu[1] else 'NOT met')
        timing.record('stacks %s: eu-stack -i -s -m / report --format json' % variant,
                      '%.1fx' % (eu[0] / a), '>= %dx' % want, eu[0] / a >= want)
        if t:
            timing.record('stacks %s: eu-stack -i -s -m / report --format text' % variant,
                          '%.1fx' % (eu[0] / t), '>= %dx' % want, eu[0] / t >= want)
        timing.record('stacks %s: peak RSS, report (json, text) / eu-stack' % variant,
                      '%.1f / %.1f MB' % (rss / 1024, eu[1] / 1024), '<= eu-stack\'s', rss <= eu[1])
    if t is not None:
        verdict += '; text form <= 60 ms: %s' % ('met' if t <= 60 else 'NOT met')
    if args_cost:
        verdict += '; arguments <= +25%%: %s' % ('met' if all(p <= 25 for _, p in args_cost) else 'NOT met')
    print('  ' + verdict)
sys.exit(0 if a is not None else 1)
PY
done
exit $status
