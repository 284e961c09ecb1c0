#!/usr/bin/env bash
# Stack overflows: mutual (ping/pong) and direct (descend) recursion built at
# -O2 overflowing the main thread's stack (two `ulimit -s` sizes) and a
# secondary thread's (pthread_attr_setstacksize).  The crashing thread is
# unwound to its bottom; the report keeps the innermost frames, the cycle
# with its count and the outermost frames with their true indexes, each
# with its arguments and entry values as gdb's `bt N` and `bt -N` on the same
# core show them; the signature is the same at every depth and stack size.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "recursion: no asyncore at $ASYNCORE (run make)"; exit 0; }
fix_build recursion || exit 0
PROG=$FIX_DIR/prog

# overflow_core NAME STACK_KB ARGS...: a core of PROG ARGS under ulimit -s
# STACK_KB into $TMPD/NAME.core; false (with a SKIP line) when none.
overflow_core() {
	local name=$1 kb=$2 core; shift 2
	if ! core=$(ulimit -s "$kb" && fixture_core "$FIX_DIR" "$@" 2>"$TMPD/core.err"); then
		skip "recursion: $name: $(head -1 "$TMPD/core.err")"
		return 1
	fi
	FIX_RUNS+=("$(dirname "$core")")
	mv "$core" "$TMPD/$name.core"
}

# gdb's frames as "N function (arguments)" lines: `bt INNER` and `bt -OUTER`,
# past main as asyncore's walk goes (not the frame gdb shows on loading the core).
gdb_ends() {
	LC_ALL=C gdb -batch -nx -iex 'set auto-load python-scripts off' -ex 'set width 0' \
		-ex 'set print frame-arguments scalars' -ex 'set backtrace past-main on' \
		-ex 'echo ==bt==\n' -ex "bt $2" -ex "bt -$3" "$PROG" "$1" 2>/dev/null |
		sed -nE '/^==bt==$/,$ s/^#([0-9]+) +(0x[0-9a-f]+ in )?_*([^ (]+) \((.*)\)( (at|from) [^ ]+)?$/\1 \3 (\4)/p'
}

# asyncore's kept frames the same way, with the numbers gdb gives them.
asy_ends() {
	python3 - "$1" "$ROOT/tests" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[2])
from oracle_compare import render_args
t = json.load(open(sys.argv[1]))['threads'][0]
for f in t['frames']:   # lstrip: gdb's clone3 is the symbol __clone3
    print('%d %s (%s)' % (f['index'], f['function'].lstrip('_'), render_args(f['args'])))
PY
}

# check_case NAME CORE CYCLE: the report of CORE against gdb and the JSON
# contract; CYCLE is the sorted cycle ("ping pong" or "descend").
check_case() {
	local name=$1 core=$2 cycle=$3
	local json=$TMPD/$name.json
	"$ASYNCORE" report "$core" "$PROG" --format json >"$json" 2>"$TMPD/$name.err"
	local rc=$?
	check "recursion: $name: analysed (exit 0, no warning)" \
		test "$rc/$(jget "$json" "len(j['warnings'])")" = "0/0"
	check "recursion: $name: the cycle ($cycle) and its count" test "$(jget "$json" "(lambda r, fs:
		' '.join(sorted(r['cycle'])) == '$cycle' and r['last'] - r['first'] + 1 == len(r['cycle']) * r['repeats']
		and r['repeats'] > 1000 and fs[r['first'] - 1]['index'] == r['first'] - 1
		and fs[r['first']]['index'] == r['last'] + 1)(j['threads'][0]['recursion'], j['threads'][0]['frames'])")" = True
	check "recursion: $name: frames hold only the shown ones (under 40)" \
		test "$(jget "$json" "len(j['threads'][0]['frames']) < 40")" = True
	# Every kept frame: the frame before the run has its entry values from
	# its caller inside the run, the one after it from its caller kept.
	local inner outer outermost=main
	inner=$(jget "$json" "j['threads'][0]['recursion']['first']")
	outer=$(jget "$json" "len(j['threads'][0]['frames']) - $inner")
	if [ -n "$inner" ] && gdb_ends "$core" "$inner" "$outer" >"$TMPD/$name.gdb" &&
	   [ -s "$TMPD/$name.gdb" ]; then
		outermost=$(tail -1 "$TMPD/$name.gdb" | cut -d' ' -f2)
		asy_ends "$json" >"$TMPD/$name.asy"
		expect_lines "recursion: $name: kept frames and arguments as gdb's bt $inner / bt -$outer" \
			"$TMPD/$name.gdb" "$TMPD/$name.asy"
	else
		skip "recursion: $name: gdb gave no backtrace"
	fi
	"$ASYNCORE" report "$core" "$PROG" >"$TMPD/$name.txt" 2>/dev/null
	check "recursion: $name: text shows one line for the cycle with its count" \
		grep -qE '^    \.\.\. #[0-9]+ \.\. #[0-9]+: [a-z_]+( < [a-z_]+)*, [0-9]+ times \.\.\.$' "$TMPD/$name.txt"
	check "recursion: $name: text shows the outermost frames down to $outermost" \
		grep -qE "^#[0-9]{4,} +0x[0-9a-f]+ in _*$outermost " "$TMPD/$name.txt"
	"$ASYNCORE" report "$core" "$PROG" --format html >"$TMPD/$name.html" 2>/dev/null
	check "recursion: $name: HTML shows the cycle with its count" \
		grep -qE '^<li class="recursion"><span class="idx">#[0-9]+ \.\. #[0-9]+</span> .*[0-9]+ times</span></li>$' "$TMPD/$name.html"
}

