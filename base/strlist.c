#include "strlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool base_strlist_vappend(char ***list, size_t *n, const char *fmt, va_list ap)
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

char *base_digits(char *end, uint64_t value, unsigned base)
{
	do {
		*--end = "0123456789abcdef"[base == 16 ? value & 15 : value % 10];
		value = base == 16 ? value >> 4 : value / 10;
	} while (value);
	return end;
}

const char *base_hex(char buf[32], uint64_t value)
{
	char tmp[BASE_DIGITS_MAX], *d = base_digits(tmp + sizeof(tmp), value, 16);
	size_t n = (size_t)(tmp + sizeof(tmp) - d);
	buf[0] = '0';
	buf[1] = 'x';
	memcpy(buf + 2, d, n);
	buf[2 + n] = '\0';
	return buf;
}
