#!/usr/bin/env bash
# Why a process hangs: fixtures/hangs in each of its modes (a two-mutex
# deadlock, a pool whose lock holder reads a pipe, readers behind an rwlock
# writer, a join cycle, a relocked default mutex, an error-checking one, a
# mutex whose owner exited holding it, a thread computing, a recv() on a
# loopback connection, a PI mutex, a robust one, a robust one whose owner
# exited unmarked, a condition variable, a semaphore and a barrier nobody
# completes),
# read live (report --pid), from its snapshot and from the core a SIGABRT
# from outside leaves (gcore's when the kernel's core_pattern pipes cores
# elsewhere).  Oracles: the fixture's manifest of its threads (its ready
# file, written once each thread is in the system call it hangs in) and gdb
# attached to the same process (the owners glibc's objects record); for how
# long a thread has waited, the test's own clock (mode since).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/fixlib.sh"
. "$ROOT/tests/hang_lib.sh"

have_asyncore || { skip "hang: no asyncore binary"; exit 0; }
command -v gdb >/dev/null || { skip "hang: no gdb"; exit 0; }
fix_build hangs || exit 0
PROG=$FIX_DIR/prog

check_eq() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: expected '$2', got '$3'"; fi; }

hang_cleanup() {
	hang_kill_all
	fix_cleanup
}
trap hang_cleanup EXIT

# start MODE: the fixture hung in MODE in a directory of its own (RUN).
start() {
	RUN=$TMPD/run-$1
	hang_start "$PROG" "$1" "$RUN"
}

# oracle MODE PID OUT: gdb's reading of what the objects record.
oracle() {
	local -a ex
	case $1 in
	deadlock) ex=(-ex 'printf "ledger_owner %d\n", ledger_lock.__data.__owner'
		      -ex 'printf "accounts_owner %d\n", accounts_lock.__data.__owner') ;;
	pool) ex=(-ex 'printf "pool_owner %d\n", g_pool.lock.__data.__owner'
		  -ex 'printf "pipe_fd %d\n", g_pool.pipe[0]') ;;
	rwlock) ex=(-ex 'printf "table_writer %d\n", table_lock.__data.__cur_writer') ;;
	join) ex=(-ex 'printf "joined0 %d\n", ((struct pthread *)joiners[0])->tid'
		  -ex 'printf "joined1 %d\n", ((struct pthread *)joiners[1])->tid'
		  -ex 'printf "joined2 %d\n", ((struct pthread *)joiners[2])->tid') ;;
	relock) ex=(-ex 'printf "state_owner %d\n", state_lock.__data.__owner') ;;
	orphan) ex=(-ex 'printf "cache_owner %d\n", cache_lock.__data.__owner') ;;
	pi|robust|robustgone) ex=(-ex 'printf "lock_word_tid %d\n", mode_lock.__data.__lock & 0x3fffffff'
				  -ex 'printf "lock_owner %d\n", mode_lock.__data.__owner'
				  -ex 'printf "lock_kind %d\n", mode_lock.__data.__kind') ;;
	*) ex=() ;;
	esac
	LC_ALL=C timeout 120 gdb -batch -nx -q -p "$2" "${ex[@]}" "$PROG" >"$3" 2>&1
	local fd
	fd=$(sed -n 's/^pipe_fd //p' "$3")
	[ -n "$fd" ] && echo "pipe_inode $(stat -L -c %i "/proc/$2/fd/$fd")" >>"$3"
	fd=$(awk '$1 == "socket_fd" {print $2}' "$RUN/ready")
	[ -n "$fd" ] && echo "socket_inode $(stat -L -c %i "/proc/$2/fd/$fd")" >>"$3"
	return 0
}

