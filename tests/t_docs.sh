#!/usr/bin/env bash
# The documentation stays complete and true:
# - every option `asyncore --help` lists for a command is in the man page
#   (doc/asyncore.1: its SYNOPSIS, COMMANDS or OPTIONS for that command) and
#   in the manual (a doc/*.md page that names the command);
# - every option the man page names for a command is accepted by it: the
#   command runs with the option (and a harmless value) and arguments that
#   stop it before any work (a missing core, no such process, a store in no
#   directory, a required option left out), and is not rejected as a usage
#   error about that option ("unknown option", "unexpected argument",
#   "takes no value", "needs a value");
# - every relative link of README.md and doc/*.md resolves (file and anchor);
# - README.md is the front page: at most 150 lines, `make demo` and the CI's
#   test command first.
source "$(dirname "$0")/lib.sh"

[ -x "$ASYNCORE" ] || { fail "docs: no asyncore at $ASYNCORE (run make)"; exit 0; }
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
"$ASYNCORE" --help >"$W/help" 2>&1 || { fail "docs: asyncore --help exits 0"; exit 0; }
mkdir -p "$W/dir"

python3 - "$ROOT" "$W/help" "$ASYNCORE" "$W" <<'PY'
import glob, os, re, subprocess, sys

root, help_path, asyncore, work = sys.argv[1:5]
COMMANDS = ["store init", "report", "snapshot", "minicore", "collect", "ingest", "query", "top",
            "resign", "serve", "runtimes"]
OPT = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-z])(?![\w-])")

def result(ok, name, why=""):
    print(("PASS: docs: %s" % name) if ok else ("FAIL: docs: %s%s" % (name, ": " + why if why else "")))

def command_of(words):
    """The command a synopsis or tag starts with ("asyncore CORE" is report)."""
    words = words.strip()
    for c in COMMANDS:
        if words == c or words.startswith(c + " "):
            return c
    return "report" if words[:1].isupper() else None

def add(table, cmd, opt):
    table.setdefault(cmd, set()).add(opt)

# ---- asyncore --help -------------------------------------------------------
help_opts = {}
text = open(help_path).read()
cmd = None
lines = text.splitlines()
i = 0
while i < len(lines):
    line = lines[i]
    m = re.match(r"(?:usage: |\s+)asyncore (.*)", line)
    if m and not line.lstrip().startswith("--"):
        head = m.group(1)
        if head.startswith("--"):
            cmd = "asyncore"
        else:
            cmd = command_of(head)
        synopsis = re.split(r"\s{3,}", head)[0]      # the text before its description column
        for o in OPT.findall(synopsis):
            add(help_opts, cmd, o)
    elif cmd and re.match(r"\s{20,}\S", line) and not re.match(r"\s{40,}", line):
        for o in OPT.findall(line.strip()):            # a synopsis continued
            add(help_opts, cmd, o)
    m = re.match(r"(report|ingest) options:$", line)
    if m:
        cmd = None
        c = m.group(1)
        i += 1
        while i < len(lines) and lines[i].strip():
            t = re.match(r"  (-[-a-z0-9]+(?:, -[-a-z0-9]+)*)\s*(.*)", lines[i])
            if t:
                also = re.search(r"\((?:also|and) ([a-z, ]+)", lines[i])
                targets = [c] + ([w.strip() for w in also.group(1).split(",")] if also else [])
                for o in OPT.findall(t.group(1)):
                    for tc in (["asyncore"] if o in ("--help", "--version") else targets):
                        add(help_opts, tc, o)
            i += 1
        continue
    m = re.match(r"(snapshot|minicore|collect) options: (.*)", line)
    if m:
        cmd = None
        c, para = m.group(1), m.group(2)
        while i + 1 < len(lines) and lines[i + 1].startswith("  "):
            i += 1
            para += " " + lines[i]
        for o in OPT.findall(para):
            add(help_opts, c, o)
    if not line.strip():
        cmd = None
    i += 1
