#!/usr/bin/env bash
# The bucket list is a table a team scans: a store of 32 buckets (fixture
# bucket_list, each site crashed 1 to 5 times on days of May 2024, named
# as systemd-coredump names cores so each has a crash time), `top --format
# html` and serve's / in headless Chromium at 1920x1080 through the
# DevTools protocol (tests/cdp.py): at least 30 rows lie wholly within the
# viewport, a row per bucket with its count, a sparkline whose days add up
# to its count, its cause, signature and last seen; the screenshots are
# not blank.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"
source "$ROOT/tests/clickhouse_lib.sh"
source "$ROOT/tests/chromium_lib.sh"

have_asyncore || { fail "bucket list: no asyncore at $ASYNCORE (run make)"; exit 0; }
test_dep chromium chromium "$TMPD/apt.log" ||
	{ skip "bucket list: chromium could not be installed: $(tail -1 "$TMPD/apt.log")"; exit 0; }
test_dep curl curl "$TMPD/apt.log" || { skip "bucket list: curl could not be installed"; exit 0; }
SERVE_PID=
trap '[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null; fix_cleanup' EXIT

SITES=(session_open session_close cache_lookup cache_evict queue_push queue_pop codec_decode codec_encode
	auth_check auth_refresh route_match route_add pool_get pool_put json_field json_array log_rotate
	log_flush timer_fire timer_arm conn_read conn_write tls_handshake tls_renegotiate db_query db_commit
	index_insert index_scan blob_store blob_load metric_sample metric_export)
fix_build bucket_list || exit 0
mkdir -p "$TMPD/cores"
n=0
for i in "${!SITES[@]}"; do
	for k in $(seq $(( i * 7 % 5 + 1 ))); do
		c=$(fixture_core "$FIX_DIR" "${SITES[$i]}" "$k" 2>"$TMPD/core.err") ||
			{ no_core "bucket list" 77; exit 0; }
		# May 2024: the site's crashes on days k apart, ending on a day of its own
		day=$(( 1 + (i * 11 + k * 3) % 30 ))
		mv "$c" "$TMPD/cores/core.prog.1000.0123456789abcdef0123456789abcdef.$((5000 + n)).$(( ($(date -ud "2024-05-$(printf %02d $day)T10:00:00Z" +%s) + i * 60) * 1000000 ))"
		rm -rf "$(dirname "$c")"
		n=$((n + 1))
	done
done
DB=$TMPD/s.db
"$ASYNCORE" ingest --quiet --db "$DB" "$TMPD/cores" >/dev/null 2>"$TMPD/ingest.err"
NB=$(sqlite3 "$DB" "SELECT count(DISTINCT signature_hash) FROM cores")
check "bucket list: the store holds the $n cores in 32 buckets ($NB)" \
	test "$(sqlite3 "$DB" "SELECT count(*) FROM cores")/$NB" = "$n/32"
"$ASYNCORE" top --db "$DB" --limit 100 --format json >"$TMPD/top.json" 2>/dev/null
"$ASYNCORE" top --db "$DB" --limit 100 --format html >"$TMPD/top.html" 2>/dev/null
check "bucket list: top --format html writes the page" grep -q '</html>' "$TMPD/top.html"

