#!/usr/bin/env bash
# Runtime descriptions (DESIGN.md): refusals before any analysis; the toy
# interpreter's linked-list frames placed by owner (a __thread root in a
# shared library, linked and dlopen'ed, and a pthread-key root); hostile
# stacks; and SpiderMonkey 102's profiling stack in a real embedder (a
# global, a thread_local, a stripped binary with the layout-only shipped
# description, the JIT), compared with what the engine said in the live
# process: its profiling stack and js::DumpBacktrace, written by the
# fixture's crash handler before the core was made.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clickhouse_lib.sh"

W=$(mktemp -d)
RUN_DIRS=()         # where the fixtures crashed: their cores, removed at the end
trap 'ch_cluster_stop; rm -rf "$W" "${RUN_DIRS[@]}"' EXIT
export XDG_CONFIG_HOME=$W/config    # no one's own descriptions
RF="python3 $ROOT/tests/runtime_frames.py"
SHIPPED=$ROOT/share/asyncore/runtimes/spidermonkey.json
SM=$ROOT/fixtures/spidermonkey
TOY=$ROOT/fixtures/toyvm

report() { report_json "$@"; }

# same NAME WANT GOT: PASS when the files are equal, else FAIL with a diff.
same() {
	if diff -u "$2" "$3" >"$W/diff"; then
		pass "$1"
	else
		fail "$1"
		head -40 "$W/diff" | sed 's/^/    /'
	fi
}

warnings() { json_get "$1" '"\n".join(j["warnings"])'; }

# exit_zero NAME JSON: PASS when the last report exited 0, else FAIL with its
# first warnings.
exit_zero() {
	if [ "$RC" -eq 0 ]; then pass "$1"; else fail "$1: exit $RC: $(warnings "$2" | head -3 | tr '\n' ' ')"; fi
}

# ---- descriptions refused before any analysis --------------------------------

refusal() {
	local name=$1 text=$2 want=$3 rc lines
	printf '%s' "$text" >"$W/bad.json"
	"$ASYNCORE" report "$W/no-such-core" --runtime "$W/bad.json" >"$W/out" 2>"$W/err"; rc=$?
	lines=$(wc -l <"$W/err")
	if [ $rc -eq 2 ] && [ "$lines" -eq 1 ] && grep -qF "$W/bad.json: $want" "$W/err"; then
		pass "refused: $name"
	else
		fail "refused: $name: exit $rc, $lines lines: $(cat "$W/err")"
	fi
}
refusal "bad JSON" '{"name": "x",' 'line 1, column'
refusal "unknown key" "$(sed 's/"capacity": "capacity"/"capacity": "capacity", "size": "n"/' "$SHIPPED")" \
	'$.stack.size: unknown key'
refusal "kind without if" "$(sed 's/{"if": {"flags": "0x2"}, /{/' "$SHIPPED")" '$.kinds[1]: "if" is missing'
refusal "unknown field in a template" "$(sed 's/{dynamic}/{dynamc}/' "$SHIPPED")" \
	'$.kinds[0].detail: {dynamc} is no field of entry.fields'

"$ASYNCORE" ingest --db "$W/refused.db" --runtime="$W/bad.json" "$W/no-such-core" >"$W/out" 2>"$W/err"
check "refused: ingest --runtime=FILE exits 2 before opening the database" \
	[ $? -eq 2 -a ! -e "$W/refused.db" -a "$(wc -l <"$W/err")" -eq 1 ]
mkdir -p "$XDG_CONFIG_HOME/asyncore/runtimes"
cp "$W/bad.json" "$XDG_CONFIG_HOME/asyncore/runtimes/bad.json"
"$ASYNCORE" report "$W/no-such-core" >"$W/out" 2>"$W/err"
check "refused: a bad description on the search path" \
	[ $? -eq 2 -a -n "$(grep -F "runtimes/bad.json: \$.kinds[0].detail" "$W/err")" ]
