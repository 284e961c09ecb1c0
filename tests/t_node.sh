#!/usr/bin/env bash
# Node.js (Debian's node 20, with V8's postmortem metadata): JavaScript
# frames read from V8's heap and frame chain, spliced among the native
# frames (fixtures/node_crash).  Cores under --abort-on-uncaught-exception
# of an uncaught TypeError three functions deep, interpreted, compiled by
# Sparkplug, optimized by TurboFan each in its own frame and inlined into
# one, and thrown through a class's method and constructor: against node's
# own stack trace on stderr (names, paths, lines, columns) and its message
# (the cause); every such core's minicore gives the same; a worker's
# uncaught exception, thrown again in its parent, and an async function's
# unhandled rejection (the cause's site from the error's own stack).  V8's heap
# exhausted (the cause oom); a native addon's fault under JavaScript;
# damaged heap objects and frame chains (warnings, partial frames); a live
# process stuck in a hot loop (report --pid, and a snapshot of it) and a
# worker thread in one, against the scripts' source; a node whose v8dbg_
# symbols are stripped: a warning, the native report.  Each crash case's
# core also against llnode's `v8 bt` (npm's llnode@4.0.0 built against
# Debian's lldb 14): names, scripts, lines at or after the function's start.
. "$(dirname "$0")/lib.sh"

W=$(mktemp -d)
RUN_DIRS=()
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$W" "${RUN_DIRS[@]}"
}
trap cleanup EXIT
CMP="python3 $ROOT/tests/node_compare.py"

command -v node >/dev/null || { skip "node: no node on this machine"; exit 0; }
nm /usr/bin/node 2>/dev/null | grep -q ' v8dbg_HeapObjectTag$' ||
	{ skip "node: $(command -v node) has no V8 postmortem metadata"; exit 0; }
DIR=$(fixture_build node_crash) || { fail "node: fixture build failed"; exit 0; }

# node_core NAME SCRIPT [FLAGS]: a core of SCRIPT; sets CORE and RUN.
node_core() {
	local name=$1; shift
	if ! CORE=$(fixture_core "$DIR" "$@" 2>"$W/core.err"); then
		skip "node/$name: $(head -1 "$W/core.err")"; return 1
	fi
	RUN=$(dirname "$CORE")
	RUN_DIRS+=("$RUN")
}

# js_frames REPORT TID: "function:line" of thread TID's (the first thread's
# when empty) JavaScript frames, innermost first, an inlined function's
# marked "+".
js_frames() {
	python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
tid = int(sys.argv[2]) if sys.argv[2] else j["threads"][0]["tid"]
t = [t for t in j["threads"] if t["tid"] == tid][0]
print(" ".join("%s%s:%s" % ("+" if "(inlined)" in (f["detail"] or "") else "", f["function"], f["line"])
               for f in t["frames"] if f["kind"] == "script"))' "$1" "${2:-}"
}

