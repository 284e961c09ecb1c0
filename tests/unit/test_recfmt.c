/* Unit tests for analyzer/recfmt: recorder formats scanned and rebuilt,
 * including hostile formats taken from a core. */
#include "../../analyzer/recfmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNIT_GROUP "recfmt"
#include "unit.h"

static uint64_t dbits(double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof(v));
	return v;
}

/* Fake memory: two readable strings at known addresses. */
static bool read_string(void *ctx, uint64_t addr, char *buf, size_t max)
{
	(void)ctx;
	const char *s = addr == 0x1000 ? "disk" : addr == 0x2000 ? "peg A" : NULL;
	if (!s || strlen(s) + 1 > max)
		return false;
	strcpy(buf, s);
	return true;
}

static void expect(const char *name, const char *format, const uint64_t *args, size_t nargs,
		   unsigned flags, const char *want, unsigned want_read)
{
	unsigned got_read = 0;
	char *got = an_recfmt_format(format, args, nargs, read_string, NULL, flags, &got_read);
	char *got_all = NULL, *want_all = NULL;
	if (got && asprintf(&got_all, "%s | strings %#x", got, got_read) < 0)
		got_all = NULL;
	if (asprintf(&want_all, "%s | strings %#x", want, want_read) < 0)
		want_all = NULL;
	CHECK_STR(name, got_all, want_all ? want_all : "");
	free(got_all);
	free(want_all);
	free(got);
}

static void test_location(void)
{
	const char *rest;
	char *loc = an_recfmt_split_location("hanoi.c:42:Move %d", &rest);
	bool ok = loc && strcmp(loc, "hanoi.c:42") == 0 && strcmp(rest, "Move %d") == 0;
	free(loc);
	loc = an_recfmt_split_location("Hanoi 3: move", &rest);
	ok = ok && !loc && strcmp(rest, "Hanoi 3: move") == 0;
	loc = an_recfmt_split_location("a/b.c:x:%d", &rest);
	ok = ok && !loc;
	loc = an_recfmt_split_location(NULL, &rest);
	ok = ok && !loc && !rest;
	CHECK("location split", ok);
}

static void test_count(void)
{
	struct { const char *f; size_t n; } cases[] = {
		{"none", 0}, {"%d %s", 2}, {"%*d", 2}, {"%*.*f", 3}, {"100%%", 0},
		{"%n %d", 2}, {"%k%*d", 3}, {"%", 0}, {"%d%d%d%d%d%d%d%d%d%d%d%d%d%d", 12},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[96], got[32], want[32];
		snprintf(name, sizeof(name), "argument count of \"%s\"", cases[i].f);
		snprintf(got, sizeof(got), "%zu", an_recfmt_count_args(cases[i].f));
		snprintf(want, sizeof(want), "%zu", cases[i].n);
		CHECK_STR(name, got, want);
	}
}

/* The recorder library's own dump of one entry (whole format, location
 * included), and the indent mark it removes. */
static void expect_library(const char *name, const char *format, const uint64_t *args,
			   size_t nargs, const char *want, char want_mark)
{
	char mark = 1;
	char *got = an_recfmt_library_message(format, args, nargs, read_string, NULL, &mark);
	char *got_all = NULL, *want_all = NULL, *label = NULL;
	if (got && asprintf(&got_all, "%s | mark %d", got, mark) < 0)
		got_all = NULL;
	if (asprintf(&want_all, "%s | mark %d", want, want_mark) < 0)
		want_all = NULL;
	if (asprintf(&label, "library %s", name) < 0)
		label = NULL;
	CHECK_STR(label ? label : name, got_all, want_all ? want_all : "");
	free(label);
	free(got_all);
	free(want_all);
	free(got);
}

/* Outputs of the recorder library itself (c3d/recorder, recorder_dump()
 * with a format function that prints the message it is handed), for the
 * same formats and arguments. */
