#!/usr/bin/env python3
"""A small minidump from a large one, as a seed of the minidump corpus.

    minidump_seed.py IN OUT [STACK_BYTES]

Keeps the streams a report reads (system info, threads, modules, exception,
misc info, /proc status, maps, auxv, command line) and each thread's stack
from its stack pointer up, STACK_BYTES (default 4096) of it; writes the
streams anew, each at its own offset.
"""
import struct
import sys

KEEP = (3, 4, 6, 7, 15, 0x47670004, 0x47670006, 0x47670008, 0x47670009)
AMD64_RSP = 152


def main(argv):
    d = open(argv[1], 'rb').read()
    keep_stack = int(argv[3]) if len(argv) > 3 else 4096
    n, rva = struct.unpack_from('<II', d, 8)
    dirs = [struct.unpack_from('<III', d, rva + 12 * i) for i in range(n)]
    out = bytearray(32 + 12 * len([t for t, _, _ in dirs if t in KEEP]))
    entries = []

    def put(b):
        while len(out) % 8:
            out.append(0)
        at = len(out)
        out.extend(b)
        return at

    for typ, size, off in dirs:
        if typ not in KEEP:
            continue
        body = bytearray(d[off:off + size])
        if typ == 3:        # threads: contexts and trimmed stacks copied
            for k in range(struct.unpack_from('<I', body, 0)[0]):
                e = 4 + 48 * k
                start, ssize, srva, csize, crva = struct.unpack_from('<QIIII', body, e + 24)
                ctx = d[crva:crva + csize]
                sp = struct.unpack_from('<Q', ctx, AMD64_RSP)[0] if csize >= 160 else start
                lo = max(start, sp & ~15) if start <= sp < start + ssize else start
                n_keep = min(keep_stack, start + ssize - lo)
                stack = d[srva + lo - start:srva + lo - start + n_keep]
                struct.pack_into('<QIIII', body, e + 24, lo, n_keep, put(stack), csize, put(ctx))
        elif typ == 4:      # modules: names and CodeView records copied
            for k in range(struct.unpack_from('<I', body, 0)[0]):
                e = 4 + 108 * k
                name = struct.unpack_from('<I', body, e + 20)[0]
                nlen = struct.unpack_from('<I', d, name)[0]
                struct.pack_into('<I', body, e + 20, put(d[name:name + 4 + nlen + 2]))
                cvs, cvr = struct.unpack_from('<II', body, e + 76)
                struct.pack_into('<II', body, e + 76, cvs, put(d[cvr:cvr + cvs]))
                struct.pack_into('<II', body, e + 84, 0, 0)
        elif typ == 6:      # exception: its context copied
            csize, crva = struct.unpack_from('<II', body, 160)
            struct.pack_into('<II', body, 160, csize, put(d[crva:crva + csize]))
        entries.append((typ, len(body), put(body)))
    struct.pack_into('<IIIIIIQ', out, 0, 0x504d444d, 0xa793, len(entries), 32, 0, 0, 0)
    for i, e in enumerate(entries):
        struct.pack_into('<III', out, 32 + 12 * i, *e)
    open(argv[2], 'wb').write(out)


if __name__ == '__main__':
    main(sys.argv)
