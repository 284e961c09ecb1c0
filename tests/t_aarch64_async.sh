#!/usr/bin/env bash
# Everything above the native stacks on aarch64 cores: the x86_64 fixtures'
# sources cross-compiled (fixtures/aarch64_async) and crashed under
# qemu-user, whose cores carry no NT_ARM_TLS: each thread's struct pthread
# comes from glibc's thread lists, the thread pointer from it (TLS variant
# I).  Oracles: the same fixture's x86_64 expectations (the same logical
# frames; libc's internal functions, which the cross libc names in no
# symbol table, read as ??), the recorder's own dump of its rings, and
# gdb-multiarch for the native frames of the non-PIE build.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "aarch64-async: no asyncore at $ASYNCORE (run make)"; exit 0; }
source "$ROOT/tests/aarch64_lib.sh"
aarch64_deps aarch64-async

# qemu_fixture VARIANT [ARGS...]: build fixtures/aarch64_async VARIANT and
# crash it; sets FIX_DIR and CORE, or says why not (FAIL or SKIP) and
# returns 1.
qemu_fixture() {
	fix_build aarch64_async "$1" || return 1
	if ! CORE=$(qemu_core "$FIX_DIR" "${@:2}" 2>"$TMPD/core.err"); then
		skip "aarch64 $1: $(head -1 "$TMPD/core.err")"
		return 1
	fi
	FIX_RUNS+=("$(dirname "$CORE")")
}

check_eq() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: expected '$2', got '$3'"; fi; }

# x86_expect FILE: an x86_64 expectation as the aarch64 build shows it:
# libc's internal functions unnamed (Debian's cross libc has no .symtab).
x86_expect() {
	sed -e 's/__libc_start_call_main < __libc_start_main_impl/?? < __libc_start_main/' \
		-e 's/start_thread < __clone3/?? < ??/' "$1"
}

# same NAME EXPECTED_FILE ACTUAL_FILE
same() {
	if diff -u "$2" "$3" >"$3.diff"; then pass "$1"
	else fail "$1: $(grep '^[-+][^-+]' "$3.diff" | head -4 | tr '\n' ' ')"; fi
}

warnings() { jget "$1" "'\n'.join(j['warnings'])"; }

# aarch64 JSON NAME CORE PROG [ARGS...]: the report into JSON; false (and
# FAIL) without one.
aarch64_json() {
	local j=$1 name=$2
	shift 2
	asy_json "$j" "$@" --sysroot "$SYSROOT"
	[ "$ASY_JSON_OK" -eq 0 ] && return 0
	fail "$name: no JSON (exit $ASY_RC): $(head -3 "$j.err")"
	return 1
}

# No NT_ARM_TLS in a qemu core: the thread pointer is nowhere in the
# registers, every thread's struct pthread comes from glibc's lists.
no_tp_registers() {
	jget "$1" "all('tpidr_el0' not in t['registers'] for t in j['threads'])"
}

# ---- folly async stacks: the C edge cases (one thread each), non-PIE -------
if qemu_fixture folly_c; then
	dir=$FIX_DIR core=$CORE j=$TMPD/folly_c.json
	if aarch64_json "$j" "aarch64 folly_c" "$core" "$dir/prog"; then
		check_eq "aarch64 folly_c: no thread pointer in the core's registers" True "$(no_tp_registers "$j")"
		check_eq "aarch64 folly_c: exit 1 (the edge cases' warnings), 9 threads, folly key 40" "1 9 0x28" \
			"$ASY_RC $(jget "$j" "len(j['threads'])") $(jget "$j" "j.get('async_key')")"
		python3 "$ROOT/tests/folly_frames.py" "$j" >"$TMPD/folly_c.frames"
		x86_expect "$ROOT/fixtures/folly_c/expect/default.stacks" >"$TMPD/folly_c.want"
		same "aarch64 folly_c: the x86_64 build's async stacks and suspended chains" \
			"$TMPD/folly_c.want" "$TMPD/folly_c.frames"
		warnings "$j" >"$TMPD/folly_c.warnings"
		want=$ROOT/fixtures/folly_c/expect/default.warnings
		missing=$(while IFS= read -r pat; do
			[ -n "$pat" ] && ! grep -qE -- "$pat" "$TMPD/folly_c.warnings" && echo "$pat"; done <"$want")
		check_eq "aarch64 folly_c: the x86_64 build's warnings, and only those" \
			"$(grep -c . "$want") " "$(grep -c . "$TMPD/folly_c.warnings") $missing"
		# gdb-multiarch has no answer for the async frames; the native
		# ones must be its frames.
		asy_json "$TMPD/folly_c-native.json" "$core" "$dir/prog" --sysroot "$SYSROOT" --no-async --frame-registers
		if gdb_multiarch_frames "$dir/prog" "$core" "$TMPD/folly_c.gdb" 2>/dev/null; then
			if python3 "$ROOT/tests/oracle_compare.py" "$TMPD/folly_c-native.json" "$TMPD/folly_c.gdb" \
				"aarch64 folly_c" >"$TMPD/folly_c.odiff"; then
				pass "aarch64 folly_c --no-async: every thread agrees with gdb-multiarch"
			else
				fail "aarch64 folly_c --no-async: differs from gdb-multiarch: $(head -3 "$TMPD/folly_c.odiff" | tr '\n' ' ')"
			fi
		else
			fail "aarch64 folly_c: gdb-multiarch gave no frames"
		fi
	fi
	if core=$(qemu_core "$dir" nokey 2>"$TMPD/core.err"); then
		FIX_RUNS+=("$(dirname "$core")")
		j=$TMPD/folly_c-nokey.json
		if aarch64_json "$j" "aarch64 folly_c nokey" "$core" "$dir/prog"; then
			python3 "$ROOT/tests/folly_frames.py" "$j" >"$TMPD/nokey.frames"
			x86_expect "$ROOT/fixtures/folly_c/expect/nokey.stacks" >"$TMPD/nokey.want"
			same "aarch64 folly_c nokey: native stacks only, as on x86_64" "$TMPD/nokey.want" "$TMPD/nokey.frames"
			check_eq "aarch64 folly_c nokey: no async warning" 0 "$(warnings "$j" | grep -c '^folly:')"
		fi
	else
		skip "aarch64 folly_c nokey: $(head -1 "$TMPD/core.err")"
	fi
