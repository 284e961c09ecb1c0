#!/usr/bin/env python3
"""cdp.py URL WIDTH HEIGHT PNG SELECTOR: URL in headless Chromium with a
WIDTHxHEIGHT viewport, driven through the DevTools protocol over
--remote-debugging-pipe (fd 3 in, fd 4 out, messages ended by NUL): once the
page's load event has fired, the viewport's screenshot goes to PNG and one
JSON line is printed: {"viewport": [w, h], "boxes": [[top, bottom, left,
right], ...]}, the layout boxes of the elements SELECTOR matches, in CSS
pixels from the viewport's top left.  Exit 1 with a line on stderr when the
browser fails or does not answer within 90 s."""
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

DEADLINE = time.monotonic() + float(os.environ.get("CDP_SECONDS", "90"))


def above_4(fd):
    """FD moved above 4, so that dup2() onto 3 and 4 copies it (a dup2 onto
    itself would keep its close-on-exec flag, or clobber the other pipe)."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class Browser:
    def __init__(self, width, height, args=(), env=None):
        self.profile = tempfile.mkdtemp()
        to_r, self.to_w = map(above_4, os.pipe())
        self.from_r, from_w = map(above_4, os.pipe())

        def pipes():   # the protocol's descriptors, as Chromium expects them (inheritable)
            os.dup2(to_r, 3)
            os.dup2(from_w, 4)

        self.proc = subprocess.Popen(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--hide-scrollbars", "--remote-debugging-pipe", "--user-data-dir=" + self.profile,
             "--window-size=%d,%d" % (width, height), *args, "about:blank"],
            preexec_fn=pipes, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=env)
        os.close(to_r)
        os.close(from_w)
        self.buf, self.next_id, self.events = b"", 0, []

    def read_message(self):
        while b"\0" not in self.buf:
            left = DEADLINE - time.monotonic()
            if left <= 0 or not select.select([self.from_r], [], [], left)[0]:
                raise RuntimeError("no answer from the browser in time")
            chunk = os.read(self.from_r, 1 << 20)
            if not chunk:
                raise RuntimeError("the browser closed its pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=None):
        """METHOD sent without waiting for its answer (Page.crash gets none)."""
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")

    def call(self, method, params=None, session=None):
        self.send(method, params, session)
        while True:
            m = self.read_message()
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m["result"]
            self.events.append(m)

    def wait_event(self, method, session):
        while True:
            for i, m in enumerate(self.events):
                if m.get("method") == method and m.get("sessionId") == session:
                    del self.events[i]
                    return m
            self.events.append(self.read_message())

    def new_page(self):
        """A blank page attached to: its session id."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        return self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

    def close(self):
        try:
            self.call("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def main():
    url, width, height, png, selector = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    b = Browser(width, height)
    try:
        s = b.new_page()
        b.call("Emulation.setDeviceMetricsOverride",
               {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, s)
        b.call("Page.enable", {}, s)
        b.call("Page.navigate", {"url": url}, s)
        b.wait_event("Page.loadEventFired", s)
        expr = ("JSON.stringify({viewport: [innerWidth, innerHeight], boxes: Array.from("
                "document.querySelectorAll(%s), function (e) { var r = e.getBoundingClientRect();"
                " return [r.top, r.bottom, r.left, r.right]; })})" % json.dumps(selector))
        value = b.call("Runtime.evaluate", {"expression": expr, "returnByValue": True}, s)["result"]["value"]
        shot = b.call("Page.captureScreenshot", {"format": "png"}, s)["data"]
        with open(png, "wb") as f:
            f.write(base64.b64decode(shot))
        print(value)
    except (RuntimeError, OSError, KeyError, ValueError) as e:
        print("cdp.py: %s" % e, file=sys.stderr)
        return 1
    finally:
        b.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
