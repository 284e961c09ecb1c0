/* Unit tests for reports/bytes: strings from a core made valid UTF-8 for
 * JSON and the store, and escaped for a terminal; and every writer (text,
 * JSON, HTML) over an analysis whose strings are hostile bytes. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../reports/bytes.h"
#include "../../reports/report.h"

#define UNIT_GROUP "bytes"
#include "unit.h"

/* rep_utf8() of IN, as a string the test owns. */
static char *valid(const char *in)
{
	char *owned;
	const char *v = rep_utf8(in, &owned);
	char *copy = v ? strdup(v) : NULL;
	if (owned && owned != v)
		copy = NULL;   /* *OWNED must be what was returned */
	free(owned);
	return copy;
}

static void test_utf8(void)
{
	static const struct {
		const char *name, *in, *want;
	} cases[] = {
		{"ascii unchanged", "/usr/bin/prog", "/usr/bin/prog"},
		{"valid multibyte unchanged", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x92\xa5", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x92\xa5"},
		{"0xff replaced", "/a\xff/b", "/a\xef\xbf\xbd/b"},
		{"each invalid byte replaced", "\xfe\xff", "\xef\xbf\xbd\xef\xbf\xbd"},
		{"overlong '/' replaced", "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},
		{"surrogate replaced", "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
		{"above U+10FFFF replaced", "\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
		{"sequence cut by the end replaced", "x\xe2\x82", "x\xef\xbf\xbd\xef\xbf\xbd"},
		{"lone continuation replaced", "\x80y", "\xef\xbf\xbdy"},
		{"control characters kept (JSON escapes them)", "a\x1b[31mb", "a\x1b[31mb"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = valid(cases[i].in);
		CHECK_STR(cases[i].name, got, cases[i].want);
		free(got);
	}
	char *owned = (char *)1;
	CHECK("NULL stays NULL", rep_utf8(NULL, &owned) == NULL && owned == NULL);
	const char *ok = "plain";
	CHECK("valid input is returned as is, nothing owned",
	      rep_utf8(ok, &owned) == ok && owned == NULL);
}

static void test_json(void)
{
	json_t *v = rep_json_text("exe\xff\x1b");
	char *text = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
	CHECK_STR("json: invalid byte as U+FFFD, ESC as \\u001B", text, "\"exe\xef\xbf\xbd\\u001B\"");
	free(text);
	json_decref(v);
	v = rep_json_text(NULL);
	CHECK("json: NULL is null", v && json_is_null(v));
	json_decref(v);
}

static void test_escape(void)
{
	static const struct {
		const char *name, *in, *want;
	} cases[] = {
		{"plain text as is", "main (+0x10) at a.c:3", "main (+0x10) at a.c:3"},
		{"UTF-8 text as is", "caf\xc3\xa9", "caf\xc3\xa9"},
		{"escape sequence", "a\x1b[2Jb", "a\\x1b[2Jb"},
		{"invalid byte", "/a\xff/b", "/a\\xff/b"},
		{"newline, tab, return", "1\n2\t3\r", "1\\n2\\t3\\r"},
		{"backslash doubled", "a\\xff", "a\\\\xff"},
		{"DEL", "\x7f", "\\x7f"},
		{"C1 CSI", "\xc2\x9b" "31m", "\\u009b31m"},
		{"bidi override", "abc\xe2\x80\xae" "def", "abc\\u202edef"},
		{"cut sequence", "\xe2\x82", "\\xe2\\x82"},
	};
	struct rep_escaper e = {0};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_STR(cases[i].name, rep_escape(&e, cases[i].in), cases[i].want);
	const char *clean = "nothing to do";
	CHECK("clean text is returned as is", rep_escape(&e, clean) == clean);
	CHECK_STR("NULL prints as empty", rep_escape(&e, NULL), "");
	CHECK("no failure", !e.failed);
	rep_escaper_clear(&e);
	CHECK("cleared", e.n == 0 && e.held == NULL);
}

/* Bytes a crafted core may hold: an invalid byte, a terminal escape
 * sequence, a C1 CSI, markup. */
#define HOSTILE "x\xff\x1b[2J\xc2\x9b" "31m<b>&"

static void hostile_frame(struct an_frame *f, enum an_frame_kind kind)
{
	f->kind = kind;
	f->function = strdup(HOSTILE);
	f->module = strdup("/lib/" HOSTILE ".so");
	f->file = strdup(HOSTILE ".c");
	f->line = 3;
	if (kind == AN_FRAME_NATIVE) {
		f->has_args = true;
		f->nargs = 1;
		f->args = an_args_pack(&(struct an_arg){HOSTILE, "char *", "0x10 \"" HOSTILE "\"",
							HOSTILE, false}, 1);
	} else {
		f->runtime = strdup(HOSTILE);   /* a description's name */
		f->detail = strdup(HOSTILE);
	}
}

/* A crashing thread with a native and a script frame running a bthread,
 * whose function name and unwind error are hostile, a recorder event and a
 * warning. */
static struct analysis *hostile_analysis(void)
{
	struct analysis *an = an_analysis_create();
	an->core_path = strdup("/cores/" HOSTILE);
	an->executable = strdup("/bin/" HOSTILE);
	an->abort_message = strdup(HOSTILE);
	an->has_signal = true;
	an->signo = 11;
	an->signal_name = "SIGSEGV";
	an->crashing_tid = 7;
	an->nthreads = 1;
	an->threads = calloc(1, sizeof(*an->threads));
	an->threads[0].tid = 7;
	an->threads[0].crashing = true;
	an->threads[0].nframes = 2;
	an->threads[0].frames = calloc(2, sizeof(struct an_frame));
	hostile_frame(&an->threads[0].frames[0], AN_FRAME_NATIVE);
	hostile_frame(&an->threads[0].frames[1], AN_FRAME_SCRIPT);
	an->threads[0].unwind_error = strdup(HOSTILE);
	an->ntasks = 2;
	an->tasks = calloc(2, sizeof(*an->tasks));
	for (size_t i = 0; i < 2; i++) {
		struct an_task *t = &an->tasks[i];
		t->runtime = "bthread";
		t->id = 0x100000001 + i;
		t->state = i ? AN_TASK_SUSPENDED : AN_TASK_RUNNING;
		t->has_tid = !i;
		t->tid = 7;
		t->fn = strdup(HOSTILE);
		t->unwind_error = strdup(HOSTILE);
		t->nframes = 1;
		t->frames = calloc(1, sizeof(struct an_frame));
		hostile_frame(&t->frames[0], AN_FRAME_NATIVE);
	}
	an->nrecorders = 1;
	an->recorders = calloc(1, sizeof(*an->recorders));
	an->recorders[0].name = strdup(HOSTILE);
	an->recorders[0].nevents = 1;
	an->recorders[0].events = calloc(1, sizeof(struct an_event));
	an->recorders[0].events[0].message = strdup(HOSTILE);
	an->recorders[0].events[0].format = strdup(HOSTILE);
	an->ntimeline = 1;
	an->timeline = calloc(1, sizeof(*an->timeline));
	an->nwarnings = 1;
	an->warnings = calloc(1, sizeof(char *));
	an->warnings[0] = strdup("runtime " HOSTILE ": " HOSTILE);
	return an;
}

/* TEXT (LEN bytes) is valid UTF-8 with no control character but newlines
 * (and tabs when TABS), no C1 control. */
static bool clean_text(const char *text, size_t len, bool tabs)
{
	if (!text || strlen(text) != len)
		return false;
	char *owned;
	const char *valid = rep_utf8(text, &owned);
	bool ok = valid == text;
	for (const unsigned char *p = (const unsigned char *)text; ok && *p; p++)
		ok = !((*p < 0x20 && *p != '\n' && !(tabs && *p == '\t')) || *p == 0x7f ||
		       (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f));
	free(owned);
	return ok;
}

/* The output of WRITER (0: text, 1: JSON, 2: HTML) over AN into *TEXT,
 * with source lines when SOURCE. */
static int write_source_with(int writer, const struct analysis *an, bool source, char **text, size_t *len)
{
	FILE *f = open_memstream(text, len);
	int rc = -1;
	if (!f)
		return -1;
	if (writer == 0) {
		struct rep_text_options o = {.all_threads = true, .recorder_tail = 10, .source = source};
		rc = rep_text_write(f, an, &o);
		rep_warnings_write(f, an);
	} else if (writer == 1) {
		rc = rep_json_write(f, an, &(struct rep_json_options){.all_threads = true});
	} else {
		rc = rep_html_write(f, an, &(struct rep_html_options){.all_threads = true, .source = source});
	}
	return fclose(f) == 0 ? rc : -1;
}

static int write_with(int writer, const struct analysis *an, char **text, size_t *len)
{
	return write_source_with(writer, an, false, text, len);
}

/* A source file of hostile lines, named by the first frame: the text and
 * HTML reports show its lines escaped. */
static void test_source_lines(void)
{
	char path[] = "/tmp/test_bytes_src.XXXXXX";
	int fd = mkstemp(path);
	FILE *src = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!src) {
		CHECK("source: a scratch file", false);
		return;
	}
	fputs("one " HOSTILE "\ntwo\nthree " HOSTILE "\n", src);
	fclose(src);
	struct analysis *an = hostile_analysis();
	struct an_frame *f = &an->threads[0].frames[0];
	free(f->file);
	f->file = strdup(path);
	f->line = 3;
	char *text = NULL;
	size_t len = 0;
	CHECK("source: text written", write_source_with(0, an, true, &text, &len) == 0);
	CHECK("source: text clean", clean_text(text, len, true));
	CHECK("source: text shows the frame's line escaped, under it",
	      text && strstr(text, "\n    3\tthree x\\xff\\x1b[2J\\u009b31m<b>&\n") != NULL);
	free(text);
	text = NULL;
	CHECK("source: html written", write_source_with(2, an, true, &text, &len) == 0);
	CHECK("source: html clean", clean_text(text, len, true));
	CHECK("source: html marks the frame's line, escaped, after the two before it",
	      text && strstr(text, "<span class=\"ln\">1</span><code>one x\xef\xbf\xbd\xef\xbf\xbd") &&
	      strstr(text, "<div class=\"sl cur\"><span class=\"ln\">3</span><code>three "
			   "x\xef\xbf\xbd\xef\xbf\xbd[2J\xef\xbf\xbd" "31m&lt;b&gt;&amp;</code>") != NULL);
	free(text);
	text = NULL;
	CHECK("source: none without the option", write_with(2, an, &text, &len) == 0 && text &&
	      !strstr(text, "class=\"context\""));
	free(text);
	an_analysis_destroy(an);
	unlink(path);
}

static void test_writers(void)
{
	struct analysis *an = hostile_analysis();
	char *text = NULL;
	size_t len = 0;
	CHECK("writers: text written", write_with(0, an, &text, &len) == 0);
	CHECK("writers: text clean (escaped, no raw control character)", clean_text(text, len, false));
	CHECK("writers: text escapes each hostile string (frame, args, runtime, task, event, warning)",
	      text && strstr(text, "x\\xff\\x1b[2J\\u009b31m<b>&") != NULL &&
	      strstr(text, "[x\\xff\\x1b[2J\\u009b31m<b>&] x\\xff") != NULL &&
	      strstr(text, "running bthread 0x100000001 (x\\xff") != NULL &&
	      strstr(text, "asyncore: warning: runtime x\\xff") != NULL);
	free(text);
	text = NULL;
	CHECK("writers: json written", write_with(1, an, &text, &len) == 0);
	json_error_t err;
	json_t *doc = text ? json_loadb(text, len, 0, &err) : NULL;
	json_t *task = json_array_get(json_object_get(doc, "tasks"), 0);
	json_t *script = json_array_get(json_object_get(json_array_get(json_object_get(doc, "threads"), 0),
						       "frames"), 1);
	const char *want = "x\xef\xbf\xbd\x1b[2J\xc2\x9b" "31m<b>&";
	CHECK_STR("writers: json task fn with U+FFFD", json_string_value(json_object_get(task, "fn")), want);
	CHECK_STR("writers: json runtime frame's runtime with U+FFFD",
		  json_string_value(json_object_get(script, "runtime")), want);
	CHECK_STR("writers: json warning with U+FFFD",
		  json_string_value(json_array_get(json_object_get(doc, "warnings"), 0)),
		  "runtime x\xef\xbf\xbd\x1b[2J\xc2\x9b" "31m<b>&: x\xef\xbf\xbd\x1b[2J\xc2\x9b" "31m<b>&");
	json_decref(doc);
	free(text);
	text = NULL;
	CHECK("writers: html written", write_with(2, an, &text, &len) == 0);
	CHECK("writers: html clean (UTF-8, no ESC, no C1)", clean_text(text, len, true));
	CHECK("writers: html escapes the markup", text && !strstr(text, "<b>&") &&
	      strstr(text, "&lt;b&gt;&amp;") != NULL);
	free(text);
	an_analysis_destroy(an);
}

int main(void)
{
	test_utf8();
	test_json();
	test_escape();
	test_writers();
	test_source_lines();
	return unit_exit();
}
