"""A crash a signal handler caught, against gdb and the program's own log
(tests/t_handler.sh).  Prints PASS:/FAIL: lines.

    handler_compare.py NAME KEY=VALUE...

    json=FILE      asyncore report CORE PROG --format json of the handled run
    text=FILE      asyncore report CORE PROG of the same core
    gdb=FILE       tests/gdb_sigframe.py's JSON for that core
    base=FILE      the JSON of the same bug without the handler
    kind=KIND      the caught fault's cause kind
    action=ACTION  handled_by.action
    signal=NAME    handled_by.signal
    code=CODE      handled_by.code: a name, "null", several joined by "|",
                   or "sigframe" (the signal frame's si_code as gdb reads it;
                   where the kernel wrote no siginfo, the handler had no
                   SA_SIGINFO, null or the code the page fault's error
                   code says)
    address=ADDR   handled_by.address: 0x..., or "sigframe" (si_addr, cr2
                   where there is no siginfo)
    prefix=TEXT    the summary starts with TEXT ("base": with the base's)
    contains=TEXT  the summary contains TEXT (repeatable)

handled_by.function is gdb's: the function of the frame just above the
trampoline (the one the kernel called the handler as, unless it left by a
tail call into raise, kill or abort: then no handler function is on the
stack and it is null), null where there is no trampoline (the signal was
re-raised on the handler's return).
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle_compare import norm, same, without_call  # noqa: E402

CODES = {
    'SIGSEGV': {1: 'SEGV_MAPERR', 2: 'SEGV_ACCERR', 3: 'SEGV_BNDERR', 4: 'SEGV_PKUERR'},
    'SIGBUS': {1: 'BUS_ADRALN', 2: 'BUS_ADRERR', 3: 'BUS_OBJERR'},
    'SIGILL': {1: 'ILL_ILLOPC', 2: 'ILL_ILLOPN', 3: 'ILL_ILLADR', 4: 'ILL_ILLTRP',
               5: 'ILL_PRVOPC', 6: 'ILL_PRVREG', 7: 'ILL_COPROC', 8: 'ILL_BADSTK'},
    'SIGFPE': {1: 'FPE_INTDIV', 2: 'FPE_INTOVF', 3: 'FPE_FLTDIV', 4: 'FPE_FLTOVF',
               5: 'FPE_FLTUND', 6: 'FPE_FLTRES', 7: 'FPE_FLTINV', 8: 'FPE_FLTSUB'},
}
# What a handler ends the program with: never "the handler" itself.
MACHINERY = {norm(n) for n in (
    'raise', '__GI_raise', 'gsignal', '__pthread_kill_implementation', '__pthread_kill_internal',
    'pthread_kill', '__pthread_kill', 'kill', '__GI_kill', 'tgkill', 'abort', '__GI_abort',
    'std::process::abort', 'std::sys::pal::unix::abort_internal')}

NAME = sys.argv[1]
ARGS = {}
CONTAINS = []
for a in sys.argv[2:]:
    k, v = a.split('=', 1)
    if k == 'contains':
        CONTAINS.append(v)
    else:
        ARGS[k] = v


def report(check, ok, why=''):
    if ok:
        print('PASS: %s-%s' % (NAME, check))
    else:
        print('FAIL: %s-%s: %s' % (NAME, check, why))


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def crashing(j):
    for t in j.get('threads') or []:
        if t.get('crashing'):
            return t.get('frames') or []
    return []


def roles_of(frames):
    """Each frame's role; "absent" for a native frame without one (every
    native frame has the key), None for other kinds' frames without one."""
    return [f.get('role', 'absent' if f.get('kind', 'native') == 'native' else None)
            for f in frames]


def fname(name):
    return norm(without_call(name)) if name else None


J = load(ARGS['json'])
G = load(ARGS['gdb']) if ARGS.get('gdb') else None
B = load(ARGS['base']) if ARGS.get('base') else None
if J is None:
    report('json', False, 'no JSON report')
    sys.exit(0)
cause = J.get('cause') or {}
summary = cause.get('summary') or ''
hb = cause.get('handled_by')
K = G['trampoline'] if G else None
SF = G['sigframe'] if G else None

report('kind', cause.get('kind') == ARGS['kind'], 'cause %s, expected %s' % (json.dumps(cause), ARGS['kind']))

# handled_by
if not isinstance(hb, dict):
    report('handled_by', False, 'cause.handled_by is %s' % json.dumps(hb))
