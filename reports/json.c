/* The JSON report (DESIGN.md "JSON"), built with jansson.  Unknown values
 * are null; addresses are "0x..." strings. */
#include "report.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../base/strlist.h"
#include "bytes.h"
#include "store_rows.h"

static json_t *jhex(uint64_t v)
{
	char h[32];
	return json_string_nocheck(base_hex(h, v));
}

/* Bytes from a core or a binary as a JSON string (reports/bytes.h): each
 * byte that is not part of valid UTF-8 becomes U+FFFD. */
static json_t *jstr(const char *s)
{
	return rep_json_text(s);
}

/* Set when a value or member could not be added (out of memory) while a
 * value was built, so that value is never written with a hole: the writer
 * fails instead. */
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

/* The program's annotations as an object, names made valid UTF-8 as
 * every string is; a repeated name keeps its last value. */
static json_t *annotations_object(const struct analysis *an)
{
	json_t *o = json_object();
	for (size_t i = 0; o && i < an->nannotations; i++) {
		json_t *name = jstr(an->annotations[i].name);
		if (!name || json_object_set_new(o, json_string_value(name), jstr(an->annotations[i].value)) != 0)
			json_failed = true;
		json_decref(name);
	}
	return o;
}

static json_t *identity_object(const struct analysis *an)
{
	return json_pack("{s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
		"path", jstr(an->core_path),
		"file_size", (json_int_t)an->core_file_size,
		"size", (json_int_t)an->core_size,
		"fingerprint", jstr(an->core_fingerprint),
		"sha256", jstr(an->core_sha256),
		"crashed_at", jstr(an->crashed_at),
		"executable", jstr(an->executable),
		"build_id", jstr(an->build_id),
		"pid", an->has_pid ? json_integer(an->pid) : json_null(),
		"uid", an->has_uid ? json_integer(an->uid) : json_null(),
		"arch", jstr(an->arch),
		"annotations", annotations_object(an));
}

