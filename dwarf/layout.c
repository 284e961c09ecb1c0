/* Struct layouts by name from DWARF: member offsets and sizes, so the
 * analyzer follows a program's real layout when debug info is present. */
#include "internal.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct type_answer {
	char *key;                  /* "type\nmember" ("type\n" for the size) */
	bool found;
	uint64_t value;             /* the member's offset, or the type's size */
	uint64_t size;              /* the member's size */
};

/* Qualified names ("folly::AsyncStackRoot", and nested ones such as
 * "butil::ResourcePool<bthread::TaskMeta>::Block") of the struct, class and
 * union definitions and of the typedefs naming one, to their DIE offsets:
 * built CU by CU until the name asked for is there, so each later lookup
 * costs a hash probe instead of a walk over every CU (libc's debug info has
 * thousands), and a type defined early (or in the CU a lookup names) spares
 * reading the rest: the names are in .debug_str, tens of MB in a large C++
 * program. */
struct type_slot {
	char *name;
	Dwarf_Off die;
};

struct dbg_type_memo {
	struct type_answer *v;
	size_t n;
	Dwarf_Off next_cu;          /* the first CU not indexed yet */
	bool complete;              /* every CU is indexed */
	struct type_slot *slots;
	size_t cap, used;
};

void dbg_type_memo_destroy(struct dbg_type_memo *memo)
{
	if (!memo)
		return;
	for (size_t i = 0; i < memo->n; i++)
		free(memo->v[i].key);
	free(memo->v);
	for (size_t i = 0; i < memo->cap; i++)
		free(memo->slots[i].name);
	free(memo->slots);
	free(memo);
}

static struct type_slot *type_slot(struct dbg_type_memo *m, const char *name)
{
	size_t i = dbg_name_hash(name) & (m->cap - 1);
	while (m->slots[i].name && strcmp(m->slots[i].name, name) != 0)
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

static bool index_grow(struct dbg_type_memo *m)
{
	size_t cap = m->cap ? 2 * m->cap : 1024;
	struct type_slot *old = m->slots;
	size_t old_cap = m->cap;
	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return false;
	}
	m->cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].name)
			*type_slot(m, old[i].name) = old[i];
	free(old);
	return true;
}

static void index_add(struct dbg_type_memo *m, const char *name, Dwarf_Off die)
{
	if (2 * (m->used + 1) > m->cap && !index_grow(m))
		return;
	struct type_slot *slot = type_slot(m, name);
	if (slot->name)
		return;     /* the first definition wins */
	slot->name = strdup(name);
	if (slot->name) {
		slot->die = die;
		m->used++;
	}
}

static bool die_name_is(Dwarf_Die *die, const char *name, size_t len)
{
	const char *n = dwarf_diename(die);
	return n && strlen(n) == len && memcmp(n, name, len) == 0;
}

static bool is_definition(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	bool decl = false;
	if (dwarf_attr(die, DW_AT_declaration, &attr))
		dwarf_formflag(&attr, &decl);
	return !decl;
}

bool dbg_is_record(int tag)
{
	return tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type;
}

/* The record definition a typedef names ("typedef struct {...} vm_t"). */
static bool typedef_record(Dwarf_Die *die, Dwarf_Die *record)
{
	return dwarf_peel_type(die, record) == 0 && dbg_is_record(dwarf_tag(record)) &&
	       is_definition(record);
}

/* Index the record definitions (and the typedefs naming one) among PARENT's
 * children, descending into namespaces and, with NESTED, into records;
 * PREFIX is the enclosing scopes' qualified name.  Without NESTED the walk
 * steps over each record's members (DW_AT_sibling), most of a CU. */
