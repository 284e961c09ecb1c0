/* The JSON report (DESIGN.md "JSON"), built with jansson.  Unknown values
 * are null; addresses are "0x..." strings. */
#include "report.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"

static json_t *jhex(uint64_t v)
{
	char h[32];
	return json_string_nocheck(rep_hex(h, v));
}

/* Bytes from a core or a binary as a JSON string (reports/bytes.h): each
 * byte that is not part of valid UTF-8 becomes U+FFFD. */
static json_t *jstr(const char *s)
{
	return rep_json_text(s);
}

/* Set when a value or member could not be added (out of memory), so the
 * writer fails instead of printing a document with a hole. */
static _Thread_local bool json_failed;

/* Append V to ARR (V is stolen); a failure is remembered. */
static void push(json_t *arr, json_t *v)
{
	if (json_array_append_new(arr, v) != 0)
		json_failed = true;
}

static json_t *jhex_if(bool known, uint64_t v)
{
	return known ? jhex(v) : json_null();
}

static json_t *identity_object(const struct analysis *an)
{
	return json_pack("{s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
		"path", jstr(an->core_path),
		"file_size", (json_int_t)an->core_file_size,
		"size", (json_int_t)an->core_size,
		"fingerprint", jstr(an->core_fingerprint),
		"sha256", jstr(an->core_sha256),
		"crashed_at", jstr(an->crashed_at),
		"executable", jstr(an->executable),
		"build_id", jstr(an->build_id),
		"pid", an->has_pid ? json_integer(an->pid) : json_null(),
		"uid", an->has_uid ? json_integer(an->uid) : json_null());
}

static json_t *signal_object(const struct analysis *an)
{
	if (!an->has_signal)
		return json_null();
	return json_pack("{s:i, s:o, s:o, s:o, s:o}",
		"number", an->signo,
		"name", jstr(an->signal_name),
		"code", an->has_code ? json_integer(an->code) : json_null(),
		"code_name", jstr(an->code_name),
		"address", jhex_if(an->has_fault_address, an->fault_address));
}

static json_t *modules_array(const struct analysis *an)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < an->nmodules; i++) {
		const struct an_module *m = &an->modules[i];
		push(arr, json_pack("{s:o, s:o, s:o, s:o, s:o}",
			"path", jstr(m->path), "start", jhex(m->start), "end", jhex(m->end),
			"build_id", jstr(m->build_id), "debuginfo", jstr(m->debuginfo)));
	}
	return arr;
}

/* Keys are constant ASCII and values our own hex or the analysis's strings:
 * the per-frame objects skip jansson's UTF-8 key checks (there are many). */
static void set(json_t *o, const char *key, json_t *value)
{
	if (json_object_set_new_nocheck(o, key, value) != 0)
		json_failed = true;
}

/* The registers the unwinder recovered for this frame (callee-saved ones,
 * rsp and rip in callers; all of them in the innermost frame). */
static json_t *frame_registers(const struct an_frame *f)
{
	json_t *o = json_object();
	for (unsigned r = 0; r < AN_FRAME_NREGS; r++)
		if (f->regs_known & (1u << r))
			set(o, an_frame_reg_name(r), jhex(f->regs[r]));
	return o;
}

static json_t *frame_object(const struct an_frame *f, size_t index)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	set(o, "index", json_integer((json_int_t)index));
	set(o, "kind", json_string_nocheck(f->kind == AN_FRAME_ASYNC ? "async" : "native"));
	set(o, "pc", jhex(f->pc));
	set(o, "function", jstr(f->function));
	set(o, "display", jstr(f->display));    /* null: function reads as written */
	set(o, "offset", jhex_if(f->has_offset, f->offset));
	set(o, "module", jstr(f->module));
	set(o, "module_offset", jhex_if(f->has_module_offset, f->module_offset));
	set(o, "file", jstr(f->file));
	set(o, "line", f->line > 0 ? json_integer(f->line) : json_null());
	set(o, "inlined", json_boolean(f->inlined));
	set(o, "inline_depth", json_integer(f->inline_depth));
	set(o, "cfa", f->cfa ? jhex(f->cfa) : json_null());
	set(o, "registers", frame_registers(f));
	return o;
}

static json_t *frames_array(const struct an_frame *frames, size_t n)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++)
		push(arr, frame_object(&frames[i], i));
	return arr;
}

static json_t *registers_object(const struct an_thread *t)
{
	json_t *o = json_object();
	for (unsigned r = 0; r < AN_THREAD_NREGS; r++)
		set(o, an_thread_reg_name(r), jhex(t->regs[r]));
	return o;
}

static json_t *thread_object(const struct an_thread *t)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	set(o, "tid", json_integer(t->tid));
	set(o, "crashing", json_boolean(t->crashing));
	set(o, "registers", registers_object(t));
	set(o, "frames", frames_array(t->frames, t->nframes));
	set(o, "async_root", t->async_root ? jhex(t->async_root) : json_null());
	set(o, "unwind_error", jstr(t->unwind_error));
	return o;
}

static json_t *suspended_array(const struct analysis *an)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < an->nsuspended; i++)
		push(arr, json_pack("{s:o, s:o}", "leaf", jhex(an->suspended[i].leaf),
			"frames", frames_array(an->suspended[i].frames, an->suspended[i].nframes)));
	return arr;
}

static json_t *event_object(const struct an_event *e)
{
	json_t *args = json_array(), *strings = json_array();
	for (size_t i = 0; i < e->nargs && i < 12; i++) {
		push(args, jhex(e->args[i]));
		if (e->strings_read & (1u << i))
			push(strings, json_integer((json_int_t)i));
	}
	return json_pack("{s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:b}",
		"order", (json_int_t)e->order, "timestamp", (json_int_t)e->timestamp,
		"location", jstr(e->location), "function", jstr(e->function),
		"format", jstr(e->format), "message", jstr(e->message),
		"args", args, "strings_read", strings, "in_flight", e->in_flight);
}

