#!/usr/bin/env python3
"""html_dom.py KIND DOM [JSON]: checks of a page as the browser built it
(Chromium's --dump-dom), one "PASS: ..." or "FAIL: ..." line each.

KIND "report": DOM of `report --format html`, JSON the same core's
`report --format json` (the oracle): the crashing function, the signal, the
source file, every timeline event with its message, the modules' paths.
KIND "top": DOM of `top --format html` [ARCHES], JSON the rows of
`top --format json`: a table row per bucket with its count, signature and
sparkline, then each bucket in detail (its chart, stack);
ARCHES (optional, a JSON object: signature_hash -> "x86_64 (2), aarch64 (1)",
from the store's cores) the architectures each bucket must show.
Both: nothing from outside the file, no markup injected by a core."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dom import check, finish, load  # noqa: E402


def common(kind, root, body):
    check(kind + ": the page came up (a body with content)", bool(body and body.text().strip()))
    scripts = root.find("script")
    check(kind + ": one script, the page's own, inline", len(scripts) == 1 and "src" not in scripts[0].attrs,
          [s.attrs for s in scripts])
    check(kind + ": nothing loaded from outside the file (no link, img, iframe, object, src or url())",
          not root.find("link") and not root.find("img") and not root.find("iframe") and not root.find("object")
          and not any("src" in n.attrs or "href" in n.attrs and not n.attrs["href"].startswith("#")
                      for n in root.walk())
          and "url(" not in "".join(s.text() for s in root.find("style")))
    handlers = [(n.tag, a) for n in root.walk() for a in n.attrs if a.startswith("on")]
    check(kind + ": no element carries an event handler", not handlers, handlers)
    check(kind + ": no script from a core ran (body has no data-pwned)", body is not None and "data-pwned" not in body.attrs,
          body.attrs if body is not None else None)


def report(root, body, j):
    crash = [t for t in j["threads"] if t["crashing"]][0]
    f0 = crash["frames"][0]
    h1 = root.find("h1")[0].text()
    check("report: the title names the signal (%s)" % j["signal"]["name"], j["signal"]["name"] in h1, h1)
    check("report: the title names the crashing function (%s)" % f0["function"], f0["function"] in h1, h1)
    frames = root.find("section")[0].find("li", "frame")
    check("report: the crashing thread comes first, with every frame",
          root.find("section")[0].attrs.get("id") == "crashing" and len(frames) == len(crash["frames"]),
          (len(frames), len(crash["frames"])))
    first = frames[0] if frames else None
    check("report: frame 0 is marked as the crashing frame and names %s" % f0["function"],
          first is not None and "crash" in first.classes() and first.find("span", "fn")[0].text() == f0["function"])
    src = first.find("span", "src")[0].text() if first and first.find("span", "src") else ""
    check("report: frame 0 shows its source file and line (%s:%s)" % (f0["file"], f0["line"]),
          src == "%s:%d" % (f0["file"], f0["line"]), src)
    cur = [(l.find("span", "ln")[0].text(), l.find("code")[0].text()) for l in first.find("div", "sl")
           if "cur" in l.classes()] if first else []
    if os.path.isfile(f0["file"]):
        lines = open(f0["file"], encoding="utf-8", errors="replace").read().split("\n")
        want = [(str(f0["line"]), lines[f0["line"] - 1].expandtabs(8).rstrip())]
    else:
        want = []
    check("report: frame 0 shows its source line, marked, as its file holds it (%s)" % want,
          cur == want and len(first.find("div", "sl")) == (5 if want else 0), cur)
    dots = root.find("circle", "ev")
    check("report: the timeline draws every event (%d)" % len(j["timeline"]), len(dots) == len(j["timeline"]),
          len(dots))
    messages = [e["message"] for e in j["timeline"]]
    titles = [d.find("title")[0].text() for d in dots]
    check("report: each event's message is its hover text, in order",
          len(titles) == len(messages) and all(t.endswith(": " + m) for t, m in zip(titles, messages)),
          list(zip(titles, messages))[:3])
    rows = [r.find("td", "msg")[0].text() for r in root.find("tr") if r.find("td", "msg")]
    check("report: the event table holds the messages as text",
          [r.replace(" in flight", "") for r in rows] == messages[-len(rows):] and len(rows) > 0, rows[:3])
    check("report: the crash is marked on the timeline",
          any("crash" in t.text() for t in root.find("text", "crashlabel")) and root.find("line", "crashline"))
    hostile = [m for m in messages if "<" in m]
    check("report: markup from the core reads as text (%d messages)" % len(hostile),
          hostile and all(h in rows for h in hostile), hostile)
    mods = [td.text() for tr in root.find("section") if tr.attrs.get("id") == "modules" for td in tr.find("td")]
    check("report: every module path is listed as text",
          all(m["path"] in mods for m in j["modules"] if m["path"]), [m["path"] for m in j["modules"]])
    others = [d for d in root.find("details", "thread")]
    check("report: the other threads are collapsible (%d)" % (len(j["threads"]) - 1),
          len(others) == len(j["threads"]) - 1 and not any("open" in d.attrs for d in others))


def top(root, body, rows):
    arches = json.load(open(sys.argv[4])) if len(sys.argv) > 4 else None
    table = root.find("tr", "bucket")
    check("top: a table row per signature (%d)" % len(rows), len(table) == len(rows), len(table))
    for t, r in zip(table, rows):
        count = t.find("span", "count")[0].text()
        sig = t.find("span", "signature")[0].text()
        spark = sum(int(x.find("title")[0].text().split(": ")[1].split()[0]) for x in t.find("rect", "spark"))
        check("top: row of %s has its count, signature and a sparkline of its crashes" % r["signature_hash"],
              count == str(r["count"]) and sig == r["signature"] and 0 < spark <= r["count"]
              and t.find("svg", "spark"), (count, sig, spark))
    buckets = root.find("article", "bucket")
    check("top: each bucket in detail below the table (%d)" % len(rows), len(buckets) == len(rows), len(buckets))
    for b, r in zip(buckets, rows):
        count = b.find("span", "count")[0].text()
        sig = b.find("span", "signature")[0].text()
        check("top: bucket %s has its count and signature" % r["signature_hash"],
              count == str(r["count"]) and sig == r["signature"], (count, sig))
        bars = b.find("rect", "bar")
        check("top: bucket %s charts its crashes per day" % r["signature_hash"],
              sum(int(x.find("title")[0].text().split(": ")[1].split()[0]) for x in bars) == r["count"])
        if arches is not None:
            shown = [d.text() for d in b.find("dd", "arch")]
            check("top: bucket %s shows its cores' architectures (%s)"
                  % (r["signature_hash"], arches.get(r["signature_hash"] or "")),
                  shown == [arches.get(r["signature_hash"] or "")], shown)
        stack = b.find("li", "frame")
        check("top: bucket %s shows an example stack" % r["signature_hash"],
              stack and "crash" in stack[0].classes() and r["signature"].split(": ")[1].split(" < ")[0]
              in [s.find("span", "fn")[0].text() for s in stack])


kind = sys.argv[1]
root, body = load(sys.argv[2])
common(kind, root, body)
oracle = json.load(open(sys.argv[3]))
(report if kind == "report" else top)(root, body, oracle)
finish()
