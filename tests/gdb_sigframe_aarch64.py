"""gdb-multiarch's view of an aarch64 crash a signal handler caught, as JSON
(tests/t_handler_aarch64.sh): tests/gdb_sigframe.py's output for aarch64
cores, so that tests/handler_compare.py reads either.

Run inside gdb-multiarch on an aarch64 core:

    LC_ALL=C gdb-multiarch -batch -nx -iex 'set sysroot /usr/aarch64-linux-gnu' \
        -x tests/gdb_sigframe_aarch64.py PROG CORE

It walks the current (crashing) thread with the unwinder `bt` uses, at most
LIMIT frames, and prints one JSON object between the marker lines
GDB_SIGFRAME_BEGIN / GDB_SIGFRAME_END:

    {"frames": [{"name", "type", "pc"}],  "trampoline": K or null,
     "siginfo": {"signo", "code", "addr"}   the core's ($_siginfo; a
                 qemu-user core has no NT_SIGINFO: all null),
     "sigframe": {"sp", "signo", "code", "addr", "fault_address", "pc",
                  "regs_sp", "x29", "x30"} or null}

"trampoline" is the index of the first SIGTRAMP frame (gdb's `<signal
handler called>`: gdb recognises the return address by its instructions,
`mov x8, #139; svc #0`).  "sigframe" is read from the signal frame there:
aarch64's { struct siginfo info; struct ucontext uc; } then the frame
record (arch/arm64/kernel/signal.c; qemu-user's linux-user/aarch64/signal.c
writes the same), at the handler's entry stack pointer, which is the
SIGTRAMP frame's sp.  siginfo is 128 bytes (si_signo +0, si_code +8,
si_addr +16); in struct ucontext uc_flags, uc_link, uc_stack (24 bytes),
uc_sigmask (8 bytes) and glibc's 1024-bit sigset padding come before
uc_mcontext at uc + 176, so struct sigcontext { fault_address; regs[31];
sp; pc; pstate; ... } is at sp + 304: fault_address +0, regs[i] +8+8i, sp
+256, pc +264.
"""
import json
import os
import struct

import gdb

TYPES = {}
for _n in ('NORMAL_FRAME', 'DUMMY_FRAME', 'INLINE_FRAME', 'TAILCALL_FRAME',
           'SIGTRAMP_FRAME', 'ARCH_FRAME', 'SENTINEL_FRAME'):
    if hasattr(gdb, _n):
        TYPES[getattr(gdb, _n)] = _n[:-len('_FRAME')]

LIMIT = int(os.environ.get('GDB_SIGFRAME_LIMIT', '40'))
UC = 128
MCONTEXT = UC + 176


def value(expr):
    try:
        return int(gdb.parse_and_eval(expr))
    except (gdb.error, ValueError):
        return None


def read(addr, size, fmt):
    try:
        return struct.unpack(fmt, bytes(gdb.selected_inferior().read_memory(addr, size)))[0]
    except (gdb.error, gdb.MemoryError):
        return None


def sigframe(frame):
    try:
        sp = int(frame.read_register('sp'))
    except gdb.error:
        return None
    mc = sp + MCONTEXT
    return {
        'sp': '0x%x' % sp,
        'signo': read(sp, 4, '<i'),
        'code': read(sp + 8, 4, '<i'),
        'addr': read(sp + 16, 8, '<Q'),
        'fault_address': read(mc, 8, '<Q'),
        'x29': read(mc + 8 + 29 * 8, 8, '<Q'),
        'x30': read(mc + 8 + 30 * 8, 8, '<Q'),
        'regs_sp': read(mc + 256, 8, '<Q'),
        'pc': read(mc + 264, 8, '<Q'),
    }


def main():
    out = {'frames': [], 'trampoline': None, 'sigframe': None,
           'siginfo': {'signo': value('$_siginfo.si_signo'), 'code': value('$_siginfo.si_code'),
                       'addr': value('(unsigned long)$_siginfo._sifields._sigfault.si_addr')}}
    try:
        f = gdb.newest_frame()
    except gdb.error:
        f = None
    while f is not None and len(out['frames']) < LIMIT:
        kind = TYPES.get(f.type(), str(f.type()))
        name = None
        try:
            name = f.name()
        except gdb.error:
            pass
        if kind == 'SIGTRAMP':
            name = '<signal handler called>'
            if out['trampoline'] is None:
                out['trampoline'] = len(out['frames'])
                out['sigframe'] = sigframe(f)
        out['frames'].append({'name': name, 'type': kind, 'pc': '0x%x' % f.pc()})
        try:
            f = f.older()
        except gdb.error:
            break
    return out


print('GDB_SIGFRAME_BEGIN')
print(json.dumps(main()))
print('GDB_SIGFRAME_END')
