"""gdb's view of the stacks of a bthread core, as JSON, for t_bthread.sh.

    BTHREAD_TRUTH=truth.json gdb -batch -nx -ex 'set print frame-arguments none' \\
        -x tests/gdb_bthread.py PROG CORE

TRUTH is what the fixture wrote before it crashed: the saved context of each
suspended bthread and of each worker's main task.  gdb cannot set registers
on a core, so a Python unwinder stands in: for frame 0 of the selected
thread it returns, as that frame's caller, the registers bthread_jump_fcontext
saved at a context (r12, r13, r14, r15, rbx, rbp at ctx+0x08..0x30, the
return address at ctx+0x38, rsp = ctx+0x40; on aarch64 x19..x30 at
ctx+0x40..0x98, the pc at ctx+0xa0, sp = ctx+0xb0: bRPC's layouts).  Frames 1.. are then the saved
stack as gdb's own unwinders and symbolizer see it (frame 1's pc a return
address, looked up at pc-1, as for any caller).  Prints between the marker
lines GDB_BTHREAD_BEGIN / GDB_BTHREAD_END:

    {"threads": [... as tests/gdb_frames.py ...],
     "contexts": {"0xCTX": [frames, as tests/gdb_frames.py's]}}

With BTHREAD_LOCALS=1 every frame, the threads' and the contexts', also has
its "locals" as gdb's `bt full` prints them (gdb_frames.bt_full_locals:
[[name, value]], null where gdb has no symbol table).
"""
import json
import os
import struct
import sys

import gdb
from gdb.unwinder import Unwinder, register_unwinder

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gdb_frames  # noqa: E402  (gdb's own module first)

LIMIT = 64
LOCALS = os.environ.get('BTHREAD_LOCALS') == '1'


class FrameId:
    def __init__(self, sp, pc):
        self.sp = sp
        self.pc = pc


class SavedContext(Unwinder):
    """Frame 0's caller is the context in self.regs (None: off).

    Frame 0's id takes the context's address as its stack address: gdb stops
    a backtrace whose caller frame lies below its callee ("previous frame
    inner to this frame"), and the selected thread's own stack may lie
    anywhere relative to the context's."""

    def __init__(self):
        super().__init__('bthread saved context')
        self.regs = None

    def __call__(self, pending):
        if self.regs is None or pending.level() != 0:
            return None
        u64 = gdb.lookup_type('unsigned long')
        pc, sp, size = LAYOUT[1:]
        info = pending.create_unwind_info(FrameId(gdb.Value(self.regs[sp] - size).cast(u64),
                                                  pending.read_register(pc)))
        for name, value in self.regs.items():
            info.add_saved_register(name, gdb.Value(value).cast(u64))
        return info


# Per architecture: {register: offset}, the pc's and sp's names, the size.
LAYOUTS = {
    'x86_64': ({'r12': 0x08, 'r13': 0x10, 'r14': 0x18, 'r15': 0x20, 'rbx': 0x28, 'rbp': 0x30,
                'rip': 0x38}, 'rip', 'rsp', 0x40),
    'aarch64': (dict([('x%d' % n, 0x40 + 8 * (n - 19)) for n in range(19, 31)] + [('pc', 0xa0)]),
                'pc', 'sp', 0xb0),
}
LAYOUT = None


def context_regs(ctx):
    offsets, _, sp, size = LAYOUT
    data = gdb.selected_inferior().read_memory(ctx, size).tobytes()
    regs = {name: struct.unpack_from('<Q', data, off)[0] for name, off in offsets.items()}
    regs[sp] = ctx + size
    return regs


def saved_stack(unwinder, ctx):
    unwinder.regs = context_regs(ctx)
    gdb.invalidate_cached_frames()
    frames = []
    try:
        f = gdb.newest_frame().older()
    except gdb.error:
        f = None
    while f is not None and len(frames) < LIMIT:
        frames.append(gdb_frames.frame_info(f))
        try:
            f = f.older()
        except gdb.error:
            break
    if LOCALS:      # `bt full` shows the selected thread's frame 0 first
        locals_of = gdb_frames.bt_full_locals(LIMIT + 1)
        for level, info in enumerate(frames, 1):
            if level in locals_of:
                info['locals'] = locals_of[level]
    unwinder.regs = None
    gdb.invalidate_cached_frames()
    return frames


def main():
    global LAYOUT
    arch = gdb.selected_inferior().architecture().name()
    LAYOUT = LAYOUTS['aarch64' if arch.startswith('aarch64') else 'x86_64']
    truth = json.load(open(os.environ['BTHREAD_TRUTH']))
    out = {'threads': gdb_frames.walk(LOCALS)['threads'], 'contexts': {}}
    # A thread whose newest frame is a real one: for an inline frame 0,
    # gdb asks the unwinders about the real frame under it instead.
    for t in gdb.selected_inferior().threads():
        t.switch()
        if gdb.newest_frame().type() != gdb.INLINE_FRAME:
            break
    unwinder = SavedContext()
    register_unwinder(None, unwinder, replace=True)
    ctxs = [b['context'] for b in truth['bthreads'] if b.get('context')]
    ctxs += [w['main_context'] for w in truth['workers']]
    for ctx in ctxs:
        out['contexts'][ctx] = saved_stack(unwinder, int(ctx, 16))
    print('GDB_BTHREAD_BEGIN')
    print(json.dumps(out))
    print('GDB_BTHREAD_END')


main()