/* A running process read live: its pid, when and how long it was stopped. */
static json_t *process_object(const struct analysis *an)
{
	return json_pack("{s:o, s:I, s:o}",
		"pid", an->has_pid ? json_integer(an->pid) : json_null(),
		"paused_us", (json_int_t)an->paused_us,
		"taken_at", jstr(an->taken_at));
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

/* "handled_by": the crash handler that caught the fault the cause speaks
 * of, what it did, and the signal it caught; null when none did. */
static json_t *handled_by_object(const struct an_caught *k)
{
	if (!k->present)
		return json_null();
	return json_pack("{s:o, s:s, s:o, s:o, s:o}", "function", jstr(k->handler), "action",
			 an_handler_action_name(k->action), "signal", jstr(k->signal_name), "code",
			 jstr(k->has_code ? k->code_name : NULL), "address",
			 jhex_if(k->has_fault_address, k->fault_address));
}

/* "cause": {"kind", "summary"}, and what the kind found: "exception"
 * {"type", "what"} for an uncaught exception, "access" and "expression"
 * for a NULL dereference or another bad access. */
static json_t *cause_object(const struct analysis *an)
{
	const struct an_cause *c = &an->cause;
	if (!c->summary)
		return json_null();
	json_t *o = json_pack("{s:s, s:o}", "kind", an_cause_kind_name(c->kind), "summary",
			      jstr(c->summary));
	if (!o)
		return NULL;
	if (c->kind == AN_CAUSE_UNCAUGHT_EXCEPTION)
		set(o, "exception", json_pack("{s:o, s:o}", "type", jstr(c->exception_type), "what",
					      jstr(c->exception_what)));
	if (c->kind == AN_CAUSE_NULL_DEREFERENCE || c->kind == AN_CAUSE_BAD_ACCESS) {
		set(o, "access", jstr(c->access));
		set(o, "expression", jstr(c->expression));
	}
	set(o, "handled_by", handled_by_object(&an->caught));
	return o;
}

/* The registers the unwinder recovered for this frame (callee-saved ones,
 * rsp and rip in callers; all of them in the innermost frame). */
static json_t *frame_registers(const struct an_frame *f, const char *arch)
{
	json_t *o = json_object();
	uint64_t value;
	for (unsigned r = 0; r < an_frame_nregs(arch); r++)
		if (an_frame_reg(f, r, &value))
			set(o, an_frame_reg_name(arch, r), jhex(value));
	return o;
}

/* The text is written as it is made, in large pieces: jansson hands it over
 * in many small ones, and a report of many threads need not be held whole. */
struct out_buffer {
	FILE *out;
	char data[1 << 16];
	size_t len;
};

static int flush_buffer(struct out_buffer *b)
{
	size_t len = b->len;
	b->len = 0;
	return fwrite(b->data, 1, len, b->out) == len ? 0 : -1;
}

static int write_chunk(const char *buffer, size_t size, void *arg)
{
	struct out_buffer *b = arg;
	if (sizeof(b->data) - b->len < size && flush_buffer(b) != 0)
		return -1;
	if (size > sizeof(b->data))
		return fwrite(buffer, 1, size, b->out) == size ? 0 : -1;
	memcpy(b->data + b->len, buffer, size);
	b->len += size;
	return 0;
}

static int put_text(struct out_buffer *b, const char *text)
{
	return write_chunk(text, strlen(text), b);
}

/* Encode VALUE (borrowed) with jansson into B; -1 when a part of it could
 * not be built. */
static int put_value(struct out_buffer *b, const json_t *value, size_t flags)
{
	if (json_failed)
		return -1;
	return json_dump_callback(value, write_chunk, b, JSON_COMPACT | JSON_ENCODE_ANY | flags);
}

/* Frames repeat: a pool's 200 workers stand in the same functions with the
 * same arguments.  A frame's members that depend on where it is (kind ..
 * detail) and its argument list are each encoded by jansson once per
 * distinct value, and that text is reused; index and cfa are encoded per
 * frame.  A memo maps a frame to the text of one part of it. */
struct text_memo {
	struct text_slot {
		uint64_t hash;
		const struct an_frame *f;   /* the first frame with this text */
		char *text;
	} *slots;
	size_t cap, n;
	uint64_t (*hash)(const struct an_frame *f);
	bool (*same)(const struct an_frame *a, const struct an_frame *b);
	char *(*encode)(const struct an_frame *f);   /* the part's text (malloc'd) */
};

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	for (const unsigned char *c = p; n--; c++)
		h = (h ^ *c) * 1099511628211ULL;
	return h;
}

/* N words mixed a word at a time: a frame's numbers are hashed for every
 * frame written. */
