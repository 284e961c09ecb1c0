#!/usr/bin/env bash
# Crash to stored report through the kernel: `asyncore collect` installed
# as core_pattern, fixtures/threads4 crashed 10 times (a 25 MB core) and a
# program that touched 256 MB crashed 3 times; each time from the crash's
# start until its row is in the SQLite store (polled every 10 ms).  Medians;
# targets 1 s and 5 s.  Needs root (core_pattern); core_pattern is put back
# on exit.
# Usage: bench/collect.sh /abs/path/asyncore
set -u
ASYNCORE=$(readlink -f "${1:?usage: bench/collect.sh /path/to/asyncore}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tests/lib.sh"

if [ "$(id -u)" != 0 ] || ! [ -w /proc/sys/kernel/core_pattern ]; then
	echo "bench collect: core_pattern is not writable here: skipped"; exit 0
fi
prog_dir=$(fixture_build threads4) || { echo "bench collect: cannot build fixtures/threads4" >&2; exit 1; }
K=$(mktemp -d /tmp/asyb.XXXXXX)
cleanup() {
	"$ASYNCORE" collect --uninstall --dir "$K/d" >/dev/null 2>&1
	core_pattern_restore
	rm -rf "$K"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
printf '#include <stdlib.h>\n#include <string.h>\nint main(void){size_t n=256u<<20;char*p=malloc(n);'\
'if(!p)return 1;memset(p,0x5a,n);*(volatile int*)16=p[n-1];return 0;}\n' >"$K/big.c"
cc -O1 -o "$K/big" "$K/big.c" || exit 1
core_pattern_save
"$ASYNCORE" collect --install --db "$K/c.db" --dir "$K/d" >/dev/null || exit 1

rows() { sqlite3 "$K/c.db" 'select count(*) from cores' 2>/dev/null || echo 0; }
# crash_ms PROG: ms from starting PROG until one more row is stored (-1: not within 60 s).
crash_ms() {
	local want=$(( $(rows) + 1 )) t0 end
	t0=$(date +%s%N); end=$(( $(date +%s) + 60 ))
	{ (cd "$K" && ulimit -c unlimited && exec "$1") >/dev/null 2>&1; } 2>/dev/null
	until [ "$(rows)" -ge "$want" ]; do
		[ "$(date +%s)" -lt "$end" ] || { echo -1; return; }
		sleep 0.01
	done
	echo $(( ($(date +%s%N) - t0) / 1000000 ))
}
small=$(for i in $(seq 10); do crash_ms "$prog_dir/prog"; done)
big=$(for i in $(seq 3); do crash_ms "$K/big"; done)
kept=$(du -sb "$K/d" | cut -f1)
python3 - "$ROOT/bench" "$(echo $small)" "$(echo $big)" "$kept" "$(rows)" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import timing
small, big = [int(x) for x in sys.argv[2].split()], [int(x) for x in sys.argv[3].split()]
kept, rows = int(sys.argv[4]), int(sys.argv[5])
med = lambda v: sorted(v)[len(v) // 2] if min(v) >= 0 else -1
ok = True
for name, v, target in (('threads4 (25 MB core)', small, 1000), ('256 MB touched', big, 5000)):
    m = med(v)
    met = 0 <= m <= target
    ok = ok and met
    print('bench collect: %s: crash to stored report %d ms (median of %s ms; <= %d ms: %s)'
          % (name, m, ' '.join(map(str, v)), target, 'met' if met else 'NOT met'))
    timing.record('collect through the kernel, %s: crash to stored' % name, '%d ms' % m, '<= %d ms' % target, met)
print('bench collect: %d rows stored, %.1f MB of minicores kept for %d crashes' % (rows, kept / 1e6, len(small) + len(big)))
sys.exit(0 if ok and rows == len(small) + len(big) else 1)
PY
