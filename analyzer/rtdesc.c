/* Runtime descriptions: loading and checking the JSON (jansson).
 *
 * Every problem is reported with the JSON path where it is ("$.kinds[1].if")
 * and stops the load: a description is either wholly understood or refused.
 * Keys that mean nothing here are refused too, so a misspelt key is never
 * silently ignored; "comment" is accepted (and ignored) in every object whose
 * keys are not names of the description's own (fields, layout members). */
#include "rtdesc.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/array.h"
#include "../corefile/core.h"

#define DESC_FILE_LIMIT (1u << 20)
#define NAME_LIMIT 64u
#define OFFSET_LIMIT (1u << 24)

struct parser {
	const char *file;
	char path[512];             /* JSON path of the value being read */
	size_t len;
	struct core_error *err;
	struct an_rt_desc *d;
	const struct an_rt_field *fields;   /* what `if` and templates name */
	size_t nfields;
	char fields_where[96];      /* where they are: "entry.fields" */
};

/* ---- messages and the JSON path ---------------------------------------- */

static bool fail(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool fail(struct parser *p, const char *fmt, ...)
{
	char msg[384];
	va_list ap;
	if (p->err)
		return false;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->err = core_error_create(CORE_ERROR_USAGE, "%s: %s: %s", p->file, p->path, msg);
	return false;
}

static bool nomem(struct parser *p)
{
	if (!p->err)
		p->err = &core_error_nomem;
	return false;
}

/* Append to the JSON path; returns its length before, for pop(). */
static size_t push(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static size_t push(struct parser *p, const char *fmt, ...)
{
	size_t old = p->len;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(p->path + p->len, sizeof(p->path) - p->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		p->len = p->len + (size_t)n < sizeof(p->path) ? p->len + (size_t)n : sizeof(p->path) - 1;
	return old;
}

static size_t push_key(struct parser *p, const char *key)
{
	return push(p, ".%s", key);
}

static size_t push_index(struct parser *p, size_t i)
{
	return push(p, "[%zu]", i);
}

static void pop(struct parser *p, size_t old)
{
	p->len = old;
	p->path[old] = '\0';
}

static char *where_now(struct parser *p)
{
	char *w = strdup(p->path);
	if (!w)
		nomem(p);
	return w;
}

/* ---- JSON values --------------------------------------------------------- */

/* OBJ must be an object with no key outside ALLOWED (NULL-terminated);
 * "comment" too when COMMENT. */
static bool check_object(struct parser *p, json_t *obj, const char *const *allowed, bool comment)
{
	const char *key;
	json_t *v;
	if (!json_is_object(obj))
		return fail(p, "an object is expected");
	json_object_foreach(obj, key, v) {
		bool ok = comment && strcmp(key, "comment") == 0;
		for (size_t i = 0; !ok && allowed[i]; i++)
			ok = strcmp(key, allowed[i]) == 0;
		if (!ok) {
			push_key(p, key);
			return fail(p, "unknown key");
		}
	}
	return true;
}

/* OBJ[KEY]; NULL (and a failure when REQUIRED) when absent. */
static json_t *member(struct parser *p, json_t *obj, const char *key, bool required)
{
	json_t *v = json_object_get(obj, key);
	if (!v && required)
		fail(p, "\"%s\" is missing", key);
	return v;
}

static bool to_string(struct parser *p, json_t *v, char **out)
{
	if (!json_is_string(v) || json_string_length(v) == 0)
		return fail(p, "a non-empty string is expected");
	if (strlen(json_string_value(v)) != json_string_length(v))
		return fail(p, "the string holds a NUL character");
	*out = strdup(json_string_value(v));
	return *out ? true : nomem(p);
}

/* OBJ[KEY] as a string into *OUT (left NULL when absent and optional). */
static bool get_string(struct parser *p, json_t *obj, const char *key, bool required, char **out)
{
	json_t *v = member(p, obj, key, required);
	if (!v)
		return !required;
	size_t old = push_key(p, key);
	bool ok = to_string(p, v, out);
	if (ok)
		pop(p, old);
	return ok;
}

/* A number: a JSON integer >= 0, or a string "0x..." or decimal. */
static bool to_number(struct parser *p, json_t *v, uint64_t *out)
{
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return true;
	}
	if (!json_is_string(v))
		return fail(p, "a number (or a \"0x...\" string) is expected");
	const char *s = json_string_value(v);
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *digits = hex ? s + 2 : s;
	char *end;
	errno = 0;
	unsigned long long n = strtoull(digits, &end, hex ? 16 : 10);
	if (!*digits || *end || errno || digits[0] == '-' || digits[0] == '+' || digits[0] == ' ')
		return fail(p, "\"%s\" is not a number", s);
	*out = n;
	return true;
}

static bool get_number(struct parser *p, json_t *obj, const char *key, uint64_t max, bool *given,
		       uint64_t *out)
{
	json_t *v = member(p, obj, key, false);
	*given = v != NULL;
	if (!v)
		return true;
	size_t old = push_key(p, key);
	if (!to_number(p, v, out))
		return false;
	if (*out > max)
		return fail(p, "%llu is larger than %llu", (unsigned long long)*out,
			    (unsigned long long)max);
	pop(p, old);
	return true;
}

static bool get_bool(struct parser *p, json_t *obj, const char *key, bool *out)
{
	json_t *v = member(p, obj, key, false);
	if (!v)
		return true;
	if (!json_is_boolean(v)) {
		push_key(p, key);
		return fail(p, "true or false is expected");
	}
	*out = json_is_true(v);
	return true;
}

/* A member path: names joined by "." (into a nested struct) or "->"
 * (through a pointer), at most AN_RT_HOPS_LIMIT arrows. */
static bool valid_path(const char *s)
{
	unsigned arrows = 0;
	for (const char *c = s;;) {
		size_t n = strcspn(c, ".-");
		if (n == 0)
			return false;
		c += n;
		if (*c == '\0')
			return true;
		if (c[0] == '.')
			c++;
		else if (c[0] == '-' && c[1] == '>' && ++arrows <= AN_RT_HOPS_LIMIT)
			c += 2;
		else
			return false;
	}
}

/* M's path from the string V, its JSON path the current one. */
static bool to_member(struct parser *p, json_t *v, struct an_rt_member *m)
{
	if (!to_string(p, v, &m->path))
		return false;
	if (!valid_path(m->path))
		return fail(p, "a member is names joined by \".\" or \"->\" (at most %u arrows)",
			    AN_RT_HOPS_LIMIT);
	m->where = where_now(p);
	return m->where != NULL;
}

static bool get_member(struct parser *p, json_t *obj, const char *key, bool required,
		       struct an_rt_member *m)
{
	json_t *v = member(p, obj, key, required);
	if (!v)
		return !required;
	size_t old = push_key(p, key);
	if (!to_member(p, v, m))
		return false;
	pop(p, old);
	return true;
}

/* ---- the parts of a description ----------------------------------------- */

static bool part(struct parser *p, json_t *top, const char *key, bool required,
		 bool (*fn)(struct parser *, json_t *));
static bool parse_match(struct parser *p, json_t *obj, struct an_rt_match *m);
static size_t field_index(const struct parser *p, const char *name, size_t len);

static bool valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > NAME_LIMIT)
		return false;
	for (; *s; s++)
		if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') &&
		    !(*s >= '0' && *s <= '9') && !strchr("_.+-", *s))
			return false;
	return true;
}