static uint64_t hash_words(uint64_t h, const uint64_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h = (h ^ w[i]) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	return h;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	return s ? hash_bytes(h, s, strlen(s) + 1) : hash_bytes(h, "", 0) * 31;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static uint64_t place_hash(const struct an_frame *f)
{
	uint64_t n[] = { f->pc, f->offset, f->module_offset, (uint64_t)f->line,
			 (uint64_t)f->inline_depth,
			 (uint64_t)f->role << 16 | (uint64_t)f->kind << 8 | f->has_offset << 3 |
			 f->has_module_offset << 2 |
			 f->inlined << 1 | f->tailcall };
	uint64_t h = hash_words(1469598103934665603ULL, n, sizeof(n) / sizeof(n[0]));
	/* A native or async frame's strings follow from its pc and inline
	 * level (same_place still compares them); a runtime's frames share pc
	 * 0 and differ only in their strings. */
	if (!AN_FRAME_IS_RUNTIME(f))
		return h;
	h = hash_str(hash_str(hash_str(hash_str(h, f->function), f->display), f->module), f->file);
	return hash_str(hash_str(h, f->runtime), f->detail);
}

static bool same_place(const struct an_frame *a, const struct an_frame *b)
{
	return a->kind == b->kind && a->role == b->role && a->pc == b->pc &&
	       a->has_offset == b->has_offset &&
	       (!a->has_offset || a->offset == b->offset) &&
	       a->has_module_offset == b->has_module_offset &&
	       (!a->has_module_offset || a->module_offset == b->module_offset) &&
	       a->line == b->line && a->inlined == b->inlined &&
	       a->inline_depth == b->inline_depth && a->tailcall == b->tailcall &&
	       same_str(a->function, b->function) && same_str(a->display, b->display) &&
	       same_str(a->module, b->module) && same_str(a->file, b->file) &&
	       same_str(a->runtime, b->runtime) && same_str(a->detail, b->detail);
}

static json_t *place_object(const struct an_frame *f)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	set(o, "kind", json_string_nocheck(an_frame_kind_name(f->kind)));
	set(o, "pc", AN_FRAME_IS_RUNTIME(f) ? json_null() : jhex(f->pc));
	set(o, "function", jstr(f->function));
	set(o, "display", jstr(f->display));    /* null: function reads as written */
	set(o, "offset", jhex_if(f->has_offset, f->offset));
	set(o, "module", jstr(f->module));
	set(o, "module_offset", jhex_if(f->has_module_offset, f->module_offset));
	set(o, "file", jstr(f->file));
	set(o, "line", f->line > 0 ? json_integer(f->line) : json_null());
	set(o, "inlined", json_boolean(f->inlined));
	set(o, "inline_depth", json_integer(f->inline_depth));
	set(o, "tailcall", json_boolean(f->tailcall));
	/* null, or what the frame is to a crash a signal handler caught */
	set(o, "role", jstr(an_frame_role_name(f->role)));
	set(o, "runtime", jstr(f->runtime));    /* script/label: the description */
	set(o, "detail", jstr(f->detail));
	return o;
}

/* The place members' text, without braces: encoded once per distinct
 * place. */
static char *place_text(const struct an_frame *f)
{
	json_t *v = place_object(f);
	char *text = v && !json_failed ? json_dumps(v, JSON_COMPACT | JSON_EMBED) : NULL;
	json_decref(v);
	return text;
}

/* Frames with the same arguments mostly share their block (analysis.h):
 * the block identifies them (two equal blocks are only encoded twice). */
static uint64_t args_hash(const struct an_frame *f)
{
	uintptr_t block = (uintptr_t)f->args;
	return hash_bytes(hash_bytes(1469598103934665603ULL, &block, sizeof(block)), &f->nargs,
			  sizeof(f->nargs)) ^ f->has_args;
}

static bool same_args(const struct an_frame *a, const struct an_frame *b)
{
	return a->args == b->args && a->nargs == b->nargs && a->has_args == b->has_args;
}

/* [{"name", "type", "value", "entry_value", "entry_equal"}] as the store
 * holds them (reports/store_rows.h), or null without DWARF.  Pointer
 * arguments make most lists distinct. */
static char *args_text(const struct an_frame *f)
{
	return f->has_args ? rep_frame_args_json(f) : strdup("null");
}

static int put_locals(struct out_buffer *b, const struct an_frame *f, bool asked)
{
	if (!asked || AN_FRAME_IS_RUNTIME(f))
		return 0;
	char *text = f->has_locals ? rep_vars_json(f->locals, f->nlocals) : strdup("null");
	int rc = !text || put_text(b, ",\"locals\":") || put_text(b, text) ? -1 : 0;
	free(text);
	return rc;
}

static struct text_slot *memo_slot(struct text_memo *m, uint64_t h, const struct an_frame *f)
{
	for (size_t i = (size_t)h & (m->cap - 1);; i = (i + 1) & (m->cap - 1))
		if (!m->slots[i].text || (m->slots[i].hash == h && m->same(m->slots[i].f, f)))
			return &m->slots[i];
}

static bool memo_grow(struct text_memo *m)
{
	struct text_memo bigger = *m;
	bigger.cap = m->cap ? 2 * m->cap : 1024;
	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return false;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].text)
			*memo_slot(&bigger, m->slots[i].hash, m->slots[i].f) = m->slots[i];
	free(m->slots);
	*m = bigger;
	return true;
}

