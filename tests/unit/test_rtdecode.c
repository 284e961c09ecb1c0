/* Unit tests for the named decoders of runtime descriptions: the CPython
 * 3.11 line table (tables built by hand for each entry form, then every
 * instruction of 131 real code objects against CPython's own co_lines(),
 * tests/unit/data/cpython311_lines.txt), 3.10's line table and 3.8's
 * lnotab (by hand, then the code objects of threading.py against 3.10's
 * co_lines() and 3.8's dis.findlinestarts(): cpython310_lines.txt and
 * cpython38_lines.txt, written by tests/cpython_lines.py), code points to
 * UTF-8, basename. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analyzer/rtdecode.h"
#include "craft.h"

#define UNIT_GROUP "rtdecode"
#include "unit.h"

/* The line at OFFSET, or -1 for none. */
static int64_t line_at(const unsigned char *t, size_t len, int64_t first, int64_t offset)
{
	int64_t line;
	return an_rt_cpython311_line(t, len, first, offset, &line) ? line : -1;
}

/* The same through 3.10's and 3.8's decoders. */
static int64_t line310_at(const unsigned char *t, size_t len, int64_t first, int64_t offset)
{
	int64_t line;
	return an_rt_cpython310_line(t, len, first, offset, &line) ? line : -1;
}

static int64_t lnotab_at(const unsigned char *t, size_t len, int64_t first, int64_t offset)
{
	return an_rt_cpython_lnotab_line(t, len, first, offset);
}

static void hand_built_310(void)
{
	static const unsigned char t[] = {
		4, 0,           /* [0, 4): the first line */
		0, 2,           /* no bytes, two lines on */
		6, 1,           /* [4, 10): one more: first + 3 */
		2, 0x80,        /* [10, 12): no line */
		4, 0xfe,        /* [12, 16): two lines back: first + 1 */
	};
	CHECK("3.10: a frame not started is on its first line", line310_at(t, sizeof(t), 7, -1) == 7);
	CHECK("3.10: the first range", line310_at(t, sizeof(t), 7, 0) == 7 &&
	      line310_at(t, sizeof(t), 7, 2) == 7);
	CHECK("3.10: an empty range still moves the line", line310_at(t, sizeof(t), 7, 4) == 10 &&
	      line310_at(t, sizeof(t), 7, 8) == 10);
	CHECK("3.10: -128 is no line", line310_at(t, sizeof(t), 7, 10) == -1);
	CHECK("3.10: a negative delta", line310_at(t, sizeof(t), 7, 14) == 8);
	CHECK("3.10: past the table: no line", line310_at(t, sizeof(t), 7, 16) == -1);
	CHECK("3.10: an odd byte at the end is not read", line310_at(t, 1, 7, 0) == -1);
	static const unsigned char lnotab[] = { 6, 1, 0, 3, 8, 0xff, 4, 2 };
	CHECK("lnotab: before the first increment, the first line", lnotab_at(lnotab, 8, 20, 0) == 20 &&
	      lnotab_at(lnotab, 8, 20, 5) == 20);
	CHECK("lnotab: increments at one address add up", lnotab_at(lnotab, 8, 20, 6) == 24);
	CHECK("lnotab: a negative increment", lnotab_at(lnotab, 8, 20, 14) == 23);
	CHECK("lnotab: past the table, the last line", lnotab_at(lnotab, 8, 20, 100) == 25);
	CHECK("lnotab: an empty table, the first line", lnotab_at(lnotab, 0, 20, 4) == 20);
}

