/* DWARF expressions of parameter locations, evaluated against one frame's
 * registers and the core's memory; DW_OP_entry_value through the caller's
 * DW_TAG_call_site.  The ops come from libdw; everything they say is
 * untrusted: the stack, the steps and the entry-value nesting are bounded. */
#include "params.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STACK_MAX 64
#define STEPS_MAX 4096
#define ENTRY_DEPTH_MAX 8

/* DWARF 5 names that older dwarf.h may lack. */
#ifndef DW_OP_entry_value
#define DW_OP_entry_value 0xa3
#endif
#ifndef DW_OP_implicit_pointer
#define DW_OP_implicit_pointer 0xa0
#endif

bool dbg_eval_init(struct dbg_eval *ev, struct dbg_session *s, struct dbg_frame_regs *frames,
		   size_t nframes, size_t idx, int depth)
{
	memset(ev, 0, sizeof(*ev));
	ev->s = s;
	ev->frames = frames;
	ev->nframes = nframes;
	ev->idx = idx;
	ev->depth = depth;
	if (idx >= nframes)
		return false;
	struct dbg_frame_memo *mm = &frames[idx].memo;
	if (!mm->valid || mm->pc != frames[idx].pc || mm->activation != frames[idx].activation) {
		mm->info = dbg_pc_info_get(s, frames[idx].pc, frames[idx].activation, &mm->module,
					   &mm->file);
		mm->pc = frames[idx].pc;
		mm->activation = frames[idx].activation;
		mm->target = 0;
		mm->valid = true;
	}
	ev->info = mm->info;
	ev->m = mm->module;
	ev->f = mm->file;
	return ev->info != NULL;
}

uint64_t dbg_eval_runtime(const struct dbg_eval *ev, Dwarf_Addr a)
{
	Dwarf_Addr fbias = 0;
	dwfl_module_getelf(ev->f->mod, &fbias);
	return a + ev->info->dbias - fbias + ev->m->bias;
}

static bool frame_reg(const struct dbg_eval *ev, uint64_t reg, uint64_t *v)
{
	const struct dbg_frame_regs *fr = &ev->frames[ev->idx];
	if (reg >= DBG_NREGS || !(fr->regs_known & (1u << reg)))
		return false;
	*v = fr->regs[reg];
	return true;
}

/* ---- memos keyed by a pointer into libdw's data ---- */

#define PTRMEMO_SIZE 256

/* Direct-mapped: a pointer into a file's libdw data (stable while the
 * session lives) to what was found for it. */
struct dbg_ptrmemo {
	const void *key[PTRMEMO_SIZE];
	uint64_t value[PTRMEMO_SIZE];
	bool ok[PTRMEMO_SIZE];
};

static size_t ptrmemo_slot(const void *key)
{
	uintptr_t k = (uintptr_t)key;
	return (size_t)((k >> 3) ^ (k >> 11)) % PTRMEMO_SIZE;
}

/* True when KEY is memoised: *OK and *VALUE are what was found. */
static bool ptrmemo_get(const struct dbg_ptrmemo *pm, const void *key, uint64_t *value, bool *ok)
{
	size_t i = ptrmemo_slot(key);
	if (!pm || pm->key[i] != key)
		return false;
	*value = pm->value[i];
	*ok = pm->ok[i];
	return true;
}

/* Memoise KEY (a memo that cannot be allocated is none). */
static void ptrmemo_put(struct dbg_ptrmemo **pm, const void *key, uint64_t value, bool ok)
{
	if (!*pm && !(*pm = calloc(1, sizeof(**pm))))
		return;
	size_t i = ptrmemo_slot(key);
	(*pm)->key[i] = key;
	(*pm)->value[i] = value;
	(*pm)->ok[i] = ok;
}

/* ---- expressions ---- */

/* The state of one evaluation. */
struct machine {
	struct dbg_eval *ev;
	Dwarf_Attribute *attr;
	uint64_t stack[STACK_MAX];
	bool unsig[STACK_MAX];      /* converted to an unsigned base type */
	size_t sp;
	bool failed;
	uint64_t fault;
	bool faulted;
};

/* V, of an unsigned base type when UNSIG (else signed or generic). */
static void push_typed(struct machine *m, uint64_t v, bool unsig)
{
	if (m->sp == STACK_MAX) {
		m->failed = true;
	} else {
		m->unsig[m->sp] = unsig;
		m->stack[m->sp++] = v;
	}
}

