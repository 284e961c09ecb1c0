#!/usr/bin/env python3
"""The minidump Breakpad's Linux client would write of an ELF core's crash.

    core_to_minidump.py CORE OUT [NAME=VALUE...]

Breakpad's layout (src/google_breakpad/common/minidump_format.h): its
1232-byte MDRawContextAMD64 or 912-byte MDRawContextARM64 for every thread
(NT_PRSTATUS), each thread's stack from its stack pointer to the end of its
mapping in MemoryList and ThreadList, the exception (NT_SIGINFO: signal,
si_code, si_addr), SystemInfo, MiscInfo (the pid), a ModuleList of the files
mapped from offset 0 (NT_FILE) with each one's build-id in a CodeView
"BpEL" record (from the ELF notes the core saved), LinuxMaps from the
segments and NT_FILE, and LinuxAuxv.  As Breakpad's client (its
LinuxDumper and MinidumpWriter) writes them: each stack from the page of
its stack pointer, 32 KiB at most; 256 bytes of code around the crashing
thread's pc in MemoryList; no MiscInfo, the pids in LinuxProcStatus; a teb
of 0 (no thread pointer: x86_64's fs_base reads as 0).  x86_64 and aarch64
cores.

With NAME=VALUE pairs the minidump is Crashpad's: each stack from 128
bytes below its stack pointer (x86_64's red zone) to its mapping's end,
the thread pointer in each thread's teb, MiscInfo with the pid, and the
pairs in its MinidumpCrashpadInfo stream: a NAME
"MODULE:NAME" as the simple annotation of the module whose path ends in
MODULE (a NAME "MODULE:@NAME" as its annotation object, "MODULE:[]" its list
annotation), any other as the process's (crashpad/minidump/
minidump_extensions.h).
"""
import struct
import sys

EM_X86_64, EM_AARCH64 = 62, 183
NT_PRSTATUS, NT_PRPSINFO, NT_AUXV, NT_ARM_TLS = 1, 3, 6, 0x401
NT_SIGINFO, NT_FILE = 0x53494749, 0x46494c45
PF_X, PF_W, PF_R = 1, 2, 4
# x86_64 user_regs_struct index -> MDRawContextAMD64 offset
AMD64 = {10: 120, 11: 128, 12: 136, 5: 144, 19: 152, 4: 160, 13: 168, 14: 176, 9: 184, 8: 192,
         7: 200, 6: 208, 3: 216, 2: 224, 1: 232, 0: 240, 16: 248}


class Core:
    def __init__(self, path):
        self.d = open(path, 'rb').read()
        d = self.d
        self.machine = struct.unpack_from('<H', d, 18)[0]
        phoff, = struct.unpack_from('<Q', d, 32)
        phentsize, phnum = struct.unpack_from('<HH', d, 54)
        self.loads, self.notes = [], []
        for i in range(phnum):
            t, flags, off, va, _, filesz, memsz = struct.unpack_from('<IIQQQQQ', d, phoff + i * phentsize)
            if t == 1:
                self.loads.append((va, memsz, filesz, off, flags))
            elif t == 4:
                self.parse_notes(off, filesz)

    def parse_notes(self, off, size):
        end = off + size
        while off + 12 <= end:
            namesz, descsz, typ = struct.unpack_from('<III', self.d, off)
            name = self.d[off + 12:off + 12 + namesz].rstrip(b'\0')
            desc = off + 12 + ((namesz + 3) & ~3)
            self.notes.append((name, typ, self.d[desc:desc + descsz]))
            off = desc + ((descsz + 3) & ~3)

    def read(self, addr, n):
        for va, memsz, filesz, off, _ in self.loads:
            if va <= addr and addr + n <= va + filesz:
                return self.d[off + addr - va:off + addr - va + n]
        return None

    def segment(self, addr):
        for va, memsz, filesz, off, flags in self.loads:
            if va <= addr < va + memsz:
                return va, memsz, filesz, off, flags
        return None


def build_id(core, base):
    eh = core.read(base, 64)
    if not eh or eh[:4] != b'\x7fELF':
        return b''
    phoff, = struct.unpack_from('<Q', eh, 32)
    phnum, = struct.unpack_from('<H', eh, 56)
    for i in range(phnum):
        ph = core.read(base + phoff + 56 * i, 56)
        if not ph:
            return b''
        t, _, off, va, _, filesz = struct.unpack_from('<IIQQQQ', ph)
        if t != 4:
            continue
        notes = core.read(base + off, filesz) or b''
        p = 0
        while p + 12 <= len(notes):
            namesz, descsz, typ = struct.unpack_from('<III', notes, p)
            desc = p + 12 + ((namesz + 3) & ~3)
            if typ == 3 and notes[p + 12:p + 12 + namesz].rstrip(b'\0') == b'GNU':
                return notes[desc:desc + descsz]
            p = desc + ((descsz + 3) & ~3)
    return b''


