#!/usr/bin/env bash
# aarch64 programs cross-compiled here and crashed under qemu-user
# (fixtures/aarch64_native: three threads, a shared library, -O2, PIE and
# not): qemu-aarch64's cores carry no NT_FILE and no NT_ARM_TLS, so the
# libraries come from the dynamic linker's list and --sysroot.  Oracle:
# gdb-multiarch with the same sysroot, frame by frame (tests/oracle_compare.py)
# for the non-PIE build (gdb-multiarch 13 does not relocate a PIE executable
# from a qemu-user core); the PIE build must show the non-PIE build's frames.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "aarch64-qemu: no asyncore at $ASYNCORE (run make)"; exit 0; }
source "$ROOT/tests/aarch64_lib.sh"
aarch64_deps aarch64-qemu

check_eq() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: expected '$2', got '$3'"; fi; }

CRASH="lib_store store_to visit lib_walk lib_walk lib_walk lib_walk compute relay"
# read_u64 CORE ADDRESS: the word the core saved at ADDRESS (hex), or nothing.
read_u64() { elf_word "$1" "$2" 8; }

# after_svc FILE OFFSET: true when the instruction before file address OFFSET
# (hex) of ELF FILE is svc #0, as at a pc a signal interrupted in a syscall.
after_svc() { [ "$(elf_word "$1" "$(printf '0x%x' $(($2 - 4)))" 4)" = 0xd4000001 ]; }

# pac_saved JSON CORE: store_to's frame record's saved return address (which
# holds visit's, signed) and visit's pc as asyncore shows it.
pac_saved() {
	local fp pc saved
	fp=$(jget "$1" "[t for t in j['threads'] if t['crashing']][0]['frames'][1]['registers']['x29']")
	pc=$(jget "$1" "[t for t in j['threads'] if t['crashing']][0]['frames'][2]['pc']")
	saved=$([ -n "$fp" ] && read_u64 "$2" "$(printf '0x%x' $((fp + 8)))")
	echo "${saved:-none} ${pc:-none}"
}

# has_pac SAVED: true when the address carries pointer-authentication bits.
has_pac() { [ "$1" != none ] && [ $(($1 >> 48)) -ne 0 ]; }

