#!/usr/bin/env python3
"""The Go runtime's and delve's view of a Go crash, and asyncore's against them.

    go_oracle.py runtime STDERR                 the runtime's traceback as JSON
    go_oracle.py delve PROG CORE [TIMEOUT]      delve's goroutines as JSON
    go_oracle.py compare RUNTIME.json ASYNCORE.json [DELVE.json]
    go_oracle.py compare-later RUNTIME.json ASYNCORE.json
    go_oracle.py delve-compare DELVE.json ASYNCORE.json
    go_oracle.py cause RUNTIME.json ASYNCORE.json
    go_oracle.py text RUNTIME.json TEXT_REPORT

`runtime`: STDERR is what a Go program run with GOTRACEBACK=crash printed
when it crashed (Go 1.19's format: `panic: ...`, `[signal ...]`, `fatal
error: ...`, `runtime stack:`, `goroutine N [reason]:` blocks of frames
with `created by`, and after `-----` / `SIGQUIT: quit` the stacks other
threads printed).  JSON:

    {"source": "runtime",
     "panics": ["runtime error: ...", ...],     each `panic:` line's text
     "fatal": "concurrent map writes" | null,   the `fatal error:` text
     "message": the first of those: the text a cause must say,
     "signal": {"name", "description", "code", "addr", "pc"} | null,
     "runtime_stack": [FRAME...],               `runtime stack:` (a g0's)
     "goroutines": [{"id": int, "header": "chan receive, locked to thread",
                     "state": "chan receive", "locked": bool,
                     "minutes": int | null, "frames": [FRAME...],
                     "stack_unavailable": bool, "elided": bool,
                     "created_by": {"function", "file", "line", "offset",
                                    "goroutine"} | null}],
     "m_stacks": [{"header", "pc", "m", "frames"}]}   `SIGQUIT` sections' g0s
    FRAME = {"function", "args", "file", "line", "offset": "0x3ba" | null,
             "pc", "sp", "fp": "0x..." | null, "inlined": bool}

`function` is as printed: runtime.gopanic is `panic`.  A frame is inlined
when its arguments print as `(...)`.

`delve`: runs `dlv core PROG CORE` with `goroutines -g -t 100` (every
goroutine, the location of its go statement and its frames), then exits;
JSON:

    {"source": "delve", "count": N,              delve's `[N goroutines]`
     "goroutines": [{"id", "current": bool, "state": "chan receive" | null,
                     "thread": int | null,
                     "created_by": {"function", "file", "line"} | null,
                     "frames": [{"function", "file", "line", "pc"}]}]}

delve names what it cannot symbolise (C code) `???` at `?:-1`; a goroutine
on a thread (running, in a system call) shows `(thread N)` and no state.

`compare`: asyncore's `tasks` (`asyncore report CORE PROG --format json
--threads all`) against the runtime's goroutines: the same ids; the state
(the runtime's running, runnable, syscall, preempted; any other header is a
wait reason: state waiting, wait.kind that reason); frames (function, file,
line, inlined) equal in order, asyncore's runtime.gopanic as the runtime's
`panic`; for a goroutine on a thread (running, syscall) the runtime's
frames are a contiguous suffix of asyncore's, which starts at the thread's
pc (with a cgo call's C frames); pcs equal where the runtime printed pc=;
created_by equal.  With DELVE.json, also against delve: the same ids; each
OS thread delve names is the task's tid; frames from the bottom up, function
and file equal, lines equal except where delve is known to say otherwise
(its innermost frame's line is the pc's, not the call's; the caller of an
inlined frame); where delve shows `???` (C frames it cannot read) the
frames up to it are listed as differing around cgo, not failed.  Prints
the first difference first (then the others), exit 1; else one line
counting what matched, exit 0.

`compare-later`: `compare` of a runtime dump taken after asyncore read a
live process: the goroutines the runtime created for itself (created by
runtime.*: the scavenger, the GC's workers) park and wake on their own
between the two readings, so only the program's goroutines are compared.

`delve-compare`: only the comparison with delve (a core without the
runtime's traceback: gcore of a live process).
`cause`: asyncore's cause summary contains the runtime's message.
`text`: the text report has a line `goroutine N [HEADER]:` for every
goroutine, HEADER the runtime's (less its `, N minutes`).

    go_oracle.py crash CRASH kind|site|signature RUNTIME.json ASYNCORE.json
    go_oracle.py text-cause TEXT_REPORT ASYNCORE.json
    go_oracle.py tasks-equal A.json B.json

`crash`: what go_shop's crash CRASH (its argument: nil, many, index,
error, string, custom, mapwrites, deadlock) must give.  `kind`: the cause's
kind (nil: null_dereference; index, error, string, custom:
uncaught_exception; deadlock, mapwrites: abort).  `site`: the frame with
role crash_site: for a panic or a throw on a goroutine, exactly one frame
of exactly one task, the goroutine the runtime printed first (running), its
function the first of that goroutine's frames the runtime printed that is
not the runtime's (main.applyDiscount, main.lookup, main.checkout, the
closure main.checkout.func1) and its callers the runtime's (when two goroutines threw at once, either
of them); for deadlock
(the runtime's checkdead on a thread's system stack, no goroutine
running) no task has one and the crashing thread's is runtime.checkdead,
its callers those of the runtime's `runtime stack:`.  `signature`: starts
with the prefix (SIGSEGV, panic, fatal error), the site and its caller:
`SIGSEGV: main.applyDiscount < main.checkout`.
`text-cause`: the text report's first line is `cause:` then the JSON's
`KIND: SUMMARY`.
`tasks-equal`: the two reports' `tasks` are equal (a live report and its
snapshot's, two moments: the runtime's own goroutines left out): the first
difference, exit 1.
"""
import json
import re
import subprocess
import sys
import tempfile
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frames import opening_paren  # noqa: E402

