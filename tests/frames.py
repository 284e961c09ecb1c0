#!/usr/bin/env python3
"""Print each thread's function sequence from `asyncore report --format json`.

One line per thread, innermost first, frames joined by " < ":
    crashing: leaf < middle [tail call] < @async_caller < main
An async frame is prefixed "@", a tail-call frame (restored from DWARF call
sites, not on the stack) is followed by " [tail call]"; an unknown function
prints "??".
Options: --strip-params drops C++ parameter lists ("f(int)" -> "f");
--sorted sorts the non-crashing threads' lines (core order is not stable);
--suspended also prints "suspended:" lines for suspended coroutine chains.
"""
import json, re, sys

def opening_paren(text, close):
    """The index of the '(' that the ')' at CLOSE in TEXT closes, or None
    when none does."""
    depth = 0
    for i in range(close, -1, -1):
        c = text[i]
        if c == ')':
            depth += 1
        elif c == '(':
            depth -= 1
            if depth == 0:
                return i
    return None

def strip_params(name):
    if name is None:
        return name
    # drop a trailing balanced "(...)" and any cv/ref qualifiers after it
    m = re.search(r'\)\s*(const|volatile|&|&&|\s)*$', name)
    if not m:
        return name
    i = opening_paren(name, m.start())
    return name if i is None else name[:i]

def seq(frames, strip):
    out = []
    for f in frames:
        n = f.get('function') or '??'
        if strip:
            n = strip_params(n)
        out.append(('@' if f.get('kind') == 'async' else '') + n +
                   (' [tail call]' if f.get('tailcall') else ''))
    return ' < '.join(out)

def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    flags = set(a for a in sys.argv[1:] if a.startswith('--'))
    j = json.load(open(args[0]) if args else sys.stdin)
    strip = '--strip-params' in flags
    crashing, others = [], []
    for t in j.get('threads', []):
        line = seq(t.get('frames', []), strip)
        (crashing if t.get('crashing') else others).append(line)
    if '--sorted' in flags:
        others.sort()
    for l in crashing:
        print('crashing: ' + l)
    for l in others:
        print('thread: ' + l)
    if '--suspended' in flags:
        lines = sorted(seq(s.get('frames', []), strip) for s in j.get('suspended', []))
        for l in lines:
            print('suspended: ' + l)

if __name__ == '__main__':
    main()