static void memo_deinit(struct text_memo *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].text);
	free(m->slots);
}

/* The text of F's part (owned by M), or NULL when out of memory. */
static const char *memo_text(struct text_memo *m, const struct an_frame *f)
{
	if (2 * (m->n + 1) > m->cap && !memo_grow(m))
		return NULL;
	uint64_t h = m->hash(f);
	struct text_slot *slot = memo_slot(m, h, f);
	if (!slot->text) {
		char *text = m->encode(f);
		if (!text)
			return NULL;
		*slot = (struct text_slot){ .hash = h, .f = f, .text = text };
		m->n++;
	}
	return slot->text;
}

/* What every frame needs: the memos, and whether frames carry their
 * registers (--frame-registers). */
struct frame_writer {
	struct out_buffer *out;
	struct text_memo places, args;
	bool registers;
	bool locals;                /* the frames' thread or task had its locals asked for */
	const char *arch;           /* names the registers */
};

static void frame_writer_init(struct frame_writer *w, struct out_buffer *out, bool registers,
			      const char *arch)
{
	*w = (struct frame_writer){
		.out = out, .registers = registers, .arch = arch,
		.places = { .hash = place_hash, .same = same_place, .encode = place_text },
		.args = { .hash = args_hash, .same = same_args, .encode = args_text },
	};
}

static void frame_writer_deinit(struct frame_writer *w)
{
	memo_deinit(&w->places);
	memo_deinit(&w->args);
}

/* {"index", kind .. tailcall, "cfa", ["registers"], "args", ["locals"]} */
/* V in decimal, in BUF. */
static const char *decimal(char buf[24], uint64_t v)
{
	char *p = buf + 23;
	*p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	return p;
}

static int put_frame(struct frame_writer *w, const struct an_frame *f, size_t index)
{
	struct out_buffer *b = w->out;
	const char *place = memo_text(&w->places, f), *args = memo_text(&w->args, f);
	if (!place || !args)
		return -1;
	/* The index and the CFA as jansson writes them (a number, a string of
	 * hex digits that needs no escape, or null), without its encoder: it
	 * cost more than the rest of the frame. */
	char digits[24], h[32];
	int rc = put_text(b, "{\"index\":") || put_text(b, decimal(digits, index)) || put_text(b, ",") ||
		 put_text(b, place) || put_text(b, ",\"cfa\":") ||
		 (f->cfa ? put_text(b, "\"") || put_text(b, base_hex(h, f->cfa)) || put_text(b, "\"")
			 : put_text(b, "null"));
	if (w->registers && rc == 0) {
		json_t *regs = frame_registers(f, w->arch);
		rc = !regs || put_text(b, ",\"registers\":") || put_value(b, regs, 0);
		json_decref(regs);
	}
	return rc || put_text(b, ",\"args\":") || put_text(b, args) ||
	       put_locals(b, f, w->locals) || put_text(b, "}") ? -1 : 0;
}

/* The frames of a thread (T) or of a chain or task (T NULL): a thread's
 * frames past a recursion's run have their true index. */
static int put_frames_of(struct frame_writer *w, const struct an_thread *t, const struct an_frame *frames,
			 size_t n)
{
	int rc = put_text(w->out, "[");
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = (i && put_text(w->out, ",")) || put_frame(w, &frames[i], t ? an_thread_frame_index(t, i) : i);
	return rc || put_text(w->out, "]") ? -1 : 0;
}

static int put_frames(struct frame_writer *w, const struct an_frame *frames, size_t n)
{
	return put_frames_of(w, NULL, frames, n);
}

/* "recursion": {"first", "last", "cycle": [names], "repeats"}, and a comma;
 * nothing without one. */