static void index_children(struct dbg_type_memo *m, Dwarf_Die *parent, const char *prefix,
			   int depth, bool nested)
{
	Dwarf_Die child, record;
	if (depth > 16 || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag != DW_TAG_namespace && tag != DW_TAG_typedef && !dbg_is_record(tag))
			continue;
		const char *name = dwarf_diename(&child);
		if (!name)
			continue;
		char qualified[512];
		snprintf(qualified, sizeof(qualified), "%s%s%s", prefix, *prefix ? "::" : "", name);
		if (tag == DW_TAG_namespace) {
			index_children(m, &child, qualified, depth + 1, nested);
		} else if (tag == DW_TAG_typedef) {
			if (typedef_record(&child, &record))
				index_add(m, qualified, dwarf_dieoffset(&record));
		} else if (is_definition(&child)) {
			index_add(m, qualified, dwarf_dieoffset(&child));
			if (nested)
				index_children(m, &child, qualified, depth + 1, nested);
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* Index the next CU; false when there was none. */
static bool index_next_cu(struct dbg_type_memo *m, Dwarf *dw)
{
	Dwarf_Off next;
	size_t hsize;
	if (m->complete || dwarf_nextcu(dw, m->next_cu, &next, &hsize, NULL, NULL, NULL) != 0) {
		m->complete = true;
		return false;
	}
	Dwarf_Die cu;
	if (dwarf_offdie(dw, m->next_cu + hsize, &cu))
		index_children(m, &cu, "", 0, true);
	m->next_cu = next;
	return true;
}

/* The definition of TYPE in the index, or NULL. */
static struct type_slot *type_find(struct dbg_type_memo *m, const char *type)
{
	if (!m->cap)
		return NULL;
	struct type_slot *slot = type_slot(m, type);
	return slot->name ? slot : NULL;
}

/* The type of DIE (a member or an inheritance entry), typedefs and
 * qualifiers peeled. */
bool dbg_die_type(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute attr;
	return dwarf_attr_integrate(die, DW_AT_type, &attr) && dwarf_formref_die(&attr, type) &&
	       dwarf_peel_type(type, type) == 0;
}

/* A member's byte offset in its record: a union member has none (0); a
 * bit-field or a location computed at run time (a virtual base) is not
 * supported. */
static bool member_location(Dwarf_Die *die, uint64_t *offset)
{
	Dwarf_Attribute attr;
	Dwarf_Word v = 0;
	if (dwarf_hasattr(die, DW_AT_bit_size) || dwarf_hasattr(die, DW_AT_data_bit_offset))
		return false;
	if (dwarf_attr(die, DW_AT_data_member_location, &attr) && dwarf_formudata(&attr, &v) != 0)
		return false;
	*offset = v;
	return true;
}

/* Find member NAME (LEN bytes) of RECORD, also inside its anonymous
 * struct/union members and its base classes; *OFFSET is from RECORD's
 * start, *FOUND the member's DIE. */
static bool find_member(Dwarf_Die *record, const char *name, size_t len, uint64_t *offset,
			Dwarf_Die *found, int depth)
{
	Dwarf_Die child, inner;
	if (depth > 8 || dwarf_child(record, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);
		uint64_t at, sub;
		if ((tag != DW_TAG_member && tag != DW_TAG_inheritance) || !member_location(&child, &at))
			continue;
		if (tag == DW_TAG_member && die_name_is(&child, name, len)) {
			*offset = at;
			*found = child;
			return true;
		}
		bool nested = tag == DW_TAG_inheritance || !dwarf_diename(&child);
		if (nested && dbg_die_type(&child, &inner) && dbg_is_record(dwarf_tag(&inner)) &&
		    find_member(&inner, name, len, &sub, found, depth + 1)) {
			*offset = at + sub;
			return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* Resolve PATH ("frames", "state.top") in TYPE: each dot steps into the
 * record the member before it is.  *LAST (when not NULL) gets the last
 * member's DIE. */
static bool member_path(Dwarf_Die *type, const char *path, uint64_t *offset, uint64_t *size,
			Dwarf_Die *last)
{
	Dwarf_Die record = *type, member, mtype;
	uint64_t total = 0;
	for (const char *p = path;;) {
		size_t len = strcspn(p, ".");
		uint64_t at;
		if (len == 0 || !find_member(&record, p, len, &at, &member, 0) ||
		    !dbg_die_type(&member, &mtype))
			return false;
		total += at;
		if (p[len] == '\0') {
			Dwarf_Word bytes;
			*offset = total;
			/* a flexible array member has no size */
			*size = dwarf_aggregate_size(&mtype, &bytes) == 0 ? bytes : 0;
			if (last)
				*last = member;
			return true;
		}
		if (!dbg_is_record(dwarf_tag(&mtype)))
			return false;
		record = mtype;
		p += len + 1;
	}
}

/* TYPE's definition in F's DWARF, from its type index: HINT_CU (may be
 * NULL) indexed first, then the CUs not indexed yet, until it is found. */
static bool type_die(struct dbg_file *f, const char *type, Dwarf_Die *hint_cu, Dwarf_Die *td)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(f->mod, &bias);
	if (!dw)
		return false;
	if (!f->types && !(f->types = calloc(1, sizeof(*f->types))))
		return false;
	struct dbg_type_memo *m = f->types;
	struct type_slot *slot = type_find(m, type);
	/* The hint CU at namespace level first: most types are there. */
	for (int nested = 0; nested < 2 && !slot && hint_cu; nested++) {
		index_children(m, hint_cu, "", 0, nested);
		slot = type_find(m, type);
	}
	while (!slot && index_next_cu(m, dw))
		slot = type_find(m, type);
	return slot && dwarf_offdie(dw, slot->die, td);
}

/* Look TYPE up in F's type index (HINT_CU as type_die() takes it); MEMBER
 * NULL asks for the size. */
static bool file_lookup(struct dbg_file *f, const char *type, const char *member,
			Dwarf_Die *hint_cu, uint64_t *value, uint64_t *size)
{
	Dwarf_Die td;
	if (!type_die(f, type, hint_cu, &td))
		return false;
	if (member)
		return member_path(&td, member, value, size, NULL);
	int bytes = dwarf_bytesize(&td);
	if (bytes < 0)
		return false;
	*value = *size = (uint64_t)bytes;
	return true;
}

static bool memo_lookup(struct dbg_file *f, const char *type, const char *member,
			Dwarf_Die *hint_cu, uint64_t *value, uint64_t *size)
{
	size_t klen = strlen(type) + 2 + (member ? strlen(member) : 0);
	char *key = malloc(klen);
	if (!key)
		return false;
	strcpy(key, type);
	strcat(key, "\n");
	if (member)
		strcat(key, member);
	if (!f->types)
		f->types = calloc(1, sizeof(*f->types));
	struct dbg_type_memo *m = f->types;
	for (size_t i = 0; m && i < m->n; i++)
		if (strcmp(m->v[i].key, key) == 0) {
			free(key);
			*value = m->v[i].value;
			*size = m->v[i].size;
			return m->v[i].found;
		}
	bool found = m && file_lookup(f, type, member, hint_cu, value, size);
	struct type_answer *v = m ? realloc(m->v, (m->n + 1) * sizeof(*v)) : NULL;
	if (!v) {
		free(key);
		return found;
	}
	m->v = v;
	m->v[m->n++] = (struct type_answer){ .key = key, .found = found, .value = found ? *value : 0,
					     .size = found ? *size : 0 };
	return found;
}

/* Call FN(F, CTX) on each module's file with DWARF, the executable's
 * first, until it returns true; false when it never does. */
static bool any_dwarf_file(struct dbg_session *s, bool (*fn)(struct dbg_file *f, void *ctx),
			   void *ctx)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < s->nmodules; i++) {
			struct dbg_module_entry *m = &s->modules[i];
			if (m->info.is_main != (pass == 0))
				continue;
			struct dbg_file *f = dbg_module_file(s, m);
			if (f && dbg_file_has_dwarf(f) && fn(f, ctx))
				return true;
		}
	return false;
}

struct lookup {
	const char *type, *member;
	uint64_t *value, *size;
	char *name;                 /* dbg_member_target's answer */
	size_t len;
};

static bool lookup_in(struct dbg_file *f, void *ctx)
{
	struct lookup *l = ctx;
	return memo_lookup(f, l->type, l->member, NULL, l->value, l->size);
}

static bool session_lookup(struct dbg_session *s, const char *type, const char *member,
			   uint64_t *value, uint64_t *size)
{
	struct lookup l = { .type = type, .member = member, .value = value, .size = size };
	return any_dwarf_file(s, lookup_in, &l);
}

bool dbg_member_find(struct dbg_session *s, const char *type, const char *path, uint64_t *offset,
		     uint64_t *size)
{
	dbg_lock(s);
	bool found = session_lookup(s, type, path, offset, size);
	dbg_unlock(s);
	return found;
}

/* Look the type up in the module defining function SYMBOL, starting with
 * the CU that holds its code. */
static bool near_lookup(struct dbg_session *s, const char *symbol, const char *type,
			const char *member, uint64_t *value, uint64_t *size)
{
	uint64_t addr;
	if (!dbg_find_symbol(s, symbol, &addr, NULL))
		return false;
	struct dbg_module_entry *m = dbg_module_for(s, addr);
	struct dbg_file *f = m ? dbg_module_file(s, m) : NULL;
	if (!f || !dbg_file_has_dwarf(f))
		return false;
	Dwarf_Addr fbias = 0, dbias;
	dwfl_module_getelf(f->mod, &fbias);
	Dwarf_Die *cu = dbg_file_addrdie(f, addr - m->bias + fbias, &dbias);
	return memo_lookup(f, type, member, cu, value, size);
}

bool dbg_member_offset_near(struct dbg_session *s, const char *symbol, const char *type,
			    const char *member, uint64_t *offset)
{
	uint64_t size;
	dbg_lock(s);
	bool found = near_lookup(s, symbol, type, member, offset, &size) ||
		     session_lookup(s, type, member, offset, &size);
	dbg_unlock(s);
	return found;
}

bool dbg_member_offset(struct dbg_session *s, const char *type, const char *member,
		       uint64_t *offset)
{
	uint64_t size;
	return dbg_member_find(s, type, member, offset, &size);
}

bool dbg_type_size(struct dbg_session *s, const char *type, uint64_t *size)
{
	uint64_t same;
	dbg_lock(s);
	bool found = session_lookup(s, type, NULL, size, &same);
	dbg_unlock(s);
	return found;
}

/* The name of what the pointer MEMBER points at: qualifiers peeled, a
 * typedef's own name kept (it is what the type index knows). */
static bool pointer_target(Dwarf_Die *member, char *name, size_t len)
{
	Dwarf_Attribute attr;
	Dwarf_Die t;
	if (!dwarf_attr_integrate(member, DW_AT_type, &attr) || !dwarf_formref_die(&attr, &t))
		return false;
	bool pointer = false;
	for (int i = 0; i < 16; i++) {
		int tag = dwarf_tag(&t);
		bool peel = tag == DW_TAG_const_type || tag == DW_TAG_volatile_type ||
			    tag == DW_TAG_restrict_type || tag == DW_TAG_atomic_type ||
			    (!pointer && tag == DW_TAG_typedef);
		if (!peel && (pointer || tag != DW_TAG_pointer_type))
			break;
		pointer = pointer || tag == DW_TAG_pointer_type;
		if (!dwarf_attr_integrate(&t, DW_AT_type, &attr) || !dwarf_formref_die(&attr, &t))
			return false;
	}
	const char *n = pointer ? dwarf_diename(&t) : NULL;
	return n && snprintf(name, len, "%s", n) < (int)len;
}

static bool pointer_target_in(struct dbg_file *f, void *ctx)
{
	struct lookup *l = ctx;
	uint64_t offset, size;
	Dwarf_Die td, member;
	return type_die(f, l->type, NULL, &td) && member_path(&td, l->member, &offset, &size, &member) &&
	       pointer_target(&member, l->name, l->len);
}

bool dbg_member_target(struct dbg_session *s, const char *type, const char *path, char *name,
		       size_t len)
{
	struct lookup l = { .type = type, .member = path, .name = name, .len = len };
	dbg_lock(s);
	bool found = any_dwarf_file(s, pointer_target_in, &l);
	dbg_unlock(s);
	return found;
}
