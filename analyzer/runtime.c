/* Described runtimes: resolution, the walk of each stack, and placement.
 *
 * Everything read from the core is untrusted: the stack object and every
 * entry are checked readable before they are read, counts are bounded by
 * the description's max (and its capacity), lists are cycle-checked, and a
 * string that cannot be read shows empty with a warning (never a guess).
 *
 * Placement (DESIGN.md): by anchor, native frame k (stack pointer sp_k)
 * owns the anchors in [sp_k, sp_k+1); its entries follow it in the
 * innermost-first stack, as the Gecko profiler's merge puts a label after
 * the native frame that pushed it.  By owner, entries go to the innermost
 * activation of the attach function not yet used, a boundary entry ending
 * its run.  Entries no native frame owns go after the last frame. */
#include "runtime.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrset.h"
#include "rtclaims.h"
#include "rtdecode.h"
#include "tsd.h"
#include "../corefile/array.h"

#define STRING_LIMIT 1024u          /* bytes of one string read from the core */
#define BYTES_LIMIT 65536u          /* bytes of one counted string a decoder reads */
#define TYPE_NAME_LIMIT 256u
#define TEXT_LIMIT 4096u            /* bytes of one rendered name or detail */
#define WARN_LIMIT 8u               /* entry problems warned per stack */
#define RED_ZONE 128u
#define KEY_NONE 0xffffffffu
#define CONTEXT_SIZE 160u
#define OBJECTS_LIMIT 65536u        /* stack objects the root's lists lead to */
#define LINK_LIMIT (UINT64_C(1) << 20)  /* bytes into its object of a list's link */

/* A member resolved for this program: the pointers its path follows (at
 * these offsets, in order, from the object), then the member itself. */
struct slot {
	uint64_t offset, size;
	uint64_t hops[AN_RT_HOPS_LIMIT];
	unsigned nhops;
};

/* A string kind resolved: its fields, and where each form's characters
 * start in the object. */
struct resolved_string {
	struct slot *fields;
	uint64_t *data;
};

struct resolved {
	const struct an_rt_desc *d;
	uint64_t root;               /* symbol, pthread_key: the variable's address */
	struct dbg_tls_var tls;      /* tls */
	struct slot array, count, capacity, top, next;
	bool has_capacity;
	struct slot *list_head, *list_next;  /* root.lists */
	struct slot thread;
	uint64_t stack_extent;       /* bytes of the stack object read */
	uint64_t entry_size;         /* array stride; list: bytes read per entry */
	uint64_t entry_align;
	struct slot *fields;
	struct resolved_string *strings;
};

/* What reading a member through its path found. */
enum value_state { VALUE_READ, VALUE_NULL, VALUE_UNREADABLE };

/* The activations of a description's attach function that the stacks
 * placed before on one thread took (a thread running a sub-interpreter
 * inside a call of the main one has two thread states). */
struct taken {
	size_t desc;
	int32_t tid;
	size_t n;
};

struct an_runtime_session {
	struct dbg_session *s;
	struct core *core;
	struct resolved *v;
	size_t n, cap;
	struct an_rt_claims claims;  /* the stacks shown: each once */
	struct taken *taken;
	size_t ntaken, captaken;
};

/* ---- resolution ---------------------------------------------------------- */

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
 * by member (LINK_LIMIT), any other object into a buffer. */
static uint64_t offset_limit(const struct an_rt_desc *d, const char *type)
{
	for (size_t i = 0; i < d->root.nlists; i++)
		if (strcmp(d->root.lists[i].type, type) == 0)
			return LINK_LIMIT;
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
					 struct slot *out)
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
				      const struct slot *sl, bool pointer, uint64_t limit)
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
static uint64_t slot_extent(const struct slot *sl)
{
	return sl->nhops ? sl->hops[0] + 8 : sl->offset + sl->size;
}

static struct core_error *resolve_value(struct dbg_session *s, const struct an_rt_desc *d,
					const char *type, const struct an_rt_member *m, bool pointer,
					struct slot *out, uint64_t *extent)
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
				       struct slot *out)
{
	struct core_error *err = resolve_member(s, d, type, m, out);
	return err ? err : check_width(d, m, out, true, LINK_LIMIT);
}

/* A field whose value is a member's address: its size does not matter. */
static struct core_error *resolve_address(struct dbg_session *s, const struct an_rt_desc *d,
					  const char *type, const struct an_rt_member *m,
					  struct slot *out, uint64_t *extent)
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

static struct core_error *resolve_entry(struct dbg_session *s, struct resolved *r)
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
					      struct resolved_string *out)
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
		struct slot data;
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

static struct core_error *resolve_strings(struct dbg_session *s, struct resolved *r)
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
static struct core_error *resolve_lists(struct dbg_session *s, struct resolved *r)
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

