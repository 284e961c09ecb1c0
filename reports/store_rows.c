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

/* Copy of OBJ's string member KEY into *OUT (NULL when it is not a
 * string); false when out of memory. */
static bool dup_member(json_t *obj, const char *key, char **out)
{
	const char *s = json_string_value(json_object_get(obj, key));
	*out = s ? strdup(s) : NULL;
	return !s || *out;
}

/* The arguments of rep_frame_args_json()'s TEXT (NULL: none) into F. */
static int parse_args(struct an_frame *f, const char *text)
{
	json_t *arr = text ? json_loads(text, 0, NULL) : NULL, *a;
	size_t i;
	int rc = 0;
	f->has_args = json_is_array(arr);
	if (f->has_args && !(f->args = calloc(json_array_size(arr) + 1, sizeof(*f->args))))
		rc = -1;
	json_array_foreach(rc == 0 && f->has_args ? arr : NULL, i, a) {
		struct an_arg *g = &f->args[f->nargs++];
		g->entry_equal = json_is_true(json_object_get(a, "entry_equal"));
		if (!dup_member(a, "name", &g->name) || !dup_member(a, "type", &g->type) ||
		    !dup_member(a, "value", &g->value) || !dup_member(a, "entry_value", &g->entry_value)) {
			rc = -1;
			break;
		}
	}
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
		return parse_args(f, s);
	return 0;
}