class Writer:
    def __init__(self):
        self.out = bytearray(32)
        self.streams = []

    def put(self, b):
        while len(self.out) % 8:
            self.out.append(0)
        at = len(self.out)
        self.out += b
        return at

    def stream(self, typ, b):
        self.streams.append((typ, len(b), self.put(b)))

    def string(self, s):
        u = s.encode('utf-16le')
        return self.put(struct.pack('<I', len(u)) + u + b'\0\0')

    def bytes(self):
        rva = self.put(b''.join(struct.pack('<III', *s) for s in self.streams))
        struct.pack_into('<IIIIIIQ', self.out, 0, 0x504d444d, 0xa793, len(self.streams), rva, 0, 0, 0)
        return bytes(self.out)


def context(machine, regs, tp):
    if machine == EM_X86_64:
        c = bytearray(1232)
        struct.pack_into('<I', c, 48, 0x0010000b)     # MD_CONTEXT_AMD64_FULL
        struct.pack_into('<HHHHHHI', c, 56, regs[17], regs[23], regs[24], regs[25], regs[26], regs[20],
                         regs[18] & 0xffffffff)
        for r, off in AMD64.items():
            struct.pack_into('<Q', c, off, regs[r])
        return bytes(c), regs[19], regs[16]
    c = bytearray(912)
    struct.pack_into('<II', c, 0, 0x00400007, regs[33] & 0xffffffff)   # MD_CONTEXT_ARM64_FULL, cpsr
    for i in range(33):
        struct.pack_into('<Q', c, 8 + 8 * i, regs[i])
    return bytes(c), regs[31], regs[32]


def utf8(w, text):
    b = text.encode('utf-8', 'surrogateescape')
    return w.put(struct.pack('<I', len(b)) + b + b'\0')


def dictionary(w, pairs):
    body = struct.pack('<I', len(pairs)) + b''.join(struct.pack('<II', utf8(w, k), utf8(w, v)) for k, v in pairs)
    return struct.pack('<II', len(body), w.put(body))


def crashpad(w, modules, specs):
    process, per_module = [], {}
    for spec in specs:
        name, value = spec.split('=', 1)
        mod, sep, key = name.partition(':')
        if not sep:
            process.append((name, value))
            continue
        idx = [i for i, f in enumerate(modules) if f[3].endswith(mod)][0]
        per_module.setdefault(idx, []).append((key, value))
    links = []
    for idx, pairs in sorted(per_module.items()):
        simple = [(k, v) for k, v in pairs if not k.startswith('@') and k != '[]']
        lists = [v for k, v in pairs if k == '[]']
        objects = [(k[1:], v) for k, v in pairs if k.startswith('@')]
        lbody = struct.pack('<I', len(lists)) + b''.join(struct.pack('<I', utf8(w, v)) for v in lists)
        obody = struct.pack('<I', len(objects)) + b''.join(
            struct.pack('<IHHI', utf8(w, k), 1, 0, utf8(w, v)) for k, v in objects)
        info = struct.pack('<I', 1) + struct.pack('<II', len(lbody), w.put(lbody)) + dictionary(w, simple) + \
            struct.pack('<II', len(obody), w.put(obody))
        links.append(struct.pack('<III', idx, len(info), w.put(info)))
    mlist = struct.pack('<I', len(links)) + b''.join(links)
    w.stream(0x43500001, struct.pack('<I', 1) + b'\0' * 32 + dictionary(w, process) +
             struct.pack('<II', len(mlist), w.put(mlist)) + struct.pack('<IQ', 0, 0))


def exe_name(files):
    """The executable's file name, the first mapping's (the kernel's order)."""
    return files[0][3].rsplit('/', 1)[-1][:15] if files else ''