rm "$XDG_CONFIG_HOME/asyncore/runtimes/bad.json"

# ---- the toy interpreter: a linked list placed by owner ------------------------

toy_variant() {
	local v=$1 dir core desc out
	if ! dir=$(fixture_build toyvm "$v"); then fail "toyvm/$v: build failed"; return; fi
	if ! core=$(fixture_core "$dir" 2>"$W/core.err"); then skip "toyvm/$v: $(head -1 "$W/core.err")"; return; fi
	RUN_DIRS+=("$(dirname "$core")")
	TOY_CORE=$core TOY_PROG=$dir/prog
	for desc in toy-tls toy-key; do
		out=$W/toy-$v-$desc.json
		report "toyvm/$v $desc" "$out" "$core" "$dir/prog" --runtime "$TOY/$desc.json" || continue
		$RF stacks "$out" prog,libtoy.so >"$out.txt"
		same "toyvm/$v $desc: toy frames after their toy_eval activations" \
			"$(expect_file toyvm "$v" runtime)" "$out.txt"
		check "toyvm/$v $desc: exit 0, no warnings" [ $RC -eq 0 -a -z "$(warnings "$out")" ]
	done
	"$ASYNCORE" report "$core" "$dir/prog" --runtime "$TOY/toy-tls.json" >"$W/toy.txt" 2>/dev/null
	check "toyvm/$v text: marked with the description's name" \
		grep -qE '^#[0-9]+ +\[toy\] inner2  -- toy\.src:22$' "$W/toy.txt"
	"$ASYNCORE" report "$core" "$dir/prog" --runtime "$TOY/toy-tls.json" --format html >"$W/toy.html" 2>/dev/null
	check "toyvm/$v html: script frames with the description's name" grep -qF \
		'<li class="frame script"><span class="idx">#4</span><span class="fn">inner2</span><span class="badge runtime">toy</span><div class="loc">toy.src:22</div></li>' \
		"$W/toy.html"
	out=$W/toy-$v-absent.json
	sed 's/"name": "spidermonkey"/"name": "spidermonkey-tls"/' "$SM/tls.json" >"$W/tls-renamed.json"
	report "toyvm/$v absent roots" "$out" "$core" "$dir/prog" --runtime "$SM/global-dwarf.json" \
		--runtime "$W/tls-renamed.json" || return
	check "toyvm/$v: descriptions whose root is absent add nothing, silently" \
		[ $RC -eq 0 -a -z "$(warnings "$out")" -a \
		  "$(json_get "$out" 'sum(f["kind"] != "native" for t in j["threads"] for f in t["frames"])')" = 0 ]
}
toy_variant linked
toy_variant dlopen

# Both stores keep script frames: SQLite (also under spidermonkey below) and
# ClickHouse, whose resign reads them back as SQLite's does.
clickhouse() {
	[ -n "${TOY_CORE:-}" ] || return
	local q json=$W/toy-ch.json sig
	ch_available "$W/ch-apt.log" || { skip "clickhouse: clickhouse-server could not be installed"; return; }
	if ! ch_cluster_start "$W/ch" 1; then fail "clickhouse: the server did not start"; return; fi
	local url="clickhouse://127.0.0.1:${CH_HTTP[1]}/runtimes"
	"$ASYNCORE" store init --db "$url" >/dev/null 2>&1 &&
		"$ASYNCORE" ingest --db "$url" --quiet --runtime "$TOY/toy-tls.json" "$TOY_CORE" >/dev/null 2>&1
	check "clickhouse: a core with script frames is stored" [ $? -eq 0 ]
	report "clickhouse toy" "$json" "$TOY_CORE" "$TOY_PROG" --runtime "$TOY/toy-tls.json" || return
	q="SELECT count() FROM crash_stacks WHERE kind = 'script' AND runtime = 'toy' AND pc IS NULL"
	check "clickhouse: crash_stacks has the script frames, no pc" \
		[ "$("$ASYNCORE" query --db "$url" --format csv "$q" | tail -1)" = \
		  "$(json_get "$json" 'sum(f["kind"] == "script" for f in j["threads"][0]["frames"])')" ]
	"$ASYNCORE" resign --db "$url" >/dev/null 2>&1
	sig=$("$ASYNCORE" query --db "$url" --format csv "SELECT signature FROM cores FINAL" | tail -1)
	check "clickhouse: resign keeps the signature (script frames read back as such)" \
		[ "$sig" = "$(json_get "$json" 'j["signature"]')" ]
	ch_cluster_stop
}
clickhouse

