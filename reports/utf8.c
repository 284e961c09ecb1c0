#include "utf8.h"

#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at S (1-4), 0 when it is not one. */
size_t rep_utf8_seq(const unsigned char *s)
{
	size_t n;
	unsigned min;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, min = 0x80;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, min = 0x800;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, min = 0x10000;
	else
		return 0;
	unsigned cp = s[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	return cp >= min && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) ? n : 0;
}

json_t *rep_utf8_json(const char *s)
{
	if (!s)
		return json_null();
	json_t *v = json_string(s);
	if (v)
		return v;
	size_t len = strlen(s), o = 0;
	char *fixed = malloc(3 * len + 1);
	if (!fixed)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = rep_utf8_seq(p);
		if (n) {
			memcpy(fixed + o, p, n);
			o += n;
			p += n;
		} else {
			memcpy(fixed + o, "\xef\xbf\xbd", 3);
			o += 3;
			p++;
		}
	}
	v = json_stringn(fixed, o);
	free(fixed);
	return v;
}
