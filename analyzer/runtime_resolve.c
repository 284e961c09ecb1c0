/* Described runtimes, resolution: each description's root found in the
 * program and its members (through DWARF or its layout) turned into the
 * offsets its stacks are read with. */
#include "runtime_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/array.h"

#define TYPE_NAME_LIMIT 256u

static struct core_error *unresolved(const struct an_rt_desc *d, const struct an_rt_member *m,
				     const char *type)
{
	return core_error_create(CORE_ERROR_USAGE, "%s: %s: member %s of %s is neither in the "
				 "program's debug info nor in the description's layout", d->file,
				 m->where, m->path, type);
}

/* The layout's entry for member PATH of TYPE, or NULL. */
static const struct an_rt_layout_member *layout_member(const struct an_rt_desc *d,
						       const char *type, const char *path)
{
	const struct an_rt_layout_type *lt = an_rt_layout_type(d, type);
	for (size_t i = 0; lt && i < lt->nmembers; i++)
		if (strcmp(lt->members[i].path, path) == 0)
			return &lt->members[i];
	return NULL;
}

/* One step of a path: member PATH of TYPE (no "->"), the layout first,
 * then the program's DWARF; TARGET (when not NULL) gets the type a
 * pointer member points at. */
static bool resolve_step(struct dbg_session *s, const struct an_rt_desc *d, const char *type,
			 const char *path, uint64_t *offset, uint64_t *size, char *target)
{
	const struct an_rt_layout_member *lm = layout_member(d, type, path);
	if (lm) {
		*offset = lm->offset;
		*size = lm->size;
		if (target && lm->points_to)
			snprintf(target, TYPE_NAME_LIMIT, "%s", lm->points_to);
		return !target || lm->points_to ||
		       dbg_member_target(s, type, path, target, TYPE_NAME_LIMIT);
	}
	return dbg_member_find(s, type, path, offset, size) &&
	       (!target || dbg_member_target(s, type, path, target, TYPE_NAME_LIMIT));
}

/* M of TYPE, each "->" a pointer to follow into the type it points at. */
static struct core_error *resolve_member(struct dbg_session *s, const struct an_rt_desc *d,
					 const char *type, const struct an_rt_member *m,
					 struct an_rt_slot *out)
{
	char cur[TYPE_NAME_LIMIT], target[TYPE_NAME_LIMIT], step[TYPE_NAME_LIMIT];
	const char *p = m->path;
	memset(out, 0, sizeof(*out));
	snprintf(cur, sizeof(cur), "%s", type);
	for (const char *arrow; (arrow = strstr(p, "->")); p = arrow + 2) {
		uint64_t size;
		snprintf(step, sizeof(step), "%.*s", (int)(arrow - p), p);
		if (!resolve_step(s, d, cur, step, &out->hops[out->nhops], &size, target))
			return core_error_create(CORE_ERROR_USAGE, "%s: %s: member %s of %s is neither a "
						 "pointer in the program's debug info nor in the "
						 "description's layout (as [offset, 8, \"TYPE\"])",
						 d->file, m->where, step, cur);
		if (size != 8)
			return core_error_create(CORE_ERROR_USAGE, "%s: %s: member %s of %s is %" PRIu64
						 " bytes; a pointer is 8", d->file, m->where, step,
						 cur, size);
		out->nhops++;
		memcpy(cur, target, sizeof(cur));
	}
	if (resolve_step(s, d, cur, p, &out->offset, &out->size, NULL))
		return NULL;
	return unresolved(d, &(struct an_rt_member){ .path = (char *)p, .where = m->where }, cur);
}

/* A member read as a number (1, 2, 4 or 8 bytes) or, when POINTER, an
 * address (8 bytes). */
static struct core_error *check_width(const struct an_rt_desc *d, const struct an_rt_member *m,
				      const struct an_rt_slot *sl, bool pointer)
{
	bool ok = pointer ? sl->size == 8
			  : sl->size == 1 || sl->size == 2 || sl->size == 4 || sl->size == 8;
	uint64_t end = sl->nhops ? sl->hops[0] + 8 : sl->offset + sl->size;
	if (ok && end <= AN_RT_ENTRY_LIMIT && sl->offset + sl->size <= AN_RT_ENTRY_LIMIT)
		return NULL;
	if (ok)
		return core_error_create(CORE_ERROR_USAGE, "%s: %s: member %s ends past %u bytes",
					 d->file, m->where, m->path, AN_RT_ENTRY_LIMIT);
	return core_error_create(CORE_ERROR_USAGE, "%s: %s: member %s is %" PRIu64 " bytes; %s",
				 d->file, m->where, m->path, sl->size,
				 pointer ? "a pointer is 8" : "a number is 1, 2, 4 or 8");
}

