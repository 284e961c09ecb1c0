/* Described runtimes, resolution: each description's root found in the
 * program and its members (through DWARF or its layout) turned into the
 * offsets its stacks are read with. */
#include "runtime_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/array.h"
#include "rtdecode.h"

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

/* Whether the process holds D's offsets block: its symbol is there and
 * starts with the cookie; *BLOCK gets its address. */
static bool offsets_block(struct dbg_session *s, const struct an_rt_desc *d, uint64_t *block)
{
	char cookie[16];
	uint64_t size;
	size_t n = d->offsets.symbol ? strlen(d->offsets.cookie) : 0;
	return n && dbg_find_symbol(s, d->offsets.symbol, block, &size) &&
	       core_read_bytes(dbg_session_core(s), *block, cookie, n) &&
	       memcmp(cookie, d->offsets.cookie, n) == 0;
}

/* How far into TYPE a member may lie: a root list's object is read member
 * by member (AN_RT_LINK_LIMIT), any other object into a buffer. */
static uint64_t offset_limit(const struct an_rt_desc *d, const char *type)
{
	for (size_t i = 0; i < d->root.nlists; i++)
		if (strcmp(d->root.lists[i].type, type) == 0)
			return AN_RT_LINK_LIMIT;
	return AN_RT_ENTRY_LIMIT - 8;
}

/* What D's offsets block in the process says of member PATH of TYPE (PATH
 * NULL: TYPE's size).  False when there is no block, it does not name it,
 * or the value is not readable or not one (the layout's is used then). */
static bool process_offset(struct dbg_session *s, const struct an_rt_desc *d, const char *type,
			   const char *path, uint64_t *out)
{
	const struct an_rt_layout_type *t = an_rt_offsets_type(d, type);
	uint64_t block, at = UINT64_MAX;
	for (size_t i = 0; t && path && i < t->nmembers; i++)
		if (strcmp(t->members[i].path, path) == 0)
			at = t->members[i].offset;
	if (t && !path && t->has_size)
		at = t->size;
	return at != UINT64_MAX && offsets_block(s, d, &block) &&
	       core_read_u64(dbg_session_core(s), block + at, out) &&
	       (path ? *out <= offset_limit(d, type) : *out > 0 && *out <= AN_RT_ENTRY_LIMIT);
}

/* One step of a path: member PATH of TYPE (no "->"), the layout first,
 * then the program's DWARF (DWARF first for a description that prefers
 * it); TARGET (when not NULL) gets the type a pointer member points at. */
