#!/usr/bin/env bash
# `asyncore serve` over 100,000 stored cores, on SQLite and on one
# ClickHouse server: the ClickHouse bench's synthetic store (bench/ingest.sh's
# 1,000 cores ingested, their cores rows replicated 100 times with new
# fingerprints, tests/clickhouse_lib.sh's ch_replicate), each copy given a crash time
# (one day per copy) so the trends have days to count.  Times of /, a
# bucket, a search and a core page (the median of 7 requests after one to
# warm up, measured by curl), against 200 ms (the lists) and 100 ms (a core).
# Usage: bench/serve.sh /abs/path/asyncore
set -u
ASYNCORE=${1:?usage: bench/serve.sh /path/to/asyncore}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tests/lib.sh"
source "$ROOT/tests/clickhouse_lib.sh"
CORES=$ROOT/build/bench/ingest-cores
COUNT=1000
COPIES=100

W=$(mktemp -d)
PID=
trap '[ -n "$PID" ] && kill $PID 2>/dev/null; ch_cluster_stop; rm -rf "$W"' EXIT
ncores() { ls "$CORES" 2>/dev/null | grep -c '^core-'; }
if [ "$(ncores)" -ne "$COUNT" ]; then
	bash "$ROOT/bench/ingest.sh" "$ASYNCORE" >/dev/null   # makes them (its own budget aside)
	[ "$(ncores)" -eq "$COUNT" ] || { echo "bench serve: no cores" >&2; exit 1; }
fi

# The synthetic store: the copies' rows as bench/clickhouse.sh makes them,
# with crashed_at one day apart per copy.
"$ASYNCORE" ingest --db "$W/bench.db" --jobs 2 --quiet "$CORES" 2>/dev/null || exit 1
sqlite3 "$W/bench.db" "WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < $((COPIES - 1)))
INSERT INTO cores (fingerprint, sha256, path, file_size, size, crashed_at, analysed_at, analyzer_version,
  executable, build_id, pid, uid, signal, signal_name, code, code_name, fault_address, crashing_tid,
  abort_message, signature, signature_hash, async_key, nthreads, nframes, nwarnings, boot_id, coredump_uid,
  unit, cmdline, cause_kind, cause_summary, arch)
SELECT fingerprint || '-' || n, sha256, path || '-' || n, file_size, size,
  strftime('%Y-%m-%dT%H:%M:%SZ', 1714521600 + n * 86400 + id, 'unixepoch'), analysed_at,
  analyzer_version, executable, build_id, pid, uid, signal, signal_name, code, code_name, fault_address,
  crashing_tid, abort_message, signature, signature_hash, async_key, nthreads, nframes, nwarnings, boot_id,
  coredump_uid, unit, cmdline, cause_kind, cause_summary, arch FROM cores, k" || exit 1

DBS=("$W/bench.db")
NAMES=("SQLite")
if ch_available "$W/apt.log" && ch_cluster_start "$W/ch" 1; then
	U="clickhouse://127.0.0.1:${CH_HTTP[1]}/bench"
	"$ASYNCORE" store init --db "$U" && "$ASYNCORE" ingest --db "$U" --jobs 2 --quiet "$CORES" 2>/dev/null || exit 1
	ch_replicate 1 bench "$COPIES" \
		"formatDateTime(toDateTime(1714521600 + n * 86400 + (ifNull(pid, 0) % 1000), 'UTC'), '%Y-%m-%dT%H:%M:%SZ')" ||
		exit 1
	DBS+=("$U")
	NAMES+=("ClickHouse")
else
	echo "bench serve: no clickhouse-server: SQLite only"
fi

# ms URL: the median of 7 requests' times in ms, after one to warm up.
ms() {
	curl -s -o /dev/null "$1"
	for i in 1 2 3 4 5 6 7; do curl -s -o /dev/null -w '%{time_total}\n' "$1"; done |
		sort -n | sed -n 4p | python3 -c 'import sys; print("%.1f" % (float(sys.stdin.read()) * 1000))'
}

RESULTS=$W/results
for i in "${!DBS[@]}"; do
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$ASYNCORE" serve --db "${DBS[$i]}" --listen "127.0.0.1:$port" >"$W/serve.out" 2>"$W/serve.err" &
	PID=$!
	serve_listening "$W/serve.out" $PID
	B=http://127.0.0.1:$port
	hash=$(curl -s "$B/api/buckets" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["hash"])')
	core=$(curl -s "$B/api/search?q=main" | python3 -c 'import json,sys
print([c["id"] for c in json.load(sys.stdin)["cores"] if "-" not in c["id"]][0])' 2>/dev/null)
	[ -n "$core" ] || core=$(sqlite3 "$W/bench.db" "SELECT fingerprint FROM cores ORDER BY id LIMIT 1")
	n=$(curl -s "$B/api/buckets" | python3 -c 'import json,sys; print(sum(b["count"] for b in json.load(sys.stdin)))')
	printf '%s\t%s\t/\t%s\n' "${NAMES[$i]}" "$n" "$(ms "$B/")" >>"$RESULTS"
	printf '%s\t%s\t/bucket\t%s\n' "${NAMES[$i]}" "$n" "$(ms "$B/bucket/$hash")" >>"$RESULTS"
	printf '%s\t%s\t/search\t%s\n' "${NAMES[$i]}" "$n" "$(ms "$B/search?q=Ledger")" >>"$RESULTS"
	# A term in the crashing frame of half the cores, and one in nearly all.
	printf '%s\t%s\t/search (half)\t%s\n' "${NAMES[$i]}" "$n" "$(ms "$B/search?q=validate")" >>"$RESULTS"
	printf '%s\t%s\t/search (all)\t%s\n' "${NAMES[$i]}" "$n" "$(ms "$B/search?q=main")" >>"$RESULTS"
	printf '%s\t%s\t/core\t%s\n' "${NAMES[$i]}" "$n" "$(ms "$B/core/$core")" >>"$RESULTS"
	kill $PID; wait $PID 2>/dev/null; PID=
done

PYTHONPATH=$ROOT/bench python3 - "$RESULTS" <<'PY'
import sys
import timing
ok = True
print("bench serve: page times over the synthetic store (median of 7 requests)")
for line in open(sys.argv[1]):
    store, n, page, ms = line.split("\t")
    ms = float(ms)
    target = 100 if page == "/core" else 200
    met = ms <= target
    ok &= met
    print("  %-10s %-8s %7.1f ms  (%s cores; <= %d ms: %s)" % (store, page, ms, n, target, "met" if met else "NOT met"))
    timing.record("serve %s over %s cores, %s" % (page, n, store), "%.1f ms" % ms, "<= %d ms" % target, met)
sys.exit(0 if ok else 1)
PY
