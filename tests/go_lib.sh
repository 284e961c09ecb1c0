# What the Go test scripts share: Debian's Go toolchain (installed when
# missing), the runtime's own traceback on a crash, and the oracle over it
# (tests/go_oracle.py).  Sourced after lib.sh and fixlib.sh.
ORACLE=$ROOT/tests/go_oracle.py
export GOTRACEBACK=crash

# go_deps NAME: golang-go installed, else SKIP NAME with the reason and
# end the script.
go_deps() {
	test_dep go golang-go "$TMPD/apt-go.log" && return 0
	skip "$1: no Go toolchain (golang-go could not be installed: $(tail -1 "$TMPD/apt-go.log" 2>/dev/null))"
	exit 0
}

# oracle NAME SUBCOMMAND ARGS...: PASS with the oracle's last line, or FAIL
# with its first (the first difference) and a few more.
oracle() {
	local name=$1; shift
	if python3 "$ORACLE" "$@" >"$TMPD/cmp" 2>&1; then
		pass "$name: $(grep -v '^  note: ' "$TMPD/cmp" | tail -1)"
	else
		fail "$name: $(head -1 "$TMPD/cmp" | cut -c1-300)"
		tail -n +2 "$TMPD/cmp" | head -12 | cut -c1-300 | sed 's/^/    /'
	fi
}

# oracle_crash NAME CRASH RT ASY: asyncore's JSON report ASY of a fixture
# crash CRASH (go_oracle.py crash) against the runtime's traceback RT (its
# `runtime` reading): the goroutines, the cause, its kind, the crash site and
# the signature.
oracle_crash() {
	local name=$1 crash=$2 rt=$3 asy=$4
	oracle "$name: goroutines as the runtime printed them" compare "$rt" "$asy"
	oracle "$name: cause is the runtime's" cause "$rt" "$asy"
	oracle "$name: cause kind" crash "$crash" kind "$rt" "$asy"
	oracle "$name: crash site" crash "$crash" site "$rt" "$asy"
	oracle "$name: signature's first words" crash "$crash" signature "$rt" "$asy"
}