static int put_recursion(struct out_buffer *b, const struct an_recursion *r)
{
	if (!r)
		return 0;
	json_t *cycle = json_array();
	for (size_t i = 0; cycle && i < r->ncycle; i++)
		if (json_array_append_new(cycle, jstr(r->cycle[i])) != 0) {
			json_decref(cycle);
			return -1;
		}
	json_t *o = cycle ? json_pack("{s:I, s:I, s:o, s:I}", "first", (json_int_t)r->first, "last",
				      (json_int_t)r->last, "cycle", cycle, "repeats", (json_int_t)r->repeats)
			  : NULL;
	int rc = !o || put_text(b, "\"recursion\":") || put_value(b, o, 0) || put_text(b, ",");
	json_decref(o);
	return rc ? -1 : 0;
}

static json_t *registers_object(const struct an_thread *t, const char *arch)
{
	json_t *o = json_object();
	for (unsigned r = 0; r < t->nregs && r < AN_THREAD_NREGS; r++)
		set(o, an_thread_reg_name(arch, r), jhex(t->regs[r]));
	return o;
}

/* Write OBJ's members (OBJ freed here) without its braces, then a comma
 * when MORE. */
static int put_members(struct out_buffer *b, json_t *obj, bool more)
{
	int rc = !obj || put_value(b, obj, JSON_EMBED) || (more && put_text(b, ","));
	json_decref(obj);
	return rc ? -1 : 0;
}

/* A thread's registers object as jansson writes it (compact, in order; the
 * names are the architecture's, which need no escape), without its
 * encoder, which cost 47,000 instructions a thread; jansson's own when a
 * name is unknown ("?", which repeats). */
static int put_registers(struct out_buffer *b, const struct an_thread *t, const char *arch)
{
	for (unsigned r = 0; r < t->nregs && r < AN_THREAD_NREGS; r++)
		if (strcmp(an_thread_reg_name(arch, r), "?") == 0) {
			json_t *o = registers_object(t, arch);
			int rc = !o || put_value(b, o, 0);
			json_decref(o);
			return rc ? -1 : 0;
		}
	int rc = put_text(b, "{");
	for (unsigned r = 0; r < t->nregs && r < AN_THREAD_NREGS && rc == 0; r++) {
		char h[32];
		rc = (r && put_text(b, ",")) || put_text(b, "\"") || put_text(b, an_thread_reg_name(arch, r)) ||
		     put_text(b, "\":\"") || put_text(b, base_hex(h, t->regs[r])) || put_text(b, "\"");
	}
	return rc || put_text(b, "}") ? -1 : 0;
}

/* blocked_on: {"kind", "object", "object_name", "owner_tid", "syscall",
 * "fd", "fd_target", "since", "summary"}, null for a thread on the CPU. */
static json_t *blocked_object(const struct an_blocked *b)
{
	if (!b)
		return json_null();
	return json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "kind", an_wait_kind_name(b->kind), "object", jhex_if(b->has_object, b->object),
			 "object_name", jstr(b->object_name),
			 "owner_tid", b->has_owner ? json_integer(b->owner_tid) : json_null(),
			 "syscall", jstr(b->syscall), "fd", b->has_fd ? json_integer(b->fd) : json_null(),
			 "fd_target", jstr(b->fd_target),
			 "since", b->has_since ? json_integer((json_int_t)b->since) : json_null(),
			 "summary", jstr(b->summary));
}

/* "deadlocks": [{"threads", "objects", "summary"}] */
static json_t *deadlocks_array(const struct analysis *an)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < an->ndeadlocks; i++) {
		const struct an_deadlock *d = &an->deadlocks[i];
		json_t *threads = json_array(), *objects = json_array();
		for (size_t k = 0; k < d->n; k++) {
			push(threads, json_integer(d->threads[k]));
			push(objects, jhex_if(d->objects[k] != 0, d->objects[k]));
		}
		push(arr, json_pack("{s:o, s:o, s:o}", "threads", threads, "objects", objects,
				    "summary", jstr(d->summary)));
	}
	return arr;
}

