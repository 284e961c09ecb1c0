#!/usr/bin/env bash
# The HTML pages in a real browser: headless Chromium (Debian's chromium, a
# test dependency installed here when missing) loads `report --format html`
# and `top --format html` of a fixture core run from a directory whose name
# is markup; tests/html_dom.py reads the DOM Chromium built against the JSON
# report, and screenshots at 1280x900 and 390x844 must not be blank.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"
source "$ROOT/tests/chromium_lib.sh"

have_asyncore || { fail "html: no asyncore at $ASYNCORE (run make)"; exit 0; }
test_dep chromium chromium "$TMPD/apt.log" ||
	{ skip "html: chromium could not be installed: $(tail -1 "$TMPD/apt.log")"; exit 0; }

fix_build html_page || exit 0
EVIL='evil"><img src=x onerror="document.body.dataset.pwned=1"><script>document.body.dataset.pwned=2<'
mkdir -p "$TMPD/$EVIL" && cp "$FIX_DIR/prog" "$TMPD/$EVIL/prog"
FIX_CORE=$(fixture_core "$TMPD/$EVIL" 2>"$TMPD/core.err"); rc=$?
[ $rc -eq 77 ] && { no_core html 77; exit 0; }

"$ASYNCORE" report "$FIX_CORE" --format json >"$TMPD/page.json" 2>/dev/null
"$ASYNCORE" report "$FIX_CORE" --format html >"$TMPD/page.html" 2>/dev/null; rc=$?
check "html: report --format html exits as the text report does (0)" test $rc = 0
check "html: the JSON oracle saw the hostile path and messages" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert any("onerror" in (m["path"] or "") for m in j["modules"])
assert sum("<" in e["message"] for e in j["timeline"]) >= 2' "$TMPD/page.json"
check "html: the page is one file that names nothing outside it" \
	bash -c "! grep -Eiq '(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/|<link|@import|url\(' <(grep -v 'xmlns=\"http://www.w3.org/2000/svg\"' '$TMPD/page.html')"
check "html: the raw page holds the core's markup only escaped" \
	bash -c "! grep -q '<img\|<script>document' '$TMPD/page.html' && grep -q '&lt;script&gt;document' '$TMPD/page.html'"

if browser "$TMPD/page.dom" --dump-dom "file://$TMPD/page.html" && [ -s "$TMPD/page.dom" ]; then
	python3 "$ROOT/tests/html_dom.py" report "$TMPD/page.dom" "$TMPD/page.json"
	screenshots html report "file://$TMPD/page.html"
else
	fail "html: chromium did not load the report page: $(tail -2 "$TMPD/page.dom.err")"
fi

# The bucket page: the hostile core and a second crash of another kind.
fix_core threads4 || exit 0
"$ASYNCORE" ingest --quiet --db "$TMPD/s.db" "$TMPD/$EVIL"/run-*/core "$FIX_CORE" >/dev/null 2>&1
"$ASYNCORE" top --db "$TMPD/s.db" --format json >"$TMPD/top.json" 2>/dev/null
"$ASYNCORE" top --db "$TMPD/s.db" --format html >"$TMPD/top.html" 2>/dev/null; rc=$?
check "html: top --format html exits 0" test $rc = 0
if browser "$TMPD/top.dom" --dump-dom "file://$TMPD/top.html" && [ -s "$TMPD/top.dom" ]; then
	"$ASYNCORE" query --db "$TMPD/s.db" --format csv \
		"SELECT coalesce(signature_hash, ''), arch, count(*) FROM cores GROUP BY 1, 2" |
		python3 "$ROOT/tests/bucket_arches.py" >"$TMPD/arches.json"
	python3 "$ROOT/tests/html_dom.py" top "$TMPD/top.dom" "$TMPD/top.json" "$TMPD/arches.json"
	screenshots html top "file://$TMPD/top.html"
else
	fail "html: chromium did not load the bucket page: $(tail -2 "$TMPD/top.dom.err")"
fi
"$ASYNCORE" query --db "$TMPD/s.db" --format html "SELECT 1" >/dev/null 2>"$TMPD/err"; rc=$?
check "html: query refuses --format html (exit 2, one line)" test "$rc/$(wc -l <"$TMPD/err")" = 2/1
