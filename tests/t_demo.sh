#!/usr/bin/env bash
# `make demo` end to end: the demo crashes, and its report shows the spliced
# async stack, the recorder events before the crash and the suspended chain.
source "$(dirname "$0")/lib.sh"

[ -x "$ASYNCORE" ] || { fail "demo: no asyncore at $ASYNCORE (run make)"; exit 0; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if ! DEMO_DIR=$out/demo "$ROOT/fixtures/demo/run-demo" "$ASYNCORE" >"$out/report" 2>"$out/err"; then
	if grep -q "no core" "$out/err"; then skip "demo: $(grep 'no core' "$out/err" | head -1)"
	else fail "demo: run-demo failed: $(tail -3 "$out/err")"; fi
	exit 0
fi
# the crashing thread's frame and seam lines, without the source lines under them
sed -n '/crashing, SIGSEGV/,/^$/p' "$out/report" | grep -v $'^    [0-9]*\t' >"$out/frames"
check "demo: crash in apply_discount, native then async frames" \
	sh -c "head -9 '$out/frames' | tr '\n' ' ' |
		grep -qE 'apply_discount.*price_order.*handle_order.*---- async frames ----.*serve_connection.*\\[async\\].*service_main'"
check "demo: the cause names the member read through the loaded pointer" \
	grep -qx 'cause:       null_dereference: read of order.coupon->rate at NULL + 0x8' "$out/report"
check "demo: the recorder events lead up to the crash" \
	grep -q 'orders: order 207: coupon (none), rate 0' "$out/report"
check "demo: the suspended audit coroutine is listed" \
	sh -c "grep -A3 'Suspended chain' '$out/report' | grep -q 'audit_orders.*\\[async\\]'"
check "demo: signature names the async caller" \
	grep -qE '^signature: SIGSEGV: apply_discount < price_order < handle_order < serve_connection' "$out/report"
check "demo: coroutine bodies read as written" \
	sh -c "grep -q ' in handle_order(Order) \\[coroutine\\] ' '$out/report' &&
		grep -q ' in serve_connection(int) \\[coroutine\\] ' '$out/report' &&
		grep -q ' in audit_orders() \\[coroutine\\] ' '$out/report' &&
		! grep -q 'Frame\\*' '$out/report'"

# The source line under frame 0 is the line its file holds (tabs expanded),
# in text and in the HTML page (marked, with the lines around it).
read -r src_file src_line < <(sed -n 's/^#0 .* at \(.*demo\.cpp\):\([0-9]*\)  .*/\1 \2/p' "$out/frames" | head -1)
want=$(sed -n "${src_line:-0}p" "$ROOT/fixtures/demo/demo.cpp" | expand -t 8 | sed 's/[[:space:]]*$//')
check "demo: frame 0 is at demo.cpp:42, in the repository's file ($src_file)" \
	test "$src_line" = 42 -a "$src_file" -ef "$ROOT/fixtures/demo/demo.cpp"
got=$(grep -A1 '^#0 ' "$out/report" | sed -n 2p)
check "demo: the text report shows frame 0's source line under it ('$got')" \
	test "$got" = "$(printf '    42\t%s' "$want")" -a -n "$want"
core=$(ls "$out"/demo/core* | head -1)
"$ASYNCORE" report "$core" "$out/demo/demo" --no-source >"$out/plain" 2>/dev/null
no_source_same() {
	! grep -q $'^    [0-9]*\t' "$out/plain" &&
		grep -v $'^    [0-9]*\t' "$out/report" | sed -n '/^cause:/,$p' | diff -q - "$out/plain"
}
check "demo: --no-source leaves the source lines out, and nothing else" no_source_same
"$ASYNCORE" report "$core" "$out/demo/demo" --format json >"$out/a.json" 2>/dev/null
"$ASYNCORE" report "$core" "$out/demo/demo" --format json --no-source >"$out/b.json" 2>/dev/null
check "demo: the JSON report carries no source lines (the same with --no-source)" \
	sh -c "cmp -s '$out/a.json' '$out/b.json' && grep -q 'demo.cpp' '$out/a.json' && ! grep -q 'order.coupon->rate;' '$out/a.json'"
"$ASYNCORE" report "$core" "$out/demo/demo" --format html >"$out/page.html" 2>/dev/null
check "demo: the HTML page marks frame 0's line among the two before and after it" python3 - \
	"$out/page.html" "$ROOT/fixtures/demo/demo.cpp" 42 "$ROOT/tests" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[4])
from dom import load
root, body = load(sys.argv[1])
n = int(sys.argv[3])
lines = [l.expandtabs(8).rstrip() for l in open(sys.argv[2]).read().split("\n")]
frame = root.find("li", "frame")[0]
shown = [(int(l.find("span", "ln")[0].text()), l.find("code")[0].text(), "cur" in l.classes())
         for l in frame.find("div", "sl")]
want = [(k, lines[k - 1], k == n) for k in range(n - 2, n + 3)]
assert shown == want, (shown, want)
PY

# The README's example is this report: its frame and source lines are the
# report's, the checkout's path left out (addresses and ids differ by run).
check "demo: the README's example report is the demo's, with paths from the checkout" python3 - \
	"$ROOT/README.md" "$out/report" "$ROOT/" <<'PY'
import re, sys
readme, report, root = open(sys.argv[1]).read(), open(sys.argv[2]).read(), sys.argv[3]
example = readme.split("## A first crash report", 1)[1].split("```\n", 2)[1]
def shape(line):
    return re.sub(r"0x[0-9a-f]+", "0x?", line)
wanted = [shape(l) for l in example.split("\n") if re.match(r"#\d|    \d+\t|cause:", l)]
got = {shape(l.replace(root, "")) for l in report.split("\n")}
missing = [l for l in wanted if l not in got]
assert len(wanted) >= 10 and not missing and root not in example, missing
PY