# ---------------------------------------------------------------- runtime

FRAME_AT = re.compile(r'^\t(.*?):(\d+)(?: \+(0x[0-9a-f]+))?'
                      r'(?: fp=(0x[0-9a-f]+) sp=(0x[0-9a-f]+) pc=(0x[0-9a-f]+))?\s*$')
GOROUTINE = re.compile(r'^goroutine (\d+) \[(.*)\]:$')
CREATED_BY = re.compile(r'^created by (\S+)(?: in goroutine (\d+))?$')
SIGNAL = re.compile(r'^\[signal (\S+): (.*?) code=(\S+) addr=(\S+) pc=(\S+)\]$')
SIGQUIT_PC = re.compile(r'^PC=(0x[0-9a-f]+) m=(\d+)')


def split_call(line):
    """'sync.(*Mutex).Lock(...)' -> ('sync.(*Mutex).Lock', '...'): the
    arguments are the last balanced parenthesis group."""
    if not line.endswith(')'):
        return None
    i = opening_paren(line, len(line) - 1)
    return None if i is None else (line[:i], line[i + 1:-1])


def parse_header(text):
    words = text.split(', ')
    g = {'header': text, 'state': words[0], 'locked': False, 'minutes': None}
    for w in words[1:]:
        if w == 'locked to thread':
            g['locked'] = True
        elif re.fullmatch(r'\d+ minutes', w):
            g['minutes'] = int(w.split()[0])
    return g


def parse_frames(lines, i, into):
    """Frames (and a `created by`) from lines[i] on, up to a blank line or
    the next section; returns the index after them."""
    frames = into['frames']
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            break
        if line == 'goroutine running on other thread; stack unavailable':
            into['stack_unavailable'] = True
            i += 1
            continue
        if line.startswith('...') and 'frames elided' in line:
            into['elided'] = True
            i += 1
            continue
        m = CREATED_BY.match(line)
        if m and i + 1 < len(lines) and FRAME_AT.match(lines[i + 1]):
            at = FRAME_AT.match(lines[i + 1])
            into['created_by'] = {'function': m.group(1), 'file': at.group(1),
                                  'line': int(at.group(2)), 'offset': at.group(3),
                                  'goroutine': int(m.group(2)) if m.group(2) else None}
            i += 2
            continue
        call = split_call(line)
        if call and i + 1 < len(lines) and FRAME_AT.match(lines[i + 1]):
            at = FRAME_AT.match(lines[i + 1])
            frames.append({'function': call[0], 'args': call[1], 'file': at.group(1),
                           'line': int(at.group(2)), 'offset': at.group(3),
                           'fp': at.group(4), 'sp': at.group(5), 'pc': at.group(6),
                           'inlined': call[1] == '...'})
            i += 2
            continue
        if GOROUTINE.match(line) or line in ('-----', 'runtime stack:'):
            break
        i += 1      # a line of another kind (registers, notes): skipped
    return i


