#!/usr/bin/env bash
# The GIL's holder and its waiters on every CPython from 3.8 to 3.13 that
# pyenv has installed here, and Debian's python3.11: fixtures/hangs/gil.py
# (the main thread keeps the GIL through a C call, three threads spinning
# in Python wait for it) read live (report --pid), from its snapshot, and
# from the core an outside SIGABRT leaves (gcore's when the kernel's
# core_pattern pipes cores elsewhere).  The oracle is the fixture's own
# account of its threads' native ids (threading.get_native_id()).  A
# version that is not installed skips, saying which.
. "$(dirname "$0")/lib.sh"

W=$(mktemp -d)
HUNG=
unhang() {
	[ -z "$HUNG" ] || { kill -9 "$HUNG"; wait "$HUNG"; } 2>/dev/null
	HUNG=
}
cleanup() {
	unhang
	[ -n "${KEEP:-}" ] || rm -rf "$W"
}
trap cleanup EXIT
command -v gdb >/dev/null || { skip "cpython gil: no gdb"; exit 0; }
PYENV_DIR=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
case $(uname -m) in
aarch64) SLEEP_NR=115 ;;
*) SLEEP_NR=230 ;;
esac

# hung NAME PY RUN: the fixture under PY in RUN, core dumps on, until its
# main thread is in its sleep; sets HUNG.
hung() {
	local name=$1 py=$2 run=$3 i main
	mkdir -p "$run"
	(cd "$run" && ulimit -c unlimited && exec "$py" "$ROOT/fixtures/hangs/gil.py") >"$run/out" 2>&1 &
	HUNG=$!
	for i in $(seq 6000); do
		[ -f "$run/ready" ] || ! kill -0 "$HUNG" 2>/dev/null && break
		sleep 0.05
	done
	main=$(awk '$1 == "main" {print $2}' "$run/ready" 2>/dev/null)
	[ -n "$main" ] || { fail "$name: the fixture did not start: $(tail -1 "$run/out")"; return 1; }
	for i in $(seq 6000); do
		[ "$(cut -d' ' -f1 "/proc/$HUNG/task/$main/syscall" 2>/dev/null)" = "$SLEEP_NR" ] && return 0
		kill -0 "$HUNG" 2>/dev/null || break
		sleep 0.05
	done
	fail "$name: the holder never slept"
	return 1
}

# version NAME PY: live, snapshot, core.
version() {
	local name=$1 py=$2 run=$W/run-${1// /-} core
	hung "$name" "$py" "$run" || { unhang; return; }
	# A waiter caught between two waits (woken by its timeout, in state R)
	# is running, not waiting, at that instant: up to three reads of each.
	local i out=
	for i in 1 2 3; do
		report_json "$name live" "$run/live.json" --pid "$HUNG" "$py" --threads all || break
		out=$(python3 "$ROOT/tests/cpython_gil.py" "$run/live.json" "$run/ready" "$name live")
		[[ "$out" == *FAIL* ]] || break
	done
	[ -z "$out" ] || echo "$out"
	out=
	for i in 1 2 3; do
		if ! "$ASYNCORE" snapshot "$HUNG" -o "$run/snap.core" >/dev/null 2>"$run/snap.err"; then
			fail "$name snapshot: $(head -1 "$run/snap.err")"
			break
		fi
		report_json "$name snapshot" "$run/snap.json" "$run/snap.core" "$py" --threads all || break
		out=$(python3 "$ROOT/tests/cpython_gil.py" "$run/snap.json" "$run/ready" "$name snapshot")
		[[ "$out" == *FAIL* ]] || break
	done
	[ -z "$out" ] || echo "$out"
	if core_pattern_is_local; then
		kill -ABRT "$HUNG"
		wait "$HUNG" 2>/dev/null
		core=$(ls "$run"/core* 2>/dev/null | head -1)
	fi
	if [ -z "${core:-}" ] && kill -0 "$HUNG" 2>/dev/null; then
		gdb -batch -nx -q -p "$HUNG" -ex "gcore $run/gcore" >"$run/gcore.log" 2>&1
		core=$run/gcore
	fi
	unhang
	if [ -s "${core:-}" ]; then
		report_json "$name core" "$run/core.json" "$core" "$py" --threads all &&
			python3 "$ROOT/tests/cpython_gil.py" "$run/core.json" "$run/ready" "$name core"
	else
		skip "$name core: no core of the hung process"
	fi
}

for v in 3.8 3.9 3.10 3.11 3.12 3.13; do
	py=$(ls -d "$PYENV_DIR"/versions/$v.*/bin/python$v 2>/dev/null | sort -V | tail -1)
	if [ -z "$py" ]; then
		skip "cpython $v gil: not installed (pyenv install $v)"
		continue
	fi
	version "cpython $v gil" "$py"
done
if [ -x /usr/bin/python3.11 ]; then
	version "debian python3.11 gil" /usr/bin/python3.11
else
	skip "debian python3.11 gil: no /usr/bin/python3.11"
fi