/* The thread's run state ("R", "S", ...) where a live process said it. */
static json_t *thread_state(const struct an_thread *t)
{
	char state[2] = { t->state, '\0' };
	return t->state ? json_string(state) : json_null();
}

/* Its CPU time in seconds: /proc counts it in USER_HZ ticks, 100 a second
 * on every Linux ABI asyncore reads. */
static json_t *thread_cpu(const struct an_thread *t)
{
	return t->has_cpu ? json_real((double)t->cpu_ticks / 100.0) : json_null();
}

/* {"tid", "crashing", "name", "blocked_on", "registers", "frames", "async_root", "unwind_error"} */
static int put_thread(struct frame_writer *w, const struct an_thread *t)
{
	struct out_buffer *b = w->out;
	w->locals = t->has_locals;
	char tid[24];
	snprintf(tid, sizeof(tid), "%d", (int)t->tid);
	int rc = put_text(b, "{\"tid\":") || put_text(b, tid) ||
		 put_text(b, t->crashing ? ",\"crashing\":true," : ",\"crashing\":false,") ||
		 put_members(b, json_pack("{s:o, s:o, s:o, s:o}", "name", jstr(t->name),
					  "blocked_on", blocked_object(t->blocked), "state", thread_state(t),
					  "cpu_seconds", thread_cpu(t)), true) ||
		 put_text(b, "\"registers\":") || put_registers(b, t, w->arch) || put_text(b, ",") ||
		 put_recursion(b, t->recursion) ||
		 put_text(b, "\"frames\":") || put_frames_of(w, t, t->frames, t->nframes);
	w->locals = false;      /* suspended chains' frames: none */
	return rc || put_text(b, ",") ||
	       put_members(b, json_pack("{s:o, s:o}",
					"async_root", t->async_root ? jhex(t->async_root) : json_null(),
					"unwind_error", jstr(t->unwind_error)), false) ||
	       put_text(b, "}") ? -1 : 0;
}

/* "suspended": [{"leaf", "frames"}] */
static int put_suspended(struct frame_writer *w, const struct analysis *an)
{
	struct out_buffer *b = w->out;
	int rc = put_text(b, ",\"suspended\":[");
	for (size_t i = 0; i < an->nsuspended && rc == 0; i++) {
		const struct an_suspended *s = &an->suspended[i];
		rc = (i && put_text(b, ",")) || put_text(b, "{") ||
		     put_members(b, json_pack("{s:o}", "leaf", jhex(s->leaf)), true) ||
		     put_text(b, "\"frames\":") || put_frames(w, s->frames, s->nframes) ||
		     put_text(b, "}");
	}
	return rc || put_text(b, "]") ? -1 : 0;
}

/* Encode the scalar VALUE (freed here) into B. */
static int put_scalar_value(struct out_buffer *b, json_t *value)
{
	int rc = !value || put_value(b, value, 0);
	json_decref(value);
	return rc ? -1 : 0;
}

static bool is_goroutine(const struct an_task *t)
{
	return t->runtime && strcmp(t->runtime, "go") == 0;
}

/* "wait": {"kind", "address"[, "target"]} (a goroutine's also
 * "object_name" and "since"),
 * null when the task waits for nothing known. */
static int put_task_wait(struct out_buffer *b, const struct an_task *t)
{
	if (!t->wait_kind)
		return put_text(b, "null");
	return put_text(b, "{\"kind\":") || put_scalar_value(b, jstr(t->wait_kind)) ||
	       put_text(b, ",\"address\":") ||
	       put_scalar_value(b, jhex_if(t->has_wait_address, t->wait_address)) ||
	       (t->has_wait_target &&
		(put_text(b, ",\"target\":") || put_scalar_value(b, jhex(t->wait_target)))) ||
	       (is_goroutine(t) &&
		(put_text(b, ",\"object_name\":") || put_scalar_value(b, jstr(t->wait_object_name)) ||
		 put_text(b, ",\"since\":") ||
		 put_scalar_value(b, t->has_wait_since ? json_integer((json_int_t)t->wait_since)
						       : json_null()))) ||
	       put_text(b, "}") ? -1 : 0;
}

