"""gdb's view of a core, as JSON, for the oracle tests.

Run inside gdb (the same settings as the oracle command
`gdb -batch -nx -ex 'set print frame-arguments scalars'
     -ex 'set backtrace past-main on' -ex 'thread apply all bt'`), in the C
locale (bytes over 0x7f print as octal escapes whatever the terminal):

    LC_ALL=C gdb -batch -nx -ex 'set print frame-arguments scalars' \
        -ex 'set backtrace past-main on' -x tests/gdb_frames.py PROG CORE

It walks every thread with the same unwinder `bt` uses (newest frame, then
older() until None) and prints one JSON object between the marker lines
GDB_FRAMES_BEGIN / GDB_FRAMES_END:

    {"threads": [{"num", "lwp", "current", "frames": [{"name", "pc", "type",
                  "file", "line", "module", "args"}]}]}

"args" is the text between the parentheses after the function's name in
gdb's own `bt` line for that frame ("acct=0x... <global_acct>, cents=250"),
exactly as gdb prints it, or null when the line could not be parsed.

"type" is NORMAL, INLINE, TAILCALL, SIGTRAMP, ...: the comparison matches
INLINE with asyncore's "inlined" and TAILCALL (a frame gdb restores from
DW_TAG_call_site data for a function that left by a jump) with its
"tailcall".
"""
import json
import os
import re

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


def skip_quoted(line, i, q):
    """Index after the quote that closes the one at line[i]."""
    i += 1
    while i < len(line) and line[i] != q:
        i += 2 if line[i] == '\\' else 1
    return i + 1


def args_of(line, name):
    """The argument list in a `bt` line of the frame called NAME."""
    m = re.match(r'#\d+\s+(?:0x[0-9a-f]+ in )?', line)
    if not m:
        return None
    rest = line[m.end():]
    head = (name or '??') + ' ('
    if not rest.startswith(head):
        return None
    i, depth, start = len(head), 1, len(head)
    while i < len(rest):
        c = rest[i]
        if c in '"\'':
            i = skip_quoted(rest, i, c)
            continue
        if c == '(':
            depth += 1
        elif c == ')':
            depth -= 1
            if depth == 0:
                return rest[start:i]
        i += 1
    return None


def bt_lines():
    """gdb's `bt` of the selected thread: frame level -> line."""
    out = {}
    try:
        text = gdb.execute('bt', to_string=True)
    except gdb.error:
        return out
    for line in text.splitlines():
        m = re.match(r'#(\d+)\s', line)
        if m:
            out[int(m.group(1))] = line
    return out


def bt_full_locals(limit=None):
    """The locals of the selected thread's frames as gdb's `bt full` (of
    LIMIT frames) prints them, by frame level: [[name, value]], [] for "No
    locals.", None where gdb has no symbol table (tests/locals_compare.py
    reads its lines, which needs tests/ on sys.path)."""
    from locals_compare import read_line
    frames, by_level = [], {}
    try:
        text = gdb.execute('bt full' + (' %d' % limit if limit else ''), to_string=True)
    except gdb.error:
        return {}
    for line in text.splitlines():
        if read_line(frames, line) and line.startswith('#'):
            by_level[int(line[1:].split()[0])] = frames[-1]
    return {level: None if f[1] is None else [list(v) for v in f[1]]
            for level, f in by_level.items()}


def walk(with_locals=False):
    """Every thread's frames; WITH_LOCALS: each with its "locals" too
    (bt_full_locals's, absent where `bt full` printed no frame)."""
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
        lines = bt_lines()
        locals_of = bt_full_locals(LIMIT) if with_locals else {}
        try:
            f = gdb.newest_frame()
        except gdb.error:
            f = None
        while f is not None and len(frames) < LIMIT:
            info = frame_info(f)
            info['args'] = args_of(lines.get(len(frames), ''), info['name'])
            if len(frames) in locals_of:
                info['locals'] = locals_of[len(frames)]
            frames.append(info)
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
