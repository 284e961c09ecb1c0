#include "recfmt.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A bounded, growable message. */
struct msg {
	char *p;
	size_t n, cap;
	bool nomem;
};

static void msg_put(struct msg *m, const char *s, size_t len)
{
	for (size_t i = 0; i < len && !m->nomem; i++) {
		if (s[i] == '\0')
			continue;       /* a %c of 0 must not end the C string */
		if (m->n + 1 >= AN_RECFMT_MAX_MESSAGE)
			return;
		if (m->n + 2 > m->cap) {
			size_t cap = m->cap ? m->cap * 2 : 128;
			char *p = realloc(m->p, cap);
			if (!p) {
				m->nomem = true;
				return;
			}
			m->p = p;
			m->cap = cap;
		}
		m->p[m->n++] = s[i];
	}
}

/* One scanned directive.  Only the validated pieces are kept; the rebuilt
 * format is made from them, never from the raw text. */
struct directive {
	size_t len;                 /* bytes of the raw text, from the '%' */
	bool valid;
	bool minus, plus, space, hash, zero;
	bool width_star, prec_star, has_prec;
	int width, prec;
	int length;                 /* 0, 'H' (hh), 'h', 'l' (any 64-bit) */
	char conv;
};

static bool is_float_conv(char c) { return c && strchr("fFgGeEaA", c); }
static bool is_int_conv(char c) { return c && strchr("dDiuUoOxXcCbp", c); }
static bool is_string_conv(char c) { return c == 's' || c == 'S'; }

/* Parse decimal digits at *P (advancing it); false when above the limit. */
static bool scan_number(const char **p, int *out)
{
	long v = 0;
	bool ok = true;
	while (isdigit((unsigned char)**p)) {
		if (v <= AN_RECFMT_MAX_WIDTH)
			v = v * 10 + (**p - '0');
		(*p)++;
	}
	if (v > AN_RECFMT_MAX_WIDTH)
		ok = false;
	*out = (int)(v > AN_RECFMT_MAX_WIDTH ? AN_RECFMT_MAX_WIDTH : v);
	return ok;
}

static void scan_length(const char **p, struct directive *d)
{
	for (int i = 0; i < 2; i++) {
		char c = **p;
		if (c == 'h') {
			d->length = d->length == 'h' ? 'H' : (d->length ? 'l' : 'h');
		} else if (c && strchr("lLjztq", c)) {
			d->length = 'l';
		} else {
			return;
		}
		(*p)++;
	}
}

/* Scan the directive starting at the '%' at FMT. */
static void scan_directive(const char *fmt, struct directive *d)
{
	const char *p = fmt + 1;
	memset(d, 0, sizeof(*d));
	d->valid = true;
	for (int n = 0; *p && strchr("-+ #0", *p); p++, n++) {
		if (n >= 8)
			d->valid = false;
		d->minus |= *p == '-';
		d->plus |= *p == '+';
		d->space |= *p == ' ';
		d->hash |= *p == '#';
		d->zero |= *p == '0';
	}
	if (*p == '*') {
		d->width_star = true;
		p++;
	} else if (!scan_number(&p, &d->width)) {
		d->valid = false;
	}
	if (*p == '.') {
		p++;
		d->has_prec = true;
		if (*p == '*') {
			d->prec_star = true;
			p++;
		} else if (!scan_number(&p, &d->prec)) {
			d->valid = false;
		}
	}
	scan_length(&p, d);
	d->conv = *p;
	if (*p)
		p++;
	d->len = (size_t)(p - fmt);
	if (d->conv == '%' && d->len == 2)
		return;
	if (!is_float_conv(d->conv) && !is_int_conv(d->conv) && !is_string_conv(d->conv))
		d->valid = false;
}

/* Arguments as a stream. */
struct args {
	const uint64_t *v;
	size_t n, next;
};

static bool next_arg(struct args *a, uint64_t *value, size_t *index)
{
	*index = a->next;
	if (a->next >= a->n || a->next >= AN_RECFMT_MAX_ARGS) {
		a->next++;
		return false;
	}
	*value = a->v[a->next++];
	return true;
}