# verdict NAME MODE JSON SOURCE: the checks of tests/hang_check.py as one
# line.
verdict() {
	local out
	if ! out=$(python3 "$ROOT/tests/hang_check.py" "$2" "$3" "$RUN/ready" "$RUN/gdb" "$4" 2>&1); then
		fail "$1: $(echo "$out" | tail -2 | tr '\n' ' ')"
	elif grep -q '^bad ' <<<"$out"; then
		fail "$1: $(grep '^bad ' <<<"$out" | head -3 | tr '\n' ' ')"
	else
		pass "$1: $(grep -c '^ok ' <<<"$out") facts agree ($(jget "$3" 'j["cause"]["kind"] + ": " + j["cause"]["summary"]'))"
	fi
}

# reports_open_with_hang CORE: the text and HTML reports of the deadlock
# open with the cycle, and each waiter's header says what it waits for and
# (a snapshot) for how long.
reports_open_with_hang() {
	local t a
	t=$(awk '$1 == "transfer" {print $2}' "$RUN/ready")
	a=$(awk '$1 == "audit" {print $2}' "$RUN/ready")
	"$ASYNCORE" report "$1" "$PROG" >"$RUN/snap.txt" 2>/dev/null
	"$ASYNCORE" report "$1" "$PROG" --format html >"$RUN/snap.html" 2>/dev/null
	if [ "$(sed -n 1p "$RUN/snap.txt" | cut -c1-22)" = "cause:       deadlock:" ] &&
	   [ "$(grep -m1 -n '^deadlock: ' "$RUN/snap.txt" | cut -d: -f1)" -lt "$(grep -m1 -n '^Thread ' "$RUN/snap.txt" | cut -d: -f1)" ] &&
	   grep -qx "Thread $t (transfer): waits for mutex ledger_lock, held by thread $a, for [0-9]* s" "$RUN/snap.txt" &&
	   grep -qx "Thread $a (audit): waits for mutex accounts_lock, held by thread $t, for [0-9]* s" "$RUN/snap.txt"; then
		pass "hang-text: the deadlock first, each waiter's header says what it waits for, and how long"
	else
		fail "hang-text: $(head -12 "$RUN/snap.txt" | tr '\n' '|')"
	fi
	if python3 - "$RUN/snap.html" "$t" "$a" <<'PY'
import html.parser, sys
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.stack = []; self.sections = []; self.text = {}; self.cur = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section": self.sections.append(a.get("id")); self.cur = a.get("id")
        if tag == "summary": self.cur = "summary"; self.text.setdefault("summary", []).append("")
    def handle_endtag(self, tag):
        if tag == "summary": self.cur = None
    def handle_data(self, d):
        if self.cur == "summary": self.text["summary"][-1] += d
        elif self.cur: self.text[self.cur] = self.text.get(self.cur, "") + d
p = P(); p.feed(open(sys.argv[1]).read())
t, a = sys.argv[2], sys.argv[3]
ok = p.sections and p.sections[0] == "hang" and "Deadlock" in p.text.get("hang", "")
ok = ok and any(s.startswith("Thread %s (transfer): waits for mutex ledger_lock, held by thread %s" % (t, a))
                for s in p.text.get("summary", []))
page = open(sys.argv[1]).read()
graph = page[page.find('id="wait-graph"'):page.find("</svg>", page.find('id="wait-graph"'))]
ok = ok and graph.count('class="edge cycle"') == 2 and graph.count('class="node cycle"') == 2
ok = ok and 'data-tid="%s"' % t in graph and 'data-tid="%s"' % a in graph
sys.exit(0 if ok else 1)
PY
	then
		pass "hang-html: the page opens with the deadlock and draws its two-thread cycle; the thread's summary says what it waits for"
	else
		fail "hang-html: no hang section first, or no thread summary naming the wait"
	fi
}