def parse_runtime(text):
    lines = text.split('\n')
    out = {'source': 'runtime', 'panics': [], 'fatal': None, 'message': None, 'signal': None,
           'runtime_stack': [], 'goroutines': [], 'm_stacks': []}
    by_id = {}
    in_sigquit = False
    m_pc = m_num = None
    i = 0
    while i < len(lines):
        line = lines[i]
        s = line.lstrip('\t')
        if s.startswith('panic: ') and not out['goroutines']:
            msg = s[len('panic: '):]
            msg = re.sub(r' \[recovered\]$', '', msg)
            msg = re.sub(r'\n?\tpanic: .*$', '', msg)
            out['panics'].append(msg)
        elif line.startswith('fatal error: ') and out['fatal'] is None:
            out['fatal'] = line[len('fatal error: '):]
        elif SIGNAL.match(line) and out['signal'] is None:
            m = SIGNAL.match(line)
            out['signal'] = {'name': m.group(1), 'description': m.group(2),
                             'code': m.group(3), 'addr': m.group(4), 'pc': m.group(5)}
        elif line == 'runtime stack:':
            holder = {'frames': []}
            i = parse_frames(lines, i + 1, holder)
            out['runtime_stack'] += holder['frames']
            continue
        elif line == '-----' or line.startswith('SIGQUIT: '):
            in_sigquit = True
        elif SIGQUIT_PC.match(line):
            m = SIGQUIT_PC.match(line)
            m_pc, m_num = m.group(1), int(m.group(2))
        elif GOROUTINE.match(line):
            m = GOROUTINE.match(line)
            gid = int(m.group(1))
            g = dict(parse_header(m.group(2)), id=gid, frames=[], created_by=None,
                     stack_unavailable=False, elided=False)
            i = parse_frames(lines, i + 1, g)
            if gid == 0 or (in_sigquit and gid in by_id and not by_id[gid]['stack_unavailable']):
                out['m_stacks'].append({'header': g['header'], 'pc': m_pc, 'm': m_num,
                                        'goroutine': gid, 'frames': g['frames']})
            elif gid in by_id:
                # A goroutine listed as running elsewhere, whose thread
                # printed its stack later (SIGQUIT): that stack is its.
                old = by_id[gid]
                old['frames'] = g['frames']
                old['created_by'] = old['created_by'] or g['created_by']
                old['stack_unavailable'] = False
            else:
                by_id[gid] = g
                out['goroutines'].append(g)
            continue
        i += 1
    out['message'] = out['panics'][0] if out['panics'] else out['fatal']
    return out


# ------------------------------------------------------------------ delve

DELVE_G = re.compile(r'^([* ]) Goroutine (\d+) - (\w+): (.*?):(-?\d+) (\S+) \((0x[0-9a-f]+)\)(.*)$')
DELVE_FRAME = re.compile(r'^\s+(\d+)\s+(0x[0-9a-f]+) in (.+?)\s*$')
DELVE_AT = re.compile(r'^\s+at (.*):(-?\d+)\s*$')


def parse_delve(text):
    out = {'source': 'delve', 'count': None, 'goroutines': []}
    g = None
    pending = None
    for line in text.split('\n'):
        m = DELVE_G.match(line)
        if m:
            rest = m.group(8)
            st = re.search(r'\[(.*)\]', rest)
            th = re.search(r'\(thread (\d+)\)', rest)
            g = {'id': int(m.group(2)), 'current': m.group(1) == '*',
                 'state': st.group(1) if st else None,
                 'thread': int(th.group(1)) if th else None,
                 'created_by': None, 'frames': []}
            if m.group(3) == 'Go':
                g['created_by'] = {'function': m.group(6), 'file': m.group(4),
                                   'line': int(m.group(5))}
            out['goroutines'].append(g)
            continue
        m = DELVE_FRAME.match(line)
        if m and g is not None:
            pending = {'function': m.group(3), 'pc': m.group(2)}
            continue
        m = DELVE_AT.match(line)
        if m and pending is not None:
            pending.update(file=m.group(1), line=int(m.group(2)))
            g['frames'].append(pending)
            pending = None
            continue
        m = re.match(r'^\[(\d+) goroutines\]', line)
        if m:
            out['count'] = int(m.group(1))
    return out


def run_delve(prog, core, timeout):
    with tempfile.NamedTemporaryFile('w', suffix='.dlv', delete=False) as f:
        f.write('goroutines -g -t 100\nexit\n')
        init = f.name
    # delve prints the files under its working directory relative to it:
    # run it in an empty one (and resolve any relative name against it).
    cwd = tempfile.mkdtemp()
    try:
        p = subprocess.run(['dlv', 'core', os.path.abspath(prog), os.path.abspath(core),
                            '--init', init, '--allow-non-terminal-interactive=true'],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout, cwd=cwd,
                           env=dict(os.environ, TERM='dumb'))
    except subprocess.TimeoutExpired:
        sys.exit('delve: no answer in %d s' % timeout)
    finally:
        os.unlink(init)
        os.rmdir(cwd)
    text = p.stdout.decode('utf-8', 'replace')
    out = parse_delve(text)
    for g in out['goroutines']:
        for f in g['frames'] + ([g['created_by']] if g['created_by'] else []):
            if f['file'].startswith(('./', '../')):
                f['file'] = os.path.normpath(os.path.join(cwd, f['file']))
    if not out['goroutines']:
        sys.exit('delve: no goroutines: %s' % text.strip().split('\n')[-1][:200])
    return out


