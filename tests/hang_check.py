"""Check a report of fixtures/hangs against the fixture's own manifest (its
ready file: "ROLE TID" lines) and gdb's reading of the same process (lines
"NAME VALUE": the owners glibc's objects record, the pipe's fd, the joined
threads' tids).  Usage: hang_check.py MODE REPORT.json READY GDB_OUT live|snapshot|core
Prints one line per fact checked: "ok WHAT" or "bad WHAT: why"."""
import json
import sys

mode, report, ready, gdb_out, source = sys.argv[1:6]
j = json.load(open(report))
roles = {}
for line in open(ready):
    role, tid = line.split()
    roles.setdefault(role, []).append(int(tid))
oracle = {}
for line in open(gdb_out):
    parts = line.split()
    if len(parts) == 2 and parts[1].lstrip("-").isdigit():
        oracle[parts[0]] = int(parts[1])
threads = {t["tid"]: t for t in j["threads"]}
cause = j["cause"]


def check(what, ok, why=""):
    print(("ok %s" % what) if ok else ("bad %s: %s" % (what, why)))


def blocked(tid):
    return (threads.get(tid) or {}).get("blocked_on") or {}


def waits(role, kind, name, owner, index=0):
    tid = roles[role][index]
    b = blocked(tid)
    got = (b.get("kind"), b.get("object_name"), b.get("owner_tid"))
    check("%s-%d-blocked-on" % (role, tid), got == (kind, name, owner),
          "%s, want %s" % (got, (kind, name, owner)))


def deadlock_of(tids):
    cycles = [sorted(d["threads"]) for d in j["deadlocks"]]
    check("deadlock-threads", cycles == [sorted(tids)], "deadlocks %s, want %s" % (cycles, sorted(tids)))
    check("cause-deadlock", cause["kind"] == "deadlock", "%s: %s" % (cause["kind"], cause["summary"]))


def no_deadlock():
    check("no-deadlock", j["deadlocks"] == [] and cause["kind"] == "hang",
          "deadlocks %s, cause %s" % (j["deadlocks"], cause["kind"]))


def summary_has(*parts):
    missing = [p for p in parts if p not in cause["summary"]]
    check("cause-summary", not missing, "%r lacks %s" % (cause["summary"], missing))


if mode == "deadlock":
    t, a = roles["transfer"][0], roles["audit"][0]
    deadlock_of([t, a])
    waits("transfer", "mutex", "ledger_lock", oracle["ledger_owner"])
    waits("audit", "mutex", "accounts_lock", oracle["accounts_owner"])
    check("gdb-agrees", oracle["ledger_owner"] == a and oracle["accounts_owner"] == t, str(oracle))
    summary_has("thread %d (transfer)" % t, "thread %d (audit)" % a, " holds ", "waits for ledger_lock")
    check("signature", j["signature"] == "deadlock: audit, transfer", j["signature"])
elif mode == "pool":
    no_deadlock()
    refill = roles["refill_pool"][0]
    for i in range(len(roles["pool_worker"])):
        waits("pool_worker", "mutex", "g_pool.lock", oracle["pool_owner"], i)
    b = blocked(refill)
    check("refill-read", (b.get("kind"), b.get("syscall"), b.get("fd")) == ("io", "read", oracle["pipe_fd"]),
          str(b))
    summary_has("%d threads wait for g_pool.lock, held by thread %d (refill_pool), which is blocked in read(fd %d"
                % (len(roles["pool_worker"]), refill, oracle["pipe_fd"]))
elif mode == "rwlock":
    no_deadlock()
    writer = roles["rewrite_table"][0]
    for i in range(len(roles["read_table"])):
        waits("read_table", "rwlock", "table_lock", oracle["table_writer"], i)
    waits("rewrite_table", "semaphore", "flush_done", None)
    summary_has("%d threads wait for table_lock, held by thread %d (rewrite_table), which waits on semaphore "
                "flush_done" % (len(roles["read_table"]), writer))
elif mode == "join":
    tids = roles["join_next"]
    deadlock_of(tids)
    for i in range(len(tids)):
        waits("join_next", "join", None, oracle["joined%d" % ((i + 1) % len(tids))], i)
    check("gdb-agrees", [oracle["joined%d" % i] for i in range(len(tids))] == tids, str(oracle))
    check("signature", j["signature"] == "deadlock: join_next, join_next, join_next", j["signature"])