# grouped_pool CORE: the text and HTML reports show the pool's identical
# waiters once, with their count and tids (and how long they waited, the
# least and most when they differ); --threads each shows each; the JSON
# keeps every thread.
grouped_pool() {
	local w owner n
	w=$(awk '$1 == "pool_worker" {print $2}' "$RUN/ready" | sort -n | paste -sd, | sed 's/,/, /g')
	n=$(awk '$1 == "pool_worker"' "$RUN/ready" | wc -l)
	owner=$(sed -n 's/^pool_owner //p' "$RUN/gdb")
	"$ASYNCORE" report "$1" "$PROG" >"$RUN/group.txt" 2>/dev/null
	"$ASYNCORE" report "$1" "$PROG" --threads each >"$RUN/each.txt" 2>/dev/null
	"$ASYNCORE" report "$1" "$PROG" --format html >"$RUN/group.html" 2>/dev/null
	local each_n=0 t
	for t in $(awk '$1 == "pool_worker" {print $2}' "$RUN/ready"); do
		grep -qx "Thread $t (pool_worker): waits for mutex g_pool.lock, held by thread $owner, for [0-9]* s" "$RUN/each.txt" &&
			each_n=$((each_n + 1))
	done
	if grep -qx "$n threads: $w (pool_worker): waits for mutex g_pool.lock, held by thread $owner, for [0-9~]* s" "$RUN/group.txt" &&
	   [ "$(grep -c '^#0 .*__lll_lock_wait\|^#0 .*futex_wait' "$RUN/group.txt")" = 1 ] &&
	   ! grep -q "^Thread $(awk '$1 == "pool_worker" {print $2; exit}' "$RUN/ready") " "$RUN/group.txt" &&
	   [ "$each_n" = "$n" ] &&
	   grep -q "<summary>$n threads: $w (pool_worker): <span class=\"wait\">waits for mutex g_pool.lock, held by thread $owner</span>" "$RUN/group.html" &&
	   [ "$(jget "$RUN/snap.json" 'len(j["threads"])')" = "$((n + 2))" ]; then
		pass "hang-grouped: the $n identical waiters once in text and HTML ($n threads: $w), each with --threads each, all in JSON"
	else
		fail "hang-grouped: $(grep -m1 'threads: ' "$RUN/group.txt"); each $each_n of $n"
	fi
}

