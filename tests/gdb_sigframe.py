"""gdb's view of a crash a signal handler caught, as JSON (tests/t_handler.sh,
tests/t_handler_aarch64.sh).

Run inside gdb on an x86_64 core, or gdb-multiarch on an aarch64 core:

    LC_ALL=C gdb -batch -nx -x tests/gdb_sigframe.py PROG CORE
    LC_ALL=C gdb-multiarch -batch -nx -iex 'set sysroot /usr/aarch64-linux-gnu' \
        -x tests/gdb_sigframe.py PROG CORE

It walks the current (crashing) thread with the unwinder `bt` uses, at most
LIMIT frames, and prints one JSON object between the marker lines
GDB_SIGFRAME_BEGIN / GDB_SIGFRAME_END:

    {"frames": [{"name", "type", "pc"}],  "trampoline": K or null,
     "siginfo": {"signo", "code", "addr"}   the core's ($_siginfo; a
                 qemu-user core has no NT_SIGINFO: all null),
     "sigframe": x86_64: {"sp", "signo", "code", "addr", "cr2", "trapno",
                 "err", "rip"}; aarch64: {"sp", "signo", "code", "addr",
                 "fault_address", "pc", "regs_sp", "x29", "x30"}; or null}

"trampoline" is the index of the first SIGTRAMP frame (gdb's `<signal
handler called>`).  "sigframe" is read from the signal frame there, by the
frame's architecture.

x86_64: the kernel's struct rt_sigframe { char *pretcode; struct ucontext uc; struct
siginfo info; } (arch/x86/include/asm/sigframe.h), whose uc gdb's SIGTRAMP
frame's sp points at (pretcode is the return address the handler, or the
function it tail-called, returned to).  In struct ucontext uc_flags,
uc_link, uc_stack (24 bytes) come before uc_mcontext (struct sigcontext:
r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags, cs/gs/fs/ss,
err, trapno, oldmask, cr2, fpstate, 8 reserved words: 256 bytes), then
uc_sigmask (8 bytes): info is at uc + 304.  The kernel writes info only
for a handler installed with SA_SIGINFO (its signo is 0 otherwise); cr2,
trapno and err are the fault's whatever the flags.

aarch64 (gdb recognises the trampoline by its instructions, `mov x8, #139;
svc #0`): { struct siginfo info; struct ucontext uc; } then the frame
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
UC_MCONTEXT = 40
UC_INFO = 304
AARCH64_MCONTEXT = 128 + 176


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
    aarch64 = frame.architecture().name().startswith('aarch64')
    try:
        sp = int(frame.read_register('sp' if aarch64 else 'rsp'))
    except gdb.error:
        return None
    return sigframe_aarch64(sp) if aarch64 else sigframe_x86_64(sp)


def sigframe_x86_64(sp):
    mc = sp + UC_MCONTEXT
    return {
        'sp': '0x%x' % sp,
        'signo': read(sp + UC_INFO, 4, '<i'),
        'code': read(sp + UC_INFO + 8, 4, '<i'),
        'addr': read(sp + UC_INFO + 16, 8, '<Q'),
        'rip': read(mc + 16 * 8, 8, '<Q'),
        'err': read(mc + 19 * 8, 8, '<Q'),
        'trapno': read(mc + 20 * 8, 8, '<Q'),
        'cr2': read(mc + 22 * 8, 8, '<Q'),
    }


def sigframe_aarch64(sp):
    mc = sp + AARCH64_MCONTEXT
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
