#!/usr/bin/env bash
# Foundation cores: abort() in one thread, SIGSEGV at a known address in a
# non-main thread of four, a running program dumped by gcore.  Thread ids,
# crashing thread and signal are checked against gdb's `info threads`;
# compressed copies of a core must give the same report.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "basic: no asyncore at $ASYNCORE (run make)"; exit 0; }

# check_against_gdb NAME PROG CORE JSON: thread ids, crashing tid, signal.
check_against_gdb() {
	local name=$1 prog=$2 core=$3 json=$4
	if ! command -v gdb >/dev/null; then skip "$name-gdb: gdb not installed"; return; fi
	if ! gdb_threads "$prog" "$core" "$TMPD/$name.gdb"; then
		skip "$name-gdb: gdb lists no threads for this core"; return
	fi
	local want got
	want=$(awk '/^lwp/ {print $2}' "$TMPD/$name.gdb" | sort -n | tr '\n' ' ')
	got=$(jget "$json" "' '.join(str(t) for t in sorted(t['tid'] for t in j['threads']))")
	check_eq "$name-tids" "$want" "$got "
	want=$(awk '/^lwp/ && $4 == 1 {print $2}' "$TMPD/$name.gdb")
	got=$(jget "$json" "j['crashing_tid']")
	# No fatal signal (gcore): gdb's current thread is only the first one
	# dumped; asyncore may name no crashing thread at all.
	if [ "$got" = None ] && ! grep -q '^signal' "$TMPD/$name.gdb"; then
		got=$want
	fi
	check_eq "$name-crashing-tid" "$want" "$got"
	got=$(jget "$json" "[t['tid'] for t in j['threads']][0]")
	check_eq "$name-crashing-first" "$want" "$got"
	want=$(awk '/^signal/ {print $2}' "$TMPD/$name.gdb")
	got=$(jget "$json" "(j.get('signal') or {}).get('number') or ''")
	check_eq "$name-signal" "$want" "$got"
}

check_eq() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: expected '$2', got '$3'"; fi
}

# check_case NAME CORE PROG EXPECT: JSON report, exit status, golden lines.
check_case() {
	local name=$1 core=$2 prog=$3 expect=$4 json=$TMPD/$1.json
	asy_json "$json" "$core" "$prog"
	if [ "$ASY_RC" -ne 0 ]; then
		fail "$name-exit: asyncore exited $ASY_RC: $(head -3 "$json.err")"
		[ "$ASY_RC" -eq 1 ] || return 1
	else
		pass "$name-exit"
	fi
	if [ "$ASY_JSON_OK" -ne 0 ]; then
		fail "$name-json: the report is not valid JSON: $(head -c 200 "$json")"; return 1
	fi
	python3 "$ROOT/tests/fixture_lines.py" --own prog --sorted --strip-params "$json" >"$TMPD/$name.lines"
	expect_lines "$name-frames" "$expect" "$TMPD/$name.lines"
	check_against_gdb "$name" "$prog" "$core" "$json"
	return 0
}

FIX_BAD=
# abort(): SIGABRT (6), code SI_TKILL (-6), main thread, no fault address.
if fix_core abort1; then
	check_case abort1 "$FIX_CORE" "$FIX_DIR/prog" "$(expect_file abort1 "" stacks)" || FIX_BAD=1
	j=$TMPD/abort1.json; [ -n "${FIX_BAD:-}" ] && j=/dev/null
	check_eq abort1-signal-name SIGABRT "$(jget "$j" "j['signal']['name']")"
	check_eq abort1-one-thread 1 "$(jget "$j" "len(j['threads'])")"
	check_eq abort1-pid True "$(jget "$j" "j['threads'][0]['tid'] == j['core']['pid']")"
	check_eq abort1-no-abort-message None "$(jget "$j" "j['abort_message']")"
	abort1_core=$FIX_CORE abort1_prog=$FIX_DIR/prog
else
	no_core abort1 $?
fi

# A failed assert(): glibc's message in __abort_msg, as gdb prints it with
# `printf "%s", __abort_msg->msg` less the newline glibc ends it with.
FIX_BAD=
if fix_core assert1; then
	check_case assert1 "$FIX_CORE" "$FIX_DIR/prog" "$(expect_file assert1 "" stacks)" || FIX_BAD=1
	j=$TMPD/assert1.json; [ -n "${FIX_BAD:-}" ] && j=/dev/null
	got=$(jget "$j" "j['abort_message']")
	case "$got" in
	"prog: "*"/main.c:12: check_order: Assertion \`o->quantity > 0 && \"an order has a quantity\"' failed.")
		pass assert1-abort-message ;;
	*) fail "assert1-abort-message: got '$got'" ;;
	esac
	if command -v gdb >/dev/null; then
		want=$(gdb -batch -nx -ex 'printf "%s", __abort_msg->msg' "$FIX_DIR/prog" "$FIX_CORE" 2>/dev/null |
			grep -a '^prog: ')
		check_eq assert1-abort-message-gdb "$want" "$got"
	fi
	"$ASYNCORE" "$FIX_CORE" "$FIX_DIR/prog" >"$TMPD/assert1.txt" 2>&1
	check_eq assert1-text "Abort message: $got" "$(grep -m1 '^Abort message: ' "$TMPD/assert1.txt")"