/* root.lists[i]: {"type", "head", "next", "max"}. */
static bool parse_list(struct parser *p, json_t *v, struct an_rt_list *l)
{
	static const char *const keys[] = {"type", "head", "next", "max", NULL};
	bool given;
	l->max = AN_RT_LIST_MAX_DEFAULT;
	return check_object(p, v, keys, true) && get_string(p, v, "type", true, &l->type) &&
	       get_member(p, v, "head", true, &l->head) && get_member(p, v, "next", true, &l->next) &&
	       get_number(p, v, "max", AN_RT_MAX_LIMIT, &given, &l->max) &&
	       (l->max > 0 || fail(p, "\"max\" is 0"));
}

static bool parse_lists(struct parser *p, json_t *lists)
{
	struct an_rt_desc *d = p->d;
	if (!json_is_array(lists) || json_array_size(lists) == 0 || json_array_size(lists) > 8)
		return fail(p, "an array of 1 to 8 lists is expected");
	d->root.lists = calloc(json_array_size(lists), sizeof(*d->root.lists));
	if (!d->root.lists)
		return nomem(p);
	for (size_t i = 0; i < json_array_size(lists); i++) {
		size_t old = push_index(p, i);
		if (!parse_list(p, json_array_get(lists, i), &d->root.lists[d->root.nlists++]))
			return false;
		pop(p, old);
	}
	return true;
}

/* root.require: {"symbol", "size", "mask", "equals"} or {"module"}. */
static bool parse_require(struct parser *p, json_t *v)
{
	static const char *const keys[] = {"symbol", "size", "mask", "equals", "module", NULL};
	struct an_rt_desc *d = p->d;
	bool given, masked, equals;
	d->root.require.size = 8;
	d->root.require.mask = UINT64_MAX;
	if (json_is_object(v) && json_object_get(v, "module")) {
		if (!check_object(p, v, (const char *const[]){"module", NULL}, true))
			return false;
		return get_string(p, v, "module", true, &d->root.require.module) &&
		       (valid_name(d->root.require.module) ||
			fail(p, "a module's name is letters, digits and _.+-"));
	}
	if (!check_object(p, v, keys, true) ||
	    !get_string(p, v, "symbol", true, &d->root.require.symbol) ||
	    !get_number(p, v, "size", 8, &given, &d->root.require.size) ||
	    !get_number(p, v, "mask", UINT64_MAX, &masked, &d->root.require.mask) ||
	    !get_number(p, v, "equals", UINT64_MAX, &equals, &d->root.require.equals))
		return false;
	uint64_t size = d->root.require.size;
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return fail(p, "\"size\" is 1, 2, 4 or 8");
	return equals || fail(p, "\"equals\" is missing");
}

/* root.thread_is: "tid" (the default) or "pthread" (pthread_self()'s value). */
static bool parse_thread_is(struct parser *p, json_t *v)
{
	const char *s = json_is_string(v) ? json_string_value(v) : "";
	if (strcmp(s, "tid") == 0)
		p->d->root.thread_is = AN_RT_THREAD_TID;
	else if (strcmp(s, "pthread") == 0)
		p->d->root.thread_is = AN_RT_THREAD_PTHREAD;
	else
		return fail(p, "\"tid\" or \"pthread\" is expected");
	return true;
}

static bool parse_root(struct parser *p, json_t *root)
{
	static const char *const keys[] = {"symbol", "tls", "pthread_key", "pointer", "lists",
					   "thread", "thread_is", "require", NULL};
	static const char *const kinds[] = {"symbol", "tls", "pthread_key"};
	struct an_rt_desc *d = p->d;
	if (!check_object(p, root, keys, true))
		return false;
	size_t given = 0;
	for (size_t k = 0; k < 3; k++)
		if (json_object_get(root, kinds[k])) {
			given++;
			d->root.kind = (enum an_rt_root_kind)k;
		}
	if (given != 1)
		return fail(p, "exactly one of \"symbol\", \"tls\" and \"pthread_key\" is expected");
	if (!get_string(p, root, kinds[d->root.kind], true, &d->root.symbol) ||
	    !get_bool(p, root, "pointer", &d->root.pointer) ||
	    !part(p, root, "lists", false, parse_lists) ||
	    !part(p, root, "require", false, parse_require) ||
	    !part(p, root, "thread_is", false, parse_thread_is))
		return false;
	return get_member(p, root, "thread", false, &d->root.thread);
}

