#!/usr/bin/env bash
# Replay every fuzz crasher in fixtures/fuzz/ through asyncore (JSON and text
# reports): the exit status must be 0, 1 or 2, the process must not die by a
# signal or hang, and no sanitizer may speak.  The same runs go through the
# AddressSanitizer and UBSan builds (build/asan/asyncore, build/ubsan/asyncore:
# `make asan`, `make ubsan`) and the libFuzzer harness built with both
# (build/fuzz/fuzz_core: fuzz/build.sh) when they exist.
#
# Then every harness replays its corpus, fixtures/fuzz/corpus/MODE, and the
# crashers, built with the suite's own compiler and flags (fuzz/replay.c;
# under `make asan` / `make ubsan` with the sanitizer): notes, segments,
# recfmt, core (raw) and gopclntab (a Go symbol table) alone; folly,
# recorder, bthread and args over a fresh core of the folly_cpp, recorder,
# bthread and native_args fixtures; runtime
# and rtdesc over a fresh core of hostile_rt, with its descriptions.
#
# fixtures/fuzz/NAME.core   a crasher core, used as is
# fixtures/fuzz/NAME.patch  a crasher that needs a fixture's core: a line
#                           "base CASE [VARIANT]", then "OFFSET HEXBYTES" lines
#                           written over the freshly made core (file offsets);
#                           SKIP when the base core cannot be made
# fixtures/fuzz/NAME.txt    one line: what the crasher broke
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

FUZZ_DIR=$ROOT/fixtures/fuzz
HARNESS=$ROOT/build/fuzz/fuzz_core
have_asyncore || { fail "fuzz: no asyncore at $ASYNCORE (run make)"; exit 0; }