/* Clamp a width or precision taken from the core. */
static int clamp_field(uint64_t raw)
{
	int64_t v = (int64_t)raw;
	if (v > AN_RECFMT_MAX_WIDTH)
		return AN_RECFMT_MAX_WIDTH;
	if (v < -AN_RECFMT_MAX_WIDTH)
		return -AN_RECFMT_MAX_WIDTH;
	return (int)v;
}

/* Build "%<flags><width>[.<prec>]<length><conv>" from validated pieces;
 * FLAGS_OK lists the flags that conversion accepts. */
static void rebuild(char *out, size_t size, const struct directive *d, const char *flags_ok,
		    const char *length, char conv)
{
	char flags[8];
	size_t nf = 0;
	if (d->minus && strchr(flags_ok, '-'))
		flags[nf++] = '-';
	if (d->plus && strchr(flags_ok, '+'))
		flags[nf++] = '+';
	if (d->space && strchr(flags_ok, ' '))
		flags[nf++] = ' ';
	if (d->hash && strchr(flags_ok, '#'))
		flags[nf++] = '#';
	if (d->zero && !d->minus && strchr(flags_ok, '0'))
		flags[nf++] = '0';
	flags[nf] = '\0';
	char width[16] = "", prec[16] = "";
	if (d->width > 0)
		snprintf(width, sizeof(width), "%d", d->width);
	if (d->has_prec)
		snprintf(prec, sizeof(prec), ".%d", d->prec);
	snprintf(out, size, "%%%s%s%s%s%c", flags, width, prec, length, conv);
}

/* Binary conversion (%b), which not every printf has. */
static int format_binary(char *out, size_t size, const struct directive *d, uint64_t v)
{
	char digits[80];
	size_t nd = 0;
	do {
		digits[nd++] = (char)('0' + (v & 1));
		v >>= 1;
	} while (v && nd < 64);
	char body[160];
	size_t nb = 0;
	if (d->hash && !(nd == 1 && digits[0] == '0')) {
		body[nb++] = '0';
		body[nb++] = 'b';
	}
	for (int pad = d->has_prec ? d->prec - (int)nd : 0; pad > 0 && nb < 80; pad--)
		body[nb++] = '0';
	while (nd)
		body[nb++] = digits[--nd];
	body[nb] = '\0';
	return snprintf(out, size, d->minus ? "%-*s" : "%*s", d->width, body);
}

static int format_int(char *out, size_t size, const struct directive *d, uint64_t v)
{
	char f[64];
	char conv = d->conv;
	bool is_signed = conv == 'd' || conv == 'i' || conv == 'D';
	if (conv == 'b')
		return format_binary(out, size, d, d->length == 'H' ? (uint8_t)v
					       : d->length == 'h' ? (uint16_t)v
					       : d->length == 'l' ? v : (uint32_t)v);
	if (conv == 'p') {
		rebuild(f, sizeof(f), d, "-", "", 'p');
		return snprintf(out, size, f, (void *)(uintptr_t)v);
	}
	if (conv == 'c' || conv == 'C') {
		rebuild(f, sizeof(f), d, "-", "", 'c');
		return snprintf(out, size, f, (int)(unsigned char)v);
	}
	char c = conv == 'D' ? 'd' : conv == 'U' ? 'u' : conv == 'O' ? 'o' : conv;
	const char *flags = is_signed ? "-+ 0" : c == 'u' ? "-0" : "-#0";
	/* The library hands the 64-bit argument to printf with the directive's
	 * own length: without one (or with h, hh) printf reads an int, the low
	 * 32 bits, and converts it further for h and hh. */
	if (d->length != 'l') {
		const char *len = d->length == 'H' ? "hh" : d->length == 'h' ? "h" : "";
		rebuild(f, sizeof(f), d, flags, len, c);
		if (is_signed)
			return snprintf(out, size, f, (int)(int32_t)(uint32_t)v);
		return snprintf(out, size, f, (unsigned)(uint32_t)v);
	}
	rebuild(f, sizeof(f), d, flags, "ll", c);
	if (is_signed)
		return snprintf(out, size, f, (long long)v);
	return snprintf(out, size, f, (unsigned long long)v);
}

