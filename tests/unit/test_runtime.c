/* Unit tests for runtime descriptions: what a description may say (each
 * refusal names the file, the JSON path and the problem), and how their
 * script and label frames reach the signature and the store (schema
 * migration included). */
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../analyzer/rtdesc.h"
#include "../../analyzer/signature.h"
#include "../../reports/store_sqlite.h"

#define UNIT_GROUP "runtime"
#include "unit.h"
#include "unit_sqlite.h"

static char dir[] = "/tmp/test_runtime.XXXXXX";

static const char valid[] =
	"{\"name\": \"toy\", \"comment\": \"ignored\","
	" \"root\": {\"symbol\": \"vm\", \"pointer\": true},"
	" \"stack\": {\"type\": \"stack\", \"array\": \"frames\", \"count\": \"n\", \"max\": \"0x100\"},"
	" \"entry\": {\"type\": \"frame\", \"fields\": {\"name\": \"name\", \"sp\": \"sp\","
	"   \"line\": {\"member\": \"info.line\", \"mask\": \"0xffff\"},"
	"   \"flags\": {\"member\": \"flags\", \"shift\": 4, \"as\": \"hex\"}}},"
	" \"kinds\": [{\"if\": {\"flags\": 1}, \"kind\": \"script\", \"name\": \"{name}:{line} {{x}}\","
	"              \"anchor\": \"sp\"},"
	"            {\"if\": {}, \"kind\": \"marker\", \"hidden\": true}],"
	" \"layout\": {\"frame\": {\"size\": 32, \"name\": [0, 8], \"sp\": [8, 8]}}}";

/* Write TEXT to DIR/NAME; its path in PATH. */
static void write_file(const char *name, const char *text, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* Load TEXT as a description; the error message (static) or NULL. */
static const char *load_text(struct an_runtimes *set, const char *text, bool if_new)
{
	static char msg[600];
	char path[512];
	write_file("d.json", text, path, sizeof(path));
	struct core_error *err = an_runtimes_load(set, path, if_new);
	if (!err)
		return NULL;
	snprintf(msg, sizeof(msg), "%s", err->message);
	core_error_destroy(err);
	return msg;
}

/* TEXT is refused with a message holding the file and WANT. */
static void refused(const char *name, const char *text, const char *want)
{
	struct an_runtimes *set = an_runtimes_create();
	const char *msg = load_text(set, text, false);
	bool ok = msg && strstr(msg, "/d.json: ") && strstr(msg, want) && !strchr(msg, '\n');
	if (!unit_check(name, ok, msg ? msg : "loaded", __FILE__, __LINE__))
		printf("    wanted: %s\n", want);
	an_runtimes_destroy(set);
}

/* BASE with FROM replaced by TO (static storage). */
static const char *replaced(const char *base, const char *from, const char *to)
{
	static char buf[4096];
	const char *at = strstr(base, from);
	if (!at)
		return "(variant not found)";
	snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(at - base), base, to, at + strlen(from));
	return buf;
}

/* VALID with FROM replaced by TO. */
static const char *variant(const char *from, const char *to)
{
	return replaced(valid, from, to);
}

