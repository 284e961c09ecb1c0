#!/usr/bin/env bash
# Native stacks: -O2 inlines with threads, PIE and static, no frame
# pointers, split debug info, the fixture's own shared library, 1,000-frame
# recursion, C++ names, a binary moved away, a wrong binary, a main thread
# held inside clone3 (no CFI past the syscall), tail calls at -O2 and their
# arguments.  Each fixture has expect/VARIANT.stacks, .lines ("function
# file:line [inlined] [tailcall]" for frames of the crashing thread) and
# .signal (tests/lib.sh, expect_file).
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "native: no asyncore at $ASYNCORE (run make)"; exit 0; }

# check_frame_lines NAME JSON LINESFILE: file:line (basename) and the inlined
# flag of the first crashing-thread frame with each function name.
check_frame_lines() {
	local name=$1 json=$2 lines=$3 out
	[ -f "$lines" ] || return 0
	if out=$(python3 - "$json" "$lines" "$ROOT/tests" <<'PY'
import json, os, sys
sys.path.insert(0, sys.argv[3])
from frames import strip_params
j = json.load(open(sys.argv[1]))
t = [t for t in j['threads'] if t.get('crashing')] or j['threads'][:1]
frames = t[0]['frames'] if t else []
bad = []
for spec in open(sys.argv[2]):
    parts = spec.split()
    if not parts:
        continue
    fn, want = parts[0], parts[1]
    inl, tail = 'inlined' in parts[2:], 'tailcall' in parts[2:]
    f = next((f for f in frames if strip_params(f.get('function') or '') == fn), None)
    if f is None:
        bad.append('%s: no such frame' % fn)
        continue
    got = '%s:%s' % (os.path.basename(f.get('file') or '?'), f.get('line'))
    if got != want:
        bad.append('%s at %s, expected %s' % (fn, got, want))
    if bool(f.get('inlined')) != inl:
        bad.append('%s inlined=%s, expected %s' % (fn, f.get('inlined'), inl))
    if bool(f.get('tailcall')) != tail:
        bad.append('%s tailcall=%s, expected %s' % (fn, f.get('tailcall'), tail))
print('; '.join(bad))
sys.exit(1 if bad else 0)
PY
	); then pass "$name-lines"; else fail "$name-lines: $out"; fi
}

# run_case NAME CORE BINARY CASE VARIANT OWN [WANT_RC [ARGS...]]: report,
# then the case's stacks, lines and signal expectations for VARIANT.
run_case() {
	local name=$1 core=$2 bin=$3 case=$4 variant=$5 own=$6 want_rc=${7:-0} json=$TMPD/$1.json
	shift 7 2>/dev/null || shift $#
	asy_json "$json" "$core" $bin "$@"
	if [ "$ASY_RC" -ne "$want_rc" ]; then
		fail "$name-exit: asyncore exited $ASY_RC (expected $want_rc): $(head -3 "$json.err")"
		[ "$ASY_RC" -le 1 ] || return 1
	else
		pass "$name-exit"
	fi
	if [ "$ASY_JSON_OK" -ne 0 ]; then
		fail "$name-json: the report is not valid JSON: $(head -c 200 "$json")"; return 1
	fi
	python3 "$ROOT/tests/fixture_lines.py" --own "$own" --sorted --strip-params "$json" \
		>"$TMPD/$name.lines" 2>&1
	expect_lines "$name-frames" "$(expect_file "$case" "$variant" stacks)" "$TMPD/$name.lines"
	check_frame_lines "$name" "$json" "$(expect_file "$case" "$variant" lines)"
	check_signal "$name" "$json" "$(expect_file "$case" "$variant" signal)"
}

# check_signal NAME JSON FILE: FILE holds "NUMBER CODE_NAME ADDRESS".
check_signal() {
	local name=$1 json=$2 file=$3 want got
	[ -f "$file" ] || return 0
	want=$(cat "$file")
	got=$(jget "$json" "'%s %s %s' % (j['signal']['number'], j['signal']['code_name'], j['signal']['address'])")
	if [ "$want" = "$got" ]; then pass "$name-signal"; else fail "$name-signal: expected '$want', got '$got'"; fi
}

# build_id FILE: its GNU build-id in hex, "(none)" without one.
build_id() {
	local b; b=$(readelf -n "$1" 2>/dev/null | awk '/Build ID:/ {print $3}')
	echo "${b:-(none)}"
}