static int format_float(char *out, size_t size, const struct directive *d, uint64_t v)
{
	char f[64];
	double x;
	memcpy(&x, &v, sizeof(x));
	rebuild(f, sizeof(f), d, "-+ #0", "", d->conv);
	return snprintf(out, size, f, x);
}

struct strctx {
	an_recfmt_read_string_fn read;
	void *ctx;
	unsigned flags;
	unsigned *strings_read;
};

static int format_string(char *out, size_t size, const struct directive *d, uint64_t v,
			 size_t index, const struct strctx *sc)
{
	char f[64];
	char s[AN_RECFMT_MAX_STRING];
	bool library_pointer = (sc->flags & AN_RECFMT_LIBRARY) && !d->plus;
	if (!library_pointer && v == 0) {
		rebuild(f, sizeof(f), d, "-", "", 's');
		return snprintf(out, size, f, "<NULL>");
	}
	if (!library_pointer && sc->read && sc->read(sc->ctx, v, s, sizeof(s))) {
		s[sizeof(s) - 1] = '\0';
		if (sc->strings_read && index < 32)
			*sc->strings_read |= 1u << index;
		rebuild(f, sizeof(f), d, "-", "", 's');
		return snprintf(out, size, f, s);
	}
	struct directive pd = *d;
	pd.has_prec = false;
	rebuild(f, sizeof(f), &pd, "-", "", 'p');
	return snprintf(out, size, f, (void *)(uintptr_t)v);
}

/* Format one valid directive D consuming its arguments from A. */
static void format_directive(struct msg *m, const struct directive *d0, struct args *a,
			     const struct strctx *sc)
{
	struct directive d = *d0;
	uint64_t v = 0;
	size_t index;
	if (d.width_star) {
		int w = next_arg(a, &v, &index) ? clamp_field(v) : 0;
		if (w < 0) {
			d.minus = true;
			w = -w;
		}
		d.width = w;
	}
	if (d.prec_star) {
		int p = next_arg(a, &v, &index) ? clamp_field(v) : -1;
		d.has_prec = p >= 0;
		d.prec = p;
	}
	if (!next_arg(a, &v, &index)) {
		msg_put(m, "?", 1);
		return;
	}
	char out[2048];
	int n;
	if (is_float_conv(d.conv))
		n = format_float(out, sizeof(out), &d, v);
	else if (is_string_conv(d.conv))
		n = format_string(out, sizeof(out), &d, v, index, sc);
	else
		n = format_int(out, sizeof(out), &d, v);
	if (n < 0)
		return;
	msg_put(m, out, (size_t)n < sizeof(out) ? (size_t)n : sizeof(out) - 1);
}

/* An invalid directive is shown as written and runs nothing; when it has a
 * conversion character the program passed arguments for it, so they are
 * skipped to keep the following directives aligned. */
static void skip_invalid(struct msg *m, const char *raw, const struct directive *d,
			 struct args *a)
{
	msg_put(m, raw, d->len);
	if (!d->conv)
		return;
	a->next += 1u + d->width_star + d->prec_star;
}

char *an_recfmt_format(const char *format, const uint64_t *args, size_t nargs,
		    an_recfmt_read_string_fn read, void *ctx, unsigned flags,
		    unsigned *strings_read)
{
	struct msg m = {0};
	struct args a = {.v = args, .n = nargs};
	struct strctx sc = {read, ctx, flags, strings_read};
	if (strings_read)
		*strings_read = 0;
	for (const char *p = format ? format : ""; *p && !m.nomem;) {
		if (*p != '%') {
			size_t run = strcspn(p, "%");
			msg_put(&m, p, run);
			p += run;
			continue;
		}
		struct directive d;
		scan_directive(p, &d);
		if (d.valid && d.conv == '%')
			msg_put(&m, "%", 1);
		else if (d.valid)
			format_directive(&m, &d, &a, &sc);
		else
			skip_invalid(&m, p, &d, &a);
		p += d.len;
	}
	if (m.nomem) {
		free(m.p);
		return NULL;
	}
	if (!m.p)
		return strdup("");
	m.p[m.n] = '\0';
	return m.p;
}