/* A task's blocked_on, in the shape of a thread's: what its runtime says
 * it waits on (a goroutine's wait reason, a bthread's butex), null when it
 * does not wait. */
static int put_task_blocked(struct out_buffer *b, const struct an_task *t)
{
	if (!t->wait_kind)
		return put_text(b, "null");
	json_t *since = is_goroutine(t) && t->has_wait_since ? json_integer((json_int_t)t->wait_since) : json_null();
	return put_scalar_value(b, json_pack("{s:o, s:o, s:o, s:o, s:o, s:n, s:o, s:n, s:o, s:o}",
					     "kind", jstr(t->wait_kind),
					     "object", jhex_if(t->has_wait_address, t->wait_address),
					     "object_name", jstr(t->wait_object_name),
					     "owner_tid", t->has_wait_owner_tid ? json_integer(t->wait_owner_tid) : json_null(),
					     "owner_task", jhex_if(t->has_wait_owner_task, t->wait_owner_task), "syscall",
					     "fd", t->has_wait_fd ? json_integer((json_int_t)t->wait_fd) : json_null(),
					     "fd_target", "since", since, "summary", jstr(t->wait_summary)));
}

/* A goroutine's ",\"created_by\":{function, file, line}" (null: unknown)
 * and ",\"locked\"" (locked to its OS thread). */
static int put_goroutine_members(struct out_buffer *b, const struct an_task *t)
{
	if (!is_goroutine(t))
		return 0;
	json_t *by = t->created_by
		? json_pack("{s:o, s:o, s:o}", "function", jstr(t->created_by), "file",
			    jstr(t->created_file),
			    "line", t->created_line > 0 ? json_integer(t->created_line) : json_null())
		: json_null();
	return put_text(b, ",\"created_by\":") || put_scalar_value(b, by) ||
	       put_text(b, ",\"locked\":") || put_scalar_value(b, json_boolean(t->locked)) ? -1 : 0;
}

/* A task's members other than its frames, each followed by a comma;
 * written member by member as a frame is (there are thousands). */
