#!/usr/bin/env python3
"""crashpad_compare.py REPORT.json LLDB.txt BINARY: a Crashpad minidump's
report against lldb's `thread backtrace all` of the same file (lldb told
where the libraries named by soname alone lie).  The crashing thread is
lldb's marked one, the others follow in the file's order.  For each thread,
the return addresses into BINARY that lldb shows, less those outside
BINARY's executable segments (lldb's guesses where it found no CFI), must
begin the report's own; and each thread waiting in pthread_cond_*wait must
wait on the condition variable lldb shows as that call's argument.
Exit 1 naming the first thread that differs; else a line of what agreed."""
import json
import re
import struct
import sys


def executable_ranges(path):
    with open(path, "rb") as f:
        head = f.read(64)
        phoff, = struct.unpack_from("<Q", head, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    ranges = []
    for i in range(phnum):
        p_type, p_flags, _, p_vaddr, _, _, p_memsz, _ = struct.unpack_from("<IIQQQQQQ", table, i * phentsize)
        if p_type == 1 and p_flags & 1:
            ranges.append((p_vaddr, p_vaddr + p_memsz))
    return ranges


def unfinished(rax):
    """Whether RAX is what a system call not yet finished leaves there: a
    restart code or -EINTR (a stop interrupted it), -ENOSYS (at entry)."""
    r = int(rax, 16) - (1 << 64) if rax and int(rax, 16) >> 63 else int(rax or "0", 16)
    return r == -4 or r == -38 or -516 <= r <= -512


def lldb_threads(path):
    threads = []
    for line in open(path, errors="replace"):
        line = line.rstrip()
        m = re.match(r"(\*?)\s*thread #\d+", line.strip())
        if m and "frame #" not in line:
            threads.append({"crashing": m.group(1) == "*", "frames": []})
            continue
        m = re.search(r"frame #\d+: (0x[0-9a-f]+) ([^` ]+)(`(\S+?)\(([^)]*)\))?", line)
        if m and threads:
            threads[-1]["frames"].append((int(m.group(1), 16), m.group(2), m.group(4), m.group(5) or ""))
    return threads


def main():
    report = json.load(open(sys.argv[1]))
    lldb = lldb_threads(sys.argv[2])
    name = sys.argv[3].rsplit("/", 1)[-1]
    code = executable_ranges(sys.argv[3])
    crashing = [t for t in lldb if t["crashing"]]
    order = crashing + [t for t in lldb if not t["crashing"]]
    if len(order) != len(report["threads"]):
        print("lldb shows %d threads, the report %d" % (len(order), len(report["threads"])))
        return 1
    base = {m["path"]: int(m["start"], 16) for m in report["modules"]}
    start = next(v for k, v in base.items() if k.endswith("/" + name))
    frames = conds = returned = 0
    for ours, theirs in zip(report["threads"], order):
        mine = [int(f["pc"], 16) for f in ours["frames"] if (f["module"] or "").endswith("/" + name)]
        seen = [pc for pc, mod, _, _ in theirs["frames"]
                if mod == name and any(lo <= pc - start < hi for lo, hi in code)]
        if mine[:len(seen)] != seen:
            print("thread %d: lldb %s, the report %s" % (ours["tid"], [hex(p) for p in seen],
                                                          [hex(p) for p in mine]))
            return 1
        frames += len(seen)
        for _, _, fn, args in theirs["frames"]:
            m = re.search(r"cond=(0x[0-9a-f]+)", args)
            if fn and "pthread_cond" in fn and m:
                b = ours["blocked_on"] or {}
                if not b and not unfinished(ours["registers"].get("rax")):
                    returned += 1   # caught after its futex call returned (a timeout)
                    break
                if b.get("kind") != "condition" or int(b.get("object") or "0", 16) != int(m.group(1), 16):
                    print("thread %d: lldb waits on cond=%s, the report %s" % (ours["tid"], m.group(1), b))
                    return 1
                conds += 1
                break
    print("%d threads, %d of lldb's frames in %s, %d condition waits agree, %d returned from the call" %
          (len(order), frames, name, conds, returned))
    return 0


sys.exit(main())