static bool parse_stack(struct parser *p, json_t *stack)
{
	static const char *const keys[] = {"type", "array", "count", "capacity", "top", "next", "max",
					   NULL};
	struct an_rt_desc *d = p->d;
	bool given;
	if (!check_object(p, stack, keys, true) || !get_string(p, stack, "type", true, &d->stack.type))
		return false;
	bool array = json_object_get(stack, "array") || json_object_get(stack, "count") ||
		     json_object_get(stack, "capacity");
	bool list = json_object_get(stack, "top") || json_object_get(stack, "next");
	if (array == list)
		return fail(p, "an array stack (\"array\", \"count\") or a list (\"top\", \"next\") is "
			    "expected");
	d->stack.kind = array ? AN_RT_STACK_ARRAY : AN_RT_STACK_LIST;
	bool ok = array ? get_member(p, stack, "array", true, &d->stack.array) &&
			  get_member(p, stack, "count", true, &d->stack.count) &&
			  get_member(p, stack, "capacity", false, &d->stack.capacity)
			: get_member(p, stack, "top", true, &d->stack.top) &&
			  get_member(p, stack, "next", true, &d->stack.next);
	d->stack.max = AN_RT_MAX_DEFAULT;
	return ok && get_number(p, stack, "max", AN_RT_MAX_LIMIT, &given, &d->stack.max) &&
	       (d->stack.max > 0 || fail(p, "\"max\" is 0"));
}

/* The decoders a field may name, and their inputs (README). */
static const struct {
	const char *name;
	enum an_rt_decoder id;
	const char *args[AN_RT_DECODER_ARGS + 1];
} decoders[] = {
	{"basename", AN_RT_DECODER_BASENAME, {"path", NULL}},
	{"cpython-3.11-line", AN_RT_DECODER_CPYTHON311_LINE,
	 {"table", "first_line", "instruction", "code", NULL}},
	{"cpython-3.10-line", AN_RT_DECODER_CPYTHON310_LINE, {"table", "first_line", "instruction", NULL}},
	{"cpython-lnotab-line", AN_RT_DECODER_CPYTHON_LNOTAB_LINE, {"table", "first_line", "offset", NULL}},
};

static size_t string_kind_index(const struct an_rt_desc *d, const char *name)
{
	for (size_t i = 0; i < d->nstrings; i++)
		if (strcmp(d->strings[i].name, name) == 0)
			return i;
	return AN_RT_NONE;
}

/* FIELD's "as": a format or the name of a string kind. */
static bool parse_as(struct parser *p, json_t *as, struct an_rt_field *f)
{
	static const char *const formats[] = {"string", "number", "hex", NULL};
	size_t old = push_key(p, "as");
	const char *s = json_is_string(as) ? json_string_value(as) : "";
	bool found = false;
	for (size_t i = 0; formats[i] && !found; i++)
		if (strcmp(s, formats[i]) == 0) {
			f->as = (enum an_rt_format)i;
			found = true;
		}
	if (!found && (f->string = string_kind_index(p->d, s)) != AN_RT_NONE) {
		f->as = AN_RT_AS_COUNTED;
		found = true;
	}
	if (!found)
		return fail(p, "\"string\", \"number\", \"hex\" or the name of one of \"strings\" "
			    "is expected");
	if (f->address && (f->as == AN_RT_AS_STRING || f->as == AN_RT_AS_COUNTED))
		return fail(p, "an address is shown as \"number\" or \"hex\"");
	pop(p, old);
	return true;
}

/* {"decoder": NAME, "args": {...}}: the decoder now, its inputs once every
 * field is known (resolve_decoder_args). */
static bool parse_decoder(struct parser *p, json_t *v, struct an_rt_field *f)
{
	static const char *const keys[] = {"decoder", "args", NULL};
	size_t old = push_key(p, "decoder");
	json_t *name = json_object_get(v, "decoder");
	if (!json_is_string(name))
		return fail(p, "a decoder's name is expected");
	for (size_t i = 0; i < sizeof(decoders) / sizeof(decoders[0]); i++)
		if (strcmp(json_string_value(name), decoders[i].name) == 0)
			f->decoder = decoders[i].id;
	if (f->decoder == AN_RT_DECODER_NONE)
		return fail(p, "\"%s\" is no decoder (\"basename\", \"cpython-3.11-line\", "
			    "\"cpython-3.10-line\", \"cpython-lnotab-line\")",
			    json_string_value(name));
	pop(p, old);
	f->as = f->decoder == AN_RT_DECODER_BASENAME ? AN_RT_AS_STRING : AN_RT_AS_NUMBER;
	return check_object(p, v, keys, true) && member(p, v, "args", true);
}

static bool parse_field(struct parser *p, const char *name, json_t *v, struct an_rt_field *f)
{
	static const char *const keys[] = {"member", "mask", "shift", "as", "address", NULL};
	bool masked, shifted;
	uint64_t shift = 0;
	f->mask = UINT64_MAX;
	f->as = AN_RT_AS_STRING;
	f->string = AN_RT_NONE;
	for (size_t i = 0; i < AN_RT_DECODER_ARGS; i++)
		f->args[i] = AN_RT_NONE;
	if (!(f->name = strdup(name)))
		return nomem(p);
	if (json_is_string(v))
		return to_member(p, v, &f->member);
	if (json_is_object(v) && json_object_get(v, "decoder"))
		return parse_decoder(p, v, f);
	if (!check_object(p, v, keys, true) || !get_member(p, v, "member", true, &f->member) ||
	    !get_number(p, v, "mask", UINT64_MAX, &masked, &f->mask) ||
	    !get_number(p, v, "shift", 63, &shifted, &shift) ||
	    !get_bool(p, v, "address", &f->address))
		return false;
	f->shift = (unsigned)shift;
	if (masked || shifted || f->address)
		f->as = f->address ? AN_RT_AS_HEX : AN_RT_AS_NUMBER; /* no pointer to a string */
	json_t *as = json_object_get(v, "as");
	return !as || parse_as(p, as, f);
}

