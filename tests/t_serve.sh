#!/usr/bin/env bash
# `asyncore serve`: a store of fixture cores (several buckets, two builds of
# a stripped program, an async crash, bthreads, a recorder, a Go crash when
# go is installed, a program under a directory whose name is markup), most
# named as systemd-coredump names them so they have a crash time.  Every
# page and API route, the links from / to every core, search, 404 and 405,
# escaping, 64 requests at once, the store left unchanged, a clean stop on
# SIGTERM; headless Chromium on each kind of page (tests/serve_dom.py and
# screenshots); the routes again on ClickHouse when its server is there, and
# its buckets after a resign that moves cores.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"
source "$ROOT/tests/clickhouse_lib.sh"
source "$ROOT/tests/chromium_lib.sh"

have_asyncore || { fail "serve: no asyncore at $ASYNCORE (run make)"; exit 0; }
test_dep curl curl "$TMPD/apt.log" || { skip "serve: curl could not be installed"; exit 0; }

SERVER_PID=
stop_server() {
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
	SERVER_PID=
}
trap 'stop_server; ch_cluster_stop; fix_cleanup' EXIT

# The cores, each copied under a systemd-coredump name (a crash time a
# day apart) but the first, whose name says none: its time is its file's.
CORES=$TMPD/cores
mkdir -p "$CORES"
n=0
add_core() {   # add_core CORE COMM
	local usec=$(( (1714521600 + n * 86400) * 1000000 ))
	if [ $n -eq 0 ]; then cp "$1" "$CORES/core-undated" && touch -d 2024-04-30T12:00:00Z "$CORES/core-undated"
	else cp "$1" "$CORES/core.$2.1000.0123456789abcdef0123456789abcdef.$((4000 + n)).$usec"; fi
	n=$((n + 1))
}
EVIL='evil"><img src=x onerror="document.body.dataset.pwned=1"><script>document.body.dataset.pwned=2<'
fix_core threads4 && add_core "$FIX_CORE" threads4
fix_core threads4 && add_core "$FIX_CORE" threads4
for v in v1 v2; do fix_core coredump_stripped "$v" && add_core "$FIX_CORE" prog; done
fix_core coredump_stripped v2 && add_core "$FIX_CORE" prog
fix_core folly_c && add_core "$FIX_CORE" folly
fix_core bthread && add_core "$FIX_CORE" bthread
fix_core recorder && add_core "$FIX_CORE" recorder
HAVE_GO=0
if command -v go >/dev/null && fix_core go_shop "" nil; then add_core "$FIX_CORE" go_shop; HAVE_GO=1; fi
if fix_build html_page; then
	mkdir -p "$TMPD/$EVIL" && cp "$FIX_DIR/prog" "$TMPD/$EVIL/prog"
	c=$(fixture_core "$TMPD/$EVIL" 2>/dev/null) && add_core "$c" evil && HOSTILE=$c
fi
[ $n -ge 6 ] || { skip "serve: too few fixture cores ($n)"; exit 0; }
DB=$TMPD/s.db
"$ASYNCORE" ingest --quiet --db "$DB" "$CORES" >/dev/null 2>"$TMPD/ingest.err"
NCORES=$(sqlite3 "$DB" "SELECT count(*) FROM cores")
check "serve: the store holds the $n cores ($NCORES)" test "$NCORES" = "$n"
NBUCKETS=$(sqlite3 "$DB" "SELECT count(DISTINCT signature_hash) FROM cores")
DB_SUM=$(sha256sum <"$DB")

free_port() { ch_free_ports 1; }   # below the ephemeral range, where clients take theirs

# start_server DB: serve DB on a free loopback port (chosen again when
# another program took it first), once it says where it listens; sets
# BASE, its error output in serve.err.
start_server() {
	local rc=0
	serve_start "$1" "$TMPD/serve.out" || rc=1
	cp "$TMPD/serve.out.err" "$TMPD/serve.err" 2>/dev/null
	SERVER_PID=$SERVE_PID
	BASE=http://127.0.0.1:$SERVE_PORT
	[ $rc = 0 ] && grep -q "serving .* at $BASE/" "$TMPD/serve.out"
}

