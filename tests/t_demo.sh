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
check "demo: crash in apply_discount, native then async frames" \
	sh -c "grep -A8 'crashing, SIGSEGV' '$out/report' | tr '\n' ' ' |
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
