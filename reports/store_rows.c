#include "store_rows.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../analyzer/signature.h"
#include "../base/sha256.h"
#include "bytes.h"

void rep_store_time(int64_t t, char out[32])
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!gmtime_r(&tt, &tm) || strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(out, 32, "unknown");
}

const char *rep_core_file_mtime(const struct analysis *an, char out[32])
{
	struct stat sb;
	if (!an->core_path || stat(an->core_path, &sb) != 0)
		return NULL;
	rep_store_time((int64_t)sb.st_mtime, out);
	return out;
}

size_t rep_total_frames(const struct analysis *an)
{
	size_t n = 0;
	for (size_t i = 0; i < an->nthreads; i++)
		n += an->threads[i].nframes;
	return n;
}

/* Thread T (index I) blocked on B. */
static struct rep_blocked_columns thread_blocked(const struct an_thread *t, size_t i,
						 const struct an_blocked *b)
{
	return (struct rep_blocked_columns){
		.waiter = "thread", .waiter_idx = i, .has_tid = true, .tid = t->tid,
		.kind = an_wait_kind_name(b->kind), .has_object = b->has_object, .object = b->object,
		.object_name = b->object_name, .has_owner_tid = b->has_owner, .owner_tid = b->owner_tid,
		.owner_gone = b->owner_gone, .syscall = b->syscall, .has_fd = b->has_fd, .fd = b->fd,
		.fd_target = b->fd_target, .has_since = b->has_since, .since = b->since, .via = b->via,
		.function = b->waiter, .summary = b->summary,
	};
}

/* Task T (index I) waiting, as the JSON report's task blocked_on says it. */
static struct rep_blocked_columns task_blocked(const struct an_task *t, size_t i)
{
	return (struct rep_blocked_columns){
		.waiter = "task", .waiter_idx = i, .has_tid = t->has_tid, .tid = t->tid,
		.kind = t->wait_kind, .has_object = t->has_wait_address, .object = t->wait_address,
		.object_name = t->wait_object_name, .has_owner_tid = t->has_wait_owner_tid,
		.owner_tid = t->wait_owner_tid, .has_owner_task = t->has_wait_owner_task,
		.owner_task = t->wait_owner_task, .has_fd = t->has_wait_fd, .fd = t->wait_fd,
		.has_since = t->has_wait_since, .since = t->wait_since, .summary = t->wait_summary,
	};
}

bool rep_blocked_row(const struct analysis *an, size_t k, struct rep_blocked_columns *out)
{
	if (k < an->nthreads) {
		const struct an_thread *t = &an->threads[k];
		if (!t->blocked)
			return false;
		*out = thread_blocked(t, k, t->blocked);
		return true;
	}
	k -= an->nthreads;
	if (k >= an->ntasks || !an->tasks[k].wait_kind)
		return false;
	*out = task_blocked(&an->tasks[k], k);
	return true;
}