static int put_task_members(struct out_buffer *b, const struct an_task *t)
{
	return put_text(b, "\"runtime\":") || put_scalar_value(b, json_string_nocheck(t->runtime)) ||
	       put_text(b, ",\"id\":") ||
	       put_scalar_value(b, is_goroutine(t) ? json_integer((json_int_t)t->id) : jhex(t->id)) ||
	       put_text(b, ",\"state\":") ||
	       put_scalar_value(b, json_string_nocheck(an_task_state_name(t->state))) ||
	       put_text(b, ",\"wait\":") || put_task_wait(b, t) ||
	       put_text(b, ",\"blocked_on\":") || put_task_blocked(b, t) ||
	       put_text(b, ",\"tid\":") ||
	       put_scalar_value(b, t->has_tid ? json_integer(t->tid) : json_null()) ||
	       put_text(b, ",\"fn\":") || put_scalar_value(b, jstr(t->fn)) ||
	       put_text(b, ",\"fn_address\":") ||
	       put_scalar_value(b, t->fn_address ? jhex(t->fn_address) : json_null()) ||
	       put_text(b, ",\"address\":") || put_scalar_value(b, jhex(t->address)) ||
	       put_text(b, ",\"unwind_error\":") || put_scalar_value(b, jstr(t->unwind_error)) ||
	       put_goroutine_members(b, t) ||
	       (t->name && (put_text(b, ",\"name\":") || put_scalar_value(b, jstr(t->name)))) ||
	       put_text(b, ",") ? -1 : 0;
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

/* Encode VALUE (any JSON value; freed here) after KEY into B. */
static int put_member(struct out_buffer *b, bool *first, const char *key, json_t *value)
{
	json_t *k = json_string_nocheck(key);
	int rc = !value || !k;
	rc = rc || write_chunk(*first ? "{" : ",", 1, b);
	rc = rc || put_value(b, k, 0);
	rc = rc || write_chunk(":", 1, b);
	rc = rc || put_value(b, value, 0);
	*first = false;
	json_decref(k);
	json_decref(value);
	return rc ? -1 : 0;
}

/* "threads": each thread is encoded in turn, so a core with thousands of
 * threads never holds its whole document as a jansson tree. */
static int put_threads(struct frame_writer *w, const struct analysis *an, bool all)
{
	int rc = put_text(w->out, ",\"threads\":[");
	bool first = true;
	for (size_t i = 0; i < an->nthreads && rc == 0; i++) {
		const struct an_thread *t = &an->threads[i];
		if (!all && !t->crashing && an->has_signal)
			continue;
		rc = (!first && put_text(w->out, ",")) || put_thread(w, t);
		first = false;
	}
	return rc || put_text(w->out, "]") ? -1 : 0;
}

/* "tasks": streamed as the threads are (a server core holds thousands). */
/* "tasks": [{"runtime", "id", "state", "wait", "tid", "fn", ..., "frames"}] */
static int put_tasks(struct frame_writer *w, const struct analysis *an)
{
	struct out_buffer *b = w->out;
	int rc = put_text(b, ",\"tasks\":[");
	for (size_t i = 0; i < an->ntasks && rc == 0; i++) {
		const struct an_task *t = &an->tasks[i];
		w->locals = t->has_locals;
		rc = (i && put_text(b, ",")) || put_text(b, "{") ||
		     put_task_members(b, t) ||
		     put_text(b, "\"frames\":") || put_frames(w, t->frames, t->nframes) ||
		     put_text(b, "}");
	}
	w->locals = false;
	return rc || put_text(b, "]") ? -1 : 0;
}

/* The document of DESIGN.md, member by member in its order; every value
 * is encoded by jansson (the keys of frames, arguments and tasks, which
 * repeat thousands of times, are written as constant text). */
int rep_json_write(FILE *out, const struct analysis *an, const struct rep_json_options *opts)
{
	struct out_buffer *b = malloc(sizeof(*b));
	struct frame_writer w;
	bool first = true;
	if (!b)
		return -1;
	json_failed = false;
	b->out = out;
	b->len = 0;
	frame_writer_init(&w, b, opts->frame_registers, an->arch);
	int rc = put_member(b, &first, "asyncore_version", json_string(AN_VERSION));
	rc = rc || put_member(b, &first, "core", an->live ? json_null() : identity_object(an));
	if (an->live)   /* a core's report has no "process" */
		rc = rc || put_member(b, &first, "process", process_object(an));
	rc = rc || put_member(b, &first, "cause", cause_object(an));
	rc = rc || put_member(b, &first, "signal", signal_object(an));
	rc = rc || put_member(b, &first, "crashing_tid",
			      an->has_signal ? json_integer(an->crashing_tid) : json_null());
	rc = rc || put_member(b, &first, "abort_message", jstr(an->abort_message));
	rc = rc || put_member(b, &first, "modules", modules_array(an));
	rc = rc || put_member(b, &first, "deadlocks", deadlocks_array(an));
	rc = rc || put_threads(&w, an, opts->all_threads);
	rc = rc || put_suspended(&w, an);
	rc = rc || put_tasks(&w, an);
	rc = rc || put_member(b, &first, "recorders", recorders_array(an));
	rc = rc || put_member(b, &first, "timeline", timeline_array(an));
	rc = rc || put_member(b, &first, "async_key",
			      an->async_key_found ? jhex(an->async_key) : json_null());
	rc = rc || put_member(b, &first, "signature", jstr(an->signature));
	rc = rc || put_member(b, &first, "signature_hash", jstr(an->signature_hash));
	rc = rc || put_member(b, &first, "warnings", warnings_array(an));
	rc = rc || write_chunk("}\n", 2, b) || flush_buffer(b);
	frame_writer_deinit(&w);
	free(b);
	return rc == 0 ? 0 : -1;
}
