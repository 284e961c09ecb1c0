#!/usr/bin/env bash
# Run the libFuzzer harness in every mode, one after the other, under nice.
#   fuzz/run.sh [SECONDS_PER_MODE] [MODE...]
# Modes: raw (small seed cores as the input), and patch-BASE for each base core
# under build/fuzz/seeds (static, dyn, dyn2, recorder, elfe, folly_cpp(-small), folly_c(-small), bthread).  Crashers go
# to build/fuzz/artifacts/; corpora stay in build/fuzz/corpus-MODE/.
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/fuzz
SECS=${1:-300}; shift || true
MODES=("$@")
[ ${#MODES[@]} -gt 0 ] || MODES=(raw patch-recorder patch-elfe patch-folly_cpp-small patch-folly_c-small patch-dyn2 patch-static
	patch-bthread)
[ -x "$OUT/fuzz_core" ] || "$ROOT/fuzz/build.sh" >/dev/null
[ -f "$OUT/seeds/recorder.core" ] || "$ROOT/fuzz/make-seeds.sh" >/dev/null
mkdir -p "$OUT/artifacts"

# hot_ranges CORE: "VADDR:LEN,..." of the recorder rings, async roots,
# suspended leaves, bthreads' TaskMetas and saved contexts (below their
# first frame's stack pointer) the analysis found in CORE.
hot_ranges() {
	"$ROOT/asyncore" report "$1" --format json --threads all 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
r = ["%s:%d" % (x["address"], 176 + 64 * min(x["size"] or 0, 4096)) for x in j.get("recorders", []) if x.get("address")]
r += ["%s:64" % t["async_root"] for t in j.get("threads", []) if t.get("async_root")]
r += ["%s:64" % s["leaf"] for s in j.get("suspended", []) if s.get("leaf")]
r += ["%s:240" % t["address"] for t in j.get("tasks", [])]
r += ["0x%x:128" % (int(t["frames"][0]["registers"]["rsp"], 16) - 64) for t in j.get("tasks", [])
      if t["state"] == "suspended" and t["frames"] and "rsp" in t["frames"][0].get("registers", {})]
print(",".join(r))' || true
}

for mode in "${MODES[@]}"; do
	corpus=$OUT/corpus-$mode
	mkdir -p "$corpus"
	# Fork mode: a crash is saved and the run goes on.
	args=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1
	      -max_total_time="$SECS" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1
	      -artifact_prefix="$OUT/artifacts/$mode-")
	if [ "$mode" = raw ]; then
		for c in "$OUT"/seeds/*.core; do
			s=$corpus/seed-$(basename "$c" .core)
			[ -f "$s" ] || python3 "$ROOT/fuzz/shrink_core.py" "$c" "$s" 1024
		done
		env ASYNCORE_FUZZ_BASE= nice "$OUT/fuzz_core" "${args[@]}" -max_len=65536 "$corpus" \
			>"$OUT/log-$mode.txt" 2>&1 || true
	else
		base=$OUT/seeds/${mode#patch-}.core
		hot=$(hot_ranges "$base")
		env ASYNCORE_FUZZ_BASE="$base" ASYNCORE_FUZZ_HOT="$hot" nice "$OUT/fuzz_core" "${args[@]}" \
			-max_len=512 "$corpus" >"$OUT/log-$mode.txt" 2>&1 || true
	fi
	echo "$mode: $(grep -E '^#[0-9]+: cov' "$OUT/log-$mode.txt" | tail -1)"
	grep -E 'runtime error|^SUMMARY' "$OUT/log-$mode.txt" | sort | uniq -c | head -20 || true
done
