#!/usr/bin/env python3
"""crashpad_crash.py DB: headless Chromium with its Crashpad handler
(chrome_crashpad_handler) writing into the database folder DB; a page's
renderer is crashed through the DevTools protocol (Page.crash), and once the
handler has moved the renderer's minidump into DB/pending or DB/completed
(it writes into DB/new and renames, so a .dmp there is whole) the browser is
closed.  Prints the minidump's path.  Exit 1 with a line on stderr when the
browser fails or no minidump comes within the deadline."""
import glob
import os
import sys
import time

import cdp


def minidumps(db):
    return sorted(glob.glob(os.path.join(db, "pending", "*.dmp")) +
                  glob.glob(os.path.join(db, "completed", "*.dmp")))


def main():
    db = sys.argv[1]
    env = dict(os.environ, CHROME_HEADLESS="1", BREAKPAD_DUMP_LOCATION=db)
    b = cdp.Browser(800, 600, ["--enable-crash-reporter", "--enable-crash-reporter-for-testing", "--crash-dumps-dir=" + db], env)
    try:
        s = b.new_page()
        b.call("Page.enable", {}, s)
        b.send("Page.crash", {}, s)
        while not minidumps(db):
            if time.monotonic() > cdp.DEADLINE:
                raise RuntimeError("Crashpad wrote no minidump into %s in time" % db)
            time.sleep(0.05)
        print(minidumps(db)[0])
    except (RuntimeError, OSError, KeyError, ValueError) as e:
        print("crashpad_crash.py: %s" % e, file=sys.stderr)
        return 1
    finally:
        b.close()
    return 0


sys.exit(main())