# ---------------------------------------------------------------- compare

THREAD_STATES = ('running', 'runnable', 'syscall', 'preempted')


def want_state(header_state):
    """The runtime's header word -> (asyncore state, wait kind)."""
    if header_state in THREAD_STATES:
        return header_state, None
    return 'waiting', header_state


# delve's frames of a signal handler (Go's own, without cgo: no `???`).
SIGNAL_FRAMES = ('runtime.sigtramp', 'runtime.sigreturn', 'runtime.sigreturn__sigaction')
# Where a goroutine's stack and its thread's system stack meet: delve shows
# the switch (systemstack_switch) and stops following the system stack.
SWITCH_FRAMES = ('runtime.systemstack_switch', 'runtime.systemstack', 'runtime.mcall')


def is_go_name(name):
    """A Go function's name: package-qualified (runtime.main, main.(*T).m),
    or cgo's exported-function wrapper _cgoexp_HASH_name.  C functions
    (poll, crosscall2, _cgo_HASH_Cfunc_f, gcc's f.part.0 clones) are not:
    the runtime's traceback never shows them."""
    if not name:
        return False
    if name.startswith('_cgoexp_'):
        return True
    if re.search(r'\.(part|isra|constprop|cold|lto_priv)(\.\d+)?$', name):
        return False
    return '.' in name


def a_function(f):
    fn = f.get('function')
    return 'panic' if fn == 'runtime.gopanic' else fn


def a_key(f):
    return (a_function(f), f.get('file'), f.get('line'), bool(f.get('inlined')))


def r_key(f):
    return (f['function'], f['file'], f['line'], f['inlined'])


def norm_pc(pc):
    if pc is None:
        return None
    return int(pc, 16) if isinstance(pc, str) else int(pc)


def goid(v):
    """A task's id as a goroutine number: 7, "7" or "0x7"."""
    if isinstance(v, int):
        return v
    try:
        return int(str(v), 0)
    except ValueError:
        return -1


def go_tasks(aj):
    return {str(goid(t.get('id'))): t for t in aj.get('tasks') or [] if t.get('runtime') == 'go'}


def fmt_frame(k):
    return '%s %s:%s%s' % (k[0], k[1], k[2], ' [inlined]' if len(k) > 3 and k[3] else '')


def runtime_own(created_by_function):
    """A goroutine the runtime started for itself (the scavenger, the GC's
    workers, finalizers): it wakes and parks on its own schedule."""
    return (created_by_function or '').startswith('runtime.')