/* A decoder's inputs: ARGS names a field for each of its arguments. */
static bool resolve_decoder_args(struct parser *p, json_t *args, struct an_rt_field *f)
{
	size_t d = 0;
	while (decoders[d].id != f->decoder)
		d++;
	const char *const *want = decoders[d].args;
	size_t nwant = 0;
	while (want[nwant])
		nwant++;
	size_t old = push_key(p, "args");
	if (!json_is_object(args) || json_object_size(args) != nwant) {
		char list[128] = "";
		for (size_t i = 0; i < nwant; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s\"%s\"",
				 i ? ", " : "", want[i]);
		return fail(p, "%s takes an object of exactly %s", decoders[d].name, list);
	}
	for (size_t i = 0; i < nwant; i++) {
		json_t *v = json_object_get(args, want[i]);
		size_t at = push_key(p, want[i]);
		if (!v)
			return fail(p, "is missing");
		if (!json_is_string(v) ||
		    (f->args[i] = field_index(p, json_string_value(v), json_string_length(v))) == AN_RT_NONE)
			return fail(p, "the name of a field of %s is expected", p->fields_where);
		const struct an_rt_field *a = &p->fields[f->args[i]];
		bool text = a->as == AN_RT_AS_STRING || a->as == AN_RT_AS_COUNTED;
		bool want_text = f->decoder == AN_RT_DECODER_BASENAME || strcmp(want[i], "table") == 0;
		if (a->decoder != AN_RT_DECODER_NONE)
			return fail(p, "the field \"%s\" is a decoder's result", a->name);
		if (want_text != text)
			return fail(p, "the field \"%s\" is %s", a->name,
				    want_text ? "no string" : "a string, not a number");
		if (strcmp(want[i], "table") == 0 && a->as != AN_RT_AS_COUNTED)
			return fail(p, "the field \"%s\" is no counted string (one of \"strings\")",
				    a->name);
		pop(p, at);
	}
	pop(p, old);
	return true;
}

static size_t field_index(const struct parser *p, const char *name, size_t len)
{
	for (size_t i = 0; i < p->nfields; i++)
		if (strlen(p->fields[i].name) == len && memcmp(p->fields[i].name, name, len) == 0)
			return i;
	return AN_RT_NONE;
}

/* OBJ.fields into *OUT (*N of them), the parser's current fields after;
 * decoders only when DECODERS. */
static bool parse_fields(struct parser *p, json_t *obj, bool decoders_allowed,
			 struct an_rt_field **out, size_t *n)
{
	const char *name;
	json_t *v;
	json_t *fields = member(p, obj, "fields", true);
	if (!fields)
		return false;
	size_t old = push_key(p, "fields");
	if (!json_is_object(fields) || json_object_size(fields) == 0)
		return fail(p, "an object naming at least one field is expected");
	*out = calloc(json_object_size(fields), sizeof(**out));
	if (!*out)
		return nomem(p);
	json_object_foreach(fields, name, v) {
		size_t at = push_key(p, name);
		struct an_rt_field *f = &(*out)[(*n)++];
		if (!valid_name(name))
			return fail(p, "a field name is letters, digits and _.+-");
		if (!parse_field(p, name, v, f))
			return false;
		if (!decoders_allowed && (f->decoder || f->as == AN_RT_AS_COUNTED || f->address))
			return fail(p, "a string's field is a plain member");
		pop(p, at);
	}
	p->fields = *out;
	p->nfields = *n;
	for (size_t i = 0; i < *n; i++) {
		if (!(*out)[i].decoder)
			continue;
		size_t at = push_key(p, (*out)[i].name);
		if (!resolve_decoder_args(p, json_object_get(json_object_get(fields, (*out)[i].name),
							     "args"), &(*out)[i]))
			return false;
		pop(p, at);
	}
	pop(p, old);
	return true;
}

/* strings.NAME.forms[i]. */
static bool parse_form(struct parser *p, json_t *v, struct an_rt_string_form *f)
{
	static const char *const keys[] = {"if", "length", "header", "data", "width", "units",
					   NULL};
	char *length = NULL, *units = NULL;
	if (!check_object(p, v, keys, true) || !parse_match(p, v, &f->match) ||
	    !get_string(p, v, "length", true, &length))
		return false;
	f->length = field_index(p, length, strlen(length));
	free(length);
	if (f->length == AN_RT_NONE) {
		push_key(p, "length");
		return fail(p, "no field of %s is called so", p->fields_where);
	}
	if (!json_object_get(v, "header") == !json_object_get(v, "data"))
		return fail(p, "one of \"header\" (a type: the characters follow it) and \"data\" "
			    "(the member where they start) is expected");
	if (!get_string(p, v, "header", false, &f->header) || !get_member(p, v, "data", false, &f->data))
		return false;
	if (f->data.path && strstr(f->data.path, "->")) {
		push_key(p, "data");
		return fail(p, "the characters are in the string object: no \"->\"");
	}
	json_t *w = json_object_get(v, "width");
	size_t old = push_key(p, "width");
	f->width = 1;
	f->width_field = AN_RT_NONE;
	if (json_is_string(w)) {
		f->width_field = field_index(p, json_string_value(w), json_string_length(w));
		if (f->width_field == AN_RT_NONE)
			return fail(p, "no field of %s is called so", p->fields_where);
	} else if (w && (!json_is_integer(w) || (json_integer_value(w) != 1 &&
						 json_integer_value(w) != 2 &&
						 json_integer_value(w) != 4))) {
		return fail(p, "1, 2, 4 or the name of a field is expected");
	} else if (w) {
		f->width = (uint64_t)json_integer_value(w);
	}
	pop(p, old);
	if (!get_string(p, v, "units", false, &units))
		return false;
	bool known = !units || strcmp(units, "utf-8") == 0 || strcmp(units, "code-points") == 0;
	f->code_points = units && strcmp(units, "code-points") == 0;
	free(units);
	if (!known) {
		push_key(p, "units");
		return fail(p, "\"utf-8\" or \"code-points\" is expected");
	}
	if (!f->code_points && (f->width != 1 || f->width_field != AN_RT_NONE))
		return fail(p, "characters wider than a byte need \"units\": \"code-points\"");
	return true;
}

