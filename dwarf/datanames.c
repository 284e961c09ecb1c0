/* The program's own name of an object in its data: the global variable
 * that holds an address, and the member of it that lies there
 * ("accounts_lock", "g_pool.lock"), from the symbol table and the
 * variable's DWARF type. */
#include "internal.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_MEMBER_DEPTH = 8, MAX_SCOPE_DEPTH = 4 };

/* Whether DIE is a variable whose location is the one address ADDR (a
 * DWARF address of its file). */
static bool variable_at(Dwarf_Die *die, Dwarf_Addr addr)
{
	Dwarf_Attribute loc;
	Dwarf_Op *ops;
	size_t n;
	return dwarf_tag(die) == DW_TAG_variable && dwarf_attr(die, DW_AT_location, &loc) &&
	       dwarf_getlocation(&loc, &ops, &n) == 0 && n == 1 && ops[0].atom == DW_OP_addr &&
	       ops[0].number == addr;
}

/* The variable at ADDR among SCOPE's children (and a namespace's). */
static bool find_variable(Dwarf_Die *scope, Dwarf_Addr addr, int depth, Dwarf_Die *out)
{
	Dwarf_Die child;
	if (depth > MAX_SCOPE_DEPTH || dwarf_child(scope, &child) != 0)
		return false;
	do {
		if (variable_at(&child, addr)) {
			*out = child;
			return true;
		}
		if (dwarf_tag(&child) == DW_TAG_namespace && find_variable(&child, addr, depth + 1, out))
			return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

static bool append(char *buf, size_t len, size_t *used, const char *name)
{
	int w = snprintf(buf + *used, len - *used, ".%s", name);
	if (w < 0 || (size_t)w >= len - *used)
		return false;
	*used += (size_t)w;
	return true;
}

/* Append ".member..." of RECORD down to the member of SIZE bytes at
 * OFFSET; anonymous members and base classes add no name.  False when no
 * member of that size starts there. */
static bool member_at(Dwarf_Die *record, uint64_t offset, uint64_t size, char *buf, size_t len,
		      size_t *used, int depth)
{
	Dwarf_Die child;
	if (depth > MAX_MEMBER_DEPTH || !dbg_is_record(dwarf_tag(record)) ||
	    dwarf_tag(record) == DW_TAG_union_type || dwarf_child(record, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Attribute a;
		Dwarf_Word at, msize;
		Dwarf_Die type;
		if ((tag != DW_TAG_member && tag != DW_TAG_inheritance) ||
		    !dwarf_attr(&child, DW_AT_data_member_location, &a) || dwarf_formudata(&a, &at) != 0 ||
		    !dbg_die_type(&child, &type) || dwarf_aggregate_size(&type, &msize) != 0 ||
		    offset < at || offset - at >= msize)
			continue;
		const char *name = tag == DW_TAG_member ? dwarf_diename(&child) : NULL;
		size_t mark = *used;
		if (name && !append(buf, len, used, name))
			return false;
		if (offset == at && msize == size)
			return name != NULL;
		if (member_at(&type, offset - at, size, buf, len, used, depth + 1))
			return true;
		*used = mark;
		buf[mark] = '\0';
		return false;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* The member path of the variable at file address VAR, OFFSET bytes in,
 * of SIZE bytes, after NAME in BUF. */
static bool dwarf_member(struct dbg_file *f, Dwarf_Addr var, uint64_t offset, uint64_t size, char *buf,
			 size_t len, size_t *used)
{
	Dwarf_Addr bias;
	Dwarf *dw = dbg_file_has_dwarf(f) ? dwfl_module_getdwarf(f->mod, &bias) : NULL;
	if (!dw)
		return false;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, die, type;
		if (dwarf_offdie(dw, off + hsize, &cu) && find_variable(&cu, var - bias, 0, &die))
			return dbg_die_type(&die, &type) && member_at(&type, offset, size, buf, len, used, 0);
		off = next;
	}
	return false;
}

/* The data symbol holding ADDR, under the session's lock. */
static const char *data_symbol(struct dbg_session *s, uint64_t addr, struct dbg_module_entry **m,
			       struct dbg_file **f, GElf_Off *off, GElf_Sym *sym)
{
	Dwarf_Addr fbias = 0;
	*m = dbg_module_for(s, addr);
	*f = *m ? dbg_module_file(s, *m) : NULL;
	if (!*f)
		return NULL;
	dwfl_module_getelf((*f)->mod, &fbias);
	const char *name = dbg_file_addrinfo(*f, addr - (*m)->bias + fbias, off, sym);
	return name && GELF_ST_TYPE(sym->st_info) == STT_OBJECT && *off < sym->st_size ? name : NULL;
}

bool dbg_data_symbol(struct dbg_session *s, uint64_t addr, uint64_t *start, uint64_t *size)
{
	struct dbg_module_entry *m;
	struct dbg_file *f;
	GElf_Off off;
	GElf_Sym sym;
	dbg_lock(s);
	bool found = data_symbol(s, addr, &m, &f, &off, &sym) != NULL;
	if (found) {
		*start = addr - off;
		*size = sym.st_size;
	}
	dbg_unlock(s);
	return found;
}

bool dbg_data_name(struct dbg_session *s, uint64_t addr, uint64_t size, bool members, char *buf,
		   size_t len)
{
	bool found = false;
	if (len == 0)
		return false;
	buf[0] = '\0';
	dbg_lock(s);
	struct dbg_module_entry *m;
	struct dbg_file *f;
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name = data_symbol(s, addr, &m, &f, &off, &sym);
	if (name) {
		Dwarf_Addr fbias = 0;
		dwfl_module_getelf(f->mod, &fbias);
		char *d = dbg_demangle(name);
		size_t used = d ? (size_t)snprintf(buf, len, "%s", d) : len;
		found = used < len &&
			((off == 0 && sym.st_size == size) ||
			 (members && dwarf_member(f, addr - m->bias + fbias - off, off, size, buf, len, &used)));
		free(d);
	}
	dbg_unlock(s);
	if (!found)
		buf[0] = '\0';
	return found;
}