sig() { jget "$TMPD/$1.json" "j['signature'] + ' ' + j['signature_hash']"; }

if overflow_core mutual8m 8192 mutual; then
	check_case mutual8m "$TMPD/mutual8m.core" "ping pong"
	/usr/bin/time -f '%M' -o "$TMPD/rss" "$ASYNCORE" report "$TMPD/mutual8m.core" "$PROG" --format json \
		>/dev/null 2>&1
	frames=$(jget "$TMPD/mutual8m.json" "j['threads'][0]['frames'][-1]['index'] + 1")
	rss_kb=$(tail -1 "$TMPD/rss")
	if ldd "$ASYNCORE" 2>/dev/null | grep -q libasan; then
		check "recursion: mutual8m: ~200,000 frames ($frames); no memory bound under AddressSanitizer" \
			test "${frames:-0}" -gt 150000
	else
		check "recursion: mutual8m: ~200,000 frames ($frames) in under 200 MB ($((rss_kb / 1024)) MB)" \
			test "${frames:-0}" -gt 150000 -a "${rss_kb:-999999}" -lt 204800
	fi
fi
overflow_core mutual2m 2048 mutual && check_case mutual2m "$TMPD/mutual2m.core" "ping pong"
overflow_core direct8m 8192 direct && check_case direct8m "$TMPD/direct8m.core" "descend"
overflow_core direct2m 2048 direct && check_case direct2m "$TMPD/direct2m.core" "descend"
overflow_core mutual_thread 8192 mutual thread && check_case mutual_thread "$TMPD/mutual_thread.core" "ping pong"
overflow_core direct_thread 8192 direct thread && check_case direct_thread "$TMPD/direct_thread.core" "descend"
overflow_core inlined2m 2048 inlined && check_case inlined2m "$TMPD/inlined2m.core" "climb climb_step"

# have JSON...: every case's report is there (else a SKIP line: a core is missing).
have_json() {
	local n
	for n in "$@"; do
		[ -s "$TMPD/$n.json" ] || { skip "recursion: signatures: no report of $n"; return 1; }
	done
}
if have_json mutual8m mutual2m mutual_thread; then
	check "recursion: mutual: the signature is the cycle and the frame that entered it" \
		test "$(jget "$TMPD/mutual8m.json" "j['signature']")" = \
		"SIGSEGV: recursion pong < ping, entered from start_recursion"
	check "recursion: mutual: one signature at 8 MiB, 2 MiB and on a 1 MiB thread" \
		test "$(sig mutual8m)" = "$(sig mutual2m)" -a "$(sig mutual8m)" = "$(sig mutual_thread)"
fi
if have_json direct8m direct2m direct_thread mutual8m; then
	check "recursion: direct: one signature at 8 MiB, 2 MiB and on a 1 MiB thread" \
		test "$(sig direct8m)" = "$(sig direct2m)" -a "$(sig direct8m)" = "$(sig direct_thread)"
	check "recursion: direct and mutual: two signatures" test "$(sig direct8m)" != "$(sig mutual8m)"
