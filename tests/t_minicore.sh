#!/usr/bin/env bash
# Minicores: for each kind of fixture core, `minicore CORE -o MINI` and
# `report MINI` equals `report CORE`, compared field by field (JSON, every
# thread, every frame's args and locals), and MINI is small: at most 5% of a
# core of 10 MB or more.  The only fields that may differ are the file's own:
# core.path, core.file_size, core.size and core.sha256 (tests/minicore_compare.py).
# Also: a .zst minicore, a minicore of a minicore, ingest of a core and its
# minicore storing one core, and minicores of damaged cores never crashing.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/fixlib.sh"
. "$ROOT/tests/aarch64_lib.sh"

have_asyncore || { fail "minicore: no asyncore at $ASYNCORE (run make)"; exit 0; }
COMPARE=$ROOT/tests/minicore_compare.py

size_of() { stat -c %s "$1"; }

# same NAME CORE MINI ARGS...: both reports, compared; PASS or FAIL NAME.
same() {
	local name=$1 core=$2 mini=$3; shift 3
	"$ASYNCORE" report "$core" "$@" --format json --locals all >"$TMPD/$name.core.json" 2>"$TMPD/$name.core.err"
	local rc1=$?
	"$ASYNCORE" report "$mini" "$@" --format json --locals all >"$TMPD/$name.mini.json" 2>"$TMPD/$name.mini.err"
	local rc2=$?
	if [ $rc1 -gt 1 ] || [ $rc2 -gt 1 ]; then
		fail "$name: report exited $rc1 (core) and $rc2 (minicore): $(tail -2 "$TMPD/$name.mini.err" | tr '\n' ' ')"
		return 1
	fi
	if python3 "$COMPARE" "$TMPD/$name.core.json" "$TMPD/$name.mini.json" >"$TMPD/$name.diff"; then
		pass "$name: report of the minicore equals the core's"
	else
		fail "$name: the reports differ:"; sed 's/^/    /' "$TMPD/$name.diff"; return 1
	fi
	[ $rc1 -eq $rc2 ] && pass "$name: exit status $rc1 both" ||
		fail "$name: exit status $rc1 (core), $rc2 (minicore)"
}

# small NAME CORE MINI: at most 5% of a core of 10 MB or more.
small() {
	local name=$1 c m; c=$(size_of "$2"); m=$(size_of "$3")
	echo "size $name: core $c bytes, minicore $m bytes"
	if [ "$c" -lt $((10 << 20)) ]; then
		pass "$name: minicore $m bytes of a $c-byte core"
	elif [ $((m * 100)) -le $((c * 5)) ]; then
		pass "$name: minicore $m bytes, $((m * 1000 / c))/1000 of the core ($c bytes)"
	else
		fail "$name: minicore $m bytes is more than 5% of the core ($c bytes)"
	fi
}

# check NAME CORE ARGS...: make the minicore, compare, measure.
check() {
	local name=$1 core=$2; shift 2
	local mini=$TMPD/$name.mini
	if ! "$ASYNCORE" minicore "$core" "$@" -o "$mini" >"$TMPD/$name.out" 2>"$TMPD/$name.err"; then
		local rc=$?
		[ $rc -gt 1 ] && { fail "$name: minicore exited $rc: $(tail -2 "$TMPD/$name.err" | tr '\n' ' ')"; return 1; }
	fi
	[ -s "$mini" ] || { fail "$name: no minicore written"; return 1; }
	same "$name" "$core" "$mini" "$@" && small "$name" "$core" "$mini"
	LAST_MINI=$mini
}