static void push(struct machine *m, uint64_t v)
{
	push_typed(m, v, false);
}

static uint64_t pop(struct machine *m)
{
	if (m->sp == 0) {
		m->failed = true;
		return 0;
	}
	return m->stack[--m->sp];
}

static void deref(struct machine *m, size_t size)
{
	uint64_t addr = pop(m), v = 0;
	if (size == 0 || size > 8) {
		m->failed = true;
		return;
	}
	if (!m->failed && !core_read_bytes(dbg_session_core(m->ev->s), addr, &v, size)) {
		m->faulted = true;
		m->fault = addr;
		m->failed = true;
	}
	push(m, v);
}

static bool binary_op(struct machine *m, uint8_t atom)
{
	/* Two values of an unsigned type (DW_OP_convert) divide, shift and
	 * compare unsigned; the result keeps their type. */
	bool u = m->sp >= 2 && m->unsig[m->sp - 1] && m->unsig[m->sp - 2];
	uint64_t b = pop(m), a = pop(m);
	int64_t sa = (int64_t)a, sb = (int64_t)b;
	uint64_t r;
	if (u && (atom == DW_OP_div || atom == DW_OP_lt || atom == DW_OP_gt || atom == DW_OP_le ||
		  atom == DW_OP_ge)) {
		if (atom == DW_OP_div && b == 0)
			return false;
		r = atom == DW_OP_div ? a / b : atom == DW_OP_lt ? a < b : atom == DW_OP_gt ? a > b
		    : atom == DW_OP_le ? a <= b : a >= b;
		push_typed(m, r, atom == DW_OP_div);
		return true;
	}
	switch (atom) {
	case DW_OP_and: r = a & b; break;
	case DW_OP_or: r = a | b; break;
	case DW_OP_xor: r = a ^ b; break;
	case DW_OP_plus: r = a + b; break;
	case DW_OP_minus: r = a - b; break;
	case DW_OP_mul: r = a * b; break;
	case DW_OP_div:
		if (b == 0 || (sa == INT64_MIN && sb == -1))
			return false;
		r = (uint64_t)(sa / sb);
		break;
	case DW_OP_mod:
		if (b == 0)
			return false;
		r = a % b;
		break;
	case DW_OP_shl: r = b >= 64 ? 0 : a << b; break;
	case DW_OP_shr: r = b >= 64 ? 0 : a >> b; break;
	case DW_OP_shra: r = (uint64_t)(b >= 64 ? (sa < 0 ? -1 : 0) : sa >> b); break;
	case DW_OP_eq: r = a == b; break;
	case DW_OP_ne: r = a != b; break;
	case DW_OP_lt: r = sa < sb; break;
	case DW_OP_gt: r = sa > sb; break;
	case DW_OP_le: r = sa <= sb; break;
	case DW_OP_ge: r = sa >= sb; break;
	default: return false;
	}
	push_typed(m, r, u && atom != DW_OP_eq && atom != DW_OP_ne);
	return true;
}

static bool stack_op(struct machine *m, const Dwarf_Op *op)
{
	uint64_t a, b, c;
	switch (op->atom) {
	case DW_OP_dup: a = pop(m); push(m, a); push(m, a); break;
	case DW_OP_drop: pop(m); break;
	case DW_OP_over:
		if (m->sp < 2)
			return false;
		push(m, m->stack[m->sp - 2]);
		break;
	case DW_OP_pick:
		if (op->number >= m->sp)
			return false;
		push(m, m->stack[m->sp - 1 - op->number]);
		break;
	case DW_OP_swap: a = pop(m); b = pop(m); push(m, a); push(m, b); break;
	case DW_OP_rot: a = pop(m); b = pop(m); c = pop(m); push(m, a); push(m, c); push(m, b); break;
	case DW_OP_abs: a = pop(m); push(m, (int64_t)a < 0 ? -a : a); break;
	case DW_OP_neg: a = pop(m); push(m, -a); break;
	case DW_OP_not: a = pop(m); push(m, ~a); break;
	case DW_OP_plus_uconst: a = pop(m); push(m, a + op->number); break;
	default: return binary_op(m, op->atom);
	}
	return true;
}

/* A piece or the whole location, as the ops left it. */
enum pending { P_NONE, P_STACK, P_REG, P_VALUE, P_IMPLICIT, P_SYNTHETIC };

