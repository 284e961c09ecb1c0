#!/usr/bin/env bash
# Hostile inputs that must end quickly with a clear answer: a compression
# bomb, a compressed file too short to be a core, and a core whose mapped
# executable has been replaced by a fifo (opening it would block forever).
source "$(dirname "$0")/lib.sh"

[ -x "$ASYNCORE" ] || { fail "hostile: no asyncore at $ASYNCORE (run make)"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if command -v zstd >/dev/null; then
	head -c 300M /dev/zero | tr '\0' '\252' | zstd -1 -q -c >"$work/bomb.zst"
	timeout 60 "$ASYNCORE" "$work/bomb.zst" >/dev/null 2>"$work/err"; rc=$?
	check "hostile: a compression bomb is refused (exit 2, one line)" \
		test "$rc/$(wc -l <"$work/err")/$(grep -c 'size limit' "$work/err")" = "2/1/1"
	printf 'abc' | zstd -q -c >"$work/short.zst"
	timeout 20 "$ASYNCORE" "$work/short.zst" >/dev/null 2>"$work/err"; rc=$?
	check "hostile: a compressed file too short to be a core (exit 2)" \
		test "$rc/$(wc -l <"$work/err")" = "2/1"
else
	skip "hostile: zstd is not installed"
fi

if command -v lz4 >/dev/null; then
	head -c 4M /dev/urandom | lz4 -q -c | head -c 100000 >"$work/cut.lz4"
	timeout 20 "$ASYNCORE" "$work/cut.lz4" >/dev/null 2>"$work/err"; rc=$?
	check "hostile: a truncated lz4 stream is refused (exit 2, one line)" \
		test "$rc/$(wc -l <"$work/err")/$(grep -c 'truncated lz4' "$work/err")" = "2/1/1"
else
	skip "hostile: lz4 is not installed"
fi

mkdir -p "$work/fifo"
printf 'int main(void) { *(volatile int *)0 = 1; return 0; }\n' >"$work/fifo/p.c"
gcc -g -o "$work/fifo/prog" "$work/fifo/p.c" || { fail "hostile: cannot build the fifo case"; exit 0; }
dir=$work/fifo
core=$(fixture_core "$dir" 2>/dev/null) ||
	{ skip "hostile: no core for the fifo case"; exit 0; }
mv "$work/fifo/prog" "$work/fifo/prog.real" && mkfifo "$work/fifo/prog"
timeout 30 "$ASYNCORE" "$core" >"$work/out" 2>&1; rc=$?
check "hostile: a fifo in place of the executable does not block (exit $rc)" test "$rc" -le 2
check "hostile: the fifo is named in a warning" grep -q 'is not a regular file: not opened' "$work/out"
timeout 30 "$ASYNCORE" "$core" "$work/fifo/prog.real" >"$work/out" 2>&1
check "hostile: with the real binary given, the crash is symbolized" grep -Eq 'in main (\([^)]*\) )?\(\+0x' "$work/out"