fi

# ---- folly-ABI coroutines (C++20, -O2, PIE) -------------------------------
if qemu_fixture folly_cpp; then
	dir=$FIX_DIR core=$CORE j=$TMPD/folly_cpp.json
	if aarch64_json "$j" "aarch64 folly_cpp" "$core" "$dir/prog"; then
		check_eq "aarch64 folly_cpp: exit 0, no warning, no thread pointer in the registers" "0 [] True" \
			"$ASY_RC $(jget "$j" "j['warnings']") $(no_tp_registers "$j")"
		python3 "$ROOT/tests/folly_frames.py" "$j" >"$TMPD/folly_cpp.frames"
		x86_expect "$ROOT/fixtures/folly_cpp/expect/O2.stacks" >"$TMPD/folly_cpp.want"
		same "aarch64 folly_cpp: the x86_64 build's spliced stacks and suspended coroutines" \
			"$TMPD/folly_cpp.want" "$TMPD/folly_cpp.frames"
	fi
	# The same core with the NT_ARM_TLS notes a kernel writes: struct
	# pthread right below each TPIDR_EL0.  gdb-multiarch reads the notes
	# as $tpidr.
	tls=$TMPD/tls.core
	if python3 "$ROOT/tests/arm_tls_note.py" "$core" "$tls" "$SYSROOT/lib/libc.so.6" \
		"$SYSROOT/lib/ld-linux-aarch64.so.1" >"$TMPD/tls.tps" 2>"$TMPD/tls.err"; then
		j=$TMPD/folly_cpp-tls.json
		if aarch64_json "$j" "aarch64 folly_cpp NT_ARM_TLS" "$tls" "$dir/prog"; then
			python3 "$ROOT/tests/folly_frames.py" "$j" >"$TMPD/tls.frames"
			same "aarch64 folly_cpp NT_ARM_TLS: the same stacks from the thread pointer" \
				"$TMPD/folly_cpp.want" "$TMPD/tls.frames"
			check_eq "aarch64 folly_cpp NT_ARM_TLS: exit 0, no warning" "0 []" "$ASY_RC $(jget "$j" "j['warnings']")"
			LC_ALL=C timeout 120 gdb-multiarch -batch -nx -iex "set sysroot $SYSROOT" \
				-ex 'thread apply all p/x $tpidr' "$dir/prog" "$tls" 2>/dev/null |
				awk '/^Thread .*LWP/ { tid = $4; sub(/\)*:?$/, "", tid) } /^\$[0-9]+ = / { print tid, $3 }' |
				sort >"$TMPD/tls.gdb"
			jget "$j" "'\n'.join('%d %s' % (t['tid'], t['registers'].get('tpidr_el0')) for t in j['threads'])" |
				sort >"$TMPD/tls.asy"
			check_eq "aarch64 folly_cpp NT_ARM_TLS: every thread's tpidr_el0 as its note holds it" \
				"$(sort "$TMPD/tls.tps")" "$(cat "$TMPD/tls.asy")"
			check_eq "aarch64 folly_cpp NT_ARM_TLS: gdb-multiarch reads the same notes" \
				"$(sort "$TMPD/tls.tps")" "$(cat "$TMPD/tls.gdb")"
		fi
		# Thread pointers that lie (each 0x1000 too high): no struct
		# pthread of the thread below them; glibc's lists give it.
		python3 "$ROOT/tests/arm_tls_note.py" "$core" "$TMPD/lie.core" "$SYSROOT/lib/libc.so.6" \
			"$SYSROOT/lib/ld-linux-aarch64.so.1" 0x1000 >/dev/null
		j=$TMPD/folly_cpp-lie.json
		if aarch64_json "$j" "aarch64 folly_cpp lying NT_ARM_TLS" "$TMPD/lie.core" "$dir/prog"; then
			python3 "$ROOT/tests/folly_frames.py" "$j" >"$TMPD/lie.frames"
			same "aarch64 folly_cpp lying NT_ARM_TLS: the same stacks, from glibc's lists" \
				"$TMPD/folly_cpp.want" "$TMPD/lie.frames"
			check_eq "aarch64 folly_cpp lying NT_ARM_TLS: exit 1, a warning a thread" "1 3" \
				"$ASY_RC $(warnings "$j" | grep -c 'no struct pthread of this thread below its thread pointer')"
		fi
		# Broken lists: an unmapped head, a cycle without its head.  The
		# main thread (first on _dl_stack_user) is found; the others say
		# they have no thread pointer, and the walk ends.
		python3 "$ROOT/tests/arm_tls_note.py" "$core" "$TMPD/broken.core" "$SYSROOT/lib/libc.so.6" \
			"$SYSROOT/lib/ld-linux-aarch64.so.1" --break-lists
		j=$TMPD/folly_cpp-broken.json
		if aarch64_json "$j" "aarch64 folly_cpp broken lists" "$TMPD/broken.core" "$dir/prog"; then
			check_eq "aarch64 folly_cpp broken lists: exit 1; the two other threads have no thread pointer" \
				"1 2" "$ASY_RC $(warnings "$j" | grep -c '^folly: thread [0-9]*: no thread pointer')"
			check_eq "aarch64 folly_cpp broken lists: the main thread's stack stands" \
				"$(grep '^thread: main_idle' "$TMPD/folly_cpp.want")" \
				"$(python3 "$ROOT/tests/folly_frames.py" "$j" | grep '^thread: main_idle')"
		fi
	else
		fail "aarch64 folly_cpp: no thread pointers from glibc's lists for the notes: $(tail -1 "$TMPD/tls.err")"
	fi
