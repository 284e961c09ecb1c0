#include "display.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char clone_prefix[] = " [clone ";

/* Start of the run of " [clone X]" suffixes at the end of NAME (LEN bytes),
 * or LEN when there is none. */
static size_t clones_start(const char *name, size_t len)
{
	size_t end = len;
	while (end > 0 && name[end - 1] == ']') {
		size_t i = end - 1;
		while (i > 0 && name[i] != '[')
			i--;
		if (i == 0 || name[i - 1] != ' ' ||
		    strncmp(name + i - 1, clone_prefix, sizeof(clone_prefix) - 1) != 0)
			break;
		end = i - 1;
	}
	return end;
}

/* The opening parenthesis matching the ')' at NAME[CLOSE]; false when the
 * parentheses do not balance. */
static bool matching_open(const char *name, size_t close, size_t *open)
{
	int depth = 0;
	for (size_t i = close + 1; i-- > 0;) {
		if (name[i] == ')')
			depth++;
		else if (name[i] == '(' && --depth == 0) {
			*open = i;
			return true;
		}
	}
	return false;
}

/* Which coroutine clone the suffixes in [FROM, LEN) name: "actor",
 * "destroy" or none; *AT and *SIZE locate that suffix. */
static const char *coroutine_clone(const char *name, size_t from, size_t len, size_t *at,
				   size_t *size)
{
	static const char *const kinds[] = { "actor", "destroy" };
	for (size_t i = from; i < len;) {
		const char *close = memchr(name + i, ']', len - i);
		if (!close)
			return NULL;
		size_t n = (size_t)(close - (name + i)) + 1;
		for (size_t k = 0; k < 2; k++) {
			size_t kl = strlen(kinds[k]);
			if (n == sizeof(clone_prefix) - 1 + 1 + kl + 1 &&
			    memcmp(name + i + sizeof(clone_prefix) - 1, ".", 1) == 0 &&
			    memcmp(name + i + sizeof(clone_prefix), kinds[k], kl) == 0) {
				*at = i;
				*size = n;
				return kinds[k];
			}
		}
		i += n;
	}
	return NULL;
}

char *an_display_name(const char *function)
{
	if (!function)
		return NULL;
	size_t len = strlen(function);
	size_t end = clones_start(function, len), at, size, open;
	const char *kind = coroutine_clone(function, end, len, &at, &size);
	if (!kind || end == 0 || function[end - 1] != ')' ||
	    !matching_open(function, end - 1, &open))
		return NULL;
	/* The one parameter: "<as written>::<mangled ramp>.Frame*". */
	static const char frame_suffix[] = ".Frame*";
	const char *param = function + open + 1;
	size_t plen = end - 1 - (open + 1);
	size_t fl = sizeof(frame_suffix) - 1;
	if (plen <= fl || memcmp(param + plen - fl, frame_suffix, fl) != 0)
		return NULL;
	size_t written = 0;
	for (size_t i = 0; i + 4 <= plen - fl; i++)
		if (memcmp(param + i, "::_Z", 4) == 0)
			written = i;
	if (written == 0)
		return NULL;
	const char *rest_before = function + end;
	size_t nbefore = at - end, nafter = len - (at + size);
	bool destroy = strcmp(kind, "destroy") == 0;
	size_t cap = written + nbefore + nafter + sizeof(" [coroutine destroy]");
	char *out = malloc(cap);
	if (!out)
		return NULL;
	snprintf(out, cap, "%.*s%s%.*s%.*s", (int)written, param,
		 destroy ? " [coroutine destroy]" : " [coroutine]", (int)nbefore, rest_before,
		 (int)nafter, function + at + size);
	return out;
}