elif mode == "relock":
    me = roles["update_state"][0]
    deadlock_of([me])
    waits("update_state", "mutex", "state_lock", oracle["state_owner"])
    check("gdb-agrees", oracle["state_owner"] == me, str(oracle))
    summary_has("thread %d (update_state) holds state_lock and waits for it again" % me)
    check("signature", j["signature"] == "deadlock: update_state", j["signature"])
elif mode == "orphan":
    no_deadlock()
    owner = oracle["cache_owner"]
    waits("read_cache", "mutex", "cache_lock", owner)
    check("orphan-gone", owner not in threads, "owner %d is a thread" % owner)
    summary_has("1 thread waits for cache_lock, held by thread %d, which is no thread of the process" % owner)
elif mode == "spin":
    no_deadlock()
    me = roles["crunch"][0]
    check("spin-running", (threads.get(me) or {}).get("blocked_on", 0) is None, str(threads.get(me, {}).get("blocked_on")))
    summary_has("thread %d is running in crunch; 1 thread waits: 1 in pause" % me)
elif mode == "socket":
    no_deadlock()
    fd, lport, pport = roles["socket_fd"][0], roles["local_port"][0], roles["peer_port"][0]
    b = blocked(roles["await_reply"][0])
    want = "socket:[%d] 127.0.0.1:%d -> 127.0.0.1:%d" % (oracle["socket_inode"], lport, pport)
    got = (b.get("kind"), b.get("syscall"), b.get("fd"), b.get("fd_target"))
    check("socket-target", got == ("io", "recvfrom", fd, want if source != "core" else None),
          "%s, want fd %d %s" % (got, fd, want))
elif mode == "errorcheck":
    no_deadlock()
    b = blocked(roles["update_state"][0])
    check("errorcheck-pause", (b.get("kind"), b.get("syscall")) == ("wait", "pause"), str(b))
elif mode in ("pi", "robust"):
    no_deadlock()
    holder = roles["hold_lock"][0]
    waits("wait_lock", "mutex", "mode_lock", oracle["lock_word_tid"])
    check("gdb-agrees", oracle["lock_word_tid"] == holder and oracle["lock_owner"] == holder, str(oracle))
    check("gdb-kind", oracle["lock_kind"] & (32 if mode == "pi" else 16) != 0, str(oracle))
    summary_has("1 thread waits for mode_lock, held by thread %d (hold_lock), which waits in pause" % holder)
elif mode == "robustgone":
    no_deadlock()
    gone = roles["gone_owner"][0]
    waits("wait_lock", "mutex", "mode_lock", oracle["lock_word_tid"])
    check("gdb-agrees", oracle["lock_word_tid"] == gone, "%s, the fixture says %d" % (oracle, gone))
    check("owner-gone", gone not in threads, "owner %d is a thread" % gone)
    summary_has("1 thread waits for mode_lock, held by thread %d, which is no thread of the process" % gone)
elif mode in ("cond", "sem", "barrier"):
    no_deadlock()
    role, kind, name, via = {"cond": ("await_work", "condition", "work_ready", "pthread_cond_wait"),
                             "sem": ("take_job", "semaphore", "jobs_posted", "sem_wait"),
                             "barrier": ("gather", "barrier", "all_gathered", "pthread_barrier_wait")}[mode]
    for i in range(len(roles[role])):
        waits(role, kind, name, None, i)
    n = len(roles[role])
    summary_has("all %d threads wait: " % (n + 1), "%d in " % n, via)
# what /proc said of the threads and files, live and in the snapshot's note
for role, tids in roles.items():
    if role in ("local_port", "peer_port", "socket_fd", "gone_owner"):
        continue
    for tid in tids:
        t = threads.get(tid) or {}
        want = (role[:15], "R" if role == "crunch" else "S") if source != "core" and role != "main" else (None, None)
        got = (t.get("name"), t.get("state"))
        if role != "main" or source == "core":
            check("%s-%d-name-state" % (role, tid), got == want, "%s, want %s" % (got, want))
if mode == "pool":
    b = blocked(roles["refill_pool"][0])
    want = "pipe:[%d]" % oracle["pipe_inode"] if source != "core" else None
    check("pipe-target", b.get("fd_target") == want, "%s, want %s" % (b.get("fd_target"), want))
# every thread the fixture named is blocked; the main thread in pause
b = blocked(roles["main"][0])
check("main-pause", (b.get("kind"), b.get("syscall")) == ("wait", "pause"), str(b))
