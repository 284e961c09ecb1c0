#!/usr/bin/env bash
# bRPC bthreads: fixtures/bthread (a runtime laid out as bRPC's) crashes in a
# bthread with others suspended in a sleep, on a mutex, on a join, on a raw
# butex, running on every worker and queued.  Each build's report is compared
# with the truth the program wrote before crashing (ids, entry functions,
# states, waits, OS threads) and its stacks with gdb's, unwound by gdb from
# the same saved contexts (tests/gdb_bthread.py); with DWARF, each frame's
# --locals (the crashing bthread's and its thread's; with "all" every
# bthread's and thread's) against gdb's `bt full` of the same frames, and
# as the text and HTML reports show them.  Builds: with DWARF,
# stripped (bRPC's documented offsets, confirmed by the slot invariant), and
# `moved` (members at other offsets: found through DWARF only; stripped, no
# bthreads and a warning), and `debuglock` (BRPC_DEBUG_LOCK=1: a mutex
# records its owner, which a waiter's blocked_on names; without it none is
# named).  Then damaged cores: each damage is a warning
# naming the bthread or the structure, and the other bthreads are still
# listed; random damage never crashes asyncore.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "bthread: no asyncore at $ASYNCORE (run make)"; exit 0; }
command -v g++ >/dev/null || { skip "bthread: no g++"; exit 0; }

CMP=$ROOT/tests/bthread_compare.py

# compare_truth NAME TRUTH JSON: PASS when the report has the truth's bthreads.
compare_truth() {
	if python3 "$CMP" truth "$2" "$3" >"$TMPD/cmp" 2>&1; then
		pass "$1"
	else
		fail "$1: $(head -1 "$TMPD/cmp")"
		tail -n +2 "$TMPD/cmp" | head -10 | sed 's/^/    /'
	fi
}

# gdb_oracle NAME PROG CORE TRUTH JSON: every stack against gdb's, whose
# view (each frame with its `bt full` locals) stays in $TMPD/gdb.json for
# compare_stacks; none there when gdb is missing or printed nothing.
gdb_oracle() {
	local name=$1 prog=$2 core=$3 truth=$4 json=$5
	rm -f "$TMPD/gdb.json"
	command -v gdb >/dev/null || { skip "$name: no gdb"; return; }
	# The settings of tests/fixlib.sh's gdb_frames: arguments are compared too.
	BTHREAD_LOCALS=1 BTHREAD_TRUTH=$truth LC_ALL=C gdb -batch -nx -iex 'set auto-load python-scripts off' \
		-ex 'set width 0' -ex 'set print frame-arguments scalars' \
		-x "$ROOT/tests/gdb_bthread.py" "$prog" "$core" 2>/dev/null |
		sed -n '/^GDB_BTHREAD_BEGIN$/,/^GDB_BTHREAD_END$/p' | sed '1d;$d' >"$TMPD/gdb.json"
	if [ ! -s "$TMPD/gdb.json" ]; then
		skip "$name: gdb printed nothing"; return
	fi
	compare_stacks "$name" "$truth" "$json"
}

# compare_stacks NAME TRUTH JSON [all|crashing]: JSON's stacks against
# $TMPD/gdb.json's; with a --locals mode their locals too (the last line of
# the comparison counts them).
compare_stacks() {
	local name=$1 truth=$2 json=$3 mode=${4:-}
	if (cd "$ROOT/tests" && python3 "$CMP" stacks "$truth" "$json" "$TMPD/gdb.json" $mode) >"$TMPD/cmp" 2>&1; then
		pass "$name${mode:+: $(tail -1 "$TMPD/cmp")}"
	else
		fail "$name: $(head -1 "$TMPD/cmp")"
		tail -n +2 "$TMPD/cmp" | head -10 | cut -c1-300 | sed 's/^/    /'
	fi
}

