/* What a faulting memory access touched, in the program's own words: the
 * variable that held the base register at the faulting pc and the member
 * at the access's offset in what it points to ("s->bytes"), from DWARF
 * location lists and type descriptions. */
#include "internal.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_MEMBER_DEPTH = 8 };

/* A location that is the register REG for the whole value at the pc: one
 * DW_OP_regN, or one register piece. */
static bool location_is_register(const Dwarf_Op *ops, size_t n, int reg)
{
	if (n == 0 || n > 2 || (n == 2 && ops[1].atom != DW_OP_piece))
		return false;
	if (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31)
		return (int)(ops[0].atom - DW_OP_reg0) == reg;
	return ops[0].atom == DW_OP_regx && ops[0].number == (Dwarf_Word)reg;
}

static bool die_in_register(Dwarf_Die *die, Dwarf_Addr at, int reg)
{
	Dwarf_Attribute loc;
	Dwarf_Op *ops;
	size_t n;
	return dbg_location_attr(die, DW_AT_location, &loc) &&
	       dwarf_getlocation_addr(&loc, at, &ops, &n, 1) == 1 && location_is_register(ops, n, reg);
}

/* Append to BUF (at *USED of LEN) the member path of RECORD that holds byte
 * OFFSET: "bytes", "hdr.len"; anonymous members and base classes add no
 * name of their own, a union's members none (the path stops at the union).
 * False when no member holds it. */
/* Where a member path ended: the type of its last member and the offset
 * into it. */
struct path_end {
	Dwarf_Die type;
	uint64_t rest;
};