def compare_runtime(rj, aj, stats, later=False):
    """With LATER, the runtime's dump was taken after asyncore's reading:
    the runtime's own goroutines may have moved since (or started), so only
    the program's goroutines, which stay parked, are compared."""
    diffs = []
    tasks = go_tasks(aj)
    want = {str(g['id']): g for g in rj['goroutines']}
    if later:
        want = {i: g for i, g in want.items()
                if not runtime_own((g['created_by'] or {}).get('function'))}
        tasks = {i: t for i, t in tasks.items()
                 if not runtime_own((t.get('created_by') or {}).get('function'))}
    if not tasks:
        return ['no Go tasks in asyncore\'s report (runtime printed %d goroutines)' % len(want)]
    for i in sorted(set(want) - set(tasks), key=int):
        diffs.append('goroutine %s [%s] missing' % (i, want[i]['header']))
    for i in sorted(set(tasks) - set(want), key=int):
        diffs.append('goroutine %s (%s) listed, not printed by the runtime' % (i, tasks[i].get('fn')))
    for i in sorted(set(want) & set(tasks), key=int):
        g, t = want[i], tasks[i]
        stats['goroutines'] += 1
        state, kind = want_state(g['state'])
        wait = t.get('wait') or {}
        got = (t.get('state'), wait.get('kind') if t.get('wait') else None)
        if got != (state, kind):
            diffs.append('goroutine %s: (state, wait.kind) %r, runtime [%s] means %r'
                         % (i, got, g['header'], (state, kind)))
        cb = t.get('created_by')
        got_cb = (cb.get('function'), cb.get('file'), cb.get('line')) if cb else None
        w = g['created_by']
        want_cb = (w['function'], w['file'], w['line']) if w else None
        if got_cb != want_cb:
            diffs.append('goroutine %s: created_by %r, runtime %r' % (i, got_cb, want_cb))
        if g['stack_unavailable']:
            continue
        rf = g['frames']
        # asyncore's Go frames: the C frames it shows of a cgo call (or of
        # C calling back into Go) are not in the runtime's traceback.
        af = [f for f in t.get('frames') or [] if is_go_name(f.get('function'))]
        rk = [r_key(f) for f in rf]
        ak = [a_key(f) for f in af]
        start = 0
        if g['state'] in ('running', 'syscall'):
            start = len(ak) - len(rk)
            if start < 0 or ak[start:] != rk:
                # Say where they part: the longest common suffix.
                n = 0
                while n < min(len(ak), len(rk)) and ak[-1 - n] == rk[-1 - n]:
                    n += 1
                if n == len(rk):
                    start = len(ak) - n
                else:
                    diffs.append('goroutine %s [%s]: runtime\'s frames are no suffix of asyncore\'s; '
                                 'from the bottom, frame -%d: asyncore %s, runtime %s'
                                 % (i, g['header'], n + 1,
                                    fmt_frame(ak[-1 - n]) if n < len(ak) else '(none)',
                                    fmt_frame(rk[-1 - n])))
                    continue
        elif ak != rk:
            n = 0
            while n < min(len(ak), len(rk)) and ak[n] == rk[n]:
                n += 1
            diffs.append('goroutine %s [%s]: frame %d: asyncore %s, runtime %s (%d frames, runtime %d)'
                         % (i, g['header'], n, fmt_frame(ak[n]) if n < len(ak) else '(none)',
                            fmt_frame(rk[n]) if n < len(rk) else '(none)', len(ak), len(rk)))
            continue
        stats['frames'] += len(rk)
        for j, f in enumerate(rf):
            if f['pc'] is None:
                continue
            apc = norm_pc(af[start + j].get('pc'))
            if apc != int(f['pc'], 16):
                diffs.append('goroutine %s: frame %s pc %s, runtime pc=%s'
                             % (i, f['function'], hex(apc) if apc is not None else None, f['pc']))
            else:
                stats['pcs'] += 1
    return diffs


def compare_delve(dj, aj, stats):
    diffs, notes = [], []
    tasks = go_tasks(aj)
    have = {str(g['id']): g for g in dj['goroutines']}
    for i in sorted(set(have) - set(tasks), key=int):
        diffs.append('delve: goroutine %s missing (delve shows it)' % i)
    for i in sorted(set(tasks) - set(have), key=int):
        diffs.append('delve: goroutine %s listed, delve does not show it' % i)
    for i in sorted(set(have) & set(tasks), key=int):
        d, t = have[i], tasks[i]
        stats['goroutines'] += 1
        if d['thread'] is not None and t.get('tid') != d['thread']:
            diffs.append('delve: goroutine %s: tid %r, delve says thread %d' % (i, t.get('tid'), d['thread']))
        df = d['frames']
        af = t.get('frames') or []
        if not df:
            continue
        # From the bottom (runtime.goexit) up, Go frames only: delve shows
        # C frames as `???` (or not at all, as those of C calling back into
        # Go); asyncore names them.
        lenient = False
        if any(f['function'] == '???' for f in df):
            lenient, why = True, 'around C frames delve cannot read'
        elif any(f['function'] in SIGNAL_FRAMES for f in df):
            lenient, why = True, 'delve shows the signal handler\'s frames, not the interrupted ones'
        elif d['thread'] is not None and t.get('state') == 'syscall':
            lenient, why = True, 'in a system call, delve shows the thread\'s frames'
        # A delve frame's index counted from its top, and whether the one
        # above it has the same pc (it is then the caller of an inlined
        # frame, whose line delve computes otherwise).
        top_index = {id(f): n for n, f in enumerate(df)}
        inl_caller = {id(df[n]) for n in range(1, len(df)) if df[n]['pc'] == df[n - 1]['pc']}
        dr = [f for f in reversed(df) if f['function'] != '???']
        ar = [f for f in reversed(af) if is_go_name(f.get('function'))]
        x = y = 0
        while x < len(dr) and y < len(ar):
            f, a = dr[x], ar[y]
            if (f['function'], f['file']) == (a.get('function'), a.get('file')):
                stats['frames'] += 1
                if f['line'] != a.get('line'):
                    if top_index[id(f)] == 0 or id(f) in inl_caller:
                        stats['line_quirks'] += 1
                    elif lenient:
                        notes.append('goroutine %s: %s, %s line %s, delve %s'
                                     % (i, why, f['function'], a.get('line'), f['line']))
                        stats['view_differ'].add(i)
                    else:
                        diffs.append('delve: goroutine %s: %s line %s, delve %s'
                                     % (i, f['function'], a.get('line'), f['line']))
                x += 1
                y += 1
                continue
            # Disagreement.  delve cannot read C frames (`???`): around
            # them (a cgo call, a signal handler's frames) its view of the
            # goroutine differs; nor does it show a goroutine in a system
            # call from where it entered the call, but from its thread.
            # Noted, not failed.
            if not lenient and (f['function'] in SWITCH_FRAMES or a.get('function') in SWITCH_FRAMES):
                lenient, why = True, 'at a switch to the system stack, whose frames delve shows otherwise'
            if lenient:
                notes.append('goroutine %s: %s, delve %s %s:%s, asyncore %s %s:%s'
                             % (i, why, f['function'], f['file'], f['line'],
                                a.get('function'), a.get('file'), a.get('line')))
                stats['view_differ'].add(i)
                break
            diffs.append('delve: goroutine %s: frame %d from the bottom: asyncore %s %s:%s, delve %s %s:%s'
                         % (i, y, a.get('function'), a.get('file'), a.get('line'),
                            f['function'], f['file'], f['line']))
            break
        else:
            if x < len(dr) and not lenient:
                diffs.append('delve: goroutine %s: delve shows %d more frames on top: %s'
                             % (i, len(dr) - x, dr[x]['function']))
            elif y < len(ar) and not lenient and d['thread'] is None:
                diffs.append('delve: goroutine %s: asyncore shows %d more frames on top: %s'
                             % (i, len(ar) - y, ar[y].get('function')))
        cb, dcb = t.get('created_by'), d['created_by']
        if cb and dcb and (cb.get('function'), cb.get('file'), cb.get('line')) != \
                (dcb['function'], dcb['file'], dcb['line']):
            diffs.append('delve: goroutine %s: created_by %s %s:%s, delve %s %s:%s'
                         % (i, cb.get('function'), cb.get('file'), cb.get('line'),
                            dcb['function'], dcb['file'], dcb['line']))
    return diffs, notes


