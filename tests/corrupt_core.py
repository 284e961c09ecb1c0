#!/usr/bin/env python3
"""Make damaged copies of an ELF core for t_badinput.sh.

    corrupt_core.py CORE OUT truncate-notes     cut the file inside PT_NOTE
    corrupt_core.py CORE OUT truncate-segments  cut inside the last PT_LOAD
                                                with file contents
    corrupt_core.py CORE OUT flip-notes SEED    flip 1-8 random bytes in notes
    corrupt_core.py CORE OUT flip-phdrs SEED    flip 1-4 random bytes in the
                                                program headers
Deterministic for a given SEED.
"""
import random
import struct
import sys


def phdrs(data):
    phoff, = struct.unpack_from('<Q', data, 0x20)
    phentsize, phnum = struct.unpack_from('<HH', data, 0x36)
    out = []
    for i in range(phnum):
        off = phoff + i * phentsize
        p_type, _flags, p_offset, _va, _pa, p_filesz = struct.unpack_from('<IIQQQQ', data, off)
        out.append((p_type, p_offset, p_filesz, off))
    return phoff, phentsize * phnum, out


def main():
    src, dst, mode = sys.argv[1:4]
    data = bytearray(open(src, 'rb').read())
    phoff, phsize, ph = phdrs(data)
    notes = [p for p in ph if p[0] == 4]
    loads = [p for p in ph if p[0] == 1 and p[2] > 0]
    if mode == 'truncate-notes':
        _, off, size, _ = notes[0]
        data = data[:off + size // 2]
    elif mode == 'truncate-segments':
        _, off, size, _ = loads[len(loads) // 2]
        data = data[:off + size // 2]
    elif mode in ('flip-notes', 'flip-phdrs'):
        rnd = random.Random(int(sys.argv[4]))
        if mode == 'flip-notes':
            lo, n = notes[0][1], notes[0][2]
            count = rnd.randint(1, 8)
        else:
            lo, n = phoff, phsize
            count = rnd.randint(1, 4)
        for _ in range(count):
            i = lo + rnd.randrange(n)
            data[i] ^= rnd.randint(1, 255)
    else:
        sys.exit('unknown mode ' + mode)
    open(dst, 'wb').write(data)


if __name__ == '__main__':
    main()
