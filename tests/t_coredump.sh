#!/usr/bin/env bash
# Crash buckets of a systemd-coredump store: a stripped program with two
# crash sites (fixtures/coredump_stripped) in two builds, each crash kept as
# plain, .zst, .xz and .lz4 copies under systemd-coredump's names.  One crash
# is one row whatever its copy; the sites bucket apart by module@offset (the
# unstripped build's symbol table is the oracle); top shows the trends; a
# resign after adding a skip-list entry merges the two buckets; with
# --journal-dir the unit and command line come from journal entries written
# by systemd-journal-remote.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/store_lib.sh"

W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
for v in v1 v2; do
	d=$(fixture_build coredump_stripped "$v" 2>"$W/build.err") ||
		{ fail "coredump: fixture build ($v): $(tail -1 "$W/build.err")"; exit 0; }
	# v1's prog is moved away below: a copy of the test's own
	[ $v = v1 ] && d=$(fixture_private "$d" "$W/fixture-$v")
	eval "D_$v=\$d"
done
for tool in zstd xz lz4; do
	command -v $tool >/dev/null || { skip "coredump: $tool is not installed"; exit 0; }
done
BOOT=$(tr -d '-' </proc/sys/kernel/random/boot_id)
UID_NOW=$(id -u)
NOW=$(($(date +%s) * 1000000))
DAY=86400000000

# The crashes: build, site, age in days.  Bucket a: 3 cores, in v1 and v2,
# one in the last 7 days; bucket b: 2 cores, only in v2 (the newest build),
# both in the last 7 days.
RUNS="v1:a:20 v1:a:10 v2:a:2 v2:b:3 v2:b:1"
mkdir "$W/store" "$W/plain"
k=0
for run in $RUNS; do
	IFS=: read -r v site age <<<"$run"
	eval "d=\$D_$v"
	c=$(fixture_core "$d" "$site" 2>"$W/core.err") ||
		{ skip "coredump: no core: $(head -1 "$W/core.err")"; exit 0; }
	pid=$(eu-readelf -n "$c" | sed -n 's/.* pid: \([0-9]*\),.*/\1/p' | head -1)
	usec=$((NOW - age * DAY + k))
	name=core.prog.$UID_NOW.$BOOT.$pid.$usec
	cp "$c" "$W/plain/$name"
	mv "$c" "$W/store/$name"
	zstd -q -c "$W/store/$name" >"$W/store/$name.zst"
	xz -c "$W/store/$name" >"$W/store/$name.xz"
	lz4 -q -c "$W/store/$name" >"$W/store/$name.lz4"
	rm -rf "$(dirname "$c")"
	echo "$name $v $site $usec $pid" >>"$W/runs"
	k=$((k + 1))
done

DB=$W/c.db
"$ASYNCORE" ingest --db "$DB" --jobs 2 "$W/store" >"$W/out" 2>"$W/err"; rc=$?
check "coredump: ingest of the store exits 0 ($rc)" [ $rc -eq 0 ]
check "coredump: 20 files, 5 crashes stored, 15 copies already present" \
	grep -q '^ingested 5, already present 15, failed 0 of 20 cores' "$W/out"
