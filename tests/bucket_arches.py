#!/usr/bin/env python3
"""bucket_arches.py < CSV > JSON: the architectures each bucket of the bucket
page must show, from `asyncore query --format csv` of

    SELECT coalesce(signature_hash, ''), arch, count(*) FROM cores GROUP BY 1, 2

as {signature_hash: "x86_64 (2), aarch64 (1)"}: most cores first, then by
name (html_top.c's order)."""
import csv
import json
import sys

rows = list(csv.reader(sys.stdin))[1:]
buckets = {}
for h, arch, n in rows:
    buckets.setdefault(h, []).append((-int(n), arch))
print(json.dumps({h: ", ".join("%s (%d)" % (a, -n) for n, a in sorted(v)) for h, v in buckets.items()}))