def cmd_compare(args, later=False):
    rj = json.load(open(args[0])) if args[0] != '-' else None
    aj = json.load(open(args[1]))
    dj = json.load(open(args[2])) if len(args) > 2 else None
    diffs, notes, summary = [], [], ''
    if rj is not None:
        rs = {'goroutines': 0, 'frames': 0, 'pcs': 0}
        diffs = compare_runtime(rj, aj, rs, later)
        summary = 'runtime: %d goroutines, %d frames, %d pcs matched' % (rs['goroutines'], rs['frames'], rs['pcs'])
    if dj is not None:
        ds = {'goroutines': 0, 'frames': 0, 'line_quirks': 0, 'view_differ': set()}
        d, notes = compare_delve(dj, aj, ds)
        diffs += d
        summary += ('; ' if summary else '') + ('delve: %d goroutines, %d frames matched (%d lines delve says otherwise: '
                    'innermost or inlined callers), %d goroutines delve sees otherwise (C frames, signal handlers, stack switches, system calls)'
                    % (ds['goroutines'], ds['frames'], ds['line_quirks'], len(ds['view_differ'])))
    if diffs:
        for line in diffs[:40]:
            print(line)
        if len(diffs) > 40:
            print('... %d more differences' % (len(diffs) - 40))
        print(summary)
        return 1
    print(summary)
    for n in notes:
        print('  note: ' + n)
    return 0


def cmd_cause(args):
    rj = json.load(open(args[0]))
    aj = json.load(open(args[1]))
    msg = rj['message']
    cause = aj.get('cause') or {}
    summary = cause.get('summary') or ''
    if not msg:
        print('the runtime printed no panic or fatal error')
        return 1
    if msg not in summary:
        print('cause summary %r does not say the runtime\'s %r' % (summary, msg))
        return 1
    print('cause says %r' % msg)
    return 0


def cmd_text(args):
    rj = json.load(open(args[0]))
    text = open(args[1], errors='replace').read()
    got = {}
    for m in re.finditer(r'^goroutine (\d+) \[(.*)\]:$', text, re.M):
        got.setdefault(int(m.group(1)), m.group(2))
    missing, differ = [], []
    for g in rj['goroutines']:
        header = ', '.join(w for w in g['header'].split(', ') if not re.fullmatch(r'\d+ minutes', w))
        if g['id'] not in got:
            missing.append('goroutine %d [%s]' % (g['id'], header))
        else:
            h = ', '.join(w for w in got[g['id']].split(', ') if not re.fullmatch(r'\d+ minutes', w))
            if h != header:
                differ.append('goroutine %d [%s], runtime [%s]' % (g['id'], h, header))
    if missing or differ:
        if missing:
            print('%d of %d goroutine headers missing, first %s' % (len(missing), len(rj['goroutines']), missing[0]))
        for d in differ[:10]:
            print(d)
        return 1
    print('%d goroutine headers' % len(rj['goroutines']))
    return 0