# fixture NAME CASE VARIANT [PROGRAM ARGS...] [-- ASYNCORE ARGS...]
fixture() {
	local name=$1 case=$2 variant=$3 rc; shift 3
	local prog_args=() asy_args=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do prog_args+=("$1"); shift; done
	[ $# -gt 0 ] && { shift; asy_args=("$@"); }
	fix_core "$case" "$variant" ${prog_args[@]+"${prog_args[@]}"}; rc=$?
	[ $rc -eq 0 ] || { no_core "$name" $rc; return 1; }
	check "$name" "$FIX_CORE" "$FIX_DIR/prog" ${asy_args[@]+"${asy_args[@]}"}
}

fixture native_args native_args ""
fixture native_cxx native_cxx ""
fixture native_locals native_locals ""
fixture threads4 threads4 ""
fixture folly_c folly_c ""
fixture folly_cpp folly_cpp ""
fixture bthread bthread ""
fixture recorder recorder ""
fixture cause_cxx cause_cxx "" out_of_range   # an uncaught exception: its object
fixture handler_c handler_c "" none null
fixture toyvm toyvm linked -- --runtime "$ROOT/fixtures/toyvm/toy-tls.json"
fixture go_shop go_shop "" nil

# A described runtime's hostile stacks, with every description: modules
# named from the dynamic linker's link map, not NT_FILE.
if fix_core hostile_rt ""; then
	rt=()
	for f in "$FIX_DIR"/*.json; do rt+=(--runtime "$f"); done
	check hostile_rt "$FIX_CORE" "$FIX_DIR/prog" "${rt[@]}"
else
	no_core hostile_rt $?
fi

# CPython: its runtime description is found in share/ without --runtime.
if fix_build cpython "" && core=$(fixture_core "$FIX_DIR" crash.py 2>"$TMPD/core.err"); then
	FIX_RUNS+=("$(dirname "$core")")
	check cpython "$core"
else
	skip "cpython: $(head -1 "$TMPD/core.err" 2>/dev/null)"
fi

# aarch64 under qemu-user: no NT_FILE, libraries from the sysroot.
if command -v qemu-aarch64 >/dev/null && command -v aarch64-linux-gnu-gcc >/dev/null &&
   [ -e "$SYSROOT/lib/libc.so.6" ] && fix_build aarch64_native nopie; then
	if core=$(qemu_core "$FIX_DIR" 2>"$TMPD/core.err"); then
		FIX_RUNS+=("$(dirname "$core")")
		check aarch64_qemu "$core" "$FIX_DIR/prog" --sysroot "$SYSROOT"
	else
		skip "aarch64_qemu: $(head -1 "$TMPD/core.err")"
	fi
else
	skip "aarch64_qemu: no qemu-aarch64 or aarch64 cross toolchain"
fi

# ---- the file: compressed, cut again, one core in a store ------------------

if fix_core folly_c ""; then
	core=$FIX_CORE prog=$FIX_DIR/prog
	if "$ASYNCORE" minicore "$core" "$prog" -o "$TMPD/f.mini.zst" 2>/dev/null; [ $? -le 1 ]; then
		head -c 4 "$TMPD/f.mini.zst" | od -An -tx1 | grep -q '28 b5 2f fd' &&
			pass "minicore FILE.zst is zstd-compressed" || fail "minicore FILE.zst is not zstd"
		same folly_c-zst "$core" "$TMPD/f.mini.zst" "$prog"
		"$ASYNCORE" minicore "$TMPD/f.mini.zst" "$prog" -o "$TMPD/f.mini2" 2>/dev/null
		same folly_c-again "$core" "$TMPD/f.mini2" "$prog"
	else
		fail "minicore FILE.zst failed"
	fi
	fp1=$(jget "$TMPD/folly_c-zst.core.json" 'j["core"]["fingerprint"]')
	fp2=$(jget "$TMPD/folly_c-zst.mini.json" 'j["core"]["fingerprint"]')
	[ -n "$fp1" ] && [ "$fp1" = "$fp2" ] && pass "the minicore's fingerprint is its core's" ||
		fail "fingerprints differ: core '$fp1', minicore '$fp2'"
	db=$TMPD/one.db
	"$ASYNCORE" ingest --db "$db" --quiet --jobs 1 "$core" "$prog" >/dev/null 2>&1
	"$ASYNCORE" ingest --db "$db" --quiet --jobs 1 "$TMPD/f.mini.zst" >/dev/null 2>&1
	n=$("$ASYNCORE" query --db "$db" --format csv "SELECT count(*) FROM cores" 2>/dev/null | tail -1)
	[ "$n" = 1 ] && pass "ingest of a core and its minicore stores one core" ||
		fail "ingest of a core and its minicore: $n cores stored"
fi

# ---- bad input ---------------------------------------------------------------

"$ASYNCORE" minicore "$TMPD/no-such-core" -o "$TMPD/x" >/dev/null 2>"$TMPD/err"; rc=$?
[ $rc -eq 2 ] && [ ! -e "$TMPD/x" ] && pass "minicore of a missing core: exit 2, nothing written" ||
	fail "minicore of a missing core: exit $rc"
"$ASYNCORE" minicore "$TMPD/no-such-core" >/dev/null 2>"$TMPD/err"; rc=$?
[ $rc -eq 2 ] && pass "minicore without -o: exit 2" || fail "minicore without -o: exit $rc"
if [ -n "${LAST_MINI:-}" ]; then
	"$ASYNCORE" minicore "$LAST_MINI" -o "$TMPD/nodir/x" >/dev/null 2>"$TMPD/err"; rc=$?
	[ $rc -eq 2 ] && grep -q nodir "$TMPD/err" && pass "minicore to an unwritable path: exit 2, named" ||
		fail "minicore to an unwritable path: exit $rc: $(head -1 "$TMPD/err")"
fi

# Damaged cores (tests/corrupt_core.py's): a minicore of each never crashes.
if [ -n "${core:-}" ] && [ -f "$ROOT/tests/corrupt_core.py" ]; then
	crashed=0 n=0
	for mode in truncate-notes truncate-segments "flip-notes 7" "flip-phdrs 3" "flip-memory 11" "flip-stack 5"; do
		# shellcheck disable=SC2086
		python3 "$ROOT/tests/corrupt_core.py" "$core" "$TMPD/bad" $mode >/dev/null 2>&1 || continue
		n=$((n + 1))
		rm -f "$TMPD/bad.mini"
		"$ASYNCORE" minicore "$TMPD/bad" -o "$TMPD/bad.mini" >/dev/null 2>&1; rc=$?
		[ $rc -gt 2 ] && { crashed=1; fail "minicore of a damaged core ($mode) exited $rc"; }
		if [ -s "$TMPD/bad.mini" ]; then
			"$ASYNCORE" report "$TMPD/bad.mini" >/dev/null 2>&1; rc=$?
			[ $rc -gt 2 ] && { crashed=1; fail "report of a damaged core's minicore ($mode) exited $rc"; }
		fi
	done
	[ $n -gt 0 ] && [ $crashed -eq 0 ] && pass "minicores of $n damaged cores: no crash"
fi
exit 0
