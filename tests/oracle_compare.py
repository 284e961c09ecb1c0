#!/usr/bin/env python3
"""Compare asyncore's threads with gdb's, thread by thread, frame by frame.

    oracle_compare.py ASYNCORE.json GDB.json [LABEL]

ASYNCORE.json is `asyncore report CORE BINARY --format json --threads all
--no-async`; GDB.json is what tests/gdb_frames.py printed for the same core.
Threads are matched by LWP id (asyncore's "tid").  Every frame must have the
same function, the same line where gdb knows it (see 7), the same
inline status (asyncore "inlined", gdb INLINE_FRAME) and the same tail-call
status (asyncore "tailcall", gdb TAILCALL_FRAME: a frame both restore from
DW_TAG_call_site data for a function that left by a jump).
Every frame's arguments must read as gdb's `bt` prints them with `set print
frame-arguments scalars` (see the normalisations on arguments), rendered
from asyncore's "args" the way its text report renders them.
Prints the first difference of each thread ("thread LWP frame N: why") and
exits 1 when there is any, 0 when every thread agrees.

Normalisations, each one a documented difference between the two tools and
nothing more:
 1. Names are compared without parameter lists, template arguments, lambda
    braces ("{lambda(int)#1}"), return types, cv/ref qualifiers and ELF
    symbol versions ("pthread_kill@@GLIBC_2.34"), GCC clone suffixes
    ("[clone .actor]", ".isra.0", ".cold"): gdb prints DWARF names
    ("shapes::run_all", "operator()"), asyncore demangled linkage names
    ("shapes::run_all(std::vector<int, ...> const&)").
 2. After 1, a name matches when one is a "::"-suffix of the other: gdb names a
    lambda's body "operator()", asyncore "ns::f::{lambda(int)#1}::operator()".
 3. gdb's "<signal handler called>" frame matches "__restore_rt".
 4. A frame gdb cannot name ("??") matches any name asyncore gives it; a frame
    asyncore cannot name (null) matches only "??".
 5. Aliases: names are compared without glibc's "__GI_" prefix and without
    leading underscores, because the two tools pick different symbols for
    one address ("__clone3" and "clone3", "__GI_raise" and "raise").
 6. GCC coroutines: gdb shows a coroutine's actor twice at one pc, as an
    INLINE frame named after the coroutine ("leaf_coro") over the actor
    ("leaf_coro(_Z9leaf_corov.Frame *)"); the DWARF holds no inlined
    subroutine at that pc (eu-addr2line -i shows one level), so an INLINE
    gdb frame followed by a frame with the same pc and the same normalised
    name counts as one frame.
 7. Lines are compared where gdb knows one and both name the same file: when
    several line-table rows share a call's address (a zero-length inlined
    range, as in folly_cpp's blockingWaitGet), gdb may take the row of the
    inlined header ("coroutine:120") where libdw and addr2line take the
    caller's ("prog.cpp:237").
 8. A frame asyncore has no DWARF for ("args": null) matches gdb's "()":
    gdb prints the same empty list for "no parameters" and "no debug info".
 9. Arguments are compared on every frame except those 6 merges: there gdb
    splits one DWARF subprogram (the coroutine's actor) into two frames and
    gives each the parameters of a different function (the ramp's empty
    list, or the actor's frame_ptr as <optimized out> at a pc where its
    location list has it in a register), so neither is gdb's reading of
    that frame's DWARF.
10. gdb runs without auto-loaded Python (libstdc++'s pretty printers): what
    a printer shows ("std::vector of length 4, capacity 4 = {...}") is the
    library's Python, not gdb's; without it gdb prints "..." for such an
    aggregate, as asyncore does.
11. An aggregate argument asyncore shows as "..." matches gdb's "<error
    reading variable: ...>": gdb reads a Rust aggregate whose type has
    variant parts (enums) to resolve its type, and reports the read that
    failed; asyncore reads no aggregate (frame-arguments scalars).
12. Rust names from the symbol table (no DWARF): gdb demangles minimal
    symbols verbosely, with a legacy symbol's hash ("::h0123456789abcdef")
    and v0's crate disambiguators ("std[e28293b1aa0f68bd]::"); asyncore
    drops both, as gdb's names from DWARF do.
13. An entry value gdb fails to read (", depth@entry=<error reading variable:
    value has been optimized out>": aarch64's gdb-multiarch, for a
    parameter of a function called through a pointer) matches none:
    asyncore shows no entry value it cannot resolve.
gdb runs in the C locale, so bytes over 0x7f in strings are octal escapes
in both tools; nothing else about arguments is normalised.
"""
import json
import os
import re
import sys