# What each crash of fixtures/go_shop gives: the cause's kind, the
# signature's prefix and the crash site's function.
CRASHES = {
    'nil': ('null_dereference', 'SIGSEGV', 'main.applyDiscount'),
    'many': ('null_dereference', 'SIGSEGV', 'main.applyDiscount'),
    'index': ('uncaught_exception', 'panic', 'main.lookup'),
    'error': ('uncaught_exception', 'panic', 'main.checkout'),
    'string': ('uncaught_exception', 'panic', 'main.checkout'),
    'custom': ('uncaught_exception', 'panic', 'main.checkout'),
    'mapwrites': ('abort', 'fatal error', 'main.checkout.func1'),
    'deadlock': ('abort', 'fatal error', 'runtime.checkdead'),
}


# The runtime's functions that panic or throw, as its traceback names them.
THROWS = {'panic', 'runtime.fatal', 'runtime.throw', 'runtime.fatalthrow', 'runtime.fatalpanic'}


def is_runtime_frame(fn):
    return fn == 'panic' or fn.startswith('runtime.')


def site_frames(aj, rj, crash):
    """(asyncore's frames from the crash site on, the runtime's from the
    same function on, where) or a string saying what is wrong."""
    want = CRASHES[crash][2]
    in_tasks = [(t, i) for t in aj.get('tasks') or [] for i, f in enumerate(t['frames'])
                if f.get('role') == 'crash_site']
    if crash == 'deadlock':
        if in_tasks:
            return 'goroutine %s has a crash_site frame (%s); no goroutine runs at a deadlock' % (
                in_tasks[0][0]['id'], in_tasks[0][0]['frames'][in_tasks[0][1]].get('function'))
        th = [t for t in aj['threads'] if t['tid'] == aj.get('crashing_tid')]
        if not th:
            return 'no crashing thread %s' % aj.get('crashing_tid')
        frames = th[0]['frames']
        sites = [i for i, f in enumerate(frames) if f.get('role') == 'crash_site']
        if len(sites) != 1:
            return 'the crashing thread has %d crash_site frames' % len(sites)
        rt = [f['function'] for f in rj['runtime_stack']]
        where = 'thread %s' % th[0]['tid']
    else:
        if len(in_tasks) != 1:
            return '%d crash_site frames in tasks (%s), not 1' % (
                len(in_tasks), ', '.join('goroutine %s' % t['id'] for t, _ in in_tasks))
        task, i = in_tasks[0]
        first = rj['goroutines'][0] if rj['goroutines'] else None
        if not first or first['state'] != 'running':
            return 'the runtime printed no running goroutine first'
        # Two goroutines may throw at once (both map writers see the
        # other's write): the runtime prints `fatal error` twice and each
        # of them in runtime.fatal; the one that killed the process may be
        # either.
        throwing = [g for g in rj['goroutines'] if g['state'] == 'running' and
                    any(f['function'] in THROWS for f in g['frames'])] or [first]
        found = [g for g in throwing if g['id'] == task['id']]
        if not found:
            return 'the crash site is in goroutine %s, the runtime\'s panicking goroutine is %s' % (
                task['id'], ' or '.join(str(g['id']) for g in throwing))
        first = found[0]
        frames, sites = task['frames'], [i]
        rt = [f['function'] for f in first['frames']]
        where = 'goroutine %s' % task['id']
    mine = [f.get('function') for f in frames[sites[0]:]]
    if mine[0] != want:
        return '%s: crash site %s, not %s' % (where, mine[0], want)
    if crash != 'deadlock':
        runtime_site = next((f for f in rt if not is_runtime_frame(f)), None)
        if runtime_site != want:
            return 'the runtime\'s first frame not its own is %s, not %s' % (runtime_site, want)
    if want not in rt:
        return 'the runtime printed no %s' % want
    theirs = rt[rt.index(want):]
    return mine, theirs, where