def main(argv):
    core = Core(argv[1])
    m = core.machine
    nregs = 27 if m == EM_X86_64 else 34
    threads, siginfo, auxv, files, pid, ppid = [], None, b'', [], 0, 0
    for name, typ, desc in core.notes:
        if name == b'CORE' and typ == NT_PRSTATUS:
            threads.append([struct.unpack_from('<i', desc, 32)[0],
                            list(struct.unpack_from('<%dQ' % nregs, desc, 112)), 0])
            if m == EM_X86_64:
                threads[-1][2] = threads[-1][1][21]
        elif typ == NT_ARM_TLS and threads:
            threads[-1][2] = struct.unpack_from('<Q', desc)[0]
        elif typ == NT_SIGINFO:
            siginfo = desc
        elif typ == NT_AUXV:
            auxv = desc
        elif typ == NT_FILE:
            count, page = struct.unpack_from('<QQ', desc)
            names = desc[16 + 24 * count:].split(b'\0')
            for i in range(count):
                s, e, o = struct.unpack_from('<QQQ', desc, 16 + 24 * i)
                files.append((s, e, o * page, names[i].decode(errors='replace')))
        elif typ == NT_PRPSINFO:
            pid, ppid = struct.unpack_from('<ii', desc, 24)
    w = Writer()
    info = bytearray(56)
    struct.pack_into('<HHHBB', info, 0, 9 if m == EM_X86_64 else 12, 0, 0, 2, 1)
    struct.pack_into('<I', info, 20, 0x8201)    # MD_OS_LINUX
    w.stream(7, bytes(info))
    mem, entries, crash = [], [], None
    breakpad, ip_memory = len(argv) <= 3, None
    for tid, regs, tp in threads:
        ctx, sp, pc = context(m, regs, tp)
        crva = w.put(ctx)
        seg = core.segment(sp)
        if breakpad:
            # LinuxDumper::GetStackInfo: from sp's page, 32 KiB at most
            lo = sp & ~0xfff
            stack = core.read(lo, min(32768, seg[0] + seg[2] - lo)) or b'' if seg and seg[0] <= lo else b''
        else:
            lo = sp - 128 if m == EM_X86_64 else sp
            stack = core.read(lo, seg[0] + seg[2] - lo) or b'' if seg and seg[0] <= lo else b''
        srva = w.put(stack)
        mem.append(struct.pack('<QII', lo, len(stack), srva))
        entries.append(struct.pack('<IIIIQQIIII', tid, 0, 0, 0, 0 if breakpad else tp, lo, len(stack), srva,
                                   len(ctx), crva))
        if crash is None:
            crash = (tid, len(ctx), crva)
            code_seg = core.segment(pc)
            if breakpad and code_seg:
                # the 256 bytes around the crashing thread's pc, where the core saved them
                clo, chi = max(pc - 128, code_seg[0]), min(pc + 128, code_seg[0] + code_seg[2])
                code = core.read(clo, chi - clo) if chi > clo else None
                if code:
                    ip_memory = struct.pack('<QII', clo, len(code), w.put(code))
    mem += [ip_memory] if ip_memory else []
    w.stream(3, struct.pack('<I', len(entries)) + b''.join(entries))
    w.stream(5, struct.pack('<I', len(mem)) + b''.join(mem))
    if siginfo and crash:
        signo, _, code = struct.unpack_from('<iii', siginfo)
        addr, = struct.unpack_from('<Q', siginfo, 16)
        exc = struct.pack('<II', crash[0], 0) + struct.pack('<IIQQII', signo, code & 0xffffffff, 0, addr, 0, 0)
        exc += b'\0' * (8 * 15) + struct.pack('<II', crash[1], crash[2])
        w.stream(6, exc)
    mods = []
    for s, e, o, path in files:
        if o != 0:
            continue
        end = max(fe for fs, fe, fo, fp in files if fp == path)
        bid = build_id(core, s)
        cv = w.put(struct.pack('<I', 0x4270454c) + bid) if bid else 0
        mods.append(struct.pack('<QIIII', s, end - s, 0, 0, w.string(path)) + b'\0' * 52 +
                    struct.pack('<II', len(bid) + 4 if bid else 0, cv) + b'\0' * 24)
    w.stream(4, struct.pack('<I', len(mods)) + b''.join(mods))
    maps = []
    for va, memsz, filesz, off, flags in sorted(core.loads):
        f = [x for x in files if x[0] <= va < x[1]]
        perms = ('r' if flags & PF_R else '-') + ('w' if flags & PF_W else '-') + ('x' if flags & PF_X else '-') + 'p'
        path, foff, ino = (f[0][3], f[0][2] + va - f[0][0], 1) if f else ('', 0, 0)
        maps.append('%x-%x %s %08x 00:00 %d %s' % (va, va + memsz, perms, foff, ino, path))
    w.stream(0x47670009, ('\n'.join(maps) + '\n').encode())
    if auxv:
        w.stream(0x47670008, auxv)
    if breakpad:
        w.stream(0x47670004, ('Name:\t%s\nTgid:\t%d\nPid:\t%d\nPPid:\t%d\n' %
                              (exe_name(files), pid, pid, ppid)).encode())
    else:
        w.stream(15, struct.pack('<III', 24, 1, pid) + b'\0' * 12)
    if not breakpad:
        crashpad(w, [f for f in files if f[2] == 0], argv[3:])
    open(argv[2], 'wb').write(w.bytes())


if __name__ == '__main__':
    main(sys.argv)
