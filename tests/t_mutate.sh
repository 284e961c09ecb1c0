#!/usr/bin/env bash
# The mutation test over whole cores (fuzz/mutate.c): MUTANTS (default
# 1,000; `make soak` runs 100,000) damaged copies of twelve fixture cores
# (one of them aarch64's, one Node.js's with its JavaScript frames),
# truncated at every structure boundary, with flipped notes and headers,
# edge-value note sizes, pointer-like garbage in memory (stacks, recorder
# rings, async roots, bthreads' TaskMetas and saved contexts, a described
# runtime's stacks, a crash handler's signal frame) and zeroed ranges, through the analysis (with arguments,
# bthreads and runtime descriptions) and the text, JSON and HTML writers:
# each must be analysed with a complete JSON document or be
# unusable with a one-line reason; no crash, no sanitizer report, no leak,
# no mutant slower than the time limit.  Failing mutants are saved under
# build/mutants/ for fixtures/fuzz/.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

MUTANTS=${MUTANTS:-1000}
MUTATE=$(dirname "${UNIT_DIR:-$ROOT/build/unit}")/fuzz-replay/mutate
have_asyncore || { fail "mutate: no asyncore at $ASYNCORE (run make)"; exit 0; }
[ -x "$MUTATE" ] || { fail "mutate: no driver at $MUTATE (make fuzz-tools)"; exit 0; }

# base NAME CASE [ARGS...]: the fixture's core, cut down to the bytes near
# each thread (fuzz/shrink_core.py) when it is big (unless WHOLE is set);
# appends "--hot RANGES [--runtimes FILES] NAME=CORE" to BASES (FILES: the
# fixture's runtime descriptions, when RUNTIMES is set).
BASES=()
base() {
	local name=$1 case=$2 rc=0; shift 2
	fix_core "$case" "" "$@" || rc=$?
	if [ $rc -ne 0 ]; then
		[ $rc -eq 77 ] && skip "mutate: no $case core: $(head -1 "$TMPD/core.err")"
		return
	fi
	local core=$TMPD/$name.core
	if [ -z "${WHOLE:-}" ] && [ "$(stat -c %s "$FIX_CORE")" -gt 4000000 ]; then
		python3 "$ROOT/fuzz/shrink_core.py" "$FIX_CORE" "$core" 16384 || return
	else
		cp "$FIX_CORE" "$core"
	fi
	local hot; hot=$("$ROOT/fuzz/hot-ranges.sh" "$core" "$ASYNCORE")
	[ -n "$hot" ] && BASES+=(--hot "$hot")
	[ -n "${RUNTIMES:-}" ] && BASES+=(--runtimes "$(ls "$FIX_DIR"/*.json | tr '\n' :)")
	BASES+=("$name=$core")
}
base segv store_crash segv 1
base cxx store_cxx a 1
base threads threads4
base folly_c folly_c
base args native_args
base exception cause_cxx out_of_range   # an uncaught exception: the cause reads its object
base handler handler_c nodefer null    # a crash handler's signal frame: the caught fault
WHOLE=1 base bthread bthread           # its pool and TaskMetas are on the heap
WHOLE=1 RUNTIMES=1 base runtime hostile_rt
WHOLE=1 base node node_crash crash.js   # V8's frames and objects are in its heap
# The rings live in a segment the shrinking drops: the recorder core whole.
if fix_core recorder; then
	BASES+=(--hot "$("$ROOT/fuzz/hot-ranges.sh" "$FIX_CORE" "$ASYNCORE")" "recorder=$FIX_CORE")
fi
# An aarch64 kernel core (fixtures/aarch64), its executable not found: the
# frame-record fallback walks what the damage leaves.
if bzip2 -dc "$ROOT/fixtures/aarch64/backtrace.aarch64.fp.core.bz2" >"$TMPD/aarch64.core" 2>/dev/null; then
	BASES+=("aarch64=$TMPD/aarch64.core")
fi
[ ${#BASES[@]} -gt 0 ] || { skip "mutate: no fixture core could be made"; exit 0; }

mkdir -p "$ROOT/build/mutants"
limit=20
ldd "$MUTATE" 2>/dev/null | grep -qE 'libasan|libubsan' && limit=120
"$MUTATE" --seed "${MUTATE_SEED:-1}" --count "$MUTANTS" --time-limit $limit \
	--save "$ROOT/build/mutants" "${BASES[@]}" >"$TMPD/mutate.out" 2>"$TMPD/mutate.err"
rc=$?
summary=$(grep -m1 '^mutate: [0-9]* mutants' "$TMPD/mutate.out")
if [ $rc -eq 0 ] && [ -n "$summary" ]; then
	pass "${summary#mutate: }"
else
	fail "mutate: exit $rc: ${summary:-no summary}"
	grep -E '^mutate: (FAIL|saved|rerun)' "$TMPD/mutate.err" | head -20
	grep -E 'ERROR|runtime error|SUMMARY' "$TMPD/mutate.err" | head -5
fi
n=$(sed -n 's/^mutate: \([0-9]*\) mutants.*/\1/p' "$TMPD/mutate.out")
check "mutate: all $MUTANTS mutants ran (${n:-0})" test "${n:-0}" = "$MUTANTS"
sed -n 's/^mutate:   /    /p' "$TMPD/mutate.out"
