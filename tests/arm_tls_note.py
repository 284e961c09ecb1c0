#!/usr/bin/env python3
"""Give a qemu-user aarch64 core the NT_ARM_TLS notes a kernel writes:
each thread's TPIDR_EL0, found here as libthread_db finds it (and apart
from asyncore): glibc's lists of struct pthread at _rtld_global (the
dynamic linker's load address from the core's AT_BASE) with the offsets
libc's _thread_db_* descriptors give, matched by tid; TPIDR_EL0 is the
struct pthread's address plus its size (TLS variant I).  The notes are
rebuilt at the end of the file, each NT_ARM_TLS right after its thread's
NT_PRSTATUS.  DELTA is added to every thread pointer (a core that lies).
With --break-lists instead, no note is added and the lists themselves are
broken: _dl_stack_used's head points at an unmapped address, the first
struct pthread of _dl_stack_user at itself (a cycle without the head).
Usage: arm_tls_note.py CORE OUT LIBC LD_SO [DELTA | --break-lists]; prints
"tid tp" lines."""
import struct, subprocess, sys

core_path, out_path, libc, ldso = sys.argv[1:5]
break_lists = sys.argv[5:] == ['--break-lists']
delta = int(sys.argv[5], 0) if len(sys.argv) > 5 and not break_lists else 0
data = bytearray(open(core_path, 'rb').read())
phoff, = struct.unpack_from('<Q', data, 32)
phentsize, phnum = struct.unpack_from('<HH', data, 54)
phdrs = [struct.unpack_from('<IIQQQQQQ', data, phoff + i * phentsize) for i in range(phnum)]

def read(addr, n):
    for t, _, off, va, _, fs, _, _ in phdrs:
        if t == 1 and va <= addr and addr + n <= va + fs:
            return bytes(data[off + addr - va:off + addr - va + n])
    raise SystemExit('0x%x is not in the core' % addr)

def write(addr, b):
    for t, _, off, va, _, fs, _, _ in phdrs:
        if t == 1 and va <= addr and addr + len(b) <= va + fs:
            data[off + addr - va:off + addr - va + len(b)] = b
            return
    raise SystemExit('0x%x is not in the core' % addr)

def notes():
    for i, (t, _, off, _, _, fs, _, _) in enumerate(phdrs):
        if t != 4:
            continue
        p = off
        while p + 12 <= off + fs:
            namesz, descsz, ntype = struct.unpack_from('<III', data, p)
            name_at = p + 12
            desc_at = name_at + (namesz + 3) // 4 * 4
            end = desc_at + (descsz + 3) // 4 * 4
            yield i, ntype, bytes(data[p:end]), bytes(data[desc_at:desc_at + descsz])
            p = end

def dynsym(path, name):
    out = subprocess.run(['aarch64-linux-gnu-nm', '-D', path], capture_output=True, text=True).stdout
    for line in out.split('\n'):
        f = line.split()
        if len(f) == 3 and f[2].split('@')[0] == name:
            return int(f[0], 16)
    raise SystemExit('%s: no %s' % (path, name))

def file_bytes(path, vaddr, n):
    b = open(path, 'rb').read()
    po, = struct.unpack_from('<Q', b, 32)
    pe, pn = struct.unpack_from('<HH', b, 54)
    for i in range(pn):
        t, _, off, va, _, fs, _, _ = struct.unpack_from('<IIQQQQQQ', b, po + i * pe)
        if t == 1 and va <= vaddr and vaddr + n <= va + fs:
            return b[off + vaddr - va:off + vaddr - va + n]
    raise SystemExit('%s: 0x%x not in a segment' % (path, vaddr))

def field(name):
    return struct.unpack('<III', file_bytes(libc, dynsym(libc, '_thread_db_' + name), 12))[2]

size, = struct.unpack('<I', file_bytes(libc, dynsym(libc, '_thread_db_sizeof_pthread'), 4))
list_off, tid_off = field('pthread_list'), field('pthread_tid')
auxv = [d for _, t, _, d in notes() if t == 6][0]
base = dict(struct.iter_unpack('<QQ', auxv))[7]          # AT_BASE
rtld = base + dynsym(ldso, '_rtld_global')
tps = {}
used, user = rtld + field('rtld_global__dl_stack_used'), rtld + field('rtld_global__dl_stack_user')
if break_lists:
    first, = struct.unpack('<Q', read(user, 8))
    write(used, struct.pack('<Q', 0xdead0000))
    write(first, struct.pack('<Q', first))
    open(out_path, 'wb').write(data)
    sys.exit(0)
for head in (used, user):
    nxt, = struct.unpack('<Q', read(head, 8))
    while nxt != head:
        pd = nxt - list_off
        tid, = struct.unpack('<i', read(pd + tid_off, 4))
        tps[tid] = pd + size + delta
        nxt, = struct.unpack('<Q', read(nxt, 8))

blob = bytearray()
seg = None
for i, ntype, raw, desc in notes():
    seg = i
    blob += raw
    if ntype == 1:                                        # NT_PRSTATUS
        tid, = struct.unpack_from('<i', desc, 32)
        if tid in tps:
            blob += struct.pack('<III', 6, 8, 0x401) + b'LINUX\0\0\0' + struct.pack('<Q', tps[tid])
            print(tid, '0x%x' % tps[tid])
t, fl, _, va, pa, _, _, al = phdrs[seg]
struct.pack_into('<IIQQQQQQ', data, phoff + seg * phentsize, t, fl, len(data), va, pa, len(blob), 0, al)
data += blob
open(out_path, 'wb').write(data)