# damaged_locks CORE: the deadlock's core with its mutexes damaged: an
# owner of garbage, an owner that is no thread, a robust kind whose lock
# word is no tid, and random words over both mutexes.  Each report ends
# (under a bound) with its JSON; an owner is never invented: gdb reads the
# same damaged core, and every owner reported is what the object records
# (__owner, or __lock's low 30 bits for a robust or PI kind), none where
# that is no thread id; garbage is warned of.
damaged_locks() {
	local core=$1 t a lo ao f rc bad=() n=0
	t=$(awk '$1 == "transfer" {print $2}' "$RUN/ready")
	a=$(awk '$1 == "audit" {print $2}' "$RUN/ready")
	lo=$(jget "$RUN/core.json" "[x for x in j['threads'] if x['tid'] == $t][0]['blocked_on']['object']")
	ao=$(jget "$RUN/core.json" "[x for x in j['threads'] if x['tid'] == $a][0]['blocked_on']['object']")
	python3 "$ROOT/tests/corrupt_core.py" "$core" "$RUN/bad-garbage.core" poke "$lo+8=0xdeadbeef:4" &&
	python3 "$ROOT/tests/corrupt_core.py" "$core" "$RUN/bad-nothread.core" poke "$lo+8=4000000:4" &&
	python3 "$ROOT/tests/corrupt_core.py" "$core" "$RUN/bad-robustword.core" poke "$lo+16=0x10:4" "$lo=0x7fffffff:4" &&
	python3 "$ROOT/tests/corrupt_core.py" "$core" "$RUN/bad-flip-%d.core" flip-ranges 1-10 "$lo:40,$ao:40" || {
		fail "hang-damaged: corrupt_core.py failed"; return; }
	for f in "$RUN"/bad-*.core; do
		n=$((n + 1))
		timeout 60 "$ASYNCORE" report "$f" "$PROG" --threads all --format json >"$f.json" 2>"$f.err"
		rc=$?
		if [ $rc -gt 2 ] || ! json_ok "$f.json"; then
			bad+=("$(basename "$f"): exit $rc, no JSON ($(tail -1 "$f.err"))")
			rm -f "$f.json"
		fi
	done
	for f in "$RUN"/bad-*.core; do
		[ -s "$f.json" ] || continue
		LC_ALL=C timeout 120 gdb -batch -nx -q \
			-ex 'printf "ledger %d %d %d\n", ledger_lock.__data.__owner, ledger_lock.__data.__lock, ledger_lock.__data.__kind' \
			-ex 'printf "accounts %d %d %d\n", accounts_lock.__data.__owner, accounts_lock.__data.__lock, accounts_lock.__data.__kind' \
			"$PROG" "$f" 2>/dev/null | grep -E '^(ledger|accounts) ' >"$f.gdb"
		local got
		got=$(python3 - "$f.json" "$f.gdb" "$t" "$a" "$(basename "$f")" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
gdb = {l.split()[0]: [int(x) for x in l.split()[1:]] for l in open(sys.argv[2])}
t, a, name = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
by = {x["tid"]: x for x in j["threads"]}
tids = set(by)
bad = []
if set(gdb) != {"ledger", "accounts"}:
    print("%s: gdb read no mutexes" % name); sys.exit()
for tid, lock in ((t, "ledger"), (a, "accounts")):
    b = by.get(tid, {}).get("blocked_on") or {}
    if b.get("kind") != "mutex" or b.get("object_name") != lock + "_lock":
        continue   # the frames' facts damaged: no owner to check
    owner, word, kind = gdb[lock]
    rec = (word & 0x3fffffff) if kind & 0x30 else owner
    want = rec if 0 < rec < (1 << 22) else None
    if b.get("owner_tid") != want:
        bad.append("%s: %s's owner %s, the core records %d" % (name, lock, b.get("owner_tid"), rec))
    if want is None and rec != 0 and not any(("0x%x" % (rec & 0xffffffff)) in w for w in j.get("warnings", [])):
        bad.append("%s: no warning of %s's holder 0x%x" % (name, lock, rec & 0xffffffff))
    if want is not None and want not in tids and "no thread of the process" not in (b.get("summary") or ""):
        bad.append("%s: %s's owner %d is no thread, unsaid" % (name, lock, want))
for d in j["deadlocks"]:
    for i, tid in enumerate(d["threads"]):
        nxt = d["threads"][(i + 1) % len(d["threads"])]
        if (by.get(tid, {}).get("blocked_on") or {}).get("owner_tid") != nxt:
            bad.append("%s: deadlock edge %d -> %d is no owner" % (name, tid, nxt))
if name == "bad-garbage.core" and j["deadlocks"]:
    bad.append("a deadlock through a garbage owner")
if name == "bad-nothread.core" and "which is no thread of the process" not in j["cause"]["summary"]:
    bad.append("cause %r does not say the owner is no thread" % j["cause"]["summary"])
print("; ".join(bad) or "ok")
PY
)
		[ "$got" = ok ] || bad+=("$got")
	done
	if [ ${#bad[@]} -eq 0 ]; then
		pass "hang-damaged: $n damaged cores of the deadlock: every report whole, every owner the one gdb reads in the damaged object (none for garbage, warned; no thread said so)"
	else
		fail "hang-damaged: ${bad[*]:0:3}"
	fi
}

# stored_signature CORE: the store keeps the deadlock's kind and signature,
# and resign (which signs cores again from their stored frames) leaves it.
stored_signature() {
	local db=$RUN/store.db got
	"$ASYNCORE" ingest --db "$db" --binary "$PROG" "$1" >"$RUN/ingest.out" 2>&1 &&
		"$ASYNCORE" resign --db "$db" >"$RUN/resign.out" 2>&1
	got=$("$ASYNCORE" query --db "$db" --format csv "SELECT cause_kind, signature FROM cores" 2>&1 | tail -1)
	if [ "$got" = "deadlock,\"deadlock: audit, transfer\"" ] || [ "$got" = "deadlock,deadlock: audit, transfer" ]; then
		pass "hang-store: the store keeps the deadlock and its signature through resign ($got)"
	else
		fail "hang-store: '$got' ($(tail -1 "$RUN/resign.out"))"
	fi
}

# the core of the hung process: a SIGABRT from outside, else gcore's
abort_core() { hang_core "$RUN"; }

# hang_signature MODE: the hang is signed alike live, from its snapshot and
# from its core, by functions alone (no tid of the process in it): the
# holder's and the waiters' (DESIGN.md "Hangs").
hang_signature() {
	local got
	got=$(python3 - "$RUN/live.json" "$RUN/snap.json" "$RUN/core.json" <<'PY'
import json, re, sys
js = [json.load(open(f)) for f in sys.argv[1:]]
sigs = {j["signature"] for j in js}
tids = {str(t["tid"]) for t in js[0]["threads"]}
if len(sigs) != 1:
    print("differ: %s" % " | ".join(sorted(sigs)))
else:
    sig = sigs.pop()
    kind = js[0]["cause"]["kind"]
    if not sig.startswith(kind + ": "):
        print("a %s signed '%s'" % (kind, sig))
    elif tids & set(re.findall(r"\d+", sig)):
        print("a tid in '%s'" % sig)
    else:
        print("ok " + sig)
PY
)
	case $got in
	ok*) pass "hang-$1-signature: live, snapshot and core signed alike, by functions (${got#ok })" ;;
	*) fail "hang-$1-signature: $got" ;;
	esac
	[ "$1" = pool ] && check_eq "hang-pool-signature-names: the holder's function and its waiters'" \
		"hang: refill_pool (io) <- pool_worker" "${got#ok }"
}

