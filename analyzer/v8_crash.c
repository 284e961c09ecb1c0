/* Node.js programs: the crash V8 or node reported, read from V8's heap
 * (an uncaught exception on the stack of the frames that throw it, V8's
 * heap exhausted) into the analysis's js (DESIGN.md "Node.js (V8)"). */
#include "v8_internal.h"

#include <stdio.h>
#include <string.h>

static bool frame_is(const struct an_frame *f, const char *prefix)
{
	return f->function && strncmp(f->function, prefix, strlen(prefix)) == 0;
}

/* The index of T's first native frame named PREFIX..., or -1. */
static long native_named(const struct an_thread *t, const char *prefix)
{
	for (size_t i = 0; i < t->nframes; i++)
		if (!AN_FRAME_IS_RUNTIME(&t->frames[i]) && frame_is(&t->frames[i], prefix))
			return (long)i;
	return -1;
}

/* An object's own properties, as its map's descriptors list them (a
 * dictionary map's are not read). */
struct v8_props {
	uint64_t obj, descs;
	int64_t n;
	uint8_t size_words, inobject_start;
};

static bool props_open(struct v8 *v, uint64_t obj, struct v8_props *p)
{
	uint64_t map;
	int32_t bf3;
	p->obj = obj;
	if (!HAVE(v, map_descriptors) || !HAVE(v, desc_size) || !HAVE(v, index_mask) ||
	    !HAVE(v, map_size_words) || !HAVE(v, receiver_properties) || !HAVE(v, loc_field) ||
	    !v8_field(v, obj, MV(v, ho_map), &map) || !v8_field(v, map, MV(v, map_descriptors), &p->descs) ||
	    !v8_rd(v, map - 1 + (uint64_t)MV(v, map_bit_field3), &bf3, sizeof(bf3)) ||
	    !v8_rd(v, map - 1 + (uint64_t)MV(v, map_size_words), &p->size_words, 1) ||
	    !v8_rd(v, map - 1 + (uint64_t)MV(v, map_inobject_start), &p->inobject_start, 1))
		return false;
	if (HAVE(v, dictionary_shift) && (bf3 >> MV(v, dictionary_shift)) & 1)
		return false;   /* a dictionary map: properties in a hash table */
	p->n = ((int64_t)bf3 & MV(v, own_desc_mask)) >> MV(v, own_desc_shift);
	return p->n >= 0 && p->n <= MAX_DESCRIPTORS;
}

/* Property I of P: its key and its value, in the object, in its property
 * array or in the descriptor itself.  False for an accessor's or what
 * cannot be read. */
static bool prop_at(struct v8 *v, const struct v8_props *p, int64_t i, uint64_t *key, uint64_t *value)
{
	int64_t base = MV(v, desc_header) + i * MV(v, desc_size) * MV(v, tagged_size), details;
	if (!v8_field(v, p->descs, base + MV(v, desc_key) * MV(v, tagged_size), key) ||
	    !v8_smi_field(v, p->descs, base + MV(v, desc_details) * MV(v, tagged_size), &details))
		return false;
	int64_t location = (details & MV(v, loc_mask)) >> MV(v, loc_shift);
	if (location == MV(v, loc_descriptor))
		return v8_field(v, p->descs, base + MV(v, desc_value) * MV(v, tagged_size), value);
	if (location != MV(v, loc_field))
		return false;
	int64_t index = (details & MV(v, index_mask)) >> MV(v, index_shift);
	int64_t inobject = (int64_t)p->size_words - p->inobject_start;
	if (index < inobject)
		return v8_field(v, p->obj, ((int64_t)p->inobject_start + index) * MV(v, tagged_size), value);
	uint64_t props;
	return v8_field(v, p->obj, MV(v, receiver_properties), &props) && v8_is_heap(v, props) &&
	       v8_field(v, props, MV(v, fa_data) + (index - inobject) * MV(v, tagged_size), value);
}