/* Bytes of the object a slot reads directly: up to its first pointer, or
 * its member. */
static uint64_t slot_extent(const struct an_rt_slot *sl)
{
	return sl->nhops ? sl->hops[0] + 8 : sl->offset + sl->size;
}

static struct core_error *resolve_value(struct dbg_session *s, const struct an_rt_desc *d,
					const char *type, const struct an_rt_member *m, bool pointer,
					struct an_rt_slot *out, uint64_t *extent)
{
	struct core_error *err = resolve_member(s, d, type, m, out);
	if (!err)
		err = check_width(d, m, out, pointer);
	if (!err && slot_extent(out) > *extent)
		*extent = slot_extent(out);
	return err;
}

/* A field whose value is a member's address: its size does not matter. */
static struct core_error *resolve_address(struct dbg_session *s, const struct an_rt_desc *d,
					  const char *type, const struct an_rt_member *m,
					  struct an_rt_slot *out, uint64_t *extent)
{
	struct core_error *err = resolve_member(s, d, type, m, out);
	uint64_t end = out->nhops ? out->hops[0] + 8 : out->offset;
	if (!err && (end > AN_RT_ENTRY_LIMIT || out->offset > AN_RT_ENTRY_LIMIT))
		err = core_error_create(CORE_ERROR_USAGE, "%s: %s: member %s is past %u bytes",
					d->file, m->where, m->path, AN_RT_ENTRY_LIMIT);
	if (!err && end > *extent)
		*extent = end;
	return err;
}

static bool template_shows(const struct an_rt_template *t, size_t field)
{
	for (size_t i = 0; i < t->npieces; i++)
		if (!t->pieces[i].text && t->pieces[i].field == field)
			return true;
	return false;
}

/* True when the field is read as a string (a template shows it, or a
 * decoder reads it): it is then a pointer. */
static bool field_is_string(const struct an_rt_desc *d, size_t field)
{
	if (d->entry.fields[field].as == AN_RT_AS_COUNTED)
		return true;
	if (d->entry.fields[field].as != AN_RT_AS_STRING)
		return false;
	for (size_t i = 0; i < d->entry.nfields; i++)
		for (size_t a = 0; d->entry.fields[i].decoder && a < AN_RT_DECODER_ARGS; a++)
			if (d->entry.fields[i].args[a] == field)
				return true;
	for (size_t i = 0; i < d->nkinds; i++)
		if (template_shows(&d->kinds[i].name, field) || template_shows(&d->kinds[i].detail, field) ||
		    template_shows(&d->kinds[i].fallback, field))
			return true;
	return false;
}

/* The size of TYPE: the layout's, else the program's DWARF. */
static bool type_size(struct dbg_session *s, const struct an_rt_desc *d, const char *type,
		      uint64_t *size)
{
	const struct an_rt_layout_type *lt = an_rt_layout_type(d, type);
	if (lt && lt->has_size) {
		*size = lt->size;
		return true;
	}
	return dbg_type_size(s, type, size);
}

