#!/usr/bin/env python3
"""Damaged variants of a core for fuzz/corrupt.sh, written to OUTDIR.

    corrupt.py CORE OUTDIR MODE SEED COUNT

Modes: flip-notes (1-16 random bit flips in the notes), flip-head (in the ELF
and program headers), note-sizes (random namesz/descsz/type of random notes),
truncate (the file cut at every 4 KiB boundary up to COUNT cuts, spread over
the file), flip-stacks (random 8-byte words near each thread's stack pointer
set to other pointers of the stack or to junk).
"""
import os
import random
import struct
import sys


def layout(data):
    phoff, = struct.unpack_from('<Q', data, 0x20)
    phentsize, phnum = struct.unpack_from('<HH', data, 0x36)
    ph = [struct.unpack_from('<IIQQQQQQ', data, phoff + i * phentsize) for i in range(phnum)]
    return phoff, phentsize * phnum, ph


def note_offsets(data, off, size):
    out, end = [], off + size
    while off + 12 <= end:
        namesz, descsz, ntype = struct.unpack_from('<III', data, off)
        out.append((off, ntype, off + 12 + ((namesz + 3) & ~3)))
        off += 12 + ((namesz + 3) & ~3) + ((descsz + 3) & ~3)
    return out


def main():
    src, outdir, mode, seed, count = sys.argv[1:6]
    rng = random.Random(int(seed))
    base = open(src, 'rb').read()
    phoff, phsize, ph = layout(base)
    notes = [p for p in ph if p[0] == 4]
    nl = note_offsets(base, notes[0][2], notes[0][5])
    sps = [struct.unpack_from('<Q', base, d + 112 + 19 * 8)[0] for o, t, d in nl if t == 1]
    count = int(count)
    if mode == 'truncate':
        cuts = list(range(4096, len(base), 4096))
        step = max(1, len(cuts) // count)
        for i, cut in enumerate(cuts[::step][:count]):
            open(os.path.join(outdir, 'trunc-%d' % cut), 'wb').write(base[:cut])
        return
    for i in range(count):
        data = bytearray(base)
        if mode == 'flip-notes':
            for _ in range(rng.randint(1, 16)):
                off = notes[0][2] + rng.randrange(notes[0][5])
                data[off] ^= 1 << rng.randrange(8)
        elif mode == 'flip-head':
            for _ in range(rng.randint(1, 4)):
                off = rng.randrange(phoff + phsize)
                data[off] ^= 1 << rng.randrange(8)
        elif mode == 'note-sizes':
            for _ in range(rng.randint(1, 3)):
                o, _t, _d = rng.choice(nl)
                field = rng.randrange(3)
                val = rng.choice([0, 1, 3, 4, 5, 8, 0xff, 0x1000, 0x7fffffff, 0xffffffff,
                                  0xfffffff0, rng.randrange(1 << 32), rng.randrange(512)])
                struct.pack_into('<I', data, o + 4 * field, val)
        elif mode == 'flip-stacks':
            for _ in range(rng.randint(1, 8)):
                sp = rng.choice(sps)
                for p in ph:
                    if p[0] == 1 and p[3] <= sp < p[3] + p[5]:
                        rel = sp - p[3] + rng.randrange(-256, 4096) // 8 * 8
                        if 0 <= rel <= p[5] - 8:
                            val = rng.choice([0, 1, 0xffffffffffffffff, sp + rng.randrange(-64, 4096),
                                              sp, rng.randrange(1 << 64), 0x8000000000000000])
                            struct.pack_into('<Q', data, p[2] + rel, val)
        else:
            sys.exit('corrupt.py: unknown mode ' + mode)
        open(os.path.join(outdir, '%s-%s-%d' % (mode, seed, i)), 'wb').write(data)


if __name__ == '__main__':
    main()