for v in nopie pie pac signal; do
	fix_build aarch64_native "$v" || continue
	dir=$FIX_DIR
	QEMU_OPTS=(); [ "$v" = pac ] && QEMU_OPTS=(-cpu max)
	if ! core=$(qemu_core "$dir" 2>"$TMPD/core.err"); then
		skip "aarch64-qemu $v: $(head -1 "$TMPD/core.err")"
		continue
	fi
	FIX_RUNS+=("$(dirname "$core")")
	j=$TMPD/$v.json
	asy_json "$j" "$core" "$dir/prog" --sysroot "$SYSROOT" --no-async --frame-registers
	if [ "$ASY_JSON_OK" -ne 0 ]; then
		fail "aarch64-qemu $v: no JSON (exit $ASY_RC): $(head -3 "$j.err")"
		continue
	fi
	# qemu draws the keys at random, and the 7-bit code they give a return
	# address is zero once in 128 runs: such a core shows nothing signed, so
	# another run (another key) is made, at most three more times.
	tries=1
	while [ "$v" = pac ] && [ "$tries" -lt 4 ] && ! has_pac "$(pac_saved "$j" "$core" | cut -d' ' -f1)" &&
		core=$(qemu_core "$dir" 2>"$TMPD/core.err"); do
		FIX_RUNS+=("$(dirname "$core")")
		asy_json "$j" "$core" "$dir/prog" --sysroot "$SYSROOT" --no-async --frame-registers
		tries=$((tries + 1))
	done
	check_eq "aarch64-qemu $v: exit 0, no warning" "0 []" "$ASY_RC $(jget "$j" "j['warnings']")"
	check_eq "aarch64-qemu $v: core.arch" aarch64 "$(jget "$j" "j['core']['arch']")"
	check_eq "aarch64-qemu $v: libraries from the link map, under --sysroot" \
		"$(printf '%s\n' "$SYSROOT/lib/ld-linux-aarch64.so.1" "$SYSROOT/lib/libc.so.6" "$dir/libarm.so" | LC_ALL=C sort | paste -sd' ')" \
		"$(jget "$j" "' '.join(sorted(m['path'] for m in j['modules'] if m['path'].endswith('.so') or '.so.' in m['path']))")"
	python3 "$ROOT/tests/arch_stacks.py" "$j" | cut -d' ' -f2- >"$TMPD/$v.chains"
	if [ "$v" = signal ]; then
		check_eq "aarch64-qemu signal: the crashing thread's frames through qemu's signal trampoline" \
			"$CRASH handler ?? ?? raise start worker" \
			"$(python3 "$ROOT/tests/arch_stacks.py" "$j" --crashing | cut -d' ' -f2-16)"
		# The frame the signal interrupted: its exact pc, right after tgkill's svc.
		off=$(jget "$j" "[f for f in [t for t in j['threads'] if t['crashing']][0]['frames'] if f['function'] == 'raise'][0:1] and [t for t in j['threads'] if t['crashing']][0]['frames'][[f['function'] for f in [t for t in j['threads'] if t['crashing']][0]['frames']].index('raise') - 1]['module_offset']")
		check "aarch64-qemu signal: the interrupted frame's pc ($off) is just after a syscall in libc" \
			after_svc "$SYSROOT/lib/libc.so.6" "$off"
		continue
	fi
	check_eq "aarch64-qemu $v: the crashing thread's frames" "$CRASH start worker" \
		"$(python3 "$ROOT/tests/arch_stacks.py" "$j" --crashing | cut -d' ' -f2-12)"
	check_eq "aarch64-qemu $v: relay, gone by a tail call, restored with its entry value" \
		"True levels=3@3" "$(jget "$j" "[(str(f['tailcall']) + ' ' + ','.join('%s=%s@%s' % (a['name'], a['value'], a['entry_value']) for a in f['args'])) for f in [t for t in j['threads'] if t['crashing']][0]['frames'] if f['function'] == 'relay'][0]")"
	check_eq "aarch64-qemu $v: both waiters in pause < park < waiter" 2 \
		"$(grep -c '^pause park waiter' "$TMPD/$v.chains")"
	check "aarch64-qemu $v: the main thread reaches main, then _start" \
		grep -qE '^(\?\? )+main (\?\? )?__libc_start_main _start$' "$TMPD/$v.chains"
	check_eq "aarch64-qemu $v: no thread pointer in a qemu core: 34 registers, pc and sp named" \
		"34 True" "$(jget "$j" "str(len(j['threads'][0]['registers'])) + ' ' + str('pc' in j['threads'][0]['registers'] and 'tpidr_el0' not in j['threads'][0]['registers'])")"
	if [ "$v" = nopie ]; then
		NOPIE_CHAINS=$TMPD/$v.chains
		if gdb_multiarch_frames "$dir/prog" "$core" "$TMPD/$v.gdb"; then
			if python3 "$ROOT/tests/oracle_compare.py" "$j" "$TMPD/$v.gdb" "aarch64-qemu $v" >"$TMPD/$v.diff"; then
				pass "aarch64-qemu $v: every thread agrees with gdb-multiarch (functions, lines, arguments)"
			else
				fail "aarch64-qemu $v: differs from gdb-multiarch: $(head -3 "$TMPD/$v.diff" | tr '\n' ' ')"
			fi
		else
			fail "aarch64-qemu $v: gdb-multiarch gave no frames"
		fi
		# Run as ./prog and read from another directory without the binary:
		# nothing names the executable (qemu saved none of its pages), and
		# the report says so.
		mkdir -p "$TMPD/rel" && cp "$dir/prog" "$dir/libarm.so" "$TMPD/rel/"
		{ (cd "$TMPD/rel" && ulimit -c unlimited && exec timeout 120 qemu-aarch64 -L "$SYSROOT" ./prog) \
			>/dev/null 2>&1; } 2>/dev/null
		rel=$(ls "$TMPD"/rel/qemu_prog_*.core 2>/dev/null | head -1)
		rm -f "$TMPD"/rel/core "$TMPD"/rel/core.[0-9]*
		if [ -n "$rel" ]; then
			(cd "$TMPD" && "$ASYNCORE" report "$rel" >"$TMPD/alone.txt" 2>&1); rc=$?
			if [ $rc -eq 1 ] && grep -q "the core lists no files (no NT_FILE) and its executable ./prog was not found" "$TMPD/alone.txt"; then
				pass "aarch64-qemu $v: run as ./prog and read without it, a warning says why no frame is named"
			else
				fail "aarch64-qemu $v: without the binary: exit $rc: $(head -2 "$TMPD/alone.txt")"
			fi
		fi
		# Without --sysroot the program's own frames stand; libc's are unknown.
		asy_json "$TMPD/$v-noroot.json" "$core" "$dir/prog" --no-async
		check_eq "aarch64-qemu $v: without --sysroot the crashing thread's own frames" "$CRASH start worker" \
			"$(python3 "$ROOT/tests/arch_stacks.py" "$TMPD/$v-noroot.json" --crashing | cut -d' ' -f2-12)"
	elif [ -n "${NOPIE_CHAINS:-}" ]; then
		if diff <(sort "$NOPIE_CHAINS") <(sort "$TMPD/$v.chains") >"$TMPD/$v.cdiff"; then
			pass "aarch64-qemu $v: the same frames as the non-PIE build"
		else
			fail "aarch64-qemu $v: frames differ from the non-PIE build: $(head -5 "$TMPD/$v.cdiff" | tr '\n' ' ')"
		fi
	fi
	if [ "$v" = pac ]; then
		read -r saved pc < <(pac_saved "$j" "$core")
		if has_pac "$saved" && [ "$pc" != none ] && [ $((saved & 0xffffffffffff)) -eq $((pc)) ]; then
			pass "aarch64-qemu pac: a signed return address ($saved) shows as gdb strips it ($pc)"
		else
			fail "aarch64-qemu pac: the saved return address at x29+8 ($saved) is not a signed $pc"
		fi
	fi
done
