#!/usr/bin/env bash
# Minidumps (DESIGN.md "Minidumps"): fixtures/minidump_c crashed once under
# lldb, which saves its minidump (Debian's lldb: `process save-core
# --plugin-name=minidump --style stack`), and once with core dumps on, for
# the kernel's core.  The minidump's report is the core's: cause, signal,
# signature, every thread's frames; one crash, one bucket in a store.  Then
# damaged copies: a clear error or partial results, never a crash.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/fixlib.sh"

have_asyncore || { skip "minidump: no asyncore binary"; exit 0; }
if ! test_dep lldb lldb "$TMPD/apt.log"; then
	skip "minidump: lldb (which writes the minidumps) cannot be installed: $(tail -1 "$TMPD/apt.log")"
	exit 0
fi

fix_core minidump_c; rc=$?
[ $rc -eq 0 ] || { no_core minidump $rc; exit 0; }
PROG=$FIX_DIR/prog CORE=$FIX_CORE DMP=$TMPD/crash.dmp

# lldb stops at the fault; -k runs its commands once the process crashed.
(cd "$TMPD" && timeout 300 lldb -b -o run \
	-k "process save-core --plugin-name=minidump --style stack $DMP" "$PROG" \
	</dev/null >"$TMPD/lldb.out" 2>&1)
if [ ! -s "$DMP" ]; then
	fail "minidump: lldb wrote no minidump: $(grep -v '^$' "$TMPD/lldb.out" | tail -3 | tr '\n' ' ')"
	exit 0
fi

asy_json "$TMPD/core.json" "$CORE" "$PROG"
asy_json "$TMPD/dmp.json" "$DMP" "$PROG"
if [ "$ASY_JSON_OK" -ne 0 ] || [ "$ASY_RC" -gt 1 ]; then
	fail "minidump: asyncore exited $ASY_RC: $(head -2 "$TMPD/dmp.json.err" | tr '\n' ' ')"
	exit 0
fi
if python3 "$ROOT/tests/minidump_compare.py" "$TMPD/core.json" "$TMPD/dmp.json" >"$TMPD/cmp" 2>&1; then
	pass "minidump: lldb's minidump gives the core's report: $(tail -1 "$TMPD/cmp")"
else
	fail "minidump: lldb's minidump against the core: $(head -3 "$TMPD/cmp" | tr '\n' ' ')"
fi
check "minidump: the cause is the caught NULL read ($(jget "$TMPD/dmp.json" "j['cause']['summary']"))" \
	test "$(jget "$TMPD/dmp.json" "j['cause']['kind']")" = null_dereference
check "minidump: five threads" test "$(jget "$TMPD/dmp.json" "len(j['threads'])")" = 5
check "minidump: core.path and core.file_size are the minidump's" \
	test "$(jget "$TMPD/dmp.json" "j['core']['path'] + ' ' + str(j['core']['file_size'])")" = "$DMP $(stat -c %s "$DMP")"
check "minidump: the process's pid and executable from its streams" \
	test "$(jget "$TMPD/dmp.json" "str(j['core']['pid'] > 0) + ' ' + j['core']['executable']")" = "True $PROG"
check "minidump: lldb's exception record without si_code said in a warning" \
	test -n "$(jget "$TMPD/dmp.json" "[w for w in j['warnings'] if 'names signal 11 alone' in w][0]")"

# breakpad NAME CORE BINARY: the minidump Breakpad's client writes of CORE's
# crash (tests/core_to_minidump.py: its 1232-byte AMD64 or 912-byte ARM64
# contexts, si_code and fault address, CodeView build-ids) gives CORE's report.
breakpad() {
	local name=$1 core=$2 bin=$3
	python3 "$ROOT/tests/core_to_minidump.py" "$core" "$TMPD/$name.dmp" ||
		{ fail "minidump $name: cannot write the minidump"; return; }
	asy_json "$TMPD/$name-core.json" "$core" "$bin"
	asy_json "$TMPD/$name.json" "$TMPD/$name.dmp" "$bin"
	if python3 "$ROOT/tests/minidump_compare.py" "$TMPD/$name-core.json" "$TMPD/$name.json" >"$TMPD/cmp" 2>&1; then
		pass "minidump $name: Breakpad's minidump of the core's crash gives its report: $(tail -1 "$TMPD/cmp")"
	else
		fail "minidump $name: Breakpad's minidump against the core: $(head -3 "$TMPD/cmp" | tr '\n' ' ')"
	fi
	rm -f "$TMPD/$name.dmp"
}
breakpad breakpad-x86_64 "$CORE" "$PROG"
check "minidump breakpad-x86_64: with si_code and the fault address, no warning" \
	test "$(jget "$TMPD/breakpad-x86_64.json" "j['warnings']")" = "[]"
