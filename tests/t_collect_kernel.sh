#!/bin/bash
# run: alone
# `asyncore collect` installed as the kernel's core_pattern: fixture crashes
# stored within seconds, two at once, the store missing, a collector killed
# mid-core.  It changes core_pattern, so it runs by itself and puts it back
# on every path.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/fixlib.sh"

have_asyncore || { skip "no asyncore at $ASYNCORE"; exit 0; }
if [ "$(id -u)" != 0 ] || ! [ -w /proc/sys/kernel/core_pattern ]; then
	skip "collect kernel: core_pattern is not writable here"; exit 0
fi
fix_build threads4 || exit 0
PROG=$FIX_DIR/prog
ASY=$(readlink -f "$ASYNCORE")

# Short paths: the kernel keeps 127 characters of core_pattern.
K=$(mktemp -d /tmp/asyk.XXXXXX)
D=$K/d
DB=$K/c.db
kernel_cleanup() {
	"$ASY" collect --uninstall --dir "$D" >/dev/null 2>&1
	core_pattern_restore
	rm -rf "$K"
	fix_cleanup
}
trap kernel_cleanup EXIT
trap 'exit 130' INT TERM

core_pattern_save
ORIG_PATTERN=$(cat /proc/sys/kernel/core_pattern)
ORIG_LIMIT=$(cat /proc/sys/kernel/core_pipe_limit)
if ! "$ASY" collect --install --db "$DB" --dir "$D" >"$K/install.out" 2>&1; then
	fail "install: $(cat "$K/install.out")"; exit 0
fi
check "install: core_pattern is the collector" \
	grep -q "^|$ASY collect --db $DB --dir $D %P %i %s %t %E\$" /proc/sys/kernel/core_pattern
check "install: core_pipe_limit non-zero" [ "$(cat /proc/sys/kernel/core_pipe_limit)" != 0 ]

rows() { sqlite3 "$1" 'select count(*) from cores' 2>/dev/null || echo 0; }
# wait_until SECONDS CMD...: poll CMD every 50 ms; false past the bound.
wait_until() {
	local end=$(( $(date +%s) + $1 )); shift
	until "$@"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.05
	done
}
has_rows() { [ "$(rows "$1")" -ge "$2" ]; }
crash() { { (cd "$1" && ulimit -c unlimited && exec "$PROG") >/dev/null 2>&1; } 2>/dev/null; }

# --- one crash ----------------------------------------------------------------
mkdir -p "$K/run1"
t0=$(date +%s%N)
crash "$K/run1"
if wait_until 60 has_rows "$DB" 1; then
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	pass "one crash: stored in $ms ms"
else
	fail "one crash: not stored within 60 s"
fi
check "one crash: no core file where it crashed" [ -z "$(ls "$K/run1" | grep core)" ]
check "one crash: the row names the program, its pid and crash time" \
	[ "$(sqlite3 "$DB" "select count(*) from cores where executable = '$PROG' and pid > 0 and crashed_at like '20%'")" = 1 ]
MINI=$(ls "$D" | grep '^core\.prog\.' | head -1)
check "one crash: the minicore kept" [ -n "$MINI" ]
if [ -n "$MINI" ]; then
	report_json "minicore" "$K/mini.json" "$D/$MINI" &&
		check "one crash: the minicore's signature is the row's" \
			[ "$(json_get "$K/mini.json" 'j["signature"]')" = "$(sqlite3 "$DB" 'select signature from cores')" ]
fi
check "one crash: the crash site named from the running binary" \
	[ "$(sqlite3 "$DB" "select count(*) from cores where signature like 'SIGSEGV: write_known_address%'")" = 1 ]

# --- two at once ----------------------------------------------------------------
mkdir -p "$K/run2" "$K/run3"
crash "$K/run2" & a=$!
crash "$K/run3" & b=$!
wait $a $b 2>/dev/null
check "two at once: both stored" wait_until 60 has_rows "$DB" 3

# --- the store missing: kept, then ingest DIR ----------------------------------
MISSING=$K/later/sub/c.db
"$ASY" collect --install --db "$MISSING" --dir "$D" >/dev/null 2>&1
before=$(ls "$D" | grep -c '^core\.')
mkdir -p "$K/run4"
crash "$K/run4"
more_kept() { [ "$(ls "$D" | grep -c '^core\.')" -gt "$before" ] && [ -z "$(ls -A "$D" | grep '^\.collect\.[0-9]')" ]; }
check "store missing: the minicore kept" wait_until 60 more_kept
mkdir -p "$(dirname "$MISSING")"
"$ASY" ingest --db "$MISSING" -q "$D" >/dev/null 2>&1
check "store missing: ingest DIR stores it later (with the 3 stored before)" [ "$(rows "$MISSING")" = 4 ]
"$ASY" collect --install --db "$DB" --dir "$D" >/dev/null 2>&1

# --- a collector killed mid-core -------------------------------------------------
BIG=$K/big
cat >"$BIG.c" <<'EOF'
#include <stdlib.h>
#include <string.h>
int main(void)
{
	size_t n = 500u << 20;
	char *p = malloc(n);
	if (!p)
		return 1;
	memset(p, 0x5a, n);
	*(volatile int *)16 = p[n - 1];
	return 0;
}
EOF
if cc -O1 -o "$BIG" "$BIG.c"; then
	mkdir -p "$K/run5"
	{ (cd "$K/run5" && ulimit -c unlimited && exec "$BIG") >/dev/null 2>&1 & } 2>/dev/null
	victim=$!
	collector() { pgrep -f "^$ASY collect --db $DB " | head -1; }
	found() { cpid=$(collector); [ -n "$cpid" ]; }
	if wait_until 60 found; then
		kill -STOP "$cpid"   # held mid-core, then killed
		partial=$(stat -c %s "$D"/.collect."$cpid".* 2>/dev/null | head -1)
		kill -KILL "$cpid"
		check "killed mid-core: it had read part of the core (${partial:-0} bytes)" \
			[ -n "$partial" ] && [ "$partial" -lt $((500 << 20)) ]
		exited() { st=$(awk '{print $3}' "/proc/$victim/stat" 2>/dev/null); [ "$st" = Z ] || [ -z "$st" ]; }
		check "killed mid-core: the crashed process exits" wait_until 30 exited 2>/dev/null
		wait "$victim" 2>/dev/null
		check "killed mid-core: reaped, no zombie left" [ ! -e "/proc/$victim" ]
		check "killed mid-core: nothing stored of it" [ "$(sqlite3 "$DB" "select count(*) from cores where executable = '$BIG'")" = 0 ]
	else
		kill -9 "$victim" 2>/dev/null; wait "$victim" 2>/dev/null
		fail "killed mid-core: no collector seen within 60 s"
	fi
	# The next collect drops the dead collector's temporary file.
	mkdir -p "$K/run6"
	crash "$K/run6"
	check "after the kill: the next crash stored" wait_until 60 has_rows "$DB" 4
	no_stale() { [ -z "$(ls -A "$D" | grep '^\.collect\.')" ]; }
	check "after the kill: no temporary file left" wait_until 30 no_stale
else
	skip "killed mid-core: no C compiler"
fi

# --- uninstall ---------------------------------------------------------------------
"$ASY" collect --uninstall --dir "$D" >/dev/null 2>&1
check "uninstall: core_pattern as it was" [ "$(cat /proc/sys/kernel/core_pattern)" = "$ORIG_PATTERN" ]
check "uninstall: core_pipe_limit as it was" [ "$(cat /proc/sys/kernel/core_pipe_limit)" = "$ORIG_LIMIT" ]
