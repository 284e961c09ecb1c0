"""gdb's view of a core, as JSON, for the oracle tests.

Run inside gdb (the same settings as the oracle command
`gdb -batch -nx -ex 'set print frame-arguments none'
     -ex 'set backtrace past-main on' -ex 'thread apply all bt'`):

    gdb -batch -nx -ex 'set print frame-arguments none' \
        -ex 'set backtrace past-main on' -x tests/gdb_frames.py PROG CORE

It walks every thread with the same unwinder `bt` uses (newest frame, then
older() until None) and prints one JSON object between the marker lines
GDB_FRAMES_BEGIN / GDB_FRAMES_END:

    {"threads": [{"num", "lwp", "current", "frames": [{"name", "pc", "type",
                  "file", "line", "module"}]}]}

"type" is NORMAL, INLINE, TAILCALL, SIGTRAMP, ... so the comparison can
drop the tail-call frames gdb synthesises from DW_TAG_call_site data (the
one documented difference: asyncore shows only frames that exist).
"""
import json
import os

import gdb

TYPES = {}
for _n in ('NORMAL_FRAME', 'DUMMY_FRAME', 'INLINE_FRAME', 'TAILCALL_FRAME',
           'SIGTRAMP_FRAME', 'ARCH_FRAME', 'SENTINEL_FRAME'):
    if hasattr(gdb, _n):
        TYPES[getattr(gdb, _n)] = _n[:-len('_FRAME')]

MAIN = os.path.basename(gdb.current_progspace().filename or '') or None
LIMIT = int(os.environ.get('GDB_FRAMES_LIMIT', '5000'))


def frame_info(f):
    d = {'name': None, 'pc': None, 'type': TYPES.get(f.type(), str(f.type())),
         'file': None, 'line': None}
    try:
        d['name'] = f.name()
    except gdb.error:
        pass
    try:
        d['pc'] = '0x%x' % f.pc()
    except gdb.error:
        pass
    try:
        lib = gdb.solib_name(f.pc())
        d['module'] = os.path.basename(lib) if lib else MAIN
    except gdb.error:
        d['module'] = None
    try:
        sal = f.find_sal()
        if sal.symtab is not None:
            d['file'] = os.path.basename(sal.symtab.filename)
            d['line'] = sal.line
    except gdb.error:
        pass
    return d


def walk():
    out = []
    inf = gdb.selected_inferior()
    try:
        current = gdb.selected_thread()
    except gdb.error:
        current = None
    cur_num = current.num if current is not None else None
    for t in sorted(inf.threads(), key=lambda t: t.num):
        t.switch()
        frames = []
        try:
            f = gdb.newest_frame()
        except gdb.error:
            f = None
        while f is not None and len(frames) < LIMIT:
            frames.append(frame_info(f))
            try:
                f = f.older()
            except gdb.error:
                break
        out.append({'num': t.num, 'lwp': t.ptid[1] or t.ptid[0],
                    'current': t.num == cur_num, 'frames': frames})
    return {'threads': out}


if __name__ == '__main__':      # not when imported by tests/gdb_bthread.py
    print('GDB_FRAMES_BEGIN')
    print(json.dumps(walk()))
    print('GDB_FRAMES_END')
