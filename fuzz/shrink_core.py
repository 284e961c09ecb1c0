#!/usr/bin/env python3
"""Make a small core from a big one, for the fuzzers' raw mode.

    shrink_core.py CORE OUT [KEEP]

Keeps the ELF header, the notes and, of each PT_LOAD, only KEEP bytes (default
4096) around each thread's stack pointer and the segment's first page when it
holds an ELF header; every other PT_LOAD keeps its address range with no file
contents (p_filesz 0), so the segment index still sees the whole address space.
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
    data = open(src, 'rb').read()
    phoff, = struct.unpack_from('<Q', data, 0x20)
    phentsize, phnum = struct.unpack_from('<HH', data, 0x36)
    ph = [list(struct.unpack_from('<IIQQQQQQ', data, phoff + i * phentsize)) for i in range(phnum)]
    sps = []
    for p in ph:
        if p[0] == 4:
            for ntype, desc in notes(data, p[2], p[5]):
                if ntype == NT_PRSTATUS and len(desc) >= 112 + 27 * 8:
                    sps.append(struct.unpack_from('<Q', desc, 112 + 19 * 8)[0])
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
        lo = hi = None
        for sp in sps:
            if va <= sp < va + filesz:
                lo, hi = max(va, sp - 256), min(va + filesz, sp + keep)
        if lo is None and filesz >= 4 and data[off:off + 4] == b'\x7fELF':
            lo, hi = va, va + min(filesz, 4096)
        if lo is None:
            newph.append([p_type, flags, len(out), va, pa, 0, memsz, align])
            continue
        # Split: [va, lo) empty, [lo, hi) kept, [hi, end) empty.
        if lo > va:
            newph.append([p_type, flags, len(out), va, pa, 0, lo - va, align])
        newph.append([p_type, flags, len(out), lo, pa, hi - lo, hi - lo, align])
        out += data[off + lo - va:off + hi - va]
        if va + memsz > hi:
            newph.append([p_type, flags, len(out), hi, pa, 0, va + memsz - hi, align])
    phdrs = bytearray()
    for p in newph:
        phdrs += struct.pack('<IIQQQQQQ', *p)
    # More headers than before: put them at the end.
    if len(newph) != phnum:
        struct.pack_into('<QH', out, 0x20, len(out), 0)
        struct.pack_into('<H', out, 0x38, len(newph))
        out += phdrs
    else:
        out[64:64 + len(phdrs)] = phdrs
    open(dst, 'wb').write(out)


if __name__ == '__main__':
    main()
