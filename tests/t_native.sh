#!/usr/bin/env bash
# Native stacks: -O2 inlines with threads, PIE and static, no frame
# pointers, split debug info, the fixture's own shared library, 1,000-frame
# recursion, C++ names, a binary moved away, a wrong binary.  Each fixture
# has expect* (tests/fixture_lines.py lines) and lines ("function file:line
# [inlined]" for frames of the crashing thread).
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
    fn, want, inl = parts[0], parts[1], 'inlined' in parts[2:]
    f = next((f for f in frames if strip_params(f.get('function') or '') == fn), None)
    if f is None:
        bad.append('%s: no such frame' % fn)
        continue
    got = '%s:%s' % (os.path.basename(f.get('file') or '?'), f.get('line'))
    if got != want:
        bad.append('%s at %s, expected %s' % (fn, got, want))
    if bool(f.get('inlined')) != inl:
        bad.append('%s inlined=%s, expected %s' % (fn, f.get('inlined'), inl))
print('; '.join(bad))
sys.exit(1 if bad else 0)
PY
	); then pass "$name-lines"; else fail "$name-lines: $out"; fi
}

# run_case NAME CORE BINARY EXPECT OWN [WANT_RC]: report, golden lines, lines.
run_case() {
	local name=$1 core=$2 bin=$3 expect=$4 own=$5 want_rc=${6:-0} json=$TMPD/$1.json
	shift 6 2>/dev/null || shift $#
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
	expect_lines "$name-frames" "$expect" "$TMPD/$name.lines"
	check_frame_lines "$name" "$json" "$(dirname "$expect")/lines"
	check_signal "$name" "$json" "$(dirname "$expect")/signal"
}

# check_signal NAME JSON FILE: FILE holds "NUMBER CODE_NAME ADDRESS".
check_signal() {
	local name=$1 json=$2 file=$3 want got
	[ -f "$file" ] || return 0
	want=$(cat "$file")
	got=$(jget "$json" "'%s %s %s' % (j['signal']['number'], j['signal']['code_name'], j['signal']['address'])")
	if [ "$want" = "$got" ]; then pass "$name-signal"; else fail "$name-signal: expected '$want', got '$got'"; fi
}

# case VARIANT EXPECT OWN
for spec in native_o2::expect:prog native_link:pie:expect-pie:prog \
	native_link:static:expect-static:prog native_nofp::expect:prog \
	native_debuglink::expect:prog native_shlib::expect:prog,libnative.so \
	native_deep::expect:prog native_cxx::expect:prog; do
	IFS=: read -r case variant expect own <<<"$spec"
	name=$case${variant:+-$variant}
	if fix_core "$case" "$variant"; then
		run_case "$name" "$FIX_CORE" "$FIX_DIR/prog" "$ROOT/fixtures/$case/$expect" "$own"
	else
		no_core "$name" $?
	fi
done

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
		exp=$ROOT/fixtures/native_moved/expect
		run_case native_moved-binary "$core" "$TMPD/elsewhere/prog" "$exp" prog 0
		run_case native_moved-sysroot "$core" "" "$exp" prog 0 --sysroot "$TMPD/sysroot"
		asy_json "$TMPD/nobin.json" "$core"
		if [ "$ASY_RC" -gt 1 ] || [ "$ASY_JSON_OK" -ne 0 ]; then
			fail "native_moved-nobinary: exited $ASY_RC: $(head -2 "$TMPD/nobin.json.err")"
		elif jget "$TMPD/nobin.json" "j['warnings']" | grep -q .; then
			pass native_moved-nobinary
		else
			fail "native_moved-nobinary: exit $ASY_RC but no warning about the missing executable"
		fi

		# A wrong binary: refused with a warning, none of its names used.
		if fix_build native_moved wrong; then
			w=$FIX_DIR
			asy_json "$TMPD/wrong.json" "$core" "$w/prog"
			[ "$ASY_JSON_OK" -eq 0 ] || echo '{"threads": [], "warnings": []}' >"$TMPD/wrong.json"
			bad=$(jget "$TMPD/wrong.json" "[f['function'] for t in j['threads'] for f in t['frames'] if (f.get('function') or '').startswith('wrong_') or f.get('function') == 'main']")
			nwarn=$(jget "$TMPD/wrong.json" "len(j['warnings'])")
			# Same frames (pcs) as with the right binary: nothing invented.
			pcs="[f['pc'] for f in j['threads'][0]['frames']]"
			want_pcs=$(jget "$TMPD/native_moved-binary.json" "$pcs")
			got_pcs=$(jget "$TMPD/wrong.json" "$pcs")
			if [ "$ASY_RC" -ne 1 ]; then
				fail "native_wrong: exit $ASY_RC, expected 1 (warning): $(head -2 "$TMPD/wrong.json.err")"
			elif [ "$bad" != "[]" ]; then
				fail "native_wrong: frames named from the wrong binary: $bad"
			elif [ "$nwarn" = 0 ]; then
				fail "native_wrong: no warning"
			elif [ "$want_pcs" != "$got_pcs" ]; then
				fail "native_wrong: crashing thread's pcs $got_pcs, with the right binary $want_pcs"
			else
				pass native_wrong
			fi
		fi
	else
		no_core "native_moved" $?
	fi
fi
exit 0
