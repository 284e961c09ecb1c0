#!/usr/bin/env bash
# The cause of a crash (DESIGN.md "JSON", `cause`): fixtures/cause_c and
# fixtures/cause_cxx crash once per kind (-O2, as users build).  Oracles:
# the program's own stderr (std::terminate's "terminate called after
# throwing an instance of" and "what():" lines, glibc's assertion, malloc and
# stack-protector messages) and gdb on the same core (the fault address, the
# faulting instruction, `p &EXPR` of the member the report names, the return
# address at sp).  Then the store's cause columns, and cores whose evidence
# is missing or damaged: the plain signal's kind, never a crash.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/fixlib.sh"

have_asyncore || { fail "cause: no asyncore at $ASYNCORE (run make)"; exit 0; }

CORES=$TMPD/cores
mkdir -p "$CORES"

# gdb_core PROG CORE CMD...: gdb's answers to CMD... on the core.
gdb_core() {
	local prog=$1 core=$2; shift 2
	local args=() c
	for c in "$@"; do args+=(-ex "$c"); done
	LC_ALL=C gdb -batch -nx -iex 'set auto-load python-scripts off' "${args[@]}" "$prog" "$core" 2>/dev/null
}

# si_addr PROG CORE: the fault address gdb reads from the core's siginfo.
si_addr() {
	gdb_core "$1" "$2" 'p/x $_siginfo._sifields._sigfault.si_addr' | sed -n 's/^\$1 = \(0x[0-9a-f]*\)$/\1/p'
}

# crash NAME CASE MODE KIND: crash fixture CASE (its build $VARIANT, when
# set) with argument MODE, report
# it; PASS NAME-kind when the cause's kind is KIND and the text report's
# first line is "cause:       KIND: SUMMARY".  Sets J (the JSON), C (the
# core), ERR (the program's stderr), PROG, SUMMARY.  Returns 1 when there is
# nothing to check further.
crash() {
	local name=$1 case=$2 mode=$3 kind=$4 rc
	fix_core "$case" "${VARIANT:-}" "$mode"; rc=$?
	if [ $rc -ne 0 ]; then no_core "cause-$name" $rc; return 1; fi
	C=$FIX_CORE PROG=$FIX_DIR/prog ERR=$(dirname "$FIX_CORE")/stderr J=$TMPD/$name.json
	cp "$C" "$CORES/$name.core"
	asy_json "$J" "$C"
	if [ "$ASY_JSON_OK" -ne 0 ] || [ "$ASY_RC" -gt 1 ]; then
		fail "cause-$name: asyncore exited $ASY_RC: $(head -2 "$J.err")"
		return 1
	fi
	local got; got=$(jget "$J" "j['cause']['kind']")
	SUMMARY=$(jget "$J" "j['cause']['summary']")
	if [ "$got" != "$kind" ]; then
		fail "cause-$name-kind: $got ($SUMMARY), expected $kind"
		return 1
	fi
	local first; first=$("$ASYNCORE" report "$C" 2>/dev/null | head -1)
	if [ "$first" = "cause:       $kind: $SUMMARY" ]; then
		pass "cause-$name-kind"
	else
		fail "cause-$name-kind: text report's first line is '$first'"
	fi
}

# same NAME GOT WANT: PASS when equal.
same() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: got '$2', expected '$3'"; fi
}

# exception NAME MODE: an uncaught exception; its type and what() as
# std::terminate's handler printed them on the program's stderr.
exception() {
	local name=$1 mode=$2
	crash "$name" cause_cxx "$mode" uncaught_exception || return
	local type what have_what
	type=$(sed -n "s/^terminate called after throwing an instance of '\(.*\)'$/\1/p" "$ERR")
	what=$(sed -n 's/^  what():  //p' "$ERR")
	grep -q '^  what():  ' "$ERR" && have_what=1 || have_what=0
	same "cause-$name-type" "$(jget "$J" "j['cause']['exception']['type']")" "$type"
	if [ $have_what = 1 ]; then
		same "cause-$name-what" "$(jget "$J" "j['cause']['exception']['what']")" "$what"
		same "cause-$name-summary" "$SUMMARY" "$type: $what"
	else
		same "cause-$name-what" "$(jget "$J" "j['cause']['exception']['what']")" "None"
		same "cause-$name-summary" "$SUMMARY" "$type"
	fi
}

