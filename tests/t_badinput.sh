#!/usr/bin/env bash
# Bad input: exit 2 with one line on stderr saying what is wrong, never a
# crash; a core truncated in its segments is still analysed (exit 1, partial
# report with a warning); cores with flipped bytes exit 0, 1 or 2 and never
# crash or trip a sanitizer.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "badinput: no asyncore at $ASYNCORE (run make)"; exit 0; }
FLIPS=${FLIPS:-24}
UNREAD_DIR=$(mktemp -d /tmp/asyncore-unreadable.XXXXXX)
FIX_RUNS+=("$UNREAD_DIR")
chmod 755 "$UNREAD_DIR"

# run_asy OUT ARGS...: runs asyncore with a time limit; sets RC.
run_asy() {
	local out=$1; shift
	timeout 20 ${AS_NOBODY:-} "$ASYNCORE" "$@" >"$out.stdout" 2>"$out.stderr"
	RC=$?
}

sanitizer_said() { grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:|UndefinedBehaviorSanitizer' "$1.stderr"; }

# unusable NAME FILE: exit 2 and exactly one non-empty line on stderr.
unusable() {
	local name=$1 file=$2 out=$TMPD/$1
	run_asy "$out" "$file"
	local n; n=$(grep -c . "$out.stderr")
	if [ "$RC" -ne 2 ]; then
		fail "$name: exit $RC, expected 2: $(head -2 "$out.stderr")"
	elif sanitizer_said "$out"; then
		fail "$name: sanitizer error: $(grep -m1 -E 'Sanitizer|runtime error' "$out.stderr")"
	elif [ "$n" -ne 1 ]; then
		fail "$name: expected one line on stderr, got $n"
	else
		pass "$name"
	fi
}

unusable missing-file "$TMPD/no-such-core"
mkdir -p "$TMPD/a-directory"
unusable directory "$TMPD/a-directory"
# An unreadable file: as root, permissions stop nothing, so run asyncore as
# nobody (setpriv) on a mode-000 file.
echo x >"$UNREAD_DIR/unreadable" && chmod 000 "$UNREAD_DIR/unreadable"
if [ "$(id -u)" -ne 0 ]; then
	unusable unreadable-file "$UNREAD_DIR/unreadable"
elif command -v setpriv >/dev/null &&
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$ASYNCORE" 2>/dev/null; then
	AS_NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups" unusable unreadable-file "$UNREAD_DIR/unreadable"
else
	skip "unreadable-file: running as root and nobody cannot run $ASYNCORE (setpriv), permissions do not stop root"
fi
printf 'this is not an ELF core\n' >"$TMPD/text"
unusable not-elf "$TMPD/text"
: >"$TMPD/empty"
unusable empty-file "$TMPD/empty"
printf '\177ELF' >"$TMPD/elf-magic-only"
unusable elf-magic-only "$TMPD/elf-magic-only"

fix_core abort1 || { no_core badinput-cores $?; exit 0; }
core=$FIX_CORE prog=$FIX_DIR/prog
unusable executable-as-core "$prog"

python3 "$ROOT/tests/corrupt_core.py" "$core" "$TMPD/trunc-notes" truncate-notes
unusable truncated-notes "$TMPD/trunc-notes"

# Truncated in its segments: headers and notes intact, memory partly gone.
python3 "$ROOT/tests/corrupt_core.py" "$core" "$TMPD/trunc-seg" truncate-segments
run_asy "$TMPD/ts" report "$TMPD/trunc-seg" "$prog" --format json --threads all
if [ "$RC" -ne 1 ]; then
	fail "truncated-segments: exit $RC, expected 1: $(head -2 "$TMPD/ts.stderr")"
elif sanitizer_said "$TMPD/ts"; then
	fail "truncated-segments: sanitizer error"
else
	nthreads=$(jget "$TMPD/ts.stdout" "len(j['threads'])" 2>/dev/null)
	nwarn=$(jget "$TMPD/ts.stdout" "len(j['warnings'])" 2>/dev/null)
	if [ "${nthreads:-0}" -ge 1 ] && [ "${nwarn:-0}" -ge 1 ]; then
		pass truncated-segments
	else
		fail "truncated-segments: threads=${nthreads:-?} warnings=${nwarn:-?} (want a partial report with a warning)"
	fi
fi
# The text report of the same core also exits 1.
run_asy "$TMPD/tst" "$TMPD/trunc-seg" "$prog"
check truncated-segments-text test "$RC" -eq 1

# Random byte flips in the notes and in the program headers, and junk on the
# stack (the unwinder must stop, not crash).
for what in notes phdrs stack; do
	bad=""
	python3 "$ROOT/tests/corrupt_core.py" "$core" "$TMPD/flip-$what-%d" "flip-$what" "1-$FLIPS"
	for seed in $(seq 1 "$FLIPS"); do
		f=$TMPD/flip-$what-$seed
		run_asy "$f" report "$f" "$prog" --format json --threads all
		if [ "$RC" -gt 2 ] || sanitizer_said "$f"; then
			bad="$bad seed $seed: exit $RC $(grep -m1 -E 'Sanitizer|runtime error|.' "$f.stderr" | cut -c1-120);"
		fi
		rm -f "$f"
	done
	if [ -z "$bad" ]; then pass "flipped-$what ($FLIPS cores)"; else fail "flipped-$what:$bad"; fi
done
exit 0
