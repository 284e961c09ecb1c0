#!/usr/bin/env python3
"""Who may use whom among the modules (tests/t_layers.sh runs it).

    tests/layers.py ROOT

Reads every ROOT/MODULE/*.c and *.h (comments and string literals left out)
and prints one line per breach of the layering, "FILE:LINE: what", exiting 1
when there is any:
- an #include that resolves into a module the file's module may not use;
- a call of a function (or function-like macro), a definition of one, a
  struct/union/enum tag or an upper-case constant that carries the prefix of
  such a module (a name never borrows another module's prefix);
- a call of a function declared in such a module's headers, whatever its
  name (analyzer/'s go_* helpers, say).
It also checks its own table of prefixes: most functions each module's
headers declare carry that module's prefix, else the table is stale.

Inside corefile/, its parts (a .c and its .h are one part) use each other
without a circle: a part uses another when it includes that part's header
or calls a function (uses an object) that part's .c defines.  Each set of
parts on circles is a line, and so is each use among them, with a circle
through it: "FILE:LINE: includes X.h (cycle: a -> b -> a)", "... calls f(
of X.c ...", "... uses v of X.c ...".
"""
import glob
import os
import re
import sys

# Lowest first.  reports/ works from the plain-data analysis alone.
MAY_USE = {
    "base": set(),
    "corefile": {"base"},
    "dwarf": {"base", "corefile"},
    "analyzer": {"base", "corefile", "dwarf"},
    "reports": {"base", "analyzer"},
    "cli": {"base", "corefile", "dwarf", "analyzer", "reports"},
}
PREFIX = {"base": "base", "corefile": "core", "dwarf": "dbg", "analyzer": "an",
          "reports": "rep", "cli": "cli"}
KEYWORDS = {"if", "while", "for", "switch", "return", "sizeof", "defined", "_Static_assert",
            "_Alignof", "__attribute__", "__typeof__", "typeof", "alignof", "_Generic",
            "void", "bool", "char", "short", "int", "long", "float", "double"}