for mode in deadlock pool rwlock join relock errorcheck orphan spin socket pi robust robustgone cond sem barrier; do
	if ! start "$mode"; then
		fail "hang-$mode: the fixture never got ready ($(tail -1 "$RUN/out" 2>/dev/null))"
		continue
	fi
	oracle "$mode" "$HUNG" "$RUN/gdb"
	report_json "hang-$mode-live" "$RUN/live.json" --pid "$HUNG" "$PROG" --threads all &&
		verdict "hang-$mode-live" "$mode" "$RUN/live.json" live
	"$ASYNCORE" snapshot "$HUNG" -o "$RUN/snap.core" >"$RUN/snap.out" 2>&1
	report_json "hang-$mode-snapshot" "$RUN/snap.json" "$RUN/snap.core" "$PROG" --threads all &&
		verdict "hang-$mode-snapshot" "$mode" "$RUN/snap.json" snapshot
	[ "$mode" = deadlock ] && reports_open_with_hang "$RUN/snap.core"
	[ "$mode" = pool ] && grouped_pool "$RUN/snap.core"
	CORE=
	abort_core
	if [ -z "$CORE" ] || [ ! -s "$CORE" ]; then
		skip "hang-$mode-core: no core of the hung process"
		continue
	fi
	report_json "hang-$mode-core" "$RUN/core.json" "$CORE" "$PROG" --threads all &&
		verdict "hang-$mode-core" "$mode" "$RUN/core.json" core
	[ "$mode" = deadlock ] && stored_signature "$CORE"
	[ "$mode" = deadlock ] && damaged_locks "$CORE"
	hang_signature "$mode"
	summary=$(jget "$RUN/core.json" 'j["cause"]["summary"]')
	if [[ "$summary" == *"($CORE_HOW" ]]; then
		pass "hang-$mode-core-how: the core's cause says how it was dumped"
	else
		fail "hang-$mode-core-how: '$summary' does not say '$CORE_HOW'"
	fi
	{ kill -9 "$HUNG" && wait "$HUNG"; } 2>/dev/null
done

