#!/usr/bin/env python3
"""serve_dom.py KIND DOM [EXPECT...]: checks of a page `asyncore serve`
answered, as headless Chromium built it (--dump-dom), one "PASS: ..." or
"FAIL: ..." line each.

KIND "buckets": EXPECT the number of buckets; every bucket is an article
with a count, a signature linked to /bucket/HASH and a chart.
KIND "bucket": EXPECT the number of cores; a row per core linked to
/core/ID, an example stack whose functions link to /search.
KIND "core": EXPECT the crashing function; the crash page of the report.
KIND "search": EXPECT the query; at least one bucket and core found.
All: the page's own inline script only, nothing loaded from elsewhere
(links stay on the server), no event handler, no markup a core injected
(body has no data-pwned)."""
import html.parser
import sys


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def text(self):
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def classes(self):
        return (self.attrs.get("class") or "").split()

    def walk(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.walk()

    def find(self, tag=None, cls=None):
        return [n for n in self.walk() if (tag is None or n.tag == tag) and (cls is None or cls in n.classes())]


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


class Builder(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", [], None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.cur)
        self.cur.children.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


failed = False


def check(name, ok, detail=""):
    global failed
    failed |= not ok
    print(("PASS: " if ok else "FAIL: ") + name + ("" if ok or not detail else ": " + str(detail)[:300]))


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
    arts = root.find("article", "bucket")
    check("serve buckets: one article per bucket (%s)" % n, len(arts) == int(n), len(arts))
    check("serve buckets: each bucket links to its page",
          all(a.find("a") and a.find("a")[0].attrs["href"].startswith("/bucket/") for a in arts))
    check("serve buckets: each bucket has a count and a trend chart",
          all(a.find("span", "count") and a.find("svg") for a in arts))
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


kind, dom = sys.argv[1], open(sys.argv[2], encoding="utf-8").read()
b = Builder()
b.feed(dom)
bodies = b.root.find("body")
common(kind, b.root, bodies[0] if bodies else None)
{"buckets": buckets, "bucket": bucket, "core": core, "search": search}[kind](b.root, *sys.argv[3:])
sys.exit(1 if failed else 0)