/* strings.NAME: {"type", "fields", "forms"}. */
static bool parse_string_kind(struct parser *p, const char *name, json_t *v,
			      struct an_rt_string_kind *k)
{
	static const char *const keys[] = {"type", "fields", "forms", NULL};
	if (!valid_name(name))
		return fail(p, "a string kind's name is letters, digits and _.+-");
	if (!(k->name = strdup(name)))
		return nomem(p);
	snprintf(p->fields_where, sizeof(p->fields_where), "strings.%s.fields", name);
	if (!check_object(p, v, keys, true) || !get_string(p, v, "type", true, &k->type) ||
	    !parse_fields(p, v, false, &k->fields, &k->nfields))
		return false;
	json_t *forms = member(p, v, "forms", true);
	if (!forms)
		return false;
	size_t old = push_key(p, "forms");
	if (!json_is_array(forms) || json_array_size(forms) == 0)
		return fail(p, "an array of at least one form is expected");
	k->forms = calloc(json_array_size(forms), sizeof(*k->forms));
	if (!k->forms)
		return nomem(p);
	for (size_t i = 0; i < json_array_size(forms); i++) {
		size_t at = push_index(p, i);
		if (!parse_form(p, json_array_get(forms, i), &k->forms[k->nforms++]))
			return false;
		pop(p, at);
	}
	pop(p, old);
	return true;
}

static bool parse_strings(struct parser *p, json_t *strings)
{
	struct an_rt_desc *d = p->d;
	const char *name;
	json_t *v;
	if (!json_is_object(strings) || json_object_size(strings) == 0)
		return fail(p, "an object of name: string kind is expected");
	d->strings = calloc(json_object_size(strings), sizeof(*d->strings));
	if (!d->strings)
		return nomem(p);
	json_object_foreach(strings, name, v) {
		size_t old = push_key(p, name);
		if (!parse_string_kind(p, name, v, &d->strings[d->nstrings++]))
			return false;
		pop(p, old);
	}
	return true;
}

static bool parse_entry(struct parser *p, json_t *entry)
{
	static const char *const keys[] = {"type", "fields", NULL};
	struct an_rt_desc *d = p->d;
	snprintf(p->fields_where, sizeof(p->fields_where), "entry.fields");
	return check_object(p, entry, keys, true) &&
	       get_string(p, entry, "type", true, &d->entry.type) &&
	       parse_fields(p, entry, true, &d->entry.fields, &d->entry.nfields);
}

static bool add_piece(struct parser *p, struct an_rt_template *t, const char *text, size_t len,
		      size_t field)
{
	size_t cap = t->npieces;   /* grown one piece at a time: templates are short */
	struct an_rt_piece *v = realloc(t->pieces, (cap + 1) * sizeof(*v));
	if (!v)
		return nomem(p);
	t->pieces = v;
	v[cap] = (struct an_rt_piece){ .field = field };
	if (text && !(v[cap].text = strndup(text, len)))
		return nomem(p);
	t->npieces++;
	return true;
}

/* "get {label}.{dynamic}": literal runs and {field} references. */
static bool parse_template(struct parser *p, json_t *obj, const char *key, struct an_rt_template *t)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return true;
	size_t old = push_key(p, key);
	if (!json_is_string(v))
		return fail(p, "a string is expected");
	t->given = true;
	const char *s = json_string_value(v);
	char *lit = malloc(strlen(s) + 1);
	size_t n = 0;
	if (!lit)
		return nomem(p);
	bool ok = true;
	for (const char *c = s; *c && ok;) {
		if ((c[0] == '{' && c[1] == '{') || (c[0] == '}' && c[1] == '}')) {
			lit[n++] = *c;
			c += 2;
		} else if (*c == '}') {
			ok = fail(p, "an unmatched '}' (write \"}}\" for a brace)");
		} else if (*c == '{') {
			const char *end = strpbrk(c + 1, "{}");
			if (end && *end == '{')
				end = NULL;
			size_t field = end ? field_index(p, c + 1, (size_t)(end - c - 1)) : AN_RT_NONE;
			if (!end)
				ok = fail(p, "an unclosed '{' (write \"{{\" for a brace)");
			else if (field == AN_RT_NONE)
				ok = fail(p, "{%.*s} is no field of %s", (int)(end - c - 1), c + 1,
					  p->fields_where);
			else
				ok = (!n || add_piece(p, t, lit, n, AN_RT_NONE)) &&
				     add_piece(p, t, NULL, 0, field);
			n = 0;
			c = end ? end + 1 : c + 1;
		} else {
			lit[n++] = *c++;
		}
	}
	ok = ok && (!n || add_piece(p, t, lit, n, AN_RT_NONE));
	free(lit);
	if (ok)
		pop(p, old);
	return ok;
}

/* `if` / boundary `if`: {FIELD: BITS, ...}. */
static bool parse_match(struct parser *p, json_t *obj, struct an_rt_match *m)
{
	const char *name;
	json_t *v;
	json_t *cond = member(p, obj, "if", true);
	if (!cond)
		return false;
	size_t old = push_key(p, "if");
	if (!json_is_object(cond))
		return fail(p, "an object of field: bits is expected");
	m->conds = calloc(json_object_size(cond) + 1, sizeof(*m->conds));
	if (!m->conds)
		return nomem(p);
	json_object_foreach(cond, name, v) {
		size_t at = push_key(p, name);
		struct an_rt_cond *c = &m->conds[m->nconds++];
		c->field = field_index(p, name, strlen(name));
		if (c->field == AN_RT_NONE)
			return fail(p, "no field of %s is called so", p->fields_where);
		if (p->fields[c->field].decoder)
			return fail(p, "a decoder's result is not tested");
		if (!to_number(p, v, &c->bits))
			return false;
		pop(p, at);
	}
	pop(p, old);
	return true;
}

