#!/usr/bin/env bash
# The layers use only what is below them (tests/layers.py): base/ uses no
# module; corefile/ only base/; dwarf/ base/ and corefile/; analyzer/ nothing
# of reports/ or cli/; reports/ only base/ and analyzer/ (no corefile/ or
# dwarf/ header, no core_ or dbg_ name).  Then the check is shown to fail:
# each breach below is made in a copy of the sources, and the check must
# name that file and what it uses; comments, strings and members that only
# look like a breach must not count.  Inside corefile/, no part uses itself
# through others (a circle of includes and calls among X.c/X.h pairs).
source "$(dirname "$0")/lib.sh"

W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
MODULES="base corefile dwarf analyzer reports cli"

if out=$(python3 "$ROOT/tests/layers.py" "$ROOT" 2>&1); then
	pass "layers: the tree keeps its layers"
else
	fail "layers: the tree keeps its layers: $(echo "$out" | head -5 | tr '\n' ';')"
fi

for m in $MODULES; do mkdir -p "$W/src/$m" && cp "$ROOT/$m"/*.[ch] "$W/src/$m/"; done
if out=$(python3 "$ROOT/tests/layers.py" "$W/src" 2>&1); then
	pass "layers: the copy passes as the tree does"
else
	fail "layers: the copy passes as the tree does: $(echo "$out" | head -3 | tr '\n' ';')"
fi

# breach NAME FILE TEXT PATTERN: TEXT appended to FILE in a second copy;
# the check of that copy must fail with a line of FILE matching PATTERN.
cp -r "$W/src" "$W/bad"
BREACHES=()
breach() {
	printf '%b\n' "$3" >>"$W/bad/$2"
	BREACHES+=("$1" "$2" "$4")
}

breach "reports/ including a corefile/ header" reports/pages.c \
	'#include "../corefile/core.h"' 'includes corefile/core.h'
breach "reports/ including a dwarf/ header, spaced and roundabout" reports/text.c \
	'#  include   "./../dwarf/dwarf.h"' 'includes dwarf/dwarf.h'
breach "reports/ calling a corefile/ function" reports/json.c \
	'static int probe(void) { return core_image_fd (0); }' "core_image_fd\\( is corefile/'s"
breach "reports/ calling a dwarf/ function across lines" reports/html.c \
	'static void *probe(void) { return dbg_session_create\n\t(0); }' "dbg_session_create\\( is dwarf/'s"
breach "reports/ naming a static function with corefile's prefix" reports/pages.c \
	'static void core_link(FILE *out) { (void)out; }' "core_link\\( is corefile/'s"
breach "reports/ holding a dwarf/ type" reports/store_rows.c \
	'static struct dbg_session *held;' "struct dbg_session is dwarf/'s type"
breach "reports/ using a corefile/ constant" reports/query.c \
	'static int kind = CORE_ERROR_FAULT;' "CORE_ERROR_FAULT carries corefile/'s prefix"
breach "analyzer/ including a reports/ header" analyzer/frames.c \
	'#include "../reports/report.h"' 'includes reports/report.h'
breach "analyzer/ including a cli/ header" analyzer/driver.c \
	'#include "../cli/cli.h"' 'includes cli/cli.h'
breach "analyzer/ calling a reports/ function" analyzer/cause.c \
	'static void probe(void) { rep_html_text(0, "", 0); }' "rep_html_text\\( is reports/'s"
breach "dwarf/ including an analyzer/ header" dwarf/session.c \
	'#include "../analyzer/analysis.h"' 'includes analyzer/analysis.h'
breach "dwarf/ including a reports/ header" dwarf/lines.c \
	'#include "../reports/store.h"' 'includes reports/store.h'
breach "dwarf/ calling an analyzer/ function without analyzer's prefix" dwarf/symtab.c \
	'static void probe(void) { go_read(0, 0, 0, 0); }' "go_read\\( is analyzer/'s"
breach "corefile/ including a dwarf/ header" corefile/core.c \
	'#include "../dwarf/dwarf.h"' 'includes dwarf/dwarf.h'
breach "corefile/ including an analyzer/ header" corefile/notes.c \
	'#include "../analyzer/analysis.h"' 'includes analyzer/analysis.h'
breach "corefile/ including a reports/ header" corefile/live.c \
	'#include "../reports/report.h"' 'includes reports/report.h'
breach "base/ including a corefile/ header" base/array.c \
	'#include "../corefile/error.h"' 'includes corefile/error.h'
breach "base/ calling a corefile/ function" base/strlist.c \
	'static void *probe(void) { return core_error_create(0, ""); }' "core_error_create\\( is corefile/'s"
breach "base/ holding an analyzer/ type" base/sha256.h \
	'struct an_frame;' "struct an_frame is analyzer/'s type"
# Circles inside corefile/: its parts (X.c with X.h) form no cycle, by
# includes of each other's headers, calls of the functions or uses of the
# objects another's .c defines.
breach "corefile/: a call closing a circle (target below core)" corefile/target.c \
	'static void probe(void) { core_close(0); }' \
	"calls core_close\\( of core.c \\(cycle: target -> core -> target\\)"
breach "corefile/: an include closing a circle (signals below notes)" corefile/signals.h \
	'#include "notes.h"' 'includes notes.h \(cycle: .*notes -> .*signals'
breach "corefile/: an object's use closing a circle (memory below segments)" corefile/memory.c \
	'static const void *probe = &core_segments_reader;' \
	"uses core_segments_reader of segments.c \\(cycle: memory -> segments -> memory\\)"
breach "corefile/: a circle of calls across three parts" corefile/image.c \
	'static void probe(void) { core_warn(0, ""); }' "calls core_warn\\( of target.c \\(cycle: "

out=$(python3 "$ROOT/tests/layers.py" "$W/bad" 2>&1); rc=$?
check "layers: the check of the bad copy fails" [ "$rc" -eq 1 ]
for ((i = 0; i < ${#BREACHES[@]}; i += 3)); do
	name=${BREACHES[i]} file=${BREACHES[i + 1]} pattern=${BREACHES[i + 2]}
	if echo "$out" | grep -Eq "^$file:[0-9]+: $pattern"; then
		pass "layers: fails on $name"
	else
		fail "layers: fails on $name: no line '$file: $pattern' in: $(echo "$out" | grep "^$file:" | head -3 | tr '\n' ';')"
	fi
done

check "layers: the bad copy names corefile/'s parts on circles" \
	grep -q '^corefile/: [0-9]* parts use each other in circles: .*core.*target' <<<"$out"

# Look-alikes: commented out, in a string, a member; the copy still passes.
printf '%s\n' '/* core_close(0); #include "core.h" */' \
	'static void probe(struct s *w) { w->core_open(0); }' >>"$W/src/corefile/target.c"
printf '%s\n' '/*' '#include "../corefile/core.h"' ' */' '// #include "../dwarf/dwarf.h"' \
	'static const char *probe = "core_open(x) #include \"../dwarf/dwarf.h\"";' \
	'/* dbg_session_create(0) */' 'static void probe2(struct s *w) { w->core_free(0); w->v.dbg_x(1); }' \
	>>"$W/src/reports/text.c"
if out=$(python3 "$ROOT/tests/layers.py" "$W/src" 2>&1); then
	pass "layers: comments, strings and members are no breach"
else
	fail "layers: comments, strings and members are no breach: $(echo "$out" | head -3 | tr '\n' ';')"
fi