/* The value of OBJ's own data property KEY. */
static bool own_property(struct v8 *v, uint64_t obj, const char *key, uint64_t *value)
{
	struct v8_props p;
	if (!props_open(v, obj, &p))
		return false;
	for (int64_t i = 0; i < p.n; i++) {
		uint64_t k;
		struct v8_text name;
		if (prop_at(v, &p, i, &k, value) && v8_string_read(v, k, &name) && strcmp(name.buf, key) == 0)
			return true;
	}
	return false;
}

/* An own property of OBJ whose value is a string starting with PREFIX,
 * whatever its key (a private symbol's, as the stack V8 formats for an
 * error), into OUT. */
static bool own_string_with_prefix(struct v8 *v, uint64_t obj, const char *prefix, struct v8_text *out)
{
	struct v8_props p;
	if (!props_open(v, obj, &p))
		return false;
	for (int64_t i = 0; i < p.n; i++) {
		uint64_t k, value;
		if (prop_at(v, &p, i, &k, &value) && v8_string_read(v, value, out) &&
		    strncmp(out->buf, prefix, strlen(prefix)) == 0)
			return true;
	}
	return false;
}

/* Whether OBJ is an exception as V8 reports one: a JSError, or (LOOSE) a
 * plain object with its own "message", as an error copied between
 * isolates (a worker's, posted to its parent) is. */
static bool is_exception(struct v8 *v, uint64_t obj, bool loose)
{
	int64_t type;
	uint64_t msg;
	if (!v8_instance_type(v, obj, &type))
		return false;
	if (HAVE(v, t_js_error) && type == MV(v, t_js_error))
		return true;
	return loose && HAVE(v, t_js_object) && type == MV(v, t_js_object) &&
	       own_property(v, obj, "message", &msg) && v8_is_string(v, msg, &type);
}

/* An exception among the words of [FROM, TO): a tagged pointer to one, or
 * a handle (a pointer to a slot holding one); a JSError first. */
static bool find_error(struct v8 *v, uint64_t from, uint64_t to, uint64_t *error)
{
	for (int loose = 0; loose < 2; loose++)
		for (uint64_t at = from; at + 8 <= to; at += 8) {
			uint64_t w, inner;
			if (!v8_rd_word(v, at, &w))
				break;
			if (v8_is_heap(v, w) && is_exception(v, w, loose)) {
				*error = w;
				return true;
			}
			if (!v8_is_heap(v, w) && (w & 7) == 0 && w > 0x1000 && v8_rd_word(v, w, &inner) &&
			    v8_is_heap(v, inner) && is_exception(v, inner, loose)) {
				*error = inner;
				return true;
			}
		}
	return false;
}

/* Where the uncaught exception came from, when its own stack says: the
 * first frame of the stack V8 formatted for it ("TYPE: MESSAGE\n    at
 * NAME (PATH:LINE:COLUMN)"), as node printed it.  An exception thrown in
 * an async function surfaces far from where it was thrown. */
static void read_thrown_at(struct v8 *v, uint64_t error, struct an_js_crash *js)
{
	char head[2 * MAX_NAME + 16];
	struct v8_text stack;
	snprintf(head, sizeof(head), "%s: %s\n    at ", js->type, js->message);
	if (!own_string_with_prefix(v, error, head, &stack))
		return;
	char *line = stack.buf + strlen(head), *end = strchr(line, '\n');
	if (end)
		*end = '\0';
	char *open = strrchr(line, '(');
	size_t n = strlen(line);
	if (open && n > 0 && line[n - 1] == ')' && open > line && open[-1] == ' ') {
		line[n - 1] = '\0';
		open[-1] = '\0';
		js->thrown_in = v8_dup_text(v, line);
		js->thrown_at = v8_dup_text(v, open + 1);
	} else if (!end && stack.cut) {
		return;   /* the line was cut: nothing sure */
	} else {
		js->thrown_in = v8_dup_text(v, "(anonymous)");
		js->thrown_at = v8_dup_text(v, line);
	}
}