static struct core_error *resolve_entry(struct dbg_session *s, struct an_rt_resolved *r)
{
	const struct an_rt_desc *d = r->d;
	uint64_t extent = 0;
	struct core_error *err = NULL;
	r->fields = calloc(d->entry.nfields, sizeof(*r->fields));
	if (!r->fields)
		return &core_error_nomem;
	for (size_t i = 0; i < d->entry.nfields && !err; i++) {
		const struct an_rt_field *f = &d->entry.fields[i];
		if (f->decoder)
			continue;
		err = f->address ? resolve_address(s, d, d->entry.type, &f->member, &r->fields[i], &extent)
				 : resolve_value(s, d, d->entry.type, &f->member, field_is_string(d, i),
						 &r->fields[i], &extent);
	}
	if (!err && d->stack.kind == AN_RT_STACK_LIST)
		err = resolve_value(s, d, d->entry.type, &d->stack.next, true, &r->next, &extent);
	if (err)
		return err;
	if (d->stack.kind == AN_RT_STACK_LIST) {
		r->entry_size = extent;   /* a list entry is read up to its last member */
		r->entry_align = r->next.offset % 8 == 0 ? 8 : 1;
		return NULL;
	}
	uint64_t size = 0;
	if (!type_size(s, d, d->entry.type, &size))
		return core_error_create(CORE_ERROR_USAGE, "%s: $.entry.type: the size of %s is neither "
					 "in the program's debug info nor in the description's layout",
					 d->file, d->entry.type);
	if (size < extent || size > AN_RT_ENTRY_LIMIT)
		return core_error_create(CORE_ERROR_USAGE, "%s: $.entry.type: %s is %" PRIu64 " bytes, "
					 "but its members need %" PRIu64 " (at most %u)", d->file,
					 d->entry.type, size, extent, AN_RT_ENTRY_LIMIT);
	r->entry_size = size;
	r->entry_align = size % 8 == 0 ? 8 : 1;
	return NULL;
}

static struct core_error *resolve_string_kind(struct dbg_session *s, const struct an_rt_desc *d,
					      const struct an_rt_string_kind *k,
					      struct an_rt_resolved_string *out)
{
	uint64_t extent = 0, size;
	struct core_error *err = NULL;
	out->fields = calloc(k->nfields, sizeof(*out->fields));
	out->data = calloc(k->nforms, sizeof(*out->data));
	if (!out->fields || !out->data)
		return &core_error_nomem;
	for (size_t i = 0; i < k->nfields && !err; i++)
		err = resolve_value(s, d, k->type, &k->fields[i].member, false, &out->fields[i], &extent);
	for (size_t i = 0; i < k->nforms && !err; i++) {
		const struct an_rt_string_form *f = &k->forms[i];
		struct an_rt_slot data;
		if (f->data.path && !(err = resolve_member(s, d, k->type, &f->data, &data)))
			out->data[i] = data.offset;
		else if (!f->data.path && type_size(s, d, f->header, &size))
			out->data[i] = size;
		else if (!f->data.path)
			err = core_error_create(CORE_ERROR_USAGE, "%s: $.strings.%s.forms[%zu].header: the "
						"size of %s is neither in the program's debug info nor "
						"in the description's layout", d->file, k->name, i,
						f->header);
		if (!err && out->data[i] > AN_RT_ENTRY_LIMIT)
			err = core_error_create(CORE_ERROR_USAGE, "%s: $.strings.%s.forms[%zu]: the "
						"characters start past %u bytes", d->file, k->name, i,
						AN_RT_ENTRY_LIMIT);
	}
	return err;
}

static struct core_error *resolve_strings(struct dbg_session *s, struct an_rt_resolved *r)
{
	const struct an_rt_desc *d = r->d;
	struct core_error *err = NULL;
	if (!d->nstrings)
		return NULL;
	r->strings = calloc(d->nstrings, sizeof(*r->strings));
	if (!r->strings)
		return &core_error_nomem;
	for (size_t i = 0; i < d->nstrings && !err; i++)
		err = resolve_string_kind(s, d, &d->strings[i], &r->strings[i]);
	return err;
}

/* root.lists and root.thread. */
static struct core_error *resolve_lists(struct dbg_session *s, struct an_rt_resolved *r)
{
	const struct an_rt_desc *d = r->d;
	uint64_t extent = 0;
	struct core_error *err = NULL;
	if (d->root.nlists) {
		r->list_head = calloc(d->root.nlists, sizeof(*r->list_head));
		r->list_next = calloc(d->root.nlists, sizeof(*r->list_next));
		if (!r->list_head || !r->list_next)
			return &core_error_nomem;
	}
	for (size_t i = 0; i < d->root.nlists && !err; i++) {
		const struct an_rt_list *l = &d->root.lists[i];
		const char *element = i + 1 < d->root.nlists ? d->root.lists[i + 1].type : d->stack.type;
		err = resolve_value(s, d, l->type, &l->head, true, &r->list_head[i], &extent);
		if (!err)
			err = resolve_value(s, d, element, &l->next, true, &r->list_next[i], &extent);
	}
	if (!err && d->root.thread.path)
		err = resolve_value(s, d, d->stack.type, &d->root.thread, false, &r->thread, &extent);
	return err;
}