result(len(help_opts.get("report", ())) >= 20 and all(c in help_opts for c in COMMANDS),
       "asyncore --help lists every command's options (%d commands)" % len(help_opts),
       "missing: %s" % [c for c in COMMANDS if c not in help_opts])

# ---- the man page ----------------------------------------------------------
man = open(os.path.join(root, "doc/asyncore.1")).read()
def unman(s):
    s = re.sub(r"\\f[BIRP]", "", s).replace("\\-", "-").replace('"', " ")
    return re.sub(r"^\.[A-Z]+ ?", "", s, flags=re.M)
sections = re.split(r"^\.SH ", man, flags=re.M)
sect = {s.split("\n", 1)[0].strip(): s for s in sections[1:]}
man_opts = {}
# SYNOPSIS: one command per .br chunk; a chunk starting with blanks continues the last.
cmd = None
for chunk in re.split(r"^\.br\n", sect["SYNOPSIS"].split("\n", 1)[1], flags=re.M):
    words = " ".join(unman(chunk).split())
    if words.startswith("asyncore"):
        rest = words[len("asyncore"):].strip()
        cmd = "asyncore" if rest.startswith("--") else command_of(rest)
    for o in OPT.findall(words):
        add(man_opts, cmd, o)
# COMMANDS: each .TP's tag names the command, the paragraph its options.
for item in re.split(r"^\.TP\n", sect["COMMANDS"], flags=re.M)[1:]:
    tag, body = (item.split("\n", 1) + [""])[:2]
    c = command_of(unman(tag))
    for o in OPT.findall(unman(item)):
        add(man_opts, c, o)
# OPTIONS: .SS COMMAND, each .TP's tag its options.
for sub in re.split(r"^\.SS ", sect["OPTIONS"], flags=re.M)[1:]:
    title = sub.split("\n", 1)[0].strip()
    c = "asyncore" if title == "asyncore" else command_of(title)
    if not c:
        result(False, "man page OPTIONS subsection '%s' names a command" % title)
        continue
    for item in re.split(r"^\.TP\n", sub, flags=re.M)[1:]:
        for o in OPT.findall(unman(item.split("\n", 1)[0])):
            add(man_opts, c, o)

# ---- the manual ------------------------------------------------------------
pages = {p: open(p).read() for p in sorted(glob.glob(os.path.join(root, "doc/*.md")))}
def in_manual(c, o):
    pat = re.compile(r"(?<![\w-])" + re.escape(o) + r"(?![\w-])")
    names = ["asyncore " + c, "`%s`" % c, "`%s " % c] if c != "asyncore" else ["asyncore"]
    return [os.path.basename(p) for p, t in pages.items() if pat.search(t) and any(n in t for n in names)]

for c in sorted(help_opts):
    for o in sorted(help_opts[c]):
        result(o in man_opts.get(c, ()), "%s %s (in --help) is in the man page for %s" % (c, o, c))
        result(bool(in_manual(c, o)), "%s %s (in --help) is in the manual, on a page naming %s" % (c, o, c))

# ---- every option the man page names is accepted ---------------------------
missing = os.path.join(work, "no-such-dir", "x")
VALUES = {"--format": "json", "--threads": "all", "--recorder-tail": "5", "--recorder-format": "library",
          "--sysroot": work + "/dir", "--debug-dir": work + "/dir", "--max-frames": "10",
          "--color": "never", "--signature-lists": work + "/dir", "--runtime": missing + ".json",
          "--max-memory": "1G", "--timeout": "10", "--pid": "2147483646", "--max-pause": "10",
          "--thread": "1", "--db": missing + ".db", "--jobs": "1", "-j": "1", "--binary": missing,
          "--journal-dir": work + "/dir", "--limit": "3", "--listen": "127.0.0.1:0",
          "-o": work + "/out.core", "--output": work + "/out.core", "--dir": missing,
          "--keep": "mini", "--max-size": "1M"}