CALL = 'operator\x01'
AGGREGATE_READ = re.compile(r'=<error reading variable: Cannot access memory at address 0x[0-9a-f]+>')
ENTRY_ERROR = re.compile(r', [\w.]+@entry=<error reading variable: [^>]*>')
QUALIFIERS = re.compile(r'(\s+(const|volatile|noexcept|&&|&))+$')


def drop_groups(s, open_c, close_c):
    out, depth = [], 0
    for c in s:
        if c == open_c:
            depth += 1
        elif c == close_c and depth > 0:
            depth -= 1
        elif depth == 0:
            out.append(c)
    return ''.join(out)


def norm(name):
    if name is None or name == '??':
        return None
    if name == '<signal handler called>':
        return '__restore_rt'
    n = re.sub(r'@.*$', '', name)
    n = re.sub(r'::h[0-9a-f]{16}$', '', n)
    n = re.sub(r'(\w)\[[0-9a-f]+\]', r'\1', n)
    n = re.sub(r'\s*\[clone [^\]]*\]', '', n)
    n = re.sub(r'\.(isra|constprop|part|lto_priv)\.\d+|\.cold\b', '', n)
    n = n.replace('operator()', CALL)
    # operator<, operator<<, operator-> ...: keep them out of the <...> pass
    n = re.sub(r'operator\s*([^\w\s(\x01]+)',
               lambda m: 'operator' + m.group(1).encode().hex(), n)
    n = drop_groups(n, '<', '>')
    n = drop_groups(n, '(', ')')
    n = drop_groups(n, '{', '}')
    n = QUALIFIERS.sub('', n.strip())
    n = n.split(' ')[-1]                 # return type of template functions
    n = re.sub(r'(::)+', '::', n).strip(':')
    n = re.sub(r'^__GI_', '', n).lstrip('_')
    return n.replace(CALL, 'operator()')


def same(a, g):
    """a: asyncore's normalised name, g: gdb's."""
    if g is None:
        return True
    if a is None:
        return False
    return a == g or a.endswith('::' + g) or g.endswith('::' + a)


def without_call(name):
    """NAME without a parameter list at its end."""
    if not name or not name.endswith(')'):
        return name
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        depth += {')': 1, '(': -1}.get(name[i], 0)
        if depth == 0:
            return name[:i].rstrip()
    return name


def gdb_frames(t):
    """gdb's frames of thread t, after normalisation 6 (names equal but for
    the actor's parameter list: two Rust closures of one function,
    "f::{closure#0}" inlined in "f::{closure#1}", stay two frames)."""
    frames = list(t['frames'])
    out = []
    for i, f in enumerate(frames):
        nxt = frames[i + 1] if i + 1 < len(frames) else None
        if (f.get('type') == 'INLINE' and nxt is not None and nxt.get('pc') == f.get('pc')
                and norm(nxt.get('name')) is not None
                and without_call(nxt.get('name')) == without_call(f.get('name'))):
            frames[i + 1] = dict(nxt, file=f.get('file'), line=f.get('line'), args=None)
            continue
        out.append(f)
    return out