if test_dep bzip2 bzip2 "$TMPD/apt-bz.log" &&
	bzip2 -dc "$ROOT/fixtures/aarch64/backtrace.aarch64.core.bz2" >"$TMPD/a64.core" &&
	bzip2 -dc "$ROOT/fixtures/aarch64/backtrace.aarch64.exec.bz2" >"$TMPD/a64.exec"; then
	breakpad breakpad-aarch64 "$TMPD/a64.core" "$TMPD/a64.exec"
	check "minidump breakpad-aarch64: core.arch aarch64" \
		test "$(jget "$TMPD/breakpad-aarch64.json" "j['core']['arch']")" = aarch64
else
	fail "minidump breakpad-aarch64: cannot decompress fixtures/aarch64's core"
fi

# A minidump read where its program is not at the path it ran from (a crash
# server's case): the program is found by its CodeView build-id, in a debug
# directory's .build-id tree and from a debuginfod server.
MOVED=$TMPD/moved
mkdir -p "$MOVED" && cp "$PROG" "$MOVED/prog"
(cd "$MOVED" && ulimit -c unlimited && exec ./prog >/dev/null 2>&1)
MCORE=$(ls "$MOVED"/core* 2>/dev/null | head -1)
if [ -z "$MCORE" ] && core_pattern_is_local; then
	fail "minidump moved: the program gave no core"
elif [ -n "$MCORE" ]; then
	python3 "$ROOT/tests/core_to_minidump.py" "$MCORE" "$TMPD/moved.dmp"
	asy_json "$TMPD/moved-core.json" "$MCORE"
	bid=$(jget "$TMPD/moved-core.json" "j['core']['build_id']")
	mkdir -p "$TMPD/dbg/.build-id/${bid:0:2}" "$TMPD/served"
	mv "$MOVED/prog" "$TMPD/dbg/.build-id/${bid:0:2}/${bid:2}"
	asy_json "$TMPD/moved.json" "$TMPD/moved.dmp" --debug-dir "$TMPD/dbg"
	if python3 "$ROOT/tests/minidump_compare.py" "$TMPD/moved-core.json" "$TMPD/moved.json" >"$TMPD/cmp" 2>&1; then
		pass "minidump moved: the program found by build-id in a debug directory: $(tail -1 "$TMPD/cmp")"
	else
		fail "minidump moved: by build-id in a debug directory: $(head -3 "$TMPD/cmp" | tr '\n' ' ')"
	fi
	check "minidump moved: its module keeps the path it ran from" \
		test "$(jget "$TMPD/moved.json" "[m['path'] for m in j['modules'] if m['build_id'] == '$bid'][0]")" = "$MOVED/prog"
	if test_dep debuginfod debuginfod "$TMPD/apt-dbgd.log"; then
		cp "$TMPD/dbg/.build-id/${bid:0:2}/${bid:2}" "$TMPD/served/prog"
		export DEBUGINFOD_CACHE_PATH=$TMPD/client-cache
		if debuginfod_start "$TMPD/served" "$bid" "$TMPD/dbgd"; then
			DEBUGINFOD_URLS=$DEBUGINFOD_URL asy_json "$TMPD/served.json" "$TMPD/moved.dmp"
			if python3 "$ROOT/tests/minidump_compare.py" "$TMPD/moved-core.json" "$TMPD/served.json" >"$TMPD/cmp" 2>&1; then
				pass "minidump moved: the program found by build-id on a debuginfod server: $(tail -1 "$TMPD/cmp")"
				check "minidump moved: ... its module keeps the path it ran from" \
					test "$(jget "$TMPD/served.json" "[m['path'] for m in j['modules'] if m['build_id'] == '$bid'][0]")" = "$MOVED/prog"
			else
				fail "minidump moved: from debuginfod: $(head -3 "$TMPD/cmp" | tr '\n' ' ')"
			fi
		else
			fail "minidump moved: debuginfod never served $bid: $(tail -2 "$TMPD/dbgd.log" | tr '\n' ' ')"
		fi
		kill "$DEBUGINFOD_PID" 2>/dev/null
		wait "$DEBUGINFOD_PID" 2>/dev/null
	else
		skip "minidump moved: debuginfod could not be installed: $(tail -1 "$TMPD/apt-dbgd.log")"
	fi