static bool parse_kind(struct parser *p, json_t *k, struct an_rt_kind *kind)
{
	static const char *const keys[] = {"if", "kind", "name", "detail", "fallback", "anchor",
					   "hidden", NULL};
	bool hidden = false;
	char *anchor = NULL;
	if (!check_object(p, k, keys, true) || !parse_match(p, k, &kind->match) ||
	    !get_string(p, k, "kind", true, &kind->kind) || !get_bool(p, k, "hidden", &hidden) ||
	    !parse_template(p, k, "name", &kind->name) ||
	    !parse_template(p, k, "detail", &kind->detail) ||
	    !parse_template(p, k, "fallback", &kind->fallback) ||
	    !get_string(p, k, "anchor", false, &anchor))
		return false;
	kind->anchor = anchor ? field_index(p, anchor, strlen(anchor)) : AN_RT_NONE;
	bool unknown_anchor = anchor && (kind->anchor == AN_RT_NONE ||
					 p->fields[kind->anchor].decoder);
	free(anchor);
	if (unknown_anchor) {
		push_key(p, "anchor");
		return fail(p, "no field of %s is called so", p->fields_where);
	}
	if (hidden)
		kind->show = AN_RT_SHOW_HIDDEN;
	else if (strcmp(kind->kind, "script") == 0)
		kind->show = AN_RT_SHOW_SCRIPT;
	else if (strcmp(kind->kind, "label") == 0)
		kind->show = AN_RT_SHOW_LABEL;
	else {
		push_key(p, "kind");
		return fail(p, "a shown kind is \"script\" or \"label\" (other kinds are \"hidden\": true)");
	}
	if (kind->show != AN_RT_SHOW_HIDDEN && !kind->name.given)
		return fail(p, "a shown kind needs \"name\"");
	return true;
}

static bool parse_kinds(struct parser *p, json_t *kinds)
{
	struct an_rt_desc *d = p->d;
	if (!json_is_array(kinds) || json_array_size(kinds) == 0)
		return fail(p, "an array of at least one kind is expected");
	d->kinds = calloc(json_array_size(kinds), sizeof(*d->kinds));
	if (!d->kinds)
		return nomem(p);
	for (size_t i = 0; i < json_array_size(kinds); i++) {
		size_t old = push_index(p, i);
		if (!parse_kind(p, json_array_get(kinds, i), &d->kinds[d->nkinds++]))
			return false;
		pop(p, old);
	}
	return true;
}

static bool parse_attach(struct parser *p, json_t *attach)
{
	static const char *const keys[] = {"function", "boundary", NULL};
	static const char *const boundary_keys[] = {"if", NULL};
	struct an_rt_desc *d = p->d;
	if (!check_object(p, attach, keys, true) ||
	    !get_string(p, attach, "function", true, &d->attach.function))
		return false;
	json_t *b = json_object_get(attach, "boundary");
	if (!b)
		return true;
	size_t old = push_key(p, "boundary");
	if (!check_object(p, b, boundary_keys, true) || !parse_match(p, b, &d->attach.boundary))
		return false;
	d->attach.has_boundary = true;
	pop(p, old);
	return true;
}

/* MEMBER: [offset, size]. */
static bool parse_layout_member(struct parser *p, const char *name, json_t *v,
				struct an_rt_layout_member *m)
{
	if (!json_is_array(v) || json_array_size(v) < 2 || json_array_size(v) > 3)
		return fail(p, "[offset, size] or [offset, size, \"TYPE POINTED AT\"] is expected");
	if (!(m->path = strdup(name)))
		return nomem(p);
	if (json_array_size(v) == 3 && !to_string(p, json_array_get(v, 2), &m->points_to))
		return false;
	if (!to_number(p, json_array_get(v, 0), &m->offset) ||
	    !to_number(p, json_array_get(v, 1), &m->size))
		return false;
	if (m->offset >= OFFSET_LIMIT)
		return fail(p, "offset %llu is beyond %u", (unsigned long long)m->offset, OFFSET_LIMIT);
	if (m->size == 0 || m->size > AN_RT_ENTRY_LIMIT)
		return fail(p, "size %llu is not from 1 to %u", (unsigned long long)m->size,
			    AN_RT_ENTRY_LIMIT);
	return true;
}

static bool parse_layout_type(struct parser *p, const char *type, json_t *v,
			      struct an_rt_layout_type *t)
{
	const char *name;
	json_t *m;
	if (!json_is_object(v))
		return fail(p, "an object of member: [offset, size] is expected");
	if (!(t->type = strdup(type)))
		return nomem(p);
	t->members = calloc(json_object_size(v) + 1, sizeof(*t->members));
	if (!t->members)
		return nomem(p);
	json_object_foreach(v, name, m) {
		size_t old = push_key(p, name);
		if (strcmp(name, "size") == 0) {
			if (!to_number(p, m, &t->size))
				return false;
			if (t->size == 0 || t->size >= OFFSET_LIMIT)
				return fail(p, "a size from 1 to %u is expected", OFFSET_LIMIT - 1);
			t->has_size = true;
		} else if (!parse_layout_member(p, name, m, &t->members[t->nmembers++])) {
			return false;
		}
		pop(p, old);
	}
	for (size_t i = 0; t->has_size && i < t->nmembers; i++)
		if (t->members[i].offset + t->members[i].size > t->size) {
			push_key(p, t->members[i].path);
			return fail(p, "the member ends past the type's size %llu",
				    (unsigned long long)t->size);
		}
	return true;
}

static bool parse_layout(struct parser *p, json_t *layout)
{
	struct an_rt_desc *d = p->d;
	const char *type;
	json_t *v;
	if (!json_is_object(layout))
		return fail(p, "an object of type: {member: [offset, size]} is expected");
	d->layout = calloc(json_object_size(layout) + 1, sizeof(*d->layout));
	if (!d->layout)
		return nomem(p);
	json_object_foreach(layout, type, v) {
		size_t old = push_key(p, type);
		if (!parse_layout_type(p, type, v, &d->layout[d->nlayout++]))
			return false;
		pop(p, old);
	}
	return true;
}