exception out_of_range out_of_range          # vector::at in a std::thread
exception invalid_argument invalid_argument
exception system_error system_error
exception user user                          # a class of its own: type only
exception derived derived                    # derived from std::runtime_error
exception rethrow rethrow                    # throw; in a catch (...)
exception rethrow_ptr rethrow_ptr            # std::rethrow_exception: a dependent exception
exception dtor dtor                          # thrown by a destructor during unwinding
VARIANT=static exception static_out_of_range out_of_range   # libstdc++ linked in

# A message past 4,096 bytes is cut there.
if crash long_what cause_cxx long_what uncaught_exception; then
	what=$(sed -n 's/^  what():  //p' "$ERR")
	same "cause-long_what-what (${#what} characters)" "$(jget "$J" "j['cause']['exception']['what']")" \
		"${what:0:4092}..."
fi

# gdb_frame_after PROG CORE FUNCTION: the function of the frame gdb shows
# right after FUNCTION's in the crashing thread's backtrace.
gdb_frame_after() {
	gdb_core "$1" "$2" bt | awk -v f="$3" '
		/^#/ { name = ($2 == "in") ? $3 : (($3 == "in") ? $4 : $2) }
		/^#/ && seen { print name; exit }
		/^#/ && index(name, f) == 1 { seen = 1 }'
}

# std::terminate with no exception: an abort, as libstdc++'s handler says,
# with what called it when the stack says (gdb names the caller).
if crash terminate cause_cxx terminate abort; then
	same "cause-terminate-summary" "$SUMMARY" "$(tail -1 "$ERR"): a joinable std::thread destroyed or \
assigned to in $(gdb_frame_after "$PROG" "$C" std::thread::~thread)"
fi
# -O2 merges the assignment's call to std::terminate with the destructor's:
# gdb shows ~thread there too.
if crash terminate-assign cause_cxx assign abort; then
	same "cause-terminate-assign-summary" "$SUMMARY" "$(tail -1 "$ERR"): a joinable std::thread destroyed or \
assigned to in $(gdb_frame_after "$PROG" "$C" std::thread::)"
fi
# gdb names a C++ function without its parameter list.
if crash pure-virtual cause_cxx pure abort; then
	same "cause-pure-virtual-summary" "${SUMMARY%%(*}" \
		"$(head -1 "$ERR") in $(gdb_frame_after "$PROG" "$C" __cxa_pure_virtual)"
fi

# null NAME CASE MODE: a NULL dereference.  gdb: the fault address, the
# faulting instruction (AT&T: a memory destination is the last operand, a
# write), and `p/x &EXPR` in frame 0 is the fault address.
null() {
	local name=$1 case=$2 mode=$3
	crash "$name" "$case" "$mode" null_dereference || return
	local fault insn access expr want
	fault=$(si_addr "$PROG" "$C")
	insn=$(gdb_core "$PROG" "$C" 'x/i $pc' | sed -n 's/^=> 0x[0-9a-f]* <[^>]*>:[[:space:]]*//p')
	if [[ "$insn" =~ \(%[a-z0-9]+\)$ ]]; then want=write; else want=read; fi
	access=$(jget "$J" "j['cause']['access']")
	same "cause-$name-access ($insn)" "$access" "$want"
	expr=$(jget "$J" "j['cause']['expression']")
	same "cause-$name-summary" "$SUMMARY" "$access of $expr at NULL + $fault"
	local at
	at=$(gdb_core "$PROG" "$C" "p/x &($expr)" | sed -n 's/^\$1 = \(0x[0-9a-f]*\)$/\1/p')
	same "cause-$name-expression ($expr)" "$at" "$fault"
}