size_t an_recfmt_count_args(const char *format)
{
	size_t n = 0;
	for (const char *p = format ? format : ""; *p;) {
		if (*p != '%') {
			p++;
			continue;
		}
		struct directive d;
		scan_directive(p, &d);
		if (d.conv && d.conv != '%')
			n += 1 + d.width_star + d.prec_star;
		p += d.len;
	}
	return n > AN_RECFMT_MAX_ARGS ? AN_RECFMT_MAX_ARGS : n;
}

char *an_recfmt_split_location(const char *format, const char **rest)
{
	*rest = format;
	if (!format)
		return NULL;
	const char *p = format;
	while (*p && *p != ':' && *p != '%' && !isspace((unsigned char)*p))
		p++;
	if (*p != ':' || p == format)
		return NULL;
	const char *digits = ++p;
	while (isdigit((unsigned char)*p))
		p++;
	if (p == digits || *p != ':')
		return NULL;
	size_t len = (size_t)(p - format);
	char *loc = malloc(len + 1);
	if (!loc)
		return NULL;
	memcpy(loc, format, len);
	loc[len] = '\0';
	*rest = p + 1;
	return loc;
}

static bool is_indent_mark(char c)
{
	return c == '>' || c == '<' || c == '=';
}

char an_recfmt_indent_mark(const char *format, size_t *pos)
{
	for (const char *p = format ? format : ""; *p;) {
		if (*p != '%') {
			if (!is_indent_mark(*p))
				return 0;
			*pos = (size_t)(p - format);
			return *p;
		}
		struct directive d;
		scan_directive(p, &d);
		if (!d.valid)
			return 0;       /* the library stops formatting there */
		p += d.len;
	}
	return 0;
}

/* The library's first buffer: "file:LINE:message", 255 bytes at most. */
#define LIBRARY_BUFFER 255

/* Append directive output PIECE as the library's snprintf into what is
 * left of its buffer does: a piece that does not fit keeps room - 1 bytes
 * (snprintf's NUL takes the last) and ends the message. */
static bool library_append(char *buf, size_t *n, const char *piece, size_t len)
{
	size_t room = LIBRARY_BUFFER - *n;
	if (len < room) {
		memcpy(buf + *n, piece, len);
		*n += len;
		return true;
	}
	memcpy(buf + *n, piece, room - 1);
	*n += room - 1;
	return false;
}

/* The message after the first two colons of the formatted line, or all of
 * it when nothing follows them (an empty message shows "file:LINE:"). */
static char *library_strip_location(const char *line)
{
	const char *p = line;
	for (int colon = 0; colon < 2; colon++)
		while (*p && *p++ != ':')
			;
	return strdup(*p ? p : line);
}

char *an_recfmt_library_message(const char *format, const uint64_t *args, size_t nargs,
				an_recfmt_read_string_fn read, void *ctx, char *mark)
{
	char buf[LIBRARY_BUFFER + 1];
	size_t n = 0;
	unsigned colons = 0;
	char last = 0;
	bool room = true;
	struct args a = {.v = args, .n = nargs};
	struct strctx sc = {read, ctx, AN_RECFMT_LIBRARY, NULL};
	*mark = 0;
	for (const char *p = format ? format : ""; *p && room && n < LIBRARY_BUFFER;) {
		if (*p != '%') {
			last = buf[n++] = *p++;
			if (last == ':') {
				colons++;
			} else if (colons == 2) {
				colons++;
				if (is_indent_mark(last)) {
					*mark = last;
					n--;
				}
			}
			continue;
		}
		struct directive d;
		scan_directive(p, &d);
		if (!d.valid)
			break;          /* the library stops at what it cannot format */
		struct msg piece = {0};
		if (d.conv == '%') {
			msg_put(&piece, "%", 1);
			a.next++;       /* the library takes an argument for %% too */
		} else
			format_directive(&piece, &d, &a, &sc);
		if (piece.nomem)
			return NULL;
		room = library_append(buf, &n, piece.p ? piece.p : "", piece.n);
		free(piece.p);
		last = d.conv;
		p += d.len;
	}
	if (room && last == '\n' && n > 0)
		n--;
	buf[n] = '\0';
	return library_strip_location(buf);
}
