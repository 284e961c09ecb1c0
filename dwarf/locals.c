/* Local variables of a frame, as gdb's `bt full` lists them: the blocks
 * that hold the pc, innermost first, up to the frame's function (or inlined
 * function).  Which variables each block has is found once per pc and kept
 * with the pc's parameters; their values are evaluated for every frame by
 * the arguments' evaluator and printer (params_eval.c, params_format.c).
 *
 * The order is gdb's.  gdb keeps a function's own block (parameters and
 * outermost locals) in a linear dictionary, in DWARF order, and every nested
 * lexical block in a hashed one (dictionary.c: n/5 + 1 buckets, each
 * bucket's symbols in DWARF order), and iterates them in that order.  The
 * bucket count depends on every symbol the block defines (types, labels,
 * variables it never prints), so those are counted too. */
#include "params.h"

#include <dwarf.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/array.h"

/* Bounds: DWARF from a binary is untrusted. */
#define MAX_SYMBOLS 4096        /* symbols of one block, locals of one level */
#define MAX_NEST 16             /* lexical blocks without addresses, nested */
#define MAX_ORIGIN_HOPS 4       /* DW_AT_abstract_origin followed in a chain */

/* A symbol gdb makes of one child DIE of a block. */
struct sym {
	Dwarf_Die die;
	Dwarf_Die enum_type;        /* an enumerator's type */
	const char *name;
	bool local;                 /* `bt full` prints it */
	bool enumerator;
	bool label;                 /* a label the code lost (no type) */
};

struct syms {
	struct sym *v;
	size_t n, cap;
	bool nomem;
};

const char *dbg_die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *name = dwarf_diename(die);
	if (!name && dwarf_attr_integrate(die, DW_AT_name, &a))
		name = dwarf_formstring(&a);
	return name;
}

static bool flag_set(Dwarf_Die *die, unsigned attr)
{
	Dwarf_Attribute a;
	bool v;
	return dwarf_attr_integrate(die, attr, &a) && dwarf_formflag(&a, &v) == 0 && v;
}

/* gdb's die_is_declaration. */
static bool is_declaration(Dwarf_Die *die)
{
	return flag_set(die, DW_AT_declaration) && !dwarf_hasattr(die, DW_AT_specification);
}

/* A block gdb gives addresses to; one without is no block to gdb: its
 * children belong to the block around it. */
static bool has_pc_bounds(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_ranges) ||
	       (dwarf_hasattr(die, DW_AT_low_pc) && dwarf_hasattr(die, DW_AT_high_pc));
}

/* A DW_AT_const_value gdb keeps as bytes (LOC_CONST_BYTES), which `bt full`
 * does not print: a block, a string, 16 bytes. */
static bool const_is_bytes(Dwarf_Attribute *a)
{
	switch (dwarf_whatform(a)) {
	case DW_FORM_block: case DW_FORM_block1: case DW_FORM_block2: case DW_FORM_block4:
	case DW_FORM_data16: case DW_FORM_string: case DW_FORM_strp: case DW_FORM_line_strp:
	case DW_FORM_strx: case DW_FORM_strx1: case DW_FORM_strx2: case DW_FORM_strx3:
	case DW_FORM_strx4: case DW_FORM_GNU_str_index: case DW_FORM_GNU_strp_alt:
		return true;
	default:
		return false;
	}
}

enum var_class { VAR_NONE, VAR_SYMBOL, VAR_LOCAL };

/* What gdb's new_symbol makes of a DW_TAG_variable in a block. */
static enum var_class variable_class(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	if (dwarf_attr_integrate(die, DW_AT_location, &a))
		return VAR_LOCAL;
	if (dwarf_attr_integrate(die, DW_AT_const_value, &a))
		return const_is_bytes(&a) ? VAR_SYMBOL : VAR_LOCAL;
	if (flag_set(die, DW_AT_external) && dwarf_attr_integrate(die, DW_AT_type, &a))
		return VAR_SYMBOL;      /* LOC_UNRESOLVED: an extern declared here */
	if (is_declaration(die))
		return VAR_NONE;
	return VAR_LOCAL;               /* no location: <optimized out> */
}