static struct core_error *resolve_stack(struct dbg_session *s, struct an_rt_resolved *r)
{
	const struct an_rt_desc *d = r->d;
	const char *type = d->stack.type;
	uint64_t extent = 0;
	struct core_error *err = resolve_lists(s, r);
	if (!err)
		err = resolve_strings(s, r);
	if (err)
		return err;
	if (d->stack.kind == AN_RT_STACK_LIST)
		return resolve_value(s, d, type, &d->stack.top, true, &r->top, &r->stack_extent);
	err = resolve_value(s, d, type, &d->stack.array, true, &r->array, &extent);
	if (!err)
		err = resolve_value(s, d, type, &d->stack.count, false, &r->count, &extent);
	if (!err && d->stack.capacity.path) {
		r->has_capacity = true;
		err = resolve_value(s, d, type, &d->stack.capacity, false, &r->capacity, &extent);
	}
	r->stack_extent = extent;
	return err;
}

/* Whether the runtime is the version D describes: root.require's symbol
 * holds the value it says (read from the core, else the mapped file: a
 * constant lives in .rodata). */
static bool required_holds(struct dbg_session *s, const struct an_rt_desc *d)
{
	uint64_t addr, size, value = 0;
	const char *req = d->root.require.symbol;
	return !req || (dbg_find_symbol(s, req, &addr, &size) &&
			core_read_bytes(dbg_session_core(s), addr, &value, d->root.require.size) &&
			(value & d->root.require.mask) == d->root.require.equals);
}

/* Whether D's root is in this core; *R gets its address.  A symbol of the
 * wrong sort (thread-local for a global, or the reverse) is warned. */
static bool find_root(struct dbg_session *s, const struct an_rt_desc *d, struct an_rt_resolved *r)
{
	struct core *core = dbg_session_core(s);
	const char *sym = d->root.symbol;
	uint64_t addr, size;
	bool is_tls = dbg_find_tls_symbol(s, sym, &r->tls);
	if (d->root.kind == AN_RT_ROOT_TLS) {
		if (!is_tls && dbg_find_symbol(s, sym, &addr, &size))
			core_warn(core, "runtime %s: %s is not a thread-local variable; its root is "
				  "not read", d->name, sym);
		return is_tls && required_holds(s, d);
	}
	if (is_tls) {
		core_warn(core, "runtime %s: %s is a thread-local variable; its root is not read "
			  "(a thread-local root is \"tls\")", d->name, sym);
		return false;
	}
	return dbg_find_symbol(s, sym, &r->root, &size) && required_holds(s, d);
}

static void resolved_deinit(struct an_rt_resolved *r)
{
	free(r->fields);
	free(r->list_head);
	free(r->list_next);
	for (size_t i = 0; r->strings && i < r->d->nstrings; i++) {
		free(r->strings[i].fields);
		free(r->strings[i].data);
	}
	free(r->strings);
}

struct core_error *an_runtime_session_open(const struct an_runtimes *set, struct dbg_session *s,
					   struct an_runtime_session **out)
{
	struct an_runtime_session *rs = calloc(1, sizeof(*rs));
	*out = NULL;
	if (!rs)
		return &core_error_nomem;
	rs->s = s;
	rs->core = dbg_session_core(s);
	for (size_t i = 0; set && i < set->n; i++) {
		struct an_rt_resolved r = { .d = &set->v[i] };
		if (!find_root(s, r.d, &r))
			continue;
		struct core_error *err = resolve_stack(s, &r);
		if (!err)
			err = resolve_entry(s, &r);
		struct an_rt_resolved *slot = err ? NULL : base_array_push(&rs->v, &rs->n, &rs->cap,
									   sizeof(*rs->v));
		if (!err && !slot)
			err = &core_error_nomem;
		if (err) {
			resolved_deinit(&r);
			an_runtime_session_destroy(rs);
			return err;
		}
		*slot = r;
	}
	*out = rs;
	return NULL;
}

void an_runtime_session_destroy(struct an_runtime_session *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->n; i++)
		resolved_deinit(&rs->v[i]);
	free(rs->v);
	an_rt_claims_deinit(&rs->claims);
	free(rs);
}