else:
    keys = {'function', 'action', 'signal', 'code', 'address'}
    report('handled_by-fields', set(hb) == keys, 'fields %s, expected %s' % (sorted(hb), sorted(keys)))
    report('handled_by-action', hb.get('action') == ARGS['action'],
           '%s, expected %s' % (hb.get('action'), ARGS['action']))
    report('handled_by-signal', hb.get('signal') == ARGS['signal'],
           '%s, expected %s' % (hb.get('signal'), ARGS['signal']))
    # function
    want = None
    if G and K is not None and K > 0:
        g = G['frames'][K - 1]['name']
        if fname(g) not in MACHINERY:
            want = g
    got = hb.get('function')
    if want is None:
        ok = got is None
    else:
        ok = got is not None and same(fname(got), fname(want))
    above = G['frames'][K - 1]['name'] if G and K else None
    report('handled_by-function', ok, '%s, expected %s (gdb: trampoline at #%s, above it %s)' %
           (json.dumps(got), json.dumps(want), K, above))
    # code
    spec = ARGS.get('code', 'null')
    if spec == 'sigframe':
        codes = CODES.get(ARGS['signal'], {})
        if SF and SF.get('signo'):
            allowed = {codes.get(SF['code'], str(SF['code']))}
        elif SF and SF.get('err') is not None:
            allowed = {None, codes.get(2 if SF['err'] & 1 else 1)}
        else:
            allowed = {None}
    else:
        allowed = {None if c == 'null' else c for c in spec.split('|')}
    report('handled_by-code', hb.get('code') in allowed,
           '%s, expected one of %s' % (json.dumps(hb.get('code')), sorted(map(json.dumps, allowed))))
    # address
    spec = ARGS.get('address')
    if spec == 'sigframe':
        if not SF:
            want_addr = None
        elif SF.get('signo'):
            want_addr = SF.get('addr')
        else:
            want_addr = SF.get('cr2')
    else:
        want_addr = int(spec, 16) if spec else None
    got = hb.get('address')
    try:
        got_addr = int(got, 16) if isinstance(got, str) and got.startswith('0x') else None
    except ValueError:
        got_addr = None
    report('handled_by-address', want_addr is not None and got_addr == want_addr,
           '%s, expected %s' % (json.dumps(got), '0x%x' % want_addr if want_addr is not None else '?'))

# The summary
why = []
prefix = ARGS.get('prefix')
if prefix == 'base':
    prefix = ((B or {}).get('cause') or {}).get('summary')
if prefix is not None and not summary.startswith(prefix):
    why.append('does not start with %r' % prefix)
for c in ['caught by'] + CONTAINS:
    if c not in summary:
        why.append('has no %r' % c)
report('summary', not why, '%r %s' % (summary, '; '.join(why)))

# The text report
try:
    with open(ARGS['text'], errors='replace') as f:
        text = f.read().splitlines()
except OSError:
    text = []
first = text[0] if text else ''
want = 'cause:       %s: %s' % (cause.get('kind'), summary)
report('text-cause', first == want, 'first line %r, expected %r' % (first, want))

# Frames and their roles
F = crashing(J)
roles = roles_of(F)
if K is None:
    bad = [i for i, r in enumerate(roles) if r in ('trampoline', 'crash_handler', 'absent')]
    g0 = G['frames'][0]['name'] if G and G['frames'] else None
    f0 = F[0].get('function') if F else None
    report('frames', not bad and F and same(fname(f0), fname(g0)),
           'gdb shows no signal frame, frame 0 %s; asyncore: frame 0 %s, roles %s' %
           (g0, f0, roles[:12]))
else:
    why = []
    if 'absent' in roles:
        why.append('frames without "role"')
    if len(F) <= K + 1:
        why.append('%d frames' % len(F))
    else:
        if roles[K] != 'trampoline':
            why.append('#%d has role %s' % (K, roles[K]))
        if any(r != 'crash_handler' for r in roles[:K]):
            why.append('#0..#%d roles %s' % (K - 1, roles[:K]))
        if roles[K + 1] != 'crash_site':
            why.append('#%d has role %s' % (K + 1, roles[K + 1]))
        g = G['frames'][K + 1]['name']
        a = F[K + 1].get('function')
        if not same(fname(a), fname(g)):
            why.append('#%d is %s, gdb %s' % (K + 1, a, g))
        extra = [i for i, r in enumerate(roles) if r == 'trampoline' and i != K]
        if extra:
            why.append('more trampolines at %s' % extra)
    report('frames', not why, '; '.join(why) + ' (gdb: %s)' %
           ', '.join('#%d %s' % (i, f['name']) for i, f in enumerate(G['frames'][:K + 2])))
    line = '#%-3d <signal handler called>' % K
    found = any(l.strip() == line for l in text)
    near = [l for l in text if '<signal handler called>' in l][:2]
    report('text-trampoline', found, 'no line %r (lines naming it: %s)' % (line, near))

# The same bug without the handler
if B is not None:
    bc = B.get('cause') or {}
    why = []
    if bc.get('kind') != ARGS['kind']:
        why.append('kind %s' % bc.get('kind'))
    if 'handled_by' not in bc or bc['handled_by'] is not None:
        why.append('handled_by %s' % json.dumps(bc.get('handled_by', 'absent')))
    if 'caught by' in (bc.get('summary') or ''):
        why.append('summary %r' % bc.get('summary'))
    br = roles_of(crashing(B))
    if any(r in ('trampoline', 'crash_handler', 'absent') for r in br):
        why.append('roles %s' % br[:8])
    report('plain', not why, 'without the handler: ' + '; '.join(why))
    report('signature', J.get('signature') == B.get('signature'),
           '%r, without the handler %r' % (J.get('signature'), B.get('signature')))