static void test_valid(void)
{
	struct an_runtimes *set = an_runtimes_create();
	const char *msg = load_text(set, valid, false);
	CHECK("a valid description loads", msg == NULL && set->n == 1);
	if (set->n != 1) {
		printf("    %s\n", msg ? msg : "");
		an_runtimes_destroy(set);
		return;
	}
	const struct an_rt_desc *d = &set->v[0];
	CHECK_STR("name", d->name, "toy");
	CHECK("root", d->root.kind == AN_RT_ROOT_SYMBOL && d->root.pointer);
	CHECK("array stack, max in hex", d->stack.kind == AN_RT_STACK_ARRAY && d->stack.max == 256);
	CHECK("four fields", d->entry.nfields == 4);
	CHECK_STR("nested member path", d->entry.fields[2].member.path, "info.line");
	CHECK("a mask makes a number", d->entry.fields[2].mask == 0xffff &&
				       d->entry.fields[2].as == AN_RT_AS_NUMBER);
	CHECK("shift and as", d->entry.fields[3].shift == 4 && d->entry.fields[3].as == AN_RT_AS_HEX);
	CHECK("a plain member is a string", d->entry.fields[0].as == AN_RT_AS_STRING);
	CHECK("template pieces", d->kinds[0].name.npieces == 4 && d->kinds[0].name.pieces[1].text &&
					 strcmp(d->kinds[0].name.pieces[1].text, ":") == 0 &&
					 d->kinds[0].name.pieces[3].text &&
					 strcmp(d->kinds[0].name.pieces[3].text, " {x}") == 0);
	CHECK("anchor field", d->kinds[0].anchor == 1);
	CHECK("an empty if matches always", d->kinds[1].match.nconds == 0 &&
					    d->kinds[1].show == AN_RT_SHOW_HIDDEN);
	CHECK("layout", an_rt_layout_type(d, "frame") && an_rt_layout_type(d, "frame")->size == 32 &&
				an_rt_layout_type(d, "stack") == NULL);
	CHECK_STR("where of a member", d->stack.count.where, "$.stack.count");
	msg = load_text(set, valid, false);
	CHECK("a second description of one name is refused", msg && strstr(msg, "$.name: \"toy\""));
	msg = load_text(set, valid, true);
	CHECK("on the search path it is skipped", msg == NULL && set->n == 1);
	an_runtimes_destroy(set);
}

static void test_refused(void)
{
	refused("bad JSON", "{\"name\": ", "line 1, column");
	refused("not an object", "[1]", "$: an object is expected");
	refused("duplicate key", "{\"name\": \"a\", \"name\": \"b\"}", "duplicate object key");
	refused("unknown key at the top", variant("\"comment\"", "\"comments\""),
		"$.comments: unknown key");
	refused("unknown key in the stack", variant("\"max\"", "\"maximum\""),
		"$.stack.maximum: unknown key");
	refused("a kind without if", variant("{\"if\": {}, ", "{"), "$.kinds[1]: \"if\" is missing");
	refused("if names no field", variant("{\"flags\": 1}", "{\"flag\": 1}"),
		"$.kinds[0].if.flag: no field of entry.fields is called so");
	refused("template names no field", variant("{name}:", "{nme}:"),
		"$.kinds[0].name: {nme} is no field of entry.fields");
	refused("unclosed brace", variant("{name}:", "{name:"), "$.kinds[0].name: an unclosed '{'");
	refused("a shown kind of no known sort", variant("\"marker\", \"hidden\": true", "\"marker\""),
		"$.kinds[1].kind: a shown kind is \"script\" or \"label\"");
	refused("a shown kind without name",
		variant("\"name\": \"{name}:{line} {{x}}\",", ""), "$.kinds[0]: a shown kind needs \"name\"");
	refused("no placement", variant("\"anchor\": \"sp\"", "\"detail\": \"x\""),
		"$: entries need a place");
	refused("two roots", variant("\"symbol\": \"vm\"", "\"symbol\": \"vm\", \"tls\": \"t\""),
		"$.root: exactly one of");
	refused("array and list", variant("\"count\": \"n\"", "\"count\": \"n\", \"top\": \"t\""),
		"$.stack: an array stack");
	refused("a number that is none", variant("\"0x100\"", "\"0xzz\""),
		"$.stack.max: \"0xzz\" is not a number");
	refused("a negative number", variant("\"shift\": 4", "\"shift\": -4"),
		"$.entry.fields.flags.shift");
	refused("max beyond the limit", variant("\"0x100\"", "\"0x10000000\""), "is larger than");
	refused("layout member past the size", variant("\"sp\": [8, 8]", "\"sp\": [28, 8]"),
		"$.layout.frame.sp: the member ends past the type's size 32");
	refused("layout member not a pair", variant("\"sp\": [8, 8]", "\"sp\": 8"),
		"$.layout.frame.sp: [offset, size] or [offset, size, \"TYPE POINTED AT\"] is expected");
	refused("unknown as", variant("\"as\": \"hex\"", "\"as\": \"octal\""),
		"$.entry.fields.flags.as");
	refused("a name with a space", variant("\"toy\"", "\"t y\""), "$.name: a name is");
	refused("an empty string", variant("\"vm\"", "\"\""), "$.root.symbol: a non-empty string");
	refused("no fields", "{\"name\": \"a\", \"root\": {\"symbol\": \"s\"}, \"stack\": {\"type\":"
		" \"t\", \"top\": \"a\", \"next\": \"b\"}, \"entry\": {\"type\": \"e\", \"fields\": {}}}",
		"$.entry.fields: an object naming at least one field");

	char path[512], *big = malloc((1u << 20) + 16);
	if (big) {
		memset(big, ' ', (1u << 20) + 8);
		big[(1u << 20) + 8] = '\0';
		write_file("big.json", big, path, sizeof(path));
		free(big);
		struct an_runtimes *set = an_runtimes_create();
		struct core_error *err = an_runtimes_load(set, path, false);
		CHECK("a file over 1 MiB is refused", err && strstr(err->message, "at most"));
		core_error_destroy(err);
		err = an_runtimes_load(set, "/nonexistent/d.json", false);
		CHECK("a missing file is refused", err && strstr(err->message, "/nonexistent/d.json"));
		core_error_destroy(err);
		an_runtimes_destroy(set);
	}
}

