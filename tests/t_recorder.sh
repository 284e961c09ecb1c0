#!/usr/bin/env bash
# Flight-recorder rings: the fixture programs write their own dump of every
# ring when they crash (recorder.truth, next to the core); asyncore's
# recovery from the core must match it event by event.  Variants: stripped
# .symtab (head from recorder_list()), an in-flight record, the ELFE C++
# layout, and corrupted indices (warnings, no crash).
source "$(dirname "$0")/lib.sh"

TMPD=$(mktemp -d)
RUNS=("$TMPD")
trap 'rm -rf "${RUNS[@]}"' EXIT

[ -x "$ASYNCORE" ] || { fail "recorder: no asyncore at $ASYNCORE (run make)"; exit 0; }

# compare_truth TRUTH JSON MODE: every ring's indices and every event
# (order, timestamp, location, function, message) against the fixture's
# own dump.  MODE elfe compares function names without parameters and
# ignores locations (the ELFE layout has none).
compare_truth() { python3 "$ROOT/tests/recorder_truth.py" "$@"; }

# run_case NAME CASE VARIANT: build, crash, analyse; sets DIR, CORE, JSON.
run_case() {
	local name=$1 case=$2 variant=$3
	DIR=$(fixture_build "$case" "$variant") || { fail "$name: fixture build failed"; return 1; }
	CORE=$(fixture_core "$DIR" 2>"$TMPD/$name.err")
	local rc=$?
	if [ $rc -ne 0 ]; then skip "$name: $(cat "$TMPD/$name.err")"; return 1; fi
	RUNS+=("$(dirname "$CORE")")
	JSON=$TMPD/$name.json
	"$ASYNCORE" report "$CORE" "$DIR/prog" --format json >"$JSON" 2>"$TMPD/$name.stderr"
	ASY_RC=$?
	if [ $ASY_RC -gt 1 ] || ! json_ok "$JSON"; then
		fail "$name: asyncore exited $ASY_RC: $(head -3 "$TMPD/$name.stderr")"
		return 1
	fi
	return 0
}

# truth_case NAME CASE VARIANT MODE: recovery equals the program's own dump.
truth_case() {
	local name=$1
	run_case "$@" || return 1
	local truth; truth=$(dirname "$CORE")/recorder.truth
	if [ ! -s "$truth" ]; then skip "$name: the program wrote no recorder.truth (core not from the kernel?)"; return 1; fi
	if compare_truth "$truth" "$JSON" "$4"; then pass "$name: rings and events match the program's dump"
	else fail "$name: recovery differs from the program's dump"; fi
	return 0
}

warned() { json_get "$JSON" "any('$1' in w for w in j['warnings'])"; }

# --- the recorder library layout -------------------------------------------
if truth_case recorder recorder "" recorder; then
	if [ "$(json_get "$JSON" "len([w for w in j['warnings'] if 'recorder' in w])")" = 0 ]; then
		pass "recorder: no recorder warnings on an intact core"
	else fail "recorder: unexpected warnings: $(json_get "$JSON" "j['warnings']")"; fi
	check "recorder: wrapped size-8 ring keeps its oldest slot" \
		test "$(json_get "$JSON" "[(r['recovered'], r['overwritten']) for r in j['recorders'] if r['name'] == 'moves'][0]")" = "(8, 64)"
	check "recorder: %+s strings are listed as read post-mortem" \
		test "$(json_get "$JSON" "any(e['strings_read'] for r in j['recorders'] for e in r['events'] if 'Move disk' in (e['message'] or ''))")" = True
	check "recorder: 9-argument record spans 3 slots" \
		test "$(json_get "$JSON" "any(e['message'] == 'nine 1 2 3 4 5 6 7 8 9' for r in j['recorders'] for e in r['events'])")" = True
	lib=$(dirname "$CORE")/recorder.libdump
	"$ASYNCORE" report "$CORE" "$DIR/prog" --recorder-format=library >"$TMPD/lib.out" 2>/dev/null
	# The library writes its line buffer's NUL before the newline of a
	# line cut at 255 characters; asyncore's dump leaves that byte out.
	tr -d '\000' <"$lib" >"$TMPD/lib.want" 2>/dev/null
	if [ -s "$lib" ] && diff "$TMPD/lib.want" "$TMPD/lib.out" >"$TMPD/lib.diff"; then
		pass "recorder: --recorder-format=library equals the library-format dump"
	else fail "recorder: library format differs: $(head -6 "$TMPD/lib.diff")"; fi
	# The cases the fixture records for it (fixtures/recorder/hanoi.c,
	# record_formats): the dump is compared above; these say it has them.
	for want in '] (1)    hanoi: nest 25$' '] (1)    hanoi: unnest 25$' '] (1)   hanoi: unnest 24$' \
		']   steps: still two levels in$' '] hanoi: back to the margin$' \
		'] values: negatives ffffffbf -65 4294967231 ffbf -65 ffffffffffffffbf ffffffffffffffbf$' \
		'] values: ends in a newline 1$'; do
		if grep -q -- "$want" "$TMPD/lib.out"; then pass "recorder: library dump has '$want'"
		else fail "recorder: library dump lacks a line matching '$want'"; fi
	done
	check "recorder: library dump lines are at most 255 characters" \
		test "$(awk 'length > 255' "$TMPD/lib.out" | wc -l)" = 0
	check "recorder: the long message is whole in JSON" \
		test "$(json_get "$JSON" "max(len(e['message']) for r in j['recorders'] for e in r['events'])")" -gt 255
	"$ASYNCORE" "$CORE" "$DIR/prog" --recorder-tail 3 >"$TMPD/text.out" 2>/dev/null
	if grep -q "worker about to crash, goodbye" "$TMPD/text.out" && ! grep -q "main round 1" "$TMPD/text.out"; then
		pass "recorder: text report shows the last --recorder-tail events"
	else fail "recorder: text report does not show exactly the last 3 events"; fi
fi

if truth_case recorder-stripped recorder stripped recorder; then
	check "recorder-stripped: list head decoded without .symtab" \
		test "$(json_get "$JSON" "len(j['recorders'])")" = 4
fi

if truth_case recorder-nolist recorder nolist recorder; then
	check "recorder-nolist: rings found through recorder_info_for_NAME" \
		test "$(json_get "$JSON" "len(j['recorders'])")" = 4
fi

if truth_case recorder-inflight recorder inflight recorder; then
	check "recorder-inflight: in-flight slot counted and warned" \
		test "$(json_get "$JSON" "[r['in_flight'] for r in j['recorders'] if r['name'] == 'moves'][0]")/$(warned 'in flight')" = "1/True"
fi

# --- the ELFE layout ---------------------------------------------------------
if truth_case elfe elfe "" elfe; then
	check "elfe: callers symbolized" \
		test "$(json_get "$JSON" "all(e['function'] for r in j['recorders'] for e in r['events'])")" = True
fi

# --- corrupted indices: warnings, no crash -----------------------------------
if run_case recorder-garbage recorder garbage; then
	for w in "behind reader" "implausible ring size" "unreadable" "cycles back"; do
		check "recorder-garbage: warns '$w'" test "$(warned "$w")" = True
	done
	check "recorder-garbage: intact rings still recovered" \
		test "$(json_get "$JSON" "sorted(r['name'] for r in j['recorders'] if r['events'])")" = '["hanoi", "moves", "values"]'
	check "recorder-garbage: exit status 1 (partial results)" test "$ASY_RC" = 1
fi