static void test_library(void)
{
	uint64_t neg = (uint64_t)-65;
	expect_library("integers of -65", "ref.c:8:ints %x %d %u %hx %hhd %lx %llx %ld",
		       (uint64_t[]){neg, neg, neg, neg, neg, neg, neg, neg}, 8,
		       "ints ffffffbf -65 4294967231 ffbf -65 ffffffffffffffbf ffffffffffffffbf -65", 0);
	expect_library("mark >", "ref.c:9:>enter level one", NULL, 0, "enter level one", '>');
	expect_library("mark <", "ref.c:13:<leave one", NULL, 0, "leave one", '<');
	expect_library("mark =", "ref.c:15:=reset %d", (uint64_t[]){3}, 1, "reset 3", '=');
	expect_library("final newline", "ref.c:14:ends in newline\n", NULL, 0, "ends in newline", 0);
	expect_library("empty message", "ref.c:18:", NULL, 0, "ref.c:18:", 0);
	expect_library("mark alone", "ref.c:19:>", NULL, 0, "ref.c:19:", '>');
	expect_library("mark after a directive", "ref.c:20:%d>not a mark", (uint64_t[]){5}, 1,
		       "5not a mark", '>');
	expect_library("%% takes an argument", "ref3.c:14:100%% %d %d", (uint64_t[]){9, 8, 0, 0}, 4,
		       "100% 8 0", 0);
	expect_library("colon first", "ref.c:21::colon first", NULL, 0, ":colon first", 0);
	static const struct { const char *format, *want; } cut[] = {
		{"ref2.c:14:long %s 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789 end",
		 "long 0x561157272426 012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234"},
		{"ref2.c:15:long directive at the end 01234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345 %d",
		 "long directive at the end 01234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345 123456789"},
		{"ref2.c:16:fits exactly 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678 %d",
		 "fits exactly 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678 1"},
		{"ref2.c:17:%x %hhx %hd %c %5.2f|%-6d|%*d",
		 "ffffffff ff 4464 A  3.14|-3    |   42"},
		{"ref2.c:18:newline cut 01234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567\n",
		 "newline cut 01234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567"},
	};
	static const char *names[] = {"255 bytes, literal cut", "directive output cut",
				      "directive that does not fit keeps room - 1",
				      "lengths h hh none, widths, star", "newline past the cut"};
	uint64_t cut_args[][8] = {
		{0x561157272426},
		{123456789},
		{1234},
		{(uint64_t)-1, 0x1ff, 70000, 'A', 0, (uint64_t)-3, 5, 42},
		{0},
	};
	size_t cut_nargs[] = {1, 1, 1, 8, 0};
	cut_args[3][4] = dbits(3.14159);
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++)
		expect_library(names[i], cut[i].format, cut_args[i], cut_nargs[i], cut[i].want, 0);
	/* asyncore's own message sees the directive's length the same way. */
	expect("no length is 32 bits", "%x %d %u %hx %hhd %lx %llx %b",
	       (uint64_t[]){neg, neg, neg, neg, neg, neg, neg, 1ull << 32 | 5}, 8, 0,
	       "ffffffbf -65 4294967231 ffbf -65 ffffffffffffffbf ffffffffffffffbf 101", 0);
	expect("%d of 2^40", "%d %ld", (uint64_t[]){1ull << 40, 1ull << 40}, 2, 0, "0 1099511627776", 0);
	size_t pos = 0;
	bool ok = an_recfmt_indent_mark(">x", &pos) == '>' && pos == 0 &&
		  an_recfmt_indent_mark("%d%%<x", &pos) == '<' && pos == 4 &&
		  an_recfmt_indent_mark(":>x", &pos) == 0 && an_recfmt_indent_mark("x>", &pos) == 0 &&
		  an_recfmt_indent_mark("%k>", &pos) == 0 && an_recfmt_indent_mark(NULL, &pos) == 0;
	CHECK("indent mark position", ok);
}

