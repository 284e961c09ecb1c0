#!/usr/bin/env bash
# Report options and shapes: --max-frames, --threads crashing, per-frame
# registers, the text frame line, and the JSON contract's top-level fields.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "report: no asyncore at $ASYNCORE (run make)"; exit 0; }

fix_core native_deep; rc=$?
if [ $rc -eq 77 ]; then skip "report: no core for native_deep: $(cat "$TMPD/core.err")"; exit 0; fi
[ $rc -eq 0 ] || { fail "report: native_deep fixture did not build"; exit 0; }
DEEP_CORE=$FIX_CORE DEEP_PROG=$FIX_DIR/prog

"$ASYNCORE" report "$DEEP_CORE" "$DEEP_PROG" --format json >"$TMPD/deep.json"
n=$(json_get "$TMPD/deep.json" "len(j['threads'][0]['frames'])")
check "report: a 1000-deep recursion is unwound whole ($n frames)" test "$n" -gt 1000

# Past --max-frames a walk goes on along its stack: a recursion deeper than
# that is kept as its cycle, its count and the frames around it, down to main.
"$ASYNCORE" report "$DEEP_CORE" "$DEEP_PROG" --format json --max-frames 100 >"$TMPD/max.json"; rc=$?
check "report: past --max-frames a recursion is collapsed, down to main (exit 0)" \
	test "$rc/$(json_get "$TMPD/max.json" "(lambda t: (len(t['frames']) < 100, t['recursion']['cycle'],
		'main' in [f['function'] for f in t['frames']],
		t['frames'][-1]['index'] + 1 == $n))(j['threads'][0])")" = "0/(True, ['recurse'], True, True)"

fix_core threads4 || { fail "report: threads4 fixture"; exit 0; }
"$ASYNCORE" report "$FIX_CORE" "$FIX_DIR/prog" --format json --max-frames 2 >"$TMPD/max.json"; rc=$?
check "report: --max-frames bounds a stack without a cycle (2 native frames, their inline levels and tail calls)" \
	test "$(json_get "$TMPD/max.json" "all(len([f for f in t['frames'] if not (f['inlined'] or f['tailcall'])]) == 2 for t in j['threads'])")" = True
check "report: --max-frames says so (exit 1, a warning per thread)" \
	test "$rc/$(json_get "$TMPD/max.json" "len([w for w in j['warnings'] if '--max-frames' in w])")" = "1/4"

fix_core threads4 || { fail "report: threads4 fixture"; exit 0; }
"$ASYNCORE" report "$FIX_CORE" "$FIX_DIR/prog" --format json --threads crashing >"$TMPD/crash.json"
check "report: --threads crashing keeps the crashing thread only" \
	test "$(json_get "$TMPD/crash.json" "[t['crashing'] for t in j['threads']]")" = "[true]"
"$ASYNCORE" report "$FIX_CORE" "$FIX_DIR/prog" --format json >"$TMPD/all.json"
"$ASYNCORE" report "$FIX_CORE" "$FIX_DIR/prog" --format json --frame-registers >"$TMPD/regs.json"
check "report: top-level fields of the JSON contract" test "$(json_get "$TMPD/all.json" \
	"sorted(set(['asyncore_version','core','signal','crashing_tid','modules','threads','suspended','recorders','timeline','signature','signature_hash','warnings']) - set(j))")" = "[]"
check "report: frame fields of the JSON contract" test "$(json_get "$TMPD/all.json" \
	"sorted(set(['index','kind','pc','function','offset','module','module_offset','file','line','inlined']) - set(j['threads'][0]['frames'][0]))")" = "[]"
check "report: frames carry no registers unless asked" test "$(json_get "$TMPD/all.json" \
	"any('registers' in f for t in j['threads'] for f in t['frames'])")" = False
check "report: innermost frame carries every register, rip = pc" test "$(json_get "$TMPD/regs.json" \
	"(lambda f: len(f['registers']) == 17 and f['registers']['rip'] == f['pc'])(j['threads'][0]['frames'][0])")" = True
check "report: caller frames carry only callee-saved registers, rsp and rip" test "$(json_get "$TMPD/regs.json" \
	"all(set(f['registers']) <= {'rbx','rbp','rsp','r12','r13','r14','r15','rip'} for t in j['threads'] for f in t['frames'][[g['inlined'] for g in t['frames']].index(False) + 1:] if f['kind'] == 'native')")" = True
check "report: a caller's rsp is the CFA of the frame below it" test "$(json_get "$TMPD/regs.json" \
	"(lambda fs: fs[0]['cfa'] == fs[1]['registers']['rsp'])([f for f in j['threads'][0]['frames'] if not f['inlined']])")" = True

"$ASYNCORE" "$FIX_CORE" "$FIX_DIR/prog" >"$TMPD/text.out"
check "report: text frame lines look like gdb's (#N  0xADDR in fn (+0xOFF) at file:line  [module])" \
	grep -qE '^#[0-9]+ +0x[0-9a-f]+ in [^ ]+ (\(.*\) )?\(\+0x[0-9a-f]+\) at [^ ]+:[0-9]+  \[prog\]$' "$TMPD/text.out"
check "report: text names the signal and the crashing thread" \
	grep -qE '^signal: +SIGSEGV \(11\), SEGV_MAPERR, fault address 0x' "$TMPD/text.out"
check "report: --version" sh -c "'$ASYNCORE' --version | grep -q '^asyncore [0-9]'"
"$ASYNCORE" report "$FIX_CORE" --format yaml >/dev/null 2>"$TMPD/err"; rc=$?
check "report: a bad option value is a usage error (exit 2, one line)" \
	test "$rc/$(wc -l <"$TMPD/err")" = "2/1"
"$ASYNCORE" report "$FIX_CORE" /nonexistent/prog --format json >"$TMPD/nobin.json"; rc=$?
check "report: a missing BINARY is a warning, the report goes on (exit 1)" test "$rc/$(json_get "$TMPD/nobin.json" \
	"any('/nonexistent/prog' in w and 'not used' in w for w in j['warnings']) and len(j['threads']) == 4")" = "1/True"
