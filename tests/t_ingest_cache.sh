#!/usr/bin/env bash
# A batch parses each build-id's debug info once, however many cores and
# workers: ingesting six cores of one program with --jobs 2 opens and parses
# no more debug files than ingesting one of them.
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
"$ASYNCORE" ingest --db "$work/one.db" "${cores[0]}" >"$work/one" 2>&1
"$ASYNCORE" ingest --db "$work/six.db" --jobs 2 "${cores[@]}" >"$work/six" 2>&1
one=$(grep '^debug info:' "$work/one")
six=$(grep '^debug info:' "$work/six")
check "ingest cache: the batch reports its debug-info use ($six)" test -n "$six"
check "ingest cache: six cores on two workers parse what one core parses" test "$one" = "$six"
check "ingest cache: the executable's DWARF is among what was parsed" \
	sh -c "echo '$six' | grep -qE 'with DWARF parsed' && ! echo '$six' | grep -q ' 0 with DWARF'"
for c in "${cores[@]}"; do rm -rf "$(dirname "$c")"; done
