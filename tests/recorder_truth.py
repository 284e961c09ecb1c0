#!/usr/bin/env python3
"""Every recorder ring's indices and every event (order, timestamp,
location, function, message) of a JSON report against the fixture's own
dump (recorder.truth).  MODE elfe compares function names without
parameters and ignores locations (the ELFE layout has none).
Usage: recorder_truth.py TRUTH REPORT.json MODE; exit 1 with the
differences printed."""
import json, sys
truth, js, mode = sys.argv[1:4]
rings, events, inflight = {}, {}, {}
for line in open(truth):
    f = line.rstrip('\n').split('\t')
    if f[0] == 'RING':
        rings[f[1]] = dict(size=int(f[2]), writer=int(f[3]), reader=int(f[4]), commit=int(f[5]))
    elif f[0] == 'EVENT':
        events.setdefault(f[1], []).append(f[2:7])
    elif f[0] == 'INFLIGHT':
        inflight[f[1]] = inflight.get(f[1], 0) + 1
j = json.load(open(js))
got = {r['name']: r for r in j['recorders']}
errors = []
if sorted(got) != sorted(rings):
    errors.append('rings: got %s, want %s' % (sorted(got), sorted(rings)))
def norm(e, elfe):
    order, ts, loc, fn, msg = [str(x if x is not None else '') for x in e]
    if elfe:
        loc, fn = '', fn.split('(')[0]
    return (int(order), int(ts), loc, fn, msg)
for name, want in rings.items():
    r = got.get(name)
    if not r:
        continue
    for k, v in want.items():
        if r[k] != v:
            errors.append('%s.%s: got %s, want %s' % (name, k, r[k], v))
    if r['in_flight'] != inflight.get(name, 0):
        errors.append('%s.in_flight: got %s, want %s' % (name, r['in_flight'], inflight.get(name, 0)))
    w = sorted(norm(e, mode == 'elfe') for e in events.get(name, []))
    g = sorted(norm((e['order'], e['timestamp'], e['location'], e['function'], e['message']),
                    mode == 'elfe') for e in r['events'])
    if r['recovered'] != len(w):
        errors.append('%s.recovered: got %s, want %s' % (name, r['recovered'], len(w)))
    for a, b in zip(g, w):
        if a != b:
            errors.append('%s event: got %s, want %s' % (name, a, b))
    if len(g) != len(w):
        errors.append('%s: %d events, want %d' % (name, len(g), len(w)))
tl = [t['order'] for t in j['timeline']]
if tl != sorted(tl) or len(tl) != sum(len(r['events']) for r in j['recorders']):
    errors.append('timeline not every event merged by order')
for e in errors[:15]:
    print('   ', e)
sys.exit(1 if errors else 0)