struct piece_state {
	enum pending kind;
	uint64_t reg_value;
	bool reg_ok;
	Dwarf_Block implicit;
};

/* The register a DW_OP_entry_value names: gdb resolves only a single
 * register this way.  Every frame of a function evaluates the same op. */
static bool entry_value_reg(struct machine *m, const Dwarf_Op *op, unsigned *reg)
{
	struct dbg_session *s = m->ev->s;
	uint64_t v;
	bool ok;
	if (ptrmemo_get(s->entry_regs, op, &v, &ok)) {
		*reg = (unsigned)v;
		return ok;
	}
	Dwarf_Attribute sub;
	Dwarf_Op *ops;
	size_t n;
	ok = dwarf_getlocation_attr(m->attr, op, &sub) == 0 && dwarf_getlocation(&sub, &ops, &n) == 0 &&
	     n == 1 && ((ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31) ||
			ops[0].atom == DW_OP_regx);
	*reg = !ok ? 0 : ops[0].atom == DW_OP_regx ? (unsigned)ops[0].number
						   : (unsigned)(ops[0].atom - DW_OP_reg0);
	ptrmemo_put(&s->entry_regs, op, *reg, ok);
	return ok;
}

static bool entry_value_op(struct machine *m, const Dwarf_Op *op)
{
	unsigned reg;
	uint64_t v;
	if (!entry_value_reg(m, op, &reg) || !dbg_eval_entry_reg(m->ev, reg, &v))
		return false;
	push(m, v);
	return true;
}

static bool frame_base(struct machine *m)
{
	struct dbg_eval *ev = m->ev;
	Dwarf_Op *ops;
	size_t n;
	/* At the pc: a frame base may be a location list, or (Go's DWARF 4)
	 * a block that dwarf_getlocation takes for no expression. */
	if (!ev->info->has_frame_base || m->attr == &ev->info->frame_base ||
	    dwarf_getlocation_addr(&ev->info->frame_base, ev->info->at, &ops, &n, 1) != 1)
		return false;
	struct dbg_loc base;
	dbg_eval_location(ev, &ev->info->frame_base, ops, n, &base);
	if (base.kind == DBG_LOC_MEMORY)
		push(m, base.addr);
	else if (base.kind == DBG_LOC_VALUE)
		push(m, *(uint64_t *)base.bytes);
	else
		return false;
	return true;
}

static bool reg_op(struct machine *m, const Dwarf_Op *op, struct piece_state *ps)
{
	uint8_t a = op->atom;
	uint64_t v;
	if ((a >= DW_OP_reg0 && a <= DW_OP_reg31) || a == DW_OP_regx) {
		ps->kind = P_REG;
		ps->reg_ok = frame_reg(m->ev, a == DW_OP_regx ? op->number : (uint64_t)(a - DW_OP_reg0),
				       &ps->reg_value);
		return true;
	}
	uint64_t reg = a == DW_OP_bregx ? op->number : (uint64_t)(a - DW_OP_breg0);
	int64_t off = (int64_t)(a == DW_OP_bregx ? op->number2 : op->number);
	if (!frame_reg(m->ev, reg, &v))
		return false;
	push(m, v + (uint64_t)off);
	return true;
}

/* DW_OP_convert to an integer base type of at most 8 bytes: the value cut
 * to its size and extended by its signedness. */
static bool convert_op(struct machine *m, const Dwarf_Op *op)
{
	Dwarf_Die type;
	Dwarf_Attribute a;
	Dwarf_Word size, enc;
	if (!m->attr || dwarf_getlocation_die(m->attr, op, &type) != 0 ||
	    dwarf_tag(&type) != DW_TAG_base_type ||
	    !dwarf_attr(&type, DW_AT_byte_size, &a) || dwarf_formudata(&a, &size) != 0 ||
	    !dwarf_attr(&type, DW_AT_encoding, &a) || dwarf_formudata(&a, &enc) != 0 ||
	    size == 0 || size > 8)
		return false;
	bool is_signed = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
	if (!is_signed && enc != DW_ATE_unsigned && enc != DW_ATE_unsigned_char &&
	    enc != DW_ATE_boolean)
		return false;
	uint64_t v = pop(m);
	if (size < 8) {
		unsigned bits = (unsigned)size * 8;
		v &= (UINT64_C(1) << bits) - 1;
		if (is_signed && (v >> (bits - 1)) & 1)
			v |= ~((UINT64_C(1) << bits) - 1);
	}
	push_typed(m, v, !is_signed);
	return true;
}