# wrong_case NAME CORE WRONG REFERENCE_JSON CORE_BUILD_ID: WRONG is refused:
# exit 1, a warning (JSON and text report) naming WRONG's and the core's
# build-ids, no name of WRONG's ("wrong_*", main) in any frame, and the
# crashing thread's pcs and names those of REFERENCE_JSON (a run without it).
wrong_case() {
	local name=$1 core=$2 wrong=$3 ref=$4 want_bid=$5 json=$TMPD/$1.json have_bid why=""
	have_bid=$(build_id "$wrong")
	asy_json "$json" "$core" "$wrong"
	local rc=$ASY_RC
	[ "$ASY_JSON_OK" -eq 0 ] || echo '{"threads": [], "warnings": []}' >"$json"
	local frames="[(f['pc'], f['function']) for f in j['threads'][0]['frames']]"
	local warn="[w for w in j['warnings'] if w.startswith('$wrong has build-id $have_bid ') and '$want_bid' in w]"
	"$ASYNCORE" "$core" "$wrong" >"$TMPD/$name.txt" 2>&1
	if [ "$rc" -ne 1 ]; then
		why="exit $rc, expected 1"
	elif [ "$(jget "$json" "[f['function'] for t in j['threads'] for f in t['frames'] if (f.get('function') or '').startswith('wrong_')]")" != "[]" ]; then
		why="frames named from the wrong binary"
	elif [ "$(jget "$json" "len($warn)")" != 1 ]; then
		why="no warning naming build-ids $have_bid and $want_bid: $(jget "$json" "j['warnings']")"
	elif ! grep -qF "$wrong has build-id $have_bid" "$TMPD/$name.txt"; then
		why="the text report does not show the warning"
	elif [ "$(jget "$json" "$frames")" != "$(jget "$ref" "$frames")" ]; then
		why="crashing thread $(jget "$json" "$frames"), without the binary $(jget "$ref" "$frames")"
	fi
	if [ -z "$why" ]; then pass "$name"; else fail "$name: $why"; fi
}

# CASE:VARIANT:OWN
for spec in native_o2::prog native_link:pie:prog native_link:static:prog native_nofp::prog \
	native_debuglink::prog native_shlib::prog,libnative.so native_deep::prog native_cxx::prog \
	native_clone3::prog native_tailcall::prog; do
	IFS=: read -r case variant own <<<"$spec"
	name=$case${variant:+-$variant}
	if fix_core "$case" "$variant"; then
		run_case "$name" "$FIX_CORE" "$FIX_DIR/prog" "$case" "$variant" "$own"
	else
		no_core "$name" $?
	fi
done

# glibc's pthread_join is a tail call of __pthread_clockjoin_ex: with libc's
# debug info (its call sites), the main thread shows ___pthread_join between
# them, marked as a tail call.
if [ -f "$TMPD/native_tailcall.json" ]; then
	j=$TMPD/native_tailcall.json
	libc_dwarf=$(jget "$j" "any(m['debuginfo'] for m in j['modules'] if '/libc.so' in (m['path'] or ''))")
	got=$(jget "$j" "' < '.join(f['function'] + ('*' if f['tailcall'] else '') for t in j['threads'] if not t['crashing'] for f in t['frames'] if f['function'] in ('__pthread_clockjoin_ex', '___pthread_join', 'main'))")
	if [ "$libc_dwarf" != True ]; then
		skip "native_tailcall-join: no debug info for libc (libc6-dbg)"
	elif [ "$got" = "__pthread_clockjoin_ex < ___pthread_join* < main" ]; then
		pass native_tailcall-join
	else
		fail "native_tailcall-join: main thread shows '$got', expected '__pthread_clockjoin_ex < ___pthread_join* < main' (* tail call)"
	fi
	if "$ASYNCORE" report "$(jget "$j" "j['core']['path']")" "$BUILD_FIX/native_tailcall/prog" \
		--format text 2>/dev/null |
		grep -Eq '^#[0-9]+ +0x[0-9a-f]+ in relay \(slot=slot@entry=0x5eed0, v=v@entry=6\) \[tail call\] \(\+0x[0-9a-f]+\) at ([^ ]*/)?main\.c:28 '; then
		pass native_tailcall-text
	else
		fail "native_tailcall-text: no '#N  0x... in relay (slot=slot@entry=0x5eed0, v=v@entry=6) [tail call] (+0x..) at main.c:28' line"
	fi
	# The bucket page's example stack shows stored arguments as the report does.
	"$ASYNCORE" ingest --quiet --db "$TMPD/tailcall.db" "$(jget "$j" "j['core']['path']")" >/dev/null 2>&1
	if "$ASYNCORE" top --db "$TMPD/tailcall.db" --format html 2>/dev/null |
		grep -qF 'slot=slot@entry=<span class="v">0x5eed0</span>'; then
		pass native_tailcall-top-html
	else
		fail "native_tailcall-top-html: the bucket page does not show relay's slot=slot@entry=0x5eed0"
	fi
	# Tail-call frames' arguments, as gdb prints them (t_oracle compares
	# every frame with gdb itself): values at the jump, @entry only where
	# the location list covers the real function's entry; hand_off, inlined
	# where the jump is, shows its own parameters in its DIEs' order.
	got=$(python3 - "$j" "$ROOT/tests" <<'PY'
import json, re, sys
sys.path.insert(0, sys.argv[2])
from oracle_compare import render_args
for t in json.load(open(sys.argv[1]))['threads']:
    for f in t['frames']:
        if f['tailcall'] and f['function'] in ('relay', 'forward', 'hand_off'):
            print('%s(%s)' % (f['function'], re.sub(r'0x[0-9a-f]{8,}', '0xADDR', render_args(f['args']))))
PY
)
	want='relay(slot=slot@entry=0x5eed0, v=v@entry=6)