else
	no_core assert1 $?
fi

FIX_BAD=
# Four threads, SIGSEGV (11) SEGV_MAPERR (1) at 0x5eed0 in a non-main thread.
if fix_core threads4; then
	check_case threads4 "$FIX_CORE" "$FIX_DIR/prog" "$(expect_file threads4 "" stacks)" || FIX_BAD=1
	j=$TMPD/threads4.json; [ -n "${FIX_BAD:-}" ] && j=/dev/null
	check_eq threads4-count 4 "$(jget "$j" "len(j['threads'])")"
	check_eq threads4-signal-number 11 "$(jget "$j" "j['signal']['number']")"
	check_eq threads4-code 1 "$(jget "$j" "j['signal']['code']")"
	check_eq threads4-address 0x5eed0 "$(jget "$j" "j['signal']['address']")"
	check_eq threads4-not-main True \
		"$(jget "$j" "j['crashing_tid'] != j['core']['pid']")"
	check_eq threads4-one-crashing 1 \
		"$(jget "$j" "sum(1 for t in j['threads'] if t['crashing'])")"
	threads4_core=$FIX_CORE threads4_prog=$FIX_DIR/prog
else
	no_core threads4 $?
fi

FIX_BAD=
# gcore of a running program: no fatal signal, so no thread is marked
# crashing (its stacks have only "thread:" lines).
if fix_gcore running; then
	check_case running "$FIX_CORE" "$FIX_DIR/prog" "$(expect_file running "" stacks)" || FIX_BAD=1
	j=$TMPD/running.json; [ -n "${FIX_BAD:-}" ] && j=/dev/null
	check_eq running-no-signal True \
		"$(jget "$j" "not (j.get('signal') or {}).get('number')")"
	check_eq running-count 2 "$(jget "$j" "len(j['threads'])")"
else
	no_core running $?
fi

# Compressed cores (as systemd-coredump stores them) give the same report,
# apart from the core's own path, file size and SHA-256: the same fingerprint and
# decompressed size.
same_report() {
	python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for j in (a, b):
    for k in ('path', 'file_size', 'sha256'):
        j.get('core', {}).pop(k, None)
sys.exit(0 if a == b else 1)
PY
}
if [ -n "${abort1_core:-}" ]; then
	for z in zst:"zstd -q -c" xz:"xz -c" lz4:"lz4 -q -c" gz:"gzip -c"; do
		ext=${z%%:*} cmd=${z#*:}
		if ! command -v "${cmd%% *}" >/dev/null; then skip "compressed-$ext: no ${cmd%% *}"; continue; fi
		$cmd "$abort1_core" >"$TMPD/core.$ext"
		asy_json "$TMPD/z.$ext.json" "$TMPD/core.$ext" "$abort1_prog"
		if [ "$ASY_RC" -ne 0 ]; then
			fail "compressed-$ext: asyncore exited $ASY_RC: $(head -2 "$TMPD/z.$ext.json.err")"
		elif same_report "$TMPD/abort1.json" "$TMPD/z.$ext.json"; then
			pass "compressed-$ext"
		else
			fail "compressed-$ext: report differs from the uncompressed core's"
			diff <(python3 -m json.tool "$TMPD/abort1.json") \
				<(python3 -m json.tool "$TMPD/z.$ext.json") | head -10 | sed 's/^/    /'
		fi
	done
fi
# A multi-threaded core, zstd-compressed.
if [ -n "${threads4_core:-}" ] && command -v zstd >/dev/null; then
	zstd -q -c "$threads4_core" >"$TMPD/t4.core.zst"
	asy_json "$TMPD/t4.zst.json" "$TMPD/t4.core.zst" "$threads4_prog"
	if [ "$ASY_RC" -eq 0 ] && same_report "$TMPD/threads4.json" "$TMPD/t4.zst.json"; then
		pass compressed-threads4-zst
	else
		fail "compressed-threads4-zst: exit $ASY_RC, or the report differs from the uncompressed core's"
	fi
fi
exit 0
