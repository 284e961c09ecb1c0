#!/usr/bin/env bash
# Build the C++ benchmark program into OUT (default build/bench/cxx): five
# generated units in the executable, two and the Boost code in libcxxbench.so.
# Skipped when OUT already holds a build of the same sources.
# Usage: bench/cxx/build.sh [OUT]
set -eu
SRC=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$SRC/../.." && pwd)
OUT=${1:-$ROOT/build/bench/cxx}
NTYPES=45
stamp=$(cat "$SRC"/*.cpp "$SRC"/*.h "$SRC"/*.py "$0" "$ROOT/fixtures/folly_cpp/async_runtime.h" | sha256sum | cut -c1-16)
[ -x "$OUT/prog" ] && [ "$(cat "$OUT/.stamp" 2>/dev/null)" = "$stamp" ] && exit 0
mkdir -p "$OUT"
rm -f "$OUT/.stamp"
# Generated units at -O0 (every instantiation is out of line, with its DWARF);
# the program's and the library's own code at -O2.
# A unit whose generated text did not change is not compiled again.
pids=()
for k in 0 1 2 3 4 5 6; do
	python3 "$SRC/gen.py" "$k" "$NTYPES" >"$OUT/bulk_$k.new"
	if cmp -s "$OUT/bulk_$k.new" "$OUT/bulk_$k.cpp" && [ "$OUT/bulk_$k.o" -nt "$OUT/bulk_$k.cpp" ]; then
		rm "$OUT/bulk_$k.new"; continue
	fi
	mv "$OUT/bulk_$k.new" "$OUT/bulk_$k.cpp"
	rm -f "$OUT/bulk_$k.o"
	g++ -std=c++20 -O0 -g -fPIC -c -o "$OUT/bulk_$k.o.tmp" "$OUT/bulk_$k.cpp" &&
		mv "$OUT/bulk_$k.o.tmp" "$OUT/bulk_$k.o" &
	pids+=($!)
	if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p"; done
g++ -std=c++20 -O2 -g -fPIC -c -o "$OUT/boostlib.o" "$SRC/boostlib.cpp" 2>/dev/null
g++ -shared -o "$OUT/libcxxbench.so" "$OUT/boostlib.o" "$OUT/bulk_5.o" "$OUT/bulk_6.o"
g++ -std=c++20 -O2 -g -fno-omit-frame-pointer -pthread -I"$ROOT/fixtures/folly_cpp" -I"$SRC" \
	-o "$OUT/prog" "$SRC/prog.cpp" "$OUT"/bulk_[0-4].o -L"$OUT" -lcxxbench -Wl,-rpath,'$ORIGIN'
echo "$stamp" >"$OUT/.stamp"