/* Typed-stack ops (DWARF 5 and their GNU forms) on integer registers and
 * constants: the value is kept as 64 bits. */
static bool typed_op(struct machine *m, const Dwarf_Op *op)
{
	uint64_t v = 0;
	switch (op->atom) {
	case DW_OP_regval_type:
	case DW_OP_GNU_regval_type:
		if (!frame_reg(m->ev, op->number, &v))
			return false;
		push(m, v);
		return true;
	case DW_OP_deref_type:
	case DW_OP_GNU_deref_type:
		deref(m, (size_t)op->number);
		return true;
	case DW_OP_convert:
	case DW_OP_GNU_convert:
		return op->number == 0 || convert_op(m, op);
	case DW_OP_reinterpret:
	case DW_OP_GNU_reinterpret:
		return op->number == 0;     /* only to the generic type */
	case DW_OP_const_type:
	case DW_OP_GNU_const_type: {
		const unsigned char *block = (const unsigned char *)(uintptr_t)op->number2;
		if (!block || block[0] > 8)
			return false;
		memcpy(&v, block + 1, block[0]);
		push(m, v);
		return true;
	}
	default:
		return false;
	}
}

static bool is_typed(uint8_t a)
{
	return a == DW_OP_regval_type || a == DW_OP_GNU_regval_type || a == DW_OP_deref_type ||
	       a == DW_OP_GNU_deref_type || a == DW_OP_convert || a == DW_OP_GNU_convert ||
	       a == DW_OP_reinterpret || a == DW_OP_GNU_reinterpret || a == DW_OP_const_type ||
	       a == DW_OP_GNU_const_type;
}

/* The index of the op a DW_OP_skip/DW_OP_bra jumps to (its operand is a
 * byte offset from the end of the 3-byte op); past the last op ends. */
static bool branch_to(const Dwarf_Op *ops, size_t nops, const Dwarf_Op *op, size_t *next)
{
	uint64_t target = op->offset + 3 + (uint64_t)(int64_t)(int16_t)op->number;
	for (size_t i = 0; i < nops; i++)
		if (ops[i].offset == target) {
			*next = i;
			return true;
		}
	if (target > ops[nops - 1].offset) {
		*next = nops;
		return true;
	}
	return false;
}

/* One op that neither ends a piece nor branches; false: not understood. */
static bool simple_op(struct machine *m, const Dwarf_Op *op, struct piece_state *ps)
{
	uint8_t a = op->atom;
	if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
		push(m, a - DW_OP_lit0);
		return true;
	}
	if ((a >= DW_OP_reg0 && a <= DW_OP_reg31) || a == DW_OP_regx ||
	    (a >= DW_OP_breg0 && a <= DW_OP_breg31) || a == DW_OP_bregx)
		return reg_op(m, op, ps);
	if (is_typed(a))
		return typed_op(m, op);
	switch (a) {
	case DW_OP_addr:
		push(m, dbg_eval_runtime(m->ev, op->number));
		return true;
	case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u: case DW_OP_const2s:
	case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u: case DW_OP_const8s:
	case DW_OP_constu: case DW_OP_consts:
		push(m, op->number);
		return true;
	case DW_OP_fbreg:
		if (!frame_base(m))
			return false;
		push(m, pop(m) + op->number);
		return true;
	case DW_OP_call_frame_cfa:
		if (!m->ev->frames[m->ev->idx].cfa)
			return false;
		push(m, m->ev->frames[m->ev->idx].cfa);
		return true;
	case DW_OP_deref:
		deref(m, 8);
		return true;
	case DW_OP_deref_size:
		deref(m, (size_t)op->number);
		return true;
	case DW_OP_nop:
		return true;
	case DW_OP_stack_value:
		ps->kind = P_VALUE;
		return true;
	case DW_OP_implicit_value:
		ps->kind = P_IMPLICIT;
		return dwarf_getlocation_implicit_value(m->attr, op, &ps->implicit) == 0;
	case DW_OP_implicit_pointer:
	case DW_OP_GNU_implicit_pointer:
		ps->kind = P_SYNTHETIC;
		return true;
	case DW_OP_entry_value:
	case DW_OP_GNU_entry_value:
		return entry_value_op(m, op);
	default:
		return stack_op(m, op);
	}
}

