/* Struct layouts by name from DWARF: member offsets and sizes, so the
 * analyzer follows a program's real layout when debug info is present. */
#include "internal.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

struct type_answer {
	char *key;                  /* "type\nmember" ("type\n" for the size) */
	bool found;
	uint64_t value;
};

struct dbg_type_memo {
	struct type_answer *v;
	size_t n;
};

void dbg_type_memo_destroy(struct dbg_type_memo *memo)
{
	if (!memo)
		return;
	for (size_t i = 0; i < memo->n; i++)
		free(memo->v[i].key);
	free(memo->v);
	free(memo);
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

/* Find the struct/class/union named by the "::"-separated QNAME among the
 * children of PARENT, descending through namespaces. */
static bool find_type(Dwarf_Die *parent, const char *qname, Dwarf_Die *out)
{
	const char *sep = strstr(qname, "::");
	size_t len = sep ? (size_t)(sep - qname) : strlen(qname);
	Dwarf_Die child;
	if (dwarf_child(parent, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);
		if (sep) {
			if ((tag == DW_TAG_namespace || tag == DW_TAG_structure_type ||
			     tag == DW_TAG_class_type) && die_name_is(&child, qname, len) &&
			    find_type(&child, sep + 2, out))
				return true;
		} else if ((tag == DW_TAG_structure_type || tag == DW_TAG_class_type ||
			    tag == DW_TAG_union_type) && die_name_is(&child, qname, len) &&
			   is_definition(&child)) {
			*out = child;
			return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

static bool member_offset(Dwarf_Die *type, const char *member, uint64_t *offset)
{
	Dwarf_Die child;
	if (dwarf_child(type, &child) != 0)
		return false;
	do {
		if (dwarf_tag(&child) != DW_TAG_member || !die_name_is(&child, member, strlen(member)))
			continue;
		Dwarf_Attribute attr;
		Dwarf_Word v;
		if (!dwarf_attr(&child, DW_AT_data_member_location, &attr) ||
		    dwarf_formudata(&attr, &v) != 0)
			return false;
		*offset = v;
		return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* Look TYPE up in every CU of F; MEMBER NULL asks for the size. */
static bool file_lookup(struct dbg_file *f, const char *type, const char *member, uint64_t *value)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(f->mod, &bias);
	if (!dw)
		return false;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, td;
		if (dwarf_offdie(dw, off + hsize, &cu) && find_type(&cu, type, &td)) {
			if (!member) {
				int size = dwarf_bytesize(&td);
				if (size >= 0) {
					*value = (uint64_t)size;
					return true;
				}
			} else if (member_offset(&td, member, value)) {
				return true;
			}
		}
		off = next;
	}
	return false;
}

static bool memo_lookup(struct dbg_file *f, const char *type, const char *member, uint64_t *value)
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
			return m->v[i].found;
		}
	bool found = file_lookup(f, type, member, value);
	struct type_answer *v = m ? realloc(m->v, (m->n + 1) * sizeof(*v)) : NULL;
	if (!v) {
		free(key);
		return found;
	}
	m->v = v;
	m->v[m->n++] = (struct type_answer){ .key = key, .found = found, .value = found ? *value : 0 };
	return found;
}

static bool session_lookup(struct dbg_session *s, const char *type, const char *member,
			   uint64_t *value)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < s->nmodules; i++) {
			struct dbg_module_entry *m = &s->modules[i];
			if (m->info.is_main != (pass == 0))
				continue;
			struct dbg_file *f = dbg_module_file(s, m);
			if (f && dbg_file_has_dwarf(f) && memo_lookup(f, type, member, value))
				return true;
		}
	return false;
}

bool dbg_member_offset(struct dbg_session *s, const char *type, const char *member,
		       uint64_t *offset)
{
	return session_lookup(s, type, member, offset);
}

bool dbg_type_size(struct dbg_session *s, const char *type, uint64_t *size)
{
	return session_lookup(s, type, NULL, size);
}