/* prefer: "layout" (the default: the layout wins over DWARF) or "dwarf"
 * (the layout serves a program without DWARF). */
static bool parse_prefer(struct parser *p, json_t *v)
{
	const char *s = json_is_string(v) ? json_string_value(v) : "";
	if (strcmp(s, "layout") != 0 && strcmp(s, "dwarf") != 0)
		return fail(p, "\"layout\" or \"dwarf\" is expected");
	p->d->dwarf_first = strcmp(s, "dwarf") == 0;
	return true;
}

/* offsets.members.TYPE: {MEMBER: WHERE, "size": WHERE}, each WHERE a byte
 * of the block that holds an 8-byte offset (or size). */
static bool parse_offsets_type(struct parser *p, const char *type, json_t *v,
			       struct an_rt_layout_type *t)
{
	const char *name;
	json_t *m;
	if (!json_is_object(v))
		return fail(p, "an object of member: where its offset is in the block is expected");
	if (!(t->type = strdup(type)))
		return nomem(p);
	t->members = calloc(json_object_size(v) + 1, sizeof(*t->members));
	if (!t->members)
		return nomem(p);
	json_object_foreach(v, name, m) {
		size_t old = push_key(p, name);
		uint64_t at;
		if (!to_number(p, m, &at))
			return false;
		if (at >= OFFSET_LIMIT || at % 8 != 0)
			return fail(p, "a multiple of 8 below %u is expected", OFFSET_LIMIT);
		if (strcmp(name, "size") == 0) {
			t->size = at;
			t->has_size = true;
		} else {
			struct an_rt_layout_member *lm = &t->members[t->nmembers++];
			if (!(lm->path = strdup(name)))
				return nomem(p);
			lm->offset = at;
			lm->size = 8;
		}
		pop(p, old);
	}
	return true;
}

/* offsets: {"symbol", "cookie", "members": {TYPE: {...}}}. */
static bool parse_offsets(struct parser *p, json_t *v)
{
	static const char *const keys[] = {"symbol", "cookie", "members", NULL};
	struct an_rt_offsets *o = &p->d->offsets;
	const char *type;
	json_t *t;
	if (!check_object(p, v, keys, true) || !get_string(p, v, "symbol", true, &o->symbol) ||
	    !get_string(p, v, "cookie", true, &o->cookie))
		return false;
	if (strlen(o->cookie) == 0 || strlen(o->cookie) > 16) {
		push_key(p, "cookie");
		return fail(p, "1 to 16 bytes are expected");
	}
	json_t *members = member(p, v, "members", true);
	if (!members)
		return false;
	size_t old = push_key(p, "members");
	if (!json_is_object(members))
		return fail(p, "an object of type: {member: where} is expected");
	o->types = calloc(json_object_size(members) + 1, sizeof(*o->types));
	if (!o->types)
		return nomem(p);
	json_object_foreach(members, type, t) {
		size_t at = push_key(p, type);
		if (!parse_offsets_type(p, type, t, &o->types[o->ntypes++]))
			return false;
		pop(p, at);
	}
	pop(p, old);
	return true;
}

/* Parse the part KEY of the description with FN, its path pushed. */
static bool part(struct parser *p, json_t *top, const char *key, bool required,
		 bool (*fn)(struct parser *, json_t *))
{
	json_t *v = member(p, top, key, required);
	if (!v)
		return !required;
	size_t old = push_key(p, key);
	if (!fn(p, v))
		return false;
	pop(p, old);
	return true;
}

static bool has_anchor(const struct an_rt_desc *d)
{
	for (size_t i = 0; i < d->nkinds; i++)
		if (d->kinds[i].anchor != AN_RT_NONE)
			return true;
	return false;
}

static bool parse_description(struct parser *p, json_t *top)
{
	static const char *const keys[] = {"name", "runtime", "root", "stack", "strings", "entry",
					   "kinds", "attach", "layout", "prefer", "offsets", NULL};
	struct an_rt_desc *d = p->d;
	if (!check_object(p, top, keys, true) || !get_string(p, top, "name", true, &d->name) ||
	    !get_string(p, top, "runtime", false, &d->runtime))
		return false;
	if (!valid_name(d->name)) {
		push_key(p, "name");
		return fail(p, "a name is 1 to %u letters, digits and _.+-", NAME_LIMIT);
	}
	if (d->runtime && !valid_name(d->runtime)) {
		push_key(p, "runtime");
		return fail(p, "a runtime is 1 to %u letters, digits and _.+-", NAME_LIMIT);
	}
	if (!d->runtime && !(d->runtime = strdup(d->name)))
		return nomem(p);
	size_t n = strlen(d->runtime) + strlen(d->name) + 4;
	if (!(d->label = malloc(n)))
		return nomem(p);
	if (strcmp(d->runtime, d->name) == 0)
		snprintf(d->label, n, "%s", d->name);
	else
		snprintf(d->label, n, "%s (%s)", d->runtime, d->name);
	if (!part(p, top, "root", true, parse_root) || !part(p, top, "stack", true, parse_stack) ||
	    !part(p, top, "strings", false, parse_strings) ||
	    !part(p, top, "entry", true, parse_entry) || !part(p, top, "kinds", true, parse_kinds) ||
	    !part(p, top, "attach", false, parse_attach) ||
	    !part(p, top, "layout", false, parse_layout) ||
	    !part(p, top, "prefer", false, parse_prefer) ||
	    !part(p, top, "offsets", false, parse_offsets))
		return false;
	if (!d->attach.function && !has_anchor(d))
		return fail(p, "entries need a place: \"attach\" or a kind with an \"anchor\"");
	return true;
}

/* ---- files and the set --------------------------------------------------- */

static void member_deinit(struct an_rt_member *m)
{
	free(m->path);
	free(m->where);
}