/* A crashing thread: natives without names (an engine) around script frames. */
static struct analysis *runtime_analysis(void)
{
	static const struct { enum an_frame_kind kind; const char *function; } frames[] = {
		{AN_FRAME_NATIVE, NULL}, {AN_FRAME_NATIVE, NULL}, {AN_FRAME_SCRIPT, "inner (t.js:3:5)"},
		{AN_FRAME_LABEL, "callback"}, {AN_FRAME_NATIVE, "callback(int)"},
		{AN_FRAME_SCRIPT, "outer (t.js:9:1)"}, {AN_FRAME_NATIVE, "main"},
	};
	size_t n = sizeof(frames) / sizeof(frames[0]);
	struct analysis *an = an_analysis_create();
	an->core_path = strdup("/tmp/core.js");
	an->core_fingerprint = strdup("0abc");
	an->has_signal = true;
	an->signo = SIGSEGV;
	an->signal_name = "SIGSEGV";
	an->nthreads = 1;
	an->threads = calloc(1, sizeof(*an->threads));
	an->threads[0].crashing = true;
	an->threads[0].frames = calloc(n, sizeof(struct an_frame));
	an->threads[0].nframes = n;
	for (size_t i = 0; i < n; i++) {
		struct an_frame *f = &an->threads[0].frames[i];
		f->kind = frames[i].kind;
		f->function = frames[i].function ? strdup(frames[i].function) : NULL;
		f->pc = AN_FRAME_IS_RUNTIME(f) ? 0 : 0x7f0000001000 + i;
		if (AN_FRAME_IS_RUNTIME(f)) {
			f->runtime = strdup("js");
			f->detail = strdup("JSScript 0x1234");
		}
	}
	an_signature_compute(an, NULL);
	return an;
}

/* The newest schema a plain connection can build: 12's migration needs
 * the store's own SQL function (asyncore_term_set). */
#define OLDER_SCHEMA 11

/* A database at schema OLDER_SCHEMA, with one native frame. */
static bool older_database(const char *db)
{
	sqlite3 *h;
	bool ok = sqlite3_open(db, &h) == SQLITE_OK;
	for (int v = 1; ok && v <= OLDER_SCHEMA; v++)
		ok = sqlite3_exec(h, rep_store_migration(v), NULL, NULL, NULL) == SQLITE_OK;
	char pragma[64];
	snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", OLDER_SCHEMA);
	ok = ok && sqlite3_exec(h, pragma, NULL, NULL, NULL) == SQLITE_OK &&
	     sqlite3_exec(h, "INSERT INTO cores (fingerprint, path, size, analysed_at, analyzer_version,"
			  " nthreads, nframes, nwarnings) VALUES ('old', '/tmp/old', 1, 'now', 'x', 1, 1, 0);"
			  "INSERT INTO threads (core_id, idx, tid, crashing, nframes) VALUES (1, 0, 7, 1, 1);"
			  "INSERT INTO frames (core_id, thread_idx, idx, kind, pc, activation, function,"
			  " inlined, inline_depth, seam, tailcall) VALUES (1, 0, 0, 'native', 4096, 1,"
			  " 'old_function', 0, 0, 0, 0)", NULL, NULL, NULL) == SQLITE_OK;
	sqlite3_close(h);
	return ok;
}

