#include "store_rows.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bytes.h"

void rep_store_time(int64_t t, char out[32])
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!gmtime_r(&tt, &tm) || strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(out, 32, "unknown");
}

size_t rep_total_frames(const struct analysis *an)
{
	size_t n = 0;
	for (size_t i = 0; i < an->nthreads; i++)
		n += an->threads[i].nframes;
	return n;
}

char *rep_frame_args_json(const struct an_frame *f)
{
	if (!f->has_args)
		return NULL;
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < f->nargs; i++) {
		const struct an_arg *a = &f->args[i];
		if (json_array_append_new(arr, json_pack("{s:o, s:o, s:o, s:o, s:b}",
			"name", rep_json_text(a->name), "type", rep_json_text(a->type),
			"value", rep_json_text(a->value), "entry_value", rep_json_text(a->entry_value),
			"entry_equal", a->entry_equal)) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	char *text = arr ? json_dumps(arr, JSON_COMPACT) : NULL;
	json_decref(arr);
	return text;
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

static char **frame_text(struct an_frame *f, const char *column)
{
	return strcmp(column, "function") == 0 ? &f->function :
	       strcmp(column, "module") == 0 ? &f->module :
	       strcmp(column, "file") == 0 ? &f->file :
	       strcmp(column, "display") == 0 ? &f->display :
	       strcmp(column, "runtime") == 0 ? &f->runtime :
	       strcmp(column, "detail") == 0 ? &f->detail : NULL;
}

static bool *frame_flag(struct an_frame *f, const char *column)
{
	return strcmp(column, "inlined") == 0 ? &f->inlined :
	       strcmp(column, "tailcall") == 0 ? &f->tailcall :
	       strcmp(column, "activation") == 0 ? &f->activation :
	       strcmp(column, "seam") == 0 ? &f->seam : NULL;
}

int rep_frame_set_column(struct an_frame *f, const char *column, const struct rep_cell *v)
{
	const char *s = v->null ? NULL : v->s;
	uint64_t u = v->null ? 0 : (uint64_t)v->i;
	char **text = frame_text(f, column);
	bool *flag = frame_flag(f, column);
	if (text) {
		free(*text);
		*text = s ? strdup(s) : NULL;
		return !s || *text ? 0 : -1;
	}
	if (flag)
		*flag = u != 0;
	else if (strcmp(column, "kind") == 0)
		f->kind = an_frame_kind_parse(s);
	else if (strcmp(column, "pc") == 0)
		f->pc = u;
	else if (strcmp(column, "cfa") == 0)
		f->cfa = u;
	else if (strcmp(column, "function_offset") == 0) {
		f->offset = u;
		f->has_offset = !v->null;
	} else if (strcmp(column, "module_offset") == 0) {
		f->module_offset = u;
		f->has_module_offset = !v->null;
	} else if (strcmp(column, "line") == 0)
		f->line = (int)u;
	else if (strcmp(column, "inline_depth") == 0)
		f->inline_depth = (int)u;
	else if (strcmp(column, "args") == 0 && !f->has_args)
		return rep_frame_args_parse(f, s);
	return 0;
}