static void template_deinit(struct an_rt_template *t)
{
	for (size_t i = 0; i < t->npieces; i++)
		free(t->pieces[i].text);
	free(t->pieces);
}

static void fields_deinit(struct an_rt_field *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		member_deinit(&v[i].member);
	}
	free(v);
}

static void string_kind_deinit(struct an_rt_string_kind *k)
{
	free(k->name);
	free(k->type);
	fields_deinit(k->fields, k->nfields);
	for (size_t i = 0; i < k->nforms; i++) {
		free(k->forms[i].match.conds);
		free(k->forms[i].header);
		member_deinit(&k->forms[i].data);
	}
	free(k->forms);
}

static void layout_types_free(struct an_rt_layout_type *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].type);
		for (size_t j = 0; j < v[i].nmembers; j++) {
			free(v[i].members[j].path);
			free(v[i].members[j].points_to);
		}
		free(v[i].members);
	}
	free(v);
}

static void desc_deinit(struct an_rt_desc *d)
{
	free(d->file);
	free(d->name);
	free(d->runtime);
	free(d->label);
	free(d->root.symbol);
	for (size_t i = 0; i < d->root.nlists; i++) {
		free(d->root.lists[i].type);
		member_deinit(&d->root.lists[i].head);
		member_deinit(&d->root.lists[i].next);
	}
	free(d->root.lists);
	member_deinit(&d->root.thread);
	free(d->root.require.symbol);
	free(d->root.require.module);
	for (size_t i = 0; i < d->nstrings; i++)
		string_kind_deinit(&d->strings[i]);
	free(d->strings);
	free(d->stack.type);
	member_deinit(&d->stack.array);
	member_deinit(&d->stack.count);
	member_deinit(&d->stack.capacity);
	member_deinit(&d->stack.top);
	member_deinit(&d->stack.next);
	free(d->entry.type);
	fields_deinit(d->entry.fields, d->entry.nfields);
	for (size_t i = 0; i < d->nkinds; i++) {
		free(d->kinds[i].match.conds);
		free(d->kinds[i].kind);
		template_deinit(&d->kinds[i].name);
		template_deinit(&d->kinds[i].detail);
		template_deinit(&d->kinds[i].fallback);
	}
	free(d->kinds);
	free(d->attach.function);
	free(d->attach.boundary.conds);
	layout_types_free(d->layout, d->nlayout);
	layout_types_free(d->offsets.types, d->offsets.ntypes);
	free(d->offsets.symbol);
	free(d->offsets.cookie);
}

struct an_runtimes *an_runtimes_create(void)
{
	return calloc(1, sizeof(struct an_runtimes));
}

void an_runtimes_destroy(struct an_runtimes *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n; i++)
		desc_deinit(&set->v[i]);
	free(set->v);
	free(set);
}

/* The file's text (at most DESC_FILE_LIMIT bytes), NUL-terminated. */
static struct core_error *read_text(const char *path, char **text, size_t *len)
{
	struct stat st;
	int fd = core_open_regular(path);
	if (fd < 0)
		return core_error_create(CORE_ERROR_IO, "%s: %s", path, strerror(errno));
	struct core_error *err = NULL;
	*text = NULL;
	if (fstat(fd, &st) != 0 || st.st_size > DESC_FILE_LIMIT) {
		err = core_error_create(CORE_ERROR_USAGE, "%s: a description is at most %u bytes", path,
					DESC_FILE_LIMIT);
		goto out;
	}
	*text = malloc((size_t)st.st_size + 1);
	if (!*text) {
		err = &core_error_nomem;
		goto out;
	}
	ssize_t n = read(fd, *text, (size_t)st.st_size);
	if (n != st.st_size) {
		err = core_error_create(CORE_ERROR_IO, "%s: cannot be read", path);
		goto out;
	}
	(*text)[n] = '\0';
	*len = (size_t)n;
out:
	if (err) {
		free(*text);
		*text = NULL;
	}
	close(fd);
	return err;
}

static const struct an_rt_desc *find_name(const struct an_runtimes *set, const char *name)
{
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->v[i].name, name) == 0)
			return &set->v[i];
	return NULL;
}

struct core_error *an_runtimes_load(struct an_runtimes *set, const char *path, bool if_new)
{
	char *text = NULL;
	size_t len = 0;
	json_error_t jerr;
	struct an_rt_desc d = { 0 };
	struct parser p = { .file = path, .path = "$", .len = 1, .d = &d };
	struct core_error *err = read_text(path, &text, &len);
	if (err)
		return err;
	json_t *top = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (!top)
		return core_error_create(CORE_ERROR_USAGE, "%s: line %d, column %d: not valid JSON: %s",
					 path, jerr.line, jerr.column, jerr.text);
	if (parse_description(&p, top) && !(d.file = strdup(path)))
		nomem(&p);
	json_decref(top);
	const struct an_rt_desc *same = p.err ? NULL : find_name(set, d.name);
	if (same && !if_new)
		p.err = core_error_create(CORE_ERROR_USAGE, "%s: $.name: \"%s\" is also the name of %s",
					  path, d.name, same->file);
	if (p.err || same) {
		desc_deinit(&d);
		return p.err;
	}
	struct an_rt_desc *slot = base_array_push(&set->v, &set->n, &set->cap, sizeof(*set->v));
	if (!slot) {
		desc_deinit(&d);
		return &core_error_nomem;
	}
	*slot = d;
	return NULL;
}

static const struct an_rt_layout_type *type_in(const struct an_rt_layout_type *v, size_t n,
					       const char *type)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].type, type) == 0)
			return &v[i];
	return NULL;
}

const struct an_rt_layout_type *an_rt_layout_type(const struct an_rt_desc *d, const char *type)
{
	return type_in(d->layout, d->nlayout, type);
}

const struct an_rt_layout_type *an_rt_offsets_type(const struct an_rt_desc *d, const char *type)
{
	return type_in(d->offsets.types, d->offsets.ntypes, type);
}