fi

# Crashpad's annotations (the process's, a module's simple, list and object
# annotations), bytes that are no UTF-8 among them: shown, never dropped.
python3 "$ROOT/tests/core_to_minidump.py" "$CORE" "$TMPD/ann.dmp" 'channel=beta' $'build=7\xff' \
	'prog:plugin=cart' 'prog:@gpu=none' 'prog:[]=warm start' ||
	fail "minidump annotations: cannot write the minidump"
asy_json "$TMPD/ann.json" "$TMPD/ann.dmp" "$PROG"
check "minidump annotations: core.annotations holds every one, in order" \
	test "$(jget "$TMPD/ann.json" "ascii(list(j['core']['annotations'].items()))")" = \
	"[('channel', 'beta'), ('build', '7\ufffd'), ('prog: [0]', 'warm start'), ('prog: plugin', 'cart'), ('prog: gpu', 'none')]"
"$ASYNCORE" "$TMPD/ann.dmp" "$PROG" >"$TMPD/ann.txt" 2>/dev/null
check "minidump annotations: the text report's header lists them" grep -qx 'annotation:  prog: plugin = cart' "$TMPD/ann.txt"
"$ASYNCORE" report "$TMPD/ann.dmp" "$PROG" --format html >"$TMPD/ann.html" 2>/dev/null
check "minidump annotations: the HTML page's facts list them" \
	grep -q '<dt class="annotation">prog: gpu</dt><dd>none</dd>' "$TMPD/ann.html"
check "minidump annotations: a core has none" test "$(jget "$TMPD/core.json" "j['core']['annotations']")" = "{}"
rm -f "$TMPD/ann.dmp"

# Without the binary: the module list names it, its build-id agrees.
"$ASYNCORE" "$DMP" >"$TMPD/dmp.txt" 2>"$TMPD/dmp.txt.err"; rc=$?
"$ASYNCORE" "$CORE" >"$TMPD/core.txt" 2>/dev/null
check "minidump: asyncore FILE.dmp (exit $rc) opens with the core's cause line" \
	test "$(head -1 "$TMPD/dmp.txt")" = "$(head -1 "$TMPD/core.txt")" -a $rc -le 1

# One crash, one bucket.
DB=$TMPD/store.db
"$ASYNCORE" ingest --db "$DB" "$CORE" "$DMP" >"$TMPD/ingest.out" 2>&1; rc=$?
check "minidump: ingest takes the core and the minidump (exit $rc)" test $rc -le 1
check "minidump: ... as two cores in one bucket" \
	test "$("$ASYNCORE" query --db "$DB" --format csv "SELECT count(*) || ' ' || count(DISTINCT signature_hash) FROM cores" | tail -1)" = "2 1"

# A Crashpad database: its reports are the minidumps of completed/ and
# pending/ (new/ holds those being written); its own files are no cores.
CP=$TMPD/crashpad
mkdir -p "$CP/completed" "$CP/pending" "$CP/new" "$CP/attachments"
printf 'settings' >"$CP/settings.dat"
printf 'metadata' >"$CP/metadata"
ln "$DMP" "$CP/completed/8f2b6c1e-0a1d-4c55-9a55-1f0c1d2e3f40.dmp"
printf 'MDMP' >"$CP/new/5d1f7a3c-half-written.dmp"
printf 'meta' >"$CP/completed/8f2b6c1e-0a1d-4c55-9a55-1f0c1d2e3f40.meta"
"$ASYNCORE" ingest --db "$TMPD/cp.db" "$CP" >"$TMPD/cp.out" 2>&1; rc=$?
check "minidump: ingest of a Crashpad database (exit $rc) stores its completed report, nothing else" \
	test $rc -eq 0 -a "$("$ASYNCORE" query --db "$TMPD/cp.db" --format csv "SELECT count(*) || ' ' || signature_hash FROM cores" | tail -1)" = \
	"1 $(jget "$TMPD/dmp.json" "j['signature_hash']")"
rm -rf "$CP"

