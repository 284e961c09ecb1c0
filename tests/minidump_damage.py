#!/usr/bin/env python3
"""A damaged copy of a minidump, for the reader's bad-input tests.

    minidump_damage.py IN OUT CASE

CASE: truncated (half the file), header (its first 20 bytes), directory (a
stream directory of 2^31 entries), stream (the thread list's stream past the
end), memory (the first thread's stack past the end), count (a thread list
of 2^32 - 1), overlap (the first thread's stack moved 100 bytes into the
second's), cpu (an unknown processor and no context's CPU bit), context (every
thread context 16 bytes).
"""
import struct
import sys

THREADS, SYSTEM_INFO = 3, 7


def streams(d):
    n, rva = struct.unpack_from('<II', d, 8)
    return {struct.unpack_from('<I', d, rva + 12 * i)[0]: (rva + 12 * i,) + struct.unpack_from('<II', d, rva + 12 * i + 4)
            for i in range(n)}


def thread(d, k):
    _, _, off = streams(d)[THREADS]
    return off + 4 + 48 * k


def main(argv):
    d = bytearray(open(argv[1], 'rb').read())
    case = argv[3]
    s = streams(d)
    if case == 'truncated':
        d = d[:len(d) // 2]
    elif case == 'header':
        d = d[:20]
    elif case == 'directory':
        struct.pack_into('<I', d, 8, 1 << 31)
    elif case == 'stream':
        struct.pack_into('<I', d, s[THREADS][0] + 8, len(d) - 8)
    elif case == 'memory':
        struct.pack_into('<I', d, thread(d, 0) + 36, len(d) - 16)
    elif case == 'count':
        struct.pack_into('<I', d, s[THREADS][2], 0xffffffff)
    elif case == 'overlap':
        start = struct.unpack_from('<Q', d, thread(d, 1) + 24)[0]
        struct.pack_into('<Q', d, thread(d, 0) + 24, start + 100)
    elif case == 'cpu':
        struct.pack_into('<H', d, s[SYSTEM_INFO][2], 0x1234)
        n = struct.unpack_from('<I', d, s[THREADS][2])[0]
        for k in range(n):
            ctx = struct.unpack_from('<I', d, thread(d, k) + 44)[0]
            struct.pack_into('<I', d, ctx + 48, 0)
            struct.pack_into('<I', d, ctx, 0)
    elif case == 'context':
        n = struct.unpack_from('<I', d, s[THREADS][2])[0]
        for k in range(n):
            struct.pack_into('<I', d, thread(d, k) + 40, 16)
    else:
        sys.exit('unknown case ' + case)
    open(argv[2], 'wb').write(d)


if __name__ == '__main__':
    main(sys.argv)
