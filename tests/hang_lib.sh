# Hung processes of fixtures/hangs and their cores, for the tests that read
# them (t_hang, t_hang_store, t_clickhouse).  Source after tests/lib.sh.
#
# hang_start PROG MODE RUN   PROG hung in MODE in the directory RUN (made),
#                            core dumps on; sets HUNG (its pid).  Returns
#                            once its ready file is there and, on x86_64,
#                            its main thread is in pause() (the fixture
#                            writes the file first; 1 when it never is: the
#                            bound only keeps a broken fixture from hanging
#                            the test).
# hang_core RUN              the core of the hung process $HUNG: the one a
#                            SIGABRT from outside leaves in RUN, else gdb's
#                            gcore while it runs; sets CORE (empty: none) and
#                            CORE_HOW (how its cause says it was dumped).
# hang_kill_all              kills every process hang_start started (call
#                            it from the test's EXIT trap).
# hang_asyncio_core PY RUN   fixtures/hangs/asyncio_tasks.py under PY in RUN
#                            (made) until it has written its account of its
#                            tasks, then its core (hang_core): sets CORE
#                            (empty: none).
# hang_store_cores PROG DIR  the cores of a deadlock and of a pool whose lock
#                            holder reads a pipe (PROG's modes deadlock and
#                            pool) as DIR/deadlock.core and DIR/pool.core;
#                            1 when one could not be had.

HUNG_PIDS=()

hang_kill_all() {
	local p
	for p in "${HUNG_PIDS[@]}"; do { kill -9 "$p" && wait "$p"; } 2>/dev/null; done
	HUNG_PIDS=()
}

# hang_launch RUN COMMAND...: COMMAND started in RUN (core dumps on) as
# $HUNG, waited for until it writes RUN/ready or exits; true once ready.
hang_launch() {
	local run=$1 i
	shift
	mkdir -p "$run"
	(cd "$run" && ulimit -c unlimited && exec "$@") >"$run/out" 2>&1 &
	HUNG=$!
	HUNG_PIDS+=("$HUNG")
	for i in $(seq 6000); do
		[ -f "$run/ready" ] || ! kill -0 "$HUNG" 2>/dev/null && break
		sleep 0.05
	done
	[ -f "$run/ready" ]
}

hang_start() {
	hang_launch "$3" "$1" "$2" || return 1
	[ "$(uname -m)" = x86_64 ] || return 0
	local i
	for i in $(seq 6000); do
		[ "$(cut -d' ' -f1 "/proc/$HUNG/syscall" 2>/dev/null)" = 34 ] && return 0   # pause
		kill -0 "$HUNG" 2>/dev/null || return 1
		sleep 0.01
	done
	return 1
}

hang_core() {
	local run=$1
	CORE=
	if core_pattern_is_local; then
		kill -ABRT "$HUNG"
		wait "$HUNG" 2>/dev/null
		CORE=$(ls "$run"/core* 2>/dev/null | head -1)
		CORE_HOW="dumped on SIGABRT sent by pid $$)"
	fi
	if [ -z "$CORE" ] && kill -0 "$HUNG" 2>/dev/null; then
		gdb -batch -nx -q -p "$HUNG" -ex "gcore $run/gcore" >"$run/gcore.log" 2>&1
		CORE=$run/gcore
		CORE_HOW="dumped while running, with no fatal signal)"
	fi
	[ -s "$CORE" ] || CORE=
}

hang_asyncio_core() {
	local py=$1 run=$2
	CORE=
	hang_launch "$run" "$py" "$ROOT/fixtures/hangs/asyncio_tasks.py" && hang_core "$run"
	{ kill -9 "$HUNG" && wait "$HUNG"; } 2>/dev/null
	[ -n "$CORE" ]
}

hang_store_cores() {
	local prog=$1 dir=$2 mode
	mkdir -p "$dir"
	for mode in deadlock pool; do
		hang_start "$prog" "$mode" "$dir/run-$mode" || return 1
		hang_core "$dir/run-$mode"
		{ kill -9 "$HUNG" && wait "$HUNG"; } 2>/dev/null
		[ -n "$CORE" ] || return 1
		mv "$CORE" "$dir/$mode.core"
		rm -rf "$dir/run-$mode"
	done
}
