#!/usr/bin/env bash
# Run the libFuzzer harnesses, one mode after the other, under nice.
#   fuzz/run.sh [SECONDS_PER_MODE] [MODE...]
# Modes:
#   notes      fuzz_notes over PT_NOTE contents (seeds: the seed cores' notes)
#   segments   fuzz_segments over whole small cores (seeds: shrunk seed cores)
#   recfmt     fuzz_recfmt over recorder formats and arguments
#   core       fuzz_core over whole small cores (raw mode)
#   folly      fuzz_folly, patches over the folly_cpp-small seed core
#   recorder   fuzz_recorder, patches over the recorder seed core's rings
#   bthread    fuzz_bthread, patches over the bthread seed core's TaskMetas,
#              saved contexts, stacks and pool
#   runtime    fuzz_runtime, patches over the hostile_rt seed core's stacks
#              and segments, with its runtime descriptions
#   rtdesc     fuzz_rtdesc over runtime descriptions (seeds: every one in the
#              tree), each also used on the hostile_rt seed core
#   args       fuzz_args, patches over the native_args seed core's registers
#              and stacks, with arguments
#   gopclntab  fuzz_gopclntab over Go's runtime symbol table (pclntab) bytes
#   minidump   fuzz_minidump over whole small minidumps (fuzz/minidump_seed.py)
#   patch-BASE fuzz_core, patches over the seed core BASE (static, dyn, dyn2,
#              recorder, elfe, folly_cpp(-small), folly_c(-small), bthread)
# The corpus of each mode but patch-BASE is fixtures/fuzz/corpus/MODE:
# the run starts from it, and what it finds that adds coverage is merged
# back into it (review and commit).  Work corpora stay in
# build/fuzz/corpus-MODE; crashers go to build/fuzz/artifacts/ (minimise
# them and add them to fixtures/fuzz/, see fuzz/README.md).
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/fuzz
FIX=$ROOT/fixtures/fuzz/corpus
SECS=${1:-300}; shift || true
MODES=("$@")
[ ${#MODES[@]} -gt 0 ] || MODES=(notes segments recfmt core folly recorder bthread runtime rtdesc
	args gopclntab minidump patch-dyn2 patch-static patch-bthread)
[ -x "$OUT/fuzz_notes" ] || "$ROOT/fuzz/build.sh" >/dev/null
[ -f "$OUT/seeds/hostile_rt.core" ] || "$ROOT/fuzz/make-seeds.sh" >/dev/null
mkdir -p "$OUT/artifacts"

# seed_notes DIR: the PT_NOTE contents of every seed core, one file each.
seed_notes() {
	python3 - "$1" "$OUT"/seeds/*.core <<'PY'
import os, struct, sys
out = sys.argv[1]
for path in sys.argv[2:]:
    data = open(path, "rb").read()
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        t, _, off, _, _, size = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if t == 4:
            name = os.path.join(out, "seed-notes-" + os.path.basename(path))
            open(name, "wb").write(data[off:off + size])
PY
}

# seed_descriptions DIR: every runtime description in the tree.
seed_descriptions() {
	local f
	for f in "$ROOT"/share/asyncore/runtimes/*.json "$ROOT"/fixtures/*/*.json "$ROOT"/fixtures/*/*.json.in \
		"$ROOT"/bench/runtime/*.json "$OUT"/seeds/hostile_rt-runtimes/*.json; do
		[ -f "$f" ] && cp "$f" "$1/seed-$(basename "$(dirname "$f")")-$(basename "$f")"
	done
}

# seed_formats DIR: twelve arguments, then a recorder format.
seed_formats() {
	python3 - "$1" <<'PY'
import os, struct, sys
args = struct.pack("<12q", 1, -65, 0x7fffffffffffffff, 42, 3, 0x4010000000000000, 7, -1, 255, 0, 99, 1 << 40)
formats = [b"main.c:12:%d %u %x %lx %s", b"hanoi.c:40:>Move %d from %s to %s",
           b"x.c:1:%5.2f %e %g %a %*d %-8s|%+d %% %c %p", b"y.c:2:<%hhd %hd %lld %zu %jd %td",
           b"z.c:3:=%+s %.3s %10.4s %n %q %"]
for i, f in enumerate(formats):
    open(os.path.join(sys.argv[1], "seed-format-%d" % i), "wb").write(args + f)
PY
}

for mode in "${MODES[@]}"; do
	corpus=$OUT/corpus-$mode
	fixture=""
	mkdir -p "$corpus"
	env=(ASYNCORE_FUZZ_BASE= ASYNCORE_FUZZ_HOT=)
	case $mode in
	notes)    bin=fuzz_notes; len=8192; fixture=$FIX/notes; seed_notes "$corpus" ;;
	segments) bin=fuzz_segments; len=32768; fixture=$FIX/segments ;;
	recfmt)   bin=fuzz_recfmt; len=1024; fixture=$FIX/recfmt; seed_formats "$corpus" ;;
	core)     bin=fuzz_core; len=32768; fixture=$FIX/core ;;
	folly)    bin=fuzz_folly; len=512; fixture=$FIX/folly; base=$OUT/seeds/folly_cpp-small.core ;;
	recorder) bin=fuzz_recorder; len=512; fixture=$FIX/recorder; base=$OUT/seeds/recorder.core ;;
	bthread)  bin=fuzz_bthread; len=512; fixture=$FIX/bthread; base=$OUT/seeds/bthread.core ;;
	runtime)  bin=fuzz_runtime; len=512; fixture=$FIX/runtime; base=$OUT/seeds/hostile_rt.core ;;
	rtdesc)   bin=fuzz_rtdesc; len=4096; fixture=$FIX/rtdesc; base=$OUT/seeds/hostile_rt.core
		  seed_descriptions "$corpus" ;;
	args)     bin=fuzz_args; len=512; fixture=$FIX/args; base=$OUT/seeds/native_args.core ;;
	gopclntab) bin=fuzz_gopclntab; len=65536; fixture=$FIX/gopclntab ;;
	minidump) bin=fuzz_minidump; len=32768; fixture=$FIX/minidump ;;
	patch-*)  bin=fuzz_core; len=512; base=$OUT/seeds/${mode#patch-}.core ;;
	*)        echo "unknown mode $mode" >&2; exit 2 ;;
	esac
	if [ "$mode" = segments ] || [ "$mode" = core ]; then
		for c in "$OUT"/seeds/*.core; do
			s=$corpus/seed-$(basename "$c" .core)
			[ -f "$s" ] || python3 "$ROOT/fuzz/shrink_core.py" "$c" "$s" 1024 stacks-only
		done
	fi
	case $mode in
	folly|recorder|bthread|runtime|args|patch-*)
		env=(ASYNCORE_FUZZ_BASE="$base" ASYNCORE_FUZZ_HOT="$("$ROOT/fuzz/hot-ranges.sh" "$base")") ;;
	rtdesc)
		env=(ASYNCORE_FUZZ_BASE="$base" ASYNCORE_FUZZ_HOT=) ;;
	esac
	runtimes=$(ls "$OUT"/seeds/hostile_rt-runtimes/*.json 2>/dev/null | tr '\n' ':')
	[ "$mode" = runtime ] && env+=(ASYNCORE_FUZZ_RUNTIMES="$runtimes")
	dict=()
	[ -f "$ROOT/fuzz/$mode.dict" ] && dict=(-dict="$ROOT/fuzz/$mode.dict")
	dirs=("$corpus")
	[ -n "$fixture" ] && mkdir -p "$fixture" && dirs+=("$fixture")
	# Fork mode: a crash is saved and the run goes on.
	env "${env[@]}" nice "$OUT/$bin" -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
		-max_total_time="$SECS" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
		-max_len=$len -artifact_prefix="$OUT/artifacts/$mode-" "${dict[@]}" "${dirs[@]}" \
		>"$OUT/log-$mode.txt" 2>&1 || true
	if [ -n "$fixture" ]; then
		before=$(ls "$fixture" | wc -l)
		env "${env[@]}" nice "$OUT/$bin" -merge=1 -max_len=$len "$fixture" "$corpus" \
			>>"$OUT/log-$mode.txt" 2>&1 || true
		echo "$mode: fixtures/fuzz/corpus/$mode: $before -> $(ls "$fixture" | wc -l) inputs"
	fi
	echo "$mode: $(grep -E '^#[0-9]+: cov' "$OUT/log-$mode.txt" | tail -1)"
	grep -E 'runtime error|^SUMMARY' "$OUT/log-$mode.txt" | sort | uniq -c | head -20 || true
done