forward(slot=slot@entry=0x5eed0, v=v@entry=7)
hand_off(id=<optimized out>, why=0xADDR "parked")'
	if [ "$(sort <<<"$got")" = "$(sort <<<"$want")" ]; then
		pass native_tailcall-args
	else
		fail "native_tailcall-args: $(tr '\n' ' ' <<<"$got"), expected $(tr '\n' ' ' <<<"$want")"
	fi
fi

# Split debug info: the executable's DWARF comes from prog.debug.
if [ -f "$TMPD/native_debuglink.json" ]; then
	got=$(jget "$TMPD/native_debuglink.json" "[m['debuginfo'] for m in j['modules'] if (m['path'] or '').endswith('/prog')]")
	case "$got" in
	*'/prog.debug"]') pass native_debuglink-debuginfo ;;
	*) fail "native_debuglink-debuginfo: the executable's debuginfo is $got, expected .../prog.debug" ;;
	esac
fi

# The text report's frame lines: "#N  0xADDR in function (+0xOFF) at file:line  [module]".
if [ -f "$TMPD/native_link-pie.json" ]; then
	d=$BUILD_FIX/native_link-pie
	core=$(jget "$TMPD/native_link-pie.json" "j['core']['path']")
	"$ASYNCORE" report "$core" "$d/prog" --format text >"$TMPD/text" 2>&1
	if grep -Eq '^#[0-9]+ +0x[0-9a-f]+ in parse_record (\([^)]*\) )?\(\+0x[0-9a-f]+\) at ([^ ]*/)?main\.c:8 +\[[^]]*prog\]' "$TMPD/text"; then
		pass native_link-text-frame
	else
		fail "native_link-text-frame: no '#N  0x... in parse_record (+0x..) at main.c:8  [prog]' line"
		grep -m3 parse_record "$TMPD/text" | sed 's/^/    /'
	fi
fi

# A binary moved away from where it ran: found again through the BINARY
# argument or --sysroot; without either, no crash and no invented names.
if fix_build native_moved; then
	d=$FIX_DIR
	orig=$TMPD/orig; mkdir -p "$orig"; cp "$d/prog" "$orig/prog"
	if core=$(fixture_core "$orig" 2>"$TMPD/core.err"); then
		FIX_RUNS+=("$(dirname "$core")")
		mkdir -p "$TMPD/elsewhere" "$TMPD/sysroot$orig"
		cp "$orig/prog" "$TMPD/sysroot$orig/prog"
		mv "$orig/prog" "$TMPD/elsewhere/prog"
		orig_copy=$TMPD/elsewhere/prog
		run_case native_moved-binary "$core" "$TMPD/elsewhere/prog" native_moved "" prog 0
		run_case native_moved-sysroot "$core" "" native_moved "" prog 0 --sysroot "$TMPD/sysroot"
		asy_json "$TMPD/nobin.json" "$core"
		if [ "$ASY_RC" -gt 1 ] || [ "$ASY_JSON_OK" -ne 0 ]; then
			fail "native_moved-nobinary: exited $ASY_RC: $(head -2 "$TMPD/nobin.json.err")"
		elif jget "$TMPD/nobin.json" "j['warnings']" | grep -q .; then
			pass native_moved-nobinary
		else
			fail "native_moved-nobinary: exit $ASY_RC but no warning about the missing executable"
		fi

		# A wrong binary: refused with a warning naming both build-ids,
		# none of its names used, exit 1; the same frames as without it.
		if fix_build native_moved wrong; then
			wrong_case native_wrong "$core" "$FIX_DIR/prog" "$TMPD/nobin.json" "$(build_id "$orig_copy")"
			# With the original back where it ran: libdwfl opens it by
			# itself, the wrong binary must still be refused loudly.
			cp "$orig_copy" "$orig/prog"
			asy_json "$TMPD/ondisk.json" "$core"
			wrong_case native_wrong-ondisk "$core" "$FIX_DIR/prog" "$TMPD/ondisk.json" "$(build_id "$orig_copy")"
			[ -x /bin/true ] &&
				wrong_case native_wrong-bintrue "$core" /bin/true "$TMPD/ondisk.json" "$(build_id "$orig_copy")"
			rm -f "$orig/prog"
		fi
	else
		no_core "native_moved" $?
	fi