/* The frame that holds an uncaught exception, and how far up the stack
 * it may be: V8's Isolate::CreateMessageOrAbort under
 * --abort-on-uncaught-exception (the thrower, ThrowInternal, holds it, up
 * to its caller), or node's TriggerUncaughtException (a promise rejection
 * or an error event nobody handled: its argument, on the JavaScript
 * stack above the API call's exit frame). */
static bool uncaught_range(const struct an_thread *t, uint64_t *to)
{
	long at = native_named(t, "v8::internal::Isolate::CreateMessageOrAbort");
	size_t skip = 2;
	if (at < 0) {
		at = native_named(t, "node::errors::TriggerUncaughtException");
		skip = 1;
	}
	if (at < 0)
		return false;
	*to = t->sp + EXCEPTION_SCAN;
	for (size_t i = (size_t)at + skip; i < t->nframes; i++) {
		const struct an_frame *f = &t->frames[i];
		if (AN_FRAME_IS_RUNTIME(f) || f->cfa <= t->sp || (skip == 1 && !frame_is(f, "Builtins_")))
			continue;
		/* An API call's arguments lie above its exit frame's CFA. */
		uint64_t end = f->cfa + (skip == 1 ? 256 : 0);
		if (end < *to)
			*to = end;
		break;
	}
	return true;
}

/* The exception V8 or node was about to report as uncaught when the
 * process aborted, read from the stack of the frames that hold it. */
static void read_uncaught(struct v8 *v, struct an_thread *t)
{
	uint64_t to, error, msg, name;
	if (!uncaught_range(t, &to))
		return;
	struct an_js_crash *js = &v->an->js;
	js->present = true;
	if (!find_error(v, t->sp, to, &error)) {
		v8_warn(v, "the uncaught exception is not on the stack of its throw (not an Error?)");
		return;
	}
	struct v8_text text;
	/* An error's class: its own name when it has one (a copied error),
	 * else its constructor's. */
	if ((own_property(v, error, "name", &name) && v8_string_read(v, name, &text) && text.len) ||
	    v8_constructor_name(v, error, &text))
		js->type = v8_dup_text(v, text.buf);
	if (own_property(v, error, "message", &msg) && v8_string_read(v, msg, &text))
		js->message = v8_dup_text(v, text.buf);
	else
		v8_warn(v, "the uncaught %s's message cannot be read", js->type ? js->type : "exception");
	if (js->type && js->message)
		read_thrown_at(v, error, js);
}

/* V8 out of memory: node's OOM handler or V8's fatal OOM on the stack,
 * in node's words: the JavaScript heap's exhaustion when the heap gave up
 * (Heap::FatalProcessOutOfMemory), else the process's. */
static void read_oom(struct v8 *v, struct an_thread *t)
{
	bool heap = native_named(t, "v8::internal::Heap::FatalProcessOutOfMemory") >= 0;
	if (!heap && native_named(t, "node::OOMErrorHandler") < 0 &&
	    native_named(t, "v8::internal::V8::FatalProcessOutOfMemory") < 0)
		return;
	v->an->js.present = true;
	v->an->js.oom = true;
	v->an->js.message = v8_dup_text(v, heap ? "Allocation failed - JavaScript heap out of memory"
					     : "Allocation failed - process out of memory");
}

/* The crash happened in T's innermost JavaScript frame: the signature
 * starts there (an_signature_start). */
static void mark_site(struct an_thread *t)
{
	for (size_t i = 0; i < t->nframes; i++)
		if (t->frames[i].kind == AN_FRAME_SCRIPT && t->frames[i].runtime &&
		    strcmp(t->frames[i].runtime, "node") == 0 && t->frames[i].file) {
			t->frames[i].role = AN_FRAME_CRASH_SITE;
			return;
		}
}

/* The crash of crashing thread T: V8 out of memory, else an uncaught
 * exception, and the frame it was thrown in. */
void v8_crash_read(struct v8 *v, struct an_thread *t)
{
	struct analysis *an = v->an;
	read_oom(v, t);
	if (!an->js.present)
		read_uncaught(v, t);
	if (an->js.present && !an->caught.present)
		mark_site(t);
}
