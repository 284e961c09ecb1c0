/* Unit tests for reports/source: a frame's source line read from its file,
 * once per report, bounded, and nothing where the file or line is not
 * there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../reports/source.h"

#define UNIT_GROUP "source"
#include "unit.h"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_lines(const char *dir)
{
	char path[512], fifo[512], big[512];
	snprintf(path, sizeof(path), "%s/a.c", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo.c", dir);
	snprintf(big, sizeof(big), "%s/long.c", dir);
	write_file(path, "int f(void)\n{\n\treturn 1;   \r\n}\nlast");
	struct rep_sources *s = rep_sources_create();
	CHECK_STR("first line", rep_source_line(s, path, 1), "int f(void)");
	CHECK_STR("tab expanded, trailing blanks and CR dropped", rep_source_line(s, path, 3),
		  "        return 1;");
	CHECK_STR("last line without a newline", rep_source_line(s, path, 5), "last");
	CHECK("line past the end: none", rep_source_line(s, path, 6) == NULL);
	CHECK("line 0: none", rep_source_line(s, path, 0) == NULL);
	CHECK("negative line: none", rep_source_line(s, path, -3) == NULL);
	unlink(path);
	CHECK_STR("the file is read once: its text stays after it is gone", rep_source_line(s, path, 2),
		  "{");
	CHECK("missing file: none", rep_source_line(s, "/nonexistent/x.c", 1) == NULL);
	CHECK("a directory: none", rep_source_line(s, dir, 1) == NULL);
	CHECK("NULL path: none", rep_source_line(s, NULL, 1) == NULL);
	CHECK("no cache: none", rep_source_line(NULL, "/etc/hostname", 1) == NULL);
	if (mkfifo(fifo, 0600) == 0)
		CHECK("a FIFO is not read (no writer: it would block)", rep_source_line(s, fifo, 1) == NULL);

	char line[1000];
	memset(line, 'x', sizeof(line));
	memcpy(line + REP_SOURCE_LINE_MAX - 1, "\xc3\xa9", 2);   /* a character across the bound */
	line[sizeof(line) - 1] = '\0';
	write_file(big, line);
	const char *got = rep_source_line(s, big, 1);
	CHECK("a long line is cut at the bound, before a character it would split, with \"...\"",
	      got && strlen(got) == REP_SOURCE_LINE_MAX - 1 + 3 &&
		      strcmp(got + REP_SOURCE_LINE_MAX - 1, "...") == 0);
	rep_sources_destroy(s);
	rep_sources_destroy(NULL);
	unlink(fifo);
	unlink(big);
}

int main(void)
{
	char dir[] = "/tmp/test_source.XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK("a scratch directory", false);
		return unit_exit();
	}
	test_lines(dir);
	rmdir(dir);
	return unit_exit();
}
