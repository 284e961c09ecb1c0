#!/usr/bin/env python3
"""pty_run.py OUT STREAM CMD...: run CMD with STREAM ("stdout" or "stderr")
on a pseudo-terminal and the other one discarded; what it wrote there goes
to OUT.  Environment: this one, with NO_COLOR removed, TERM=xterm unless
set, and PTY_ENV="K=V K=V" applied last."""
import os, pty, subprocess, sys
out, stream, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
env = dict(os.environ)
env.pop("NO_COLOR", None)
env.setdefault("TERM", "xterm")
for kv in os.environ.get("PTY_ENV", "").split():
    k, v = kv.split("=", 1)
    env[k] = v
master, slave = pty.openpty()
streams = {"stdout": slave, "stderr": subprocess.DEVNULL} if stream == "stdout" else \
          {"stdout": subprocess.DEVNULL, "stderr": slave}
p = subprocess.Popen(cmd, env=env, **streams)
os.close(slave)
data = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
p.wait()
open(out, "wb").write(data)