static struct core_error *resolve_stack(struct dbg_session *s, struct resolved *r)
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
static bool find_root(struct dbg_session *s, const struct an_rt_desc *d, struct resolved *r,
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

static void resolved_deinit(struct resolved *r)
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
		struct resolved r = { .d = &set->v[i] };
		if (!find_root(s, r.d, &r, &other[i]))
			continue;
		check_offsets(s, r.d);
		err = resolve_stack(s, &r);
		if (!err)
			err = resolve_entry(s, &r);
		struct resolved *slot = err ? NULL : core_array_push(&rs->v, &rs->n, &rs->cap,
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

/* ---- reading entries ----------------------------------------------------- */

/* One entry, decoded. */
struct entry {
	const struct an_rt_kind *kind;   /* NULL: matched no kind */
	uint64_t addr;
	char *name, *detail;
	uint64_t anchor;
	bool has_anchor;
	bool boundary;               /* matches attach.boundary: ends its activation's run */
};

/* The stack being read: its entries innermost first, and the warnings. */
struct walk {
	struct an_runtime_session *rs;
	const struct resolved *r;
	uint64_t obj;                /* the stack object */
	char context[CONTEXT_SIZE];  /* "runtime js: thread 12" */
	struct entry *v;
	size_t n, cap;
	unsigned warned, unwarned;
	size_t unmatched;
	bool nomem;
	bool shown_before;           /* another description showed this stack */
	/* The line a decoder field gave the entry being added: decoded once
	 * however many of its templates show it (a name and a detail). */
	struct {
		bool done, ok;
		uint64_t entry;
		const struct an_rt_field *field;
		int64_t line;
	} line;
	unsigned char *table;       /* BYTES_LIMIT bytes for line tables, or NULL */
};

static void walk_warn(struct walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Entry problems: the first WARN_LIMIT each, the rest counted. */
static void walk_warn(struct walk *w, const char *fmt, ...)
{
	char msg[320];
	va_list ap;
	if (w->warned >= WARN_LIMIT) {
		w->unwarned++;
		return;
	}
	w->warned++;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	core_warn(w->rs->core, "%s: %s", w->context, msg);
}

/* The value of SL in the object at OBJ, whose first bytes are in BUF
 * (NULL: everything from the core): the pointers of its path followed, then
 * the member read, or its address taken (ADDRESS). */
static enum value_state slot_read(struct core *core, uint64_t obj, const unsigned char *buf,
				  const struct slot *sl, bool address, uint64_t *v)
{
	uint64_t at = obj;
	*v = 0;
	for (unsigned i = 0; i < sl->nhops; i++) {
		uint64_t p = 0;
		if (i == 0 && buf)
			memcpy(&p, buf + sl->hops[0], 8);
		else if (!core_read_u64(core, at + sl->hops[i], &p))
			return VALUE_UNREADABLE;
		if (p == 0)
			return VALUE_NULL;
		at = p;
	}
	if (address) {
		*v = at + sl->offset;
		return VALUE_READ;
	}
	if (buf && sl->nhops == 0) {
		memcpy(v, buf + sl->offset, sl->size);   /* little-endian: the low bytes */
		return VALUE_READ;
	}
	return core_read_bytes(core, at + sl->offset, v, sl->size) ? VALUE_READ : VALUE_UNREADABLE;
}

/* Field F (its slot SL) of the object at OBJ, masked and shifted. */
static enum value_state read_field(struct core *core, uint64_t obj, const unsigned char *buf,
				   const struct an_rt_field *f, const struct slot *sl, uint64_t *v)
{
	enum value_state st = slot_read(core, obj, buf, sl, f->address, v);
	*v = (*v & f->mask) >> f->shift;
	return st;
}

static enum value_state field_value(const struct walk *w, uint64_t entry, const unsigned char *buf,
				    size_t field, uint64_t *v)
{
	return read_field(w->rs->core, entry, buf, &w->r->d->entry.fields[field],
			  &w->r->fields[field], v);
}

/* Whether M holds for the object at OBJ: FIELDS and their SLOTS are what
 * its conditions name.  A field that cannot be read has no bits set. */
static bool matches(struct core *core, uint64_t obj, const unsigned char *buf,
		    const struct an_rt_field *fields, const struct slot *slots,
		    const struct an_rt_match *m)
{
	for (size_t i = 0; i < m->nconds; i++) {
		size_t k = m->conds[i].field;
		uint64_t v;
		read_field(core, obj, buf, &fields[k], &slots[k], &v);
		if ((v & m->conds[i].bits) != m->conds[i].bits)
			return false;
	}
	return true;
}

static bool entry_matches(const struct walk *w, uint64_t entry, const unsigned char *buf,
			  const struct an_rt_match *m)
{
	return matches(w->rs->core, entry, buf, w->r->d->entry.fields, w->r->fields, m);
}

/* V, a SIZE-byte signed integer, widened. */
static int64_t as_signed(uint64_t v, uint64_t size)
{
	if (size < 8 && (v >> (8 * size - 1)) & 1)
		v |= UINT64_MAX << (8 * size);
	return (int64_t)v;
}

struct text {
	char buf[TEXT_LIMIT];
	size_t len;
};

static void text_add(struct text *t, const char *s, size_t n)
{
	if (n > sizeof(t->buf) - 1 - t->len)
		n = sizeof(t->buf) - 1 - t->len;
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	t->buf[t->len] = '\0';
}

/* The string a field points at: from the core, else the mapped file. */
static void add_string(struct walk *w, struct text *t, uint64_t entry, const char *field,
		       uint64_t ptr)
{
	char s[STRING_LIMIT];
	if (ptr == 0)
		return;                 /* no string: the template's text stays */
	if (dbg_read_module_string(w->rs->s, ptr, s, sizeof(s))) {
		text_add(t, s, strlen(s));
		return;
	}
	size_t got = strlen(s);
	if (got == 0) {
		walk_warn(w, "entry 0x%" PRIx64 ": %s 0x%" PRIx64 " is not readable", entry, field, ptr);
		return;
	}
	walk_warn(w, "entry 0x%" PRIx64 ": %s at 0x%" PRIx64 " is cut after %zu bytes (%s)", entry,
		  field, ptr, got, got + 1 == sizeof(s) ? "too long" : "unreadable after");
	text_add(t, s, got);
	text_add(t, "...", 3);
}

/* A counted string read: its characters' raw bytes. */
struct counted {
	size_t len;                 /* bytes read into the caller's buffer */
	unsigned width;
	bool code_points;
	bool cut;                   /* longer than the buffer */
};

/* The counted string of kind KIND at OBJ into OUT (at most CAP bytes): the
 * first form whose `if` holds says where its characters are and how wide.
 * NULL, or why it cannot be read (a static string). */
static const char *read_counted(struct core *core, const struct resolved *r, size_t kind,
				uint64_t obj, unsigned char *out, size_t cap, struct counted *c)
{
	const struct an_rt_string_kind *k = &r->d->strings[kind];
	const struct resolved_string *rk = &r->strings[kind];
	uint64_t n, width;
	for (size_t i = 0; i < k->nforms; i++) {
		const struct an_rt_string_form *f = &k->forms[i];
		if (!matches(core, obj, NULL, k->fields, rk->fields, &f->match))
			continue;
		if (read_field(core, obj, NULL, &k->fields[f->length], &rk->fields[f->length], &n) !=
		    VALUE_READ)
			return "is not readable";
		width = f->width;
		if (f->width_field != AN_RT_NONE &&
		    read_field(core, obj, NULL, &k->fields[f->width_field], &rk->fields[f->width_field],
			       &width) != VALUE_READ)
			return "is not readable";
		if (width != 1 && width != 2 && width != 4)
			return "has characters neither 1, 2 nor 4 bytes wide";
		c->width = (unsigned)width;
		c->code_points = f->code_points;
		c->cut = n > cap / width;
		c->len = c->cut ? cap / width * width : n * width;
		uint64_t data = obj + rk->data[i];
		if (data < obj || !core_read_bytes(core, data, out, c->len))
			return "has characters that are not readable";
		return NULL;
	}
	return core_is_readable(core, obj, 1) ? "matches no form of its string kind" : "is not readable";
}

/* The counted string field F points at (PTR), as UTF-8. */
static void add_counted(struct walk *w, struct text *t, uint64_t entry, const struct an_rt_field *f,
			uint64_t ptr)
{
	unsigned char raw[STRING_LIMIT];
	char utf8[STRING_LIMIT];
	struct counted c;
	bool cut = false;
	if (ptr == 0)
		return;
	const char *why = read_counted(w->rs->core, w->r, f->string, ptr, raw, sizeof(raw) - 1, &c);
	if (why) {
		walk_warn(w, "entry 0x%" PRIx64 ": %s 0x%" PRIx64 " %s", entry, f->name, ptr, why);
		return;
	}
	size_t len = c.len;
	if (c.code_points) {
		len = an_rt_code_points_utf8(raw, c.len / c.width, c.width, utf8, sizeof(utf8), &cut);
		text_add(t, utf8, len);
	} else {
		text_add(t, (const char *)raw, len);
	}
	if (c.cut || cut) {
		walk_warn(w, "entry 0x%" PRIx64 ": %s at 0x%" PRIx64 " is cut after %zu bytes (too long)",
			  entry, f->name, ptr, len);
		text_add(t, "...", 3);
	}
}

static void add_field(struct walk *w, struct text *t, const unsigned char *buf, uint64_t entry,
		      size_t field);

/* The byte offset in its code of the instruction a line decoder's F
 * reads: 3.11's instruction pointer less its code's address, 3.10's
 * instruction index doubled, 3.8's offset itself.  False: no offset. */
static bool line_offset(struct walk *w, const unsigned char *buf, uint64_t entry,
			const struct an_rt_field *f, int64_t *offset)
{
	const struct an_rt_field *fields = w->r->d->entry.fields;
	uint64_t instr, code = 0;
	if (field_value(w, entry, buf, f->args[2], &instr) != VALUE_READ ||
	    (f->decoder == AN_RT_DECODER_CPYTHON311_LINE &&
	     field_value(w, entry, buf, f->args[3], &code) != VALUE_READ))
		return false;
	int64_t v = f->decoder == AN_RT_DECODER_CPYTHON311_LINE
			    ? (int64_t)(instr - code)
			    : as_signed(instr, w->r->fields[f->args[2]].size);
	if (v > (INT64_C(1) << 30) || v < -(INT64_C(1) << 30)) {
		if (f->decoder == AN_RT_DECODER_CPYTHON311_LINE)
			walk_warn(w, "entry 0x%" PRIx64 ": %s 0x%" PRIx64 " is not in its code at 0x%"
				  PRIx64, entry, fields[f->args[2]].name, instr, code);
		else
			walk_warn(w, "entry 0x%" PRIx64 ": %s %" PRId64 " is no instruction's", entry,
				  fields[f->args[2]].name, v);
		return false;
	}
	if (f->decoder == AN_RT_DECODER_CPYTHON311_LINE)
		v = v / 2 * 2;
	else if (f->decoder == AN_RT_DECODER_CPYTHON310_LINE)
		v *= 2;
	*offset = v;
	return true;
}

/* A line decoder over field F's inputs; false: no line. */
static bool decode_line(struct walk *w, const unsigned char *buf, uint64_t entry,
			const struct an_rt_field *f, int64_t *line)
{
	const struct an_rt_field *fields = w->r->d->entry.fields;
	uint64_t table, first;
	int64_t offset;
	struct counted c;
	if (field_value(w, entry, buf, f->args[0], &table) != VALUE_READ || table == 0 ||
	    field_value(w, entry, buf, f->args[1], &first) != VALUE_READ ||
	    !line_offset(w, buf, entry, f, &offset))
		return false;       /* the strings that read the same fields said why */
	if (!w->table && !(w->table = malloc(BYTES_LIMIT))) {
		w->nomem = true;
		return false;
	}
	unsigned char *bytes = w->table;
	const char *why = read_counted(w->rs->core, w->r, fields[f->args[0]].string, table, bytes,
				       BYTES_LIMIT, &c);
	if (!why && c.cut)
		why = "is longer than the decoder reads";
	if (why) {
		walk_warn(w, "entry 0x%" PRIx64 ": %s 0x%" PRIx64 " %s", entry, fields[f->args[0]].name,
			  table, why);
		return false;
	}
	int64_t first_line = as_signed(first, w->r->fields[f->args[1]].size);
	switch (f->decoder) {
	case AN_RT_DECODER_CPYTHON310_LINE:
		return an_rt_cpython310_line(bytes, c.len, first_line, offset, line);
	case AN_RT_DECODER_CPYTHON_LNOTAB_LINE:
		*line = an_rt_cpython_lnotab_line(bytes, c.len, first_line, offset);
		return true;
	default:
		return an_rt_cpython311_line(bytes, c.len, first_line, offset, line);
	}
}

/* decode_line() once per entry and field. */
static bool entry_line(struct walk *w, const unsigned char *buf, uint64_t entry,
		       const struct an_rt_field *f, int64_t *line)
{
	if (!w->line.done || w->line.entry != entry || w->line.field != f) {
		w->line.ok = decode_line(w, buf, entry, f, &w->line.line);
		w->line.done = true;
		w->line.entry = entry;
		w->line.field = f;
	}
	*line = w->line.line;
	return w->line.ok;
}

/* A decoder field's result. */
static void add_decoded(struct walk *w, struct text *t, const unsigned char *buf, uint64_t entry,
			const struct an_rt_field *f)
{
	struct text path = { .len = 0 };
	char num[32];
	int64_t line;
	switch (f->decoder) {
	case AN_RT_DECODER_BASENAME:
		path.buf[0] = '\0';
		add_field(w, &path, buf, entry, f->args[0]);
		text_add(t, an_rt_basename(path.buf), strlen(an_rt_basename(path.buf)));
		return;
	case AN_RT_DECODER_CPYTHON311_LINE:
	case AN_RT_DECODER_CPYTHON310_LINE:
	case AN_RT_DECODER_CPYTHON_LNOTAB_LINE:
		if (entry_line(w, buf, entry, f, &line))
			snprintf(num, sizeof(num), "%" PRId64, line);
		else
			snprintf(num, sizeof(num), "?");
		text_add(t, num, strlen(num));
		return;
	case AN_RT_DECODER_NONE:
		return;
	}
}

static void add_field(struct walk *w, struct text *t, const unsigned char *buf, uint64_t entry,
		      size_t field)
{
	const struct an_rt_field *f = &w->r->d->entry.fields[field];
	uint64_t v;
	char num[32];
	if (f->decoder) {
		add_decoded(w, t, buf, entry, f);
		return;
	}
	enum value_state st = field_value(w, entry, buf, field, &v);
	if (st == VALUE_UNREADABLE)
		walk_warn(w, "entry 0x%" PRIx64 ": %s (%s) is not readable", entry, f->name,
			  f->member.path);
	if (st != VALUE_READ)
		return;
	switch (f->as) {
	case AN_RT_AS_STRING:
		add_string(w, t, entry, f->name, v);
		return;
	case AN_RT_AS_COUNTED:
		add_counted(w, t, entry, f, v);
		return;
	case AN_RT_AS_NUMBER:
		snprintf(num, sizeof(num), "%" PRIu64, v);
		break;
	case AN_RT_AS_HEX:
		snprintf(num, sizeof(num), "0x%" PRIx64, v);
		break;
	}
	text_add(t, num, strlen(num));
}

/* TEMPLATE over the entry in BUF; NULL when it comes out empty. */
static char *render(struct walk *w, const struct an_rt_template *tpl, const unsigned char *buf,
		    uint64_t entry)
{
	struct text t = { .len = 0 };
	t.buf[0] = '\0';
	for (size_t i = 0; i < tpl->npieces; i++) {
		const struct an_rt_piece *p = &tpl->pieces[i];
		if (p->text)
			text_add(&t, p->text, strlen(p->text));
		else
			add_field(w, &t, buf, entry, p->field);
	}
	if (t.len == 0)
		return NULL;
	char *s = strdup(t.buf);
	if (!s)
		w->nomem = true;
	return s;
}

/* Decode the entry at ADDR (its bytes in BUF) and append it. */
static void add_entry(struct walk *w, uint64_t addr, const unsigned char *buf)
{
	const struct an_rt_desc *d = w->r->d;
	const struct an_rt_kind *kind = NULL;
	for (size_t i = 0; i < d->nkinds && !kind; i++)
		if (entry_matches(w, addr, buf, &d->kinds[i].match))
			kind = &d->kinds[i];
	struct entry *e = core_array_push(&w->v, &w->n, &w->cap, sizeof(*w->v));
	if (!e) {
		w->nomem = true;
		return;
	}
	e->addr = addr;
	e->kind = kind;
	w->line.done = false;   /* a new entry (perhaps at the address of a freed one) */
	e->boundary = d->attach.has_boundary && entry_matches(w, addr, buf, &d->attach.boundary);
	if (!kind) {
		w->unmatched++;
		return;
	}
	if (kind->anchor != AN_RT_NONE) {
		field_value(w, addr, buf, kind->anchor, &e->anchor);
		e->has_anchor = e->anchor != 0;
	}
	if (kind->show == AN_RT_SHOW_HIDDEN)
		return;
	e->name = render(w, &kind->name, buf, addr);
	if (!e->name && kind->fallback.given)
		e->name = render(w, &kind->fallback, buf, addr);
	e->detail = render(w, &kind->detail, buf, addr);
}

static bool read_uint(struct core *core, uint64_t obj, const struct slot *sl, uint64_t *v)
{
	return slot_read(core, obj, NULL, sl, false, v) == VALUE_READ;
}

/* An array stack: COUNT entries (at most CAPACITY, at most max) from the
 * array's first, the outermost; appended innermost first. */
static void read_array(struct walk *w, uint64_t obj)
{
	const struct resolved *r = w->r;
	struct core *core = w->rs->core;
	uint64_t count, capacity, base;
	unsigned char buf[AN_RT_ENTRY_LIMIT];
	if (!read_uint(core, obj, &r->count, &count) || !read_uint(core, obj, &r->array, &base) ||
	    (r->has_capacity && !read_uint(core, obj, &r->capacity, &capacity))) {
		walk_warn(w, "the stack object 0x%" PRIx64 " is not readable", obj);
		return;
	}
	if (r->has_capacity && count > capacity) {
		walk_warn(w, "%" PRIu64 " entries but room for %" PRIu64 "; the %" PRIu64
			  " past the room were never stored", count, capacity, count - capacity);
		count = capacity;
	}
	uint64_t first = 0;
	if (count > r->d->stack.max) {
		first = count - r->d->stack.max;
		walk_warn(w, "%" PRIu64 " entries, more than the %" PRIu64 " read; the outermost %" PRIu64
			  " are left out", count, r->d->stack.max, first);
	}
	if (count == 0)
		return;
	/* count - first <= max and entries are at most AN_RT_ENTRY_LIMIT bytes:
	 * only FIRST's offset can overflow */
	uint64_t span = (count - first) * r->entry_size;
	bool wraps = first > UINT64_MAX / r->entry_size || base > UINT64_MAX - first * r->entry_size;
	if (wraps || !core_pointer_ok(core, base + first * r->entry_size, span, r->entry_align)) {
		walk_warn(w, "the array at 0x%" PRIx64 " (%" PRIu64 " entries of %" PRIu64 " bytes) %s",
			  base, count, r->entry_size, base == 0 ? "is NULL" : "is not readable");
		return;
	}
	for (uint64_t i = count; i-- > first && !w->nomem;) {
		uint64_t at = base + i * r->entry_size;
		if (core_read_bytes(core, at, buf, r->entry_size))
			add_entry(w, at, buf);
		else
			walk_warn(w, "entry %" PRIu64 " at 0x%" PRIx64 " is not readable", i, at);
	}
}

/* A list stack: from the stack object's top, innermost first. */
static void read_list(struct walk *w, uint64_t obj)
{
	const struct resolved *r = w->r;
	struct core *core = w->rs->core;
	struct an_addr_set seen = { 0 };
	unsigned char buf[AN_RT_ENTRY_LIMIT];
	uint64_t at;
	switch (slot_read(core, obj, NULL, &r->top, false, &at)) {
	case VALUE_READ:
		break;
	case VALUE_NULL:
		return;             /* no frames yet */
	case VALUE_UNREADABLE:
		walk_warn(w, "the stack object 0x%" PRIx64 "'s %s is not readable", obj,
			  r->d->stack.top.path);
		return;
	}
	for (uint64_t n = 0; at && !w->nomem; n++) {
		if (n == r->d->stack.max) {
			walk_warn(w, "more than %" PRIu64 " entries; the list is cut at 0x%" PRIx64,
				  r->d->stack.max, at);
			break;
		}
		if (an_addr_set_has(&seen, at)) {
			walk_warn(w, "entry 0x%" PRIx64 " repeats (a cycle); the list is cut there", at);
			break;
		}
		if (!core_pointer_ok(core, at, r->entry_size, r->entry_align) ||
		    !core_read_bytes(core, at, buf, r->entry_size)) {
			walk_warn(w, "entry 0x%" PRIx64 " %s; the list is cut there", at,
				  at % r->entry_align ? "is misaligned" : "is not readable");
			break;
		}
		if (an_addr_set_add(&seen, at) < 0)
			w->nomem = true;
		add_entry(w, at, buf);
		uint64_t next;
		if (slot_read(core, at, buf, &r->next, false, &next) == VALUE_UNREADABLE)
			walk_warn(w, "entry 0x%" PRIx64 ": its %s is not readable; the list is cut there",
				  at, r->d->stack.next.path);
		at = next;
	}
	an_addr_set_deinit(&seen);
}

static void read_stack(struct walk *w, uint64_t obj)
{
	if (!core_pointer_ok(w->rs->core, obj, w->r->stack_extent, 0)) {
		walk_warn(w, "the stack object 0x%" PRIx64 " is not readable", obj);
		return;
	}
	if (w->r->d->stack.kind == AN_RT_STACK_ARRAY)
		read_array(w, obj);
	else
		read_list(w, obj);
}

static void walk_deinit(struct walk *w)
{
	for (size_t i = 0; i < w->n; i++) {
		free(w->v[i].name);
		free(w->v[i].detail);
	}
	free(w->v);
	free(w->table);
}

/* After the walk: the problems not warned one by one. */
static void walk_summary(struct walk *w)
{
	if (w->shown_before)
		return;                 /* its problems are the other reading's */
	if (w->unmatched)
		core_warn(w->rs->core, "%s: %zu %s no kind; not shown", w->context, w->unmatched,
			  w->unmatched == 1 ? "entry matches" : "entries match");
	if (w->unwarned)
		core_warn(w->rs->core, "%s: %u more problems with entries", w->context, w->unwarned);
	if (w->nomem)
		core_warn(w->rs->core, "%s: out of memory reading the stack", w->context);
}

/* ---- placement ----------------------------------------------------------- */

/* A native frame that may own entries: its index in the thread's frames. */
struct owner {
	size_t frame;
	uint64_t sp, end;            /* it owns anchors in [sp, end) */
};

/* An entry given a place: after frame FRAME (SIZE_MAX: after the last). */
struct placed {
	size_t entry;
	size_t frame;
};

static uint64_t frame_sp(const struct an_frame *f, const struct an_thread *t, bool first,
			 uint64_t prev_cfa, unsigned dwarf_sp)
{
	uint64_t sp;
	if (an_frame_reg(f, dwarf_sp, &sp))
		return sp;
	if (first)
		return t->sp;
	return prev_cfa;
}

/* The thread's native frames with their stack ranges, innermost first.  The
 * last one's range ends at its CFA when known: beyond it, unwinding did not
 * say who owns the stack. */
static size_t native_owners(const struct an_thread *t, unsigned dwarf_sp, struct owner **out)
{
	struct owner *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t prev_cfa = 0;
	for (size_t i = 0; i < t->nframes; i++) {
		const struct an_frame *f = &t->frames[i];
		if (f->kind != AN_FRAME_NATIVE || f->inlined || f->tailcall)
			continue;   /* only frames on the stack own a part of it */
		uint64_t sp = frame_sp(f, t, n == 0, prev_cfa, dwarf_sp);
		prev_cfa = f->cfa;
		if (sp == 0 || (n > 0 && sp < v[n - 1].sp))
			continue;
		struct owner *o = core_array_push(&v, &n, &cap, sizeof(*v));
		if (!o)
			break;
		*o = (struct owner){ .frame = i, .sp = sp, .end = f->cfa > sp ? f->cfa : sp };
		if (n > 1)
			v[n - 2].end = sp;
	}
	*out = v;
	return n;
}

/* The owner of ANCHOR: its index, N for none (beyond the last range). */
static size_t owner_of(const struct owner *o, size_t n, uint64_t anchor)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {           /* the last owner whose sp <= anchor */
		size_t mid = lo + (hi - lo) / 2;
		if (o[mid].sp <= anchor)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;           /* below the innermost sp: warned by the caller */
	return anchor < o[lo - 1].end ? lo - 1 : n;
}

/* Each entry's anchor, or the anchor of the nearest anchored entry outside
 * it (outer = later in the innermost-first list); 0: none. */
static void effective_anchors(const struct walk *w, uint64_t *eff)
{
	uint64_t cur = 0;
	for (size_t i = w->n; i-- > 0;) {
		if (w->v[i].has_anchor)
			cur = w->v[i].anchor;
		eff[i] = cur;
	}
}

static bool shown(const struct entry *e)
{
	return e->kind && e->kind->show != AN_RT_SHOW_HIDDEN;
}

/* Placement by anchor onto thread T. */
static size_t place_by_anchor(struct walk *w, const struct an_thread *t, const uint64_t *eff,
			      struct placed *out)
{
	struct owner *o;
	size_t no = native_owners(t, w->rs->core->arch->dwarf_sp, &o), n = 0, prev = 0, below = 0,
	       disorder = 0;
	for (size_t i = 0; i < w->n; i++) {
		if (!shown(&w->v[i]))
			continue;
		size_t k = eff[i] ? owner_of(o, no, eff[i]) : no;
		if (k < no && eff[i] < o[k].sp)
			below++;
		if (k < prev) {
			disorder++;
			k = prev;
		}
		prev = k;
		out[n++] = (struct placed){ .entry = i, .frame = k < no ? o[k].frame : SIZE_MAX };
	}
	if (below)
		core_warn(w->rs->core, "%s: %zu %s anchored below the thread's stack pointer 0x%" PRIx64,
			  w->context, below, below == 1 ? "entry is" : "entries are", no ? o[0].sp : 0);
	if (disorder)
		core_warn(w->rs->core, "%s: %zu %s anchored out of order; each is shown after the entry "
			  "inside it", w->context, disorder, disorder == 1 ? "entry is" : "entries are");
	free(o);
	return n;
}

/* Whether frame F is an activation of FUNCTION: its name, or its name
 * followed by a parameter list. */
static bool runs(const struct an_frame *f, const char *function)
{
	size_t len = strlen(function);
	return f->kind == AN_FRAME_NATIVE && f->function && strncmp(f->function, function, len) == 0 &&
	       (f->function[len] == '\0' || f->function[len] == '(');
}

/* The first activation of the attach function at or after frame FROM;
 * nframes when there is none. */
static size_t next_activation(const struct an_thread *t, const char *function, size_t from)
{
	while (from < t->nframes && !runs(&t->frames[from], function))
		from++;
	return from;
}

/* The record of the activations stacks of the walk's description took on
 * thread T, or NULL (memory ran out). */
static struct taken *taken_on(struct walk *w, const struct an_thread *t)
{
	struct an_runtime_session *rs = w->rs;
	size_t desc = (size_t)(w->r - rs->v);
	for (size_t i = 0; i < rs->ntaken; i++)
		if (rs->taken[i].desc == desc && rs->taken[i].tid == t->tid)
			return &rs->taken[i];
	struct taken *k = core_array_push(&rs->taken, &rs->ntaken, &rs->captaken, sizeof(*k));
	if (k)
		*k = (struct taken){ .desc = desc, .tid = t->tid };
	return k;
}

/* Placement by owner onto thread T: runs of entries, innermost first, to
 * the activations of the attach function, innermost first, past the
 * activations earlier stacks of the description took there (*TAKEN, which
 * grows by this stack's runs); a boundary entry is the last of its run. */
static size_t place_by_owner(struct walk *w, const struct an_thread *t, size_t *taken,
			     struct placed *out)
{
	const char *function = w->r->d->attach.function;
	size_t frame = next_activation(t, function, 0), n = 0;
	for (size_t k = 0; k < *taken && frame < t->nframes; k++)
		frame = next_activation(t, function, frame + 1);
	for (size_t i = 0; i < w->n; i++) {
		if (shown(&w->v[i]))
			out[n++] = (struct placed){ .entry = i,
						    .frame = frame < t->nframes ? frame : SIZE_MAX };
		if (w->v[i].boundary && frame < t->nframes) {
			frame = next_activation(t, function, frame + 1);
			++*taken;
		}
	}
	return n;
}

/* ---- splicing into a thread ------------------------------------------------ */

static void make_frame(struct walk *w, struct entry *e, struct an_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->kind = e->kind->show == AN_RT_SHOW_SCRIPT ? AN_FRAME_SCRIPT : AN_FRAME_LABEL;
	f->function = e->name;
	f->detail = e->detail;
	e->name = e->detail = NULL;
	f->runtime = strdup(w->r->d->runtime);
	if (!f->runtime)
		w->nomem = true;
}

/* Insert the placed entries (sorted by frame, those after the last frame
 * last) into T's frames. */
static void splice_into(struct walk *w, struct an_thread *t, const struct placed *p, size_t np)
{
	if (np == 0)
		return;
	struct an_frame *v = calloc(t->nframes + np, sizeof(*v));
	if (!v) {
		w->nomem = true;
		return;
	}
	size_t o = 0, j = 0;
	for (size_t i = 0; i < t->nframes; i++) {
		v[o++] = t->frames[i];
		for (; j < np && p[j].frame == i; j++)
			make_frame(w, &w->v[p[j].entry], &v[o++]);
	}
	for (; j < np; j++)
		make_frame(w, &w->v[p[j].entry], &v[o++]);
	free(t->frames);
	t->frames = v;
	t->nframes = o;
}

/* The thread whose stack holds ANCHOR: the one whose stack pointer is in
 * the same mapping, below the anchor (or its red zone). */
static struct an_thread *thread_holding(struct core *core, struct analysis *an, uint64_t anchor)
{
	const struct core_segment *seg = core_find_segment(core, anchor);
	for (size_t i = 0; seg && i < an->nthreads; i++) {
		uint64_t sp = an->threads[i].sp;
		if (core_find_segment(core, sp) == seg && anchor + RED_ZONE >= sp)
			return &an->threads[i];
	}
	return NULL;
}

/* The thread a global root's stack belongs to: the one whose stack holds
 * its anchors, or that runs the attach function.  NULL when none does. */
static struct an_thread *owning_thread(struct walk *w, struct analysis *an, const uint64_t *eff,
				       uint64_t *anchor)
{
	const char *function = w->r->d->attach.function;
	*anchor = 0;
	for (size_t i = 0; i < w->n && !*anchor; i++)
		*anchor = shown(&w->v[i]) ? eff[i] : 0;
	for (size_t i = 0; function && i < an->nthreads; i++)
		if (next_activation(&an->threads[i], function, 0) < an->threads[i].nframes)
			return &an->threads[i];
	return !function && *anchor ? thread_holding(w->rs->core, an, *anchor) : NULL;
}

/* No thread owns the stack: its entries go after the crashing thread's
 * frames, said so. */
static struct an_thread *fallback_thread(struct walk *w, struct analysis *an, uint64_t anchor)
{
	const char *function = w->r->d->attach.function;
	size_t i = an_crashing_thread(an);
	if (i == an->nthreads)
		return NULL;
	struct an_thread *t = &an->threads[i];
	if (function)
		core_warn(w->rs->core, "%s: no thread runs %s; its entries are shown after thread %"
			  PRId32 "'s frames", w->context, function, t->tid);
	else if (anchor)
		core_warn(w->rs->core, "%s: no thread's stack holds anchor 0x%" PRIx64 "; its entries "
			  "are shown after thread %" PRId32 "'s frames", w->context, anchor, t->tid);
	else
		core_warn(w->rs->core, "%s: no entry carries a stack address; the entries are shown "
			  "after thread %" PRId32 "'s frames", w->context, t->tid);
	return t;
}

static size_t place_after_all(const struct walk *w, struct placed *out)
{
	size_t n = 0;
	for (size_t i = 0; i < w->n; i++)
		if (shown(&w->v[i]))
			out[n++] = (struct placed){ .entry = i, .frame = SIZE_MAX };
	return n;
}

static size_t count_tail(const struct placed *p, size_t n)
{
	size_t tail = 0;
	for (size_t i = 0; i < n; i++)
		tail += p[i].frame == SIZE_MAX;
	return tail;
}

static bool any_shown(const struct walk *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (shown(&w->v[i]))
			return true;
	return false;
}

/* Whether the walk's stack is its own to show on T: no description before
 * it showed the same entries there; recorded as shown when it is. */
static bool claim(struct walk *w, const struct an_thread *t)
{
	struct an_rt_claims *c = &w->rs->claims;
	size_t desc = (size_t)(w->r - w->rs->v);
	uint64_t *addrs = malloc((w->n ? w->n : 1) * sizeof(*addrs));
	if (!addrs) {
		w->nomem = true;
		return false;
	}
	for (size_t i = 0; i < w->n; i++)
		addrs[i] = w->v[i].addr;
	bool mine = !an_rt_claims_entries(c, desc, t->tid, addrs, w->n);
	if (mine && !an_rt_claims_add(c, desc, w->obj, t->tid, addrs, w->n))
		w->nomem = true;
	w->shown_before = !mine;
	free(addrs);
	return mine && !w->nomem;
}

/* Place the walk's entries on thread T (NULL: a global root's, chosen). */
static void place(struct walk *w, struct analysis *an, struct an_thread *t)
{
	uint64_t *eff = calloc(w->n, sizeof(*eff));
	struct placed *p = calloc(w->n, sizeof(*p));
	uint64_t anchor = 0;
	bool orphan = false;
	if (!eff || !p) {
		w->nomem = true;
		goto out;
	}
	effective_anchors(w, eff);
	if (!t && !(t = owning_thread(w, an, eff, &anchor))) {
		orphan = true;
		if (!(t = fallback_thread(w, an, anchor)))
			goto out;
	}
	snprintf(w->context, sizeof(w->context), "runtime %s: thread %" PRId32, w->r->d->label, t->tid);
	if (!claim(w, t))
		goto out;               /* another description shows it here */
	const char *function = w->r->d->attach.function;
	struct taken *taken = function && !orphan ? taken_on(w, t) : NULL;
	if (function && !orphan && !taken) {
		w->nomem = true;
		goto out;
	}
	size_t np = orphan     ? place_after_all(w, p)
		    : function ? place_by_owner(w, t, &taken->n, p)
			       : place_by_anchor(w, t, eff, p);
	size_t tail = orphan ? 0 : count_tail(p, np);
	if (tail && function)
		core_warn(w->rs->core, "%s: %zu %s no activation of %s left; shown after the last frame",
			  w->context, tail, tail == 1 ? "entry has" : "entries have", function);
	else if (tail)
		core_warn(w->rs->core, "%s: %zu %s to no native frame (the native stack ends before "
			  "the anchors); shown after the last frame", w->context, tail,
			  tail == 1 ? "entry belongs" : "entries belong");
	splice_into(w, t, p, np);
out:
	free(eff);
	free(p);
}

/* Read the stack object at OBJ and place it on T (NULL: a global root). */
static void splice_stack(struct an_runtime_session *rs, const struct resolved *r,
			 struct analysis *an, struct an_thread *t, uint64_t obj)
{
	struct walk w = { .rs = rs, .r = r, .obj = obj };
	if (an_rt_claims_object(&rs->claims, (size_t)(r - rs->v), obj))
		return;                 /* shown by a description before this one */
	if (t)
		snprintf(w.context, sizeof(w.context), "runtime %s: thread %" PRId32, r->d->label, t->tid);
	else
		snprintf(w.context, sizeof(w.context), "runtime %s: stack 0x%" PRIx64, r->d->label, obj);
	read_stack(&w, obj);
	if (any_shown(&w) && !w.nomem)
		place(&w, an, t);
	walk_summary(&w);
	walk_deinit(&w);
}

/* A stack object of thread TID, which is no thread of the core: its
 * entries are counted in a warning (none: a thread state never used). */
static void splice_tidless(struct an_runtime_session *rs, const struct resolved *r, uint64_t obj,
			   uint64_t tid)
{
	struct walk w = { .rs = rs, .r = r };
	snprintf(w.context, sizeof(w.context), "runtime %s: stack 0x%" PRIx64, r->d->label, obj);
	read_stack(&w, obj);
	size_t n = 0;
	for (size_t i = 0; i < w.n; i++)
		n += shown(&w.v[i]);
	if (n && r->d->root.thread_is == AN_RT_THREAD_PTHREAD)
		core_warn(rs->core, "%s: pthread 0x%" PRIx64 " (its %s) is no thread of the core; its "
			  "%zu %s not shown", w.context, tid, r->d->root.thread.path, n,
			  n == 1 ? "entry is" : "entries are");
	else if (n)
		core_warn(rs->core, "%s: thread %" PRIu64 " (its %s) is no thread of the core; its %zu "
			  "%s not shown", w.context, tid, r->d->root.thread.path, n,
			  n == 1 ? "entry is" : "entries are");
	walk_summary(&w);
	walk_deinit(&w);
}

/* ---- roots ----------------------------------------------------------------- */

struct objects {
	uint64_t *v;
	size_t n, cap;
	bool full;
};

/* The elements of root.lists[LEVEL] every walk of one description has met
 * (SEEN[LEVEL], in walk order): a list that several owners share (the
 * threads of one interpreter reached from each of them, one interpreter's
 * list from two groups) is walked once, and its elements' cycle check is
 * one set, not one per owner. */
struct list_seen {
	struct an_addr_set *seen;
	size_t nlevels;
};

static void list_seen_deinit(struct list_seen *ls)
{
	for (size_t i = 0; i < ls->nlevels; i++)
		an_addr_set_deinit(&ls->seen[i]);
	free(ls->seen);
	*ls = (struct list_seen){ 0 };
}

/* Whether AT was added to SET since its FIRST member: in this walk. */
static bool seen_since(const struct an_addr_set *set, size_t first, uint64_t at)
{
	for (size_t i = first; i < set->n; i++)
		if (set->v[i] == at)
			return true;
	return false;
}

/* The stack objects root.lists[LEVEL...] lead to from OBJ, appended to OUT:
 * each list bounded by its max, cycle-checked, its elements readable; the
 * rest of a list another walk went through (LS) is not walked again. */
static void list_walk(struct an_runtime_session *rs, const struct resolved *r, const char *context,
		      size_t level, uint64_t obj, struct list_seen *ls, struct objects *out)
{
	const struct an_rt_list *l = &r->d->root.lists[level];
	struct an_addr_set *seen = &ls->seen[level];
	size_t first = seen->n;
	uint64_t at;
	enum value_state st = slot_read(rs->core, obj, NULL, &r->list_head[level], false, &at);
	if (st == VALUE_UNREADABLE)
		core_warn(rs->core, "%s: the %s of 0x%" PRIx64 " is not readable", context,
			  l->head.path, obj);
	for (uint64_t n = 0; st == VALUE_READ && at && !out->full; n++) {
		const char *cut = NULL;
		if (n == l->max)
			cut = "is past the list's max";
		else if (an_addr_set_has(seen, at) && !seen_since(seen, first, at))
			break;      /* another walk's list from here on */
		else if (an_addr_set_has(seen, at))
			cut = "repeats (a cycle)";
		else if (!core_pointer_ok(rs->core, at, 8, 8))
			cut = core_pointer_problem(rs->core, at);
		if (cut) {
			core_warn(rs->core, "%s: root.lists[%zu]: element 0x%" PRIx64 " %s; the list is "
				  "cut there", context, level, at, cut);
			break;
		}
		if (an_addr_set_add(seen, at) < 0)
			break;
		if (level + 1 < r->d->root.nlists) {
			list_walk(rs, r, context, level + 1, at, ls, out);
		} else if (out->n == OBJECTS_LIMIT) {
			core_warn(rs->core, "%s: more than %u stack objects; the rest are not read",
				  context, OBJECTS_LIMIT);
			out->full = true;
		} else {
			uint64_t *slot = core_array_push(&out->v, &out->n, &out->cap, sizeof(*out->v));
			if (!slot)
				break;
			*slot = at;
		}
		uint64_t next;
		st = slot_read(rs->core, at, NULL, &r->list_next[level], false, &next);
		if (st == VALUE_UNREADABLE)
			core_warn(rs->core, "%s: root.lists[%zu]: the %s of element 0x%" PRIx64 " is not "
				  "readable; the list is cut there", context, level, l->next.path, at);
		at = next;
	}
}

/* The thread of TID, a 64-bit value read from the core: none when it is no
 * 32-bit thread id. */
static struct an_thread *thread_by_tid(struct analysis *an, uint64_t tid)
{
	int64_t v = (int64_t)tid;
	return v >= INT32_MIN && v <= INT32_MAX ? an_thread_by_tid(an, (int32_t)v) : NULL;
}

/* The thread whose glibc struct pthread (pthread_self()) is at SELF. */
static struct an_thread *thread_by_pthread(struct analysis *an, uint64_t self)
{
	for (size_t i = 0; self && i < an->nthreads; i++)
		if (an->threads[i].pthread == self)
			return &an->threads[i];
	return NULL;
}

/* The stack object OBJ's thread: its root.thread member's, else T. */
static void splice_owned(struct an_runtime_session *rs, const struct resolved *r,
			 struct analysis *an, struct an_thread *t, const char *context, uint64_t obj)
{
	uint64_t id;
	if (!r->d->root.thread.path) {
		splice_stack(rs, r, an, t, obj);
		return;
	}
	if (!read_uint(rs->core, obj, &r->thread, &id)) {
		core_warn(rs->core, "%s: the %s of stack 0x%" PRIx64 " is not readable", context,
			  r->d->root.thread.path, obj);
		return;
	}
	bool pthread = r->d->root.thread_is == AN_RT_THREAD_PTHREAD;
	if (!pthread)
		id = (uint64_t)as_signed(id, r->thread.size);
	struct an_thread *owner = pthread ? thread_by_pthread(an, id) : thread_by_tid(an, id);
	if (owner)
		splice_stack(rs, r, an, owner, obj);
	else
		splice_tidless(rs, r, obj, id);
}

/* The root object OBJ (of thread T, NULL for a global): its stack, or the
 * stacks its lists lead to. */
static void splice_root(struct an_runtime_session *rs, const struct resolved *r,
			struct analysis *an, struct an_thread *t, const char *context, uint64_t obj,
			struct list_seen *ls)
{
	struct objects o = { 0 };
	if (!r->d->root.nlists) {
		splice_owned(rs, r, an, t, context, obj);
		return;
	}
	if (!ls->seen) {
		ls->seen = calloc(r->d->root.nlists, sizeof(*ls->seen));
		if (!ls->seen)
			return;
		ls->nlevels = r->d->root.nlists;
	}
	list_walk(rs, r, context, 0, obj, ls, &o);
	for (size_t i = 0; i < o.n; i++)
		splice_owned(rs, r, an, t, context, o.v[i]);
	free(o.v);
}

/* The stack object from root address ADDR: ADDR itself, or the address it
 * holds ("pointer": true; 0 there means no stack yet).  False: no stack. */
static bool stack_object(struct an_runtime_session *rs, const struct resolved *r,
			 const char *context, uint64_t addr, uint64_t *obj)
{
	*obj = addr;
	if (!r->d->root.pointer)
		return true;
	if (!core_read_u64(rs->core, addr, obj)) {
		core_warn(rs->core, "%s: the root %s at 0x%" PRIx64 " is not readable", context,
			  r->d->root.symbol, addr);
		return false;
	}
	return *obj != 0;
}

static void splice_global(struct an_runtime_session *rs, const struct resolved *r,
			  struct analysis *an, struct list_seen *ls)
{
	char context[CONTEXT_SIZE];
	uint64_t obj;
	snprintf(context, sizeof(context), "runtime %s", r->d->label);
	if (stack_object(rs, r, context, r->root, &obj))
		splice_root(rs, r, an, NULL, context, obj, ls);
}

static void splice_tls(struct an_runtime_session *rs, const struct resolved *r,
		       struct analysis *an, struct list_seen *ls)
{
	size_t unknown = 0;
	const char *why = NULL;
	int32_t first_tid = 0;
	for (size_t i = 0; i < an->nthreads; i++) {
		struct an_thread *t = &an->threads[i];
		char context[CONTEXT_SIZE];
		uint64_t addr, obj;
		const char *reason;
		switch (dbg_tls_address(rs->s, &r->tls, t->tls_tp, &addr, &reason)) {
		case DBG_TLS_UNALLOCATED:
			continue;
		case DBG_TLS_UNKNOWN:
			if (unknown++ == 0) {
				why = reason;
				first_tid = t->tid;
			}
			continue;
		case DBG_TLS_ADDRESS:
			break;
		}
		snprintf(context, sizeof(context), "runtime %s: thread %" PRId32, r->d->label, t->tid);
		if (stack_object(rs, r, context, addr, &obj))
			splice_root(rs, r, an, t, context, obj, ls);
	}
	if (unknown)
		core_warn(rs->core, "runtime %s: the thread-local %s of %zu threads (thread %" PRId32
			  " first) cannot be found: %s", r->d->label, r->d->root.symbol, unknown,
			  first_tid, why);
}

static void splice_pthread_key(struct an_runtime_session *rs, const struct resolved *r,
			       struct analysis *an, struct list_seen *ls)
{
	char who[CONTEXT_SIZE / 2];
	uint32_t key;
	struct an_tsd tsd;
	snprintf(who, sizeof(who), "runtime %s", r->d->label);
	if (!core_read_u32(rs->core, r->root, &key)) {
		core_warn(rs->core, "%s: the key %s at 0x%" PRIx64 " is not readable", who,
			  r->d->root.symbol, r->root);
		return;
	}
	if (key == KEY_NONE)
		return;                 /* never created */
	if (key >= AN_TSD_KEYS_MAX) {
		core_warn(rs->core, "%s: %s holds %" PRIu32 ", not a pthread key", who,
			  r->d->root.symbol, key);
		return;
	}
	an_tsd_init(&tsd, rs->s, an, who);
	if (!an_tsd_key_created(&tsd, key))
		return;
	for (size_t i = 0; i < an->nthreads; i++) {
		struct an_thread *t = &an->threads[i];
		char context[CONTEXT_SIZE];
		uint64_t value, obj;
		if (an_tsd_slot(&tsd, t, key, &value) != AN_SLOT_SET)
			continue;
		snprintf(context, sizeof(context), "%s: thread %" PRId32, who, t->tid);
		if (stack_object(rs, r, context, value, &obj))
			splice_root(rs, r, an, t, context, obj, ls);
	}
}

void an_runtimes_splice(struct an_runtime_session *rs, struct analysis *an)
{
	for (size_t i = 0; rs && i < rs->n; i++) {
		const struct resolved *r = &rs->v[i];
		struct list_seen ls = { 0 };
		switch (r->d->root.kind) {
		case AN_RT_ROOT_SYMBOL:
			splice_global(rs, r, an, &ls);
			break;
		case AN_RT_ROOT_TLS:
			splice_tls(rs, r, an, &ls);
			break;
		case AN_RT_ROOT_PTHREAD_KEY:
			splice_pthread_key(rs, r, an, &ls);
			break;
		}
		list_seen_deinit(&ls);
	}
}