def cmd_crash(args):
    crash, aspect = args[0], args[1]
    rj = json.load(open(args[2]))
    aj = json.load(open(args[3]))
    if crash not in CRASHES:
        print('no crash %r' % crash)
        return 1
    kind, prefix, site = CRASHES[crash]
    cause = aj.get('cause') or {}
    if aspect == 'kind':
        if cause.get('kind') != kind:
            print('cause kind %r, not %r (%s)' % (cause.get('kind'), kind, cause.get('summary')))
            return 1
        print('cause kind %s' % kind)
        return 0
    got = site_frames(aj, rj, crash)
    if isinstance(got, str):
        print(got)
        return 1
    mine, theirs, where = got
    if aspect == 'site':
        if mine != theirs:
            print('%s: from the crash site %s, the runtime %s' % (where, ' < '.join(map(str, mine)),
                                                                  ' < '.join(theirs)))
            return 1
        print('%s: crash site %s, then %s as the runtime printed them'
              % (where, site, ' < '.join(mine[1:4]) + (' ...' if len(mine) > 4 else '')))
        return 0
    if aspect == 'signature':
        sig = aj.get('signature') or ''
        want = '%s: %s' % (prefix, ' < '.join(mine[:2]))
        if not (sig == want or sig.startswith(want + ' <')):
            print('signature %r does not start %r' % (sig, want))
            return 1
        print('signature %s' % sig)
        return 0
    print('no aspect %r' % aspect)
    return 1


def cmd_text_cause(args):
    lines = open(args[0], errors='replace').read().split('\n')
    aj = json.load(open(args[1]))
    cause = aj.get('cause') or {}
    want = '%s: %s' % (cause.get('kind'), cause.get('summary'))
    first = lines[0] if lines else ''
    m = re.match(r'^cause:\s+(.*)$', first)
    if not m or m.group(1) != want:
        print('first line %r, the JSON\'s cause %r' % (first[:200], want[:200]))
        return 1
    print('%s' % first[:120])
    return 0


def diff_json(a, b, path):
    if type(a) != type(b):
        return '%s: %r against %r' % (path, a, b)
    if isinstance(a, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return '%s.%s only in %s' % (path, k, 'the first' if k in a else 'the second')
            d = diff_json(a[k], b[k], '%s.%s' % (path, k))
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = diff_json(x, y, '%s[%d]' % (path, i))
            if d:
                return d
        if len(a) != len(b):
            return '%s: %d against %d entries' % (path, len(a), len(b))
        return None
    return None if a == b else '%s: %r against %r' % (path, a, b)


def without_since(tasks):
    """TASKS with wait.since and blocked_on.since left out: it grows between two readings."""
    for t in tasks:
        for key in ('wait', 'blocked_on'):
            if t.get(key):
                t[key].pop('since', None)
    return tasks


def program_tasks(tasks):
    """TASKS less the goroutines the runtime created for itself: two
    readings of a live process are two moments, and those move between."""
    return [t for t in tasks if not (t.get('runtime') == 'go' and
                                     runtime_own((t.get('created_by') or {}).get('function')))]


def cmd_tasks_equal(args):
    a = program_tasks(without_since(json.load(open(args[0])).get('tasks') or []))
    b = program_tasks(without_since(json.load(open(args[1])).get('tasks') or []))
    if not a:
        print('no tasks in %s' % args[0])
        return 1
    d = diff_json(a, b, 'tasks')
    if d:
        print(d[:400])
        return 1
    print('%d tasks, %d frames equal' % (len(a), sum(len(t['frames']) for t in a)))
    return 0


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    cmd, args = argv[1], argv[2:]
    if cmd == 'runtime' and len(args) == 1:
        json.dump(parse_runtime(open(args[0], errors='replace').read()), sys.stdout, indent=1)
        print()
        return 0
    if cmd == 'delve' and len(args) in (2, 3):
        json.dump(run_delve(args[0], args[1], int(args[2]) if len(args) > 2 else 600), sys.stdout, indent=1)
        print()
        return 0
    if cmd == 'compare' and len(args) in (2, 3):
        return cmd_compare(args)
    if cmd == 'compare-later' and len(args) == 2:
        return cmd_compare(args, later=True)
    if cmd == 'delve-compare' and len(args) == 2:
        return cmd_compare(['-', args[1], args[0]])
    if cmd == 'cause' and len(args) == 2:
        return cmd_cause(args)
    if cmd == 'text' and len(args) == 2:
        return cmd_text(args)
    if cmd == 'crash' and len(args) == 4:
        return cmd_crash(args)
    if cmd == 'text-cause' and len(args) == 2:
        return cmd_text_cause(args)
    if cmd == 'tasks-equal' and len(args) == 2:
        return cmd_tasks_equal(args)
    sys.exit(__doc__)


if __name__ == '__main__':
    sys.exit(main(sys.argv))
