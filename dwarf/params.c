/* Frame arguments: the formal parameters of a frame's function (and of
 * each inlined level), found once per pc and memoised in the file's cache,
 * then evaluated against the frame's registers for every frame. */
#include "params.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../base/array.h"

/* A bound on parameters per function: DWARF from a binary is untrusted. */
#define MAX_PARAMS 256

struct param_slot {
	uint64_t key;               /* offline address << 1 | activation */
	struct dbg_pc_info *info;
};

struct dbg_param_memo {
	struct param_slot *slots;
	size_t cap, n;
};

static void pc_info_free(struct dbg_pc_info *info)
{
	if (!info)
		return;
	for (size_t i = 0; i < info->nlevels; i++) {
		for (size_t j = 0; j < info->levels[i].nparams; j++)
			free(info->levels[i].params[j].type_name);
		free(info->levels[i].params);
	}
	free(info->levels);
	dbg_locals_free(info);
	free(info->scopes);
	free(info->site_params);
	free(info);
}

void dbg_param_memo_destroy(struct dbg_param_memo *memo)
{
	if (!memo)
		return;
	for (size_t i = 0; i < memo->cap; i++)
		pc_info_free(memo->slots[i].info);
	free(memo->slots);
	free(memo);
}

static struct param_slot *memo_slot(struct dbg_param_memo *m, uint64_t key)
{
	for (size_t i = base_hash_slot(key, m->cap);; i = (i + 1) & (m->cap - 1))
		if (!m->slots[i].info || m->slots[i].key == key)
			return &m->slots[i];
}

static bool memo_grow(struct dbg_param_memo *m)
{
	size_t cap = m->cap ? 2 * m->cap : 256;
	struct param_slot *old = m->slots;
	size_t oldcap = m->cap;
	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return false;
	}
	m->cap = cap;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].info)
			*memo_slot(m, old[i].key) = old[i];
	free(old);
	return true;
}

bool dbg_location_attr(Dwarf_Die *die, unsigned name, Dwarf_Attribute *attr)
{
	if (!dwarf_attr_integrate(die, name, attr))
		return false;
	/* DW_FORM_exprloc's length is a ULEB128, DW_FORM_block's too, and
	 * DW_FORM_block1's byte is one when below 0x80. */
	unsigned form = dwarf_whatform(attr);
	if (form == DW_FORM_block || (form == DW_FORM_block1 && attr->valp && *attr->valp < 0x80))
		attr->form = DW_FORM_exprloc;
	return true;
}

void dbg_param_resolve(struct dbg_param *p, Dwarf_Die *die, Dwarf_Addr at, bool at_known,
		       Dwarf_Addr entry, bool has_entry)
{
	Dwarf_Attribute a;
	p->name = dbg_die_name(die);
	p->has_type = dwarf_attr_integrate(die, DW_AT_type, &a) && dwarf_formref_die(&a, &p->type);
	p->has_const = dwarf_attr_integrate(die, DW_AT_const_value, &p->cval) != NULL;
	p->has_loc = dbg_location_attr(die, DW_AT_location, &p->loc);
	p->artificial = dwarf_attr_integrate(die, DW_AT_artificial, &a) != NULL;
	if (p->has_loc && at_known) {
		Dwarf_Op *ops;
		size_t n;
		if (dwarf_getlocation_addr(&p->loc, at, &ops, &n, 1) == 1) {
			p->ops = ops;
			p->nops = n;
		}
	}
	if (p->has_loc && has_entry) {
		Dwarf_Op *ops;
		size_t n;
		if (dwarf_getlocation_addr(&p->loc, entry, &ops, &n, 1) == 1) {
			p->entry_ops = ops;
			p->entry_nops = n;
		}
	}
}

struct level_build {
	struct dbg_level *level;
	size_t cap;
	Dwarf_Addr at, entry;
	bool has_entry, cxx;
};

