#!/usr/bin/env bash
# Corruption loops without libFuzzer: damaged copies of the base cores
# (fuzz/corrupt.py) through a sanitizer build of asyncore; every run must exit
# 0, 1 or 2 with no sanitizer report.  Failures are copied to
# build/fuzz/corrupt-fail/ with the run's stderr.
#   [CORRUPT_MODES="truncate ..."] fuzz/corrupt.sh [ROUNDS] [BASE...]
# (BASE: names under build/fuzz/seeds; ROUNDS: copies per mode, or cuts)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/fuzz
BIN=${ASYNCORE_SAN:-$OUT/asyncore-san}
[ -x "$BIN" ] || BIN=$ROOT/build/asan/asyncore
ROUNDS=${1:-20}; shift
BASES=("$@")
[ ${#BASES[@]} -gt 0 ] || BASES=(static dyn dyn2 recorder elfe folly_cpp folly_c)
WORK=$OUT/corrupt-work
mkdir -p "$OUT/corrupt-fail"
runs=0 bad=0
for base in "${BASES[@]}"; do
	core=$OUT/seeds/$base.core
	[ -f "$core" ] || continue
	for mode in ${CORRUPT_MODES:-flip-notes flip-head note-sizes flip-stacks truncate}; do
		rm -rf "$WORK"; mkdir -p "$WORK"
		python3 "$ROOT/fuzz/corrupt.py" "$core" "$WORK" "$mode" "$RANDOM" "$ROUNDS"
		for f in "$WORK"/*; do
			runs=$((runs + 1))
			ASYNCORE_CACHE_DIR= timeout 120 nice "$BIN" report "$f" --format json --threads all \
				>/dev/null 2>"$f.err"
			rc=$?
			if [ $rc -gt 2 ] || grep -Eq 'Sanitizer|runtime error:' "$f.err"; then
				bad=$((bad + 1))
				name=$base-$(basename "$f")
				cp "$f" "$OUT/corrupt-fail/$name"
				cp "$f.err" "$OUT/corrupt-fail/$name.err"
				echo "$name: exit $rc: $(grep -m1 -E 'ERROR|runtime error' "$f.err")"
			fi
		done
	done
done
rm -rf "$WORK"
echo "corrupt.sh: $runs runs, $bad failures"