null null_read_c cause_c null_read           # s->bytes through a struct pointer
null null_write_c cause_c null_write         # s->quota.limit = ...
null null_read_cxx cause_cxx null_read       # this->balance in a member function
null null_write_cxx cause_cxx null_write
null null_base_cxx cause_cxx null_base       # this->created, a member of the base class
null null_union_c cause_c null_union         # m->body: a union's member is not named
# A pointer loaded from a member, then dereferenced: no variable holds it.
null null_loaded_c cause_c null_loaded       # o->account->limit
null null_loaded_cxx cause_cxx null_loaded   # order.coupon->rate through a reference

# A jump lands between the load and the access: the load may not be what
# set the register on every path, so the access is not named.
if crash null_loaded_jump_c cause_c null_loaded_jump null_dereference; then
	same "cause-null_loaded_jump_c-summary" "$SUMMARY" "read at NULL + $(si_addr "$PROG" "$C")"
fi

# A write through a pointer to read-only data: not NULL, a bad access; gdb
# says where and `p &EXPR` names the same address.
if crash readonly_write cause_c readonly_write bad_access; then
	fault=$(si_addr "$PROG" "$C")
	expr=$(jget "$J" "j['cause']['expression']")
	at=$(gdb_core "$PROG" "$C" "p/x &($expr)" | sed -n 's/^\$1 = \(0x[0-9a-f]*\)$/\1/p')
	same "cause-readonly_write-summary" "$SUMMARY" \
		"write of $expr at $fault (SEGV_ACCERR) in session_set_limit"
	same "cause-readonly_write-expression ($expr)" "$at" "$fault"
fi

# A wild pointer below the first mapping (a PIE loads far above 0x41414141):
# the pointer the instruction went through was not NULL, so a bad access.
if crash wild_read cause_c wild_read bad_access; then
	fault=$(si_addr "$PROG" "$C")
	same "cause-wild_read-summary" "$SUMMARY" "read of s->bytes at $fault (SEGV_MAPERR) in session_bytes"
fi

# Without DWARF the instruction still says read or write, not what.
if fix_core cause_c stripped null_read; then
	asy_json "$TMPD/stripped.json" "$FIX_CORE"
	same "cause-null-stripped" "$(jget "$TMPD/stripped.json" "j['cause']['summary'], j['cause']['expression']")" \
		"('read at NULL + 0x40', None)"
else
	no_core cause-null-stripped $?
fi

if crash wild_jump cause_c wild_jump bad_jump; then
	pc=$(gdb_core "$PROG" "$C" 'p/x $pc' | sed -n 's/^\$1 = \(0x[0-9a-f]*\)$/\1/p')
	caller=$(gdb_core "$PROG" "$C" 'info symbol *(long *)$sp' | sed -n 's/^\([^ ]*\) + [0-9]* in section.*/\1/p')
	ra=$(gdb_core "$PROG" "$C" 'p/x *(long *)$sp' | sed -n 's/^\$1 = \(0x[0-9a-f]*\)$/\1/p')
	same "cause-wild_jump-summary" "$SUMMARY" \
		"pc $pc is in no executable mapping, called from $caller (return address $ra)"
fi

if crash overflow cause_c overflow stack_overflow; then
	fault=$(si_addr "$PROG" "$C")
	sp=$(gdb_core "$PROG" "$C" 'p/x $sp' | sed -n 's/^\$1 = \(0x[0-9a-f]*\)$/\1/p')
	case "$SUMMARY" in
	"fault at $fault in the guard gap below the main thread's stack ("*", sp $sp)")
		pass "cause-overflow-summary" ;;
	*) fail "cause-overflow-summary: '$SUMMARY' (gdb: fault $fault, sp $sp)" ;;
	esac
fi

if crash thread_overflow cause_c thread_overflow stack_overflow; then
	fault=$(si_addr "$PROG" "$C")
	sp=$(gdb_core "$PROG" "$C" 'p/x $sp' | sed -n 's/^\$1 = \(0x[0-9a-f]*\)$/\1/p')
	tid=$(jget "$J" "j['crashing_tid']")
	same "cause-thread_overflow-summary" "$SUMMARY" \
		"fault at $fault in the guard page below thread $tid's stack (256 KiB, sp $sp)"
