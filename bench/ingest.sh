#!/usr/bin/env bash
# Ingest benchmark: 1,000 cores of one C++ binary into a new database with
# --jobs 2; prints cores per second and database bytes per core, and fails
# when the batch takes longer than the budget (20 s), its rate is under 500
# cores/s, or it is not 3x that of running `eu-stack -i -s -m` once per core
# (two at a time, as --jobs 2), measured right after on the same cores.
#
# The cores are real: the fixture program fixtures/store_cxx (templates, an
# anonymous namespace, lambdas) is crashed 1,000 times (two crash places,
# padding 0..249 pages, so every core has its own pid, addresses and size).
# They are made once and kept in build/bench/ingest-cores (remade when the
# program changes).
# Usage: bench/ingest.sh /abs/path/asyncore [COUNT]
set -u
ASYNCORE=${1:?usage: bench/ingest.sh /path/to/asyncore [COUNT]}
COUNT=${2:-1000}
BUDGET=20
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tests/lib.sh"

CORES=$ROOT/build/bench/ingest-cores
prog_dir=$(fixture_build store_cxx) || { echo "bench ingest: cannot build fixtures/store_cxx" >&2; exit 1; }

make_cores() {
	rm -rf "$CORES"; mkdir -p "$CORES/run"
	core_pattern_is_local || { echo "bench ingest: core_pattern is not a plain file name" >&2; return 1; }
	echo "bench ingest: crashing fixtures/store_cxx $COUNT times..."
	seq 0 $((COUNT - 1)) | xargs -P 2 -I{} bash -c '
		i={}; modes=(a b)
		d="$0/run/$i"; mkdir -p "$d"
		for try in 1 2 3; do
			(cd "$d" && ulimit -c unlimited && exec "$1/prog" "${modes[$((i % 2))]}" $((i / 2 % 250)) ) >/dev/null 2>&1
			c=$(ls "$d"/core* 2>/dev/null | head -1)
			[ -n "$c" ] && mv "$c" "$0/$(printf "core-%05d" "$i")" && break
		done
		rm -rf "$d"' "$CORES" "$prog_dir" 2>/dev/null
	rmdir "$CORES/run"
	local n; n=$(ls "$CORES" | grep -c '^core-')
	[ "$n" -eq "$COUNT" ] || { echo "bench ingest: only $n of $COUNT cores were dumped" >&2; return 1; }
	cp "$prog_dir/prog" "$CORES/.prog"
}

if ! cmp -s "$prog_dir/prog" "$CORES/.prog" 2>/dev/null || [ "$(ls "$CORES" | grep -c '^core-')" -ne "$COUNT" ]; then
	make_cores || exit 1
fi

W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
DB=$W/bench.db
sync   # do not time the write-back of freshly made cores
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# RUNS batches, each into a new database; the median one's time counts.
times=
for i in $(seq "${RUNS:-3}"); do
	rm -f "$DB" "$DB"-*
	start=$(date +%s.%N)
	"$ASYNCORE" ingest --db "$DB" --jobs 2 --quiet "$CORES" 2>"$W/err"; rc=$?
	end=$(date +%s.%N)
	[ $rc -eq 0 ] || { echo "bench ingest: ingest exited $rc: $(tail -1 "$W/err")" >&2; exit 1; }
	times="$times $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')"
done
start=0 end=$(printf '%s\n' $times | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
n=$(sqlite3 "$DB" "SELECT count(*) FROM cores")
bytes=$(cat "$DB" "$DB-wal" 2>/dev/null | wc -c)
core_bytes=$(du -sb "$CORES" | cut -f1)
sigs=$(sqlite3 "$DB" "SELECT count(*) FROM top_signatures")
# eu-stack once per core, two at a time.
eu_start=$(date +%s.%N)
if command -v eu-stack >/dev/null; then
	ls "$CORES" | grep '^core-' | sed "s|^|--core=$CORES/|" |
		xargs -P 2 -I{} eu-stack -i -s -m {} -e "$CORES/.prog" >/dev/null 2>&1
	eu_end=$(date +%s.%N)
else
	eu_end=
fi
python3 - "$n" "$COUNT" "$start" "$end" "$bytes" "$core_bytes" "$sigs" "$BUDGET" "$eu_start" "$eu_end" \
	"$load_before" "$times" "$ROOT/bench" <<'PY'
import sys
n, count, start, end, size, core_bytes, sigs, budget, eu_start, eu_end, load_before, times = sys.argv[1:13]
sys.path.insert(0, sys.argv[13])
import timing
n, count, secs = int(n), int(count), float(end) - float(start)
print("bench ingest: %d cores of one C++ binary (%d signatures, %.1f MB of cores), --jobs 2; load average %s "
      "before, %s after" % (n, int(sigs), int(core_bytes) / 1e6, load_before, timing.load()))
print("  time:          %.2f s, the median of%s s (budget %s s)" % (secs, times, budget))
print("  rate:          %.1f cores/s (>= 500: %s)" % (n / secs, "met" if n / secs >= 500 else "NOT met"))
print("  database:      %.2f MB, %.0f bytes per core" % (int(size) / 1e6, int(size) / max(n, 1)))
timing.record("ingest: 1,000 cores, --jobs 2, SQLite", "%.0f cores/s" % (n / secs), ">= 500 cores/s",
              n / secs >= 500)
ok = n == count and secs <= float(budget) and n / secs >= 500
if eu_end:
    eu_secs = float(eu_end) - float(eu_start)
    ratio = (n / secs) / (count / eu_secs)
    print("  eu-stack:      %.2f s for %d cores once each, two at a time: %.1f cores/s; ingest is %.1fx (>= 3x: %s)"
          % (eu_secs, count, count / eu_secs, ratio, "met" if ratio >= 3 else "NOT met"))
    ok = ok and ratio >= 3
    timing.record("ingest: rate / eu-stack's, once per core, two at a time", "%.1fx" % ratio, ">= 3x",
                  ratio >= 3)
print("  result:        %s" % ("ok" if ok else "FAILED"))
sys.exit(0 if ok else 1)
PY