/* Add parameter DIE to the level LB builds (a dbg_children visit). */
static bool level_add(void *ctx, Dwarf_Die *die)
{
	struct level_build *lb = ctx;
	struct dbg_level *level = lb->level;
	if (level->nparams == MAX_PARAMS)
		return true;
	if (level->nparams == lb->cap) {
		size_t cap = lb->cap ? 2 * lb->cap : 8;
		struct dbg_param *v = realloc(level->params, cap * sizeof(*v));
		if (!v)
			return false;
		level->params = v;
		lb->cap = cap;
	}
	struct dbg_param *p = &level->params[level->nparams];
	memset(p, 0, sizeof(*p));
	dbg_param_resolve(p, die, lb->at, true, lb->entry, lb->has_entry);
	if (!p->name)
		return true;    /* gdb makes no symbol of an unnamed parameter */
	level->nparams++;
	p->type_name = dbg_type_name(&p->type, p->has_type, lb->cxx);
	dbg_vtype_read(&p->type, p->has_type, &p->vt);
	return !p->has_type || p->type_name;
}

/* The parameters of function scope DIE in gdb's order: the concrete
 * instance's children, then those of its abstract origin that no concrete
 * child stands for; located at DWARF address AT and, for @entry values, at
 * the real function's entry INFO->entry (gdb's get_frame_func of an inline
 * frame is its containing function's). */
static bool level_fill(struct dbg_level *level, Dwarf_Die *die, Dwarf_Addr at,
		       const struct dbg_pc_info *info)
{
	struct level_build lb = { .level = level, .at = at, .cxx = info->cxx,
				  .has_entry = info->has_entry, .entry = info->entry };
	/* A parameter's DW_AT_abstract_origin is followed one link, a
	 * local's further (locals.c). */
	struct dbg_children how = { .tag = DW_TAG_formal_parameter, .hops = 1,
				    .max_seen = MAX_PARAMS, .visit = level_add, .ctx = &lb };
	return dbg_children_inherit(die, &how);
}

/* Levels from the scopes: the subprogram is [0], inlined levels count up
 * from it (outermost inline = 1), as an_frame.inline_depth does. */
static bool info_levels(struct dbg_pc_info *info, Dwarf_Addr at)
{
	int sub = -1;
	size_t nfn = 0;
	for (int i = 0; i < info->nscopes && sub < 0; i++) {
		int tag = dwarf_tag(&info->scopes[i]);
		nfn += dbg_is_function_scope(tag);
		if (tag == DW_TAG_subprogram)
			sub = i;
	}
	if (sub < 0)
		return true;
	info->has_dwarf = true;
	info->levels = calloc(nfn, sizeof(*info->levels));
	if (!info->levels)
		return false;
	info->nlevels = nfn;
	Dwarf_Die *sp = &info->scopes[sub];
	info->has_frame_base = dbg_location_attr(sp, DW_AT_frame_base, &info->frame_base);
	/* Where @entry values are looked up: the subprogram's entry (for a
	 * subprogram, gdb's block entry pc: DW_AT_low_pc, else the first of
	 * DW_AT_ranges). */
	info->has_entry = dbg_die_entry(sp, &info->entry);
	size_t level = nfn;
	for (int i = 0; i <= sub; i++) {
		if (!dbg_is_function_scope(dwarf_tag(&info->scopes[i])))
			continue;
		if (!level_fill(&info->levels[--level], &info->scopes[i], at, info))
			return false;
	}
	return true;
}

static struct dbg_pc_info *info_build(struct dbg_file *f, uint64_t addr, bool activation)
{
	struct dbg_pc_info *info = calloc(1, sizeof(*info));
	if (!info)
		return NULL;
	if (!dbg_file_has_dwarf(f))
		return info;
	uint64_t lookup = activation ? addr : addr - 1;
	Dwarf_Die *cudie;
	info->nscopes = dbg_file_scopes(f, lookup, &cudie, &info->dbias, &info->scopes);
	if (info->nscopes <= 0)
		return info;
	int lang = dwarf_srclang(cudie);
	info->cxx = lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_11 ||
		    lang == DW_LANG_C_plus_plus_14 || lang == DW_LANG_C_plus_plus_03;
	info->at = lookup - info->dbias;
	if (!info_levels(info, info->at)) {
		pc_info_free(info);
		return NULL;
	}
	return info;
}

