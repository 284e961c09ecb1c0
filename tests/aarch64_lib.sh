# What the aarch64 test scripts share: the cross toolchain, qemu-user and
# gdb-multiarch (installed when missing), qemu's cores of a fixture,
# gdb-multiarch's frames, and the words an ELF file holds.  Sourced after
# lib.sh.
SYSROOT=/usr/aarch64-linux-gnu

# aarch64_deps NAME: install what the scripts need; when that fails, SKIP
# NAME with the reason and end the script.
aarch64_deps() {
	local ok=1
	test_dep aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu "$TMPD/apt1.log" || ok=0
	test_dep aarch64-linux-gnu-g++ g++-aarch64-linux-gnu "$TMPD/apt2.log" || ok=0
	test_dep qemu-aarch64 qemu-user "$TMPD/apt3.log" || ok=0
	test_dep gdb-multiarch gdb-multiarch "$TMPD/apt4.log" || ok=0
	if [ ! -e "$SYSROOT/lib/libc.so.6" ]; then
		apt_install "$TMPD/apt5.log" libc6-dev-arm64-cross
		[ -e "$SYSROOT/lib/libc.so.6" ] || ok=0
	fi
	if [ $ok -eq 0 ]; then
		skip "$1: the cross toolchain, qemu-user or gdb-multiarch could not be installed: $(cat "$TMPD"/apt*.log 2>/dev/null | tail -2 | tr '\n' ' ')"
		exit 0
	fi
}

# qemu_core DIR [ARGS...]: run DIR/prog ARGS under qemu-aarch64 (and its
# options QEMU_OPTS, an array) with core dumps on, in a directory of its
# own; prints the aarch64 core qemu wrote (qemu_prog_*.core), or returns 77.
# qemu then dies of the signal itself: the host's core of qemu is removed.
qemu_core() {
	local dir=$1 run=$1/run-$$-$RANDOM c
	shift
	mkdir -p "$run"
	(cd "$run" && ulimit -c unlimited &&
	 exec timeout 120 qemu-aarch64 ${QEMU_OPTS[@]+"${QEMU_OPTS[@]}"} -L "$SYSROOT" "$dir/prog" "$@") \
		>"$run/stdout" 2>&1
	rm -f "$run"/core "$run"/core.[0-9]*
	c=$(ls "$run"/qemu_prog_*.core 2>/dev/null | head -1)
	[ -n "$c" ] || { echo "qemu-aarch64 wrote no core: $(tail -2 "$run/stdout")" >&2; rm -rf "$run"; return 77; }
	echo "$c"
}

# gdb_multiarch_frames PROG CORE OUT: tests/gdb_frames.py under gdb-multiarch.
gdb_multiarch_frames() {
	LC_ALL=C timeout 300 gdb-multiarch -batch -nx -iex 'set auto-load python-scripts off' \
		-iex "set sysroot $SYSROOT" -ex "set solib-search-path $(dirname "$1")" -ex 'set width 0' \
		-ex 'set print frame-arguments scalars' -ex 'set backtrace past-main on' \
		-x "$ROOT/tests/gdb_frames.py" "$1" "$2" 2>/dev/null |
		sed -n '/^GDB_FRAMES_BEGIN$/,/^GDB_FRAMES_END$/p' | sed '1d;$d' >"$3"
	[ -s "$3" ]
}

# elf_word FILE ADDRESS SIZE: the SIZE-byte (4 or 8) little-endian word at
# ADDRESS (hex) of the ELF64 FILE (a program or a core), read from the
# PT_LOAD whose file bytes hold it, in hex; nothing when none does.
elf_word() {
	python3 - "$@" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
addr, size = int(sys.argv[2], 16), int(sys.argv[3])
phoff, = struct.unpack_from('<Q', data, 32)
phentsize, phnum = struct.unpack_from('<HH', data, 54)
for i in range(phnum):
    p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from('<IIQQQQ', data, phoff + i * phentsize)
    if p_type == 1 and p_vaddr <= addr and addr + size <= p_vaddr + p_filesz:
        print('0x%x' % struct.unpack_from('<Q' if size == 8 else '<I', data, p_offset + addr - p_vaddr)[0])
        break
PY
}