# crash_case NAME SIGNATURE SCRIPT [FLAGS]: frames, cause, interleaving,
# and a signature that starts with SIGNATURE.
crash_case() {
	local name=$1 want_sig=$2
	shift 2
	node_core "$name" "$@" || return
	local out=$W/$name.json
	report_json "node/$name" "$out" "$CORE" || return
	if $CMP frames "$out" "$RUN/stderr" >"$W/$name.diff" && grep -q ', 0 of them at' "$W/$name.diff"; then
		pass "node/$name: JavaScript frames are node's stack trace ($(tail -1 "$W/$name.diff"); names, files, lines, columns)"
	else
		fail "node/$name: frames differ from node's: $(head -3 "$W/$name.diff" | tr '\n' ' ')"
	fi
	if $CMP cause "$out" "$RUN/stderr" >"$W/$name.cause"; then
		pass "node/$name: cause is the uncaught $(json_get "$out" 'j["cause"]["exception"]["type"]') with node's message and site"
	else
		fail "node/$name: $(head -2 "$W/$name.cause" | tr '\n' ' ')"
	fi
	check "node/$name: every JavaScript frame follows the native frame of V8's code it runs in" \
		$CMP interleaved "$out"
	local sig; sig=$(json_get "$out" 'j["signature"]')
	check "node/$name: signature is the JavaScript frames from the one that threw ($sig)" \
		[ "${sig#"$want_sig"}" != "$sig" ]
	local warned; warned=$(json_get "$out" '"; ".join(j["warnings"])')
	check "node/$name: no warnings${warned:+ (got: $warned)}" [ -z "$warned" ]
	# A minicore keeps every page the JavaScript frames and the cause read.
	if "$ASYNCORE" minicore "$CORE" -o "$W/$name.mini" >"$W/mini.log" 2>&1 &&
		report_json "node/$name-minicore" "$W/$name.mini.json" "$W/$name.mini"; then
		local a b
		a=$(json_get "$out" 'j["cause"]["summary"]')" $(js_frames "$out")"
		b=$(json_get "$W/$name.mini.json" 'j["cause"]["summary"]')" $(js_frames "$W/$name.mini.json")"
		check "node/$name: its minicore ($(( $(stat -c %s "$W/$name.mini") / 1024 )) KiB) gives the same cause and JavaScript frames" \
			[ "$a" = "$b" ]
	else
		fail "node/$name: minicore: $(grep -m1 -i 'warning\|error' "$W/mini.log" || tail -1 "$W/mini.log")"
	fi
	rm -f "$W/$name.mini"
	LLNODE_CASES+=("$name")
	LLNODE_CORES+=("$CORE")
}
LLNODE_CASES=()
LLNODE_CORES=()

