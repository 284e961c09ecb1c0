#!/usr/bin/env bash
# ClickHouse against SQLite: cores per second of `ingest --jobs 2` of the same
# 1,000 cores (bench/ingest.sh's, made by it when missing) into an SQLite
# file, one ClickHouse server and a cluster of two shards; then the time of
# `top` over 100,000 stored cores in each (the cores rows replicated with
# new fingerprints).  The servers are Debian's clickhouse-server on
# loopback ports (tests/clickhouse_lib.sh), stopped at the end.
# Usage: bench/clickhouse.sh /abs/path/asyncore
set -u
ASYNCORE=${1:?usage: bench/clickhouse.sh /path/to/asyncore}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tests/lib.sh"
source "$ROOT/tests/clickhouse_lib.sh"
CORES=$ROOT/build/bench/ingest-cores
COUNT=1000
COPIES=100

W=$(mktemp -d)
trap 'ch_cluster_stop; rm -rf "$W"' EXIT
if ! ch_available "$W/apt.log"; then
	echo "bench clickhouse: skipped, clickhouse-server could not be installed"
	exit 0
fi
ncores() { ls "$CORES" 2>/dev/null | grep -c '^core-'; }
if [ "$(ncores)" -ne "$COUNT" ]; then
	bash "$ROOT/bench/ingest.sh" "$ASYNCORE" >/dev/null   # makes them (its own budget aside)
	[ "$(ncores)" -eq "$COUNT" ] || { echo "bench clickhouse: no cores" >&2; exit 1; }
fi
ch_cluster_start "$W/ch" 2 || { echo "bench clickhouse: cannot start the servers" >&2; exit 1; }
ONE="clickhouse://127.0.0.1:${CH_HTTP[1]}/one"
TWO="clickhouse://127.0.0.1:${CH_HTTP[1]}/two?cluster=$CH_CLUSTER_NAME"
"$ASYNCORE" store init --db "$ONE" && "$ASYNCORE" store init --db "$TWO" &&
	"$ASYNCORE" store init --db "${TWO/${CH_HTTP[1]}/${CH_HTTP[2]}}" || exit 1

seconds() { python3 -c 'import sys; print("%.2f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$@"; }
now() { date +%s.%N; }

# ingest DB NAME: one timed ingest of the batch; prints the line.
ingest() {
	local start end
	sync
	start=$(now)
	"$ASYNCORE" ingest --db "$1" --jobs 2 --quiet "$CORES" 2>"$W/err" ||
		{ echo "bench clickhouse: ingest into $2 failed: $(tail -1 "$W/err")" >&2; return 1; }
	end=$(now)
	python3 -c 'import sys; n, s = int(sys.argv[2]), float(sys.argv[3]) - float(sys.argv[4]);
print("  %-24s %6.2f s  %6.1f cores/s" % (sys.argv[1], s, n / s))' "$2" "$COUNT" "$end" "$start"
}

echo "bench clickhouse: ingest --jobs 2 of $COUNT cores (build/bench/ingest-cores)"
ingest "$W/bench.db" "SQLite" || exit 1
ingest "$ONE" "ClickHouse, one server" || exit 1
ingest "$TWO" "ClickHouse, two shards" || exit 1

# Replicate the stored cores to COUNT * COPIES rows, each with a new fingerprint.
sqlite3 "$W/bench.db" "WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < $((COPIES - 1)))
INSERT INTO cores (fingerprint, sha256, path, file_size, size, crashed_at, analysed_at, analyzer_version,
  executable, build_id, pid, uid, signal, signal_name, code, code_name, fault_address, crashing_tid,
  abort_message, signature, signature_hash, async_key, nthreads, nframes, nwarnings, boot_id, coredump_uid,
  unit, cmdline)
SELECT fingerprint || '-' || n, sha256, path || '-' || n, file_size, size, crashed_at, analysed_at,
  analyzer_version, executable, build_id, pid, uid, signal, signal_name, code, code_name, fault_address,
  crashing_tid, abort_message, signature, signature_hash, async_key, nthreads, nframes, nwarnings, boot_id,
  coredump_uid, unit, cmdline FROM cores, k" || exit 1
ch_replicate 1 one "$COPIES" && ch_replicate 1 two "$COPIES" || exit 1

timed_top() {
	local start end n
	start=$(now)
	n=$("$ASYNCORE" top --db "$1" --limit 1000000 --format csv | wc -l) || return 1
	end=$(now)
	printf '  %-24s %6s s  (%d buckets)\n' "$2" "$(seconds "$start" "$end")" $((n - 1))
}
echo "bench clickhouse: top over $((COUNT * COPIES)) stored cores"
echo "  stored: SQLite $(sqlite3 "$W/bench.db" "SELECT count(*) FROM cores")," \
     "one server $(ch_q 1 "SELECT count() FROM one.cores FINAL")," \
     "two shards $(ch_q 1 "SELECT count() FROM two.cores FINAL")"
timed_top "$W/bench.db" "SQLite" || exit 1
timed_top "$ONE" "ClickHouse, one server" || exit 1
timed_top "$TWO" "ClickHouse, two shards" || exit 1