def render_args(args):
    """asyncore's arguments as its text report (and gdb's bt) writes them."""
    out = []
    for x in args or []:
        name, value, entry = x.get('name') or '', x.get('value') or '', x.get('entry_value')
        if entry is not None and x.get('entry_equal'):
            out.append('%s=%s@entry=%s' % (name, name, value))
        elif entry is not None:
            out.append('%s=%s, %s@entry=%s' % (name, value, name, entry))
        else:
            out.append('%s=%s' % (name, value))
    return ', '.join(out)


def args_diff(a, g):
    """Why asyncore's arguments of frame a differ from gdb's, or None."""
    if 'args' not in g or g['args'] is None:
        return None                      # gdb's line could not be parsed
    got = render_args(a.get('args'))
    want = ENTRY_ERROR.sub('', g['args'])
    if got != want and got != AGGREGATE_READ.sub('=...', want):
        return '%s args (%s), gdb (%s)' % (a.get('function'), got, g['args'])
    return None


def frame_diff(a, g):
    """Why asyncore's frame a differs from gdb's frame g, or None."""
    if not same(norm(a.get('function')), norm(g.get('name'))):
        return 'asyncore %r, gdb %r' % (a.get('function'), g.get('name'))
    if g.get('file') and g.get('line'):
        want = '%s:%s' % (g['file'], g['line'])
        got = '%s:%s' % (os.path.basename(a.get('file') or '?'), a.get('line'))
        if got != want and os.path.basename(a.get('file') or '?') == g['file']:
            return '%s at %s, gdb says %s' % (a.get('function'), got, want)
    if bool(a.get('inlined')) != (g.get('type') == 'INLINE'):
        return '%s: asyncore inlined=%s, gdb frame type %s' % (
            a.get('function'), bool(a.get('inlined')), g.get('type'))
    if bool(a.get('tailcall')) != (g.get('type') == 'TAILCALL'):
        return '%s: asyncore tailcall=%s, gdb frame type %s' % (
            a.get('function'), bool(a.get('tailcall')), g.get('type'))
    return args_diff(a, g)


STATS = {'frames': 0, 'args': 0}


def count(a, g):
    if g.get('args') is not None:
        STATS['frames'] += 1
        STATS['args'] += len(a.get('args') or [])


def compare(aj, gj, label):
    diffs = []
    gthreads = {t['lwp']: t for t in gj['threads']}
    athreads = {t['tid']: t for t in aj.get('threads', [])}
    for lwp in sorted(set(gthreads) - set(athreads)):
        diffs.append('%s: thread %d: in gdb, missing from asyncore' % (label, lwp))
    for lwp in sorted(set(athreads) - set(gthreads)):
        diffs.append('%s: thread %d: in asyncore, unknown to gdb' % (label, lwp))
    for lwp in sorted(set(gthreads) & set(athreads)):
        g = gdb_frames(gthreads[lwp])
        a = [f for f in athreads[lwp].get('frames', []) if f.get('kind', 'native') == 'native']
        for i in range(max(len(a), len(g))):
            if i >= len(a) or i >= len(g):
                why = 'asyncore has %d frames, gdb %d' % (len(a), len(g))
            else:
                why = frame_diff(a[i], g[i])
                count(a[i], g[i])
            if why:
                diffs.append('%s: thread %d frame %d: %s' % (label, lwp, i, why))
                diffs.append('    asyncore: ' + ' < '.join(str(f.get('function')) for f in a[:i + 3]))
                diffs.append('    gdb:      ' + ' < '.join(str(f.get('name')) for f in g[:i + 3]))
                break
    return diffs


def main():
    aj = json.load(open(sys.argv[1]))
    gj = json.load(open(sys.argv[2]))
    label = sys.argv[3] if len(sys.argv) > 3 else 'core'
    diffs = compare(aj, gj, label)
    for d in diffs:
        print(d)
    if os.environ.get('ORACLE_STATS'):
        with open(os.environ['ORACLE_STATS'], 'a') as f:
            f.write('%s %d %d\n' % (label, STATS['frames'], STATS['args']))
    return 1 if diffs else 0


if __name__ == '__main__':
    sys.exit(main())