SIG3="SIGTRAP: priceOf < lineTotal < orderTotal < "
crash_case interpreted "$SIG3" crash.js
[ -s "$W/interpreted.json" ] && INTERP_CORE=$CORE
# damaged KIND WANT_FRAMES WARNING: the interpreted core damaged (tests/node_patch.py
# KIND): a report within a minute, its first script frames WANT_FRAMES, a
# warning matching WARNING.
damaged() {
	local kind=$1 want=$2 warning=$3 out=$W/damaged-$1.json
	if ! python3 "$ROOT/tests/node_patch.py" "$INTERP_CORE" "$W/interpreted.json" "$kind" \
		"$W/core.$kind" ${ERR_TYPE:+"$ERR_TYPE"} >"$W/patch.log" 2>&1; then
		fail "node/damaged-$kind: $(tail -1 "$W/patch.log")"; return
	fi
	"$ASYNCORE" report "$W/core.$kind" --format json >"$out" 2>"$out.err" &
	local pid=$! i
	for i in $(seq 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$pid" 2>/dev/null; then
		kill -9 "$pid"; wait "$pid" 2>/dev/null
		fail "node/damaged-$kind: no report within a minute"; return
	fi
	wait "$pid"; RC=$?
	if [ $RC -gt 2 ] || ! json_ok "$out"; then
		fail "node/damaged-$kind: asyncore exited $RC without JSON"; rm -f "$W/core.$kind"; return
	fi
	local got; got=$(js_frames "$out" | cut -d' ' -f1-2)
	check "node/damaged-$kind: partial frames ($got), a warning (${warning})" \
		[ "$got" = "$want" -a -n "$(json_get "$out" '"\n".join(j["warnings"])' | grep -E "$warning")" ]
	rm -f "$W/core.$kind"
}

crash_case baseline "$SIG3" crash.js --always-sparkplug --single-threaded

# jit_run REPORT FUNCTION...: each FUNCTION's script frame follows a native
# frame of JIT code (no module), not the interpreter's trampoline.
jit_run() {
	python3 - "$@" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
t = next(t for t in j["threads"] if t["crashing"])
before, prev = {}, None
for f in t["frames"]:
    if f["kind"] == "script":
        before.setdefault(f["function"], prev)
    else:
        prev = f
sys.exit(0 if all(before.get(n) and not before[n].get("module") for n in sys.argv[2:]) else 1)
PY
}
[ -s "$W/baseline.json" ] &&
	check "node/baseline: priceOf, lineTotal and orderTotal run Sparkplug's code" \
		jit_run "$W/baseline.json" priceOf lineTotal orderTotal
# The tiers are forced (natives syntax), checked by the script before it
# crashes (%ActiveTierIsTurbofan), and V8 compiles on the main thread only
# (--single-threaded): no background compilation or GC to vary a run.
crash_case optimized "$SIG3" crash_opt.js --allow-natives-syntax --no-turbo-inlining --single-threaded
if [ -s "$W/optimized.json" ]; then
	check "node/optimized: V8 said priceOf, lineTotal and orderTotal run TurboFan's code before the crash" \
		grep -q '^Uncaught TypeError: no rate for ink$' "$RUN/stderr"
	check "node/optimized: priceOf, lineTotal and orderTotal run TurboFan's code" \
		jit_run "$W/optimized.json" priceOf lineTotal orderTotal
fi
crash_case inlined "$SIG3" crash_inl.js --allow-natives-syntax --single-threaded
# A class's method and constructor, an arrow function and a builtin.
crash_case classes "SIGTRAP: (anonymous) < Array.reduce < Ledger.sum < new Ledger < openLedger" crash_class.js
# A worker's uncaught TypeError, which node copies to its parent's
# isolate and throws there: the copy (a plain object with its own name and
# message) is the cause, at node's first frame.
worker_crash_case() {
	node_core worker-crash worker_crash.js || return
	local out=$W/worker-crash.json
	report_json node/worker-crash "$out" "$CORE" || return
	# The site is the worker's own, from the error's stack.
	# (V8 places a property read at the property's name.)
	local l_parse c_parse summary
	l_parse=$(grep -n 'return job.spec.name' "$DIR/worker_crash.js" | cut -d: -f1)
	c_parse=$(awk -v l="$l_parse" 'NR == l { print index($0, ".name") + 1 }' "$DIR/worker_crash.js")
	summary=$(json_get "$out" 'j["cause"]["summary"]')
	check "node/worker-crash: cause is the worker's TypeError, where the worker threw it ($summary)" \
		[ "$summary" = "$(sed -n 's/^Uncaught //p' "$RUN/stderr" | head -1) in parseJob (worker_crash.js:$l_parse:$c_parse)" ]
	if $CMP frames "$out" "$RUN/stderr" >"$W/worker-crash.diff"; then
		pass "node/worker-crash: JavaScript frames are node's stack trace ($(tail -1 "$W/worker-crash.diff"))"
	else
		fail "node/worker-crash: frames differ from node's: $(head -3 "$W/worker-crash.diff" | tr '\n' ' ')"
	fi
	check "node/worker-crash: no warnings" [ "$(json_get "$out" 'len(j["warnings"])')" = 0 ]
}
worker_crash_case

# An async function's rejection in an ES module, unhandled: node aborts in
# TriggerUncaughtException; the cause is the error, where it was thrown.
async_case() {
	node_core async async.mjs || return
	local out=$W/async.json
	report_json node/async "$out" "$CORE" || return
	if $CMP printed "$out" "$RUN/stderr" >"$W/async.cause"; then
		pass "node/async: cause is the rejected $(json_get "$out" 'j["cause"]["exception"]["type"]') where node says it was thrown ($(json_get "$out" 'j["cause"]["summary"]'))"
	else
		fail "node/async: $(head -2 "$W/async.cause" | tr '\n' ' ')"
	fi
	check "node/async: no warnings" [ "$(json_get "$out" 'len(j["warnings"])')" = 0 ]
}
async_case

# The inlined functions come from the optimized frame's code.
check "node/inlined: priceOf and lineTotal are inlined into orderTotal's optimized frame" \
	[ "$(json_get "$W/inlined.json" '" ".join(f["function"] for f in [t for t in j["threads"] if t["crashing"]][0]["frames"] if "(inlined)" in (f["detail"] or ""))')" = "priceOf lineTotal" ]

# V8's heap exhausted: node's OOM handler aborts.
oom_case() {
	node_core oom oom.js --max-old-space-size=16 || return
	local out=$W/oom.json
	report_json node/oom "$out" "$CORE" || return
	local summary; summary=$(json_get "$out" 'j["cause"]["summary"]')
	check "node/oom: node printed the same words" grep -qF "Allocation failed - JavaScript heap out of memory" "$RUN/stderr"
	check "node/oom: cause is oom in the JavaScript function that allocated ($summary)" \
		[ "$(json_get "$out" 'j["cause"]["kind"]')" = oom -a \
		  "${summary#FATAL ERROR: Allocation failed - JavaScript heap out of memory in grow (oom.js:}" != "$summary" ]
}
oom_case

# A native addon faulting under JavaScript: its native cause, with the
# JavaScript frames that called it (lines from the script's source).
addon_case() {
	node_core addon addon.js || return
	local out=$W/addon.json
	report_json node/addon "$out" "$CORE" || return
	local l_call l_check l_top
	l_call=$(grep -n 'addon.crash(' "$DIR/addon.js" | cut -d: -f1)
	l_check=$(grep -n 'return checkout(' "$DIR/addon.js" | cut -d: -f1)
	l_top=$(grep -n '^handleRequest()' "$DIR/addon.js" | cut -d: -f1)
	local summary; summary=$(json_get "$out" 'j["cause"]["summary"]')
	check "node/addon: the native cause stays ($summary)" \
		[ "$(json_get "$out" 'j["cause"]["kind"]')" = null_dereference -a "${summary#*in total (addon.c:}" != "$summary" ]
	local got; got=$(js_frames "$out")
	check "node/addon: the JavaScript frames that called it ($got)" \
		[ "${got#checkout:$l_call handleRequest:$l_check Object.<anonymous>:$l_top }" != "$got" ]
	local sig; sig=$(json_get "$out" 'j["signature"]')
	check "node/addon: signature starts at the native crash ($sig)" [ "${sig#SIGSEGV: total < crash }" != "$sig" ]
}

# in_loop SCRIPT FUNCTION LINE: LINE is within the body of FUNCTION's
# for (;;) loop in SCRIPT.
in_loop() {
	python3 - "$@" <<'PY'
import re, sys
src, fn, line = open(sys.argv[1]).read().splitlines(), sys.argv[2], int(sys.argv[3])
start = next(i for i, l in enumerate(src) if re.match(r'^function %s\b' % fn, l))
loop = next(i for i in range(start, len(src)) if 'for (;;)' in src[i])
end = next(i for i in range(loop, len(src)) if src[i].startswith('  }'))
sys.exit(0 if loop + 1 <= line <= end + 1 else 1)
PY
}

# start_script SCRIPT: runs DIR/SCRIPT until it writes ./ready; sets PID.
start_script() {
	local run; run=$(mktemp -d "$W/live-XXXX")
	(cd "$run" && exec node "$DIR/$1") >/dev/null 2>&1 &
	PID=$!
	PIDS+=("$PID")
	local i
	for i in $(seq 6000); do
		[ -f "$run/ready" ] || ! kill -0 "$PID" 2>/dev/null && break
		sleep 0.05
	done
	[ -f "$run/ready" ]
}

addon_case

# Damage: a frame chain through itself, garbage in the function slots, a
# function whose shared info is the function, a source position table
# that never ends, the exception's map overwritten.
if [ -n "${INTERP_CORE:-}" ]; then
	ERR_TYPE=$(gdb -batch -nx -ex 'print (int)v8dbg_type_JSError__JS_ERROR_TYPE' /usr/bin/node 2>/dev/null |
		sed -n 's/^\$1 = //p')
	damaged loop "priceOf:6 lineTotal:10" "frame chain breaks"
	damaged functions "" "holds no JavaScript function"
	damaged shared "lineTotal:10 orderTotal:15" "holds no JavaScript function"
	damaged positions "priceOf:5 lineTotal:10" "source position table .* is malformed"
	if [ -n "$ERR_TYPE" ]; then
		damaged error "priceOf:6 lineTotal:10" "uncaught exception is not on the stack"
		check "node/damaged-error: the cause is still the uncaught exception, in priceOf" \
			[ "$(json_get "$W/damaged-error.json" 'j["cause"]["summary"]')" = \
			  "uncaught JavaScript exception in priceOf (crash.js:6:22)" ]
	else
		skip "node/damaged-error: no gdb to read the JSError type number"
	fi
fi

# The live case: spin.js writes ./ready once inside its endless loop
# (spin, where step is inlined once TurboFan compiles the loop).
live_case() {
	start_script spin.js || { fail "node/live: the script never reached its loop"; return; }
	local out=$W/live.json
	report_json node/live "$out" --pid "$PID" || return
	kill -0 "$PID" 2>/dev/null && [ "$(sed -n 's/^State:\t\(.\).*/\1/p' "/proc/$PID/status")" != T ]
	check "node/live: the process is left running" [ $? -eq 0 ]
	local l_handle l_top got
	l_handle=$(grep -n 'return spin(' "$DIR/spin.js" | cut -d: -f1)
	l_top=$(grep -n '^handle(1)' "$DIR/spin.js" | cut -d: -f1)
	got=$(js_frames "$out")
	got=${got#+step:* }           # the loop may be stopped in step, inlined or called
	got=${got#step:* }
	local spin_line=${got%% *}; spin_line=${spin_line#spin:}
	check "node/live: the main thread's JavaScript frames, innermost first ($got)" \
		[ "${got#spin:* handle:$l_handle Object.<anonymous>:$l_top }" != "$got" ]
	check "node/live: spin's line ($spin_line) is in its loop" in_loop "$DIR/spin.js" spin "$spin_line"
	check "node/live: cause is hang" [ "$(json_get "$out" 'j["cause"]["kind"]')" = hang ]
	# A snapshot of the process reads the same frames from the file.
	if "$ASYNCORE" snapshot "$PID" -o "$W/spin.snap" >"$W/snap.log" 2>&1; then
		report_json node/snapshot "$W/snap.json" "$W/spin.snap" || return
		local a b
		a=$(js_frames "$W/snap.json" | sed 's/^[^ ]* //; s/^[^ ]* //')
		b=$(js_frames "$out" | sed 's/^[^ ]* //; s/^[^ ]* //')
		check "node/snapshot: a snapshot's JavaScript frames below the loop are the live report's" \
			[ -n "$a" -a "${a#*handle:$l_handle}" = "${b#*handle:$l_handle}" ]
	else
		fail "node/snapshot: $(tail -1 "$W/snap.log")"
	fi
	kill -9 "$PID" 2>/dev/null
}
live_case

# A worker thread (its own isolate) in a hot loop, the main thread in its
# event loop: the worker's frames, none on the main thread.
worker_case() {
	start_script worker.js || { fail "node/worker: the worker never reached its loop"; return; }
	local out=$W/worker.json
	report_json node/worker "$out" --pid "$PID" || return
	local tid
	tid=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" ".join(str(t["tid"]) for t in j["threads"]
               if any(f["kind"] == "script" and f["function"] == "workerLoop" for f in t["frames"])))' "$out")
	check "node/worker: one thread, not the main one, runs workerLoop (${tid:-none})" \
		[ -n "$tid" -a "${tid// /}" = "$tid" -a "$tid" != "$PID" ]
	local got; got=$(js_frames "$out" "$tid")
	got=${got#+churn:* }
	got=${got#churn:* }
	local line=${got%% *}; line=${line#workerLoop:}
	check "node/worker: workerLoop's line ($line) is in its loop" in_loop "$DIR/worker.js" workerLoop "$line"
	check "node/worker: the main thread, in its event loop, has no JavaScript frame" \
		[ -z "$(js_frames "$out" "$PID")" ]
	kill -9 "$PID" 2>/dev/null
}
worker_case

# A node without metadata: the symbols stripped from a copy.
nometa_case() {
	local bin=$W/node-nometa
	if ! objcopy --wildcard --strip-symbol='v8dbg_*' --strip-symbol='nodedbg_*' /usr/bin/node "$bin" 2>"$W/objcopy.err"; then
		skip "node/no-metadata: objcopy failed: $(head -1 "$W/objcopy.err")"; return
	fi
	local run; run=$(mktemp -d "$W/nometa-XXXX")
	(cd "$run" && ulimit -c unlimited && exec "$bin" --abort-on-uncaught-exception "$DIR/crash.js") \
		>/dev/null 2>&1 &
	wait $! 2>/dev/null
	local core; core=$(ls "$run"/core* 2>/dev/null | head -1)
	[ -n "$core" ] || { skip "node/no-metadata: no core"; return; }
	local out=$W/nometa.json
	report_json node/no-metadata "$out" "$core" || return
	check "node/no-metadata: a warning says V8 has no postmortem metadata" \
		grep -q 'without postmortem metadata' "$out"
	check "node/no-metadata: the native frames are kept, no JavaScript frame" \
		[ "$(json_get "$out" 'sum(1 for t in j["threads"] for f in t["frames"] if f["kind"] == "script")')" = 0 \
		  -a "$(json_get "$out" 'sum(1 for f in j["threads"][0]["frames"] if (f["function"] or "").startswith("Builtins_"))')" -gt 5 ]
}
nometa_case

# llnode (npm's, built against Debian's lldb and the headers node ships) as
# a second oracle: its `v8 bt` of each crash case's core, in one lldb.
LLNODE_VERSION=4.0.0
llnode_build_locked() {
	local dir=$1
	[ -f "$dir/node_modules/llnode/llnode.so" ] && return 0
	rm -rf "$dir" && mkdir -p "$dir" || return 1
	(cd "$dir" && exec env npm_config_nodedir=/usr timeout 900 npm install --no-audit --no-fund \
		"llnode@$LLNODE_VERSION") >"$dir.log" 2>&1
	[ -f "$dir/node_modules/llnode/llnode.so" ]
}
# llnode_plugin: prints llnode's plugin, or why there is none (status 1).
llnode_plugin() {
	if ! test_dep lldb lldb "$W/apt-lldb.log"; then
		echo "lldb could not be installed: $(tail -1 "$W/apt-lldb.log")"; return 1
	fi
	if ! dpkg-query -W -f='${Status}' liblldb-dev 2>/dev/null | grep -q 'ok installed' &&
		! apt_install "$W/apt-lldb-dev.log" liblldb-dev; then
		echo "liblldb-dev could not be installed: $(tail -1 "$W/apt-lldb-dev.log")"; return 1
	fi
	local dir=$BUILD_FIX/llnode-$LLNODE_VERSION
	if ! with_lock llnode llnode_build_locked "$dir"; then
		echo "npm install llnode@$LLNODE_VERSION failed: $(grep -m1 -i 'err' "$dir.log" || tail -1 "$dir.log")"
		return 1
	fi
	echo "$dir/node_modules/llnode/llnode.so"
}
llnode_cases() {
	[ ${#LLNODE_CASES[@]} -gt 0 ] || return
	local plugin
	if ! plugin=$(llnode_plugin); then skip "node/llnode: $plugin"; return; fi
	local cmds=(-o "plugin load $plugin") i
	for i in "${!LLNODE_CORES[@]}"; do
		cmds+=(-o "target create -c ${LLNODE_CORES[$i]} /usr/bin/node" -o "v8 bt")
	done
	timeout 600 lldb -b "${cmds[@]}" >"$W/llnode.txt" 2>&1
	# One file per core: what follows its "target create".
	awk -v d="$W" '/^\(lldb\) target create/ { n++ } n { print > (d "/llnode." n ".bt") }' "$W/llnode.txt"
	for i in "${!LLNODE_CASES[@]}"; do
		local name=${LLNODE_CASES[$i]} bt=$W/llnode.$((i + 1)).bt
		if [ -s "$bt" ] && python3 "$ROOT/tests/llnode_compare.py" "$W/$name.json" "$bt" >"$W/$name.lldiff"; then
			pass "node/$name: JavaScript frames are llnode's v8 bt of the core ($(tail -1 "$W/$name.lldiff"); names, scripts, lines)"
		else
			fail "node/$name: frames differ from llnode's v8 bt: $(head -3 "$W/$name.lldiff" 2>/dev/null | tr '\n' ' ')"
		fi
	done
}
llnode_cases
