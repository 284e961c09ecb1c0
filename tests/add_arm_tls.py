#!/usr/bin/env python3
"""add_arm_tls.py IN OUT BASE: copy of the aarch64 core IN with an NT_ARM_TLS
note after each thread's NT_PRSTATUS (thread I's TPIDR_EL0 = BASE + I *
0x10000), as an arm64 kernel writes them and qemu-user does not.  The new
notes go at the end of the file and PT_NOTE points there."""
import struct
import sys

NT_PRSTATUS, NT_ARM_TLS = 1, 0x401


def note(name, ntype, desc):
    n = name + b'\0'
    return (struct.pack('<III', len(n), len(desc), ntype) + n + b'\0' * (-len(n) % 4) +
            desc + b'\0' * (-len(desc) % 4))


data = bytearray(open(sys.argv[1], 'rb').read())
base = int(sys.argv[3], 0)
phoff, = struct.unpack_from('<Q', data, 32)
phentsize, phnum = struct.unpack_from('<HH', data, 54)
for i in range(phnum):
    ph = phoff + i * phentsize
    p_type, _, p_offset, _, _, p_filesz = struct.unpack_from('<IIQQQQ', data, ph)
    if p_type != 4:
        continue
    notes, pos, thread = b'', p_offset, 0
    while pos + 12 <= p_offset + p_filesz:
        namesz, descsz, ntype = struct.unpack_from('<III', data, pos)
        size = 12 + namesz + (-namesz % 4) + descsz + (-descsz % 4)
        notes += bytes(data[pos:pos + size])
        if ntype == NT_PRSTATUS and data[pos + 12:pos + 16] == b'CORE':
            notes += note(b'LINUX', NT_ARM_TLS, struct.pack('<Q', base + thread * 0x10000))
            thread += 1
        pos += size
    data += b'\0' * (-len(data) % 8)
    struct.pack_into('<Q', data, ph + 8, len(data))
    struct.pack_into('<Q', data, ph + 32, len(notes))
    data += notes
    break
open(sys.argv[2], 'wb').write(data)