# C++: std::mutex taken in opposite orders, std::shared_mutex readers
# behind a writer waiting on a std::condition_variable (prog_cxx), live and
# from the core an outside SIGABRT leaves; gdb reads the owners.
cxx_case() {
	local mode=$1 want_gdb=$2 expr=$3 pyexpr=$4 run=$TMPD/run-cxx-$1 owner got
	hang_launch "$run" "$FIX_DIR/prog_cxx" "$mode"
	owner=$(LC_ALL=C timeout 120 gdb -batch -nx -q -p "$HUNG" -ex "printf \"owner %d\\n\", $expr" \
		"$FIX_DIR/prog_cxx" 2>/dev/null | sed -n 's/^owner //p')
	report_json "hang-cxx-$mode-live" "$run/live.json" --pid "$HUNG" "$FIX_DIR/prog_cxx" --threads all || return
	kill -ABRT "$HUNG"; wait "$HUNG" 2>/dev/null
	for j in live core; do
		local f=$run/$j.json c
		if [ $j = core ]; then
			c=$(ls "$run"/core* 2>/dev/null | head -1)
			[ -n "$c" ] || { skip "hang-cxx-$mode-core: no core"; continue; }
			report_json "hang-cxx-$mode-core" "$f" "$c" "$FIX_DIR/prog_cxx" --threads all || continue
		fi
		got=$(python3 - "$f" "$run/ready" "$pyexpr" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
roles = {}
for line in open(sys.argv[2]):
    r, t = line.split(); roles.setdefault(r, []).append(int(t))
by = {t["tid"]: t for t in j["threads"]}
print(eval(sys.argv[3]))
PY
)
		want=$(eval "echo \"$want_gdb\"")
		if [ -n "$owner" ] && [ "$got" = "$want" ]; then
			pass "hang-cxx-$mode-$j: $got"
		else
			fail "hang-cxx-$mode-$j: '$got', want '$want'"
		fi
	done
}

cxx_cases() {
	[ -x "$FIX_DIR/prog_cxx" ] || { fail "hang-cxx: no prog_cxx built"; return; }
	cxx_case deadlock 'deadlock bank::ledger_lock $owner bank::transfer' \
		'bank::ledger_lock._M_mutex.__data.__owner' \
		'" ".join([j["cause"]["kind"], by[roles["transfer"][0]]["blocked_on"]["object_name"], str(by[roles["transfer"][0]]["blocked_on"]["owner_tid"]), j["signature"].split(": ")[1].split(", ")[1]])'
	cxx_case rwlock 'hang rwlock bank::table_lock $owner,$owner,$owner condition bank::flush_done' \
		'bank::table_lock._M_impl._M_rwlock.__data.__cur_writer' \
		'" ".join([j["cause"]["kind"], by[roles["read_table"][0]]["blocked_on"]["kind"], by[roles["read_table"][0]]["blocked_on"]["object_name"], ",".join(str(by[t]["blocked_on"]["owner_tid"]) for t in roles["read_table"]), by[roles["rewrite_table"][0]]["blocked_on"]["kind"], by[roles["rewrite_table"][0]]["blocked_on"]["object_name"]])'
}
cxx_cases