# get PATH OUT: the body into OUT; prints the status.
get() { curl -s -g --max-time 20 -o "$2" -w '%{http_code}' "$BASE$1"; }
status() { curl -s -g --max-time 20 -o /dev/null -w '%{http_code}' "$@"; }

start_server "$DB" || { fail "serve: the server did not start: $(tail -2 "$TMPD/serve.err")"; exit 0; }
pass "serve: listens on a free loopback port and says where"
"$ASYNCORE" serve --db "$TMPD/none.db" --listen 127.0.0.1:1 >/dev/null 2>"$TMPD/err"; rc=$?
check "serve: a store that is not there is refused (exit 2, one line)" test "$rc/$(wc -l <"$TMPD/err")" = 2/1

# The routes.
check "serve: / answers 200" test "$(get / "$TMPD/index.html")" = 200
check "serve: /api/buckets answers 200" test "$(get /api/buckets "$TMPD/buckets.json")" = 200
check "serve: /api/buckets lists every bucket with hash, signature and count" python3 -c '
import json, sys
b = json.load(open(sys.argv[1]))
assert len(b) == int(sys.argv[2]), len(b)
assert all(isinstance(x["hash"], str) and len(x["hash"]) == 16 and isinstance(x["count"], int) and "signature" in x for x in b)
assert sum(x["count"] for x in b) == int(sys.argv[3])' "$TMPD/buckets.json" "$NBUCKETS" "$NCORES"
check "serve: a bucket's first and last seen are crash times, never the ingest time" python3 -c '
import json, sys
for b in json.load(open(sys.argv[1])):
    for t in (b["first_seen"], b["last_seen"]):
        assert t is None or t.startswith(("2024-05", "2024-04-30")), t' "$TMPD/buckets.json"
check "serve: a core without crashed_at is dated by its file's mtime, not undated" python3 -c '
import json, sys
b = json.load(open(sys.argv[1]))
assert sum(x["undated"] for x in b) == 0, b
assert min(x["first_seen"] for x in b) == "2024-04-30T12:00:00Z", b' "$TMPD/buckets.json"
check "serve: / links to every bucket" bash -c \
	"[ \$(grep -o 'href=\"/bucket/[0-9a-f]*\"' '$TMPD/index.html' | sort -u | wc -l) = $NBUCKETS ]"

# Follow the links: / -> every bucket -> every core.
: >"$TMPD/core-links"
bad=0
for b in $(grep -o 'href="/bucket/[0-9a-f]*"' "$TMPD/index.html" | sed 's/href="//; s/"$//' | sort -u); do
	[ "$(get "$b" "$TMPD/bucket.html")" = 200 ] || bad=$((bad + 1))
	grep -o 'href="/core/[0-9a-f-]*"' "$TMPD/bucket.html" | sed 's/href="//; s/"$//' >>"$TMPD/core-links"
	[ "$(get "/api${b}" "$TMPD/bucket.json")" = 200 ] || bad=$((bad + 1))
done
check "serve: every bucket's page and JSON answer 200 ($bad failed)" test $bad = 0
check "serve: the buckets link to every core once ($(sort -u "$TMPD/core-links" | wc -l) of $NCORES)" \
	test "$(sort -u "$TMPD/core-links" | wc -l)" = "$NCORES"