/* A suspended asyncio task of AN: a coroutine's script frame over a label. */
static void add_script_task(struct analysis *an)
{
	an->tasks = calloc(1, sizeof(*an->tasks));
	an->ntasks = 1;
	struct an_task *t = &an->tasks[0];
	t->runtime = "asyncio";
	t->id = t->address = 0x7f0000002000;
	t->state = AN_TASK_SUSPENDED;
	t->name = strdup("Task-1");
	t->frames = calloc(2, sizeof(*t->frames));
	t->nframes = 2;
	t->frames[0].kind = AN_FRAME_SCRIPT;
	t->frames[0].function = strdup("consumer");
	t->frames[0].file = strdup("app.py");
	t->frames[0].line = 7;
	t->frames[1].kind = AN_FRAME_LABEL;
	t->frames[1].function = strdup("<awaiting>");
	for (size_t i = 0; i < 2; i++) {
		t->frames[i].runtime = strdup("cpython");
		t->frames[i].detail = strdup("PyFrameObject 0x1234");
	}
}

static void test_signature_and_store(void)
{
	struct analysis *an = runtime_analysis();
	add_script_task(an);
	CHECK_STR("signature: script frames, not ?? frames", an->signature,
		  "SIGSEGV: inner < callback < outer < main");
	char db[512], why[512];
	snprintf(db, sizeof(db), "%s/old.db", dir);
	CHECK("an older database is built", older_database(db));
	struct rep_store *st = NULL;
	CHECK("it is migrated", rep_store_open(db, &st, why, sizeof(why)) == 0);
	if (!st) {
		printf("    %s\n", why);
		an_analysis_destroy(an);
		return;
	}
	CHECK("script and label frames are stored",
	      rep_store_write(st, an, why, sizeof(why)) == REP_WRITE_STORED);
	rep_store_close(st);
	an_analysis_destroy(an);
	sqlite3 *h;
	sqlite3_open(db, &h);
	CHECK("the older frame survives the rebuild",
	      unit_sql_long(h, "SELECT count(*) FROM frames WHERE function = 'old_function' AND pc = 4096 "
		       "AND kind = 'native' AND runtime IS NULL") == 1);
	CHECK("script frames: no pc, runtime and detail",
	      unit_sql_long(h, "SELECT count(*) FROM frames WHERE kind = 'script' AND pc IS NULL AND "
		       "runtime = 'js' AND detail = 'JSScript 0x1234'") == 2);
	CHECK("label frame", unit_sql_long(h, "SELECT count(*) FROM frames WHERE kind = 'label'") == 1);
	CHECK("a task's script and label frames: no pc, runtime and detail",
	      unit_sql_long(h, "SELECT count(*) FROM task_frames WHERE kind IN ('script', 'label') AND "
			       "pc IS NULL AND runtime = 'cpython' AND detail = 'PyFrameObject 0x1234'") == 2);
	CHECK("the task's name", unit_sql_long(h, "SELECT count(*) FROM tasks WHERE name = 'Task-1'") == 1);
	CHECK("crash_stacks shows them, pc NULL",
	      unit_sql_long(h, "SELECT count(*) FROM crash_stacks WHERE runtime = 'js' AND "
			       "pc IS NULL") == 3);
	CHECK("crash_stacks: native pc in hex",
	      unit_sql_long(h, "SELECT count(*) FROM crash_stacks WHERE pc = '0x1000'") == 1);
	CHECK("the kind is still checked",
	      sqlite3_exec(h, "INSERT INTO frames (core_id, thread_idx, idx, kind, activation, inlined,"
			      " inline_depth, seam) VALUES (1, 0, 9, 'bogus', 0, 0, 0, 0)", NULL, NULL,
			   NULL) != SQLITE_OK);
	CHECK("the function index is back",
	      unit_sql_long(h, "SELECT count(*) FROM sqlite_schema WHERE name = 'frames_function'") == 1);
	sqlite3_close(h);
}

