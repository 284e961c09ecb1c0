/* Described runtimes, reading a stack: its entries, each matched to a kind
 * and rendered through the kind's templates.
 *
 * Everything read from the core is untrusted: the stack object and every
 * entry are checked readable before they are read, counts are bounded by
 * the description's max (and its capacity), lists are cycle-checked, and a
 * string that cannot be read shows empty with a warning (never a guess). */
#include "runtime_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrset.h"
#include "rtdecode.h"
#include "../base/array.h"

#define STRING_LIMIT 1024u          /* bytes of one string read from the core */
#define BYTES_LIMIT 65536u          /* bytes of one counted string a decoder reads */
#define TEXT_LIMIT 4096u            /* bytes of one rendered name or detail */
#define WARN_LIMIT 8u               /* entry problems warned per stack */

static void walk_warn(struct an_rt_walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Entry problems: the first WARN_LIMIT each, the rest counted. */
static void walk_warn(struct an_rt_walk *w, const char *fmt, ...)
{
	char msg[320];
	va_list ap;
	if (w->warned >= WARN_LIMIT) {
		w->unwarned++;
		return;
	}
	w->warned++;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	core_warn(w->rs->core, "%s: %s", w->context, msg);
}

enum an_rt_value_state an_rt_slot_read(struct core *core, uint64_t obj, const unsigned char *buf,
				       const struct an_rt_slot *sl, bool address, uint64_t *v)
{
	uint64_t at = obj;
	*v = 0;
	for (unsigned i = 0; i < sl->nhops; i++) {
		uint64_t p = 0;
		if (i == 0 && buf)
			memcpy(&p, buf + sl->hops[0], 8);
		else if (!core_read_u64(core, at + sl->hops[i], &p))
			return AN_RT_VALUE_UNREADABLE;
		if (p == 0)
			return AN_RT_VALUE_NULL;
		at = p;
	}
	if (address) {
		*v = at + sl->offset;
		return AN_RT_VALUE_READ;
	}
	if (buf && sl->nhops == 0) {
		memcpy(v, buf + sl->offset, sl->size);   /* little-endian: the low bytes */
		return AN_RT_VALUE_READ;
	}
	return core_read_bytes(core, at + sl->offset, v, sl->size) ? AN_RT_VALUE_READ
								   : AN_RT_VALUE_UNREADABLE;
}

/* Field F (its slot SL) of the object at OBJ, masked and shifted. */
static enum an_rt_value_state read_field(struct core *core, uint64_t obj, const unsigned char *buf,
					 const struct an_rt_field *f, const struct an_rt_slot *sl,
					 uint64_t *v)
{
	enum an_rt_value_state st = an_rt_slot_read(core, obj, buf, sl, f->address, v);
	*v = (*v & f->mask) >> f->shift;
	return st;
}

static enum an_rt_value_state field_value(const struct an_rt_walk *w, uint64_t entry,
					  const unsigned char *buf, size_t field, uint64_t *v)
{
	return read_field(w->rs->core, entry, buf, &w->r->d->entry.fields[field],
			  &w->r->fields[field], v);
}

/* Whether M holds for the object at OBJ: FIELDS and their SLOTS are what
 * its conditions name.  A field that cannot be read has no bits set. */
static bool matches(struct core *core, uint64_t obj, const unsigned char *buf,
		    const struct an_rt_field *fields, const struct an_rt_slot *slots,
		    const struct an_rt_match *m)
{
	for (size_t i = 0; i < m->nconds; i++) {
		size_t k = m->conds[i].field;
		uint64_t v;
		read_field(core, obj, buf, &fields[k], &slots[k], &v);
		if ((v & m->conds[i].bits) != m->conds[i].bits)
			return false;
	}
	return true;
}

static bool entry_matches(const struct an_rt_walk *w, uint64_t entry, const unsigned char *buf,
			  const struct an_rt_match *m)
{
	return matches(w->rs->core, entry, buf, w->r->d->entry.fields, w->r->fields, m);
}

int64_t an_rt_as_signed(uint64_t v, uint64_t size)
{
	if (size < 8 && (v >> (8 * size - 1)) & 1)
		v |= UINT64_MAX << (8 * size);
	return (int64_t)v;
}

struct text {
	char buf[TEXT_LIMIT];
	size_t len;
};

static void text_add(struct text *t, const char *s, size_t n)
{
	if (n > sizeof(t->buf) - 1 - t->len)
		n = sizeof(t->buf) - 1 - t->len;
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	t->buf[t->len] = '\0';
}

/* The string a field points at: from the core, else the mapped file. */
static void add_string(struct an_rt_walk *w, struct text *t, uint64_t entry, const char *field,
		       uint64_t ptr)
{
	char s[STRING_LIMIT];
	if (ptr == 0)
		return;                 /* no string: the template's text stays */
	if (dbg_read_module_string(w->rs->s, ptr, s, sizeof(s))) {
		text_add(t, s, strlen(s));
		return;
	}
	size_t got = strlen(s);
	if (got == 0) {
		walk_warn(w, "entry 0x%" PRIx64 ": %s 0x%" PRIx64 " is not readable", entry, field, ptr);
		return;
	}
	walk_warn(w, "entry 0x%" PRIx64 ": %s at 0x%" PRIx64 " is cut after %zu bytes (%s)", entry,
		  field, ptr, got, got + 1 == sizeof(s) ? "too long" : "unreadable after");
	text_add(t, s, got);
	text_add(t, "...", 3);
}

/* A counted string read: its characters' raw bytes. */
struct counted {
	size_t len;                 /* bytes read into the caller's buffer */
	unsigned width;
	bool code_points;
	bool cut;                   /* longer than the buffer */
};

/* The counted string of kind KIND at OBJ into OUT (at most CAP bytes): the
 * first form whose `if` holds says where its characters are and how wide.
 * NULL, or why it cannot be read (a static string). */
static const char *read_counted(struct core *core, const struct an_rt_resolved *r, size_t kind,
				uint64_t obj, unsigned char *out, size_t cap, struct counted *c)
{
	const struct an_rt_string_kind *k = &r->d->strings[kind];
	const struct an_rt_resolved_string *rk = &r->strings[kind];
	uint64_t n, width;
	for (size_t i = 0; i < k->nforms; i++) {
		const struct an_rt_string_form *f = &k->forms[i];
		if (!matches(core, obj, NULL, k->fields, rk->fields, &f->match))
			continue;
		if (read_field(core, obj, NULL, &k->fields[f->length], &rk->fields[f->length], &n) !=
		    AN_RT_VALUE_READ)
			return "is not readable";
		width = f->width;
		if (f->width_field != AN_RT_NONE &&
		    read_field(core, obj, NULL, &k->fields[f->width_field], &rk->fields[f->width_field],
			       &width) != AN_RT_VALUE_READ)
			return "is not readable";
		if (width != 1 && width != 2 && width != 4)
			return "has characters neither 1, 2 nor 4 bytes wide";
		c->width = (unsigned)width;
		c->code_points = f->code_points;
		c->cut = n > cap / width;
		c->len = c->cut ? cap / width * width : n * width;
		uint64_t data = obj + rk->data[i];
		if (data < obj || !core_read_bytes(core, data, out, c->len))
			return "has characters that are not readable";
		return NULL;
	}
	return core_is_readable(core, obj, 1) ? "matches no form of its string kind" : "is not readable";
}

/* The counted string field F points at (PTR), as UTF-8. */
static void add_counted(struct an_rt_walk *w, struct text *t, uint64_t entry, const struct an_rt_field *f,
			uint64_t ptr)
{
	unsigned char raw[STRING_LIMIT];
	char utf8[STRING_LIMIT];
	struct counted c;
	bool cut = false;
	if (ptr == 0)
		return;
	const char *why = read_counted(w->rs->core, w->r, f->string, ptr, raw, sizeof(raw) - 1, &c);
	if (why) {
		walk_warn(w, "entry 0x%" PRIx64 ": %s 0x%" PRIx64 " %s", entry, f->name, ptr, why);
		return;
	}
	size_t len = c.len;
	if (c.code_points) {
		len = an_rt_code_points_utf8(raw, c.len / c.width, c.width, utf8, sizeof(utf8), &cut);
		text_add(t, utf8, len);
	} else {
		text_add(t, (const char *)raw, len);
	}
	if (c.cut || cut) {
		walk_warn(w, "entry 0x%" PRIx64 ": %s at 0x%" PRIx64 " is cut after %zu bytes (too long)",
			  entry, f->name, ptr, len);
		text_add(t, "...", 3);
	}
}

static void add_field(struct an_rt_walk *w, struct text *t, const unsigned char *buf, uint64_t entry,
		      size_t field);

/* The byte offset in its code of the instruction a line decoder's F
 * reads: 3.11's instruction pointer less its code's address, 3.10's
 * instruction index doubled, 3.8's offset itself.  False: no offset. */
static bool line_offset(struct an_rt_walk *w, const unsigned char *buf, uint64_t entry,
			const struct an_rt_field *f, int64_t *offset)
{
	const struct an_rt_field *fields = w->r->d->entry.fields;
	uint64_t instr, code = 0;
	if (field_value(w, entry, buf, f->args[2], &instr) != AN_RT_VALUE_READ ||
	    (f->decoder == AN_RT_DECODER_CPYTHON311_LINE &&
	     field_value(w, entry, buf, f->args[3], &code) != AN_RT_VALUE_READ))
		return false;
	int64_t v = f->decoder == AN_RT_DECODER_CPYTHON311_LINE
			    ? (int64_t)(instr - code)
			    : an_rt_as_signed(instr, w->r->fields[f->args[2]].size);
	if (v > (INT64_C(1) << 30) || v < -(INT64_C(1) << 30)) {
		if (f->decoder == AN_RT_DECODER_CPYTHON311_LINE)
			walk_warn(w, "entry 0x%" PRIx64 ": %s 0x%" PRIx64 " is not in its code at 0x%"
				  PRIx64, entry, fields[f->args[2]].name, instr, code);
		else
			walk_warn(w, "entry 0x%" PRIx64 ": %s %" PRId64 " is no instruction's", entry,
				  fields[f->args[2]].name, v);
		return false;
	}
	if (f->decoder == AN_RT_DECODER_CPYTHON311_LINE)
		v = v / 2 * 2;
	else if (f->decoder == AN_RT_DECODER_CPYTHON310_LINE)
		v *= 2;
	*offset = v;
	return true;
}

/* A line decoder over field F's inputs; false: no line. */
static bool decode_line(struct an_rt_walk *w, const unsigned char *buf, uint64_t entry,
			const struct an_rt_field *f, int64_t *line)
{
	const struct an_rt_field *fields = w->r->d->entry.fields;
	uint64_t table, first;
	int64_t offset;
	struct counted c;
	if (field_value(w, entry, buf, f->args[0], &table) != AN_RT_VALUE_READ || table == 0 ||
	    field_value(w, entry, buf, f->args[1], &first) != AN_RT_VALUE_READ ||
	    !line_offset(w, buf, entry, f, &offset))
		return false;       /* the strings that read the same fields said why */
	if (!w->table && !(w->table = malloc(BYTES_LIMIT))) {
		w->nomem = true;
		return false;
	}
	unsigned char *bytes = w->table;
	const char *why = read_counted(w->rs->core, w->r, fields[f->args[0]].string, table, bytes,
				       BYTES_LIMIT, &c);
	if (!why && c.cut)
		why = "is longer than the decoder reads";
	if (why) {
		walk_warn(w, "entry 0x%" PRIx64 ": %s 0x%" PRIx64 " %s", entry, fields[f->args[0]].name,
			  table, why);
		return false;
	}
	int64_t first_line = an_rt_as_signed(first, w->r->fields[f->args[1]].size);
	switch (f->decoder) {
	case AN_RT_DECODER_CPYTHON310_LINE:
		return an_rt_cpython310_line(bytes, c.len, first_line, offset, line);
	case AN_RT_DECODER_CPYTHON_LNOTAB_LINE:
		*line = an_rt_cpython_lnotab_line(bytes, c.len, first_line, offset);
		return true;
	default:
		return an_rt_cpython311_line(bytes, c.len, first_line, offset, line);
	}
}

/* decode_line() once per entry and field. */
static bool entry_line(struct an_rt_walk *w, const unsigned char *buf, uint64_t entry,
		       const struct an_rt_field *f, int64_t *line)
{
	if (!w->line.done || w->line.entry != entry || w->line.field != f) {
		w->line.ok = decode_line(w, buf, entry, f, &w->line.line);
		w->line.done = true;
		w->line.entry = entry;
		w->line.field = f;
	}
	*line = w->line.line;
	return w->line.ok;
}

/* A decoder field's result. */
static void add_decoded(struct an_rt_walk *w, struct text *t, const unsigned char *buf, uint64_t entry,
			const struct an_rt_field *f)
{
	struct text path = { .len = 0 };
	char num[32];
	int64_t line;
	switch (f->decoder) {
	case AN_RT_DECODER_BASENAME:
		path.buf[0] = '\0';
		add_field(w, &path, buf, entry, f->args[0]);
		text_add(t, an_rt_basename(path.buf), strlen(an_rt_basename(path.buf)));
		return;
	case AN_RT_DECODER_CPYTHON311_LINE:
	case AN_RT_DECODER_CPYTHON310_LINE:
	case AN_RT_DECODER_CPYTHON_LNOTAB_LINE:
		if (entry_line(w, buf, entry, f, &line))
			snprintf(num, sizeof(num), "%" PRId64, line);
		else
			snprintf(num, sizeof(num), "?");
		text_add(t, num, strlen(num));
		return;
	case AN_RT_DECODER_NONE:
		return;
	}
}

static void add_field(struct an_rt_walk *w, struct text *t, const unsigned char *buf, uint64_t entry,
		      size_t field)
{
	const struct an_rt_field *f = &w->r->d->entry.fields[field];
	uint64_t v;
	char num[32];
	if (f->decoder) {
		add_decoded(w, t, buf, entry, f);
		return;
	}
	enum an_rt_value_state st = field_value(w, entry, buf, field, &v);
	if (st == AN_RT_VALUE_UNREADABLE)
		walk_warn(w, "entry 0x%" PRIx64 ": %s (%s) is not readable", entry, f->name,
			  f->member.path);
	if (st != AN_RT_VALUE_READ)
		return;
	switch (f->as) {
	case AN_RT_AS_STRING:
		add_string(w, t, entry, f->name, v);
		return;
	case AN_RT_AS_COUNTED:
		add_counted(w, t, entry, f, v);
		return;
	case AN_RT_AS_NUMBER:
		snprintf(num, sizeof(num), "%" PRIu64, v);
		break;
	case AN_RT_AS_HEX:
		snprintf(num, sizeof(num), "0x%" PRIx64, v);
		break;
	}
	text_add(t, num, strlen(num));
}

/* TEMPLATE over the entry in BUF; NULL when it comes out empty. */
static char *render(struct an_rt_walk *w, const struct an_rt_template *tpl, const unsigned char *buf,
		    uint64_t entry)
{
	struct text t = { .len = 0 };
	t.buf[0] = '\0';
	for (size_t i = 0; i < tpl->npieces; i++) {
		const struct an_rt_piece *p = &tpl->pieces[i];
		if (p->text)
			text_add(&t, p->text, strlen(p->text));
		else
			add_field(w, &t, buf, entry, p->field);
	}
	if (t.len == 0)
		return NULL;
	char *s = strdup(t.buf);
	if (!s)
		w->nomem = true;
	return s;
}

/* Decode the entry at ADDR (its bytes in BUF) and append it. */
static void add_entry(struct an_rt_walk *w, uint64_t addr, const unsigned char *buf)
{
	const struct an_rt_desc *d = w->r->d;
	const struct an_rt_kind *kind = NULL;
	for (size_t i = 0; i < d->nkinds && !kind; i++)
		if (entry_matches(w, addr, buf, &d->kinds[i].match))
			kind = &d->kinds[i];
	struct an_rt_entry *e = base_array_push(&w->v, &w->n, &w->cap, sizeof(*w->v));
	if (!e) {
		w->nomem = true;
		return;
	}
	e->addr = addr;
	e->kind = kind;
	w->line.done = false;   /* a new entry (perhaps at the address of a freed one) */
	e->boundary = d->attach.has_boundary && entry_matches(w, addr, buf, &d->attach.boundary);
	if (!kind) {
		w->unmatched++;
		return;
	}
	if (kind->anchor != AN_RT_NONE) {
		field_value(w, addr, buf, kind->anchor, &e->anchor);
		e->has_anchor = e->anchor != 0;
	}
	if (kind->show == AN_RT_SHOW_HIDDEN)
		return;
	e->name = render(w, &kind->name, buf, addr);
	if (!e->name && kind->fallback.given)
		e->name = render(w, &kind->fallback, buf, addr);
	e->detail = render(w, &kind->detail, buf, addr);
}

bool an_rt_read_uint(struct core *core, uint64_t obj, const struct an_rt_slot *sl, uint64_t *v)
{
	return an_rt_slot_read(core, obj, NULL, sl, false, v) == AN_RT_VALUE_READ;
}

/* An array stack: COUNT entries (at most CAPACITY, at most max) from the
 * array's first, the outermost; appended innermost first. */
static void read_array(struct an_rt_walk *w, uint64_t obj)
{
	const struct an_rt_resolved *r = w->r;
	struct core *core = w->rs->core;
	uint64_t count, capacity, base;
	unsigned char buf[AN_RT_ENTRY_LIMIT];
	if (!an_rt_read_uint(core, obj, &r->count, &count) || !an_rt_read_uint(core, obj, &r->array, &base) ||
	    (r->has_capacity && !an_rt_read_uint(core, obj, &r->capacity, &capacity))) {
		walk_warn(w, "the stack object 0x%" PRIx64 " is not readable", obj);
		return;
	}
	if (r->has_capacity && count > capacity) {
		walk_warn(w, "%" PRIu64 " entries but room for %" PRIu64 "; the %" PRIu64
			  " past the room were never stored", count, capacity, count - capacity);
		count = capacity;
	}
	uint64_t first = 0;
	if (count > r->d->stack.max) {
		first = count - r->d->stack.max;
		walk_warn(w, "%" PRIu64 " entries, more than the %" PRIu64 " read; the outermost %" PRIu64
			  " are left out", count, r->d->stack.max, first);
	}
	if (count == 0)
		return;
	/* count - first <= max and entries are at most AN_RT_ENTRY_LIMIT bytes:
	 * only FIRST's offset can overflow */
	uint64_t span = (count - first) * r->entry_size;
	bool wraps = first > UINT64_MAX / r->entry_size || base > UINT64_MAX - first * r->entry_size;
	if (wraps || !core_pointer_ok(core, base + first * r->entry_size, span, r->entry_align)) {
		walk_warn(w, "the array at 0x%" PRIx64 " (%" PRIu64 " entries of %" PRIu64 " bytes) %s",
			  base, count, r->entry_size, base == 0 ? "is NULL" : "is not readable");
		return;
	}
	for (uint64_t i = count; i-- > first && !w->nomem;) {
		uint64_t at = base + i * r->entry_size;
		if (core_read_bytes(core, at, buf, r->entry_size))
			add_entry(w, at, buf);
		else
			walk_warn(w, "entry %" PRIu64 " at 0x%" PRIx64 " is not readable", i, at);
	}
}

/* A list stack: from the stack object's top, innermost first. */
static void read_list(struct an_rt_walk *w, uint64_t obj)
{
	const struct an_rt_resolved *r = w->r;
	struct core *core = w->rs->core;
	struct an_addr_set seen = { 0 };
	unsigned char buf[AN_RT_ENTRY_LIMIT];
	uint64_t at;
	switch (an_rt_slot_read(core, obj, NULL, &r->top, false, &at)) {
	case AN_RT_VALUE_READ:
		break;
	case AN_RT_VALUE_NULL:
		return;             /* no frames yet */
	case AN_RT_VALUE_UNREADABLE:
		walk_warn(w, "the stack object 0x%" PRIx64 "'s %s is not readable", obj,
			  r->d->stack.top.path);
		return;
	}
	for (uint64_t n = 0; at && !w->nomem; n++) {
		if (n == r->d->stack.max) {
			walk_warn(w, "more than %" PRIu64 " entries; the list is cut at 0x%" PRIx64,
				  r->d->stack.max, at);
			break;
		}
		if (an_addr_set_has(&seen, at)) {
			walk_warn(w, "entry 0x%" PRIx64 " repeats (a cycle); the list is cut there", at);
			break;
		}
		if (!core_pointer_ok(core, at, r->entry_size, r->entry_align) ||
		    !core_read_bytes(core, at, buf, r->entry_size)) {
			walk_warn(w, "entry 0x%" PRIx64 " %s; the list is cut there", at,
				  at % r->entry_align ? "is misaligned" : "is not readable");
			break;
		}
		if (an_addr_set_add(&seen, at) < 0)
			w->nomem = true;
		add_entry(w, at, buf);
		uint64_t next;
		if (an_rt_slot_read(core, at, buf, &r->next, false, &next) == AN_RT_VALUE_UNREADABLE)
			walk_warn(w, "entry 0x%" PRIx64 ": its %s is not readable; the list is cut there",
				  at, r->d->stack.next.path);
		at = next;
	}
	an_addr_set_deinit(&seen);
}

void an_rt_read_stack(struct an_rt_walk *w, uint64_t obj)
{
	if (!core_pointer_ok(w->rs->core, obj, w->r->stack_extent, 0)) {
		walk_warn(w, "the stack object 0x%" PRIx64 " is not readable", obj);
		return;
	}
	if (w->r->d->stack.kind == AN_RT_STACK_ARRAY)
		read_array(w, obj);
	else
		read_list(w, obj);
}

void an_rt_read_entry(struct an_rt_walk *w, uint64_t at)
{
	unsigned char buf[AN_RT_ENTRY_LIMIT];
	if (core_pointer_ok(w->rs->core, at, w->r->entry_size, w->r->entry_align) &&
	    core_read_bytes(w->rs->core, at, buf, w->r->entry_size))
		add_entry(w, at, buf);
	else
		walk_warn(w, "entry 0x%" PRIx64 " %s", at,
			  at % w->r->entry_align ? "is misaligned" : "is not readable");
}

void an_rt_walk_deinit(struct an_rt_walk *w)
{
	for (size_t i = 0; i < w->n; i++) {
		free(w->v[i].name);
		free(w->v[i].detail);
	}
	free(w->v);
	free(w->table);
}

void an_rt_walk_summary(struct an_rt_walk *w)
{
	if (w->shown_before)
		return;                 /* its problems are the other reading's */
	if (w->unmatched)
		core_warn(w->rs->core, "%s: %zu %s no kind; not shown", w->context, w->unmatched,
			  w->unmatched == 1 ? "entry matches" : "entries match");
	if (w->unwarned)
		core_warn(w->rs->core, "%s: %u more problems with entries", w->context, w->unwarned);
	if (w->nomem)
		core_warn(w->rs->core, "%s: out of memory reading the stack", w->context);
}