/* The bytes of the piece the ops described; false: optimized out. */
static bool piece_bytes(struct machine *m, struct piece_state *ps, unsigned char *out, size_t size)
{
	uint64_t v;
	switch (ps->kind) {
	case P_REG:
		if (!ps->reg_ok || size > 8)
			return false;
		memcpy(out, &ps->reg_value, size);
		return true;
	case P_VALUE:
		v = pop(m);
		memcpy(out, &v, size > 8 ? 8 : size);
		return size <= 8;
	case P_IMPLICIT:
		if (ps->implicit.length < size)
			return false;
		memcpy(out, ps->implicit.data, size);
		return true;
	case P_STACK:
		v = pop(m);
		if (!core_read_bytes(dbg_session_core(m->ev->s), v, out, size)) {
			m->faulted = true;
			m->fault = v;
		}
		return !m->faulted;
	default:
		return false;
	}
}

/* The result of ops that ended without DW_OP_piece. */
static void whole_result(struct machine *m, struct piece_state *ps, struct dbg_loc *out)
{
	uint64_t v;
	switch (ps->kind) {
	case P_REG:
		out->kind = ps->reg_ok ? DBG_LOC_VALUE : DBG_LOC_OPTIMIZED;
		memcpy(out->bytes, &ps->reg_value, 8);
		out->len = 8;
		return;
	case P_VALUE:
		v = pop(m);
		out->kind = m->failed ? DBG_LOC_OPTIMIZED : DBG_LOC_VALUE;
		memcpy(out->bytes, &v, 8);
		out->len = 8;
		return;
	case P_IMPLICIT:
		out->kind = ps->implicit.length <= sizeof(out->bytes) ? DBG_LOC_VALUE : DBG_LOC_TOO_BIG;
		out->len = ps->implicit.length <= sizeof(out->bytes) ? ps->implicit.length : 0;
		memcpy(out->bytes, ps->implicit.data, out->len);
		return;
	case P_SYNTHETIC:
		out->kind = DBG_LOC_SYNTHETIC;
		return;
	default:
		if (m->sp == 0) {
			out->kind = DBG_LOC_OPTIMIZED;
			return;
		}
		out->kind = DBG_LOC_MEMORY;
		out->addr = pop(m);
	}
}

struct pieces {
	unsigned char bytes[16];
	size_t len;
	bool missing, too_big;
};

static void add_piece(struct machine *m, struct piece_state *ps, struct pieces *pc, uint64_t size)
{
	if (ps->kind == P_NONE && m->sp > 0)
		ps->kind = P_STACK;
	if (size > sizeof(pc->bytes) || pc->len + size > sizeof(pc->bytes)) {
		pc->too_big = true;
	} else {
		if (!piece_bytes(m, ps, pc->bytes + pc->len, (size_t)size))
			pc->missing = true;
		pc->len += (size_t)size;
	}
	m->sp = 0;
	memset(ps, 0, sizeof(*ps));
}

static void run(struct machine *m, Dwarf_Op *ops, size_t nops, struct dbg_loc *out)
{
	struct piece_state ps = { 0 };
	struct pieces pc = { 0 };
	bool any_piece = false;
	size_t i = 0;
	for (unsigned steps = 0; i < nops && !m->failed; steps++) {
		const Dwarf_Op *op = &ops[i];
		if (steps == STEPS_MAX) {
			m->failed = true;
		} else if (op->atom == DW_OP_piece) {
			add_piece(m, &ps, &pc, op->number);
			any_piece = true;
		} else if (op->atom == DW_OP_skip || op->atom == DW_OP_bra) {
			bool take = op->atom == DW_OP_skip || pop(m) != 0;
			if (take && !branch_to(ops, nops, op, &i))
				m->failed = true;
			if (take)
				continue;
		} else if (!simple_op(m, op, &ps)) {
			m->failed = true;
		}
		i++;
	}
	if (m->faulted) {
		out->kind = DBG_LOC_ERROR;
		out->fault = m->fault;
	} else if (m->failed) {
		out->kind = DBG_LOC_OPTIMIZED;
	} else if (!any_piece) {
		whole_result(m, &ps, out);
	} else if (pc.too_big) {
		out->kind = DBG_LOC_TOO_BIG;
	} else {
		out->kind = pc.missing ? DBG_LOC_OPTIMIZED : DBG_LOC_VALUE;
		memcpy(out->bytes, pc.bytes, pc.len);
		out->len = pc.len;
	}
}

