"""gdb's view of the stacks of a bthread core, as JSON, for t_bthread.sh.

    BTHREAD_TRUTH=truth.json gdb -batch -nx -ex 'set print frame-arguments none' \\
        -x tests/gdb_bthread.py PROG CORE

TRUTH is what the fixture wrote before it crashed: the saved context of each
suspended bthread and of each worker's main task.  gdb cannot set registers
on a core, so a Python unwinder stands in: for frame 0 of the selected
thread it returns, as that frame's caller, the registers bthread_jump_fcontext
saved at a context (r12, r13, r14, r15, rbx, rbp at ctx+0x08..0x30, the
return address at ctx+0x38, rsp = ctx+0x40).  Frames 1.. are then the saved
stack as gdb's own unwinders and symbolizer see it (frame 1's pc a return
address, looked up at pc-1, as for any caller).  Prints between the marker
lines GDB_BTHREAD_BEGIN / GDB_BTHREAD_END:

    {"threads": [... as tests/gdb_frames.py ...],
     "contexts": {"0xCTX": [frames, as tests/gdb_frames.py's]}}
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
        info = pending.create_unwind_info(FrameId(gdb.Value(self.regs['rsp'] - 0x40).cast(u64),
                                                  pending.read_register('rip')))
        for name, value in self.regs.items():
            info.add_saved_register(name, gdb.Value(value).cast(u64))
        return info


def context_regs(ctx):
    w = struct.unpack('<8Q', gdb.selected_inferior().read_memory(ctx, 0x40).tobytes())
    return {'r12': w[1], 'r13': w[2], 'r14': w[3], 'r15': w[4], 'rbx': w[5], 'rbp': w[6],
            'rip': w[7], 'rsp': ctx + 0x40}


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
    unwinder.regs = None
    gdb.invalidate_cached_frames()
    return frames


def main():
    truth = json.load(open(os.environ['BTHREAD_TRUTH']))
    out = {'threads': gdb_frames.walk()['threads'], 'contexts': {}}
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
