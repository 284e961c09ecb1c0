#!/usr/bin/env bash
# Crashes a program's own fatal-signal handler caught (DESIGN.md "Signal
# frames and crash handlers"): the cause is the caught fault's, with
# cause.handled_by {function, action, signal, code, address}; the crashing
# thread's frames have roles (crash_handler above the trampoline, the
# trampoline where gdb shows `<signal handler called>`, crash_site the
# interrupted frame); the text report shows the trampoline as gdb names it;
# the signature is the one the same bug has without the handler.
#   fixtures/handler_glog    C++, glog's InstallFailureSignalHandler: re-raised
#                            on return (no signal frame on the stack)
#   fixtures/handler_rust    std's stack-overflow handler: aborts
#   fixtures/handler_cpython faulthandler: raise() inside the handler
#                            (SA_NODEFER, no SA_SIGINFO)
#   fixtures/handler_c       the shapes C services write (main.c)
# Oracles: the program's own log line (glog's "*** SIGSEGV (@0x...)",
# handler_c's "fatal signal N (...) code C at ADDR"), and gdb on the same
# core (tests/gdb_sigframe.py: its frames, and the kernel's signal frame
# where it shows one).  Checks by tests/handler_compare.py.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "handler: no asyncore at $ASYNCORE (run make)"; exit 0; }
command -v gdb >/dev/null || { skip "handler: gdb not installed"; exit 0; }
[ "$(uname -m)" = x86_64 ] || { skip "handler: the fixtures' gdb oracle reads x86_64 signal frames"; exit 0; }

OUTS=$TMPD/out
mkdir -p "$OUTS"

# gdb_sigframe PROG CORE OUT: tests/gdb_sigframe.py's JSON into OUT.
gdb_sigframe() {
	LC_ALL=C gdb -batch -nx -iex 'set auto-load python-scripts off' \
		-x "$ROOT/tests/gdb_sigframe.py" "$1" "$2" 2>/dev/null |
		sed -n '/^GDB_SIGFRAME_BEGIN$/,/^GDB_SIGFRAME_END$/p' | sed '1d;$d' >"$3"
	[ -s "$3" ]
}

# run NAME PROG_OR_- CASE VARIANT ARGS...: build and crash; the core's JSON
# report in $OUTS/NAME.json, its text in $OUTS/NAME.txt (PROG: the program
# the core is of, "-" for the fixture's prog); sets ERR (the program's
# stderr), P (the program) and C (the core).  1 when there is nothing to
# check (a FAIL or SKIP line said why).
run() {
	local name=$1 prog=$2 case=$3 variant=$4 rc; shift 4
	fix_core "$case" "$variant" "$@"; rc=$?
	if [ $rc -ne 0 ]; then no_core "$name" $rc; return 1; fi
	C=$FIX_CORE ERR=$(dirname "$FIX_CORE")/stderr
	P=$prog; [ "$P" = - ] && P=$FIX_DIR/prog
	asy_json "$OUTS/$name.json" "$C" "$P"
	if [ "$ASY_JSON_OK" -ne 0 ] || [ "$ASY_RC" -gt 1 ]; then
		fail "$name: asyncore exited $ASY_RC: $(head -2 "$OUTS/$name.json.err" | tr '\n' ' ')"
		return 1
	fi
	"$ASYNCORE" report "$C" "$P" >"$OUTS/$name.txt" 2>/dev/null
	return 0
}

# handled NAME BASE KEY=VALUE...: the handled run NAME (just run) against
# gdb on its core and the run BASE of the same bug without the handler.
handled() {
	local name=$1 base=$2; shift 2
	if ! gdb_sigframe "$P" "$C" "$OUTS/$name.gdb"; then
		fail "$name: gdb printed no frames"; return
	fi
	python3 "$ROOT/tests/handler_compare.py" "$name" json="$OUTS/$name.json" text="$OUTS/$name.txt" \
		gdb="$OUTS/$name.gdb" base="$OUTS/$base.json" "$@"
}

# glog: the handler logs "*** SIGSEGV (@0x20) received by PID ...", then
# kill()s the process with the signal blocked: it comes back on return.
if [ ! -f /usr/include/glog/logging.h ]; then
	apt_install "$TMPD/apt-glog.log" libgoogle-glog-dev
fi
if [ ! -f /usr/include/glog/logging.h ]; then
	skip "handler-glog: libgoogle-glog-dev not installed"