static struct dbg_pc_info *file_pc_info(struct dbg_file *f, uint64_t addr, bool activation)
{
	uint64_t key = addr << 1 | activation;
	struct dbg_param_memo *m = f->params;
	if (!m && !(m = f->params = calloc(1, sizeof(*m))))
		return NULL;
	if (m->cap) {
		struct param_slot *slot = memo_slot(m, key);
		if (slot->info)
			return slot->info;
	}
	if (2 * (m->n + 1) > m->cap && !memo_grow(m))
		return NULL;
	struct dbg_pc_info *info = info_build(f, addr, activation);
	if (!info)
		return NULL;
	struct param_slot *slot = memo_slot(m, key);
	slot->key = key;
	slot->info = info;
	m->n++;
	return info;
}

struct dbg_pc_info *dbg_pc_info_get(struct dbg_session *s, uint64_t pc, bool activation,
				    struct dbg_module_entry **m, struct dbg_file **f)
{
	*m = dbg_module_for(s, pc);
	*f = *m ? dbg_module_file(s, *m) : NULL;
	if (!*f)
		return NULL;
	Dwarf_Addr fbias = 0;
	dwfl_module_getelf((*f)->mod, &fbias);
	return file_pc_info(*f, pc - (*m)->bias + fbias, activation);
}

/* A value as the printer sees it: its type and its location.  Within a
 * session the printer is a function of these (the core does not change),
 * and frames repeat the same few values, so each is printed once. */
struct value_slot {
	uint64_t hash;                  /* first: base/array.h's tables */
	const struct dbg_vtype *vt;     /* NULL: a free slot */
	struct dbg_loc loc;
	const char *text;               /* in the texts' chunks */
};

/* Texts that never move while the session lives. */
struct text_chunk {
	struct text_chunk *next;
	size_t used, cap;
	char data[];
};

#define TEXT_CHUNK 65536

/* What dbg_frame_args lends its caller: the arguments (reused from call to
 * call) and the printed values (kept for the session). */
struct dbg_args_out {
	struct dbg_arg *args;
	size_t cap;
	struct dbg_arg *locals;         /* dbg_frame_locals' answer */
	size_t locals_cap;
	struct value_slot *values;      /* open addressing by hash */
	size_t values_cap, nvalues;
	struct text_chunk *texts;
	struct dbg_text print;          /* the printer's scratch */
	bool nomem;
};

