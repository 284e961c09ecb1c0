#!/usr/bin/env python3
"""png_colors.py FILE: print "WIDTH HEIGHT COLOURS DOMINANT" of a PNG (8-bit
RGB/RGBA, not interlaced, as Chromium writes screenshots): the number of
distinct colours and the share of the most frequent one, in percent.  A
blank page is one colour at 100%."""
import collections
import struct
import sys
import zlib


def rows(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit("not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, ctype, _, _, interlace = header
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise SystemExit("unsupported PNG: depth %d colour type %d" % (depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw, stride, prev = zlib.decompress(idat), width * bpp, bytearray(width * bpp)
    for y in range(height):
        start = y * (stride + 1)
        ftype, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        yield width, height, bpp, bytes(line)
        prev = line


counts = collections.Counter()
for width, height, bpp, line in rows(sys.argv[1]):
    for x in range(0, len(line), bpp * 2):   # every other pixel is plenty
        counts[line[x:x + 3]] += 1
total = sum(counts.values())
print(width, height, len(counts), round(100 * counts.most_common(1)[0][1] / total))
