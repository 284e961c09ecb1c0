"""dom.py: a page as headless Chromium built it (--dump-dom), read back as a
tree of Nodes, and the "PASS: ..." / "FAIL: ..." line each check prints.
Used by tests/html_dom.py (report and top pages) and tests/serve_dom.py
(the pages `asyncore serve` answers)."""
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


def load(path):
    """The DOM dumped in PATH: its root Node and its body (None without one)."""
    b = Builder()
    b.feed(open(path, encoding="utf-8").read())
    bodies = b.root.find("body")
    return b.root, bodies[0] if bodies else None


failed = False


def check(name, ok, detail=""):
    global failed
    failed |= not ok
    print(("PASS: " if ok else "FAIL: ") + name + ("" if ok or not detail else ": " + str(detail)[:300]))


def finish():
    """Exit 1 if any check failed, else 0."""
    sys.exit(1 if failed else 0)
