#!/usr/bin/env bash
# Build the libFuzzer harnesses (fuzz/fuzz_*.c) into build/fuzz/ (clang,
# with AddressSanitizer and UndefinedBehaviorSanitizer), linking the module
# sources.
#   fuzz/build.sh
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/fuzz
PKGS=$(sed -n 's/^PKGS *:= *//p' "$ROOT/Makefile")   # the program's libraries, as the Makefile lists them
mkdir -p "$OUT/obj"
CC=${FUZZ_CC:-clang}
SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
CFLAGS="-std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Wshadow -Wvla $(pkg-config --cflags $PKGS)"
objs=()
for src in "$ROOT"/{base,corefile,dwarf,analyzer,reports}/*.c; do
	rel=${src#$ROOT/}
	obj=$OUT/obj/${rel//\//_}.o
	if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find "$ROOT"/{base,corefile,dwarf,analyzer,reports} -name '*.h' -newer "$obj" | head -1)" ]; then
		# At most FUZZ_JOBS compilers at once (default 2: a shared machine).
		while [ "$(jobs -rp | wc -l)" -ge "${FUZZ_JOBS:-2}" ]; do wait -n; done
		$CC $CFLAGS $SAN -c -o "$obj" "$src" &
	fi
	objs+=("$obj")
done
wait
$CC $CFLAGS $SAN -c -o "$OUT/obj/fuzz_patch.o" "$ROOT/fuzz/patch.c"
for h in fuzz_core fuzz_notes fuzz_segments fuzz_folly fuzz_recorder fuzz_recfmt fuzz_bthread \
	fuzz_runtime fuzz_rtdesc fuzz_args fuzz_gopclntab fuzz_minidump; do
	$CC $CFLAGS $SAN -c -o "$OUT/obj/$h.o" "$ROOT/fuzz/$h.c"
	$CC -fsanitize=fuzzer,address,undefined -o "$OUT/$h" "$OUT/obj/$h.o" "$OUT/obj/fuzz_patch.o" \
		"${objs[@]}" $(pkg-config --libs $PKGS) -liberty -lpthread
	echo "$OUT/$h"
done