# aarch64: the deadlock under qemu-user (prog_aarch64, found in place by its
# mutexes' words and threads' states: qemu's /proc shows the host's calls),
# the core qemu writes on an outside SIGABRT (no NT_FILE, no siginfo, a libc
# without DWARF: the layouts are the program's); gdb-multiarch reads the
# owners.
aarch64_deadlock() {
	local sysroot=/usr/aarch64-linux-gnu run=$TMPD/run-aarch64 core got role i
	if [ ! -x "$FIX_DIR/prog_aarch64" ] || ! command -v qemu-aarch64 >/dev/null ||
	   ! command -v gdb-multiarch >/dev/null || [ ! -e "$sysroot/lib/libc.so.6" ]; then
		skip "hang-aarch64: no cross compiler, qemu-aarch64, gdb-multiarch or aarch64 libc"
		return
	fi
	hang_launch "$run" env HANGS_BY_STATE=1 qemu-aarch64 -L "$sysroot" "$FIX_DIR/prog_aarch64" deadlock
	kill -ABRT "$HUNG"; wait "$HUNG" 2>/dev/null
	core=$(ls "$run"/qemu_*.core 2>/dev/null | head -1)
	[ -n "$core" ] || { fail "hang-aarch64: qemu wrote no core ($(tail -1 "$run/out"))"; return; }
	report_json "hang-aarch64" "$run/core.json" "$core" "$FIX_DIR/prog_aarch64" --sysroot "$sysroot" \
		--threads all || return
	local ex=() obj
	for role in transfer audit; do
		obj=$(jget "$run/core.json" "[t for t in j['threads'] if t['tid'] == $(awk -v r=$role '$1 == r {print $2}' "$run/ready")][0]['blocked_on']['object']")
		ex+=(-ex "printf \"$role %d\\n\", *(int *)($obj + 8)")
	done
	LC_ALL=C timeout 120 gdb-multiarch -batch -nx -q -ex "set sysroot $sysroot" "${ex[@]}" \
		"$FIX_DIR/prog_aarch64" "$core" 2>/dev/null | grep -E '^(transfer|audit) ' >"$run/gdb"
	got=$(python3 - "$run/core.json" "$run/ready" "$run/gdb" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
roles = dict(l.split() for l in open(sys.argv[2]))
gdb = dict(l.split() for l in open(sys.argv[3]))
t, a = int(roles["transfer"]), int(roles["audit"])
by = {x["tid"]: x["blocked_on"] or {} for x in j["threads"]}
bad = []
if [sorted(d["threads"]) for d in j["deadlocks"]] != [sorted([t, a])]: bad.append("deadlocks %s" % j["deadlocks"])
for tid, name, owner, role in ((t, "ledger_lock", a, "transfer"), (a, "accounts_lock", t, "audit")):
    b = by.get(tid, {})
    if (b.get("kind"), b.get("object_name"), b.get("owner_tid"), b.get("syscall")) != ("mutex", name, owner, "futex"):
        bad.append("%s %s" % (role, b))
    if int(gdb.get(role, -1)) != owner: bad.append("gdb says %s's owner is %s" % (role, gdb.get(role)))
print("; ".join(bad) or "ok")
PY
)
	if [ "$got" = ok ]; then
		pass "hang-aarch64: qemu's core of the deadlock: both waiters, their owners as gdb-multiarch reads them, the cycle"
	else
		fail "hang-aarch64: $got"
	fi
}
aarch64_deadlock

# CPython (Debian's python3.11, its DWARF from python3.11-dbg's symbols):
# one thread keeps the GIL in a C call, three wait for it; gdb reads the
# GIL's holder.
python_gil() {
	local py=/usr/bin/python3.11 run=$TMPD/run-gil holder main i
	[ -x "$py" ] || { skip "hang-gil: no /usr/bin/python3.11"; return; }
	hang_launch "$run" "$py" "$ROOT/fixtures/hangs/gil.py"
	main=$(awk '$1 == "main" {print $2}' "$run/ready" 2>/dev/null)
	# until the holder is in its sleep (x86_64's clock_nanosleep is 230)
	for i in $(seq 6000); do
		[ "$(cut -d' ' -f1 "/proc/$HUNG/task/$main/syscall" 2>/dev/null)" = 230 ] && break
		kill -0 "$HUNG" 2>/dev/null || break
		sleep 0.05
	done
	holder=$(LC_ALL=C timeout 120 gdb -batch -nx -q -p "$HUNG" \
		-ex 'printf "holder %d\n", ((PyThreadState *)_PyRuntime.ceval.gil.last_holder._value)->native_thread_id' \
		"$py" 2>/dev/null | sed -n 's/^holder //p')
	# The waiters wake every few tens of microseconds (gil.py's switch
	# interval): read until a reading catches one in state R (on the CPU
	# between two timed waits), which is still a GIL waiter.
	local got n oncpu
	for n in 1 2 3 4 5 6 7 8; do
		report_json "hang-gil" "$run/live.json" --pid "$HUNG" "$py" --threads all || return
		oncpu=$(jget "$run/live.json" 'sum(1 for t in j["threads"] if t.get("state") == "R" and t["tid"] != '"${main:-0}"')')
		[ "$oncpu" -gt 0 ] && break
	done
	got=$(jget "$run/live.json" '"%s %s %d" % (j["cause"]["summary"].split(" (process")[0].split(" threads wait")[1] if " threads wait" in j["cause"]["summary"] else j["cause"]["summary"], sorted(set(t["blocked_on"]["owner_tid"] for t in j["threads"] if t["blocked_on"] and t["blocked_on"]["kind"] == "gil")), sum(1 for t in j["threads"] if t["blocked_on"] and t["blocked_on"]["kind"] == "gil"))')
	if [ -n "$main" ] && [ "$holder" = "$main" ] &&
	   [[ "$got" == " for the GIL, held by thread $main (<module> (gil.py:"*")), which sleeps in sleep [$main] 3" ]]; then
		pass "hang-gil: 3 threads wait for the GIL, held by the thread gdb and the script name ($main); $oncpu of them on the CPU in take_gil (reading $n)"
	else
		fail "hang-gil: '$got', holder by gdb '$holder', by the script '$main' ($oncpu waiters in state R, reading $n)"
	fi
	{ kill -9 "$HUNG" && wait "$HUNG"; } 2>/dev/null
}
python_gil