# The text report's section: its header counts the truth's states, and the
# idle waiters (one entry, one butex, one stack) are one group.
text_report() {
	local name=$1 core=$2 prog=$3 truth=$4
	"$ASYNCORE" "$core" "$prog" >"$TMPD/text" 2>/dev/null
	local want
	want=$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["bthreads"]
n = {s: sum(b["state"] == s for b in t) for s in ("running", "suspended", "ready", "created")}
print("Bthreads (%d: %s):" % (len(t), ", ".join("%d %s" % (n[s], s) for s in n if n[s])))
' "$truth")
	check "$name: text header \"$want\"" grep -qxF "$want" "$TMPD/text"
	local idle
	idle=$(python3 -c '
import json, sys
t = [b for b in json.load(open(sys.argv[1]))["bthreads"] if b["fn"] == "idle_waiter"]
print("%d bthreads suspended in butex wait on %s: idle_waiter(void*)" % (len(t), t[0]["address"]))
' "$truth")
	check "$name: text groups the idle waiters" grep -qxF "$idle" "$TMPD/text"
	# A group shows its first member's frames: when the members' arguments
	# differ (the JSON lists each task), the text says whose they are.
	local differ note
	differ=$("$ASYNCORE" report "$core" "$prog" --format json 2>/dev/null | python3 -c '
import json, sys
t = sorted((b for b in json.load(sys.stdin)["tasks"] if b.get("fn") == "idle_waiter(void*)"),
           key=lambda b: int(b["id"], 16))
args = [[f.get("args") for f in b["frames"]] for b in t]
print("%s %s" % (t[0]["id"], "differ" if any(a != args[0] for a in args) else "same"))')
	note=$(grep -c "^  (the arguments shown are bthread ${differ% *}'s: the others' differ)$" "$TMPD/text")
	check "$name: the idle waiters' group says whose arguments it shows exactly when theirs differ ($differ)" \
		[ -n "$differ" -a "$note" = "$([ "${differ#* }" = differ ] && echo 1 || echo 0)" ]
	check "$name: text shows the crashing thread running its bthread" \
		grep -qE '^Thread [0-9]+ \(crashing, SIGSEGV\) running bthread 0x[0-9a-f]+ \(crasher\(void\*\)\):$' "$TMPD/text"
	# The HTML page: the same groups, each a <details class="task">.
	"$ASYNCORE" report "$core" "$prog" --format html >"$TMPD/html" 2>/dev/null
	local groups
	groups=$(sed -n '/^Bthreads (/,/^Modules:/p' "$TMPD/text" | grep -cE '^(bthread 0x|[0-9]+ bthreads )')
	check "$name: html has the text's $groups bthread groups" \
		[ "$(grep -o '<details class="task"' "$TMPD/html" | wc -l)" = "$groups" ]
	check "$name: html's crashing thread names its bthread" \
		grep -qE '<h2>Thread [0-9]+ <span class="n">\(crashing, SIGSEGV, running bthread 0x[0-9a-f]+\)' "$TMPD/html"
}

# cut_at_runner JSON KEY: each thread's frames down to task_runner's (frame
# names under KEY: gdb_frames.py's "name", asyncore's "function").
cut_at_runner() {
	python3 - "$1" "$2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for t in j['threads']:
    for i, f in enumerate(t['frames']):
        if (f.get(sys.argv[2]) or '').startswith('bthread::TaskGroup::task_runner'):
            del t['frames'][i + 1:]
            break
json.dump(j, open(sys.argv[1], 'w'))
PY
}

variant() {
	local v=$1 name=bthread/$1 rc
	fix_core bthread "$v"; rc=$?
	[ $rc -eq 0 ] || { no_core "$name" $rc; return 1; }
	TRUTH=$(dirname "$FIX_CORE")/truth.json
	JSON=$TMPD/$v.json
	asy_json "$JSON" "$FIX_CORE" "$FIX_DIR/prog"
	if [ "$ASY_JSON_OK" -ne 0 ]; then
		fail "$name: no JSON (exit $ASY_RC): $(head -2 "$JSON.err")"; return 1
	fi
	check "$name: exit status 0, no warnings ($(jget "$JSON" '"; ".join(j["warnings"])'))" [ "$ASY_RC" -eq 0 ]
	compare_truth "$name: the fixture's bthreads" "$TRUTH" "$JSON"
	gdb_oracle "$name: stacks equal gdb's from the saved contexts" "$FIX_DIR/prog" "$FIX_CORE" "$TRUTH" "$JSON"
	check "$name: signature names the crashing bthread's frames" \
		[ "$(jget "$JSON" 'j["signature"]')" = "SIGSEGV: parse_header < handle_request < crasher" ]
	return 0
}

# locals_reports CORE PROG TRUTH: --locals and --locals all, each stack's
# locals against gdb's `bt full` of the same frames (gdb_oracle's view of
# this core), and as the text and HTML reports show them.
locals_reports() {
	local core=$1 prog=$2 truth=$3 mode
	for mode in crashing all; do
		asy_json "$TMPD/locals-$mode.json" "$core" "$prog" --locals "$mode"
		if [ ! -s "$TMPD/gdb.json" ]; then
			skip "bthread/dwarf --locals $mode: no gdb view of the core"
		else
			compare_stacks "bthread/dwarf --locals $mode: locals equal gdb's bt full" \
				"$truth" "$TMPD/locals-$mode.json" "$mode"
		fi
	done
	# Text: the crashing bthread's frames and its worker's have their
	# locals; with "all", every bthread is a group of its own (their locals
	# differ), its task_runner's `m` its TaskMeta.
	"$ASYNCORE" report "$core" "$prog" --locals >"$TMPD/locals.text" 2>/dev/null
	"$ASYNCORE" report "$core" "$prog" --locals all >"$TMPD/locals-all.text" 2>/dev/null
	check "bthread/dwarf --locals text: the crashing bthread's and its worker's frames have their locals" \
		python3 - "$truth" "$TMPD/locals.text" <<'PY'
import json, re, sys
truth, text = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
meta = [b['meta'] for b in truth['bthreads'] if b['id'] == truth['crashing']][0]
crashing = re.search(r'^Thread \d+ \(crashing.*?(?=^Thread )', text, re.M | re.S).group(0)
bthread, worker = crashing.split('---- worker frames')
src = r'(?:    \d+\t.*\n)?'   # the frame's source line, where its file is readable
sys.exit(0 if re.search(r' in parse_header\(.*\n' + src + r'        i = 0\n        sum = 0\n', bthread)
         and re.search(r' in bthread::TaskGroup::task_runner\(.*\n' + src + r'        m = %s\n' % meta, bthread)
         and re.search(r'^        \w+ = ', worker, re.M) else 1)
PY
	local listed crashing
	listed=$(sed -n '/^Bthreads (/,/^Modules:/p' "$TMPD/locals.text" | grep -c '^        [a-z_]* = ')
	crashing=$(sed -n '/^bthread .* (crashing): /,/^$/p' "$TMPD/locals.text" | grep -c '^        [a-z_]* = ')
	check "bthread/dwarf --locals text: among the bthreads, only the crashing one's $crashing locals" \
		[ "$listed" = "$crashing" -a "$crashing" -gt 0 ]
	check "bthread/dwarf --locals all text: each bthread alone, its task_runner's m its TaskMeta" \
		python3 - "$truth" "$TMPD/locals-all.text" <<'PY'
import json, re, sys
truth, text = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
section = text[text.index('\nBthreads ('):text.index('\nModules:')]
seen = {}
for group in section.split('\n\n'):
    m = re.match(r'bthread (0x[0-9a-f]+) ', group)
    runner = re.search(r' in bthread::TaskGroup::task_runner\(.*\n(?:    \d+\t.*\n)?        m = (0x[0-9a-f]+)\n',
                       group + '\n')
    if m and runner:
        seen[m.group(1)] = runner.group(1)
want = {b['id']: b['meta'] for b in truth['bthreads'] if b['state'] in ('suspended', 'running')}
sys.exit(0 if seen == want else 1)
PY
	"$ASYNCORE" report "$core" "$prog" --format html --locals all >"$TMPD/locals.html" 2>/dev/null
	check "bthread/dwarf --locals all html: every bthread's frames fold their locals" python3 - "$TMPD/locals.html" <<'PY'
import sys
page = open(sys.argv[1]).read()
tasks = page[page.index('<section id="tasks">'):].split('</section>')[0].split('<details class="task"')[1:]
stacks = [t for t in tasks if 'task_runner' in t]
sys.exit(0 if stacks and all('<details class="locals">' in t for t in stacks) else 1)
PY
}

if variant dwarf; then
	text_report bthread/dwarf "$FIX_CORE" "$FIX_DIR/prog" "$TRUTH"
	locals_reports "$FIX_CORE" "$FIX_DIR/prog" "$TRUTH"
	DWARF_DIR=$FIX_DIR DWARF_CORE=$FIX_CORE DWARF_TRUTH=$TRUTH

	# --no-tasks: the threads' own stacks, whole, as gdb unwinds them.
	asy_json "$TMPD/notasks.json" "$FIX_CORE" "$FIX_DIR/prog" --no-tasks
	check "bthread/dwarf --no-tasks: no tasks" [ "$(jget "$TMPD/notasks.json" 'len(j["tasks"])')" = 0 ]
	if command -v gdb >/dev/null && gdb_frames "$FIX_DIR/prog" "$FIX_CORE" "$TMPD/threads.gdb"; then
		# gdb goes on past task_runner into bthread_make_fcontext and a
		# null pc: compare the frames down to task_runner.
		cut_at_runner "$TMPD/threads.gdb" name
		cut_at_runner "$TMPD/notasks.json" function
		if python3 "$ROOT/tests/oracle_compare.py" "$TMPD/notasks.json" "$TMPD/threads.gdb" bthread >"$TMPD/o"; then
			pass "bthread/dwarf --no-tasks: threads equal gdb's"
		else
			fail "bthread/dwarf --no-tasks: threads differ from gdb's: $(head -1 "$TMPD/o")"
		fi
	fi
fi
variant nodebug
variant moved
# Built as bRPC with BRPC_DEBUG_LOCK=1: the mutex records its holder, which
# the waiter's blocked_on names (the truth: the bthread that locked it).
variant debuglock

# Stripped, with its members moved: the documented offsets do not fit, so
# no bthreads (never a guess), a warning, and the threads as usual.
if fix_core bthread moved-nodebug; then
	asy_json "$TMPD/mn.json" "$FIX_CORE" "$FIX_DIR/prog"
	check "bthread/moved-nodebug: no bthreads" [ "$(jget "$TMPD/mn.json" 'len(j["tasks"])')" = 0 ]
	check "bthread/moved-nodebug: a warning says why" \
		grep -q 'bthread: .*without debug info' <(jget "$TMPD/mn.json" '"\n".join(j["warnings"])')
	check "bthread/moved-nodebug: threads still unwound" \
		[ "$(jget "$TMPD/mn.json" 'sum(len(t["frames"]) > 2 for t in j["threads"])')" -ge 4 ]
else
	no_core bthread/moved-nodebug $?
fi

# ---- damaged cores ---------------------------------------------------------

[ -n "${DWARF_CORE:-}" ] || exit 0

# truth EXPR: a value from the dwarf build's truth (Python over `t`).
truth() { python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$DWARF_TRUTH" "$1"; }
meta_of() { truth "[b['meta'] for b in t['bthreads'] if b['fn'] == '$1'][0]"; }
id_of() { truth "[b['id'] for b in t['bthreads'] if b['fn'] == '$1'][0]"; }

# damaged NAME POKE...: the report of the dwarf core with POKEs (corrupt_core.py's
# VADDR=VALUE[:SIZE]) into $TMPD/damaged.json; FAIL unless it is JSON with
# exit status 0 or 1 (each expected warning is checked apart).
damaged() {
	local name=$1; shift
	python3 "$ROOT/tests/corrupt_core.py" "$DWARF_CORE" "$TMPD/damaged.core" poke "$@" ||
		{ fail "$name: cannot patch the core"; return 1; }
	asy_json "$TMPD/damaged.json" "$TMPD/damaged.core" "$DWARF_DIR/prog"
	if [ "$ASY_JSON_OK" -ne 0 ] || [ "$ASY_RC" -gt 1 ]; then
		fail "$name: exit $ASY_RC $(head -2 "$TMPD/damaged.json.err")"; return 1
	fi
}

# truth_but NAME IDS...: the truth less those bthreads (they are checked apart).
truth_but() {
	python3 - "$DWARF_TRUTH" "$TMPD/truth-but.json" "$@" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t['bthreads'] = [b for b in t['bthreads'] if b['id'] not in sys.argv[3:]]
json.dump(t, open(sys.argv[2], 'w'))
PY
}

others_listed() {   # others_listed NAME IDS...: the rest of the truth still holds
	local name=$1; shift
	truth_but "$@"
	python3 - "$TMPD/damaged.json" "$@" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j['tasks'] = [t for t in j['tasks'] if t['id'] not in sys.argv[2:]]
json.dump(j, open(sys.argv[1] + '.rest', 'w'))
PY
	compare_truth "$name: the other bthreads still listed" "$TMPD/truth-but.json" "$TMPD/damaged.json.rest"
}

warned() {   # warned NAME REGEX
	if jget "$TMPD/damaged.json" '"\n".join(j["warnings"])' | grep -qE -- "$2"; then
		pass "$1: warning /$2/"
	else
		fail "$1: no warning /$2/; warnings: $(jget "$TMPD/damaged.json" '"; ".join(j["warnings"])' | cut -c1-300)"
	fi
}

# task ID EXPR: EXPR over the damaged report's task ID (`x`); empty when absent.
task() { jget "$TMPD/damaged.json" "(lambda x: $2)([t for t in j['tasks'] if t['id'] == '$1'][0])"; }

# A TaskMeta whose stack pointer leads nowhere: listed, without frames.
sleeper=$(id_of sleeper)
if damaged "bthread/damaged stack" "$(meta_of sleeper)+64=0xdead0000"; then
	warned "bthread/damaged stack" "^bthread: bthread $sleeper: its ContextualStack 0xdead0000 is not readable"
	check "bthread/damaged stack: sleeper listed, suspended, no frames" \
		[ "$(task "$sleeper" "(x['state'], len(x['frames']))")" = "('suspended', 0)" ]
	others_listed "bthread/damaged stack" "$sleeper"
fi

# A tid that is not its slot's: that TaskMeta is not listed, the rest are.
bw=$(id_of butex_waiter)
if damaged "bthread/damaged tid" "$(meta_of butex_waiter)+32=$(( bw ^ 0x5 ))"; then
	warned "bthread/damaged tid" "^bthread: TaskMeta $(meta_of butex_waiter) \(slot [0-9]+\) holds tid"
	check "bthread/damaged tid: butex_waiter not listed" [ -z "$(task "$bw" "x['id']")" ]
	others_listed "bthread/damaged tid" "$bw"
fi

# A saved context whose return address is junk: the walk stops early.
joiner=$(id_of joiner)
ctx=$(truth "[b['context'] for b in t['bthreads'] if b['fn'] == 'joiner'][0]")
if damaged "bthread/damaged context" "$ctx+0x38=0x10"; then
	warned "bthread/damaged context" "^bthread: bthread $joiner: unwinding from its saved context stopped before task_runner"
	check "bthread/damaged context: joiner still waits on its join" \
		[ "$(task "$joiner" "(x['wait']['kind'], x['wait']['target'])")" = "('join', '$sleeper')" ]
	others_listed "bthread/damaged context" "$joiner"
fi

# Remote queues emptied: the bthread queued there was created, never ran.
remote=$(truth "[b['id'] for b in t['bthreads'] if b['fn'] == 'never_run'][-1]")
pokes=$(truth "' '.join(w['group'] + '+448=0:4' for w in t['workers'])")
# shellcheck disable=SC2086
if damaged "bthread/remote queues emptied" $pokes; then
	check "bthread/remote queues emptied: its bthread is created" [ "$(task "$remote" "x['state']")" = created ]
	others_listed "bthread/remote queues emptied" "$remote"
fi

# Run queues with an impossible capacity: a warning, their bthread created.
local_q=$(truth "[b['id'] for b in t['bthreads'] if b['fn'] == 'never_run'][0]")
pokes=$(truth "' '.join(w['group'] + '+328=3' for w in t['workers'])")
# shellcheck disable=SC2086
if damaged "bthread/run queues damaged" $pokes; then
	warned "bthread/run queues damaged" "run queue is damaged"
	check "bthread/run queues damaged: its bthread is created" [ "$(task "$local_q" "x['state']")" = created ]
	others_listed "bthread/run queues damaged" "$local_q"
fi

# A pool that claims 2^40 block groups: bounded, everything still listed.
if damaged "bthread/huge _ngroup" "$(truth "t['ngroup']")=0x10000000000"; then
	warned "bthread/huge _ngroup" "claims 1099511627776 block groups; reading 65536"
	others_listed "bthread/huge _ngroup"
fi

# Stripped: one damaged tid is that TaskMeta's problem; most of them damaged
# means the documented layout does not hold, and nothing is guessed.
if fix_core bthread nodebug; then
	NB_TRUTH=$(dirname "$FIX_CORE")/truth.json
	one=$(python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["bthreads"][0]; print("%s+32=%d" % (b["meta"], int(b["id"],16) ^ 5))' "$NB_TRUTH")
	all=$(python3 -c 'import json,sys; print(" ".join("%s+32=%d" % (b["meta"], int(b["id"],16) ^ 0x40000) for b in json.load(open(sys.argv[1]))["bthreads"]))' "$NB_TRUTH")
	python3 "$ROOT/tests/corrupt_core.py" "$FIX_CORE" "$TMPD/nb1.core" poke "$one"
	asy_json "$TMPD/nb1.json" "$TMPD/nb1.core" "$FIX_DIR/prog"
	check "bthread/nodebug one damaged tid: the others listed" \
		[ "$(jget "$TMPD/nb1.json" 'len(j["tasks"])')" = "$(( $(jget "$NB_TRUTH" 'len(j["bthreads"])') - 1 ))" ]
	# shellcheck disable=SC2086
	python3 "$ROOT/tests/corrupt_core.py" "$FIX_CORE" "$TMPD/nball.core" poke $all
	asy_json "$TMPD/nball.json" "$TMPD/nball.core" "$FIX_DIR/prog"
	check "bthread/nodebug all tids damaged: no bthreads" [ "$(jget "$TMPD/nball.json" 'len(j["tasks"])')" = 0 ]
	check "bthread/nodebug all tids damaged: the layout is refused" \
		grep -q 'documented layout does not fit this core' <(jget "$TMPD/nball.json" '"\n".join(j["warnings"])')
fi

# Random damage to the TaskMetas, TaskGroups and saved contexts: a report
# (exit 0 or 1) every time, under AddressSanitizer when it is built.
bin=$ASYNCORE
[ -x "$ROOT/build/asan/asyncore" ] && bin=$ROOT/build/asan/asyncore
ranges=$(truth "','.join([b['meta'] + ':240' for b in t['bthreads']] + [w['group'] + ':544' for w in t['workers']] + [b['context'] + ':64' for b in t['bthreads'] if b.get('context')] + [w['main_context'] + ':64' for w in t['workers']])")
bad=0
python3 "$ROOT/tests/corrupt_core.py" "$DWARF_CORE" "$TMPD/rnd-%d.core" flip-ranges 1-12 "$ranges"
for seed in $(seq 1 12); do
	ASYNCORE_CACHE_DIR= timeout 60 "$bin" report "$TMPD/rnd-$seed.core" "$DWARF_DIR/prog" --format json >/dev/null 2>"$TMPD/rnd.err"
	rc=$?
	rm -f "$TMPD/rnd-$seed.core"
	if [ $rc -gt 1 ] || grep -qE 'Sanitizer|runtime error' "$TMPD/rnd.err"; then
		fail "bthread/random damage seed $seed: exit $rc $(grep -m1 -E 'ERROR|runtime error' "$TMPD/rnd.err")"
		bad=1
	fi
done
[ $bad -eq 0 ] && pass "bthread/random damage: 12 damaged cores, a report each ($(basename "$bin"))"
exit 0
