#include "bytes.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char replacement[] = "\xef\xbf\xbd";   /* U+FFFD */

/* The code point of the valid sequence of N bytes at P. */
static uint32_t decode(const unsigned char *p, size_t n)
{
	uint32_t cp = n == 1 ? p[0] : p[0] & (0x7fu >> n);
	for (size_t i = 1; i < n; i++)
		cp = cp << 6 | (p[i] & 0x3fu);
	return cp;
}

size_t rep_utf8_seq(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;
	uint32_t min;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, min = 0x80;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, min = 0x800;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < n; i++)   /* stops at the NUL, which is not 10xxxxxx */
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	uint32_t cp = decode(p, n);
	return cp >= min && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) ? n : 0;
}

const char *rep_utf8(const char *s, char **owned)
{
	*owned = NULL;
	if (!s)
		return NULL;
	const char *p = s;
	size_t n;
	while (*p && (n = rep_utf8_seq(p)) != 0)
		p += n;
	if (!*p)
		return s;   /* the usual case: valid already */
	size_t len = strlen(s), o = (size_t)(p - s);
	char *fixed = malloc(3 * len + 1);
	if (!fixed)
		return NULL;
	memcpy(fixed, s, o);
	while (*p) {
		if ((n = rep_utf8_seq(p)) != 0) {
			memcpy(fixed + o, p, n);
			o += n;
			p += n;
		} else {
			memcpy(fixed + o, replacement, 3);
			o += 3;
			p++;
		}
	}
	fixed[o] = '\0';
	*owned = fixed;
	return fixed;
}

json_t *rep_json_text(const char *s)
{
	char *owned;
	if (!s)
		return json_null();
	const char *valid = rep_utf8(s, &owned);
	json_t *v = valid ? json_string_nocheck(valid) : NULL;
	free(owned);
	return v;
}

static bool hidden_code_point(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

bool rep_utf8_hidden(const char *s, size_t n)
{
	return n > 1 && hidden_code_point(decode((const unsigned char *)s, n));
}

/* Append the escaped form of the item at P (N bytes of valid UTF-8, or one
 * invalid byte when N is 0) to OUT, or only count it when OUT is NULL.
 * Returns the bytes written. */
static size_t escape_item(const unsigned char *p, size_t n, char *out)
{
	char buf[16];
	size_t len;
	if (n == 0) {
		len = (size_t)snprintf(buf, sizeof(buf), "\\x%02x", p[0]);
	} else if (n == 1 && (p[0] < 0x20 || p[0] == 0x7f || p[0] == '\\')) {
		const char *named = p[0] == '\n' ? "\\n" : p[0] == '\t' ? "\\t" : p[0] == '\r' ? "\\r"
				  : p[0] == '\\' ? "\\\\" : NULL;
		len = named ? (size_t)snprintf(buf, sizeof(buf), "%s", named)
			    : (size_t)snprintf(buf, sizeof(buf), "\\x%02x", p[0]);
	} else if (rep_utf8_hidden((const char *)p, n)) {   /* shown as \uHHHH */
		len = (size_t)snprintf(buf, sizeof(buf), "\\u%04x", (unsigned)decode(p, n));
	} else {
		if (out)
			memcpy(out, p, n);
		return n;
	}
	if (out)
		memcpy(out, buf, len);
	return len;
}

/* The escaped length of S; equal to strlen(S) when nothing needs escaping
 * (*CHANGED tells). */
static size_t escaped_length(const char *s, bool *changed)
{
	size_t total = 0;
	*changed = false;
	for (const char *p = s; *p;) {
		unsigned char c = (unsigned char)*p;
		if (c >= 0x20 && c < 0x7f && c != '\\') {   /* printable ASCII, the usual case */
			total++;
			p++;
			continue;
		}
		size_t n = rep_utf8_seq(p);
		size_t len = escape_item((const unsigned char *)p, n, NULL);
		*changed |= n == 0 || len != n;
		total += len;
		p += n ? n : 1;
	}
	return total;
}

const char *rep_escape(struct rep_escaper *e, const char *s)
{
	bool changed;
	if (!s)
		return "";
	size_t len = escaped_length(s, &changed);
	if (!changed)
		return s;
	if (e->n == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 8;
		char **held = realloc(e->held, cap * sizeof(*held));
		if (!held)
			goto fail;
		e->held = held;
		e->cap = cap;
	}
	char *copy = malloc(len + 1), *o = copy;
	if (!copy)
		goto fail;
	for (const char *p = s; *p;) {
		size_t n = rep_utf8_seq(p);
		o += escape_item((const unsigned char *)p, n, o);
		p += n ? n : 1;
	}
	*o = '\0';
	e->held[e->n++] = copy;
	return copy;
fail:
	e->failed = true;
	return "?";
}

void rep_escaper_clear(struct rep_escaper *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->held[i]);
	free(e->held);
	*e = (struct rep_escaper){0};
}

void rep_say(FILE *out, const char *what, const char *detail)
{
	struct rep_escaper e = {0};
	fprintf(out, "asyncore: %s%s%s\n", rep_escape(&e, what), detail ? ": " : "",
		detail ? rep_escape(&e, detail) : "");
	rep_escaper_clear(&e);
}