# A Go service leaking goroutines on a channel (fixtures/go_shop `prog hang
# 300`): the biggest group of goroutines that wait alike names the hang,
# live and from its snapshot.
go_leak() {
	command -v go >/dev/null || { skip "hang-go: no Go toolchain"; return; }
	fix_build go_shop || return
	local run=$TMPD/run-go prog=$FIX_DIR/prog i j
	hang_launch "$run" env GOTRACEBACK=crash "$prog" hang 300
	"$ASYNCORE" snapshot "$HUNG" -o "$run/snap.core" >/dev/null 2>&1
	report_json "hang-go-live" "$run/live.json" --pid "$HUNG" "$prog" || return
	report_json "hang-go-snapshot" "$run/snap.json" "$run/snap.core" "$prog" || return
	for j in live snap; do
		summary=$(jget "$run/$j.json" 'j["cause"]["kind"] + ": " + j["cause"]["summary"]')
		if [[ "$summary" == "hang: 300 goroutines wait on chan receive of main.parkedMany in main.parked, created by main.many ("* ]]; then
			pass "hang-go-$j: $summary"
		else
			fail "hang-go-$j: '$summary'"
		fi
	done
	{ kill -9 "$HUNG" && wait "$HUNG"; } 2>/dev/null
}
go_leak

# How long each thread has waited (blocked_on.since), by the test's clock:
# live, from a snapshot (as of its moment, in JSON, text and HTML), null
# from a core and a minidump (tests/hang_since.py).
python3 "$ROOT/tests/hang_since.py" "$ASYNCORE" "$PROG" "$TMPD/run-since" "$ROOT/tests/core_to_minidump.py"

# A crash's core keeps its crash cause and still lists its deadlocks.
if core_pattern_is_local; then
	RUN=$TMPD/run-crash
	mkdir -p "$RUN"
	(cd "$RUN" && ulimit -c unlimited && exec "$PROG" deadlock crash) >"$RUN/out" 2>&1
	CORE=$(ls "$RUN"/core* 2>/dev/null | head -1)
	if [ -n "$CORE" ] && report_json "hang-crash-core" "$RUN/core.json" "$CORE" "$PROG" --threads all; then
		got=$(jget "$RUN/core.json" 'j["cause"]["kind"] + " " + json.dumps(sorted(j["deadlocks"][0]["threads"]) if j["deadlocks"] else [])')
		want="null_dereference $(awk '$1 == "transfer" || $1 == "audit" {print $2}' "$RUN/ready" | sort -n | paste -sd, | sed 's/,/, /; s/^/[/; s/$/]/')"
		if [ "$got" = "$want" ]; then
			pass "hang-crash-core: a null dereference's core keeps its cause and lists the deadlock ($got)"
		else
			fail "hang-crash-core: '$got', want '$want'"
		fi
	elif [ -z "$CORE" ]; then
		fail "hang-crash-core: the crash left no core"
	fi
else
	skip "hang-crash-core: the kernel's core_pattern pipes cores elsewhere"
fi
exit 0