sanitizer_said() { grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:|UndefinedBehaviorSanitizer' "$1"; }

# replay NAME BIN ARGS...: one run of BIN (at most REPLAY_TIMEOUT seconds,
# default 120); PASS/FAIL line for NAME.
replay() {
	local name=$1 bin=$2 limit=${REPLAY_TIMEOUT:-120}; shift 2
	local out=$TMPD/run
	ASYNCORE_CACHE_DIR= timeout "$limit" "$bin" "$@" >"$out.stdout" 2>"$out.stderr"
	local rc=$?
	if [ $rc -eq 124 ]; then
		fail "$name: no result after $limit s"
	elif [ $rc -gt 128 ]; then
		fail "$name: killed by signal $((rc - 128)): $(grep -m1 -E 'ERROR|runtime error' "$out.stderr")"
	elif [ $rc -gt 2 ]; then
		fail "$name: exit $rc: $(grep -m1 -E 'ERROR|runtime error|.' "$out.stderr")"
	elif sanitizer_said "$out.stderr"; then
		fail "$name: sanitizer: $(grep -m1 -E 'Sanitizer|runtime error' "$out.stderr")"
	else
		pass "$name$(sed -n 's/^replayed \([0-9]*\) inputs$/: \1 inputs replayed/p' "$out.stdout")"
	fi
}

# replay_all NAME CORE: the reports of every available build, and the harness.
replay_all() {
	local name=$1 core=$2
	replay "fuzz/$name json" "$ASYNCORE" report "$core" --format json --threads all
	replay "fuzz/$name text" "$ASYNCORE" "$core"
	local san
	for san in asan ubsan; do
		[ -x "$ROOT/build/$san/asyncore" ] || continue
		replay "fuzz/$name $san json" "$ROOT/build/$san/asyncore" report "$core" --format json --threads all
		replay "fuzz/$name $san text" "$ROOT/build/$san/asyncore" "$core"
	done
	if [ -x "$HARNESS" ]; then
		# libFuzzer's own exit status for a clean run is 0.
		replay "fuzz/$name harness" env ASYNCORE_FUZZ_BASE= "$HARNESS" "$core"
	fi
}

# apply_patch PATCH CORE OUT: OUT is CORE with PATCH's bytes written over it.
apply_patch() {
	python3 - "$@" <<'PY'
import sys
patch, core, out = sys.argv[1:4]
data = bytearray(open(core, 'rb').read())
for line in open(patch):
    f = line.split()
    if not f or f[0].startswith('#') or f[0] == 'base':
        continue
    off, raw = int(f[0], 0), bytes.fromhex(f[1])
    if off + len(raw) > len(data):
        sys.exit('patch at 0x%x lies past the end of the base core' % off)
    data[off:off + len(raw)] = raw
open(out, 'wb').write(data)
PY
}

n=0
for f in "$FUZZ_DIR"/*.core "$FUZZ_DIR"/*.patch; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	name=$(basename "$f"); name=${name%.*}
	[ -s "$FUZZ_DIR/$name.txt" ] || fail "fuzz/$name: no note $name.txt saying what it broke"
	if [ "${f##*.}" = core ]; then
		replay_all "$name" "$f"
		continue
	fi
	read -r _ case variant < <(grep -m1 '^base ' "$f")
	rc=0; fix_core "$case" "$variant" || rc=$?
	if [ $rc -ne 0 ]; then
		[ $rc -eq 77 ] && skip "fuzz/$name: no base core $case${variant:+/$variant}: $(head -1 "$TMPD/core.err")"
		continue
	fi
	if ! err=$(apply_patch "$f" "$FIX_CORE" "$TMPD/$name.core" 2>&1); then
		skip "fuzz/$name: $err"
		continue
	fi
	replay_all "$name" "$TMPD/$name.core"
done
[ $n -gt 0 ] || skip "fuzz: no crashers in fixtures/fuzz"

# --- the corpora, through the harnesses built like the suite --------------
REPLAY=$(dirname "${UNIT_DIR:-$ROOT/build/unit}")/fuzz-replay
CORPUS=$FUZZ_DIR/corpus

# replay_corpus NAME HARNESS INPUTS [VAR=VALUE...]: the harness over INPUTS
# (a directory or files) ends cleanly with no sanitizer report.
replay_corpus() {
	local name=$1 bin=$REPLAY/$2 inputs=$3; shift 3
	if [ ! -x "$bin" ]; then
		fail "fuzz corpus $name: no $bin (make fuzz-tools)"
		return
	fi
	REPLAY_TIMEOUT=900 replay "fuzz corpus $name" env "$@" "$bin" $inputs
}

for mode in notes segments recfmt core gopclntab minidump; do
	if [ -d "$CORPUS/$mode" ]; then
		replay_corpus "$mode" "fuzz_$mode" "$CORPUS/$mode"
	else
		fail "fuzz corpus $mode: no fixtures/fuzz/corpus/$mode"
	fi
done
crashers=$(ls "$FUZZ_DIR"/*.core 2>/dev/null)
[ -n "$crashers" ] && replay_corpus "crashers (raw cores)" fuzz_core "$crashers"

# A patch-mode corpus over a fresh fixture core (its addresses differ from
# the one the corpus was found on; the patches land on the same structures),
# cut down to the bytes near each thread when SHRINK.
#   replay_patches MODE CASE SHRINK|whole [VAR=VALUE...]
replay_patches() {
	local mode=$1 case=$2 shrink=$3 rc=0; shift 3
	[ -d "$CORPUS/$mode" ] || { fail "fuzz corpus $mode: no fixtures/fuzz/corpus/$mode"; return; }
	fix_core "$case" || rc=$?
	if [ $rc -ne 0 ]; then
		[ $rc -eq 77 ] && skip "fuzz corpus $mode: no $case core: $(head -1 "$TMPD/core.err")"
		return
	fi
	local base=$FIX_CORE
	if [ "$shrink" = shrink ]; then
		base=$TMPD/$mode-base.core
		python3 "$ROOT/fuzz/shrink_core.py" "$FIX_CORE" "$base" 16384 || return
	fi
	replay_corpus "$mode" "fuzz_$mode" "$CORPUS/$mode" ASYNCORE_FUZZ_BASE="$base" \
		ASYNCORE_FUZZ_HOT="$("$ROOT/fuzz/hot-ranges.sh" "$base" "$ASYNCORE")" "$@"
}
replay_patches folly folly_cpp shrink
# The rings, the bthreads' pool and the arguments' strings are in segments
# the shrinking drops: those cores whole.
replay_patches recorder recorder whole
replay_patches bthread bthread whole
replay_patches args native_args whole
if rtdir=$(fixture_build hostile_rt 2>/dev/null); then
	replay_patches runtime hostile_rt whole ASYNCORE_FUZZ_RUNTIMES="$(ls "$rtdir"/*.json | tr '\n' :)"
else
	fail "fuzz corpus runtime: the hostile_rt fixture does not build"
fi
# Descriptions: each loaded, then used on the hostile_rt core.
replay_patches rtdesc hostile_rt whole
exit 0
