# Helpers shared by the bench/*.sh scripts.

# make_core DIR [ARGS...]: run DIR/prog (with ARGS) until it crashes and
# print the core's path: the kernel's core when core_pattern is a plain file
# name, else gdb's gcore of the running program.
make_core() {
	local d=$1 c; shift
	rm -f "$d"/core*
	if [ "$(cut -c1 /proc/sys/kernel/core_pattern)" != "|" ]; then
		(cd "$d" && ulimit -c unlimited && exec ./prog "$@") >/dev/null 2>&1
		c=$(ls "$d"/core* 2>/dev/null | head -1)
		[ -n "$c" ] && { echo "$c"; return 0; }
	fi
	if command -v gdb >/dev/null; then
		(cd "$d" && gdb -batch -nx -q -ex 'set confirm off' -ex run -ex "gcore $d/core" \
			-ex kill --args ./prog "$@") >"$d/gdb.log" 2>&1
		[ -s "$d/core" ] && { echo "$d/core"; return 0; }
	fi
	return 1
}

# GNU time measures each command's peak RSS (bench/timing.py).
if [ ! -x /usr/bin/time ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null 2>&1 ||
		echo "bench: GNU time (Debian's time) could not be installed: no peak RSS" >&2
fi
