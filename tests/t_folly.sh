#!/usr/bin/env bash
# folly async stacks: the spliced native+async stacks of the C++20 fixture
# (three builds), plain native stacks with --no-async, and the hand-made
# edge cases of the C fixture (warnings, never a crash).
. "$(dirname "$0")/lib.sh"

# Function sequences per thread.  GCC's coroutine bodies are clones
# ("f(f()::_Z1fv.Frame*) [clone .actor]") that the report displays as
# written ("f() [coroutine]", JSON `display`): the sequences use that name,
# its parameters dropped ("f [coroutine]"); other clone suffixes are dropped.
FRAMES=frames
frames() { python3 "$ROOT/tests/folly_frames.py" "$1"; }

# report NAME CORE PROG OUT [ARGS...]: run the JSON report into OUT; prints
# its exit status.  FAIL (and status 99) when it crashed or gave no JSON.
report() {
	local name=$1 core=$2 prog=$3 out=$4; shift 4
	local rc
	"$ASYNCORE" report "$core" "$prog" --format json "$@" >"$out" 2>"$out.err"
	rc=$?
	if [ $rc -gt 2 ] || ! json_ok "$out"; then
		fail "$name: asyncore exited $rc without valid JSON: $(tail -3 "$out.err")"
		echo 99; return
	fi
	echo $rc
}

# compare NAME EXPECTED ACTUAL: PASS when equal, else FAIL with a diff.
compare() {
	local name=$1 want=$2 got=$3
	if [ ! -f "$want" ]; then
		fail "$name: no expectation $want; got:"; sed 's/^/    /' "$got"; return
	fi
	if diff -u "$want" "$got" >"$got.diff"; then
		pass "$name"
	else
		fail "$name: spliced stacks differ from ${want#$ROOT/}"
		sed 's/^/    /' "$got.diff"
	fi
}

# warnings FILE: the JSON report's warnings, one a line.
warnings() {
	python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1])).get("warnings", [])))' "$1"
}

cpp_variant() {
	local v=$1 dir core rc
	if ! dir=$(fixture_build folly_cpp "$v"); then
		fail "folly_cpp/$v: build failed"; return
	fi
	core=$(fixture_core "$dir"); rc=$?
	if [ $rc -ne 0 ]; then skip "folly_cpp/$v: no core"; return; fi
	local out=$dir/report.json
	rc=$(report "folly_cpp/$v" "$core" "$dir/prog" "$out")
	[ "$rc" = 99 ] && return
	$FRAMES "$out" >"$dir/frames.txt"
	compare "folly_cpp/$v splice" "$(expect_file folly_cpp "$v" stacks)" "$dir/frames.txt"
	json_get "$out" 'j["signature"] + " " + j["signature_hash"]' >"$SIGS/folly_cpp-$v"
	if warnings "$out" | grep -q '^folly:'; then
		fail "folly_cpp/$v: unexpected async warnings: $(warnings "$out" | grep '^folly:' | head -3)"
	else
		pass "folly_cpp/$v no async warnings"
	fi

	# --no-async: the same threads, native frames only, no suspended chains.
	local plain=$dir/report-noasync.json
	rc=$(report "folly_cpp/$v --no-async" "$core" "$dir/prog" "$plain" --no-async)
	[ "$rc" = 99 ] && return
	$FRAMES "$plain" >"$dir/frames-noasync.txt"
	compare "folly_cpp/$v --no-async" "$(expect_file folly_cpp "$v-native" stacks)" \
		"$dir/frames-noasync.txt"
}