# A hang: fixtures/stack_hang (a deadlock, a condition wait, a read and an
# epoll_wait, its locks on main's stack, which a minidump of stacks holds)
# saved by lldb, then dumped by the kernel (gdb's gcore where the kernel's
# core goes elsewhere): the same moment.  A minidump's x86_64 contexts hold
# no orig_rax, so the system call comes from the code before the pc and the
# C library's function; its blocked_on and deadlocks are the core's, and so
# are those of Breakpad's layout of that core (no orig_rax either).
hang_minidump() {
	fix_build stack_hang || return
	local run=$TMPD/stack_hang pid core
	mkdir -p "$run" && cp "$FIX_DIR/prog" "$run/"
	(cd "$run" && ulimit -c unlimited && exec ./prog </dev/null >/dev/null 2>&1) &
	pid=$!
	for _ in $(seq 300); do [ -f "$run/ready" ] && break; sleep 0.1; done
	if [ ! -f "$run/ready" ]; then
		kill -KILL $pid; wait $pid 2>/dev/null
		fail "minidump-hang: the program never got to its waits"
		return
	fi
	timeout 300 lldb -b -p $pid -o "process save-core --plugin-name=minidump --style stack $run/hang.dmp" \
		-o 'process detach' </dev/null >"$run/lldb.out" 2>&1
	if core_pattern_is_local; then
		kill -ABRT $pid; wait $pid 2>/dev/null
		core=$(ls "$run"/core* 2>/dev/null | head -1)
	else
		gcore -o "$run/gcore" $pid >/dev/null 2>&1
		kill -KILL $pid; wait $pid 2>/dev/null
		core=$(ls "$run"/gcore.* 2>/dev/null | head -1)
	fi
	[ -s "$run/hang.dmp" ] || { fail "minidump-hang: lldb wrote no minidump: $(tail -2 "$run/lldb.out" | tr '\n' ' ')"; return; }
	[ -n "$core" ] || { fail "minidump-hang: no core of the hung program"; return; }
	asy_json "$run/core.json" "$core" "$run/prog"
	asy_json "$run/dmp.json" "$run/hang.dmp" "$run/prog"
	if python3 "$ROOT/tests/blocked_compare.py" "$run/core.json" "$run/dmp.json" >"$run/cmp" 2>&1; then
		pass "minidump-hang: lldb's minidump waits as the core does: $(tail -1 "$run/cmp")"
	else
		fail "minidump-hang: lldb's minidump against the core: $(head -3 "$run/cmp" | tr '\n' ' ')"
	fi
	python3 "$ROOT/tests/core_to_minidump.py" "$core" "$run/breakpad.dmp" &&
		asy_json "$run/breakpad.json" "$run/breakpad.dmp" "$run/prog"
	if python3 "$ROOT/tests/blocked_compare.py" "$run/core.json" "$run/breakpad.json" >"$run/cmp" 2>&1; then
		pass "minidump-hang: Breakpad's layout of the core waits as the core does: $(tail -1 "$run/cmp")"
	else
		fail "minidump-hang: Breakpad's layout against the core: $(head -3 "$run/cmp" | tr '\n' ' ')"
	fi
	rm -rf "$run"
}
hang_minidump

# damage CASE: a damaged copy gives a report (exit 0/1, JSON) or a one-line
# error (exit 2), never a crash.
damage() {
	local case=$1 out=$TMPD/$1.dmp
	python3 "$ROOT/tests/minidump_damage.py" "$DMP" "$out" "$case" || { fail "minidump-bad-$case: cannot write it"; return; }
	"$ASYNCORE" report "$out" "$PROG" --format json >"$TMPD/$case.json" 2>"$TMPD/$case.err"
	local rc=$?
	if [ $rc -le 1 ] && json_ok "$TMPD/$case.json"; then
		pass "minidump-bad-$case: partial results (exit $rc, $(jget "$TMPD/$case.json" "len(j['threads'])") threads, $(jget "$TMPD/$case.json" "len(j['warnings'])") warnings)"
	elif [ $rc -eq 2 ] && [ "$(wc -l <"$TMPD/$case.err")" -eq 1 ]; then
		pass "minidump-bad-$case: refused: $(cat "$TMPD/$case.err")"
	else
		fail "minidump-bad-$case: exit $rc: $(head -3 "$TMPD/$case.err" | tr '\n' ' ')"
	fi
	rm -f "$out"
}
for case in truncated header directory stream memory count overlap cpu context; do damage "$case"; done
check "minidump-bad-memory: the stack past the end is warned" \
	grep -q 'lies past the end of the file' "$TMPD/memory.err"
check "minidump-bad-context: a context too short is warned" grep -q 'is no x86_64 context' "$TMPD/context.err"
check "minidump-bad-overlap: overlapping ranges are warned" grep -q 'memory ranges overlap' "$TMPD/overlap.err"
rm -f "$DMP"
exit 0
