#!/usr/bin/env python3
"""Make a small core from a big one, for the fuzzers' raw mode.

    shrink_core.py CORE OUT [KEEP [stacks-only]]

Keeps the ELF header, the notes and, of the PT_LOAD segments, only KEEP bytes
(default 4096) above each thread's stack pointer, 16 KiB below and 4 KiB above each thread's
fs_base (struct pthread), ELF header pages and writable segments of at most
256 KiB; the rest of each segment keeps its address range with no file
contents (p_filesz 0), so the segment index still sees the whole address space.
With "stacks-only", only the bytes near the stack pointers are kept: a core of
a few KiB, for the raw-mode fuzzers' seeds.
"""
import struct
import sys

NT_PRSTATUS = 1


def notes(data, off, size):
    end = off + size
    while off + 12 <= end:
        namesz, descsz, ntype = struct.unpack_from('<III', data, off)
        name_off = off + 12
        desc_off = name_off + ((namesz + 3) & ~3)
        yield ntype, data[desc_off:desc_off + descsz]
        off = desc_off + ((descsz + 3) & ~3)


def main():
    src, dst = sys.argv[1:3]
    keep = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
    stacks_only = len(sys.argv) > 4 and sys.argv[4] == 'stacks-only'
    data = open(src, 'rb').read()
    phoff, = struct.unpack_from('<Q', data, 0x20)
    phentsize, phnum = struct.unpack_from('<HH', data, 0x36)
    ph = [list(struct.unpack_from('<IIQQQQQQ', data, phoff + i * phentsize)) for i in range(phnum)]
    sps, fss = [], []
    for p in ph:
        if p[0] == 4:
            for ntype, desc in notes(data, p[2], p[5]):
                if ntype == NT_PRSTATUS and len(desc) >= 112 + 27 * 8:
                    sps.append(struct.unpack_from('<Q', desc, 112 + 19 * 8)[0])
                    fss.append(struct.unpack_from('<Q', desc, 112 + 21 * 8)[0])
    out = bytearray(data[:64])
    out += b'\0' * (phnum * 56)
    newph = []
    for p in ph:
        p_type, flags, off, va, pa, filesz, memsz, align = p
        if p_type == 4:
            newph.append([p_type, flags, len(out), va, pa, filesz, memsz, align])
            out += data[off:off + filesz]
            continue
        if p_type != 1:
            newph.append(p)
            continue
        # Ranges kept: near each stack pointer, the thread's struct pthread
        # at fs_base, an ELF header page, small writable segments (.data,
        # .bss: keys, recorder lists).
        want = [(sp - 256, sp + keep) for sp in sps]
        if not stacks_only:
            want += [(fs - 16384, fs + 4096) for fs in fss]
            if filesz >= 4 and data[off:off + 4] == b'\x7fELF':
                want.append((va, va + 4096))
            if flags & 2 and filesz <= 262144:
                want.append((va, va + filesz))
        keep_ranges = []
        for lo, hi in sorted(want):
            lo, hi = max(lo, va), min(hi, va + filesz)
            if lo >= hi:
                continue
            if keep_ranges and lo <= keep_ranges[-1][1]:
                keep_ranges[-1][1] = max(keep_ranges[-1][1], hi)
            else:
                keep_ranges.append([lo, hi])
        at = va
        for lo, hi in keep_ranges:
            if lo > at:
                newph.append([p_type, flags, len(out), at, pa, 0, lo - at, align])
            newph.append([p_type, flags, len(out), lo, pa, hi - lo, hi - lo, align])
            out += data[off + lo - va:off + hi - va]
            at = hi
        if va + memsz > at:
            newph.append([p_type, flags, len(out), at, pa, 0, va + memsz - at, align])
    phdrs = bytearray()
    for p in newph:
        phdrs += struct.pack('<IIQQQQQQ', *p)
    # More headers than before: put them at the end.
    if len(newph) != phnum:
        out += b'\0' * (-len(out) % 8)
        struct.pack_into('<QH', out, 0x20, len(out), 0)
        struct.pack_into('<H', out, 0x38, len(newph))
        out += phdrs
    else:
        out[64:64 + len(phdrs)] = phdrs
    open(dst, 'wb').write(out)


if __name__ == '__main__':
    main()