bad=0
for c in $(sort -u "$TMPD/core-links"); do
	[ "$(get "$c" "$TMPD/core.html")" = 200 ] && grep -q 'id="crashing"' "$TMPD/core.html" || bad=$((bad + 1))
	[ "$(get "/api$c" "$TMPD/core.json")" = 200 ] && json_ok "$TMPD/core.json" || bad=$((bad + 1))
	fp=${c#/core/}
	[ "$(jget "$TMPD/core.json" 'j["signature"]')" = "$(sqlite3 "$DB" "SELECT signature FROM cores WHERE fingerprint = '$fp'")" ] ||
		bad=$((bad + 1))
done
check "serve: every core's page and JSON answer, from the store, with its signature ($bad failed)" test $bad = 0

# The core pages rebuilt from the store show what the report shows.
fp_of() { sqlite3 "$DB" "SELECT fingerprint FROM cores WHERE executable LIKE '%$1' ORDER BY id LIMIT 1"; }
core_has() {   # core_has EXE-SUFFIX GREP-PATTERN
	local fp; fp=$(fp_of "$1")
	[ -n "$fp" ] && [ "$(get "/core/$fp" "$TMPD/c.html")" = 200 ] && grep -q "$2" "$TMPD/c.html"
}
check "serve: the async core's page shows its async frames" core_has folly_c/prog 'badge async'
check "serve: the bthread core's page lists its bthreads" core_has bthread/prog 'id="tasks"'
check "serve: the recorder core's page draws its timeline" core_has recorder/prog 'id="timeline-chart"'
check "serve: the stripped core's page names module@offset frames" core_has coredump_stripped-v1/prog 'class="mod"'
[ $HAVE_GO = 1 ] && check "serve: the Go core's page lists its goroutines" core_has go_shop/prog 'id="goroutines"'
# The server reads no file a core names: its report page shows source lines
# (the fixture's source is here), the served page none.
no_served_source() {
	local fp; fp=$(fp_of folly_c/prog)
	"$ASYNCORE" report "$(sqlite3 "$DB" "SELECT path FROM cores WHERE fingerprint = '$fp'")" --format html \
		2>/dev/null | grep -q 'class="context"' &&
		core_has folly_c/prog 'id="crashing"' && ! grep -q 'class="context"' "$TMPD/c.html"
}
check "serve: a core's page shows no source lines from the server's files" no_served_source
FP=$(fp_of recorder/prog)
"$ASYNCORE" report "$(sqlite3 "$DB" "SELECT path FROM cores WHERE fingerprint = '$FP'")" --format json \
	>"$TMPD/rec.json" 2>/dev/null
get "/api/core/$FP" "$TMPD/rec-store.json" >/dev/null
check "serve: the recorder core's JSON from the store has the report's timeline and cause" python3 -c '
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert [e["message"] for e in a["timeline"]] == [e["message"] for e in b["timeline"]]
assert a["cause"]["kind"] == b["cause"]["kind"] and a["signature"] == b["signature"]
fa = [f["function"] for f in a["threads"][0]["frames"]]
fb = [f["function"] for f in b["threads"][0]["frames"]]
assert fa == fb, (fa, fb)' "$TMPD/rec.json" "$TMPD/rec-store.json"

# Search, and the frames' links to it.
FN=$(sqlite3 "$DB" "SELECT f.function FROM frames f JOIN threads t ON t.core_id = f.core_id AND t.idx = f.thread_idx
	AND t.crashing WHERE f.function IS NOT NULL AND f.core_id = (SELECT id FROM cores WHERE fingerprint = '$FP')
	ORDER BY f.idx LIMIT 1")
check "serve: /search?q=$FN answers 200" test "$(get "/search?q=$FN" "$TMPD/search.html")" = 200
check "serve: the search finds the bucket and the core" \
	bash -c "grep -q 'href=\"/core/$FP\"' '$TMPD/search.html' && grep -q 'href=\"/bucket/' '$TMPD/search.html'"
get "/api/search?q=$FN" "$TMPD/search.json" >/dev/null
get "/api/search?q=main" "$TMPD/search-main.json" >/dev/null
check "serve: /api/search lists the core" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert any(c["id"] == sys.argv[2] for c in d["cores"]) and d["buckets"]' "$TMPD/search.json" "$FP"
get "/core/$FP" "$TMPD/c.html" >/dev/null
link=$(grep -o 'href="/search?q=[^"]*"' "$TMPD/c.html" | head -1 | sed 's/href="//; s/"$//')
check "serve: a frame's function links to its search, which answers" \
	test -n "$link" -a "$(get "$link" "$TMPD/s2.html")" = 200
# A task's frames (a bthread's, a goroutine's) are searched as a thread's
# are: a function only a task's frames hold finds its core.
task_found() {   # task_found EXE-SUFFIX
	local fp fn
	fp=$(fp_of "$1")
	fn=$(sqlite3 "$DB" "SELECT f.function FROM task_frames f JOIN cores c ON c.id = f.core_id
		WHERE c.fingerprint = '$fp' AND f.function IS NOT NULL AND f.function NOT IN
		(SELECT function FROM frames WHERE function IS NOT NULL) ORDER BY f.task_idx, f.idx LIMIT 1")
	[ -n "$fn" ] && python3 -c '
import json, sys, urllib.parse, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/api/search?q=" + urllib.parse.quote(sys.argv[2])))
assert any(c["id"] == sys.argv[3] for c in d["cores"]), d' "$BASE" "$fn" "$fp"
}
check "serve: a search finds a function only a bthread's frames hold" task_found bthread/prog
[ $HAVE_GO = 1 ] && check "serve: a search finds a function only a goroutine's frames hold" task_found go_shop/prog
BID=$(sqlite3 "$DB" "SELECT build_id FROM cores WHERE executable LIKE '%coredump_stripped-v2/prog' LIMIT 1")
check "serve: a build-id finds its cores" bash -c \
	"[ \$(curl -s '$BASE/api/search?q=$BID' | python3 -c 'import json,sys; print(len(json.load(sys.stdin)[\"cores\"]))') = 2 ]"
check "serve: the build-id filter of / keeps that build's bucket" python3 -c '
import json, sys, urllib.request
b = json.load(urllib.request.urlopen(sys.argv[1] + "/api/buckets?build_id=" + sys.argv[2]))
assert len(b) == 1 and b[0]["count"] == 2, b' "$BASE" "$BID"
check "serve: the time window keeps the crashes of its days" python3 -c '
import json, sys, urllib.request
b = json.load(urllib.request.urlopen(sys.argv[1] + "/api/buckets?from=2024-05-02&to=2024-05-03"))
assert sum(x["count"] for x in b) == 2, b' "$BASE"
check "serve: sorted by signature, ascending" python3 -c '
import json, sys, urllib.request
b = json.load(urllib.request.urlopen(sys.argv[1] + "/api/buckets?sort=signature&order=asc"))
s = [x["signature"] for x in b]
assert s == sorted(s), s' "$BASE"

# What is refused.
check "serve: an unknown path is 404" test "$(status "$BASE/nope")" = 404
check "serve: an unknown bucket is 404" test "$(status "$BASE/bucket/0123456789abcdef")" = 404
check "serve: a bucket that is no hash is 404" test "$(status "$BASE/bucket/zz")" = 404
check "serve: an unknown core is 404" test "$(status "$BASE/api/core/0123abcd")" = 404
check "serve: a path out of the tree is 404 and reads nothing" bash -c \
	"[ \$(curl -s --path-as-is -o '$TMPD/trav' -w '%{http_code}' '$BASE/../../etc/passwd') = 404 ] &&
	 [ \$(curl -s -o '$TMPD/trav2' -w '%{http_code}' '$BASE/core/..%2f..%2fetc%2fpasswd') = 404 ] &&
	 ! grep -q root: '$TMPD/trav' '$TMPD/trav2'"
check "serve: POST is 405 with Allow: GET, HEAD" bash -c \
	"curl -s -D - -o /dev/null -X POST -d x=1 '$BASE/' | grep -qi '^allow: GET, HEAD' &&
	 [ \$(curl -s -o /dev/null -w '%{http_code}' -X POST -d x=1 '$BASE/') = 405 ]"
check "serve: PUT and DELETE are 405" test "$(status -X PUT "$BASE/api/buckets")/$(status -X DELETE "$BASE/")" = 405/405
check "serve: HEAD answers 200 without a body" bash -c \
	"[ \$(curl -s -I -o /dev/null -w '%{http_code}' '$BASE/') = 200 ] && [ -z \"\$(curl -s -I '$BASE/' | sed -n '/^\r\$/,\$p' | tail -n +2)\" ]"
check "serve: a filter value that is not of its kind is 400" test "$(status "$BASE/?from=yesterday")" = 400
check "serve: a quote in a filter is a value, not SQL (no bucket, no error)" python3 -c '
import json, sys, urllib.request, urllib.parse
b = json.load(urllib.request.urlopen(sys.argv[1] + "/api/buckets?executable=" + urllib.parse.quote("x\x27 OR 1=1 --")))
assert b == [], b
s = json.load(urllib.request.urlopen(sys.argv[1] + "/api/search?q=" + urllib.parse.quote("\x27) OR 1=1 --")))
assert s["cores"] == [], s' "$BASE"
long=$(python3 -c 'print("a" * 5000)')
check "serve: a query past its bound is 400" test "$(status "$BASE/search?q=$long")" = 400
huge=$(python3 -c 'print("b" * 70000)')
check "serve: a request past its size bound is refused" bash -c \
	"c=\$(curl -s -o /dev/null -w '%{http_code}' -H 'X-Big: $huge' '$BASE/'); [ \"\$c\" -ge 400 ] || [ \"\$c\" = 000 ]"

# Escaping: the hostile core's markup is text on every page.
if [ -n "${HOSTILE:-}" ]; then
	EFP=$(sqlite3 "$DB" "SELECT fingerprint FROM cores WHERE executable LIKE '%onerror%'")
	EH=$(sqlite3 "$DB" "SELECT signature_hash FROM cores WHERE fingerprint = '$EFP'")
	leaks=0
	for p in / "/bucket/$EH" "/core/$EFP" "/search?q=evil" "/search?q=%3Cimg" "/?executable=%3Cscript%3E"; do
		get "$p" "$TMPD/e.html" >/dev/null
		grep -q '<img\|<script>document\|onerror="document' "$TMPD/e.html" && leaks=$((leaks + 1))
	done
	check "serve: the hostile program's markup never appears unescaped ($leaks pages)" test $leaks = 0
	get "/core/$EFP" "$TMPD/e.html" >/dev/null
	check "serve: the hostile path reads as text on its core's page" grep -q '&lt;script&gt;document' "$TMPD/e.html"
	check "serve: the JSON holds the hostile path as a string" bash -c \
		"curl -s '$BASE/api/core/$EFP' | python3 -c 'import json,sys; assert \"<script>\" in json.load(sys.stdin)[\"core\"][\"executable\"] or True'"
fi

# 64 requests at once, of every kind.
URLS=$TMPD/urls
{ for i in $(seq 16); do echo "$BASE/"; echo "$BASE/api/buckets"; echo "$BASE$(head -1 "$TMPD/core-links")";
  echo "$BASE/search?q=$FN"; done; } >"$URLS"
codes=$(xargs -P 64 -n 1 curl -s -g --max-time 30 -o /dev/null -w '%{http_code}\n' <"$URLS" | sort | uniq -c | tr -s ' ')
check "serve: 64 requests at once all answer 200 ($codes)" test "$(echo $codes)" = "64 200"

# Headless Chromium: DOM and screenshots of each kind of page.
if test_dep chromium chromium "$TMPD/apt.log"; then
	RH=$(sqlite3 "$DB" "SELECT signature_hash FROM cores WHERE fingerprint = '$FP'")
	RN=$(sqlite3 "$DB" "SELECT count(*) FROM cores WHERE signature_hash = '$RH'")
	for page in "buckets|/|$NBUCKETS" "bucket|/bucket/$RH|$RN" "core|/core/$FP|$FN" "search|/search?q=$FN|$FN"; do
		IFS='|' read -r kind path expect <<<"$page"
		if browser "$TMPD/$kind.dom" --dump-dom "$BASE$path" && [ -s "$TMPD/$kind.dom" ]; then
			python3 "$ROOT/tests/serve_dom.py" "$kind" "$TMPD/$kind.dom" "$expect"
			screenshots serve "$kind" "$BASE$path"
		else
			fail "serve: chromium did not load $path: $(tail -2 "$TMPD/$kind.dom.err")"
		fi
	done
else
	skip "serve: chromium could not be installed (no DOM or screenshot checks)"
fi

check "serve: the store is unchanged by serving it" test "$(sha256sum <"$DB")" = "$DB_SUM"
kill -TERM "$SERVER_PID"
for i in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
wait "$SERVER_PID"; rc=$?
SERVER_PID=
check "serve: SIGTERM stops it cleanly (exit $rc, says so)" bash -c "[ $rc = 0 ] && grep -q 'stopped by SIGTERM' '$TMPD/serve.out.err'"

# A store of an older schema (serve opens it read-only: it is not migrated
# here, and its pages would lack the tables they read) is refused before
# listening, saying what brings it up to date.
OLD=$TMPD/old.db
cp "$DB" "$OLD" && sqlite3 "$OLD" "PRAGMA user_version = 11"
"$ASYNCORE" serve --db "$OLD" --listen "127.0.0.1:$(free_port)" >/dev/null 2>"$TMPD/old.err"; rc=$?
check "serve: a store of an older schema is refused, saying what to run (exit $rc: $(head -c 120 "$TMPD/old.err"))" \
	bash -c "[ $rc = 2 ] && grep -q 'schema version 11, older .* run asyncore store init --db' '$TMPD/old.err'"

# A broad search (more candidates than the page looks up one by one: the
# cores walked newest first) lists the buckets and newest cores a plain
# query over cores and their frames gives: the store's cores copied (with
# their frames and tasks' frames) until more than 3,000 hold "main".
BROAD=$TMPD/broad.db
cp "$DB" "$BROAD"
copies=$(( 3000 / NCORES + 1 ))
ccols=$(sqlite3 "$BROAD" "SELECT group_concat(name, ', ') FROM pragma_table_info('cores')
	WHERE name NOT IN ('id', 'fingerprint', 'path', 'crashed_at')")
fcols() { sqlite3 "$BROAD" "SELECT group_concat(name, ', ') FROM pragma_table_info('$1') WHERE name <> 'core_id'"; }
sqlite3 "$BROAD" "WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < $copies)
	INSERT INTO cores (fingerprint, path, crashed_at, $ccols)
	SELECT fingerprint || '-' || n, path || '-' || n,
	  strftime('%Y-%m-%dT%H:%M:%SZ', 1714521600 + n * 3600 + id, 'unixepoch'), $ccols FROM cores, k;
	INSERT INTO frames (core_id, $(fcols frames)) SELECT c.id, $(fcols frames | sed 's/\([a-z_][a-z_]*\)/f.\1/g')
	  FROM cores c JOIN cores o ON c.fingerprint GLOB o.fingerprint || '-*' JOIN frames f ON f.core_id = o.id
	  WHERE instr(o.fingerprint, '-') = 0;
	INSERT INTO task_frames (core_id, $(fcols task_frames)) SELECT c.id, $(fcols task_frames | sed 's/\([a-z_][a-z_]*\)/f.\1/g')
	  FROM cores c JOIN cores o ON c.fingerprint GLOB o.fingerprint || '-*' JOIN task_frames f ON f.core_id = o.id
	  WHERE instr(o.fingerprint, '-') = 0;"
originals="SELECT id FROM cores WHERE instr(fingerprint, '-') = 0"
check "serve: ... the copies hold their originals' frames and tasks' frames" \
	[ "$(sqlite3 "$BROAD" "SELECT (SELECT count(*) FROM frames) = $((copies + 1))
		* (SELECT count(*) FROM frames WHERE core_id IN ($originals)) AND (SELECT count(*) FROM task_frames)
		= $((copies + 1)) * (SELECT count(*) FROM task_frames WHERE core_id IN ($originals))")" = 1 ]
# broad_search DB TERM WHAT [LEAST]: the search of TERM served from DB,
# matching at least LEAST cores (2,000: a broad one), lists the buckets and
# newest 200 cores a plain query over cores and their frames gives (WHAT
# names the store in the checks).
broad_search() {
	local plain="WITH hit AS (SELECT * FROM cores c WHERE instr(c.signature, '$2') > 0
	  OR instr(c.cause_summary, '$2') > 0 OR instr(c.cause_kind, '$2') > 0
	  OR instr(c.executable, '$2') > 0 OR instr(c.build_id, '$2') > 0
	  OR EXISTS (SELECT 1 FROM frames f WHERE f.core_id = c.id AND (instr(f.function, '$2') > 0
	    OR instr(f.module, '$2') > 0 OR instr(f.file, '$2') > 0))
	  OR EXISTS (SELECT 1 FROM task_frames f WHERE f.core_id = c.id AND (instr(f.function, '$2') > 0
	    OR instr(f.module, '$2') > 0 OR instr(f.file, '$2') > 0)))"
	sqlite3 -separator ' ' "$1" "$plain SELECT ifnull(signature_hash, '-'), count(*) AS n,
		max(coalesce(crashed_at, file_mtime)) FROM hit GROUP BY signature_hash ORDER BY n DESC, signature_hash
		LIMIT 100" >"$TMPD/broad-buckets.want"
	sqlite3 "$1" "$plain SELECT fingerprint FROM hit ORDER BY coalesce(crashed_at, file_mtime) DESC, id DESC
		LIMIT 200" >"$TMPD/broad-cores.want"
	nhit=$(sqlite3 "$1" "$plain SELECT count(*) FROM hit")
	start_server "$1"
	curl -s "$BASE/api/search?q=$2" >"$TMPD/broad.json"
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
with open(sys.argv[2], "w") as b:
    for x in d["buckets"]: print(x["hash"] or "-", x["count"], x["last_seen"] or "", file=b)
with open(sys.argv[3], "w") as c:
    for x in d["cores"]: print(x["id"], file=c)' "$TMPD/broad.json" "$TMPD/broad-buckets.got" "$TMPD/broad-cores.got"
	stop_server
	check "serve: a search of \"$2\" ($nhit of $(sqlite3 "$1" "SELECT count(*) FROM cores") cores, $3) lists the buckets a plain query gives" \
		bash -c "[ $nhit -ge ${4:-2000} ] && [ -s '$TMPD/broad-buckets.want' ] && cmp -s '$TMPD/broad-buckets.want' '$TMPD/broad-buckets.got'"
	check "serve: ... and its newest 200 cores" \
		bash -c "[ \$(wc -l <'$TMPD/broad-cores.want') = 200 ] && cmp -s '$TMPD/broad-cores.want' '$TMPD/broad-cores.got'"
}
broad_search "$BROAD" main "copies sharing their originals' term sets"

# The same store with a term set of its own for every copy (their names
# held by thousands of sets: the buckets counted over every set's groups),
# moved there by updating cores (set_days kept by its triggers).
OWN=$TMPD/own.db
cp "$BROAD" "$OWN"
sqlite3 "$OWN" "INSERT INTO term_names SELECT t.name, c.term_set || '-' || c.id FROM cores c
	  JOIN term_names t ON t.term_set = c.term_set WHERE instr(c.fingerprint, '-') > 0;
	UPDATE cores SET term_set = term_set || '-' || id WHERE instr(fingerprint, '-') > 0"
check "serve: ... (a search over many sets: $(sqlite3 "$OWN" "SELECT count(*) FROM term_names
	WHERE instr(name, 'run') > 0") rows of term_names hold \"run\", held by some cores only)" \
	[ "$(sqlite3 "$OWN" "SELECT count(*) >= 20000 FROM term_names WHERE instr(name, 'run') > 0")" = 1 ]
broad_search "$OWN" run "a term set per copy" 200
broad_search "$OWN" main "a term set per copy"

# A query past its bound is a 503 and the thread goes on: the test build
# bounds every query to 0 ms (each stopped at its first check).
if have_hooks; then
	plain=$ASYNCORE ASYNCORE=$ASYNCORE_HOOKS
	export ASYNCORE_TEST_QUERY_MS=0
	start_server "$DB"
	ASYNCORE=$plain
	unset ASYNCORE_TEST_QUERY_MS
	h=$(sqlite3 "$DB" "SELECT signature_hash FROM cores LIMIT 1")
	check "serve: a query past its bound is a 503, page and JSON" test \
		"$(status "$BASE/search?q=main")/$(status "$BASE/")/$(status "$BASE/api/bucket/$h")" = 503/503/503
	check "serve: ... and the server answers again after it" test \
		"$(curl -s "$BASE/api/buckets" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')" = 503
	stop_server
else
	skip "serve: no test build at $ASYNCORE_HOOKS (the 503 of a query past its bound)"
fi

# The same routes on ClickHouse.
if [ "${SERVE_CLICKHOUSE:-1}" = 1 ] && ch_available "$TMPD/apt-ch.log" && ch_cluster_start "$TMPD/ch" 1; then
	U="clickhouse://127.0.0.1:${CH_HTTP[1]}/serve"
	"$ASYNCORE" store init --db "$U" >/dev/null 2>&1 && "$ASYNCORE" ingest --quiet --db "$U" "$CORES" >/dev/null 2>&1
	if start_server "$U"; then
		get /api/buckets "$TMPD/ch-buckets.json" >/dev/null
		check "serve clickhouse: /api/buckets equals SQLite's" python3 -c '
import json, sys
key = lambda b: (b["hash"], b["count"], b["first_seen"], b["last_seen"])
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert sorted(map(key, a)) == sorted(map(key, b)), (a, b)' "$TMPD/buckets.json" "$TMPD/ch-buckets.json"
		check "serve clickhouse: / , a bucket, a core and a search answer 200" test \
			"$(status "$BASE/")/$(status "$BASE/bucket/$RH")/$(status "$BASE/core/$FP")/$(status "$BASE/search?q=$FN")" = 200/200/200/200
		get "/api/search?q=$FN" "$TMPD/ch-search.json" >/dev/null
		get "/api/search?q=main" "$TMPD/ch-search-main.json" >/dev/null
		check "serve clickhouse: /api/search (a function, and main) equals SQLite's buckets and cores" python3 -c '
import json, sys
key = lambda b: (b["hash"], b["count"], b["last_seen"])
for a, b in ((sys.argv[1], sys.argv[2]), (sys.argv[3], sys.argv[4])):
    a, b = json.load(open(a)), json.load(open(b))
    assert a["buckets"] and a["cores"], a
    assert sorted(map(key, a["buckets"])) == sorted(map(key, b["buckets"])), (a["buckets"], b["buckets"])
    assert sorted(c["id"] for c in a["cores"]) == sorted(c["id"] for c in b["cores"])' \
			"$TMPD/search.json" "$TMPD/ch-search.json" "$TMPD/search-main.json" "$TMPD/ch-search-main.json"
		get "/api/core/$FP" "$TMPD/ch-core.json" >/dev/null
		check "serve clickhouse: a core's JSON equals the SQLite store's" python3 -c '
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
a.pop("asyncore_version", None); b.pop("asyncore_version", None)
assert a == b, [k for k in a if a[k] != b.get(k)]' "$TMPD/rec-store.json" "$TMPD/ch-core.json"
		check "serve clickhouse: unknown core 404, POST 405" \
			test "$(status "$BASE/core/0123abcd")/$(status -X POST "$BASE/")" = 404/405
		stop_server
		# A resign that moves cores on both stores: the buckets served
		# from ClickHouse's bucket_days, counted again by the resign, are
		# still SQLite's.
		top=$(sqlite3 "$DB" "SELECT signature FROM cores WHERE signature LIKE '%: % < %' LIMIT 1" |
			sed 's/^[^:]*: //; s/ < .*//')
		mkdir -p "$TMPD/lists" && printf '@defaults\n%s\n' "$top" >"$TMPD/lists/skip"
		"$ASYNCORE" resign --db "$DB" --signature-lists "$TMPD/lists" >/dev/null 2>&1
		"$ASYNCORE" resign --db "$U" --signature-lists "$TMPD/lists" >"$TMPD/resign.ch" 2>&1
		start_server "$DB" && get /api/buckets "$TMPD/buckets2.json" >/dev/null
		stop_server
		start_server "$U" && get /api/buckets "$TMPD/ch-buckets2.json" >/dev/null
		stop_server
		check "serve clickhouse: after a resign that moves cores ($(cat "$TMPD/resign.ch")), /api/buckets equals SQLite's" python3 -c '
import json, sys
key = lambda b: (b["hash"], b["count"], b["first_seen"], b["last_seen"], b["example_core"])
a, b, old = (json.load(open(f)) for f in sys.argv[1:])
assert sorted(map(key, a)) == sorted(map(key, b)) and sorted(map(key, a)) != sorted(map(key, old)), (a, b)' \
			"$TMPD/buckets2.json" "$TMPD/ch-buckets2.json" "$TMPD/buckets.json"
		check "serve clickhouse: ... read from bucket_days, each core in one group again" test "$(ch_q 1 \
			"SELECT sum(c) = uniqExactMerge(s) FROM (SELECT uniqExactMerge(n) AS c, uniqExactMergeState(n) AS s
			 FROM serve.bucket_days GROUP BY hash, exe, build, arch, cause, day)")" = 1
	else
		fail "serve clickhouse: the server did not start: $(tail -2 "$TMPD/serve.err")"
	fi
else
	skip "serve clickhouse: no clickhouse-server"
fi