/* Roots through lists, members through pointers, counted strings and
 * decoders (the shape of share/asyncore/runtimes/cpython-3.11.json). */
static const char listed[] =
	"{\"name\": \"py\","
	" \"root\": {\"symbol\": \"rt\", \"require\": {\"symbol\": \"ver\", \"mask\": \"0xff00\","
	"   \"equals\": \"0x0b00\"},"
	"   \"lists\": [{\"type\": \"runtime\", \"head\": \"interps.head\", \"next\": \"next\"},"
	"             {\"type\": \"interp\", \"head\": \"threads\", \"next\": \"next\"}],"
	"   \"thread\": \"tid\"},"
	" \"stack\": {\"type\": \"tstate\", \"top\": \"cframe->top\", \"next\": \"prev\"},"
	" \"strings\": {\"str\": {\"type\": \"strobj\", \"fields\": {\"n\": \"length\", \"st\": \"state\","
	"     \"w\": {\"member\": \"state\", \"mask\": \"0x1c\", \"shift\": 2}},"
	"   \"forms\": [{\"if\": {\"st\": \"0x60\"}, \"length\": \"n\", \"header\": \"strobj\"},"
	"             {\"if\": {}, \"length\": \"n\", \"data\": \"chars\", \"width\": \"w\","
	"              \"units\": \"code-points\"}]}},"
	" \"entry\": {\"type\": \"frame\", \"fields\": {"
	"   \"name\": {\"member\": \"code->name\", \"as\": \"str\"},"
	"   \"table\": {\"member\": \"code->lines\", \"as\": \"str\"},"
	"   \"first\": {\"member\": \"code->first\", \"as\": \"number\"},"
	"   \"at\": {\"member\": \"instr\", \"as\": \"hex\"},"
	"   \"start\": {\"member\": \"code->insns\", \"address\": true},"
	"   \"line\": {\"decoder\": \"cpython-3.11-line\", \"args\": {\"table\": \"table\","
	"     \"first_line\": \"first\", \"instruction\": \"at\", \"code\": \"start\"}},"
	"   \"base\": {\"decoder\": \"basename\", \"args\": {\"path\": \"name\"}},"
	"   \"entry\": \"is_entry\"}},"
	" \"kinds\": [{\"if\": {}, \"kind\": \"script\", \"name\": \"{name} ({base}:{line})\"}],"
	" \"attach\": {\"function\": \"eval\", \"boundary\": {\"if\": {\"entry\": 1}}},"
	" \"layout\": {\"tstate\": {\"cframe\": [8, 8, \"cframe_t\"]}}}";

/* LISTED with FROM replaced by TO. */
static const char *listed_variant(const char *from, const char *to)
{
	return replaced(listed, from, to);
}