void dbg_args_out_destroy(struct dbg_args_out *out)
{
	if (!out)
		return;
	free(out->args);
	free(out->locals);
	free(out->values);
	for (struct text_chunk *c = out->texts, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	free(out->print.s);
	free(out);
}

static uint64_t value_hash(const struct dbg_vtype *vt, const struct dbg_loc *loc)
{
	uint64_t w[2];
	memcpy(w, loc->bytes, sizeof(w));
	uint64_t h = (uint64_t)(uintptr_t)vt;
	uint64_t parts[] = { (uint64_t)loc->kind, loc->addr, w[0], w[1], loc->len, loc->fault };
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		h = (h ^ parts[i]) * 0x100000001b3ULL + (h >> 29);
	return h;
}

static bool same_value(const struct value_slot *v, uint64_t h, const struct dbg_vtype *vt,
		       const struct dbg_loc *loc)
{
	return v->hash == h && v->vt == vt && v->loc.kind == loc->kind && v->loc.addr == loc->addr &&
	       v->loc.len == loc->len && v->loc.fault == loc->fault &&
	       memcmp(v->loc.bytes, loc->bytes, sizeof(loc->bytes)) == 0;
}

static struct value_slot *value_slot(struct dbg_args_out *out, uint64_t h,
				     const struct dbg_vtype *vt, const struct dbg_loc *loc)
{
	for (size_t i = base_hash_slot(h, out->values_cap);; i = (i + 1) & (out->values_cap - 1))
		if (!out->values[i].vt || same_value(&out->values[i], h, vt, loc))
			return &out->values[i];
}

/* A copy of TEXT (LEN bytes and a NUL) that stays where it is. */
static const char *text_keep(struct dbg_args_out *out, const char *text, size_t len)
{
	struct text_chunk *c = out->texts;
	if (!c || c->cap - c->used < len + 1) {
		size_t cap = len + 1 > TEXT_CHUNK ? len + 1 : TEXT_CHUNK;
		if (!(c = malloc(sizeof(*c) + cap)))
			return NULL;
		c->next = out->texts;
		c->used = 0;
		c->cap = cap;
		out->texts = c;
	}
	char *kept = memcpy(c->data + c->used, text, len + 1);
	c->used += len + 1;
	return kept;
}

const char *dbg_value_text(struct dbg_eval *ev, struct dbg_args_out *out,
			   const struct dbg_vtype *vt, const struct dbg_loc *loc)
{
	uint64_t h = value_hash(vt, loc);
	if (!base_table_reserve(&out->values, &out->values_cap, out->nvalues, sizeof(*out->values)))
		return NULL;
	struct value_slot *v = value_slot(out, h, vt, loc);
	if (v->vt)
		return v->text;
	out->print.len = 0;
	dbg_format_value(ev, vt, loc, &out->print);
	if (out->print.nomem)
		return NULL;
	const char *text = text_keep(out, out->print.s, out->print.len - 1);
	if (!text)
		return NULL;
	*v = (struct value_slot){ .hash = h, .vt = vt, .loc = *loc, .text = text };
	out->nvalues++;
	return text;
}

const char *dbg_text_keep(struct dbg_args_out *out, const char *text)
{
	return text_keep(out, text, strlen(text));
}

struct dbg_args_out *dbg_args_out_get(struct dbg_session *s)
{
	if (!s->args_out)
		s->args_out = calloc(1, sizeof(*s->args_out));
	return s->args_out;
}

struct dbg_arg *dbg_args_out_locals(struct dbg_args_out *out, size_t n)
{
	if (n > out->locals_cap) {
		struct dbg_arg *v = realloc(out->locals, n * sizeof(*v));
		if (!v)
			return NULL;
		out->locals = v;
		out->locals_cap = n;
	}
	return out->locals;
}

/* The value gdb's read_variable_at_entry finds: the parameter was in one
 * register when the function was entered, and the caller's call site says
 * what that register held. */
static bool entry_value(struct dbg_eval *ev, const struct dbg_param *p, struct dbg_loc *loc)
{
	/* A reference's entry value needs DW_AT_call_data_value, which gdb
	 * requires and compilers rarely emit: none, as gdb then shows none. */
	if (!p->entry_ops || p->entry_nops != 1 || p->vt.reference)
		return false;
	unsigned reg;
	uint8_t op = p->entry_ops[0].atom;
	if (op >= DW_OP_reg0 && op <= DW_OP_reg31)
		reg = op - DW_OP_reg0;
	else if (op == DW_OP_regx)
		reg = (unsigned)p->entry_ops[0].number;
	else
		return false;
	uint64_t v;
	if (!dbg_eval_entry_reg(ev, reg, &v))
		return false;
	memset(loc, 0, sizeof(*loc));
	loc->kind = DBG_LOC_VALUE;
	loc->len = 8;
	memcpy(loc->bytes, &v, 8);
	return true;
}

/* DW_AT_const_value: a constant, or a block of the object's bytes.  Only
 * DW_FORM_sdata is signed: gdb takes data1..data8 as the form's bytes
 * (250 in a data1 is 250, not -6). */
void dbg_const_location(struct dbg_param *p, struct dbg_loc *loc)
{
	Dwarf_Block block;
	Dwarf_Sword sv;
	Dwarf_Word uv;
	loc->kind = DBG_LOC_VALUE;
	loc->len = 8;
	if (dwarf_formblock(&p->cval, &block) == 0) {
		if (block.length > sizeof(loc->bytes)) {
			loc->kind = DBG_LOC_TOO_BIG;
			return;
		}
		memset(loc->bytes, 0, sizeof(loc->bytes));
		memcpy(loc->bytes, block.data, block.length);
		loc->len = block.length;
	} else if ((dwarf_whatform(&p->cval) == DW_FORM_sdata ||
		    dwarf_whatform(&p->cval) == DW_FORM_implicit_const) &&
		   dwarf_formsdata(&p->cval, &sv) == 0) {
		memcpy(loc->bytes, &sv, 8);
	} else if (dwarf_formudata(&p->cval, &uv) == 0) {
		memcpy(loc->bytes, &uv, 8);
	} else {
		loc->kind = DBG_LOC_OPTIMIZED;
	}
}

/* gdb shows name=name@entry=V when the two values have the same bytes
 * (value_contents_eq), else both. */
static bool same_contents(struct dbg_eval *ev, struct dbg_param *p, const struct dbg_loc *cur,
			  const struct dbg_loc *entry)
{
	unsigned char a[16], b[16];
	size_t na, nb;
	return dbg_value_bytes(ev, &p->vt, cur, a, &na) && dbg_value_bytes(ev, &p->vt, entry, b, &nb) &&
	       na == nb && memcmp(a, b, na) == 0;
}

/* Parameter P of EV's frame into A; false when out of memory. */
static bool arg_fill(struct dbg_eval *ev, struct dbg_param *p, struct dbg_args_out *out,
		     struct dbg_arg *a)
{
	struct dbg_loc loc = { .kind = DBG_LOC_OPTIMIZED }, entry;
	if (p->has_const)
		dbg_const_location(p, &loc);
	else if (p->ops)
		dbg_eval_location(ev, &p->loc, p->ops, p->nops, &loc);
	a->name = p->name ? p->name : "";
	a->type = p->type_name;
	a->value = dbg_value_text(ev, out, &p->vt, &loc);
	a->entry_value = NULL;
	a->entry_equal = false;
	if (!p->has_const && entry_value(ev, p, &entry)) {
		/* The same bytes print the same: most entry values are the
		 * values (gdb's name=name@entry=V). */
		a->entry_equal = same_contents(ev, p, &loc, &entry);
		a->entry_value = a->entry_equal ? a->value : dbg_value_text(ev, out, &p->vt, &entry);
		return a->value && a->entry_value;
	}
	return a->value != NULL;
}

static struct core_error *args_locked(struct dbg_session *s, struct dbg_frame_regs *frames,
				      size_t nframes, int inline_depth, const struct dbg_arg **args,
				      size_t *nargs, bool *has_args)
{
	struct dbg_eval ev;
	if (!dbg_eval_init(&ev, s, frames, nframes, 0, 0) || !ev.info->has_dwarf ||
	    inline_depth < 0 || (size_t)inline_depth >= ev.info->nlevels)
		return NULL;
	struct dbg_level *level = &ev.info->levels[inline_depth];
	struct dbg_args_out *out = dbg_args_out_get(s);
	if (!out)
		return &core_error_nomem;
	if (level->nparams > out->cap) {
		struct dbg_arg *v = realloc(out->args, level->nparams * sizeof(*v));
		if (!v)
			return &core_error_nomem;
		out->args = v;
		out->cap = level->nparams;
	}
	for (size_t i = 0; i < level->nparams; i++)
		if (!arg_fill(&ev, &level->params[i], out, &out->args[i]))
			return &core_error_nomem;
	*args = out->args;
	*nargs = level->nparams;
	*has_args = true;
	return NULL;
}

struct core_error *dbg_frame_args(struct dbg_session *s, struct dbg_frame_regs *frames,
				  size_t nframes, int inline_depth, const struct dbg_arg **args,
				  size_t *nargs, bool *has_args)
{
	*args = NULL;
	*nargs = 0;
	*has_args = false;
	if (nframes == 0)
		return NULL;
	dbg_lock(s);
	struct core_error *err = args_locked(s, frames, nframes, inline_depth, args, nargs, has_args);
	dbg_unlock(s);
	return err;
}
