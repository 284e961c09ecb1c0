/* Source lines for the text and HTML reports, from the files the frames'
 * debug info names.  Each file is read whole the first time a frame asks
 * for it and indexed by line, each line made once (the threads of a
 * process share their code); a file that cannot be read is remembered as
 * such, so it is tried once. */
#include "source.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	FILE_MAX = 16 << 20,        /* a bigger file is not read */
	TOTAL_MAX = 64 << 20,       /* bytes read for one report, every file */
	FILES_MAX = 256,            /* files one report remembers */
	TAB_STOP = 8,
};

struct source_file {
	char *path;
	const char *asked;          /* the string asked for: frames share pooled names */
	char *text;                 /* NULL: not readable */
	size_t size;
	uint32_t *starts;           /* each line's first byte */
	size_t nlines;
	char **shown;               /* each line as shown, made when first asked */
};

struct rep_sources {
	struct source_file files[FILES_MAX];
	size_t n, last;
	size_t total;
	char line[REP_SOURCE_LINE_MAX + 4];
};

struct rep_sources *rep_sources_create(void)
{
	return calloc(1, sizeof(struct rep_sources));
}

void rep_sources_destroy(struct rep_sources *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->files[i].path);
		free(s->files[i].text);
		free(s->files[i].starts);
		for (size_t k = 0; s->files[i].shown && k < s->files[i].nlines; k++)
			free(s->files[i].shown[k]);
		free(s->files[i].shown);
	}
	free(s);
}

/* PATH's bytes when it is a regular file of at most MAX bytes, else NULL.
 * O_NONBLOCK: a FIFO named by the debug info must not stop the report. */
static char *read_whole(const char *path, size_t max, size_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	char *text = NULL;
	struct stat st;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 || (uint64_t)st.st_size > max)
		goto out;
	text = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (text && got < (size_t)st.st_size) {
		ssize_t r = read(fd, text + got, (size_t)st.st_size - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	*size = got;
out:
	close(fd);
	return text;
}

/* F's line starts; false on out-of-memory. */
static bool index_lines(struct source_file *f)
{
	size_t n = 0;
	for (const char *p = f->text; (p = memchr(p, '\n', f->size - (size_t)(p - f->text))); p++)
		n++;
	if (f->size && f->text[f->size - 1] != '\n')
		n++;
	f->starts = malloc((n ? n : 1) * sizeof(*f->starts));
	if (!f->starts)
		return false;
	f->starts[0] = 0;
	size_t k = 1;
	for (size_t i = 0; i + 1 < f->size && k < n; i++)
		if (f->text[i] == '\n')
			f->starts[k++] = (uint32_t)(i + 1);
	f->nlines = n;
	f->shown = calloc(n ? n : 1, sizeof(*f->shown));
	return f->shown != NULL;
}

static void source_open(struct rep_sources *s, struct source_file *f)
{
	size_t room = s->total < TOTAL_MAX ? TOTAL_MAX - s->total : 0;
	f->text = read_whole(f->path, room < FILE_MAX ? room : FILE_MAX, &f->size);
	if (f->text && !index_lines(f)) {
		free(f->text);
		free(f->starts);
		f->text = NULL;
		f->starts = NULL;
	}
	if (f->text)
		s->total += f->size;
}

/* PATH's entry, read on first use; NULL when none can be made. */
static struct source_file *source_file(struct rep_sources *s, const char *path)
{
	if (s->n && (s->files[s->last].asked == path || strcmp(s->files[s->last].path, path) == 0))
		return &s->files[s->last];
	for (size_t i = 0; i < s->n; i++)
		if (s->files[i].asked == path || strcmp(s->files[i].path, path) == 0) {
			s->last = i;
			return &s->files[i];
		}
	if (s->n == FILES_MAX)
		return NULL;
	struct source_file *f = &s->files[s->n];
	*f = (struct source_file){ .path = strdup(path), .asked = path };
	if (!f->path)
		return NULL;
	source_open(s, f);
	s->last = s->n++;
	return f;
}

/* Bytes [FROM, TO) into S->line as rep_source_line() describes. */
static const char *shown_line(struct rep_sources *s, const char *from, const char *to)
{
	size_t out = 0;
	const char *p = from;
	for (; p < to && out < REP_SOURCE_LINE_MAX; p++) {
		if (*p == '\t') {
			do
				s->line[out++] = ' ';
			while (out % TAB_STOP && out < REP_SOURCE_LINE_MAX);
		} else {
			s->line[out++] = *p ? *p : '?';
		}
	}
	bool cut = false;
	for (const char *q = p; q < to && !cut; q++)
		cut = *q != ' ' && *q != '\t' && *q != '\r';
	while (cut && out && p > from && ((unsigned char)*p & 0xc0) == 0x80) {
		out--;          /* not inside a character */
		p--;
	}
	while (out && (s->line[out - 1] == ' ' || s->line[out - 1] == '\r'))
		out--;
	if (cut) {
		memcpy(s->line + out, "...", 3);
		out += 3;
	}
	s->line[out] = '\0';
	return s->line;
}

const char *rep_source_line(struct rep_sources *s, const char *path, int line)
{
	if (!s || !path || !*path || line < 1)
		return NULL;
	struct source_file *f = source_file(s, path);
	if (!f || !f->text || (size_t)line > f->nlines)
		return NULL;
	char **shown = &f->shown[line - 1];
	if (*shown)
		return *shown;
	const char *from = f->text + f->starts[line - 1];
	const char *to = (size_t)line < f->nlines ? f->text + f->starts[line] : f->text + f->size;
	if (to > from && to[-1] == '\n')
		to--;
	*shown = strdup(shown_line(s, from, to));
	return *shown;
}