check "coredump: 5 rows" [ "$(store_q "$DB" "SELECT count(*) FROM cores")" = 5 ]
check "coredump: 2 buckets" [ "$(store_q "$DB" "SELECT count(DISTINCT signature_hash) FROM cores")" = 2 ]
mkdir "$W/renamed"   # the same crashes again, under other names, compressed otherwise
k=0
for f in "$W/plain"/*; do
	k=$((k + 1))
	case $((k % 2)) in 0) zstd -q -c "$f" >"$W/renamed/crash-$k.core.zst" ;; 1) cp "$f" "$W/renamed/crash-$k" ;; esac
done
"$ASYNCORE" ingest --db "$DB" "$W/renamed" >"$W/out.renamed" 2>&1
check "coredump: the same 5 crashes under other names are already present" \
	grep -q '^ingested 0, already present 5, failed 0 of 5 cores' "$W/out.renamed"

# Every row: crash time, boot id and UID from the name (its .zst/.xz/.lz4
# copy may be the one stored).
python3 - "$DB" "$W/runs" "$BOOT" "$UID_NOW" >"$W/names" 2>&1 <<'PY'
import datetime, os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = {os.path.basename(p).split(".zst")[0].split(".xz")[0].split(".lz4")[0]: (t, b, u)
        for p, t, b, u in db.execute("SELECT path, crashed_at, boot_id, coredump_uid FROM cores")}
bad = 0
for line in open(sys.argv[2]):
    name, v, site, usec, pid = line.split()
    usec = int(usec)
    want = datetime.datetime.fromtimestamp(usec // 1000000, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S") + ".%06dZ" % (usec % 1000000)
    got = rows.get(name)
    if got != (want, sys.argv[3], int(sys.argv[4])):
        print("%s: got %r, want %r" % (name, got, (want, sys.argv[3], int(sys.argv[4]))))
        bad += 1
sys.exit(bad != 0)
PY
check "coredump: crashed_at, boot_id, coredump_uid of every row from its name" [ $? -eq 0 ]
[ -s "$W/names" ] && sed 's/^/    /' "$W/names" | head -5

# The buckets against the unstripped build's symbols: each signature starts
# with prog@0xOFFSET inside its site's function, and no frame is named.
python3 - "$DB" "$W/runs" "$D_v1/prog.full" >"$W/sites" 2>&1 <<'PY'
import os, re, sqlite3, subprocess, sys
db = sqlite3.connect(sys.argv[1])
syms = {}
for line in subprocess.check_output(["nm", "-S", sys.argv[3]], text=True).splitlines():
    f = line.split()
    if len(f) == 4:
        syms[f[3]] = (int(f[0], 16), int(f[0], 16) + int(f[1], 16))
site_of = {}
for line in open(sys.argv[2]):
    name, v, site, usec, pid = line.split()
    site_of[name] = site
bad = 0
for path, sig in db.execute("SELECT path, signature FROM cores"):
    name = re.sub(r"\.(zst|xz|lz4)$", "", os.path.basename(path))
    m = re.match(r"SIGSEGV: prog@0x([0-9a-f]+) < prog@0x[0-9a-f]+ < ", sig or "")
    lo, hi = syms["site_" + site_of[name]]
    if not m or not lo <= int(m.group(1), 16) < hi:
        print("%s (%s): %s not in site_%s [%#x, %#x)" % (name, path, sig, site_of[name], lo, hi))
        bad += 1
sys.exit(bad != 0)
PY
check "coredump: each bucket's first frame is its site (nm of the unstripped build)" [ $? -eq 0 ]
[ -s "$W/sites" ] && sed 's/^/    /' "$W/sites" | head -5
check "coredump: runs of one site share a signature, the two sites do not" \
	[ "$(store_q "$DB" "SELECT group_concat(n, ' ') FROM (SELECT count(*) AS n FROM cores GROUP BY signature_hash ORDER BY n DESC)")" = "3 2" ]
if core_pattern_is_local; then   # kernel cores: every run at its own address
	check "coredump: site a crashed at 3 addresses, one module offset" \
		[ "$(store_q "$DB" "SELECT count(DISTINCT f.pc) || ' ' || count(DISTINCT f.module_offset) FROM frames f JOIN threads t ON t.core_id = f.core_id AND t.idx = f.thread_idx AND t.crashing JOIN cores c ON c.id = f.core_id WHERE f.idx = 0 AND c.signature_hash = (SELECT signature_hash FROM cores GROUP BY 1 ORDER BY count(*) DESC LIMIT 1)")" = "3 1" ]
fi

# Trends.
"$ASYNCORE" top --db "$DB" --format json >"$W/top.json"
python3 - "$W/top.json" "$W/runs" "$D_v1/prog" "$D_v2/prog" >"$W/trend" 2>&1 <<'PY'
import datetime, json, re, subprocess, sys
rows = json.load(open(sys.argv[1]))
def iso(usec):
    return datetime.datetime.fromtimestamp(usec // 1000000, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S") + ".%06dZ" % (usec % 1000000)
def build_id(prog):
    out = subprocess.check_output(["readelf", "-n", prog], text=True)
    return re.search(r"Build ID: ([0-9a-f]+)", out).group(1)
v1, v2 = build_id(sys.argv[3]), build_id(sys.argv[4])
runs = [l.split() for l in open(sys.argv[2])]
a = [int(r[3]) for r in runs if r[2] == "a"]
b = [int(r[3]) for r in runs if r[2] == "b"]
want = [
    {"count": 3, "first_seen": iso(min(a)), "last_seen": iso(max(a)), "last_7_days": 1, "new": 0,
     "build_ids": v1 + " " + v2},
    {"count": 2, "first_seen": iso(min(b)), "last_seen": iso(max(b)), "last_7_days": 2, "new": 1,
     "build_ids": v2},
]
got = [{k: r.get(k) for k in want[0]} for r in rows]
if got != want:
    print("got  %s\nwant %s" % (got, want))
    sys.exit(1)
PY
check "coredump: top --format json: counts, first/last seen, last 7 days, new, build-ids" [ $? -eq 0 ]
[ -s "$W/trend" ] && sed 's/^/    /' "$W/trend" | head -5
check "coredump: top --format csv has the same columns" \
	[ "$("$ASYNCORE" top --db "$DB" --format csv | head -1)" = "count,signature,first_seen,last_seen,last_7_days,new,build_ids,example_core,signature_hash,hang" ]
"$ASYNCORE" top --db "$DB" >"$W/top.txt"
check "coredump: top table lists both buckets" [ "$(tail -n +3 "$W/top.txt" | wc -l)" = 2 ]

# resign: an added skip-list entry for the two sites merges the buckets; the
# built-in lists split them again.
offs=$(store_q "$DB" "SELECT group_concat(o, '|') FROM (SELECT DISTINCT printf('%x', f.module_offset) AS o FROM frames f JOIN threads t ON t.core_id = f.core_id AND t.idx = f.thread_idx AND t.crashing WHERE f.idx = 0 ORDER BY o)")
mkdir "$W/lists"
printf '# the two sites are our crash handler\n@defaults\nprog@0x(%s)\n' "$offs" >"$W/lists/skip"
"$ASYNCORE" resign --db "$DB" --signature-lists "$W/lists" >"$W/resign" 2>&1
check "coredump: resign with the entry merges 2 buckets into 1" \
	[ "$(cat "$W/resign")" = "resigned 5 cores, 5 signatures changed; buckets 2 -> 1: 1 merged, 0 split" ]
check "coredump: one bucket of 5 after the merge" [ "$("$ASYNCORE" top --db "$DB" --format csv | tail -n +2 | cut -d, -f1)" = 5 ]
check "coredump: the merged signature starts at dispatch's frame" \
	bash -c '[[ "$1" =~ ^"SIGSEGV: prog@0x"[0-9a-f]+" < prog@0x" ]]' _ "$(store_q "$DB" "SELECT DISTINCT signature FROM cores")"
"$ASYNCORE" resign --db "$DB" >"$W/resign2" 2>&1
check "coredump: resign with the built-in lists splits it again" \
	[ "$(cat "$W/resign2")" = "resigned 5 cores, 5 signatures changed; buckets 1 -> 2: 0 merged, 1 split" ]
"$ASYNCORE" resign --db "$DB" >"$W/resign3" 2>&1
check "coredump: a second resign changes nothing" \
	[ "$(cat "$W/resign3")" = "resigned 5 cores, 0 signatures changed; buckets 2 -> 2: 0 merged, 0 split" ]
printf 'prog@0x(\n' >"$W/lists/prefix"
"$ASYNCORE" resign --db "$DB" --signature-lists "$W/lists" >/dev/null 2>"$W/err"; rc=$?
check "coredump: a bad expression is refused with its file and line (exit 2)" \
	[ $rc -eq 2 -a -n "$(grep -F "$W/lists/prefix:1: " "$W/err")" ]

# Debug info that turns up after ingest: the store keeps each frame's module
# (path, build-id) and offset, and resign symbolizes them again.  One more
# crash of v1 at a third site (c: another instruction of site_a) makes the
# offsets bucket three ways where function names bucket two.  The oracle is
# a fresh ingest with the debug files present.
mkdir "$W/later" "$W/dbg1" "$W/dbg2" "$W/wrong"
cp "$W/plain"/* "$W/later/"
c=$(fixture_core "$D_v1" c 2>"$W/core.err") || { skip "coredump: no core: $(head -1 "$W/core.err")"; exit 0; }
mv "$c" "$W/later/core.prog.$UID_NOW.$BOOT.99999.$((NOW - 5 * DAY))"
rm -rf "$(dirname "$c")"
bid_v2=$(readelf -n "$D_v2/prog" | sed -n 's/.*Build ID: //p')
cp "$D_v1/debug/prog.debug" "$W/dbg1/"                   # found by the module's name
mkdir -p "$W/dbg2/.build-id/${bid_v2:0:2}"                # found by build-id
cp "$D_v2/debug/prog.debug" "$W/dbg2/.build-id/${bid_v2:0:2}/${bid_v2:2}.debug"
cp "$D_v2/debug/prog.debug" "$W/wrong/"                   # v2's, under the name v1's would have
LDB=$W/later.db FDB=$W/fresh.db
"$ASYNCORE" ingest --db "$LDB" "$W/later" >/dev/null 2>&1
"$ASYNCORE" ingest --db "$FDB" --debug-dir "$W/dbg1" --debug-dir "$W/dbg2" "$W/later" >/dev/null 2>&1
buckets() { store_q "$1" "SELECT group_concat(n, ' ') FROM (SELECT count(*) AS n FROM cores GROUP BY signature_hash ORDER BY n DESC)"; }
check "coredump: later: without debug info, 3 buckets by offset (3 2 1)" [ "$(buckets "$LDB")" = "3 2 1" ]
check "coredump: later: a fresh ingest with the debug files: 2 buckets by name (4 2)" [ "$(buckets "$FDB")" = "4 2" ]
check "coredump: later: ... site_a, and put_word inlined into site_b" \
	[ "$(store_q "$FDB" "SELECT group_concat(signature, '|') FROM (SELECT DISTINCT signature FROM cores ORDER BY 1)")" = \
	  "SIGSEGV: put_word < site_b < dispatch < main|SIGSEGV: site_a < dispatch < main" ]
# dump DB: every frame (all but args, which need the core), module and
# frame count, per core path; the frames of the executable prog, named or not.
dump() {
	python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for row in db.execute("""SELECT c.path, f.thread_idx, f.idx, f.kind, f.pc, f.activation, f.function,
        f.function_offset, f.display, f.module, f.module_offset, f.file, f.line, f.inlined,
        f.inline_depth, f.tailcall, f.cfa, f.seam, f.runtime, f.detail, t.nframes
        FROM frames f JOIN cores c ON c.id = f.core_id
        JOIN threads t ON t.core_id = f.core_id AND t.idx = f.thread_idx ORDER BY c.path, 2, 3"""):
    print("F", *row)
for row in db.execute("""SELECT c.path, m.idx, m.path, m.build_id, m.debuginfo FROM modules m
        JOIN cores c ON c.id = m.core_id ORDER BY c.path, m.idx"""):
    print("M", *row)
for row in db.execute("""SELECT path, signature, signature_hash, nframes,
        (SELECT count(*) FROM frames f WHERE f.core_id = c.id) FROM cores c ORDER BY path"""):
    print("C", *row)
PY
}
prog_frames() {   # prog_frames DB BUILD_ID: frames in prog of that build's cores
	store_q "$1" "SELECT count(*) FROM frames f JOIN modules m ON m.core_id = f.core_id AND m.path = f.module WHERE m.path LIKE '%/prog' AND m.build_id = '$2'"
}
dump "$LDB" >"$W/later.0"
"$ASYNCORE" resign --db "$LDB" >"$W/resign.none" 2>&1; rc=$?
check "coredump: later: a resign without the debug files exits 0 and changes nothing" \
	[ $rc -eq 0 -a "$(cat "$W/resign.none")" = "resigned 6 cores, 0 signatures changed; buckets 3 -> 3: 0 merged, 0 split" ]
dump "$LDB" >"$W/later.1"
check "coredump: later: ... not a row" cmp -s "$W/later.0" "$W/later.1"

bid_v1=$(readelf -n "$D_v1/prog" | sed -n 's/.*Build ID: //p')
n_v1=$(prog_frames "$LDB" "$bid_v1") n_v2=$(prog_frames "$LDB" "$bid_v2")
WDB=$W/wrong.db
cp "$LDB" "$WDB"
"$ASYNCORE" resign --db "$WDB" --debug-dir "$W/wrong" >"$W/resign.wrong" 2>"$W/resign.wrong.err"; rc=$?
check "coredump: later: v2's debug file under v1's name: refused for v1 with a warning naming both build-ids (exit 1)" \
	[ $rc -eq 1 -a "$(cat "$W/resign.wrong.err")" = \
	  "asyncore: warning: $W/wrong/prog.debug has build-id $bid_v2 but the stored cores' $D_v1/prog has build-id $bid_v1: not used" ]
check "coredump: later: ... and taken for v2's 3 cores ($n_v2 frames in prog)" \
	[ "$(cat "$W/resign.wrong")" = "debug info found for 1 modules: $n_v2 frames of 3 cores symbolized again
resigned 6 cores, 3 signatures changed; buckets 3 -> 4: 0 merged, 1 split" ]
check "coredump: later: ... v1's frames in prog still have no name, v1's module no debug info" \
	[ "$(store_q "$WDB" "SELECT count(*) FROM frames f JOIN modules m ON m.core_id = f.core_id AND m.path = f.module WHERE m.build_id = '$bid_v1' AND (f.function IS NOT NULL OR m.debuginfo IS NOT NULL)")" = 0 ]

GDB=$W/gone.db   # ingested now, resigned with v1's binary gone
cp "$LDB" "$GDB"
cp "$LDB" "$GDB.0"
"$ASYNCORE" resign --db "$LDB" --debug-dir "$W/dbg1" --debug-dir "$W/dbg2" >"$W/resign.found" 2>&1; rc=$?
check "coredump: later: with both debug files, 6 cores symbolized again: sites a and c merge (exit 0)" \
	[ $rc -eq 0 -a "$(cat "$W/resign.found")" = "debug info found for 2 modules: $((n_v1 + n_v2)) frames of 6 cores symbolized again
resigned 6 cores, 6 signatures changed; buckets 3 -> 2: 1 merged, 0 split" ]
dump "$LDB" >"$W/later.2"
dump "$FDB" >"$W/fresh.2"
check "coredump: later: frames, inline levels, modules, counts and buckets equal a fresh ingest's" \
	cmp -s "$W/later.2" "$W/fresh.2"
cmp -s "$W/later.2" "$W/fresh.2" || diff "$W/later.2" "$W/fresh.2" | head -6 | sed 's/^/    /'
check "coredump: later: the inline level put_word made again, with its line" \
	[ "$(store_q "$LDB" "SELECT count(*) FROM frames WHERE function = 'put_word' AND inlined = 1 AND line > 0")" = 2 ]
check "coredump: later: arguments of frames symbolized again stay unknown (the core has them)" \
	[ "$(store_q "$LDB" "SELECT count(*) FROM frames WHERE function = 'site_a' AND args IS NULL")" = 4 -a \
	  "$(store_q "$FDB" "SELECT count(*) FROM frames WHERE function = 'site_a' AND args IS NOT NULL")" = 4 ]
"$ASYNCORE" resign --db "$LDB" --debug-dir "$W/dbg1" --debug-dir "$W/dbg2" >"$W/resign.again" 2>&1; rc=$?
dump "$LDB" >"$W/later.3"
check "coredump: later: a second resign with the debug files changes nothing" \
	[ $rc -eq 0 -a "$(cat "$W/resign.again")" = "resigned 6 cores, 0 signatures changed; buckets 2 -> 2: 0 merged, 0 split" ]
check "coredump: later: ... not a row" cmp -s "$W/later.2" "$W/later.3"
named() {   # the frames in prog: function:line, in order
	store_q "$1" "SELECT group_concat(function || ':' || line, ' ') FROM (SELECT f.function, f.line FROM frames f JOIN cores c ON c.id = f.core_id WHERE f.module LIKE '%/prog' ORDER BY c.path, f.thread_idx, f.idx)"
}
mv "$D_v1/prog" "$D_v1/prog.away"
"$ASYNCORE" resign --db "$GDB" --debug-dir "$W/dbg1" --debug-dir "$W/dbg2" >"$W/resign.gone" 2>&1
mv "$D_v1/prog.away" "$D_v1/prog"
check "coredump: later: with v1's binary gone, its debug file alone names the same frames" \
	[ "$(named "$GDB")" = "$(named "$LDB")" -a "$(tail -1 "$W/resign.gone")" = "$(tail -1 "$W/resign.found")" ]
# The decompressed copy a report left in the cache serves a resign too.
mkdir "$W/zdbg" "$W/cache"
objcopy --compress-debug-sections=zlib "$D_v1/debug/prog.debug" "$W/zdbg/prog.debug"
c1=$(ls "$W/later" | grep "\.99999\.")   # the v1 crash at site c
ASYNCORE_CACHE_DIR=$W/cache "$ASYNCORE" report "$W/later/$c1" --debug-dir "$W/zdbg" >/dev/null 2>&1
CDB=$W/cached.db
cp "$W/gone.db.0" "$CDB"
mv "$D_v1/prog" "$D_v1/prog.away"
ASYNCORE_CACHE_DIR=$W/cache "$ASYNCORE" resign --db "$CDB" >"$W/resign.cached" 2>&1
mv "$D_v1/prog.away" "$D_v1/prog"
check "coredump: later: ... and so does its decompressed copy in the cache, with no --debug-dir" \
	[ "$(head -1 "$W/resign.cached")" = "debug info found for 1 modules: $n_v1 frames of 3 cores symbolized again" -a \
	  "$(store_q "$CDB" "SELECT count(DISTINCT debuginfo) || debuginfo FROM modules WHERE build_id = '$bid_v1'")" = "1$W/cache/$bid_v1.debug" ]

# The journal: entries written by systemd-journal-remote into a private
# directory, read back through sd-journal.
JR=/lib/systemd/systemd-journal-remote
[ -x "$JR" ] || apt_install /dev/null systemd-journal-remote   # test-only package
if [ ! -x "$JR" ]; then
	skip "coredump: journal: systemd-journal-remote could not be installed"
	exit 0
fi
mapfile -t R < "$W/runs"
read -r n1 _ _ u1 p1 <<<"${R[0]}"      # matched by COREDUMP_FILENAME (a plain name)
read -r n2 _ _ u2 p2 <<<"${R[3]}"      # matched by PID, boot and time
read -r n3 _ _ u3 p3 <<<"${R[4]}"      # an entry of its PID and boot at another time
mkdir "$W/j" "$W/jcores"
cp "$W/plain/$n1" "$W/jcores/first.core"
cp "$W/plain/$n2" "$W/plain/$n3" "$W/jcores/"
cp "$W/plain/$(echo "${R[1]}" | cut -d' ' -f1)" "$W/jcores/"   # no entry at all
t1=$((u1 + 5))
entry() {   # entry USEC PID FILENAME UNIT CMDLINE
	printf '__REALTIME_TIMESTAMP=%s\n__MONOTONIC_TIMESTAMP=1000\n_BOOT_ID=%s\n' "$1" "$BOOT"
	printf 'MESSAGE_ID=fc2e22bc6ee647b6b90729ab34a250b1\nMESSAGE=Process %s (prog) dumped core.\n' "$2"
	printf 'COREDUMP_PID=%s\nCOREDUMP_UID=%s\nCOREDUMP_SIGNAL=11\nCOREDUMP_TIMESTAMP=%s\n' "$2" "$UID_NOW" "$1"
	printf 'COREDUMP_FILENAME=%s\nCOREDUMP_UNIT=%s\nCOREDUMP_CMDLINE=%s\n' "$3" "$4" "$5"
	printf 'COREDUMP_CGROUP=/system.slice/%s\n\n' "$4"
}
{
	entry "$t1" "$p1" "$W/jcores/first.core" first.service "prog a --first"
	entry "$u2" "$p2" "/var/lib/systemd/coredump/$n2.zst" second.service "prog b --second"
	entry "$((u3 + 1000000))" "$p3" "/var/lib/systemd/coredump/$n3.zst" third.service "prog b --third"
} | "$JR" --output="$W/j/remote.journal" - >"$W/jr.log" 2>&1
check "coredump: journal: 3 entries written (journalctl reads them)" \
	[ "$(journalctl -D "$W/j" -o export 2>/dev/null | grep -c '^COREDUMP_PID=')" = 3 ]
JDB=$W/j.db
"$ASYNCORE" ingest --db "$JDB" --journal-dir "$W/j" "$W/jcores" >"$W/jout" 2>"$W/jerr"; rc=$?
check "coredump: journal: ingest exits 0 ($rc)" [ $rc -eq 0 ]
jrow() { store_q "$JDB" "SELECT coalesce(unit, '-') || '|' || coalesce(cmdline, '-') || '|' || coalesce(crashed_at, '-') FROM cores WHERE path LIKE '%/$1'"; }
want1="first.service|prog a --first|$(python3 -c 'import datetime,sys; u=int(sys.argv[1]); print(datetime.datetime.fromtimestamp(u//1000000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + ".%06dZ" % (u % 1000000))' "$t1")"
check "coredump: journal: by file name: unit, command line, and the crash time from COREDUMP_TIMESTAMP" \
	[ "$(jrow first.core)" = "$want1" ]
check "coredump: journal: by PID, boot and time: unit and command line" \
	[ "$(jrow "$n2" | cut -d'|' -f1,2)" = "second.service|prog b --second" ]
check "coredump: journal: an entry of the same PID at another time is not taken" \
	[ "$(jrow "$n3" | cut -d'|' -f1,2)" = "-|-" ]
check "coredump: journal: 2 cores without an entry, each with a warning" \
	[ "$(store_q "$JDB" "SELECT count(*) FROM warnings WHERE message LIKE 'journal: no systemd-coredump entry for %'")" = 2 ]
check "coredump: journal: off by default" \
	bash -c '"$1" ingest --db "$2" "$3" >/dev/null 2>&1; [ "$("$1" query --db "$2" --format csv "SELECT count(unit) FROM cores" | tail -1)" = 0 ]' \
	_ "$ASYNCORE" "$W/nojournal.db" "$W/jcores"