fi

# ---- recorder rings: the program's own dump is the oracle ---------------------
if qemu_fixture recorder; then
	dir=$FIX_DIR core=$CORE j=$TMPD/recorder.json truth=$(dirname "$core")/recorder.truth
	if aarch64_json "$j" "aarch64 recorder" "$core" "$dir/prog"; then
		if [ ! -s "$truth" ]; then
			fail "aarch64 recorder: the program wrote no recorder.truth"
		elif python3 "$ROOT/tests/recorder_truth.py" "$truth" "$j" recorder >"$TMPD/recorder.diff"; then
			pass "aarch64 recorder: rings and events (formats from the executable's file) match the program's dump"
		else
			fail "aarch64 recorder: recovery differs from the program's dump: $(head -3 "$TMPD/recorder.diff" | tr '\n' ' ')"
		fi
		check_eq "aarch64 recorder: no recorder warning" 0 "$(warnings "$j" | grep -ci recorder)"
	fi
fi

# ---- runtime descriptions rooted in TLS: libtoy.so's __thread and pthread key --
if qemu_fixture toyvm; then
	dir=$FIX_DIR core=$CORE
	for desc in toy-tls toy-key; do
		j=$TMPD/$desc.json
		aarch64_json "$j" "aarch64 toyvm $desc" "$core" "$dir/prog" \
			--runtime "$ROOT/fixtures/toyvm/$desc.json" || continue
		python3 "$ROOT/tests/runtime_frames.py" stacks "$j" prog,libtoy.so >"$TMPD/$desc.frames"
		same "aarch64 toyvm $desc: the x86_64 build's toy frames after their toy_eval activations" \
			"$ROOT/fixtures/toyvm/expect/default.runtime" "$TMPD/$desc.frames"
		check_eq "aarch64 toyvm $desc: exit 0, no warning" "0 []" "$ASY_RC $(jget "$j" "j['warnings']")"
	done
fi