c_edge_cases() {
	local dir core rc
	if ! dir=$(fixture_build folly_c); then
		fail "folly_c: build failed"; return
	fi
	core=$(fixture_core "$dir"); rc=$?
	if [ $rc -ne 0 ]; then skip "folly_c: no core"; return; fi
	local out=$dir/report.json
	rc=$(report folly_c "$core" "$dir/prog" "$out")
	[ "$rc" = 99 ] && return
	check "folly_c exit status 1 (warnings)" [ "$rc" = 1 ]
	check "folly_c lists all 9 threads" [ "$(json_get "$out" 'len(j["threads"])')" = 9 ]
	check "folly_c async key 40" [ "$(json_get "$out" 'j.get("async_key")')" = 0x28 ]
	check "folly_c unmapped root reported" \
		[ "$(json_get "$out" '[t.get("async_root") for t in j["threads"]].count("0xdead0000")')" = 1 ]
	$FRAMES "$out" >"$dir/frames.txt"
	local expect_warnings; expect_warnings=$(expect_file folly_c "" warnings)
	compare "folly_c splice" "$(expect_file folly_c "" stacks)" "$dir/frames.txt"
	warnings "$out" >"$dir/warnings.txt"
	local pat
	while IFS= read -r pat; do
		[ -z "$pat" ] && continue
		if grep -qE -- "$pat" "$dir/warnings.txt"; then
			pass "folly_c warning /$pat/"
		else
			fail "folly_c warning /$pat/ missing; warnings were:"
			sed 's/^/    /' "$dir/warnings.txt"
		fi
	done <"$expect_warnings"
	local n
	n=$(grep -c '^folly:' "$dir/warnings.txt")
	check "folly_c exactly $(grep -c . "$expect_warnings") async warnings (got $n)" \
		[ "$n" = "$(grep -c . "$expect_warnings")" ]

	# Key never created: native stacks only, and no async warning.
	core=$(fixture_core "$dir" nokey); rc=$?
	if [ $rc -ne 0 ]; then skip "folly_c nokey: no core"; return; fi
	out=$dir/report-nokey.json
	rc=$(report "folly_c nokey" "$core" "$dir/prog" "$out")
	[ "$rc" = 99 ] && return
	check "folly_c nokey exit status 0 or 1" [ "$rc" = 0 -o "$rc" = 1 ]
	check "folly_c nokey key never created" [ "$(json_get "$out" 'j.get("async_key")')" = 0xffffffff ]
	$FRAMES "$out" >"$dir/frames-nokey.txt"
	compare "folly_c nokey" "$(expect_file folly_c nokey stacks)" "$dir/frames-nokey.txt"
	if warnings "$out" | grep -q '^folly:'; then
		fail "folly_c nokey: async warnings: $(warnings "$out" | grep '^folly:' | head -3)"
	else
		pass "folly_c nokey no async warnings"
	fi
}

if ! command -v g++ >/dev/null; then
	skip "folly: no g++"
	exit 0
fi
# One bug, one bucket across builds: at -O1 a coroutine body is found on the
# stack and through its async chain, at -O2 through the chain only; the
# signature is the call chain either way.
SIGS=$(mktemp -d)
trap 'rm -rf "$SIGS"' EXIT
same_signature() {
	local name=$1 a=$2 b=$3
	if [ ! -s "$SIGS/$a" ] || [ ! -s "$SIGS/$b" ]; then
		skip "$name: no report of $a or $b"
	elif [ "$(cat "$SIGS/$a")" = "$(cat "$SIGS/$b")" ]; then
		pass "$name"
	else
		fail "$name: $a: $(cat "$SIGS/$a"); $b: $(cat "$SIGS/$b")"
	fi
}
for v in O1 O2 noframe; do
	cpp_variant "$v"
done
same_signature "folly_cpp: one signature at -O1 and -O2" folly_cpp-O1 folly_cpp-O2
check "folly_cpp: the signature holds the coroutine bodies, unmarked" \
	grep -q '^SIGSEGV: crash_leaf < leaf_coro < inner_coro < folly::coro::blockingWait < sync_bridge ' \
	"$SIGS/folly_cpp-O2"
c_edge_cases
for v in O1 O2; do
	if dir=$(fixture_build folly_c "$v") && core=$(fixture_core "$dir" 2>/dev/null); then
		"$ASYNCORE" report "$core" "$dir/prog" --format json 2>/dev/null |
			python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["signature"], j["signature_hash"])' \
			>"$SIGS/folly_c-$v"
		rm -rf "$(dirname "$core")"
	fi
done
same_signature "folly_c: one signature at -O1 and -O2" folly_c-O1 folly_c-O2