static void hand_built(void)
{
	static const unsigned char t[] = {
		0x80 | 0 << 3 | 1, 0x00,                /* short form: 2 units, same line */
		0x80 | 11 << 3 | 0, 0x01, 0x02,         /* one-line form, one line on: 1 unit */
		0x80 | 13 << 3 | 2, 0x07,               /* no columns, -3 lines: 3 units */
		0x80 | 15 << 3 | 0,                     /* no location: 1 unit */
		0x80 | 14 << 3 | 1, 0x48, 0x03, 0x00, 0x05, 0x06,   /* long form, +100: 2 units */
		0x80 | 12 << 3 | 0, 0x00, 0x01,         /* one-line form, two lines on */
	};
	CHECK("a frame not started is on its first line", line_at(t, sizeof(t), 10, -2) == 10);
	CHECK("short form: the first line", line_at(t, sizeof(t), 10, 0) == 10 &&
	      line_at(t, sizeof(t), 10, 2) == 10);
	CHECK("one-line form 11: one line on", line_at(t, sizeof(t), 10, 4) == 11);
	CHECK("no-columns form: a negative signed varint", line_at(t, sizeof(t), 10, 6) == 8 &&
	      line_at(t, sizeof(t), 10, 10) == 8);
	CHECK("no location: no line", line_at(t, sizeof(t), 10, 12) == -1);
	CHECK("long form: a two-byte varint", line_at(t, sizeof(t), 10, 14) == 108 &&
	      line_at(t, sizeof(t), 10, 16) == 108);
	CHECK("one-line form 12: two lines on", line_at(t, sizeof(t), 10, 18) == 110);
	CHECK("past the table: no line", line_at(t, sizeof(t), 10, 20) == -1);
	CHECK("an empty table: no line", line_at(t, 0, 10, 0) == -1);
	/* hostile: a varint running to the table's end, continuation bits forever */
	static const unsigned char cut[] = { 0x80 | 14 << 3 | 0, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f,
					     0x7f, 0x7f };
	int64_t line;
	CHECK("an endless varint is bounded", an_rt_cpython311_line(cut, sizeof(cut), 1, 0, &line));
	static const unsigned char junk[] = { 0x01, 0x02, 0x80 | 10 << 3, 0x00, 0x00 };
	CHECK("bytes before the first entry are skipped", line_at(junk, sizeof(junk), 5, 0) == 5);
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Every instruction of every code object of the data file NAME against
 * the decoder LINE_AT; instructions are STEP bytes. */
static void real_tables(const char *name_of_file, const char *what,
			int64_t (*at)(const unsigned char *, size_t, int64_t, int64_t), size_t min_codes)
{
	FILE *f = fopen(craft_data_path(name_of_file), "r");
	char *line = NULL, name[256], msg[160];
	size_t cap = 0, codes = 0, checked = 0, wrong = 0;
	snprintf(msg, sizeof(msg), "the data file %s is there", name_of_file);
	CHECK(msg, f != NULL);
	while (f && getline(&line, &cap, f) > 0) {
		char *hex = NULL, *ranges = NULL;
		long long first;
		if (sscanf(line, "%255s %lld %ms %ms", name, &first, &hex, &ranges) != 4) {
			free(hex);
			free(ranges);
			continue;
		}
		size_t len = strlen(hex) / 2;
		unsigned char *t = malloc(len + 1);
		for (size_t i = 0; t && i < len; i++)
			t[i] = (unsigned char)(hex_digit(hex[2 * i]) << 4 | hex_digit(hex[2 * i + 1]));
		codes++;
		for (char *r = strtok(ranges, ","); t && r; r = strtok(NULL, ",")) {
			long long start, end, want = -1;
			char l[32];
			if (sscanf(r, "%lld:%lld:%31s", &start, &end, l) != 3)
				continue;
			if (strcmp(l, "-") != 0)
				want = atoll(l);
			for (long long o = start; o < end; o += 2, checked++)
				if (at(t, len, first, o) != want && wrong++ < 5)
					printf("    %s offset %lld: %lld, CPython says %lld\n", name, o,
					       (long long)at(t, len, first, o), want);
		}
		free(t);
		free(hex);
		free(ranges);
	}
	free(line);
	if (f)
		fclose(f);
	printf("    %s: %zu code objects, %zu instructions\n", name_of_file, codes, checked);
	CHECK(what, codes > min_codes && checked > 10 * min_codes && wrong == 0);
}

static void code_points(void)
{
	char out[64];
	bool cut;
	static const unsigned char latin1[] = { 'c', 'a', 'f', 0xe9 };
	an_rt_code_points_utf8(latin1, 4, 1, out, sizeof(out), &cut);
	CHECK_STR("1-byte characters are Latin-1", out, "caf\xc3\xa9");
	static const unsigned char ucs2[] = { 0xac, 0x20, 0x00, 0xd8, 'x', 0 };
	an_rt_code_points_utf8(ucs2, 3, 2, out, sizeof(out), &cut);
	CHECK_STR("2-byte characters; a lone surrogate is U+FFFD", out, "\xe2\x82\xac\xef\xbf\xbdx");
	static const unsigned char ucs4[] = { 0x00, 0xf6, 0x01, 0x00, 0x00, 0x00, 0x11, 0x00 };
	an_rt_code_points_utf8(ucs4, 2, 4, out, sizeof(out), &cut);
	CHECK_STR("4-byte characters; past U+10FFFF is U+FFFD", out, "\xf0\x9f\x98\x80\xef\xbf\xbd");
	size_t n = an_rt_code_points_utf8(latin1, 4, 1, out, 5, &cut);
	CHECK("a character that does not fit ends the text, said so",
	      n == 3 && cut && strcmp(out, "caf") == 0);
}

static void basenames(void)
{
	CHECK_STR("basename of a path", an_rt_basename("/usr/lib/python3.11/threading.py"),
		  "threading.py");
	CHECK_STR("basename without a slash", an_rt_basename("crash.py"), "crash.py");
	CHECK_STR("basename of a directory", an_rt_basename("/tmp/"), "");
}

int main(void)
{
	hand_built();
	hand_built_310();
	real_tables("cpython311_lines.txt", "3.11: every instruction's line is CPython's co_lines()",
		    line_at, 100);
	real_tables("cpython310_lines.txt", "3.10: every instruction's line is CPython's co_lines()",
		    line310_at, 50);
	real_tables("cpython38_lines.txt", "3.8: every instruction's line is dis.findlinestarts()'s",
		    lnotab_at, 50);
	code_points();
	basenames();
	return unit_exit();
}
