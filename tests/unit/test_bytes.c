/* Unit tests for reports/bytes: strings from a core made valid UTF-8 for
 * JSON and the store, and escaped for a terminal. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../../reports/bytes.h"

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

int main(void)
{
	test_utf8();
	test_json();
	test_escape();
	return unit_exit();
}
