#!/usr/bin/env bash
# Build the base cores the fuzzers start from, into build/fuzz/ (not kept in
# git): small cores of fuzz/seed.c (static, dynamic, two threads) and cores of
# the folly_c, recorder, elfe, folly_cpp, bthread, hostile_rt (with its runtime
# descriptions in hostile_rt-runtimes/) and native_args fixtures.  Prints each
# core's path.
#   fuzz/make-seeds.sh
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/fuzz/seeds
source "$ROOT/tests/lib.sh"
mkdir -p "$OUT"

# crash NAME PROG [ARGS...]: run PROG with core dumps on; keep the core as NAME.core.
crash() {
	local name=$1; shift
	local run=$OUT/run-$name
	rm -rf "$run"; mkdir -p "$run"
	# Only anonymous private memory and ELF headers: small cores.
	(cd "$run" && ulimit -c unlimited && echo 0x11 >/proc/self/coredump_filter &&
		exec "$@") >/dev/null 2>&1 || true
	local c; c=$(ls "$run"/core* 2>/dev/null | head -1)
	if [ -z "$c" ]; then echo "no core for $name" >&2; return 1; fi
	mv "$c" "$OUT/$name.core"
	rm -rf "$run"
	echo "$OUT/$name.core"
}

gcc -O1 -g -fno-omit-frame-pointer -static -pthread -o "$OUT/seed-static" "$ROOT/fuzz/seed.c"
gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$OUT/seed-dyn" "$ROOT/fuzz/seed.c"
crash static "$OUT/seed-static"
crash dyn "$OUT/seed-dyn"
crash dyn2 "$OUT/seed-dyn" two
dir=$(fixture_build folly_c) && crash folly_c "$dir/prog"
dir=$(fixture_build recorder) && crash recorder "$dir/prog"
dir=$(fixture_build elfe) && crash elfe "$dir/prog"
dir=$(fixture_build folly_cpp) && crash folly_cpp "$dir/prog"
dir=$(fixture_build bthread) && crash bthread "$dir/prog"
dir=$(fixture_build native_args) && crash native_args "$dir/prog"
if dir=$(fixture_build hostile_rt) && crash hostile_rt "$dir/prog"; then
	rm -rf "$OUT/hostile_rt-runtimes" && mkdir -p "$OUT/hostile_rt-runtimes" &&
		cp "$dir"/*.json "$OUT/hostile_rt-runtimes/"
fi
# The folly cores hold 8 MiB thread stacks: smaller bases keep the fuzzers fast.
for c in folly_c folly_cpp; do
	[ -f "$OUT/$c.core" ] && python3 "$ROOT/fuzz/shrink_core.py" "$OUT/$c.core" "$OUT/$c-small.core" 16384 &&
		echo "$OUT/$c-small.core"
done