int main(void)
{
	uint64_t a[12] = {0};

	a[0] = 3; a[1] = (uint64_t)-7; a[2] = 0xdeadbeef;
	expect("integers", "n=%d m=%i u=%u x=%x X=%#X", (uint64_t[]){3, (uint64_t)-7, 5, 0xab, 0xcd}, 5,
	       0, "n=3 m=-7 u=5 x=ab X=0XCD", 0);
	expect("64-bit", "%ld %lu %llx", (uint64_t[]){1ull << 40, ~0ull, 0x123456789abcull}, 3, 0,
	       "1099511627776 18446744073709551615 123456789abc", 0);
	expect("short", "%hhd %hu", (uint64_t[]){0x1ff, 0x12345}, 2, 0, "-1 9029", 0);
	expect("floats", "%f %.3f %g %e", (uint64_t[]){dbits(1.5), dbits(3.14159), dbits(0.0001),
						       dbits(12345.678)}, 4, 0,
	       "1.500000 3.142 0.0001 1.234568e+04", 0);
	expect("star width", "[%*d] [%-*d] [%.*f]", (uint64_t[]){5, 42, 4, 7, 2, dbits(2.0)}, 6, 0,
	       "[   42] [7   ] [2.00]", 0);
	expect("negative star", "[%*d]", (uint64_t[]){(uint64_t)-4, 1}, 2, 0, "[1   ]", 0);
	expect("strings", "%s on %+s", (uint64_t[]){0x1000, 0x2000}, 2, 0, "disk on peg A", 3);
	expect("string unreadable", "%s", (uint64_t[]){0x3000}, 1, 0, "0x3000", 0);
	expect("string null", "%s", (uint64_t[]){0}, 1, 0, "<NULL>", 0);
	expect("library %s as pointer", "%s on %+s", (uint64_t[]){0x1000, 0x2000}, 2, AN_RECFMT_LIBRARY,
	       "0x1000 on peg A", 2);
	expect("string precision", "[%.2s] [%-6s]", (uint64_t[]){0x1000, 0x1000}, 2, 0,
	       "[di] [disk  ]", 3);
	expect("pointer", "%p %p", (uint64_t[]){0x7ffd1234, 0}, 2, 0, "0x7ffd1234 (nil)", 0);
	expect("char", "[%c%c]", (uint64_t[]){'o', 'k'}, 2, 0, "[ok]", 0);
	expect("char nul dropped", "[%c]", (uint64_t[]){0}, 1, 0, "[]", 0);
	expect("binary", "%b %#b %8b", (uint64_t[]){5, 2, 3}, 3, 0, "101 0b10       11", 0);
	expect("percent", "100%% %d", (uint64_t[]){9}, 1, 0, "100% 9", 0);
	expect("more than four args", "%d %d %d %d %d %d",
	       (uint64_t[]){1, 2, 3, 4, 5, 6}, 6, 0, "1 2 3 4 5 6", 0);
	expect("missing args", "%d %d", (uint64_t[]){1}, 1, 0, "1 ?", 0);

	/* Hostile formats: nothing runs, nothing overflows. */
	expect("percent n", "a%nb%d", (uint64_t[]){0x1000, 8}, 2, 0, "a%nb8", 0);
	expect("huge width", "%999999999d|%d", (uint64_t[]){1, 2}, 2, 0, "%999999999d|2", 0);
	expect("huge precision", "%.99999f", (uint64_t[]){dbits(1.0)}, 1, 0, "%.99999f", 0);
	char wide[AN_RECFMT_MAX_WIDTH + 3];
	memset(wide, ' ', sizeof(wide));
	wide[0] = '[';
	wide[AN_RECFMT_MAX_WIDTH] = '1';
	wide[AN_RECFMT_MAX_WIDTH + 1] = ']';
	wide[AN_RECFMT_MAX_WIDTH + 2] = '\0';
	expect("huge star width clamped", "[%*d]", (uint64_t[]){1ull << 62, 1}, 2, 0, wide, 0);
	expect("unterminated", "end %", a, 1, 0, "end %", 0);
	expect("unterminated flags", "end %-0", a, 1, 0, "end %-0", 0);
	expect("unknown conversion", "%k %d", (uint64_t[]){3, 4}, 2, 0, "%k 4", 0);
	expect("many flags", "%-------------d", (uint64_t[]){1}, 1, 0, "%-------------d", 0);
	expect("long double", "%Lf", (uint64_t[]){dbits(0.5)}, 1, 0, "0.500000", 0);
	expect("quote flag", "%'d", (uint64_t[]){1}, 1, 0, "%'d", 0);
	expect("null format", NULL, a, 0, 0, "", 0);

	test_location();
	test_count();
	test_library();
	return unit_exit();
}