fi

if crash smash cause_c smash stack_smashing; then
	same "cause-smash-summary" "$SUMMARY" "stack smashing detected in copy_name"
	same "cause-smash-message" "$(jget "$J" "j['abort_message']")" "$(tail -1 "$ERR")"
fi

if crash double_free cause_c double_free heap_corruption; then
	same "cause-double_free-summary" "$SUMMARY" "$(tail -1 "$ERR") (from main)"
fi

if crash assert cause_c assert assertion; then
	same "cause-assert-summary" "$SUMMARY" "$(tail -1 "$ERR")"
fi

if crash abort cause_c abort abort; then
	same "cause-abort-summary" "$SUMMARY" "abort() called from main"
fi

# insn_case NAME MODE KIND MNEMONIC: the faulting instruction gdb shows is
# MNEMONIC, and the summary names it.
insn_case() {
	crash "$1" cause_c "$2" "$3" || return
	local insn
	insn=$(gdb_core "$PROG" "$C" 'x/i $pc' | sed -n 's/^=> 0x[0-9a-f]* <[^>]*>:[[:space:]]*//p')
	case "$insn $SUMMARY" in
	"$4"*"\`$4"*) pass "cause-$1-insn" ;;
	*) fail "cause-$1-insn: gdb '$insn', summary '$SUMMARY'" ;;
	esac
}
insn_case fpe fpe arithmetic idiv
insn_case ill ill illegal_instruction ud2
case "$SUMMARY" in "\`ud2\` at 0x"*" (ILL_ILLOPN) in main") pass "cause-ill-summary" ;;
*) fail "cause-ill-summary: $SUMMARY" ;; esac

# The HTML page's header begins with the cause.
if [ -f "$CORES/out_of_range.core" ]; then
	"$ASYNCORE" report "$CORES/out_of_range.core" --format html >"$TMPD/page.html" 2>/dev/null
	got=$(python3 - "$TMPD/page.html" <<'PY'
import html.parser, sys
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.depth = None; self.first = None; self.text = ''; self.inside = False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'header' and 'top' in (a.get('class') or '').split():
            self.depth = 0
        elif self.depth == 0 and self.first is None:
            self.first = (tag, a.get('id'), a.get('data-kind')); self.inside = True
    def handle_endtag(self, tag):
        if self.inside and tag == self.first[0]:
            self.inside = False; self.depth = None
    def handle_data(self, d):
        if self.inside: self.text += d
p = P(); p.feed(open(sys.argv[1]).read())
print(p.first, p.text)
PY
)
	same "cause-html-header" "$got" \
		"('p', 'cause', 'uncaught_exception') uncaught_exception: $(jget "$TMPD/out_of_range.json" "j['cause']['summary']")"
fi