OPTIONAL = {"--locals": "all"}
def argv_for(c, o):
    opt = [o] + ([VALUES[o]] if o in VALUES else [])
    if o in OPTIONAL:
        opt = ["%s=%s" % (o, OPTIONAL[o])]
    if c == "asyncore":
        return [o]
    if c == "report":
        return ["report"] + opt + ([] if o == "--pid" else [missing + ".core"])
    if c == "snapshot":
        return ["snapshot", "2147483646"] + opt + ([] if o in ("-o", "--output") else ["-o", work + "/out.core"])
    if c == "minicore":
        return ["minicore", missing + ".core"] + opt + ([] if o in ("-o", "--output") else ["-o", work + "/out.core"])
    if c == "collect":
        # Never both --dir and --uninstall, never --db, --dir and --install: the
        # command must stop at its usage check, before it touches core_pattern.
        if o in ("--install", "--uninstall"):
            return ["collect", "--install", "--uninstall"]
        return ["collect"] + opt
    return c.split() + opt        # no --db (or --db in no directory): a usage error or no store
REJECTED = re.compile(r"unknown option|unexpected argument -|takes no value|needs a value|not one of|"
                      r"must be|is not a")
for c in sorted(man_opts):
    for o in sorted(man_opts[c]):
        if c not in COMMANDS + ["asyncore"]:
            continue
        argv = argv_for(c, o)
        try:
            p = subprocess.run([asyncore] + argv, stdin=subprocess.DEVNULL, capture_output=True,
                               text=True, timeout=60, cwd=work)
            err, rc = p.stderr.strip(), p.returncode
        except subprocess.TimeoutExpired:
            err, rc = "still running after 60 s: it did work", -1
        bad = rc == -1 or (REJECTED.search(err) and (o in err or "unknown option" in err))
        result(not bad, "%s %s (in the man page) is accepted" % (c, o),
               "asyncore %s: exit %d: %s" % (" ".join(argv), rc, err.splitlines()[0] if err else ""))

# ---- commands: --help and the man page agree -------------------------------
for c in COMMANDS:
    result(re.search(r"^\.B asyncore %s\b" % re.escape(c).replace("\\ ", " "), man, re.M) is not None,
           "the man page's SYNOPSIS has asyncore %s" % c)

# ---- links -----------------------------------------------------------------
def slug(heading):
    h = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return h.replace(" ", "-")
def anchors(path):
    text = open(path).read()
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return {slug(m) for m in re.findall(r"^#+ (.*)$", text, re.M)}
docs = [os.path.join(root, "README.md")] + list(pages)
for page in docs:
    text = open(page).read()
    text_nocode = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    links = re.findall(r"\]\(([^)\s]+)\)", text_nocode)
    bad = []
    for link in links:
        if re.match(r"[a-z]+:", link):
            continue
        target, _, anchor = link.partition("#")
        path = os.path.normpath(os.path.join(os.path.dirname(page), target)) if target else page
        if not os.path.exists(path):
            bad.append(link)
        elif anchor and path.endswith(".md") and anchor not in anchors(path):
            bad.append(link)
    result(not bad, "%s: its %d relative links resolve" % (os.path.relpath(page, root), len(links)),
           "broken: %s" % ", ".join(bad))
index = open(os.path.join(root, "doc/index.md")).read()
unlisted = [os.path.basename(p) for p in pages if not p.endswith("index.md")
            and "(%s)" % os.path.basename(p) not in index]
result(not unlisted, "doc/index.md lists every page of the manual", "unlisted: %s" % unlisted)

# ---- the front page --------------------------------------------------------
readme = open(os.path.join(root, "README.md")).read()
n = readme.count("\n")
result(n <= 150, "README.md has at most 150 lines (%d)" % n)
first = re.search(r"^```\n(.*?)^```", readme, re.S | re.M)
ci = open(os.path.join(root, ".ci/run")).read()
ci_cmd = [l for l in ci.splitlines() if l and not l.startswith(("#", "set ", "cd "))]
ok = first is not None and first.group(1).startswith("make demo") and \
    all(re.search(r"^%s(\s|$)" % re.escape(c), first.group(1), re.M) for c in ci_cmd)
result(ok, "README.md starts with make demo and the CI's test command (%s)" % "; ".join(ci_cmd))
PY
exit 0