static void test_listed(void)
{
	struct an_runtimes *set = an_runtimes_create();
	const char *msg = load_text(set, listed, false);
	CHECK_STR("lists, pointers, strings and decoders load", msg ? msg : "loaded", "loaded");
	const struct an_rt_desc *d = set && set->n ? &set->v[0] : NULL;
	CHECK("two root lists, a thread member, a requirement",
	      d && d->root.nlists == 2 && strcmp(d->root.thread.path, "tid") == 0 &&
	      d->root.require.mask == 0xff00 && d->root.require.equals == 0x0b00 &&
	      d->root.require.size == 8);
	CHECK("a string kind with two forms", d && d->nstrings == 1 && d->strings[0].nforms == 2 &&
	      d->strings[0].forms[0].width == 1 && !d->strings[0].forms[0].code_points &&
	      d->strings[0].forms[1].code_points && d->strings[0].forms[1].width_field == 2);
	CHECK("fields as a string kind, an address, decoders",
	      d && d->entry.fields[0].as == AN_RT_AS_COUNTED && d->entry.fields[4].address &&
	      d->entry.fields[5].decoder == AN_RT_DECODER_CPYTHON311_LINE &&
	      d->entry.fields[5].args[3] == 4 && d->entry.fields[6].decoder == AN_RT_DECODER_BASENAME);
	CHECK("a layout member says what it points at",
	      d && strcmp(an_rt_layout_type(d, "tstate")->members[0].points_to, "cframe_t") == 0);
	an_runtimes_destroy(set);

	refused("a member path with a bad arrow", listed_variant("cframe->top", "cframe-top"),
		"$.stack.top: a member is names joined by \".\" or \"->\"");
	refused("too many arrows", listed_variant("cframe->top", "a->b->c->d->e->f"),
		"(at most 4 arrows)");
	refused("an unknown decoder", listed_variant("\"basename\", \"args\"", "\"dirname\", \"args\""),
		"$.entry.fields.base.decoder: \"dirname\" is no decoder");
	refused("a decoder's missing argument", listed_variant("\"code\": \"start\"", "\"cod\": \"start\""),
		"$.entry.fields.line.args.code: is missing");
	refused("a decoder's argument of the wrong sort", listed_variant("\"first_line\": \"first\"",
									 "\"first_line\": \"name\""),
		"$.entry.fields.line.args.first_line: the field \"name\" is a string, not a number");
	refused("a decoder's result in an if", listed_variant("{\"entry\": 1}", "{\"line\": 1}"),
		"$.attach.boundary.if.line: a decoder's result is not tested");
	refused("an unknown string kind", listed_variant("\"as\": \"str\"}", "\"as\": \"text\"}"),
		"$.entry.fields.name.as: \"string\", \"number\", \"hex\" or the name of one of");
	refused("a form with both header and data",
		listed_variant("\"header\": \"strobj\"", "\"header\": \"strobj\", \"data\": \"chars\""),
		"$.strings.str.forms[0]: one of \"header\"");
	refused("wide characters as UTF-8", listed_variant("\"units\": \"code-points\"", "\"units\": \"utf-8\""),
		"$.strings.str.forms[1]: characters wider than a byte need \"units\": \"code-points\"");
	refused("a width that is no field", listed_variant("\"width\": \"w\"", "\"width\": \"x\""),
		"$.strings.str.forms[1].width: no field of strings.str.fields is called so");
	refused("a width of 3", listed_variant("\"width\": \"w\"", "\"width\": 3"),
		"$.strings.str.forms[1].width: 1, 2, 4 or the name of a field is expected");
	refused("an address shown as a string",
		listed_variant("\"address\": true}", "\"address\": true, \"as\": \"string\"}"),
		"$.entry.fields.start.as: an address is shown as \"number\" or \"hex\"");
	refused("a requirement without equals", listed_variant(",   \"equals\": \"0x0b00\"", ""),
		"$.root.require: \"equals\" is missing");
	refused("a list that is no object",
		listed_variant("{\"type\": \"runtime\", \"head\": \"interps.head\", \"next\": \"next\"}", "3"),
		"$.root.lists[0]: an object is expected");
	refused("a list without next", listed_variant(", \"next\": \"next\"}]", "}]"),
		"$.root.lists[1]: \"next\" is missing");
}

/* TEXT (a buffer of CAP bytes) with FROM replaced by TO. */
static void replace_in(char *text, size_t cap, const char *from, const char *to)
{
	const char *r = replaced(text, from, to);
	snprintf(text, cap, "%s", r);
}

/* What 3.8-3.10 and 3.13 need: a runtime name, a module requirement, a
 * pthread_t thread member, the 3.10 and lnotab decoders, an offsets block. */