void dbg_eval_location(struct dbg_eval *ev, Dwarf_Attribute *attr, Dwarf_Op *ops, size_t nops,
		       struct dbg_loc *out)
{
	memset(out, 0, sizeof(*out));
	out->kind = DBG_LOC_OPTIMIZED;
	if (!ops || nops == 0)
		return;
	struct machine m;   /* its stack is not cleared: 512 bytes per evaluation */
	m.ev = ev;
	m.attr = attr;
	m.sp = 0;
	m.failed = m.faulted = false;
	m.fault = 0;
	run(&m, ops, nops, out);
}

/* ---- entry values ---- */

static bool die_addr_attr(Dwarf_Die *die, unsigned name, Dwarf_Addr *a)
{
	Dwarf_Attribute attr;
	return dwarf_attr(die, name, &attr) && dwarf_formaddr(&attr, a) == 0;
}

static bool is_call_site(int tag)
{
	return tag == DW_TAG_call_site || tag == DW_TAG_GNU_call_site;
}

/* The DW_TAG_call_site whose return address is the caller frame's pc:
 * a child of one of the scopes at the call instruction. */
static bool find_call_site(struct dbg_eval *caller, Dwarf_Die *site)
{
	struct dbg_pc_info *info = caller->info;
	if (info->call_site_done) {
		*site = info->call_site;
		return info->has_call_site;
	}
	info->call_site_done = true;
	Dwarf_Addr fbias = 0;
	dwfl_module_getelf(caller->f->mod, &fbias);
	Dwarf_Addr ret = caller->frames[caller->idx].pc - caller->m->bias + fbias - info->dbias;
	for (int i = 0; i < info->nscopes && !info->has_call_site; i++) {
		Dwarf_Die child;
		if (dwarf_child(&info->scopes[i], &child) != 0)
			continue;
		do {
			Dwarf_Addr a;
			if (is_call_site(dwarf_tag(&child)) &&
			    ((die_addr_attr(&child, DW_AT_call_return_pc, &a) && a == ret) ||
			     (die_addr_attr(&child, DW_AT_low_pc, &a) && a == ret))) {
				info->call_site = child;
				info->has_call_site = true;
				break;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	*site = info->call_site;
	return info->has_call_site;
}

struct first_addr {
	uint64_t addr;
	bool found;
};

static bool take_first(void *ctx, const char *name, uint64_t addr)
{
	(void)name;
	struct first_addr *fa = ctx;
	fa->addr = addr;
	fa->found = true;
	return false;
}

/* NAME@@VERSION: the default version of a symbol, which gdb's minimal
 * symbols also know as plain NAME (glibc's pthread_join@@GLIBC_2.34). */
static bool versioned_symbol(struct dbg_session *s, const char *name, uint64_t *addr)
{
	char prefix[256];
	struct first_addr fa = { 0 };
	if ((size_t)snprintf(prefix, sizeof(prefix), "%s@@", name) >= sizeof(prefix))
		return false;
	dbg_symbols_with_prefix(s, prefix, take_first, &fa);
	*addr = fa.addr;
	return fa.found;
}

/* What a call site says about its target, independent of the frame. */
static void site_target_read(struct dbg_pc_info *info, Dwarf_Die *site, struct dbg_site_target *t)
{
	Dwarf_Attribute attr, flag;
	Dwarf_Die origin;
	bool decl;
	t->kind = DBG_TARGET_NONE;
	if (dwarf_attr(site, DW_AT_call_target, &t->expr) ||
	    dwarf_attr(site, DW_AT_GNU_call_site_target, &t->expr)) {
		t->kind = DBG_TARGET_EXPR;
	} else if (!(dwarf_attr(site, DW_AT_call_origin, &attr) ||
		     dwarf_attr(site, DW_AT_abstract_origin, &attr)) ||
		   !dwarf_formref_die(&attr, &origin)) {
		return;
	} else if (dwarf_attr_integrate(&origin, DW_AT_declaration, &flag) &&
		   dwarf_formflag(&flag, &decl) == 0 && decl) {
		if (dwarf_attr_integrate(&origin, DW_AT_linkage_name, &attr))
			t->name = dwarf_formstring(&attr);
		/* In C++ gdb looks a declaration up by its physname,
		 * "pthread_join(pthread_t, void**)", which no symbol has. */
		if (!t->name && !info->cxx)
			t->name = dwarf_diename(&origin);
		if (t->name)
			t->kind = DBG_TARGET_SYMBOL;
	} else if (dbg_die_entry(&origin, &t->addr)) {
		t->kind = DBG_TARGET_ADDR;
	}
}

/* Where the call at SITE went: DW_AT_call_target evaluated in the caller,
 * else the DW_AT_call_origin function's address (by symbol for a
 * declaration, as gdb looks up a minimal symbol).  The caller's own call
 * site is read once (memoised in its pc info). */
static bool call_site_target(struct dbg_eval *caller, Dwarf_Die *site, uint64_t *target)
{
	struct dbg_site_target local, *t = &local;
	struct dbg_pc_info *info = caller->info;
	bool own = info->has_call_site && dwarf_dieoffset(site) == dwarf_dieoffset(&info->call_site);
	if (own && info->target.kind != DBG_TARGET_UNREAD) {
		t = &info->target;
	} else {
		memset(t, 0, sizeof(*t));
		site_target_read(info, site, t);
		if (own)
			info->target = *t;
	}
	struct dbg_loc loc;
	Dwarf_Op *ops;
	size_t n;
	switch (t->kind) {
	case DBG_TARGET_EXPR:
		if (dwarf_getlocation(&t->expr, &ops, &n) != 0)
			return false;
		dbg_eval_location(caller, &t->expr, ops, n, &loc);
		if (loc.kind == DBG_LOC_MEMORY)
			*target = loc.addr;
		else if (loc.kind == DBG_LOC_VALUE)
			memcpy(target, loc.bytes, 8);
		else
			return false;
		return true;
	case DBG_TARGET_SYMBOL: {
		/* Every frame called from this site asks the same. */
		bool found;
		if (ptrmemo_get(caller->s->call_targets, t->name, target, &found))
			return found;
		found = dbg_find_symbol(caller->s, t->name, target, NULL) ||
			versioned_symbol(caller->s, t->name, target);
		ptrmemo_put(&caller->s->call_targets, t->name, found ? *target : 0, found);
		return found;
	}
	case DBG_TARGET_ADDR:
		*target = dbg_eval_runtime(caller, t->addr);
		return true;
	default:
		return false;
	}
}

/* Where the call CALLER's frame made at its own call site SITE went,
 * memoised in the frame: every callee entry value asks. */
static bool frame_call_target(struct dbg_eval *caller, Dwarf_Die *site, uint64_t *target)
{
	struct dbg_frame_memo *mm = &caller->frames[caller->idx].memo;
	if (mm->target == 0)
		mm->target = call_site_target(caller, site, &mm->call_target) ? 1 : -1;
	*target = mm->call_target;
	return mm->target == 1;
}

/* CHILD of a call site as a parameter passed in a register; false when it
 * is none. */
static bool site_param_read(Dwarf_Die *child, struct dbg_site_param *p)
{
	int tag = dwarf_tag(child);
	Dwarf_Attribute loc;
	Dwarf_Op *ops;
	size_t n;
	if ((tag != DW_TAG_call_site_parameter && tag != DW_TAG_GNU_call_site_parameter) ||
	    !dwarf_attr(child, DW_AT_location, &loc) || dwarf_getlocation(&loc, &ops, &n) != 0 || n != 1)
		return false;
	if (ops[0].atom == DW_OP_regx)
		p->reg = (unsigned)ops[0].number;
	else if (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31)
		p->reg = (unsigned)(ops[0].atom - DW_OP_reg0);
	else
		return false;
	p->has_value = (dwarf_attr(child, DW_AT_call_value, &p->value) ||
			dwarf_attr(child, DW_AT_GNU_call_site_value, &p->value)) &&
		       dwarf_getlocation(&p->value, &p->ops, &p->nops) == 0;
	return true;
}

/* The parameters of INFO's own call site, read once: every frame called
 * from that pc asks for them. */
static bool site_params_cache(struct dbg_pc_info *info)
{
	if (info->site_params_done)
		return true;
	Dwarf_Die child;
	size_t cap = 0;
	if (dwarf_child(&info->call_site, &child) == 0) {
		do {
			struct dbg_site_param p;
			if (!site_param_read(&child, &p))
				continue;
			if (info->nsite_params == cap) {
				size_t ncap = cap ? 2 * cap : 4;
				struct dbg_site_param *v = realloc(info->site_params, ncap * sizeof(*v));
				if (!v)
					return false;
				info->site_params = v;
				cap = ncap;
			}
			info->site_params[info->nsite_params++] = p;
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	info->site_params_done = true;
	return true;
}

/* The first parameter of SITE (a call site in CTX's function) passed in
 * register REG. */
static bool call_site_param(struct dbg_eval *ctx, Dwarf_Die *site, unsigned reg,
			    struct dbg_site_param *out)
{
	struct dbg_pc_info *info = ctx->info;
	if (info->has_call_site && dwarf_dieoffset(site) == dwarf_dieoffset(&info->call_site) &&
	    site_params_cache(info)) {
		for (size_t i = 0; i < info->nsite_params; i++)
			if (info->site_params[i].reg == reg) {
				*out = info->site_params[i];
				return true;
			}
		return false;
	}
	Dwarf_Die child;
	if (dwarf_child(site, &child) != 0)
		return false;
	do {
		if (site_param_read(&child, out) && out->reg == reg)
			return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* The value of SITE's parameter in register REG, evaluated in CTX.
 * DW_AT_call_value is a DWARF expression: its value is the top of the
 * stack (gdb appends DW_OP_stack_value). */
static bool site_param_value(struct dbg_eval *ctx, Dwarf_Die *site, unsigned reg, uint64_t *value)
{
	struct dbg_site_param p;
	if (!call_site_param(ctx, site, reg, &p) || !p.has_value)
		return false;
	struct dbg_loc loc;
	dbg_eval_location(ctx, &p.value, p.ops, p.nops, &loc);
	if (loc.kind == DBG_LOC_MEMORY)
		*value = loc.addr;
	else if (loc.kind == DBG_LOC_VALUE && loc.len >= 8)
		memcpy(value, loc.bytes, 8);
	else
		return false;
	return true;
}

static bool entry_reg_uncached(struct dbg_eval *ev, unsigned reg, uint64_t *value);

/* Memoised in the frame: every inline level and parameter of a frame, and
 * every callee whose entry values lead here, asks the same questions.  A
 * failure is kept only when the nesting bound played no part in it. */
bool dbg_eval_entry_reg(struct dbg_eval *ev, unsigned reg, uint64_t *value)
{
	struct dbg_frame_regs *fr = &ev->frames[ev->idx];
	uint32_t bit = reg < DBG_NREGS ? 1u << reg : 0;
	if (bit && (fr->entry_known & bit)) {
		*value = fr->entry_regs[reg];
		return true;
	}
	if (bit && (fr->entry_failed & bit))
		return false;
	bool ok = entry_reg_uncached(ev, reg, value);
	if (bit && ok) {
		fr->entry_regs[reg] = *value;
		fr->entry_known |= bit;
	} else if (bit && ev->depth == 0) {
		fr->entry_failed |= bit;
	}
	return ok;
}

/* gdb's dwarf_expr_reg_to_entry_parameter: the caller is the next frame
 * out, a tail-call frame where gdb restores one (FRAMES holds them); the
 * call its call site made must have gone to this very function (no chain
 * of tail calls is looked for in between: gdb's frames already show the
 * chain it is sure of), a function that may reach itself by tail calls
 * has no reliable entry value, and the value is that site's parameter for
 * REG, evaluated in the caller. */
static bool entry_reg_uncached(struct dbg_eval *ev, unsigned reg, uint64_t *value)
{
	if (ev->depth >= ENTRY_DEPTH_MAX || !ev->info->has_entry)
		return false;
	uint64_t entry = dbg_eval_runtime(ev, ev->info->entry), target;
	struct dbg_eval caller;
	Dwarf_Die site;
	return dbg_eval_init(&caller, ev->s, ev->frames, ev->nframes, ev->idx + 1, ev->depth + 1) &&
	       caller.info->has_dwarf && find_call_site(&caller, &site) &&
	       frame_call_target(&caller, &site, &target) && target == entry &&
	       !dbg_tail_calls_itself(ev->s, entry) && site_param_value(&caller, &site, reg, value);
}