static json_t *recorders_array(const struct analysis *an)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < an->nrecorders; i++) {
		const struct an_recorder *r = &an->recorders[i];
		json_t *events = json_array();
		for (size_t j = 0; j < r->nevents; j++)
			push(events, event_object(&r->events[j]));
		json_t *o = json_pack("{s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
			"name", jstr(r->name), "size", (json_int_t)r->size,
			"writer", (json_int_t)r->writer, "reader", (json_int_t)r->reader,
			"commit", (json_int_t)r->commit, "recovered", (json_int_t)r->recovered,
			"in_flight", (json_int_t)r->in_flight, "overwritten", (json_int_t)r->overwritten,
			"events", events);
		if (o) {
			set(o, "layout", jstr(r->layout));
			set(o, "address", jhex(r->address));
			set(o, "overflow", json_integer((json_int_t)r->overflow));
		}
		push(arr, o);
	}
	return arr;
}

static json_t *timeline_array(const struct analysis *an)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < an->ntimeline; i++) {
		const struct an_timeline_entry *e = &an->timeline[i];
		const struct an_recorder *r = &an->recorders[e->recorder];
		push(arr, json_pack("{s:I, s:o, s:I, s:o}",
			"order", (json_int_t)e->order, "recorder", jstr(r->name),
			"timestamp", (json_int_t)e->timestamp,
			"message", jstr(r->events[e->event].message)));
	}
	return arr;
}

static json_t *warnings_array(const struct analysis *an)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < an->nwarnings; i++)
		push(arr, jstr(an->warnings[i]));
	return arr;
}

/* jansson hands the text over in many small pieces; gather them in one
 * buffer and write it once. */
struct out_buffer {
	char *data;
	size_t len, cap;
};

static int write_chunk(const char *buffer, size_t size, void *arg)
{
	struct out_buffer *b = arg;
	if (b->cap - b->len < size) {
		size_t cap = b->cap ? b->cap : (1 << 20);
		while (cap - b->len < size)
			cap *= 2;
		char *data = realloc(b->data, cap);
		if (!data)
			return -1;
		b->data = data;
		b->cap = cap;
	}
	memcpy(b->data + b->len, buffer, size);
	b->len += size;
	return 0;
}

/* Encode VALUE (any JSON value; freed here) after KEY into B. */
static int put_member(struct out_buffer *b, bool *first, const char *key, json_t *value)
{
	json_t *k = json_string_nocheck(key);
	int rc = !value || !k;
	rc = rc || write_chunk(*first ? "{" : ",", 1, b);
	rc = rc || json_dump_callback(k, write_chunk, b, JSON_ENCODE_ANY);
	rc = rc || write_chunk(":", 1, b);
	rc = rc || json_dump_callback(value, write_chunk, b, JSON_COMPACT | JSON_ENCODE_ANY);
	*first = false;
	json_decref(k);
	json_decref(value);
	return rc ? -1 : 0;
}

/* "threads": each thread is built, encoded and freed in turn, so a core with
 * thousands of threads never holds its whole document as a jansson tree. */
static int put_threads(struct out_buffer *b, const struct analysis *an, bool all)
{
	static const char head[] = ",\"threads\":[";
	int rc = write_chunk(head, sizeof(head) - 1, b);
	bool first = true;
	for (size_t i = 0; i < an->nthreads && rc == 0; i++) {
		const struct an_thread *t = &an->threads[i];
		if (!all && !t->crashing && an->has_signal)
			continue;
		json_t *o = thread_object(t);
		rc = !o || (!first && write_chunk(",", 1, b)) ||
		     json_dump_callback(o, write_chunk, b, JSON_COMPACT);
		json_decref(o);
		first = false;
	}
	return rc || write_chunk("]", 1, b) ? -1 : 0;
}

/* The document of DESIGN.md, member by member in its order; every key and
 * value is encoded by jansson. */
int rep_json_write(FILE *out, const struct analysis *an, bool all_threads)
{
	struct out_buffer b = { 0 };
	bool first = true;
	json_failed = false;
	int rc = put_member(&b, &first, "asyncore_version", json_string(AN_VERSION));
	rc = rc || put_member(&b, &first, "core", identity_object(an));
	rc = rc || put_member(&b, &first, "signal", signal_object(an));
	rc = rc || put_member(&b, &first, "crashing_tid",
			      an->has_signal ? json_integer(an->crashing_tid) : json_null());
	rc = rc || put_member(&b, &first, "abort_message", jstr(an->abort_message));
	rc = rc || put_member(&b, &first, "modules", modules_array(an));
	rc = rc || put_threads(&b, an, all_threads);
	rc = rc || put_member(&b, &first, "suspended", suspended_array(an));
	rc = rc || put_member(&b, &first, "recorders", recorders_array(an));
	rc = rc || put_member(&b, &first, "timeline", timeline_array(an));
	rc = rc || put_member(&b, &first, "async_key",
			      an->async_key_found ? jhex(an->async_key) : json_null());
	rc = rc || put_member(&b, &first, "signature", jstr(an->signature));
	rc = rc || put_member(&b, &first, "signature_hash", jstr(an->signature_hash));
	rc = rc || put_member(&b, &first, "warnings", warnings_array(an));
	rc = rc || json_failed || write_chunk("}\n", 2, &b);
	if (rc == 0)
		rc = fwrite(b.data, 1, b.len, out) == b.len ? 0 : -1;
	free(b.data);
	return rc == 0 ? 0 : -1;
}
