#!/usr/bin/env bash
# Colour in the text report: --color=always marks the crashing frame, the
# async/native seams and the warnings; auto colours a terminal only (a pty
# here), never a pipe or a file, and NO_COLOR turns auto off.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "color: no asyncore at $ASYNCORE (run make)"; exit 0; }
fix_core folly_c; rc=$?
[ $rc -eq 77 ] && { no_core color 77; exit 0; }
[ $rc -eq 0 ] || exit 0
ESC=$'\033'

"$ASYNCORE" report "$FIX_CORE" "$FIX_DIR/prog" --color=always >"$TMPD/always" 2>/dev/null
check "color: always marks the crashing frame (#0 of the crashing thread, bold red)" \
	grep -q "^${ESC}\[1;31m#0 .* in crash_main .*${ESC}\[0m\$" "$TMPD/always"
check "color: only that frame is red" test "$(grep -c "${ESC}\[1;31m" "$TMPD/always")" = 1
check "color: seams are marked (cyan)" grep -q "^    ${ESC}\[36m---- async frames ----${ESC}\[0m\$" "$TMPD/always"
check "color: warnings are marked (yellow)" grep -q "^  ${ESC}\[33mfolly: .*${ESC}\[0m\$" "$TMPD/always"
"$ASYNCORE" report "$FIX_CORE" "$FIX_DIR/prog" --color never >"$TMPD/never" 2>/dev/null
check "color: without the escapes, always is never's text" \
	test "$(sed "s/${ESC}\[[0-9;]*m//g" "$TMPD/always" | md5sum)" = "$(md5sum <"$TMPD/never")"
"$ASYNCORE" report "$FIX_CORE" "$FIX_DIR/prog" >"$TMPD/file" 2>/dev/null
check "color: auto writes no escape into a file" bash -c "! grep -q '$ESC' '$TMPD/file'"
"$ASYNCORE" report "$FIX_CORE" "$FIX_DIR/prog" 2>/dev/null | cat >"$TMPD/pipe"
check "color: auto writes no escape into a pipe" bash -c "! grep -q '$ESC' '$TMPD/pipe'"
NO_COLOR=1 "$ASYNCORE" report "$FIX_CORE" "$FIX_DIR/prog" --color=always >"$TMPD/forced" 2>/dev/null
check "color: an explicit --color=always wins over NO_COLOR" grep -q "${ESC}\[1;31m" "$TMPD/forced"

# on_pty OUT [ENV=VALUE...]: run asyncore with stdout on a pseudo-terminal.
on_pty() {
	local out=$1; shift
	PTY_ENV="$*" python3 "$ROOT/tests/pty_run.py" "$out" stdout "$ASYNCORE" report "$FIX_CORE" "$FIX_DIR/prog"
}
on_pty "$TMPD/pty"
check "color: auto colours a terminal" grep -q "${ESC}\[1;31m#0 " "$TMPD/pty"
on_pty "$TMPD/pty_no" NO_COLOR=1
check "color: NO_COLOR turns auto off on a terminal" \
	bash -c "grep -q 'crash_main' '$TMPD/pty_no' && ! grep -q '$ESC' '$TMPD/pty_no'"
on_pty "$TMPD/pty_dumb" TERM=dumb
check "color: TERM=dumb turns auto off" bash -c "! grep -q '$ESC' '$TMPD/pty_dumb'"
"$ASYNCORE" report "$FIX_CORE" --color=sometimes >/dev/null 2>"$TMPD/err"; rc=$?
check "color: a bad --color value exits 2 with one line" test "$rc/$(wc -l <"$TMPD/err")" = 2/1