fi

# A store keeps the frames' true indexes, so `resign` finds the run again
# and keeps the bucket.
if have_json mutual2m; then
	DB=$TMPD/store.db
	"$ASYNCORE" ingest --db "$DB" --binary "$PROG" --quiet "$TMPD/mutual2m.core" >/dev/null 2>&1
	q() { "$ASYNCORE" query --db "$DB" --format csv "$1" 2>/dev/null | tail -n +2; }
	hash=$(jget "$TMPD/mutual2m.json" "j['signature_hash']")
	check "recursion: stored with the report's signature" test "$(q "SELECT signature_hash FROM cores")" = "$hash"
	check "recursion: stored frames keep their true index" \
		test "$(q "SELECT max(f.idx) FROM frames f JOIN threads t ON t.core_id = f.core_id AND t.idx = f.thread_idx WHERE t.crashing")" = \
		"$(jget "$TMPD/mutual2m.json" "j['threads'][0]['frames'][-1]['index']")"
	"$ASYNCORE" resign --db "$DB" >/dev/null 2>&1
	check "recursion: resign keeps the bucket" test "$(q "SELECT signature_hash FROM cores")" = "$hash"
fi

# resign --debug-dir: cores of the program built with its DWARF split off
# (debug/prog.debug) are stored without it, then symbolized again.  The
# stored frames keep the indexes the report with the debug info gives: the
# jump over the run stays, moved by the inline levels gained before it, and
# the run counts its cycle's new levels (inlined: climb_step, one a level).
# The bucket is the one the report with the debug info signs.
if fix_build recursion split; then
	SPLIT=$FIX_DIR
	FIX_DIR=$SPLIT overflow_core split_mutual 2048 mutual
	FIX_DIR=$SPLIT overflow_core split_inlined 2048 inlined
	FIX_DIR=$SPLIT overflow_core split_thread 8192 inlined thread
	# stored_frames DB: the crashing thread's frames, "index function inlined line".
	stored_frames() {
		"$ASYNCORE" query --db "$1" --format csv "SELECT f.idx || ' ' || coalesce(f.function, '-')
			|| ' ' || f.inlined || ' ' || coalesce(f.line, 0) AS frame FROM frames f JOIN threads t
			ON t.core_id = f.core_id AND t.idx = f.thread_idx WHERE t.crashing ORDER BY f.idx" |
			tail -n +2 | tr -d '"'
	}
	for name in split_mutual split_inlined split_thread; do
		[ -s "$TMPD/$name.core" ] || continue
		db=$TMPD/$name.db
		"$ASYNCORE" report "$TMPD/$name.core" "$SPLIT/prog" --debug-dir "$SPLIT/debug" --format json \
			>"$TMPD/$name.json" 2>/dev/null
		jget "$TMPD/$name.json" "'\n'.join('%d %s %d %d' % (f['index'], f['function'] or '-', f['inlined'],
			f['line'] or 0) for f in [t for t in j['threads'] if t['crashing']][0]['frames'])" \
			>"$TMPD/$name.expect"
		"$ASYNCORE" ingest --db "$db" --binary "$SPLIT/prog" --quiet "$TMPD/$name.core" >/dev/null 2>&1
		check "recursion: $name: stored without the program's debug info (no line in it)" test "$(
			"$ASYNCORE" query --db "$db" --format csv "SELECT count(*) FROM frames
			WHERE module = '$SPLIT/prog' AND line IS NOT NULL" | tail -1)" = 0
		"$ASYNCORE" resign --db "$db" --debug-dir "$SPLIT/debug" >"$TMPD/$name.resign" 2>&1
		check "recursion: $name: resign --debug-dir symbolizes the frames again" \
			grep -q '^debug info found for 1 modules' "$TMPD/$name.resign"
		stored_frames "$db" >"$TMPD/$name.stored"
		expect_lines "recursion: $name: after resign, the stored indexes are the report's with the debug info" \
			"$TMPD/$name.expect" "$TMPD/$name.stored"
		check "recursion: $name: ... and so is the signature" test \
			"$("$ASYNCORE" query --db "$db" --format csv "SELECT signature FROM cores" | tail -1 | tr -d '"')" = \
			"$(jget "$TMPD/$name.json" "j['signature']")"
	done
fi