static bool member_path(Dwarf_Die *record, uint64_t offset, char *buf, size_t len, size_t *used,
			bool dot, int depth, struct path_end *end)
{
	Dwarf_Die child;
	/* Every member of a union holds offset 0: which one the code meant,
	 * DWARF does not say. */
	if (depth > MAX_MEMBER_DEPTH || dwarf_tag(record) == DW_TAG_union_type ||
	    dwarf_child(record, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);
		if (tag != DW_TAG_member && tag != DW_TAG_inheritance)
			continue;
		Dwarf_Attribute a;
		Dwarf_Word at;
		Dwarf_Die type;
		Dwarf_Word size;
		if (!dwarf_attr(&child, DW_AT_data_member_location, &a) ||
		    dwarf_formudata(&a, &at) != 0 || dwarf_hasattr(&child, DW_AT_bit_size) ||
		    !dbg_die_type(&child, &type) || dwarf_aggregate_size(&type, &size) != 0 ||
		    offset < at || offset - at >= size)
			continue;
		const char *name = tag == DW_TAG_member ? dwarf_diename(&child) : NULL;
		size_t mark = *used;
		if (name) {
			int w = snprintf(buf + *used, len - *used, "%s%s", dot ? "." : "", name);
			if (w < 0 || (size_t)w >= len - *used)
				return false;
			*used += (size_t)w;
		}
		if (dbg_is_record(dwarf_tag(&type)) &&
		    member_path(&type, offset - at, buf, len, used, dot || name, depth + 1, end))
			return true;
		if (name) {     /* a scalar or array, or an unnamed part of a record */
			end->type = type;
			end->rest = offset - at;
			return true;
		}
		*used = mark;
		buf[mark] = '\0';
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* Append the formatted text to BUF (at *USED of LEN); false when it does
 * not fit. */
static bool append(char *buf, size_t len, size_t *used, const char *a, const char *b)
{
	int w = snprintf(buf + *used, len - *used, "%s%s", a, b);
	if (w < 0 || (size_t)w >= len - *used)
		return false;
	*used += (size_t)w;
	return true;
}

/* What the pointer or reference type TYPE points to, peeled. */
static bool pointee(Dwarf_Die *type, Dwarf_Die *target)
{
	int tag = dwarf_tag(type);
	return (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type ||
		tag == DW_TAG_rvalue_reference_type) && dbg_die_type(type, target);
}

/* "->MEMBER" of the record the pointer-typed member at END points to,
 * OFFSET bytes into it, appended to BUF. */
static bool append_loaded(struct path_end *end, uint64_t offset, char *buf, size_t len,
			  size_t *used)
{
	Dwarf_Die target;
	struct path_end last;
	return end->rest == 0 && dwarf_tag(&end->type) == DW_TAG_pointer_type &&
	       pointee(&end->type, &target) && dbg_is_record(dwarf_tag(&target)) &&
	       append(buf, len, used, "->", "") &&
	       member_path(&target, offset, buf, len, used, false, 0, &last);
}

/* "VAR->MEMBER" for the variable DIE holding a pointer to a record (or
 * "VAR.MEMBER" for a reference), "*VAR" for a pointer to a scalar read at
 * offset 0.  With LOADED, the member at OFFSET[0] is a pointer loaded and
 * the access was OFFSET[1] into what it points to: "VAR->MEMBER->NEXT". */
static bool describe_access(Dwarf_Die *var, const uint64_t offset[2], bool loaded, char *buf,
			    size_t len)
{
	const char *name = dbg_die_name(var);
	Dwarf_Die type, target;
	if (!name || !dbg_die_type(var, &type) || !pointee(&type, &target))
		return false;
	bool pointer = dwarf_tag(&type) == DW_TAG_pointer_type;
	if (!dbg_is_record(dwarf_tag(&target))) {
		if (loaded || offset[0] != 0 || !pointer)
			return false;
		return snprintf(buf, len, "*%s", name) < (int)len;
	}
	size_t used = 0;
	struct path_end end;
	return append(buf, len, &used, name, pointer ? "->" : ".") &&
	       member_path(&target, offset[0], buf, len, &used, false, 0, &end) &&
	       (!loaded || append_loaded(&end, offset[1], buf, len, &used));
}

/* The variables and parameters of SCOPE whose location at AT is REG. */
static bool scope_access(Dwarf_Die *scope, Dwarf_Addr at, int reg, const uint64_t offset[2],
			 bool loaded, char *buf, size_t len)
{
	Dwarf_Die child;
	if (dwarf_child(scope, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);
		if ((tag == DW_TAG_variable || tag == DW_TAG_formal_parameter) &&
		    die_in_register(&child, at, reg) &&
		    describe_access(&child, offset, loaded, buf, len))
			return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

static bool register_access(struct dbg_session *s, uint64_t pc, int reg, const uint64_t offset[2],
			    bool loaded, char *buf, size_t len)
{
	if (reg < 0 || len == 0)
		return false;
	bool found = false;
	dbg_lock(s);
	struct dbg_module_entry *m = dbg_module_for(s, pc);
	struct dbg_file *f = m ? dbg_module_file(s, m) : NULL;
	if (f && dbg_file_has_dwarf(f)) {
		Dwarf_Addr fbias = 0, dbias;
		dwfl_module_getelf(f->mod, &fbias);
		uint64_t lookup = pc - m->bias + fbias;
		Dwarf_Die *cudie, *scopes;
		int n = dbg_file_scopes(f, lookup, &cudie, &dbias, &scopes);
		for (int i = 0; i < n && !found; i++)
			found = scope_access(&scopes[i], lookup - dbias, reg, offset, loaded, buf, len);
		free(scopes);
	}
	dbg_unlock(s);
	if (!found)
		buf[0] = '\0';
	return found;
}

bool dbg_register_access(struct dbg_session *s, uint64_t pc, int reg, uint64_t offset, char *buf,
			 size_t len)
{
	const uint64_t offsets[2] = { offset, 0 };
	return register_access(s, pc, reg, offsets, false, buf, len);
}

bool dbg_loaded_access(struct dbg_session *s, uint64_t at, int reg, uint64_t load_offset,
		       uint64_t offset, char *buf, size_t len)
{
	const uint64_t offsets[2] = { load_offset, offset };
	return register_access(s, at, reg, offsets, true, buf, len);
}
