#!/usr/bin/env bash
# The command line contract: one option syntax in every command, usage
# errors as one line and exit 2, and one core identity shared by the JSON
# report and the store (a core and its .zst copy are one core).
source "$(dirname "$0")/lib.sh"

W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
dir=$(fixture_build abort1 2>"$W/build.err") || { fail "cli: abort1 fixture: $(tail -1 "$W/build.err")"; exit 0; }
core=$(fixture_core "$dir" 2>"$W/core.err"); rc=$?
if [ $rc -eq 77 ]; then skip "cli: no core: $(head -1 "$W/core.err")"; exit 0; fi
cp "$core" "$W/c.core"; rm -rf "$(dirname "$core")"
zstd -q -k "$W/c.core" -o "$W/c.core.zst"

# usage_error NAME CMD...: exit 2 with one line on stderr naming WANT.
usage_error() {
	local name=$1 want=$2; shift 2
	"$@" >"$W/out" 2>"$W/err"; local rc=$?
	check "cli: $name exits 2" [ $rc -eq 2 ]
	check "cli: $name says one line naming $want" \
		[ "$(wc -l <"$W/err")" -eq 1 -a -n "$(grep -F -- "$want" "$W/err")" ]
}
usage_error "report unknown option" "--bogus" "$ASYNCORE" report "$W/c.core" --bogus
usage_error "report missing value" "--format" "$ASYNCORE" report "$W/c.core" --format
usage_error "report bad choice" "--format" "$ASYNCORE" report "$W/c.core" --format=xml
usage_error "flag with a value" "--no-async" "$ASYNCORE" report "$W/c.core" --no-async=1
usage_error "ingest unknown option" "--bogus" "$ASYNCORE" ingest --db "$W/x.db" --bogus "$W/c.core"
usage_error "ingest missing value" "--jobs" "$ASYNCORE" ingest "$W/c.core" --db "$W/x.db" --jobs
usage_error "ingest bad number" "--jobs" "$ASYNCORE" ingest --db="$W/x.db" --jobs=zero "$W/c.core"
usage_error "query unknown option" "--bogus" "$ASYNCORE" query --db "$W/x.db" --bogus "SELECT 1"
usage_error "top missing value" "--limit" "$ASYNCORE" top --db "$W/x.db" --limit

# --name=value and --name value are one option.
"$ASYNCORE" report "$W/c.core" "$dir/prog" --format=json --threads=crashing --max-frames=50 >"$W/eq.json" 2>/dev/null
"$ASYNCORE" report "$W/c.core" "$dir/prog" --format json --threads crashing --max-frames 50 >"$W/sp.json" 2>/dev/null
python3 - "$W/eq.json" "$W/sp.json" >"$W/cmp" 2>&1 <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    d["core"].pop("sha256", None)
print("same" if a == b and len(a["threads"]) == 1 else "differ")
PY
check "cli: report --name=value equals --name value" grep -qx same "$W/cmp"

# One identity: ingest the .zst, then the JSON of the raw core agrees with the row.
"$ASYNCORE" ingest --db="$W/x.db" --quiet --sha256 "$W/c.core.zst" >/dev/null 2>"$W/err"
check "cli: ingest --db=FILE of a .zst exits 0" [ $? -eq 0 ]
"$ASYNCORE" ingest --db "$W/x.db" "$W/c.core" >"$W/out" 2>"$W/err"
check "cli: the raw core of a stored .zst is already present" grep -q "already present 1" "$W/out"
"$ASYNCORE" report "$W/c.core" "$dir/prog" --format=json --sha256 >"$W/raw.json" 2>/dev/null
"$ASYNCORE" query --db="$W/x.db" --format=json \
	"SELECT fingerprint, sha256, file_size, size, analyzer_version FROM cores" >"$W/row.json"
python3 - "$W/raw.json" "$W/row.json" "$W/c.core" "$W/c.core.zst" "$("$ASYNCORE" --version)" >"$W/ident" 2>&1 <<'PY'
import hashlib, json, os, sys
rep, rows, raw, zst, version = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4], sys.argv[5]
row, core = rows[0], rep["core"]
problems = []
def want(what, ok):
    if not ok: problems.append(what)
want("one row", len(rows) == 1)
want("fingerprint", core["fingerprint"] == row["fingerprint"])
want("size", core["size"] == row["size"] == os.path.getsize(raw))
want("file_size of the raw core", core["file_size"] == os.path.getsize(raw))
want("file_size of the .zst row", row["file_size"] == os.path.getsize(zst))
want("sha256 of the raw core", core["sha256"] == hashlib.sha256(open(raw, "rb").read()).hexdigest())
want("sha256 of the .zst row", row["sha256"] == hashlib.sha256(open(zst, "rb").read()).hexdigest())
want("version", version == "asyncore " + rep["asyncore_version"] and row["analyzer_version"] == rep["asyncore_version"])
print("ok" if not problems else "differ: " + ", ".join(problems))
PY
check "cli: JSON core identity and version agree with the cores row" grep -qx ok "$W/ident"
grep -qx ok "$W/ident" || sed 's/^/    /' "$W/ident"
check "cli: JSON core.sha256 is null without --sha256" \
	[ "$(json_get "$W/eq.json" 'j["core"]["sha256"]')" = None ]
"$ASYNCORE" report "$W/c.core" --format=text >"$W/text" 2>/dev/null
"$ASYNCORE" report "$W/c.core" --format=json >"$W/nobin.json" 2>/dev/null
check "cli: the text report and JSON without BINARY still work" [ -s "$W/text" -a -s "$W/nobin.json" ]
exit 0
