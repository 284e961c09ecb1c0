/* The named decoders of runtime descriptions.
 *
 * cpython-3.11-line follows Objects/locations.md of CPython 3.11: the line
 * table is a sequence of entries, each a first byte with bit 7 set (bits
 * 3-6 the code, bits 0-2 the number of code units covered, minus one)
 * followed by bytes with bit 7 clear.  The code says how the entry's start
 * line follows from the previous one's (the first from co_firstlineno):
 * 0-9 (short forms) and 10 the same line, 11 and 12 one and two lines on,
 * 13 (no columns) and 14 (long form) a signed varint delta, 15 no line at
 * all.  Written from the format's description, not from CPython's code. */
#include "rtdecode.h"

#include <string.h>

#define CODE_UNIT 2                 /* bytes of one _Py_CODEUNIT */
#define VARINT_LIMIT 6u             /* 6-bit chunks of one varint: 36 bits */

/* An unsigned varint at TABLE[*AT] (6-bit chunks, least significant first,
 * bit 6 set on all but the last), within the entry: it stops at the next
 * byte with bit 7 set or at LEN. */
static uint64_t varint(const unsigned char *table, size_t len, size_t *at)
{
	uint64_t v = 0;
	for (unsigned shift = 0, n = 0; *at < len && !(table[*at] & 0x80) && n < VARINT_LIMIT;
	     shift += 6, n++) {
		unsigned char b = table[(*at)++];
		v |= (uint64_t)(b & 63) << shift;
		if (!(b & 64))
			break;
	}
	return v;
}

static int64_t signed_varint(const unsigned char *table, size_t len, size_t *at)
{
	uint64_t u = varint(table, len, at);
	return u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
}

/* How far the start line moves at the entry of CODE whose extra bytes
 * start at TABLE[AT]. */
static int64_t line_delta(unsigned code, const unsigned char *table, size_t len, size_t at)
{
	switch (code) {
	case 11:
		return 1;
	case 12:
		return 2;
	case 13:
	case 14:
		return signed_varint(table, len, &at);
	default:
		return 0;           /* short forms, one-line form 10, no location */
	}
}

bool an_rt_cpython311_line(const unsigned char *table, size_t len, int64_t first_line,
			   int64_t offset, int64_t *line)
{
	int64_t computed = first_line, end = 0;
	if (offset < 0) {
		*line = first_line;
		return true;
	}
	size_t at = 0;
	while (at < len && !(table[at] & 0x80))
		at++;               /* not an entry's start: never in a table CPython wrote */
	while (at < len) {
		unsigned code = (table[at] >> 3) & 15;
		int64_t units = (table[at] & 7) + 1;
		computed += line_delta(code, table, len, at + 1);
		end += units * CODE_UNIT;
		if (offset < end) {
			*line = computed;
			return code != 15;
		}
		do
			at++;
		while (at < len && !(table[at] & 0x80));
	}
	return false;
}

/* cpython-3.10-line (Objects/lnotab_notes.txt of 3.10): the table is pairs
 * of bytes, an unsigned count of bytecode bytes and a signed line delta
 * (-128: the range has no line).  Ranges of no bytes still move the line. */
bool an_rt_cpython310_line(const unsigned char *table, size_t len, int64_t first_line,
			   int64_t offset, int64_t *line)
{
	int64_t computed = first_line, end = 0;
	if (offset < 0) {
		*line = first_line;
		return true;
	}
	for (size_t at = 0; at + 1 < len; at += 2) {
		int delta = (signed char)table[at + 1];
		end += table[at];
		if (delta != -128)
			computed += delta;
		if (offset < end) {
			*line = computed;
			return delta != -128;
		}
	}
	return false;
}

/* cpython-lnotab-line (Objects/lnotab_notes.txt of 3.8 and 3.9): pairs of
 * an unsigned bytecode increment and a signed line increment; the line is
 * the one reached before the address passes OFFSET (PyCode_Addr2Line). */
int64_t an_rt_cpython_lnotab_line(const unsigned char *table, size_t len, int64_t first_line,
				  int64_t offset)
{
	int64_t line = first_line, addr = 0;
	for (size_t at = 0; at + 1 < len; at += 2) {
		addr += table[at];
		if (addr > offset)
			break;
		line += (signed char)table[at + 1];
	}
	return line;
}

/* Append code point C to OUT as UTF-8; false when it does not fit. */
static bool put_utf8(uint32_t c, char *out, size_t cap, size_t *len)
{
	unsigned char b[4];
	size_t n;
	if ((c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		c = 0xfffd;
	if (c < 0x80) {
		b[0] = (unsigned char)c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = (unsigned char)(0xc0 | c >> 6);
		b[1] = (unsigned char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		b[0] = (unsigned char)(0xe0 | c >> 12);
		b[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (unsigned char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | c >> 18);
		b[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3f));
		b[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
		b[3] = (unsigned char)(0x80 | (c & 0x3f));
		n = 4;
	}
	if (*len + n >= cap)
		return false;
	memcpy(out + *len, b, n);
	*len += n;
	return true;
}

size_t an_rt_code_points_utf8(const unsigned char *units, size_t n, unsigned width, char *out,
			      size_t cap, bool *cut)
{
	size_t len = 0;
	*cut = false;
	for (size_t i = 0; i < n; i++) {
		uint32_t c = 0;
		for (unsigned k = 0; k < width; k++)
			c |= (uint32_t)units[i * width + k] << (8 * k);
		if (!put_utf8(c, out, cap, &len)) {
			*cut = true;
			break;
		}
	}
	out[len] = '\0';
	return len;
}

const char *an_rt_basename(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}
