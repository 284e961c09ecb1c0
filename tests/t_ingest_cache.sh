#!/usr/bin/env bash
# Each worker parses a build-id's debug info once, however many cores it
# gets: six cores of one program on one worker open and parse what one core
# does, and on two workers at most twice that.
source "$(dirname "$0")/lib.sh"

[ -x "$ASYNCORE" ] || { fail "ingest cache: no asyncore at $ASYNCORE (run make)"; exit 0; }
dir=$(fixture_build store_crash) || { fail "ingest cache: fixtures/store_crash did not build"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cores=()
for mode in segv abort fpe deep segv abort; do
	c=$(fixture_core "$dir" "$mode" 0 2>/dev/null) || { skip "ingest cache: no core could be made"; exit 0; }
	cores+=("$c")
done
# counts FILE: "OPENED PARSED" from the summary's debug-info line.
counts() { sed -n 's/^debug info: \([0-9]*\) files opened, \([0-9]*\) with DWARF parsed.*/\1 \2/p' "$1"; }
"$ASYNCORE" ingest --db "$work/one.db" --jobs 1 "${cores[0]}" >"$work/one" 2>&1
"$ASYNCORE" ingest --db "$work/six1.db" --jobs 1 "${cores[@]}" >"$work/six1" 2>&1
"$ASYNCORE" ingest --db "$work/six2.db" --jobs 2 "${cores[@]}" >"$work/six2" 2>&1
read -r one_files one_parsed < <(counts "$work/one")
read -r files1 parsed1 < <(counts "$work/six1")
read -r files2 parsed2 < <(counts "$work/six2")
check "ingest cache: the batch reports its debug-info use ($(grep '^debug info' "$work/six2"))" \
	test -n "$files2"
check "ingest cache: six cores on one worker parse what one core parses ($files1/$parsed1)" \
	test "$files1/$parsed1" = "$one_files/$one_parsed"
check "ingest cache: six cores on two workers parse at most twice that ($files2/$parsed2)" \
	test "${files2:-99}" -le $((2 * one_files)) -a "${parsed2:-99}" -le $((2 * one_parsed))
check "ingest cache: the executable's DWARF is among what was parsed ($one_parsed)" \
	test "${one_parsed:-0}" -gt 0
for c in "${cores[@]}"; do rm -rf "$(dirname "$c")"; done
