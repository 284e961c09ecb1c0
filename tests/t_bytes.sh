#!/usr/bin/env bash
# Bytes from a core are never lost in output: a core whose executable path
# holds 0xff bytes and a terminal escape sequence (tests/corrupt_core.py
# nt-file-bytes) gives a complete JSON document with U+FFFD for each invalid
# byte, the same in the store, and a text report with the bytes escaped and
# no raw control character.  A writer that cannot write exits 2 with the
# reason.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "bytes: no asyncore at $ASYNCORE (run make)"; exit 0; }
fix_core store_crash "" segv 1 || { no_core bytes $?; exit 0; }
core=$TMPD/bad.core prog=$FIX_DIR/prog
python3 "$ROOT/tests/corrupt_core.py" "$FIX_CORE" "$core" nt-file-bytes ||
	{ fail "bytes: cannot patch the core"; exit 0; }
# The executable's directory, whose last name the patch changed.
dir=${FIX_DIR%/*}

# JSON: a complete document, every string valid UTF-8, the bytes replaced.
asy_json "$TMPD/out.json" "$core"
check "bytes: json exit 0 or 1 (exit $ASY_RC)" test "$ASY_RC" -le 1
check "bytes: json is a complete document" test "$ASY_JSON_OK" = 0
want=$(python3 -c 'import sys; print(sys.argv[1] + "/store\ufffd\x1b[2J\ufffd/prog")' "$dir")
got=$(jget "$TMPD/out.json" "j['modules'][0]['path']")
check "bytes: json module path has U+FFFD for 0xff and keeps the escape sequence" test "$got" = "$want"
got=$(jget "$TMPD/out.json" "j['core']['executable']")
check "bytes: json executable (AT_EXECFN) the same" test "$got" = "$want"
n=$(python3 - "$TMPD/out.json" "$want" <<'PY'
import json, sys
j, want = json.load(open(sys.argv[1])), sys.argv[2]
print(sum(1 for w in j["warnings"] if want in w))
PY
)
check "bytes: json warning names the path with U+FFFD ($n)" test "${n:-0}" -ge 1

# Text: the bytes escaped, no control character but newlines.
"$ASYNCORE" "$core" >"$TMPD/out.txt" 2>"$TMPD/out.err"; rc=$?
check "bytes: text exit 0 or 1 (exit $rc)" test "$rc" -le 1
check "bytes: text shows the path escaped" grep -qF 'store\xff\x1b[2J\xff/prog' "$TMPD/out.txt"
# clean FILE: UTF-8 throughout, no control character but newlines, no C1.
clean() {
	python3 -c '
import re, sys
t = open(sys.argv[1], "rb").read().decode("utf-8")
sys.exit(1 if re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", t) else 0)' "$1"
}
check "bytes: text is UTF-8 with no raw control character" clean "$TMPD/out.txt"
"$ASYNCORE" "$core" "$prog" >"$TMPD/bin.txt" 2>&1
check "bytes: with the binary given, the crash is symbolized" grep -q 'in store_parse_header' "$TMPD/bin.txt"

# HTML: valid UTF-8, the path with U+FFFD for each byte a page cannot show.
"$ASYNCORE" report "$core" --format html >"$TMPD/out.html" 2>/dev/null; rc=$?
check "bytes: html exit 0 or 1 (exit $rc)" test "$rc" -le 1
check "bytes: html is UTF-8 with no raw control character but tabs and newlines" \
	python3 -c '
import re, sys
t = open(sys.argv[1], "rb").read().decode("utf-8")
sys.exit(1 if re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", t) else 0)' "$TMPD/out.html"
check "bytes: html shows the path with U+FFFD" \
	grep -qF "store$(printf '\357\277\275\357\277\275')[2J$(printf '\357\277\275')/" "$TMPD/out.html"

# The warnings on stderr: escaped as the text report is.
check "bytes: the warnings on stderr escape the path" \
	grep -qF 'store\xff\x1b[2J\xff/prog not found' "$TMPD/out.err"
check "bytes: stderr is UTF-8 with no raw control character" clean "$TMPD/out.err"

# The store: valid UTF-8 in every column, the same replacement.
db=$TMPD/bytes.db
"$ASYNCORE" ingest --db "$db" --quiet "$core" >/dev/null 2>"$TMPD/ingest.err"
check "bytes: ingest stores the core" test "$(sqlite3 "$db" 'SELECT count(*) FROM cores')" = 1
got=$(sqlite3 "$db" 'SELECT path FROM modules WHERE idx = 0')
check "bytes: store module path has U+FFFD" test "$got" = "$want"
bad=$(sqlite3 "$db" "SELECT count(*) FROM warnings WHERE message LIKE '%' || char(65533) || '%'")
check "bytes: store warning has U+FFFD ($bad)" test "${bad:-0}" -ge 1
"$ASYNCORE" query --db "$db" "SELECT path FROM modules" >"$TMPD/q.txt" 2>&1
check "bytes: query table escapes the escape sequence" grep -qF '\x1b[2J' "$TMPD/q.txt"
check "bytes: query table is UTF-8 with no raw control character" clean "$TMPD/q.txt"

# A file name is bytes too (a crashing program names its own systemd-coredump
# core): lines about it on stderr are escaped.
mkdir -p "$TMPD/names"
name=$(printf 'core.\033[2J\377.1')
echo "not a core" >"$TMPD/names/$name"
"$ASYNCORE" ingest --db "$TMPD/names.db" --quiet "$TMPD/names" 2>"$TMPD/names.err"; rc=$?
check "bytes: ingest of a file whose name holds an escape sequence fails it (exit $rc)" test "$rc" = 1
check "bytes: ... its line on stderr has the name escaped" grep -qF 'core.\x1b[2J\xff.1: ' "$TMPD/names.err"
check "bytes: ... stderr has no raw control character" clean "$TMPD/names.err"
"$ASYNCORE" report "$TMPD/names/$name" 2>"$TMPD/names.err"; rc=$?
check "bytes: report of it: exit 2, the name escaped (exit $rc)" \
	test "$rc/$(grep -cF 'core.\x1b[2J\xff.1' "$TMPD/names.err")" = 2/1
check "bytes: ... stderr has no raw control character" clean "$TMPD/names.err"

# A writer that cannot write: exit 2, one line with the reason.
if [ -w /dev/full ]; then
	for f in "text" "json --format json" "html --format html"; do
		set -- $f
		name=$1; shift
		"$ASYNCORE" report "$core" "$@" >/dev/full 2>"$TMPD/full.err"; rc=$?
		check "bytes: $name report to a full disk exits 2 with the reason (exit $rc)" \
			test "$rc/$(grep -c 'could not be written: No space left on device' "$TMPD/full.err")" = 2/1
	done
	"$ASYNCORE" query --db "$db" "SELECT * FROM modules" >/dev/full 2>"$TMPD/full.err"; rc=$?
	check "bytes: query to a full disk exits 2 with the reason (exit $rc)" \
		test "$rc/$(grep -c 'No space left on device' "$TMPD/full.err")" = 2/1
else
	skip "bytes: no writable /dev/full"
fi
