#!/usr/bin/env bash
# make install into a temporary DESTDIR: the binary runs from there and finds
# its shipped files relative to itself, the man page renders without groff
# warnings and names every command and option cli/ has, bash completes the
# commands and options, and make uninstall removes it all.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "install: no asyncore at $ASYNCORE (run make)"; exit 0; }
D=$TMPD/dest P=/opt/asy
make -s -C "$ROOT" install DESTDIR="$D" PREFIX=$P PROGRAM="$ASYNCORE" >"$TMPD/install.log" 2>&1 ||
	{ fail "install: make install failed: $(tail -3 "$TMPD/install.log")"; exit 0; }
B=$D$P/bin/asyncore
check "install: bin/asyncore" test -x "$B"
check "install: share/man/man1/asyncore.1" test -f "$D$P/share/man/man1/asyncore.1"
check "install: bash completion" test -f "$D$P/share/bash-completion/completions/asyncore"
shipped=$(ls "$ROOT"/share/asyncore/runtimes/*.json 2>/dev/null | wc -l)
check "install: the $shipped runtime descriptions under share/asyncore/runtimes" \
	test -d "$D$P/share/asyncore/runtimes" -a "$(ls "$D$P"/share/asyncore/runtimes/*.json 2>/dev/null | wc -l)" = "$shipped"
check "install: the installed binary is this build" test "$("$B" --version)" = "$("$ASYNCORE" --version)"
check "install: the installed binary finds its files relative to itself" \
	grep -qx "shipped files: $(realpath "$D$P/share/asyncore")" <("$B" --help)
if [ -d "$ROOT/share/asyncore" ] && [ "$(dirname "$(realpath "$ASYNCORE")")" = "$ROOT" ]; then
	check "install: the checkout's ./asyncore finds the checkout's share/asyncore" \
		grep -qx "shipped files: $ROOT/share/asyncore" <("$ASYNCORE" --help)
fi
if fix_core threads4; then
	"$B" report "$FIX_CORE" "$FIX_DIR/prog" --format json >"$TMPD/inst.json" 2>/dev/null
	"$ASYNCORE" report "$FIX_CORE" "$FIX_DIR/prog" --format json >"$TMPD/tree.json" 2>/dev/null
	check "install: the installed binary analyses a core as the build does" python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["threads"] and a["threads"] == b["threads"] and a["signature"] == b["signature"]' "$TMPD/inst.json" "$TMPD/tree.json"
fi

MAN=$D$P/share/man/man1/asyncore.1
groff -man -ww -z "$MAN" 2>"$TMPD/groff.err"
check "install: groff -man -ww finds nothing to warn about" test ! -s "$TMPD/groff.err"
MANWIDTH=100 man -l "$MAN" >"$TMPD/man.txt" 2>"$TMPD/man.err"
check "install: man -l renders it without a message" test -s "$TMPD/man.txt" -a ! -s "$TMPD/man.err"
for section in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS "EXIT STATUS" ENVIRONMENT FILES EXAMPLES; do
	check "install: man page section $section" grep -qx "$section" "$TMPD/man.txt"
done
missing=
for opt in $(grep -ho '{"-[-a-z]*"' "$ROOT"/cli/*.c | tr -d '{"' | sort -u); do
	grep -q -- "$opt\b" "$TMPD/man.txt" || missing="$missing $opt"
done
check "install: the man page names every option of cli/ (missing:${missing:- none})" test -z "$missing"
missing=
for cmd in report ingest query top resign; do
	grep -q "^       asyncore $cmd" "$TMPD/man.txt" || missing="$missing $cmd"
done
check "install: the synopsis has every command (missing:${missing:- none})" test -z "$missing"

# complete WORDS...: what the installed completion offers for the last word.
complete_words() {
	bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _asyncore; printf "%s\n" "${COMPREPLY[@]}"' \
		_ "$D$P/share/bash-completion/completions/asyncore" "$@" | sort | tr '\n' ' '
}
check "install: bash completes the commands" \
	test "$(complete_words asyncore "" | tr ' ' '\n' | grep -cxE 'report|ingest|query|top|store')" = 5
check "install: bash completes report's options" grep -q -- "--color" <(complete_words asyncore report core --co)
check "install: bash completes --format values of top" test "$(complete_words asyncore top --format "")" = "csv html json table "
check "install: bash completes --color values" test "$(complete_words asyncore report --color "")" = "always auto never "

make -s -C "$ROOT" uninstall DESTDIR="$D" PREFIX=$P >/dev/null 2>&1
check "install: make uninstall leaves no file" test -z "$(find "$D" -type f)"