IDENT_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
TAG = re.compile(r"\b(?:struct|union|enum)\s+([A-Za-z_]\w*)")
UPPER = re.compile(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]*)\b")
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(["<])([^">]+)[">]', re.M)
DECL = re.compile(r"(?:^|[;}])\s*(?:(?:static|extern|inline|const|unsigned|signed|struct|enum|union)\s+)*"
                  r"[A-Za-z_]\w*[\s*]+\**\s*([A-Za-z_]\w*)\s*\(", re.M)
FUNC_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(", re.M)


LEXEME = re.compile(r"/\*.*?(?:\*/|\Z)|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"?|'(?:\\.|[^'\\\n])*'?", re.S)


def blank(s):
    return re.sub(r"[^\n]", " ", s)


def strip(text, keep_strings):
    """TEXT with comments (and, unless KEEP_STRINGS, what string and
    character literals hold) blanked; newlines kept, so line numbers stay."""
    def one(m):
        s = m.group(0)
        if s[0] in "\"'":
            return s if keep_strings else s[0] + blank(s[1:])
        return blank(s)
    return LEXEME.sub(one, text)


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def module_of(prefix_name):
    """The module whose prefix NAME carries (either case), or None."""
    low = prefix_name.lower()
    for m, p in PREFIX.items():
        if low.startswith(p + "_"):
            return m
    return None


def sources(root, module):
    return sorted(glob.glob(os.path.join(root, module, "*.c")) + glob.glob(os.path.join(root, module, "*.h")))


def declared(root, module):
    """Functions and function-like macros declared in MODULE's headers."""
    names = set()
    for h in glob.glob(os.path.join(root, module, "*.h")):
        text = strip(open(h, errors="replace").read(), keep_strings=False)
        names.update(n for n in DECL.findall(text) if n not in KEYWORDS)
        names.update(FUNC_MACRO.findall(text))
    return names


def include_breaches(root, module, path, text):
    for m in INCLUDE.finditer(text):
        quote, inc = m.groups()
        target = os.path.normpath(os.path.join(os.path.dirname(path), inc)) if quote == '"' \
            else os.path.normpath(os.path.join(root, inc))
        rel = os.path.relpath(target, root)
        used = rel.split(os.sep)[0]
        if used in MAY_USE and used != module and used not in MAY_USE[module]:
            yield line_of(text, m.start()), "includes %s (%s/ may use: %s)" % (
                rel, module, ", ".join(sorted(MAY_USE[module])) or "no module")


def is_member(text, pos):
    i = pos - 1
    while i >= 0 and text[i].isspace():
        i -= 1
    return i >= 0 and (text[i] == "." or (text[i] == ">" and i > 0 and text[i - 1] == "-"))


def name_breaches(module, text, foreign):
    """Names in TEXT (comments and strings blanked) that belong to a module
    MODULE may not use: by prefix, or declared in FOREIGN's headers."""
    allowed = MAY_USE[module] | {module}
    for m in IDENT_CALL.finditer(text):
        name = m.group(1)
        if name in KEYWORDS or is_member(text, m.start()):
            continue
        owner = module_of(name) or foreign.get(name)
        if owner and owner not in allowed:
            yield line_of(text, m.start()), "%s( is %s/'s" % (name, owner)
    for m in TAG.finditer(text):
        owner = module_of(m.group(1))
        if owner and owner not in allowed:
            yield line_of(text, m.start()), "%s is %s/'s type" % (m.group(0), owner)
    for m in UPPER.finditer(text):
        owner = module_of(m.group(1))
        if owner and owner not in allowed and not is_member(text, m.start()):
            yield line_of(text, m.start()), "%s carries %s/'s prefix" % (m.group(1), owner)


def prefix_breaches(root, decls):
    for module, names in decls.items():
        if not names:
            continue
        own = sum(1 for n in names if n.lower().startswith(PREFIX[module] + "_"))
        if own * 2 < len(names):
            yield "%s/: only %d of the %d functions its headers declare start %s_: the prefix table " \
                  "is stale" % (module, own, len(names), PREFIX[module])


# A definition at the start of a line: its name, then the parameters and the
# body's brace (a declaration ends with ';' first).
DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*\([^;{}]*\)\s*\{", re.M)
# A definition of an object with external linkage: "const struct T name = {".
DATA_DEFINITION = re.compile(r"^(?!static\b|extern\b|typedef\b)(?:const\s+)?(?:struct\s+|union\s+|enum\s+)?\w+"
                             r"[\s*]+(?:const\s+)?([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*=", re.M)
IDENT = re.compile(r"\b([A-Za-z_]\w*)\b")
ANY_DEFINITION = re.compile(r"^[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*\([^;{}]*\)\s*\{", re.M)


def part_uses(root, module):
    """{part: {used part: (file, line, what)}} inside MODULE: the first use
    found of each."""
    files = sources(root, module)
    part = lambda p: os.path.splitext(os.path.basename(p))[0]
    stripped = {p: strip(open(p, errors="replace").read(), keep_strings=False) for p in files}
    defined = {}
    for p in files:
        if p.endswith(".c"):
            for m in DEFINITION.finditer(stripped[p]):
                defined.setdefault(m.group(1), part(p))
    objects = {}
    for p in files:
        if p.endswith(".c"):
            for m in DATA_DEFINITION.finditer(stripped[p]):
                objects.setdefault(m.group(1), part(p))
    uses = {part(p): {} for p in files}
    for p in files:
        me, text, rel = part(p), stripped[p], os.path.relpath(p, root)
        found = uses[me]
        raw = strip(open(p, errors="replace").read(), keep_strings=True)
        for m in INCLUDE.finditer(raw):
            quote, inc = m.groups()
            target = os.path.normpath(os.path.join(os.path.dirname(p), inc))
            if quote == '"' and os.path.dirname(target) == os.path.dirname(p) and part(target) != me \
                    and part(target) in uses:
                found.setdefault(part(target), (rel, line_of(raw, m.start()), "includes %s" % inc))
        own = set(ANY_DEFINITION.findall(text))
        for m in IDENT.finditer(text if p.endswith(".c") else ""):
            owner = objects.get(m.group(1))
            if owner and owner != me and not is_member(text, m.start()):
                found.setdefault(owner, (rel, line_of(text, m.start()),
                                         "uses %s of %s.c" % (m.group(1), owner)))
        own = set(ANY_DEFINITION.findall(text))
        # A header's declarations are no calls; its includes count.
        for m in IDENT_CALL.finditer(text if p.endswith(".c") else ""):
            name = m.group(1)
            owner = defined.get(name)
            if owner and owner != me and name not in own and not is_member(text, m.start()):
                found.setdefault(owner, (rel, line_of(text, m.start()),
                                         "calls %s( of %s.c" % (name, owner)))
    return uses


def cycle_breaches(root, module):
    """A line per use on each circle among MODULE's parts (one circle per
    strongly connected set of parts)."""
    uses = part_uses(root, module)
    index, low, stack, on, sets = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(uses[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                sets.append(group)

    for v in sorted(uses):
        if v not in index:
            visit(v)
    for group in sets:
        yield "%s/: %d parts use each other in circles: %s" % (module, len(group), ", ".join(sorted(group)))
        # Every use inside the group lies on a circle: the shortest way back.
        for a in sorted(group):
            for b in sorted(w for w in uses[a] if w in group):
                rel, line, what = uses[a][b]
                yield "%s:%d: %s (cycle: %s)" % (rel, line, what, " -> ".join([a] + way(uses, group, b, a)))


def way(uses, group, src, dst):
    """The shortest path SRC ... DST of parts in GROUP."""
    prev, todo = {src: None}, [src]
    while dst not in prev:
        todo = [w for v in todo for w in sorted(uses[v]) if w in group and w not in prev
                and prev.setdefault(w, v) is v]
    path = [dst]
    while prev[path[-1]] is not None:
        path.append(prev[path[-1]])
    return path[::-1]


def main():
    root = os.path.abspath(sys.argv[1])
    missing = [m for m in MAY_USE if not os.path.isdir(os.path.join(root, m))]
    if missing:
        print("no module folder: %s" % ", ".join(missing))
        return 1
    decls = {m: declared(root, m) for m in MAY_USE}
    breaches = list(prefix_breaches(root, decls))
    for module in MAY_USE:
        # A name some allowed module also declares is that module's.
        mine = set().union(*(decls[m] for m in MAY_USE[module] | {module}))
        foreign = {n: m for m in MAY_USE if m not in MAY_USE[module] and m != module
                   for n in decls[m] if n not in mine}
        for path in sources(root, module):
            raw = open(path, errors="replace").read()
            rel = os.path.relpath(path, root)
            uncommented = strip(raw, keep_strings=True)
            found = list(include_breaches(root, module, path, uncommented))
            found += name_breaches(module, strip(raw, keep_strings=False), foreign)
            breaches += ["%s:%d: %s" % (rel, line, what) for line, what in sorted(set(found))]
    breaches += cycle_breaches(root, "corefile")
    for b in breaches:
        print(b)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