# ---- the same, one static program: no _rtld_global, no link map -------------
if qemu_fixture toyvm_static; then
	dir=$FIX_DIR core=$CORE
	for desc in toy-tls toy-key; do
		j=$TMPD/static-$desc.json
		aarch64_json "$j" "aarch64 static toyvm $desc" "$core" "$dir/prog" \
			--runtime "$ROOT/fixtures/toyvm/$desc.json" || continue
		# libc's functions are the program's own here: left out.
		python3 "$ROOT/tests/runtime_frames.py" stacks "$j" prog |
			grep -vE '^native (_|start_thread$|thread_start$)' >"$TMPD/static-$desc.frames"
		same "aarch64 static toyvm $desc: the x86_64 build's toy frames" \
			"$ROOT/fixtures/toyvm/expect/default.runtime" "$TMPD/static-$desc.frames"
		check_eq "aarch64 static toyvm $desc: exit 0, no warning" "0 []" "$ASY_RC $(jget "$j" "j['warnings']")"
	done
fi

# ---- uncaught C++ exceptions: eh_globals through libstdc++'s TLS descriptor --
# Oracle: the type and what() std::terminate's handler printed.
for mode in out_of_range invalid_argument user derived rethrow_ptr; do
	qemu_fixture cause_cxx "$mode" || continue
	err=$(dirname "$CORE")/stdout j=$TMPD/cause-$mode.json
	aarch64_json "$j" "aarch64 cause_cxx $mode" "$CORE" "$FIX_DIR/prog" || continue
	type=$(sed -n "s/^terminate called after throwing an instance of '\(.*\)'$/\1/p" "$err")
	what=$(sed -n 's/^  what():  //p' "$err")
	check_eq "aarch64 cause_cxx $mode: the exception's type and what() as std::terminate printed them" \
		"uncaught_exception $type ${what:-None}" \
		"$(jget "$j" "'%s %s %s' % (j['cause']['kind'], j['cause']['exception']['type'], j['cause']['exception']['what'])")"
done

# ---- the faulting load or store, decoded: a NULL dereference is one through
# a base register holding 0, whatever the address; a wild pointer is not.
# qemu-user's cores carry no NT_SIGINFO: the address is the one the
# instruction names.  Oracles: the x86_64 build's summaries (the same
# source), gdb-multiarch's address of the member the report names.
a64_cause() {
	local mode=$1 kind=$2 want=$3 j=$TMPD/cause_c-$1.json
	qemu_fixture cause_c "$mode" || return
	aarch64_json "$j" "aarch64 cause_c $mode" "$CORE" "$FIX_DIR/prog" || return
	local expr at
	expr=$(jget "$j" "j['cause'].get('expression')")
	at=$(LC_ALL=C timeout 120 gdb-multiarch -batch -nx -iex "set sysroot $SYSROOT" \
		-ex "p/x &($expr)" "$FIX_DIR/prog" "$CORE" 2>/dev/null | sed -n 's/^\$1 = \(0x[0-9a-f]*\)$/\1/p')
	check_eq "aarch64 cause_c $mode: $kind, the access and the member decoded" "$kind ${want//@AT@/$at}" \
		"$(jget "$j" "'%s %s' % (j['cause']['kind'], j['cause']['summary'])")"
}
# The C++ program's (PIE: gdb-multiarch does not relocate it in a qemu core):
# the members at the offsets the x86_64 build's test checks with gdb, the
# same under AAPCS64 (LP64, the same std::string); the causes named from the
# stack as the x86_64 build's are.
a64_cause_cxx() {
	local mode=$1 want=$2 j=$TMPD/cause_cxx-$1.json
	qemu_fixture cause_cxx "$mode" || return
	aarch64_json "$j" "aarch64 cause_cxx $mode" "$CORE" "$FIX_DIR/prog" || return
	check_eq "aarch64 cause_cxx $mode: the cause the x86_64 build gives" "$want" \
		"$(jget "$j" "'%s: %s' % (j['cause']['kind'], j['cause']['summary'])")"
}
a64_cause_cxx null_read "null_dereference: read of this->balance at NULL + 0x28"
a64_cause_cxx null_write "null_dereference: write of this->holds at NULL + 0x30"
a64_cause_cxx null_base "null_dereference: read of this->created at NULL + 0x8"
a64_cause_cxx pure "abort: pure virtual method called in Shape::describe() const"
a64_cause_cxx terminate "abort: terminate called without an active exception: a joinable std::thread \
destroyed or assigned to in main"
a64_cause null_read null_dereference "read of s->bytes at NULL + @AT@"
a64_cause null_write null_dereference "write of s->quota.limit at NULL + @AT@"
a64_cause wild_read bad_access "read of s->bytes at @AT@ in session_bytes"
a64_cause null_loaded null_dereference "read of o->account->limit at NULL + @AT@"
a64_cause_cxx null_loaded "null_dereference: read of order.coupon->rate at NULL + 0x8"
# A jump lands between the load and the access: not named.
a64_cause null_loaded_jump null_dereference "read at NULL + 0x8"
