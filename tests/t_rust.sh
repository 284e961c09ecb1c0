#!/usr/bin/env bash
# Rust: a program with threads that crashes by a panic (panic=abort: SIGABRT)
# or an unsafe write through a null pointer (SIGSEGV), at -C opt-level=2,
# with legacy and v0 symbol mangling, with its DWARF and without.  gdb is the
# oracle (tests/oracle_compare.py: every thread's frames, names, lines,
# arguments); then the names are gdb's own: from DWARF, "main::Ledger::debit"
# and "main::settle<main::main::{closure#2}::{closure_env#0}>"; from symbols,
# demangled without the legacy hash; never a mangled name; the signature
# begins with the function that panicked or faulted.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "rust: no asyncore at $ASYNCORE (run make)"; exit 0; }
command -v gdb >/dev/null || { skip "rust: gdb not installed"; exit 0; }
if ! command -v rustc >/dev/null && [ ! -x "$HOME/.cargo/bin/rustc" ]; then
	skip "rust: no rustc (make deps installs Debian's)"; exit 0
fi
# With RUST_BACKTRACE=1 the panic hook maps the program's and libc's debug
# files to print a backtrace: files the core holds but the process did not
# load, whose symbols are not the process's.  One run has it, the others not.
unset RUST_BACKTRACE

# expect NAME JSON PYEXPR...: each expression over the report J, the
# crashing thread's frames F and every frame's name NAMES is true.
expect() {
	local name=$1 json=$2; shift 2
	if out=$(python3 - "$json" "$@" <<'PY'
import json, re, sys
J = json.load(open(sys.argv[1]))
F = [f for t in J['threads'] if t.get('crashing') for f in t['frames']]
NAMES = [f.get('function') or '' for t in J['threads'] for f in t['frames']]
MANGLED = re.compile(r'^_[RZ]|::h[0-9a-f]{16}$|\.llvm\.|\$u7b\$|\$LT\$')
bad = [e for e in sys.argv[2:] if not eval(e)]
print('; '.join(bad))
sys.exit(1 if bad else 0)
PY
	); then pass "$name"; else fail "$name: not true: $out"; fi
}

for spec in legacy:panic legacy:segv legacy:panic:backtrace v0:panic v0:segv nodebug:panic \
	nodebug:segv v0-nodebug:panic v0-nodebug:segv; do
	IFS=: read -r variant how backtrace <<<"$spec"
	v=${variant#legacy}
	n=rust-$variant-$how${backtrace:+-$backtrace}
	[ -n "$backtrace" ] && export RUST_BACKTRACE=1
	fix_core rust "$v" "$how"
	rc=$?
	unset RUST_BACKTRACE
	if [ $rc -ne 0 ]; then
		no_core "$n" $rc; continue
	fi
	json=$TMPD/$n.json
	ASYNCORE_CACHE_DIR= asy_json "$json" "$FIX_CORE" "$FIX_DIR/prog"
	if [ "$ASY_RC" -gt 1 ] || [ "$ASY_JSON_OK" -ne 0 ]; then
		fail "$n: asyncore exited $ASY_RC: $(head -2 "$json.err")"; continue
	fi
	if ! gdb_frames "$FIX_DIR/prog" "$FIX_CORE" "$TMPD/$n.gdb"; then
		skip "$n: gdb printed no frames"
	elif python3 "$ROOT/tests/oracle_compare.py" "$json" "$TMPD/$n.gdb" "$n" >"$TMPD/$n.diff"; then
		pass "$n"
	else
		fail "$n: $(head -1 "$TMPD/$n.diff")"
		tail -n +2 "$TMPD/$n.diff" | head -6 | cut -c1-300 | sed 's/^/    /'
	fi
	sig="J['signal']['number'] == 6"
	[ "$how" = segv ] && sig="J['signal']['number'] == 11 and int(J['signal']['address'], 16) == 0"
	debit="'main::Ledger::debit'"
	settle="'main::settle<main::main::{closure#2}::{closure_env#0}>'"
	case $variant in
	nodebug) settle="'main::settle'" ;;
	v0-nodebug) debit="'<main::Ledger>::debit'"
		settle="'main::settle::<main::main::{closure#2}::{closure#0}>'" ;;
	esac
	# The signature starts at the program's code, past the panic's
	# and abort's machinery (the built-in skip list).
	expect "$n:names" "$json" "$sig" "len(J['threads']) == 3" \
		"J['signature'].split(': ', 1)[1].split(' < ')[$([ "$how" = segv ] && [ "${variant%nodebug}" = "$variant" ] && echo 1 || echo 0)].endswith('::debit')" \
		"not [x for x in NAMES if MANGLED.search(x)]" \
		"$debit in [f.get('function') for f in F]" \
		"$settle in [f.get('function') for f in F]"
	# A panic's cause names the function that panicked, and where, as the
	# program's own panic message does (file and line; without DWARF the
	# function only).
	if [ "$how" = panic ]; then
		at=$(sed -n "s/^thread '.*' .*panicked at \(.*\):\([0-9]*\):[0-9]*:$/\1:\2/p" \
			"$(dirname "$FIX_CORE")/stderr" | head -1)
		want="Rust panic in ${debit//\'/}"
		[ "${variant%nodebug}" = "$variant" ] && want="$want at ${at##*/}"
		expect "$n:cause" "$json" "J['cause']['kind'] == 'abort'" "J['cause']['summary'] == '$want'"
	fi
done
exit 0
