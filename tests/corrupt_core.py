#!/usr/bin/env python3
"""Make damaged copies of an ELF core for t_badinput.sh.

    corrupt_core.py CORE OUT truncate-notes     cut the file inside PT_NOTE
    corrupt_core.py CORE OUT truncate-segments  cut inside the last PT_LOAD
                                                with file contents
    corrupt_core.py CORE OUT flip-notes SEED    flip 1-8 random bytes in notes
    corrupt_core.py CORE OUT flip-phdrs SEED    flip 1-4 random bytes in the
                                                program headers
    corrupt_core.py CORE OUT flip-memory SEED   overwrite 1-32 random 8-byte
                                                words of dumped memory (stacks,
                                                heap, link map) with junk
    corrupt_core.py CORE OUT flip-stack SEED    overwrite 1-8 words in the
                                                4 KiB above a thread's rsp
    corrupt_core.py CORE OUT nt-file-bytes      the executable's path (first
                                                in NT_FILE) gets 0xff bytes
                                                and a terminal escape
                                                sequence (ESC [2J, clear
                                                screen) in its last
                                                directory name, everywhere
                                                in the core (NT_FILE, the
                                                AT_EXECFN string, link map)
    corrupt_core.py CORE OUT flip-ranges SEED VADDR:LEN,...
                                                overwrite 1-16 words inside
                                                those target address ranges
    corrupt_core.py CORE OUT poke VADDR[+OFF]=VALUE[:SIZE]...
                                                write VALUE (SIZE bytes,
                                                default 8, little-endian) at
                                                each target address
Deterministic for a given SEED.  With SEED a range FIRST-LAST and OUT holding
"%d", every seed of the range is written (OUT with the seed for %d) at once.
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
        p_type, _flags, p_offset, p_va, _pa, p_filesz = struct.unpack_from('<IIQQQQ', data, off)
        out.append((p_type, p_offset, p_filesz, off, p_va))
    return phoff, phentsize * phnum, out


def thread_rsps(data, off, size):
    """rsp of every NT_PRSTATUS (pr_reg at 112, rsp is its 20th word)."""
    out, end = [], off + size
    while off + 12 <= end:
        namesz, descsz, ntype = struct.unpack_from('<III', data, off)
        desc = off + 12 + ((namesz + 3) & ~3)
        if ntype == 1 and descsz >= 112 + 27 * 8:
            out.append(struct.unpack_from('<Q', data, desc + 112 + 19 * 8)[0])
        off = desc + ((descsz + 3) & ~3)
    return out


def nt_file_paths(data, off, size):
    """(offset, path) of every NT_FILE name: after the count, the page size
    and count * 3 words of ranges, NUL-separated."""
    end = off + size
    while off + 12 <= end:
        namesz, descsz, ntype = struct.unpack_from('<III', data, off)
        desc = off + 12 + ((namesz + 3) & ~3)
        if ntype == 0x46494c45:              # NT_FILE
            count, = struct.unpack_from('<Q', data, desc)
            at, stop = desc + 16 + 24 * count, desc + descsz
            out = []
            while at < stop and len(out) < count:
                nul = data.index(b'\0', at, stop)
                out.append((at, bytes(data[at:nul])))
                at = nul + 1
            return out
        off = desc + ((descsz + 3) & ~3)
    sys.exit('no NT_FILE note')


def nt_file_bytes(data, off, size):
    """The first NT_FILE path (the executable) with the 6 bytes before its
    last '/' made 0xff ESC [ 2 J 0xff wherever it occurs: same length, so
    nothing moves."""
    exe = nt_file_paths(data, off, size)[0][1]
    cut = exe.rindex(b'/')
    if cut < 7:
        sys.exit('executable path too short to patch: %r' % exe)
    bad = exe[:cut - 6] + b'\xff\x1b[2J\xff' + exe[cut:]
    return bytearray(bytes(data).replace(exe + b'\0', bad + b'\0'))


def file_offset(loads, addr, size):
    """The file offset of target address ADDR, or None when not dumped."""
    for _t, off, filesz, _o, va in loads:
        if va <= addr and addr + size <= va + filesz:
            return off + addr - va
    return None


def poke(data, loads, specs):
    for spec in specs:
        where, value = spec.split('=')
        size = 8
        if ':' in value:
            value, size = value.split(':')
            size = int(size)
        addr = sum(int(p, 0) for p in where.split('+'))
        i = file_offset(loads, addr, size)
        if i is None:
            sys.exit('0x%x is not in the core' % addr)
        data[i:i + size] = (int(value, 0) & ((1 << (8 * size)) - 1)).to_bytes(size, 'little')


def flip_ranges(data, loads, rnd, ranges):
    spans = []
    for r in ranges.split(','):
        va, n = (int(x, 0) for x in r.split(':'))
        spans.append((va, n))
    for _ in range(rnd.randint(1, 16)):
        va, n = rnd.choice(spans)
        addr = (va + rnd.randrange(max(n - 8, 1))) & ~7
        i = file_offset(loads, addr, 8)
        if i is None:
            continue
        old = struct.unpack_from('<Q', data, i)[0]
        junk = rnd.choice([0, 0xffffffffffffffff, rnd.getrandbits(64), old ^ (1 << rnd.randrange(64)),
                           old + rnd.randrange(-64, 64) * 8, va + rnd.randrange(n)])
        struct.pack_into('<Q', data, i, junk & 0xffffffffffffffff)


def damaged(data, mode, args):
    """DATA (a bytearray, changed in place or cut) damaged as MODE says."""
    phoff, phsize, ph = phdrs(data)
    notes = [p for p in ph if p[0] == 4]
    loads = [p for p in ph if p[0] == 1 and p[2] > 0]
    if mode == 'truncate-notes':
        off, size = notes[0][1], notes[0][2]
        data = data[:off + size // 2]
    elif mode == 'truncate-segments':
        off, size = loads[len(loads) // 2][1:3]
        data = data[:off + size // 2]
    elif mode in ('flip-notes', 'flip-phdrs'):
        rnd = random.Random(int(args[0]))
        if mode == 'flip-notes':
            lo, n = notes[0][1], notes[0][2]
            count = rnd.randint(1, 8)
        else:
            lo, n = phoff, phsize
            count = rnd.randint(1, 4)
        for _ in range(count):
            i = lo + rnd.randrange(n)
            data[i] ^= rnd.randint(1, 255)
    elif mode == 'flip-memory':
        rnd = random.Random(int(args[0]))
        for _ in range(rnd.randint(1, 32)):
            off, size = rnd.choice(loads)[1:3]
            i = off + (rnd.randrange(max(size - 8, 1)) & ~7)
            junk = rnd.choice([0, 0xffffffffffffffff, rnd.getrandbits(64),
                               struct.unpack_from('<Q', data, i)[0] ^ (1 << rnd.randrange(64))])
            struct.pack_into('<Q', data, i, junk)
    elif mode == 'flip-stack':
        rnd = random.Random(int(args[0]))
        sps = thread_rsps(data, notes[0][1], notes[0][2])
        sp = rnd.choice(sps)
        for _ in range(rnd.randint(1, 8)):
            addr = (sp + rnd.randrange(4096)) & ~7
            for _t, off, size, _o, va in loads:
                if va <= addr < va + size - 8:
                    i = off + addr - va
                    junk = rnd.choice([0, rnd.getrandbits(64), sp + rnd.randrange(-64, 4096),
                                       struct.unpack_from('<Q', data, i)[0] ^ (1 << rnd.randrange(64))])
                    struct.pack_into('<Q', data, i, junk & 0xffffffffffffffff)
    elif mode == 'nt-file-bytes':
        data = nt_file_bytes(data, notes[0][1], notes[0][2])
    elif mode == 'flip-ranges':
        flip_ranges(data, loads, random.Random(int(args[0])), args[1])
    elif mode == 'poke':
        poke(data, loads, args)
    else:
        sys.exit('unknown mode ' + mode)
    return data


def main():
    src, dst, mode = sys.argv[1:4]
    args = sys.argv[4:]
    data = open(src, 'rb').read()
    seeds = args[0].split('-') if mode.startswith('flip-') and args else []
    if len(seeds) == 2 and '%d' in dst:
        # A range of seeds, one file each: one process for the lot.
        for seed in range(int(seeds[0]), int(seeds[1]) + 1):
            out = damaged(bytearray(data), mode, [str(seed)] + args[1:])
            open(dst % seed, 'wb').write(out)
    else:
        open(dst, 'wb').write(damaged(bytearray(data), mode, args))


if __name__ == '__main__':
    main()