static int cmp_term(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void rep_terms_unique(const char **v, size_t *n)
{
	size_t k = 0;
	qsort(v, *n, sizeof(*v), cmp_term);
	for (size_t i = 0; i < *n; i++)
		if (v[i][0] && (k == 0 || strcmp(v[k - 1], v[i]) != 0))
			v[k++] = v[i];
	*n = k;
}

/* The names of frames F[0 .. N) appended to V at *K. */
static void frame_terms(const struct an_frame *f, size_t n, const char **v, size_t *k)
{
	for (size_t i = 0; i < n; i++) {
		const char *const names[] = {f[i].function, f[i].module, f[i].file};
		for (size_t j = 0; j < 3; j++)
			if (names[j])
				v[(*k)++] = names[j];
	}
}

int rep_core_terms(const struct analysis *an, const char ***names, size_t *n)
{
	size_t cap = 1;
	for (size_t i = 0; i < an->nthreads; i++)
		cap += 3 * an->threads[i].nframes;
	for (size_t i = 0; i < an->ntasks; i++)
		cap += 3 * an->tasks[i].nframes;
	const char **v = malloc(cap * sizeof(*v));
	size_t k = 0;
	if (!v)
		return -1;
	for (size_t i = 0; i < an->nthreads; i++)
		frame_terms(an->threads[i].frames, an->threads[i].nframes, v, &k);
	for (size_t i = 0; i < an->ntasks; i++)
		frame_terms(an->tasks[i].frames, an->tasks[i].nframes, v, &k);
	if (an->cause.summary)
		v[k++] = an->cause.summary;
	rep_terms_unique(v, &k);
	*names = v;
	*n = k;
	return 0;
}

void rep_term_set_key(const char *const *names, size_t n, char key[REP_TERM_SET_KEY])
{
	struct base_sha256 ctx;
	char hex[65];
	base_sha256_init(&ctx);
	for (size_t i = 0; i < n; i++)
		base_sha256_update(&ctx, names[i], strlen(names[i]) + 1);
	base_sha256_final(&ctx, hex);
	memcpy(key, hex, REP_TERM_SET_KEY - 1);
	key[REP_TERM_SET_KEY - 1] = '\0';
}

const char *rep_core_arch(const struct analysis *an)
{
	return an->arch ? an->arch : "x86_64";
}

struct rep_caught_columns rep_core_caught(const struct analysis *an)
{
	const struct an_caught *c = &an->caught;
	if (!c->present)
		return (struct rep_caught_columns){0};
	return (struct rep_caught_columns){
		.has_signal = true, .signal = c->signo, .signal_name = c->signal_name,
		.has_code = c->has_code, .code = c->code, .code_name = c->code_name,
		.has_address = c->has_fault_address, .address = c->fault_address,
		.handled_by = c->handler, .action = an_handler_action_name(c->action),
	};
}

struct rep_go_columns rep_core_go(const struct analysis *an)
{
	const struct an_crash_signals s = an_crash_signals_of(an);
	if (!s.go_crash)
		return (struct rep_go_columns){0};
	return (struct rep_go_columns){
		.crash = s.go_crash, .has_signal = s.go_signo != 0, .signal = s.go_signo,
		.signal_name = s.go_signal_name, .message = an->go.message,
	};
}

/* A text being made in memory, appended to as jansson's output is. */
struct text_buf {
	char *s;
	size_t len, cap;
	bool nomem;
};

static int text_chunk(const char *buffer, size_t size, void *arg)
{
	struct text_buf *t = arg;
	if (!t->nomem && t->len + size + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 256;
		while (cap < t->len + size + 1)
			cap *= 2;
		char *p = realloc(t->s, cap);
		if (p) {
			t->s = p;
			t->cap = cap;
		} else {
			t->nomem = true;
		}
	}
	if (t->nomem)
		return -1;
	memcpy(t->s + t->len, buffer, size);
	t->len += size;
	t->s[t->len] = '\0';
	return 0;
}

static void text_put(struct text_buf *t, const char *text)
{
	text_chunk(text, strlen(text), t);
}

/* Encode the scalar VALUE (freed here) with jansson into T.  Containers
 * many times over are written member by member instead: jansson's dump of
 * each container prints and hashes its address (a loop check), which costs
 * more than the rest when a core has thousands of frames. */
static void text_scalar(struct text_buf *t, json_t *value)
{
	if (!value || json_dump_callback(value, text_chunk, t, JSON_COMPACT | JSON_ENCODE_ANY) != 0)
		t->nomem = true;
	json_decref(value);
}

/* The text (the caller frees it), or NULL when out of memory. */
static char *text_take(struct text_buf *t)
{
	if (t->nomem) {
		free(t->s);
		return NULL;
	}
	return t->s;
}

char *rep_vars_json(const struct an_arg *vars, size_t n)
{
	struct text_buf t = {0};
	text_put(&t, "[");
	for (size_t i = 0; i < n; i++) {
		const struct an_arg *a = &vars[i];
		text_put(&t, i ? ",{\"name\":" : "{\"name\":");
		text_scalar(&t, rep_json_text(a->name));
		text_put(&t, ",\"type\":");
		text_scalar(&t, rep_json_text(a->type));
		text_put(&t, ",\"value\":");
		text_scalar(&t, rep_json_text(a->value));
		text_put(&t, ",\"entry_value\":");
		text_scalar(&t, rep_json_text(a->entry_value));
		text_put(&t, ",\"entry_equal\":");
		text_scalar(&t, json_boolean(a->entry_equal));
		text_put(&t, "}");
	}
	text_put(&t, "]");
	return text_take(&t);
}

char *rep_frame_args_json(const struct an_frame *f)
{
	return f->has_args ? rep_vars_json(f->args, f->nargs) : NULL;
}

void rep_index_gap_note(struct an_index_gap *gap, size_t n, int64_t idx)
{
	if (!gap->at && n && idx > (int64_t)n)
		*gap = (struct an_index_gap){n, (size_t)idx - n};
}

void rep_event_args_json(const struct an_event *e, char *buf, size_t len)
{
	size_t n = e->nargs < 12 ? e->nargs : 12, used = 0;
	used += (size_t)snprintf(buf, len, "[");
	for (size_t i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s\"0x%" PRIx64 "\"", i ? "," : "",
					 e->args[i]);
	if (used < len)
		snprintf(buf + used, len - used, "]");
}

char *rep_error_ident(const struct rep_core_id *id)
{
	char *ident = NULL;
	if (id->fingerprint)
		return strdup(id->fingerprint);
	if (asprintf(&ident, "path:%s", id->path) < 0)
		return NULL;
	return ident;
}

int rep_frame_args_parse(struct an_frame *f, const char *text)
{
	json_t *arr = text ? json_loads(text, 0, NULL) : NULL;
	size_t n = json_array_size(arr);
	struct an_arg *args = calloc(n ? n : 1, sizeof(*args));    /* borrowing ARR's strings */
	int rc = args ? 0 : -1;
	for (size_t i = 0; args && i < n; i++) {
		json_t *a = json_array_get(arr, i);
		args[i] = (struct an_arg){
			.name = (char *)json_string_value(json_object_get(a, "name")),
			.type = (char *)json_string_value(json_object_get(a, "type")),
			.value = (char *)json_string_value(json_object_get(a, "value")),
			.entry_value = (char *)json_string_value(json_object_get(a, "entry_value")),
			.entry_equal = json_is_true(json_object_get(a, "entry_equal")),
		};
	}
	f->has_args = json_is_array(arr);
	if (rc == 0 && n && !(f->args = an_args_pack(args, n)))
		rc = -1;
	f->nargs = f->args ? n : 0;
	free(args);
	json_decref(arr);
	return rc;
}

/* The frames tables' columns that are fields, in enum rep_frame_field's
 * order (after REP_FIELD_NONE). */
static const char *const field_columns[] = {
	"kind", "pc", "cfa", "function", "module", "file", "display", "runtime", "detail",
	"function_offset", "module_offset", "line", "inline_depth", "inlined", "tailcall",
	"activation", "seam", "args", "role",
};

enum rep_frame_field rep_frame_field_of(const char *column)
{
	for (size_t i = 0; column && i < sizeof(field_columns) / sizeof(field_columns[0]); i++)
		if (strcmp(column, field_columns[i]) == 0)
			return (enum rep_frame_field)(i + 1);
	return REP_FIELD_NONE;
}

static char **frame_text(struct an_frame *f, enum rep_frame_field field)
{
	switch (field) {
	case REP_FIELD_FUNCTION: return &f->function;
	case REP_FIELD_MODULE: return &f->module;
	case REP_FIELD_FILE: return &f->file;
	case REP_FIELD_DISPLAY: return &f->display;
	case REP_FIELD_RUNTIME: return &f->runtime;
	case REP_FIELD_DETAIL: return &f->detail;
	default: return NULL;
	}
}

static bool *frame_flag(struct an_frame *f, enum rep_frame_field field)
{
	switch (field) {
	case REP_FIELD_INLINED: return &f->inlined;
	case REP_FIELD_TAILCALL: return &f->tailcall;
	case REP_FIELD_ACTIVATION: return &f->activation;
	case REP_FIELD_SEAM: return &f->seam;
	default: return NULL;
	}
}

int rep_frame_set_field(struct an_frame *f, enum rep_frame_field field, const struct rep_cell *v)
{
	const char *s = v->null ? NULL : v->s;
	uint64_t u = v->null ? 0 : (uint64_t)v->i;
	char **text = frame_text(f, field);
	bool *flag = frame_flag(f, field);
	if (text) {
		free(*text);
		*text = s ? strdup(s) : NULL;
		return !s || *text ? 0 : -1;
	}
	if (flag) {
		*flag = u != 0;
		return 0;
	}
	switch (field) {
	case REP_FIELD_KIND:
		f->kind = an_frame_kind_parse(s);
		break;
	case REP_FIELD_PC:
		f->pc = u;
		break;
	case REP_FIELD_CFA:
		f->cfa = u;
		break;
	case REP_FIELD_FUNCTION_OFFSET:
		f->offset = u;
		f->has_offset = !v->null;
		break;
	case REP_FIELD_MODULE_OFFSET:
		f->module_offset = u;
		f->has_module_offset = !v->null;
		break;
	case REP_FIELD_LINE:
		f->line = (int)u;
		break;
	case REP_FIELD_INLINE_DEPTH:
		f->inline_depth = (int)u;
		break;
	case REP_FIELD_ARGS:
		return f->has_args ? 0 : rep_frame_args_parse(f, s);
	case REP_FIELD_ROLE:
		f->role = an_frame_role_parse(s);
		break;
	default:
		break;
	}
	return 0;
}