# The store: one row per core with its cause, grouped by query.
DB=$TMPD/cause.db
"$ASYNCORE" ingest --db "$DB" --quiet "$CORES" >/dev/null 2>"$TMPD/ingest.err"
got=$("$ASYNCORE" query --db "$DB" --format csv "select cause_kind, count(*) from cores group by 1 order by 1" | tail -n +2)
want=$(for n in "$CORES"/*.core; do b=$(basename "$n" .core); jget "$TMPD/$b.json" "j['cause']['kind']"; done |
	sort | uniq -c | awk '{print $2 "," $1}')
same "cause-store-kinds" "$got" "$want"
got=$("$ASYNCORE" query --db "$DB" --format csv \
	"select cause_summary from cores where path like '%/out_of_range.core'" | tail -n +2)
same "cause-store-summary" "$got" "$(jget "$TMPD/out_of_range.json" "j['cause']['summary']")"

# A store of schema version 5 (no cause columns) is migrated by the next
# ingest: its cores keep NULL causes, new ones have theirs.
if [ -f "$CORES/abort.core" ] && [ -f "$CORES/assert.core" ]; then
	OLD=$TMPD/old.db
	"$ASYNCORE" ingest --db "$OLD" --quiet "$CORES/abort.core" >/dev/null 2>&1
	sqlite3 "$OLD" "DROP VIEW hang_waits; DROP TABLE deadlock_members; DROP TABLE deadlocks;
		DROP TABLE blocked_on; ALTER TABLE tasks DROP COLUMN name;
		DROP TRIGGER cores_set_add; DROP TRIGGER cores_set_drop; DROP TRIGGER cores_set_move;
		DROP TRIGGER term_names_name; DROP TABLE set_days; DROP TABLE term_names;
		DROP INDEX cores_term_set; ALTER TABLE cores DROP COLUMN term_set;
		DROP INDEX cores_seen_at; DROP TRIGGER cores_bucket_add; DROP TRIGGER cores_bucket_drop;
		DROP TRIGGER cores_bucket_move; DROP TABLE bucket_days; DROP TABLE search_names; DROP VIEW top_signatures; DROP INDEX cores_seen;
		DROP INDEX cores_cause_summary; ALTER TABLE cores DROP COLUMN file_mtime;
		DROP INDEX cores_cause_kind; ALTER TABLE cores DROP COLUMN cause_kind;
		ALTER TABLE cores DROP COLUMN cause_summary; DROP INDEX cores_arch;
		ALTER TABLE cores DROP COLUMN arch; ALTER TABLE frames DROP COLUMN role;
		ALTER TABLE task_frames DROP COLUMN role; ALTER TABLE cores DROP COLUMN caught_signal;
		ALTER TABLE cores DROP COLUMN caught_signal_name; ALTER TABLE cores DROP COLUMN caught_code;
		ALTER TABLE cores DROP COLUMN caught_code_name; ALTER TABLE cores DROP COLUMN caught_address;
		ALTER TABLE cores DROP COLUMN handled_by; ALTER TABLE cores DROP COLUMN handler_action;
		ALTER TABLE cores DROP COLUMN go_crash; ALTER TABLE cores DROP COLUMN go_signal;
		ALTER TABLE cores DROP COLUMN go_signal_name; ALTER TABLE cores DROP COLUMN go_message;
		PRAGMA user_version = 5;"
	"$ASYNCORE" ingest --db "$OLD" --quiet "$CORES/assert.core" >/dev/null 2>"$TMPD/old.err"
	same "cause-store-migrated" "$("$ASYNCORE" query --db "$OLD" --format csv \
		"select coalesce(cause_kind, 'NULL') from cores order by id" | tail -n +2 | tr '\n' ' ')" \
		"NULL assertion "
	same "cause-store-version" "$(sqlite3 "$OLD" "PRAGMA user_version")" \
		"$(sed -n 's/^#define REP_SCHEMA_VERSION \([0-9]*\)$/\1/p' "$ROOT/reports/store_sqlite.h")"
fi

# Damaged evidence: the exception's class overwritten, then the core cut
# where the exception header lies.  No exception is claimed: SIGABRT's kind.
if [ -f "$CORES/out_of_range.core" ]; then
	python3 - "$CORES/out_of_range.core" "$TMPD/noclass.core" "$TMPD/cut.core" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
cls = struct.pack('<Q', 0x474e5543432b2b00)
open(sys.argv[2], 'wb').write(data.replace(cls, b'\0' * 8))
at = data.find(cls)
open(sys.argv[3], 'wb').write(data[:at - 4096 if at > 4096 else at])
PY
	for v in noclass cut; do
		asy_json "$TMPD/$v.json" "$TMPD/$v.core"
		if [ "$ASY_JSON_OK" -ne 0 ] || [ "$ASY_RC" -gt 1 ]; then
			fail "cause-damaged-$v: asyncore exited $ASY_RC: $(head -2 "$TMPD/$v.json.err")"
			continue
		fi
		same "cause-damaged-$v" "$(jget "$TMPD/$v.json" "j['cause']['kind'], 'exception' in j['cause']")" \
			"('abort', False)"
	done
fi
