#!/usr/bin/env bash
# A real Crashpad minidump: Debian's Chromium (headless) with its own
# chrome_crashpad_handler writing into a Crashpad database, one renderer
# crashed through the DevTools protocol (Page.crash: an int3 in the
# renderer).  Its report is checked against the file itself, the binary's
# code and lldb's backtrace of the same file: the modules it names by soname
# alone found by build-id, every thread unwound by CFI through the stripped
# browser to its thread's start, the condition waits lldb shows, Crashpad's
# annotations; and `ingest` of the database stores it.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/fixlib.sh"

have_asyncore || { skip "crashpad: no asyncore binary"; exit 0; }
test_dep chromium chromium "$TMPD/apt.log" ||
	{ skip "crashpad: chromium could not be installed: $(tail -1 "$TMPD/apt.log")"; exit 0; }
test_dep lldb lldb "$TMPD/apt.log" ||
	{ skip "crashpad: lldb could not be installed: $(tail -1 "$TMPD/apt.log")"; exit 0; }
BIN=/usr/lib/chromium/chromium
DB=$TMPD/crashpad
mkdir -p "$DB"
if ! DMP=$(cd "$ROOT/tests" && python3 crashpad_crash.py "$DB" 2>"$TMPD/crash.err"); then
	fail "crashpad: no minidump from Chromium's Crashpad handler: $(tail -1 "$TMPD/crash.err")"
	exit 0
fi
pass "crashpad: Chromium's handler wrote the renderer's minidump into ${DMP#"$DB"/}"

asy_json "$TMPD/dmp.json" "$DMP"
if [ "$ASY_JSON_OK" -ne 0 ]; then
	fail "crashpad: no report (exit $ASY_RC): $(head -2 "$TMPD/dmp.json.err" | tr '\n' ' ')"
	exit 0
fi
check "crashpad: read with no warning ($(jget "$TMPD/dmp.json" "'; '.join(j['warnings'])"))" \
	test "$(jget "$TMPD/dmp.json" "len(j['warnings'])")" = 0

# The pc after the int3 Page.crash runs: the byte before it in the binary's
# file is 0xcc, and the signal is the SIGTRAP the kernel sends for it.
python3 - "$TMPD/dmp.json" "$BIN" >"$TMPD/trap" 2>&1 <<'PY'
import json, struct, sys
j = json.load(open(sys.argv[1]))
f = j["threads"][0]["frames"][0]
off = int(f["module_offset"], 16) - 1
with open(sys.argv[2], "rb") as b:
    head = b.read(64)
    phoff, = struct.unpack_from("<Q", head, 0x20)
    size, n = struct.unpack_from("<HH", head, 0x36)
    b.seek(phoff)
    table = b.read(size * n)
    for i in range(n):
        t, flags, p_off, vaddr, _, filesz, _, _ = struct.unpack_from("<IIQQQQQQ", table, i * size)
        if t == 1 and vaddr <= off < vaddr + filesz:
            b.seek(p_off + off - vaddr)
            print("%s %s %s" % (b.read(1).hex(), j["signal"]["name"], j["cause"]["kind"]))
PY
check "crashpad: the crash is the renderer's int3: byte, signal, cause ($(cat "$TMPD/trap"))" \
	test "$(cat "$TMPD/trap")" = "cc SIGTRAP signal"

python3 - "$TMPD/dmp.json" >"$TMPD/mods" 2>&1 <<'PY'
import json, subprocess, sys
j = json.load(open(sys.argv[1]))
bad = []
for m in j["modules"]:
    if not m["path"].startswith("/") or not m["build_id"]:
        continue
    notes = subprocess.run(["readelf", "-n", m["path"]], capture_output=True, text=True).stdout
    if m["build_id"] not in notes:
        bad.append(m["path"])
libc = [m for m in j["modules"] if m["path"].endswith("/libc.so.6")]
print("%d modules, %d files not theirs: %s; libc %s" % (len(j["modules"]), len(bad), bad[:3],
      libc[0]["path"] if libc and libc[0]["debuginfo"] else "without debug info"))
PY
check "crashpad: the modules Crashpad names by soname are this machine's files of the same build-id ($(cat "$TMPD/mods"))" \
	grep -q " 0 files not theirs: \[\]; libc /" "$TMPD/mods"
ENDS=$(jget "$TMPD/dmp.json" "' '.join(sorted(set(str(t['frames'][-1]['function']) if t['frames'] else 'none' for t in j['threads'])))")
check "crashpad: every thread unwound to its start (__clone3, or _start for the main one): $ENDS" \
	test "$ENDS" = "__clone3 _start"
check "crashpad: Crashpad's annotations (prod Chrome_Linux, ptype renderer)" \
	test "$(jget "$TMPD/dmp.json" "j['core']['annotations']['prod'] + ' ' + j['core']['annotations']['chromium: ptype']")" = "Chrome_Linux renderer"

timeout 300 lldb -b -O "settings set target.exec-search-paths /lib/$(uname -m)-linux-gnu" -c "$DMP" "$BIN" \
	-o 'thread backtrace all' </dev/null >"$TMPD/lldb.txt" 2>/dev/null
if python3 "$ROOT/tests/crashpad_compare.py" "$TMPD/dmp.json" "$TMPD/lldb.txt" "$BIN" >"$TMPD/cmp" 2>&1; then
	pass "crashpad: lldb's backtrace of the file agrees: $(cat "$TMPD/cmp")"
else
	fail "crashpad: against lldb's backtrace: $(head -2 "$TMPD/cmp" | tr '\n' ' ')"
fi

"$ASYNCORE" ingest --db "$TMPD/cp.db" "$DB" >"$TMPD/ingest.out" 2>&1; rc=$?
check "crashpad: ingest of the database (exit $rc) stores the minidump under its report's signature" \
	test $rc -eq 0 -a "$("$ASYNCORE" query --db "$TMPD/cp.db" --format csv "SELECT count(*) || ' ' || signature_hash FROM cores" | tail -1)" = \
	"1 $(jget "$TMPD/dmp.json" "j['signature_hash']")"