# rows_fit NAME URL: the page at 1920x1080, its rows' boxes and the
# screenshot ($TMPD/NAME.png), checked against top's JSON rows.
rows_fit() {
	local name=$1 url=$2
	if ! python3 "$ROOT/tests/cdp.py" "$url" 1920 1080 "$TMPD/$name.png" "table.buckets tbody tr" \
		>"$TMPD/$name.boxes" 2>"$TMPD/$name.cdp.err"; then
		fail "bucket list: $name: chromium did not lay the page out: $(tail -1 "$TMPD/$name.cdp.err")"
		return
	fi
	python3 - "$TMPD/$name.boxes" "$name" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
w, h = d["viewport"]
rows = d["boxes"]
seen = [r for r in rows if r[0] >= 0 and r[1] <= h]
ok = (w, h) == (1920, 1080) and len(rows) == 32 and len(seen) >= 30
print(("PASS" if ok else "FAIL") + ": bucket list: %s: %d of %d rows wholly in the %dx%d viewport (at least 30)%s"
      % (sys.argv[2], len(seen), len(rows), w, h,
         "" if ok else ", the 30th row's bottom at %s" % (rows[29][1] if len(rows) > 29 else None)))
tall = [r[1] - r[0] for r in rows if r[1] - r[0] > 30]
print(("PASS" if not tall else "FAIL") + ": bucket list: %s: every row is one compact line (%.0f px high at most)"
      % (sys.argv[2], max(r[1] - r[0] for r in rows) if rows else 0))
PY
	read -r pw ph colours dominant < <(python3 "$ROOT/tests/png_colors.py" "$TMPD/$name.png" 2>/dev/null)
	check "bucket list: $name: the 1920x1080 screenshot is not blank ($colours colours, ${dominant}% one colour)" \
		test "${pw}x$ph" = 1920x1080 -a "${colours:-0}" -gt 20 -a "${dominant:-100}" -lt 95
	[ -n "${KEEP_SCREENSHOTS:-}" ] && cp "$TMPD/$name.png" "$KEEP_SCREENSHOTS/bucket-list-$name.png"
	return 0
}

# row_facts NAME DOM: each row as top's JSON has it (the DOM Chromium built).
row_facts() {
	python3 - "$2" "$TMPD/top.json" "$1" "$ROOT/tests" "$TMPD/causes" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[4])
causes = dict(l.rstrip("\n").split("|", 1) for l in open(sys.argv[5]))
from dom import check, finish, load
root, body = load(sys.argv[1])
name = sys.argv[3]
top = {r["signature_hash"]: r for r in json.load(open(sys.argv[2]))}
rows = root.find("tr", "bucket")
check("bucket list: %s: a row per bucket (%d)" % (name, len(top)), len(rows) == len(top), len(rows))
bad = []
for r in rows:
    sig = r.find("span", "signature")[0].text()
    t = [x for x in top.values() if x["signature"] == sig]
    count = r.find("span", "count")[0].text()
    spark = sum(int(x.find("title")[0].text().split(": ")[1].split()[0]) for x in r.find("rect", "spark"))
    cause = r.find("td", "cause")[0].text()
    seen = r.find("td", "seen")
    if not (t and count == str(t[0]["count"]) and spark == t[0]["count"] and cause == causes.get(sig) and len(seen) == 2
            and seen[1].text().startswith("2024-05-")):
        bad.append((sig, count, spark, cause, [s.text() for s in seen]))
check("bucket list: %s: each row has its count, a sparkline adding up to it, cause, signature and "
      "last seen" % name, rows and not bad, bad[:3])
finish()
PY
}

sqlite3 "$DB" "SELECT signature, max(cause_kind || ' ' || cause_summary) FROM cores GROUP BY 1" >"$TMPD/causes"
rows_fit top "file://$TMPD/top.html"
browser "$TMPD/top.dom" --dump-dom "file://$TMPD/top.html" && row_facts top "$TMPD/top.dom"

if serve_start "$DB" "$TMPD/serve.out"; then
	BASE=http://127.0.0.1:$SERVE_PORT
	rows_fit serve "$BASE/"
	browser "$TMPD/serve.dom" --dump-dom "$BASE/" && row_facts serve "$TMPD/serve.dom"
	check "bucket list: serve: every row links to its bucket's page" test \
		"$(grep -o 'href="/bucket/[0-9a-f]*"' "$TMPD/serve.dom" | sort -u | wc -l)" = 32
	check "bucket list: serve: the columns sort (count, first seen, last seen, signature)" test \
		"$(grep -o 'href="/?sort=[a-z]*' "$TMPD/serve.dom" | sort -u | wc -l)" = 4
else
	fail "bucket list: serve did not start: $(tail -2 "$TMPD/serve.out.err")"
fi