# ---- hostile stacks ----------------------------------------------------------------

hostile() {
	local dir core out args=() f start end
	if ! dir=$(fixture_build hostile_rt); then fail "hostile_rt: build failed"; return; fi
	if ! core=$(fixture_core "$dir" 2>"$W/core.err"); then skip "hostile_rt: $(head -1 "$W/core.err")"; return; fi
	RUN_DIRS+=("$(dirname "$core")")
	for f in "$dir"/*.json; do args+=(--runtime "$f"); done
	out=$W/hostile.json
	start=$(date +%s)
	report hostile_rt "$out" "$core" "$dir/prog" "${args[@]}" || return
	end=$(date +%s)
	check "hostile_rt: exit 1 (warnings), within 10 s" [ $RC -eq 1 -a $((end - start)) -lt 10 ]
	warnings "$out" >"$W/hostile.warnings"
	while IFS= read -r re; do
		if grep -qE "$re" "$W/hostile.warnings"; then pass "hostile_rt warning /$re/"
		else fail "hostile_rt warning /$re/ missing"; fi
	done <"$(expect_file hostile_rt default warnings)"
	check "hostile_rt: no other runtime warnings" [ "$(grep -c '^runtime ' "$W/hostile.warnings")" = \
		"$(grep -c . "$(expect_file hostile_rt default warnings)")" ]
	check "hostile_rt: a NULL root and a deleted pthread key say nothing" \
		[ -z "$(grep -E '^runtime (nullroot|deletedkey)' "$W/hostile.warnings")" ]
	python3 - "$out" >"$W/hostile.check" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
frames = [f for t in j["threads"] if t["crashing"] for f in t["frames"]]
names = [f["function"] for f in frames if f["kind"] == "label"]
by = lambda r: [f["function"] for f in frames if f.get("runtime") == r]
natives = [i for i, f in enumerate(frames) if f["kind"] == "native"]
checks = {
    "cycle entries once each": by("cycle") == ["cycle A", "cycle B", "cycle C"],
    "a long list bounded by max": by("long") == ["long"] * 100,
    "the room bounds the count": by("room") == ["room"] * 3,
    "stale slots past the count never shown": by("stale") == ["live inner", "live outer"],
    "no entries from huge, NULL and unreadable stacks":
        not any(by(r) for r in ("huge", "nullarray", "badroot", "nullroot", "deletedkey", "nomatch")),
    "a dangling string is no name": by("dangling")[3] is None,
    "a string into a hole is cut": by("dangling")[2] == "runs into a hole" + "x" * 4 + "...",
    "an endless string is cut": by("dangling")[1] == "y" * 1023 + "...",
    "bytes that are not UTF-8 replaced": by("dangling")[0] == "caf\ufffd \ufffd bytes",
    "out of order entries keep their order": by("order") == ["order inner", "order middle", "order outer"],
    "a stack on no thread after the last frame": frames[-1]["function"] == "on no stack"
        and natives[-1] < len(frames) - 1,
    "a list three groups share: each stack once": sorted(by("shared")) == ["shared 1", "shared 2"],
    "entries anchored in main follow main":
        frames[[f["function"] for f in frames].index("main") + 1]["kind"] == "label",
}
for name, ok in checks.items():
    print(("PASS: hostile_rt " if ok else "FAIL: hostile_rt ") + name)
EOF
	cat "$W/hostile.check"
	# one stack once: a copy of "order" under another name; "stale" is
	# another stack of the same thread.  The first given wins.
	cp "$dir/order.json" "$dir/stale.json" "$W/"
	sed 's/"name": "order"/"name": "order2"/' "$dir/order.json" >"$W/order2.json"
	local first second
	for first in order order2; do
		second=$([ $first = order ] && echo order2 || echo order)
		report "hostile_rt once" "$W/once.json" "$core" "$dir/prog" --runtime "$W/$first.json" \
			--runtime "$W/stale.json" --runtime "$W/$second.json" || continue
		check "hostile_rt: one stack, two descriptions: shown once, as the first given ($first)" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
by = lambda r: [f["function"] for t in j["threads"] for f in t["frames"] if f.get("runtime") == r]
ok = by(sys.argv[2]) == ["order inner", "order middle", "order outer"] and by(sys.argv[3]) == []
sys.exit(0 if ok and by("stale") == ["live inner", "live outer"] else 1)' "$W/once.json" "$first" "$second"
	done
}
hostile

# ---- SpiderMonkey 102 ------------------------------------------------------------

# sm_core VARIANT [ARGS...]: build and crash the embedder; sets SM_DIR, SM_CORE
# and SM_RUN (where the crash handler wrote backtrace.txt and profiling.txt).
sm_core() {
	local v=$1; shift
	if ! SM_DIR=$(fixture_build spidermonkey "$v"); then fail "spidermonkey/$v: build failed"; return 1; fi
	if ! SM_CORE=$(fixture_core "$SM_DIR" "$@" 2>"$W/core.err"); then
		skip "spidermonkey/$v${1:+ $1}: $(head -1 "$W/core.err")"; return 1
	fi
	SM_RUN=$(dirname "$SM_CORE")
	RUN_DIRS+=("$SM_RUN")
	if [ ! -s "$SM_RUN/profiling.txt" ]; then
		fail "spidermonkey/$v: the crash handler wrote no profiling.txt"; return 1
	fi
}

# sm_live NAME REPORT: the script and label frames are the live profiling
# stack, and the JS functions are the scripts DumpBacktrace listed (EXACT:
# the same list; else in the same order among them).
sm_live() {
	local name=$1 out=$2 exact=${3:-exact}
	$RF live "$out" >"$out.live"
	same "$name: the entries are the engine's own profiling stack" "$SM_RUN/profiling.txt" "$out.live"
	$RF scripts "$out" >"$out.scripts"
	$RF backtrace "$SM_RUN/backtrace.txt" >"$out.bt"
	if [ "$exact" = exact ]; then
		same "$name: the JS functions are js::DumpBacktrace's" "$out.bt" "$out.scripts"
	else
		check "$name: the JS functions are among js::DumpBacktrace's, in its order" python3 -c '
import sys
ours, bt = open(sys.argv[1]).read().split(), open(sys.argv[2]).read().split()
it = iter(bt)
sys.exit(0 if ours and all(s in it for s in ours) else 1)' "$out.scripts" "$out.bt"
	fi
	check "$name: stale slots past the stack pointer never shown" \
		[ -z "$(grep stale_label "$out")" -a -n "$(grep -c . "$SM_RUN/profiling.txt")" ]
}

# sm_expected VARIANT DESCRIPTION: the report of SM_CORE with DESCRIPTION
# into $W/sm-VARIANT.json, its frames in the order expected and its entries
# the engine's own; false when no report came.
sm_expected() {
	local v=$1 out=$W/sm-$1.json
	report "spidermonkey/$v" "$out" "$SM_CORE" "$SM_DIR/prog" --runtime "$2" || return 1
	$RF stacks "$out" prog >"$out.txt"
	same "spidermonkey/$v: the expected order" "$(expect_file spidermonkey "$v" runtime)" "$out.txt"
	sm_live "spidermonkey/$v" "$out"
}

spidermonkey() {
	local out
	if ! test_dep js102-config libmozjs-102-dev "$W/apt.log"; then
		skip "spidermonkey: libmozjs-102-dev cannot be installed: $(tail -1 "$W/apt.log")"; return
	fi
	# the root through a global; members from the embedder's DWARF
	if sm_core global; then
		out=$W/sm-global.json
		if sm_expected global "$SM/global-dwarf.json"; then
			exit_zero "spidermonkey/global: exit 0" "$out"
			check "spidermonkey/global: the signature names the script" \
				[ "$(json_get "$out" 'j["signature"]')" = "SIGSEGV: level3 < level2 < level1 < native_crash < inner2" ]
		fi
		"$ASYNCORE" report "$SM_CORE" "$SM_DIR/prog" --runtime "$SM/global-dwarf.json" >"$W/sm.txt" 2>/dev/null
		check "spidermonkey/global text: script frames marked" \
			grep -qE '^#[0-9]+ +\[spidermonkey\] inner2 \(script\.js:1:15\)  -- JSScript 0x[0-9a-f]+$' "$W/sm.txt"
		check "spidermonkey/global text: label frames marked" \
			grep -qE '^#[0-9]+ +\[spidermonkey\] native_callback \(label\)  -- calls back into JS$' "$W/sm.txt"
		# the shipped description (its layout), given and found on the search path
		report "spidermonkey/global shipped" "$W/sm-shipped.json" "$SM_CORE" "$SM_DIR/prog" --runtime "$SHIPPED" &&
			same "spidermonkey/global: the shipped description gives the same entries" \
				"$out.live" <($RF live "$W/sm-shipped.json")
		mkdir -p "$W/inst/bin" "$W/inst/share/asyncore/runtimes" "$W/co/share/asyncore/runtimes"
		cp "$ASYNCORE" "$W/inst/bin/asyncore"
		cp "$ASYNCORE" "$W/co/asyncore"
		cp "$SHIPPED" "$W/inst/share/asyncore/runtimes/"
		cp "$SHIPPED" "$W/co/share/asyncore/runtimes/"
		ASYNCORE=$W/inst/bin/asyncore report "installed" "$W/sm-inst.json" "$SM_CORE" "$SM_DIR/prog" &&
			same "search path: share/asyncore/runtimes of an installed asyncore" \
				"$out.live" <($RF live "$W/sm-inst.json")
		ASYNCORE=$W/co/asyncore report "checkout" "$W/sm-co.json" "$SM_CORE" "$SM_DIR/prog" &&
			same "search path: ./share/asyncore/runtimes of a checkout" \
				"$out.live" <($RF live "$W/sm-co.json")
		cp "$SM/global-dwarf.json" "$XDG_CONFIG_HOME/asyncore/runtimes/mine.json"
		report "xdg" "$W/sm-xdg.json" "$SM_CORE" "$SM_DIR/prog" &&
			same "search path: \$XDG_CONFIG_HOME/asyncore/runtimes" "$out.live" <($RF live "$W/sm-xdg.json")
		sed 's/"g_js_profiling_stack"/"no_such_root"/' "$SHIPPED" >"$XDG_CONFIG_HOME/asyncore/runtimes/mine.json"
		report "override" "$W/sm-over.json" "$SM_CORE" "$SM_DIR/prog" --runtime "$SM/global-dwarf.json" &&
			same "search path: a description given overrides one of the same name" \
				"$out.live" <($RF live "$W/sm-over.json")
		rm "$XDG_CONFIG_HOME/asyncore/runtimes/mine.json"
		# one stack once: the same description under another name, given,
		# with the shipped one on the search path (./share of the checkout)
		sed 's/"name": "spidermonkey"/"name": "js"/' "$SM/global-dwarf.json" >"$W/js.json"
		if report "one stack once" "$W/sm-js.json" "$SM_CORE" "$SM_DIR/prog" --runtime "$W/js.json"; then
			check "one stack once: the stack the shipped description also reads shown once, as [js]" \
				[ "$(json_get "$W/sm-js.json" '",".join(sorted(set(f.get("runtime") or "" for t in j["threads"] for f in t["frames"] if f["kind"] in ("script", "label"))))')" = js -a \
				  "$(json_get "$W/sm-js.json" 'sum(f["kind"] in ("script", "label") for t in j["threads"] for f in t["frames"])')" = \
				  "$(json_get "$out" 'sum(f["kind"] in ("script", "label") for t in j["threads"] for f in t["frames"])')" ]
			same "one stack once: the entries are the engine's own" "$out.live" <($RF live "$W/sm-js.json")
			exit_zero "one stack once: no warning about the other reading" "$W/sm-js.json"
		fi
		# the store
		"$ASYNCORE" ingest --db "$W/sm.db" --quiet --runtime "$SM/global-dwarf.json" "$SM_CORE" >/dev/null 2>&1
		check "spidermonkey/global store: script and label frames in crash_stacks" \
			[ "$("$ASYNCORE" query --db "$W/sm.db" --format csv "SELECT count(*) FROM crash_stacks WHERE runtime = 'spidermonkey' AND pc IS NULL" | tail -1)" = \
			  "$(json_get "$out" 'sum(f["kind"] in ("script", "label") for f in j["threads"][0]["frames"])')" ]
		check "spidermonkey/global store: the signature" \
			[ "$("$ASYNCORE" query --db "$W/sm.db" --format csv "SELECT signature FROM cores" | tail -1)" = \
			  "SIGSEGV: level3 < level2 < level1 < native_crash < inner2" ]
	fi
	# the root through a thread_local, the engine on a second thread
	sm_core tls && sm_expected tls "$SM/tls.json"
	# stripped: the shipped description's layout; one without a layout is refused
	if sm_core stripped; then
		sm_expected stripped "$SHIPPED"
		"$ASYNCORE" report "$SM_CORE" "$SM_DIR/prog" --runtime "$SM/global-dwarf.json" >/dev/null 2>"$W/err"
		check "spidermonkey/stripped: a member that resolves nowhere: exit 2, one line" \
			[ $? -eq 2 -a "$(wc -l <"$W/err")" -eq 1 -a -n "$(grep -F "global-dwarf.json: \$.stack.array: member frames of ProfilingStack is neither in the program's debug info nor in the description's layout" "$W/err")" ]
		"$ASYNCORE" ingest --db "$W/stripped.db" --quiet --runtime "$SM/global-dwarf.json" "$SM_CORE" \
			>/dev/null 2>&1
		check "spidermonkey/stripped: ingest records that core as failed, with the reason" \
			[ $? -eq 1 -a "$("$ASYNCORE" query --db "$W/stripped.db" --format csv \
				"SELECT count(*) FROM ingest_errors WHERE reason LIKE '%\$.stack.array: member frames of ProfilingStack%'" | tail -1)" = 1 ]
	fi
	# the JIT: native unwinding stops at Ion code; every entry still shown, in order
	if sm_core global jit; then
		out=$W/sm-jit.json
		if report "spidermonkey/jit" "$out" "$SM_CORE" "$SM_DIR/prog" --runtime "$SM/global-dwarf.json"; then
			sm_live spidermonkey/jit "$out" subsequence
			check "spidermonkey/jit: entries past the native stack follow its last frame, warned" python3 -c '
import json, re, sys
j = json.load(open(sys.argv[1]))
frames = j["threads"][0]["frames"]
last = max(i for i, f in enumerate(frames) if f["kind"] == "native")
tail = len(frames) - 1 - last
ws = [w for w in j["warnings"] if re.match(r"runtime spidermonkey: thread \d+: %d entr(y belongs|ies belong) to no native frame" % tail, w)]
sys.exit(0 if tail > 0 and len(ws) == 1 and frames[-1]["function"] == "run_script" else 1)' "$out"
		fi
	fi
}
spidermonkey
