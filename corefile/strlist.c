#include "strlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool core_strlist_vappend(char ***list, size_t *n, const char *fmt, va_list ap)
{
	char buf[768];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*list)[i], buf) == 0)
			return true;
	char *copy = strdup(buf);
	char **grown = copy ? realloc(*list, (*n + 1) * sizeof(*grown)) : NULL;
	if (!grown) {
		free(copy);
		return false;
	}
	grown[(*n)++] = copy;
	*list = grown;
	return true;
}

const char *core_hex(char buf[32], uint64_t value)
{
	char digits[16];
	size_t n = 0;
	do {
		digits[n++] = "0123456789abcdef"[value & 15];
		value >>= 4;
	} while (value);
	buf[0] = '0';
	buf[1] = 'x';
	for (size_t i = 0; i < n; i++)
		buf[2 + i] = digits[n - 1 - i];
	buf[2 + n] = '\0';
	return buf;
}