static void test_versions(void)
{
	static char v[4096];
	snprintf(v, sizeof(v), "%s", listed);
	replace_in(v, sizeof(v), "{\"symbol\": \"ver\", \"mask\": \"0xff00\",   \"equals\": \"0x0b00\"}",
		   "{\"module\": \"python3.10\"}");
	replace_in(v, sizeof(v), "\"thread\": \"tid\"}", "\"thread\": \"tid\", \"thread_is\": \"pthread\"}");
	replace_in(v, sizeof(v), "\"cpython-3.11-line\", \"args\": {\"table\": \"table\","
		   "     \"first_line\": \"first\", \"instruction\": \"at\", \"code\": \"start\"}",
		   "\"cpython-3.10-line\", \"args\": {\"table\": \"table\","
		   "     \"first_line\": \"first\", \"instruction\": \"at\"}");
	replace_in(v, sizeof(v), "{\"name\": \"py\",", "{\"name\": \"py-3.10\", \"runtime\": \"py\","
		   " \"offsets\": {\"symbol\": \"rt\", \"cookie\": \"xdebugpy\","
		   "   \"members\": {\"tstate\": {\"tid\": 200, \"size\": \"0x98\"}}},");
	struct an_runtimes *set = an_runtimes_create();
	const char *msg = load_text(set, v, false);
	CHECK_STR("a 3.10-like description loads", msg ? msg : "loaded", "loaded");
	const struct an_rt_desc *d = set && set->n ? &set->v[0] : NULL;
	CHECK("its runtime is not its name; the layout first by default", d &&
	      strcmp(d->name, "py-3.10") == 0 && strcmp(d->runtime, "py") == 0 && !d->dwarf_first);
	CHECK("a module requirement, a pthread_t thread member",
	      d && d->root.require.module && strcmp(d->root.require.module, "python3.10") == 0 &&
	      !d->root.require.symbol && d->root.thread_is == AN_RT_THREAD_PTHREAD);
	CHECK("the 3.10 line decoder, three arguments",
	      d && d->entry.fields[5].decoder == AN_RT_DECODER_CPYTHON310_LINE &&
	      d->entry.fields[5].args[2] == 3 && d->entry.fields[5].args[3] == AN_RT_NONE);
	const struct an_rt_layout_type *t = d ? an_rt_offsets_type(d, "tstate") : NULL;
	CHECK("an offsets block: where a member's offset and the type's size are",
	      t && t->nmembers == 1 && t->members[0].offset == 200 && t->has_size && t->size == 0x98 &&
	      strcmp(d->offsets.cookie, "xdebugpy") == 0);
	an_runtimes_destroy(set);
	set = an_runtimes_create();
	replace_in(v, sizeof(v), "{\"name\": \"py-3.10\",", "{\"name\": \"py-3.10\", \"prefer\": \"dwarf\",");
	msg = load_text(set, v, false);
	CHECK("\"prefer\": \"dwarf\"", !msg && set->n == 1 && set->v[0].dwarf_first);
	an_runtimes_destroy(set);
	set = an_runtimes_create();
	CHECK_STR("a description's runtime defaults to its name",
		  (msg = load_text(set, listed, false)) ? msg : set->v[0].runtime, "py");
	an_runtimes_destroy(set);

	refused("a thread that is neither a tid nor a pthread",
		replaced(v, "\"thread_is\": \"pthread\"", "\"thread_is\": \"lwp\""),
		"$.root.thread_is: \"tid\" or \"pthread\" is expected");
	refused("a module requirement with a symbol",
		replaced(v, "{\"module\": \"python3.10\"}", "{\"module\": \"python3.10\", \"symbol\": \"x\"}"),
		"$.root.require.symbol: unknown key");
	refused("lnotab's decoder takes an offset",
		replaced(v, "\"cpython-3.10-line\"", "\"cpython-lnotab-line\""),
		"$.entry.fields.line.args.offset: is missing");
	refused("an offset that is not 8-aligned", replaced(v, "\"tid\": 200", "\"tid\": 201"),
		"$.offsets.members.tstate.tid: a multiple of 8 below");
	refused("an offsets block without a cookie", replaced(v, " \"cookie\": \"xdebugpy\",", ""),
		"$.offsets: \"cookie\" is missing");
	refused("prefer what is neither", replaced(v, "\"prefer\": \"dwarf\"", "\"prefer\": \"symtab\""),
		"$.prefer: \"layout\" or \"dwarf\" is expected");
	refused("a runtime that is no name", replaced(v, "\"runtime\": \"py\"", "\"runtime\": \"p y\""),
		"$.runtime: a runtime is 1 to");
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	test_valid();
	test_refused();
	test_listed();
	test_versions();
	test_signature_and_store();
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK("temporary directory removed", system(cmd) == 0);
	return unit_exit();
}
