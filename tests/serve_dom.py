#!/usr/bin/env python3
"""serve_dom.py KIND DOM [EXPECT...]: checks of a page `asyncore serve`
answered, as headless Chromium built it (--dump-dom), one "PASS: ..." or
"FAIL: ..." line each.

KIND "buckets": EXPECT the number of buckets; every bucket is a table row
with a count, a sparkline, a signature linked to /bucket/HASH, its cause and
its first and last seen.
KIND "bucket": EXPECT the number of cores; a row per core linked to
/core/ID, an example stack whose functions link to /search.
KIND "core": EXPECT the crashing function; the crash page of the report.
KIND "search": EXPECT the query; at least one bucket and core found.
All: the page's own inline script only, nothing loaded from elsewhere
(links stay on the server), no event handler, no markup a core injected
(body has no data-pwned)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dom import check, finish, load  # noqa: E402


def common(kind, root, body):
    check("serve %s: the page came up" % kind, bool(body and body.text().strip()))
    scripts = root.find("script")
    check("serve %s: one script, the page's own, inline" % kind,
          len(scripts) == 1 and "src" not in scripts[0].attrs, [s.attrs for s in scripts])
    outside = [n.attrs for n in root.walk()
               if n.tag in ("link", "img", "iframe", "object") or "src" in n.attrs
               or ("href" in n.attrs and not n.attrs["href"].startswith(("/", "#", "?")))]
    check("serve %s: nothing loaded, every link on the server" % kind, not outside, outside)
    handlers = [(n.tag, a) for n in root.walk() for a in n.attrs if a.startswith("on")]
    check("serve %s: no element carries an event handler" % kind, not handlers, handlers)
    check("serve %s: no script from a core ran" % kind, body is not None and "data-pwned" not in body.attrs)


def hrefs(root, prefix):
    return [n.attrs["href"] for n in root.find("a") if n.attrs.get("href", "").startswith(prefix)]


def buckets(root, n):
    rows = root.find("tr", "bucket")
    check("serve buckets: a table row per bucket (%s)" % n, len(rows) == int(n), len(rows))
    check("serve buckets: no bucket in detail on the list (that is /bucket/HASH)", not root.find("article", "bucket"))
    check("serve buckets: each row's signature links to its bucket's page",
          all(r.find("td", "sig")[0].find("a")[0].attrs["href"].startswith("/bucket/") for r in rows))
    check("serve buckets: each row has a count, a trend sparkline, cause, first and last seen",
          all(r.find("span", "count") and r.find("svg", "spark") and r.find("td", "cause")
              and len(r.find("td", "seen")) == 2 for r in rows))
    check("serve buckets: the filters and sort links are there",
          root.find("form", "filters") and len(hrefs(root, "/?sort=")) == 4)


def bucket(root, n):
    cores = hrefs(root, "/core/")
    check("serve bucket: a link per core (%s)" % n, len(cores) == int(n), cores)
    frames = root.find("li", "frame")
    check("serve bucket: the example stack, its crashing frame marked",
          frames and "crash" in frames[0].classes())
    check("serve bucket: the example stack's functions link to their search",
          any(h.startswith("/search?q=") for h in hrefs(root, "/search")))


def core(root, fn):
    h1 = root.find("h1")[0].text() if root.find("h1") else ""
    check("serve core: the title names the crashing function (%s)" % fn, fn in h1, h1)
    frames = root.find("section")[0].find("li", "frame") if root.find("section") else []
    check("serve core: the crashing thread first, frame 0 marked", frames and "crash" in frames[0].classes())
    check("serve core: the modules are listed", any(s.attrs.get("id") == "modules" for s in root.find("section")))


def search(root, q):
    check("serve search: the box holds the query (%s)" % q,
          any(i.attrs.get("value") == q for i in root.find("input")))
    check("serve search: buckets and cores found", hrefs(root, "/bucket/") and hrefs(root, "/core/"))


kind = sys.argv[1]
root, body = load(sys.argv[2])
common(kind, root, body)
{"buckets": buckets, "bucket": bucket, "core": core, "search": search}[kind](root, *sys.argv[3:])
finish()