static bool described_step(struct dbg_session *s, const struct an_rt_desc *d, const char *type,
			   const char *path, uint64_t *offset, uint64_t *size, char *target)
{
	const struct an_rt_layout_member *lm = layout_member(d, type, path);
	if (lm && d->dwarf_first && dbg_member_find(s, type, path, offset, size)) {
		/* what a pointer holds: the layout says it where DWARF cannot
		 * (3.13's f_executable, a PyObject * holding a code object) */
		if (target && lm->points_to)
			snprintf(target, TYPE_NAME_LIMIT, "%s", lm->points_to);
		return !target || lm->points_to ||
		       dbg_member_target(s, type, path, target, TYPE_NAME_LIMIT);
	}
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

/* The same, the offset from the process's own offsets block when it names
 * the member (its size and target still the description's or DWARF's). */
static bool resolve_step(struct dbg_session *s, const struct an_rt_desc *d, const char *type,
			 const char *path, uint64_t *offset, uint64_t *size, char *target)
{
	uint64_t at;
	if (!described_step(s, d, type, path, offset, size, target))
		return false;
	if (process_offset(s, d, type, path, &at))
		*offset = at;
	return true;
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
 * address (8 bytes), within LIMIT bytes of its object. */
static struct core_error *check_width(const struct an_rt_desc *d, const struct an_rt_member *m,
				      const struct an_rt_slot *sl, bool pointer, uint64_t limit)
{
	bool ok = pointer ? sl->size == 8
			  : sl->size == 1 || sl->size == 2 || sl->size == 4 || sl->size == 8;
	uint64_t end = sl->nhops ? sl->hops[0] + 8 : sl->offset + sl->size;
	if (ok && end <= limit && sl->offset + sl->size <= limit)
		return NULL;
	if (ok)
		return core_error_create(CORE_ERROR_USAGE, "%s: %s: member %s ends past %" PRIu64
					 " bytes", d->file, m->where, m->path, limit);
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
		err = check_width(d, m, out, pointer, AN_RT_ENTRY_LIMIT);
	if (!err && slot_extent(out) > *extent)
		*extent = slot_extent(out);
	return err;
}

/* A pointer of a root list: read member by member, never into a buffer,
 * so it may lie far into its object (3.13's PyInterpreterState). */
static struct core_error *resolve_link(struct dbg_session *s, const struct an_rt_desc *d,
				       const char *type, const struct an_rt_member *m,
				       struct an_rt_slot *out)
{
	struct core_error *err = resolve_member(s, d, type, m, out);
	return err ? err : check_width(d, m, out, true, AN_RT_LINK_LIMIT);
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

/* The size of TYPE: the process's offsets block's, the layout's, else the
 * program's DWARF (DWARF before the layout for a description that prefers it). */
static bool type_size(struct dbg_session *s, const struct an_rt_desc *d, const char *type,
		      uint64_t *size)
{
	const struct an_rt_layout_type *lt = an_rt_layout_type(d, type);
	if (process_offset(s, d, type, NULL, size) || (d->dwarf_first && dbg_type_size(s, type, size)))
		return true;
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
		err = resolve_link(s, d, l->type, &l->head, &r->list_head[i]);
		if (!err)
			err = resolve_link(s, d, element, &l->next, &r->list_next[i]);
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

/* Whether PATH's file name is MODULE, with "lib" before it and after it
 * nothing or a suffix that starts with no digit: "libpython3.10.so.1.0"
 * and "python3.10d" are "python3.10", "python3.100" is not. */
static bool module_named(const char *path, const char *module)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t n = strlen(module);
	if (strncmp(base, "lib", 3) == 0 && strncmp(base + 3, module, n) == 0)
		base += 3;
	return strncmp(base, module, n) == 0 && !(base[n] >= '0' && base[n] <= '9');
}

/* The path of the module ADDR is in, or NULL. */
static const char *module_path_at(struct dbg_session *s, uint64_t addr)
{
	for (size_t i = 0; i < dbg_module_count(s); i++) {
		const struct dbg_module_info *m = dbg_module_get(s, i);
		if (addr >= m->start && addr < m->end)
			return m->path;
	}
	return NULL;
}

/* Whether the runtime is the version D describes: root.require's symbol
 * holds the value it says (read from the core, else the mapped file: a
 * constant lives in .rodata), or the module holding the root at ROOT is
 * the one it names. */
static bool required_holds(struct dbg_session *s, const struct an_rt_desc *d, uint64_t root)
{
	uint64_t addr, size, value = 0;
	const char *req = d->root.require.symbol, *module = d->root.require.module;
	if (module) {
		const char *path = module_path_at(s, root);
		return path && module_named(path, module);
	}
	return !req || (dbg_find_symbol(s, req, &addr, &size) &&
			core_read_bytes(dbg_session_core(s), addr, &value, d->root.require.size) &&
			(value & d->root.require.mask) == d->root.require.equals);
}

/* Whether D's root is in this core; *R gets its address.  A symbol of the
 * wrong sort (thread-local for a global, or the reverse) is warned.  *OTHER
 * is set when the root is there but of a version D does not describe. */
static bool find_root(struct dbg_session *s, const struct an_rt_desc *d, struct an_rt_resolved *r,
		      bool *other)
{
	struct core *core = dbg_session_core(s);
	const char *sym = d->root.symbol;
	uint64_t addr, size;
	bool is_tls = dbg_find_tls_symbol(s, sym, &r->tls);
	*other = false;
	if (d->root.kind == AN_RT_ROOT_TLS) {
		if (!is_tls && dbg_find_symbol(s, sym, &addr, &size))
			core_warn(core, "runtime %s: %s is not a thread-local variable; its root is "
				  "not read", d->label, sym);
		*other = is_tls && !required_holds(s, d, 0);
		return is_tls && !*other;
	}
	if (is_tls) {
		core_warn(core, "runtime %s: %s is a thread-local variable; its root is not read "
			  "(a thread-local root is \"tls\")", d->label, sym);
		return false;
	}
	if (!dbg_find_symbol(s, sym, &r->root, &size))
		return false;
	*other = !required_holds(s, d, r->root);
	return !*other;
}

/* What the version of runtime D found in this core is, as far as its
 * descriptions (SET) can say, for the warning that none of them is of it. */
static void say_version(struct dbg_session *s, const struct an_runtimes *set,
			const struct an_rt_desc *d, const char *path, char *out, size_t len)
{
	uint64_t addr, size, value = 0;
	const char *sym = NULL;
	for (size_t i = 0; i < set->n && !sym; i++)
		if (strcmp(set->v[i].runtime, d->runtime) == 0 && set->v[i].root.require.symbol)
			sym = set->v[i].root.require.symbol;
	if (sym && dbg_find_symbol(s, sym, &addr, &size) &&
	    core_read_bytes(dbg_session_core(s), addr, &value, sizeof(value)))
		snprintf(out, len, "%s is 0x%" PRIx64, sym, value);
	else
		snprintf(out, len, "%s%s%s%s is no module a description names", sym ? "no " : "",
			 sym ? sym : "", sym ? ", and " : "", path ? an_rt_basename(path) : "its module");
}

/* A runtime whose root some descriptions found, none of them of its
 * version: said once, with what was found. */
static void warn_unmatched(struct dbg_session *s, const struct an_runtimes *set, const bool *other,
			   const struct an_runtime_session *rs)
{
	for (size_t i = 0; set && i < set->n; i++) {
		const struct an_rt_desc *d = &set->v[i];
		bool said = false, read = false;
		for (size_t j = 0; j < i && !said; j++)
			said = other[j] && strcmp(set->v[j].runtime, d->runtime) == 0;
		for (size_t j = 0; j < rs->n && !read; j++)
			read = strcmp(rs->v[j].d->runtime, d->runtime) == 0;
		if (!other[i] || said || read)
			continue;
		char version[128];
		uint64_t addr = 0, size;
		const char *path = dbg_find_symbol(s, d->root.symbol, &addr, &size)
					   ? module_path_at(s, addr) : NULL;
		say_version(s, set, d, path, version, sizeof(version));
		core_warn(dbg_session_core(s), "runtime %s: %s is in %s, but no description is of "
			  "its version (%s); its frames are not read", d->runtime, d->root.symbol,
			  path ? path : "the core", version);
	}
}

/* Said once: D's offsets block is not in the process, or one of its
 * values cannot be used (the layout's or DWARF's offset is used there). */
static void check_offsets(struct dbg_session *s, const struct an_rt_desc *d)
{
	struct core *core = dbg_session_core(s);
	uint64_t block, v;
	if (!d->offsets.symbol)
		return;
	if (!offsets_block(s, d, &block)) {
		core_warn(core, "runtime %s: %s does not start with the offsets block's cookie \"%s\"; "
			  "the offsets are %s's", d->label, d->offsets.symbol, d->offsets.cookie,
			  d->file);
		return;
	}
	for (size_t i = 0; i < d->offsets.ntypes; i++) {
		const struct an_rt_layout_type *t = &d->offsets.types[i];
		if (t->has_size && !process_offset(s, d, t->type, NULL, &v)) {
			core_warn(core, "runtime %s: the size of %s in %s's offsets block (at +%" PRIu64
				  ") is not one; %s's is used", d->label, t->type, d->offsets.symbol,
				  t->size, d->file);
			return;
		}
		for (size_t j = 0; j < t->nmembers; j++)
			if (!process_offset(s, d, t->type, t->members[j].path, &v)) {
				core_warn(core, "runtime %s: the offset of %s.%s in %s's offsets block "
					  "(at +%" PRIu64 ") is not one; %s's is used", d->label,
					  t->type, t->members[j].path, d->offsets.symbol,
					  t->members[j].offset, d->file);
				return;
			}
	}
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
	bool *other = set && set->n ? calloc(set->n, sizeof(*other)) : NULL;
	struct core_error *err = NULL;
	*out = NULL;
	if (!rs || (set && set->n && !other)) {
		err = &core_error_nomem;
		goto out;
	}
	rs->s = s;
	rs->core = dbg_session_core(s);
	for (size_t i = 0; set && i < set->n && !err; i++) {
		struct an_rt_resolved r = { .d = &set->v[i] };
		if (!find_root(s, r.d, &r, &other[i]))
			continue;
		check_offsets(s, r.d);
		err = resolve_stack(s, &r);
		if (!err)
			err = resolve_entry(s, &r);
		struct an_rt_resolved *slot = err ? NULL : base_array_push(&rs->v, &rs->n, &rs->cap,
									   sizeof(*rs->v));
		if (!err && !slot)
			err = &core_error_nomem;
		if (err)
			resolved_deinit(&r);
		else
			*slot = r;
	}
	if (!err)
		warn_unmatched(s, set, other, rs);
out:
	free(other);
	if (err)
		an_runtime_session_destroy(rs);
	else
		*out = rs;
	return err;
}

void an_runtime_session_destroy(struct an_runtime_session *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->n; i++)
		resolved_deinit(&rs->v[i]);
	free(rs->v);
	an_rt_claims_deinit(&rs->claims);
	free(rs->taken);
	free(rs);
}

bool an_runtime_layout(const struct an_runtime_session *rs, const char *runtime, const char *type,
		       const char *path, uint64_t *value, const char **file, bool *own)
{
	const struct an_rt_desc *d = NULL;
	for (size_t i = 0; rs && i < rs->n && !d; i++)
		if (strcmp(rs->v[i].d->runtime, runtime) == 0)
			d = rs->v[i].d;
	if (!d)
		return false;
	*file = d->file;
	*own = process_offset(rs->s, d, type, path, value);
	if (*own)
		return true;
	if (!path) {
		const struct an_rt_layout_type *lt = an_rt_layout_type(d, type);
		*value = lt && lt->has_size ? lt->size : 0;
		return lt && lt->has_size;
	}
	const struct an_rt_layout_member *lm = layout_member(d, type, path);
	if (lm)
		*value = lm->offset;
	return lm != NULL;
}