elif run handler-glog-plain - handler_glog nohandler && run handler-glog - handler_glog ""; then
	addr=$(sed -n 's/^\*\*\* SIGSEGV (@\(0x[0-9a-f]*\)) received by PID.*/\1/p' "$ERR")
	if [ -z "$addr" ]; then
		fail "handler-glog: no '*** SIGSEGV (@0x...) received by PID' line on its stderr"
	else
		handled handler-glog handler-glog-plain kind=null_dereference action=re-raised \
			signal=SIGSEGV code='SEGV_MAPERR|null' address="$addr" prefix=base
	fi
fi

# Rust: std's guard-page handler prints "thread 'main' (TID) has overflowed
# its stack" and aborts; the fault address is the signal frame's.
if ! command -v rustc >/dev/null && [ ! -x "$HOME/.cargo/bin/rustc" ]; then
	skip "handler-rust: no rustc (make deps installs Debian's)"
elif run handler-rust-plain - handler_rust nohandler && run handler-rust - handler_rust ""; then
	if ! grep -q "^thread 'main' .*has overflowed its stack" "$ERR"; then
		fail "handler-rust: no \"thread 'main' has overflowed its stack\" on its stderr: $(head -2 "$ERR")"
	fi
	handled handler-rust handler-rust-plain kind=stack_overflow action=aborted \
		signal=SIGSEGV code=sigframe address=sigframe contains=guard
fi

# CPython: faulthandler prints "Fatal Python error: Segmentation fault" and
# the traceback, then raise()s the signal from within its handler.
if ! test_dep python3.11 python3.11 "$TMPD/apt-py.log"; then
	skip "handler-cpython: python3.11 not installed"
else
	test_dep python3.11d python3.11-dbg "$TMPD/apt-pydbg.log" || true
	if run handler-cpython-plain /usr/bin/python3.11 handler_cpython "" plain &&
		run handler-cpython /usr/bin/python3.11 handler_cpython "" faulthandler; then
		if ! grep -q '^Fatal Python error: Segmentation fault' "$ERR" ||
			! grep -q 'line [0-9]* in decode$' "$ERR"; then
			fail "handler-cpython: faulthandler's report is not on its stderr: $(head -2 "$ERR")"
		fi
		handled handler-cpython handler-cpython-plain kind=null_dereference action=re-raised \
			signal=SIGSEGV code=sigframe address=sigframe
	fi
fi

# handler_c: each shape the same bug; "fatal signal 11 (Segmentation fault)
# code 1 at 0x8" is what the handler received.
declare -A ACTION=([nodefer]=re-raised [defer]=re-raised [redis]=re-raised [abort]=aborted
	[nested]=faulted)
declare -A KIND=([null]=null_dereference [overflow]=stack_overflow [ill]=illegal_instruction
	[fpe]=arithmetic)
declare -A SIGNAME=([4]=SIGILL [7]=SIGBUS [8]=SIGFPE [11]=SIGSEGV)
declare -A CODENAME=([SIGSEGV1]=SEGV_MAPERR [SIGSEGV2]=SEGV_ACCERR [SIGILL2]=ILL_ILLOPN
	[SIGILL1]=ILL_ILLOPC [SIGFPE1]=FPE_INTDIV [SIGBUS2]=BUS_ADRERR)
for bug in null overflow ill fpe; do
	run "handler-c-none-$bug" - handler_c "" none "$bug" || continue
	shapes=nodefer
	[ $bug = null ] && shapes="nodefer defer abort redis nested"
	for shape in $shapes; do
		n=handler-c-$shape-$bug
		run "$n" - handler_c "" "$shape" "$bug" || continue
		line=$(grep -m1 '^fatal signal ' "$ERR")
		if ! [[ $line =~ ^fatal\ signal\ ([0-9]+)\ \(.*\)\ code\ (-?[0-9]+)\ at\ (0x[0-9a-f]+)$ ]]; then
			fail "$n: no 'fatal signal N (...) code C at 0x...' line on its stderr: '$line'"
			continue
		fi
		sig=${SIGNAME[${BASH_REMATCH[1]}]:-signal${BASH_REMATCH[1]}}
		code=${CODENAME[$sig${BASH_REMATCH[2]}]:-${BASH_REMATCH[2]}}
		extra=()
		case $bug in
		null) extra=(prefix="write of a->quota->used at NULL + 0x8 in charge (main.c:") ;;
		overflow) extra=(contains=guard) ;;
		esac
		# defer re-raises on return: only the signal's number and sender
		# are the kernel's; what the fault was is decoded.
		[ $shape = defer ] && code="$code|null"
		handled "$n" "handler-c-none-$bug" kind="${KIND[$bug]}" action="${ACTION[$shape]}" \
			signal="$sig" code="$code" address="${BASH_REMATCH[3]}" "${extra[@]}"
	done
done
