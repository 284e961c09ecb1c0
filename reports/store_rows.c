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