fi

# A binary without a build-id is judged by its ELF and program headers
# against the core (AT_ENTRY, AT_PHDR, the saved program headers, NT_FILE):
# the right one is used, a wrong one refused.
if fix_build native_moved nobid; then
	orig=$TMPD/nobid; mkdir -p "$orig" "$TMPD/nobid-away"; cp "$FIX_DIR/prog" "$orig/prog"
	if core=$(fixture_core "$orig" 2>"$TMPD/core.err"); then
		FIX_RUNS+=("$(dirname "$core")")
		mv "$orig/prog" "$TMPD/nobid-away/prog"
		run_case native_nobid-binary "$core" "$TMPD/nobid-away/prog" native_moved "" prog 0
		asy_json "$TMPD/nobid-nobin.json" "$core"
		if fix_build native_moved nobid-wrong; then
			wrong_case native_nobid-wrong "$core" "$FIX_DIR/prog" "$TMPD/nobid-nobin.json" "(none)"
		fi
	else
		no_core native_nobid $?
	fi
fi

# A core without the executable's ELF header page (coredump_filter bit 4
# off): libdwfl lists no executable; the right binary is checked by its
# headers and reported at its load bias, a wrong one refused.
if fix_build native_moved; then
	orig=$TMPD/nohdr; mkdir -p "$orig" "$TMPD/nohdr-away"; cp "$FIX_DIR/prog" "$orig/prog"
	if core=$( (echo 0x23 >/proc/self/coredump_filter && fixture_core "$orig") 2>"$TMPD/core.err"); then
		FIX_RUNS+=("$(dirname "$core")")
		mv "$orig/prog" "$TMPD/nohdr-away/prog"
		asy_json "$TMPD/nohdr.json" "$core" "$TMPD/nohdr-away/prog"
		got=$(jget "$TMPD/nohdr.json" "[f['function'] for f in j['threads'][0]['frames'][:3]]")
		if [ "$ASY_RC" -le 1 ] && [ "$got" = '["moved_leaf", "moved_middle", "main"]' ]; then
			pass native_noheader-binary
		else
			fail "native_noheader-binary: exit $ASY_RC, first frames $got"
		fi
		asy_json "$TMPD/nohdr-nobin.json" "$core"
		if fix_build native_moved wrong; then
			wrong_case native_noheader-wrong "$core" "$FIX_DIR/prog" "$TMPD/nohdr-nobin.json" "(not saved in the core)"
		fi
	else
		no_core native_noheader $?
	fi
fi

# A stripped program crashed where it still lies, and the build it was
# stripped from (the same build-id) is given: its symbols and DWARF name
# the frames, as gdb's `gdb FULL CORE` does.
if fix_build native_moved; then
	orig=$TMPD/stripped; mkdir -p "$orig"
	strip --strip-all -o "$orig/prog" "$FIX_DIR/prog"
	if core=$(fixture_core "$orig" 2>"$TMPD/core.err"); then
		FIX_RUNS+=("$(dirname "$core")")
		run_case native_stripped-full "$core" "$FIX_DIR/prog" native_moved "" prog 0
		got=$(jget "$TMPD/native_stripped-full.json" "[m['path'] for m in j['modules'] if m.get('build_id') == '$(build_id "$FIX_DIR/prog")']")
		if [ "$got" = "[\"$FIX_DIR/prog\"]" ]; then
			pass "native_stripped-full-module: the executable's module is the given build"
		else
			fail "native_stripped-full-module: $got"
		fi
	else
		no_core native_stripped $?
	fi
fi
exit 0
