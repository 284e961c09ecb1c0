#!/usr/bin/env bash
# The budget of one core in `report`: a memory ceiling (--max-memory) and a
# time limit (--timeout).  Reaching either is exit 2 and one line naming the
# limit, never a report missing what could not be allocated.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "budget: no asyncore at $ASYNCORE (run make)"; exit 0; }
fix_core store_crash "" segv 1 || { no_core budget $?; exit 0; }
core=$FIX_CORE
runtimes=()

# run NAME ARGS...: asyncore report with ARGS into $TMPD/NAME.{out,err}; sets RC.
run() {
	local name=$1; shift
	timeout 60 "$ASYNCORE" report "$core" "$@" >"$TMPD/$name.out" 2>"$TMPD/$name.err"
	RC=$?
}

run default --format json
check "budget: the defaults leave a fixture core alone (exit $RC)" test "$RC" -le 1
run usage --max-memory lots
check "budget: a size that is not one is a usage error (exit $RC)" \
	test "$RC/$(grep -c 'max-memory wants a size' "$TMPD/usage.err")" = 2/1
run suffixes --max-memory=1G --timeout=60 --format json
check "budget: sizes with a unit and --name=value are accepted (exit $RC)" test "$RC" -le 1

if ldd "$ASYNCORE" 2>/dev/null | grep -q libasan; then
	skip "budget: no memory ceiling under AddressSanitizer (its shadow memory exceeds any)"
else
	# Too small for libc's debug info: whichever allocation fails first (ours,
	# libdwfl's, libdw's, which ends the process after its own line
	# "asyncore: libdw: Cannot allocate memory"), the answer is the same.
	for m in 4M 8M 12M; do
		run mem$m --max-memory $m --format json
		check "budget: --max-memory $m: exit 2, the last line names the limit (exit $RC)" \
			test "$RC/$(tail -1 "$TMPD/mem$m.err" | grep -c "^asyncore: $core: memory limit of ${m%M} MiB reached (--max-memory)$")" = 2/1
		check "budget: --max-memory $m: no partial document" test ! -s "$TMPD/mem$m.out"
	done
	run nolimit --max-memory 0 --format json
	check "budget: --max-memory 0 is no ceiling (exit $RC)" test "$RC" -le 1

	# Every ceiling from 3 MiB up, by 1 MiB: an allocation fails at a
	# different place each time (ours, libdwfl's, libdw's, jansson's), and
	# each run is a complete report or the limit named, never a crash.
	# Over a C++ core with async stacks too; then, by 2 MiB up to where
	# they pass, over bthreads, arguments and a described runtime's hostile
	# stacks.
	cores=("$core:30720:1024")
	fix_core folly_c && cores+=("$FIX_CORE:30720:1024")
	fix_core bthread && cores+=("$FIX_CORE:40960:2048")
	fix_core native_args && cores+=("$FIX_CORE:30720:2048")
	if fix_core hostile_rt; then
		cores+=("$FIX_CORE:30720:2048")
		for f in "$FIX_DIR"/*.json; do runtimes+=(--runtime "$f"); done
	fi
	bad="" runs=0 limited=0
	for spec in "${cores[@]}"; do
		IFS=: read -r c top step <<<"$spec"
		extra=()
		[[ $c == */hostile_rt/* ]] && extra=("${runtimes[@]}")
		for k in $(seq 3072 "$step" "$top"); do
			timeout 60 "$ASYNCORE" report "$c" --format json --max-memory ${k}K "${extra[@]}" \
				>"$TMPD/sweep.out" 2>"$TMPD/sweep.err"
			rc=$? runs=$((runs + 1))
			if [ $rc = 2 ] && tail -1 "$TMPD/sweep.err" | grep -q "memory limit of $(((k + 1023) / 1024)) MiB reached"; then
				limited=$((limited + 1))
			elif [ $rc -gt 1 ] || ! json_ok "$TMPD/sweep.out"; then
				bad="$bad $(basename "$(dirname "$(dirname "$c")")")@${k}K:exit$rc"
			fi
		done
	done
	check "budget: $runs ceilings, $limited reached: a complete report or the limit named${bad:+ (not:$bad)}" \
		test -z "$bad" -a "$limited" -gt 0
fi

# The time limit: stdout is a pipe of one page that nobody reads, so the
# report (longer than a page) blocks until the limit ends it.
python3 - "$ASYNCORE" "$core" "$TMPD/time.err" <<'PY' >"$TMPD/time.res"
import fcntl, os, subprocess, sys, time
asy, core, err = sys.argv[1:4]
r, w = os.pipe()
fcntl.fcntl(w, 1031, 4096)            # F_SETPIPE_SZ: one page
start = time.time()
p = subprocess.Popen([asy, "report", core, "--format", "json", "--timeout", "1"],
                     stdout=w, stderr=open(err, "w"))
os.close(w)
try:
    rc = p.wait(timeout=30)
except subprocess.TimeoutExpired:
    p.kill()
    rc = "hung"
print(rc, round(time.time() - start, 1))
PY
read -r rc secs <"$TMPD/time.res"
check "budget: --timeout 1 on a report that cannot finish: exit 2 after about 1 s (exit $rc, $secs s)" \
	sh -c "[ '$rc' = 2 ] && [ \"\$(echo '$secs < 5' | bc)\" = 1 ]"
check "budget: one line naming the time limit" \
	test "$(grep -c . "$TMPD/time.err")/$(grep -c 'time limit of 1 s reached (--timeout)' "$TMPD/time.err")" = 1/1