/* The symbol added, or NULL (past the bound, or out of memory). */
static struct sym *syms_add(struct syms *out, Dwarf_Die *die, const char *name, bool local)
{
	if (out->n == MAX_SYMBOLS)
		return NULL;
	struct sym *s = base_array_push(&out->v, &out->n, &out->cap, sizeof(*out->v));
	if (!s) {
		out->nomem = true;
		return NULL;
	}
	*s = (struct sym){ .die = *die, .name = name, .local = local };
	return s;
}

/* The enumerators of a local enum are locals to gdb (LOC_CONST), listed
 * before the enum's own name. */
static void add_enumeration(struct syms *out, Dwarf_Die *type)
{
	Dwarf_Die c;
	if (dwarf_child(type, &c) == 0) {
		do {
			const char *name = dbg_die_name(&c);
			if (dwarf_tag(&c) != DW_TAG_enumerator || !name)
				continue;
			struct sym *s = syms_add(out, &c, name, true);
			if (s) {
				s->enumerator = true;
				s->enum_type = *type;
			}
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	const char *name = dbg_die_name(type);
	if (name)
		syms_add(out, type, name, false);
}

static void add_children(struct syms *out, Dwarf_Die *block, int nest);

/* The symbols gdb makes of CHILD, a child DIE of a block. */
static void add_child(struct syms *out, Dwarf_Die *child, int nest)
{
	const char *name = dbg_die_name(child);
	switch (dwarf_tag(child)) {
	case DW_TAG_variable: {
		enum var_class c = variable_class(child);
		if (name && c != VAR_NONE)
			syms_add(out, child, name, c == VAR_LOCAL);
		break;
	}
	case DW_TAG_label: {
		/* gdb makes a label without an address LOC_OPTIMIZED_OUT, which
		 * `bt full` prints as a local. */
		struct sym *s = name ? syms_add(out, child, name, !dwarf_hasattr(child, DW_AT_low_pc))
				     : NULL;
		if (s)
			s->label = true;
		break;
	}
	case DW_TAG_formal_parameter: case DW_TAG_typedef:
	case DW_TAG_base_type: case DW_TAG_subrange_type:
		if (name)
			syms_add(out, child, name, false);
		break;
	case DW_TAG_structure_type: case DW_TAG_union_type: case DW_TAG_class_type:
		if (name && (!is_declaration(child) || dwarf_hasattr(child, DW_AT_byte_size)))
			syms_add(out, child, name, false);
		break;
	case DW_TAG_enumeration_type:
		add_enumeration(out, child);
		break;
	case DW_TAG_lexical_block:
		if (!has_pc_bounds(child) && nest < MAX_NEST)
			add_children(out, child, nest + 1);
		break;
	default:
		break;
	}
}

static void add_children(struct syms *out, Dwarf_Die *block, int nest)
{
	Dwarf_Die c;
	if (dwarf_child(block, &c) != 0)
		return;
	do
		add_child(out, &c, nest);
	while (dwarf_siblingof(&c, &c) == 0);
}

static bool symbol_visit(void *syms, Dwarf_Die *child)
{
	add_child(syms, child, 0);
	return true;
}

/* The symbols of BLOCK in gdb's order: its children, then those of its
 * abstract origin that no child stands for (gdb's inherit_abstract_dies). */
static void block_symbols(struct syms *out, Dwarf_Die *block)
{
	struct dbg_children how = { .hops = MAX_ORIGIN_HOPS, .max_seen = MAX_SYMBOLS,
				    .visit = symbol_visit, .ctx = out };
	if (!dbg_children_inherit(block, &how))
		out->nomem = true;
}

/* gdb's SYMBOL_HASH_NEXT (ASCII lower case, unsigned arithmetic). */
static uint32_t hash_next(uint32_t h, unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		c = (unsigned char)(c - 'A' + 'a');
	return h * 67 + c - 113;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* gdb's msymbol_hash_iw: blanks ignored, up to a '('. */
static uint32_t hash_iw(const char *s)
{
	uint32_t h = 0;
	while (*s && *s != '(') {
		while (is_space(*s))
			s++;
		if (*s && *s != '(')
			h = hash_next(h, (unsigned char)*s++);
	}
	return h;
}

/* gdb's language_defn::search_name_hash, the one C uses: it also serves
 * Ada's encoded names, which is why some characters end it. */
static uint32_t hash_c(const char *s0)
{
	const char *s = s0;
	uint32_t h = 0;
	if (*s == '_') {
		if (strncmp(s, "_ada_", 5) != 0)
			return hash_iw(s0);
		s += 5;
	}
	while (*s) {
		switch (*s) {
		case '$': case '.': case 'X':
			return s == s0 ? hash_iw(s0) : h;
		case ' ': case '(':
			return hash_iw(s0);
		case '_':
			if (s[1] == '_' && s != s0) {
				char c = s[2];
				if (c == 'B' && s[3] == '_') {
					for (s += 4; *s >= '0' && *s <= '9'; s++)
						;
					continue;
				}
				if ((c < 'a' || c > 'z') && c != 'O')
					return h;
				h = 0;
				s += 2;
				continue;
			}
			break;
		case 'T':
			if (strcmp(s, "TKB") == 0)
				return h;
			break;
		default:
			break;
		}
		h = hash_next(h, (unsigned char)*s++);
	}
	return h;
}

/* gdb's cp_search_name_hash for an unqualified name. */
static uint32_t hash_cxx(const char *s)
{
	uint32_t h = 0;
	if (strncmp(s, "::", 2) == 0)
		s += 2;
	for (; *s; s++) {
		while (is_space(*s))
			s++;
		if (!*s || *s == '(' || (s[0] == '[' && strncmp(s + 1, "abi:", 4) == 0 && s[5] != ':'))
			break;
		h = hash_next(h, (unsigned char)*s);
	}
	return h;
}

struct locals_build {
	struct dbg_level *level;
	size_t cap;
	const struct dbg_pc_info *info;
	bool nomem;
};

static void local_add(struct locals_build *lb, struct sym *sym)
{
	struct dbg_level *level = lb->level;
	if (level->nparams == MAX_SYMBOLS)
		return;
	struct dbg_param *p = base_array_push(&level->params, &level->nparams, &lb->cap,
					      sizeof(*level->params));
	if (!p) {
		lb->nomem = true;
		return;
	}
	memset(p, 0, sizeof(*p));
	dbg_param_resolve(p, &sym->die, lb->info->at, true, 0, false);
	p->name = sym->name;
	if (sym->enumerator) {
		p->type = sym->enum_type;
		p->has_type = true;
	}
	if (!sym->label)
		p->type_name = dbg_type_name(&p->type, p->has_type, lb->info->cxx);
	dbg_vtype_read(&p->type, p->has_type, &p->vt);
	if (p->has_type && !p->type_name)
		lb->nomem = true;
}

/* The locals of one block: a function's in order, a nested block's in its
 * hashed dictionary's order. */
static void block_locals(struct locals_build *lb, Dwarf_Die *block, bool function)
{
	struct syms syms = { 0 };
	block_symbols(&syms, block);
	lb->nomem |= syms.nomem;
	size_t nbuckets = function ? 1 : syms.n / 5 + 1;
	uint32_t *bucket = function ? NULL : malloc((syms.n ? syms.n : 1) * sizeof(*bucket));
	if (!function && !bucket)
		lb->nomem = true;
	for (size_t i = 0; bucket && i < syms.n; i++)
		bucket[i] = (lb->info->cxx ? hash_cxx(syms.v[i].name) : hash_c(syms.v[i].name)) %
			    nbuckets;
	for (size_t b = 0; b < nbuckets && (function || bucket); b++)
		for (size_t i = 0; i < syms.n && !lb->nomem; i++)
			if (syms.v[i].local && (function || bucket[i] == b))
				local_add(lb, &syms.v[i]);
	free(bucket);
	free(syms.v);
}

/* Scopes [*first, *last] of INFO: the blocks of level LEVEL, innermost
 * first, its function last (gdb's get_frame_block for an inline level). */
static bool level_blocks(const struct dbg_pc_info *info, size_t level, int *first, int *last)
{
	size_t skip = info->nlevels - 1 - level, seen = 0;
	int start = 0;
	for (int i = 0; i < info->nscopes; i++) {
		if (!dbg_is_function_scope(dwarf_tag(&info->scopes[i])))
			continue;
		if (seen++ == skip) {
			*first = start;
			*last = i;
			return true;
		}
		start = i + 1;
	}
	return false;
}

static bool info_locals(struct dbg_pc_info *info)
{
	info->locals = calloc(info->nlevels, sizeof(*info->locals));
	if (!info->locals)
		return false;
	for (size_t l = 0; l < info->nlevels; l++) {
		struct locals_build lb = { .level = &info->locals[l], .info = info };
		int first, last;
		if (!level_blocks(info, l, &first, &last))
			continue;
		for (int i = first; i <= last && !lb.nomem; i++)
			block_locals(&lb, &info->scopes[i], i == last);
		if (lb.nomem) {
			dbg_locals_free(info);
			return false;
		}
	}
	return true;
}

void dbg_locals_free(struct dbg_pc_info *info)
{
	if (!info->locals)
		return;
	for (size_t l = 0; l < info->nlevels; l++) {
		for (size_t i = 0; i < info->locals[l].nparams; i++)
			free(info->locals[l].params[i].type_name);
		free(info->locals[l].params);
	}
	free(info->locals);
	info->locals = NULL;
}

/* Local P of EV's frame into A; false when out of memory. */
static bool local_fill(struct dbg_eval *ev, struct dbg_param *p, struct dbg_args_out *out,
		       struct dbg_arg *a)
{
	struct dbg_loc loc = { .kind = DBG_LOC_OPTIMIZED };
	if (p->has_const)
		dbg_const_location(p, &loc);
	else if (p->ops)
		dbg_eval_location(ev, &p->loc, p->ops, p->nops, &loc);
	*a = (struct dbg_arg){ .name = p->name, .type = p->type_name };
	if (loc.kind == DBG_LOC_OPTIMIZED) {
		a->value = "<optimized out>";   /* bt full: whatever the type */
	} else if (loc.kind == DBG_LOC_ERROR) {
		char text[320];
		snprintf(text, sizeof(text), "<error reading variable %.200s (Cannot access memory "
			 "at address 0x%" PRIx64 ")>", p->name, loc.fault);
		a->value = dbg_text_keep(out, text);
	} else {
		a->value = dbg_value_text(ev, out, &p->vt, &loc);
	}
	return a->value != NULL;
}

static struct core_error *locals_locked(struct dbg_session *s, struct dbg_frame_regs *frames,
					size_t nframes, int inline_depth,
					const struct dbg_arg **locals, size_t *nlocals,
					bool *has_locals)
{
	struct dbg_eval ev;
	if (!dbg_eval_init(&ev, s, frames, nframes, 0, 0) || !ev.info->has_dwarf ||
	    inline_depth < 0 || (size_t)inline_depth >= ev.info->nlevels)
		return NULL;
	if (!ev.info->locals && !info_locals(ev.info))
		return &core_error_nomem;
	struct dbg_level *level = &ev.info->locals[inline_depth];
	struct dbg_args_out *out = dbg_args_out_get(s);
	struct dbg_arg *v = NULL;
	if (!out || (level->nparams && !(v = dbg_args_out_locals(out, level->nparams))))
		return &core_error_nomem;
	for (size_t i = 0; i < level->nparams; i++)
		if (!local_fill(&ev, &level->params[i], out, &v[i]))
			return &core_error_nomem;
	*locals = v;
	*nlocals = level->nparams;
	*has_locals = true;
	return NULL;
}

struct core_error *dbg_frame_locals(struct dbg_session *s, struct dbg_frame_regs *frames,
				    size_t nframes, int inline_depth, const struct dbg_arg **locals,
				    size_t *nlocals, bool *has_locals)
{
	*locals = NULL;
	*nlocals = 0;
	*has_locals = false;
	if (nframes == 0)
		return NULL;
	dbg_lock(s);
	struct core_error *err = locals_locked(s, frames, nframes, inline_depth, locals, nlocals,
					       has_locals);
	dbg_unlock(s);
	return err;
}
