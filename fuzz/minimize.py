#!/usr/bin/env python3
"""Shrink a crashing core while it still crashes the same way.

    minimize.py CRASHER OUT PATTERN [CMD...]

Runs CMD (default: build/fuzz/fuzz_core) on candidate files and keeps a
candidate when the run's output matches the regular expression PATTERN (say
'session.c:154' or 'heap-buffer-overflow.*notes.c').  Steps: drop program
headers, drop the file contents of PT_LOAD segments, drop notes, cut the
file's tail, zero blocks.  The result is rewritten compactly: headers, then
notes, then what is left of the segments.
"""
import os
import re
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse(data):
    phoff, = struct.unpack_from('<Q', data, 0x20)
    phentsize, phnum = struct.unpack_from('<HH', data, 0x36)
    segs = []
    for i in range(phnum):
        p = list(struct.unpack_from('<IIQQQQQQ', data, phoff + i * phentsize))
        off, filesz = p[2], p[5]
        segs.append((p, bytes(data[off:off + filesz])))
    return segs


def build(head, segs):
    """ELF header HEAD, then the program headers, then each segment's bytes."""
    out = bytearray(head[:64])
    struct.pack_into('<QHH', out, 0x20, 64, 0, 0)
    struct.pack_into('<HH', out, 0x36, 56, len(segs))
    off = 64 + 56 * len(segs)
    body = bytearray()
    phdrs = bytearray()
    for p, content in segs:
        p = list(p)
        p[2] = off + len(body)
        p[5] = len(content) if p[0] != 1 else min(len(content), p[5])
        phdrs += struct.pack('<IIQQQQQQ', *p)
        body += content
    return bytes(out + phdrs + body)


def notes(content):
    out, off = [], 0
    while off + 12 <= len(content):
        namesz, descsz, _ = struct.unpack_from('<III', content, off)
        end = off + 12 + ((namesz + 3) & ~3) + ((descsz + 3) & ~3)
        if end > len(content):
            break
        out.append(content[off:end])
        off = end
    return out, content[off:]


class Tester:
    def __init__(self, pattern, cmd):
        self.pattern = re.compile(pattern)
        self.cmd = cmd
        self.tmp = tempfile.mkdtemp(prefix='minimize-')

    def __call__(self, data):
        path = os.path.join(self.tmp, 'candidate')
        with open(path, 'wb') as f:
            f.write(data)
        r = subprocess.run(self.cmd + [path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=120)
        return bool(self.pattern.search(r.stdout.decode('utf-8', 'replace')))


def main():
    src, dst, pattern = sys.argv[1:4]
    cmd = sys.argv[4:] or [os.path.join(ROOT, 'build/fuzz/fuzz_core')]
    crashes = Tester(pattern, cmd)
    data = open(src, 'rb').read()
    if not crashes(data):
        sys.exit('minimize.py: %s does not match %r' % (src, pattern))
    try:
        head, segs = data[:64], parse(data)
        if crashes(build(head, segs)):
            data = build(head, segs)
            i = len(segs) - 1
            while i >= 0:   # drop whole program headers
                cand = segs[:i] + segs[i + 1:]
                if crashes(build(head, cand)):
                    segs = cand
                i -= 1
            for i, (p, content) in enumerate(segs):  # drop segment contents
                if p[0] == 1 and content:
                    cand = segs[:i] + [(p, b'')] + segs[i + 1:]
                    if crashes(build(head, cand)):
                        segs = cand
            for i, (p, content) in enumerate(segs):  # drop notes
                if p[0] != 4:
                    continue
                ns, tail = notes(content)
                j = len(ns) - 1
                while j >= 0:
                    cand_ns = ns[:j] + ns[j + 1:]
                    cand = segs[:i] + [(p, b''.join(cand_ns) + tail)] + segs[i + 1:]
                    if crashes(build(head, cand)):
                        ns = cand_ns
                        segs = cand
                    j -= 1
            data = build(head, segs)
    except (struct.error, IndexError):
        pass
    step = 1 << 16   # cut the tail, then zero blocks
    while step >= 16:
        while len(data) > step and crashes(data[:-step]):
            data = data[:-step]
        for off in range(0, len(data), step):
            block = data[off:off + step]
            if any(block):
                cand = data[:off] + bytes(len(block)) + data[off + step:]
                if crashes(cand):
                    data = cand
        step //= 4
    open(dst, 'wb').write(data)
    print('%s: %d bytes' % (dst, len(data)))


if __name__ == '__main__':
    main()
