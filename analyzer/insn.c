/* Capstone's x86_64 decoder over the target's memory.  Registers are
 * turned into DWARF numbers here, the numbering the rest of the analysis
 * (CFI, variable locations) speaks. */
#include "insn.h"

#include <capstone/capstone.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>

enum { INSN_MAX_BYTES = 15 };

/* Capstone's 64-bit x86 registers by DWARF number (x86_64 psABI). */
static const x86_reg dwarf_regs[] = {
	X86_REG_RAX, X86_REG_RDX, X86_REG_RCX, X86_REG_RBX, X86_REG_RSI, X86_REG_RDI,
	X86_REG_RBP, X86_REG_RSP, X86_REG_R8, X86_REG_R9, X86_REG_R10, X86_REG_R11,
	X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15, X86_REG_RIP,
};

/* The NT_PRSTATUS slot of each DWARF register above. */
static const enum core_reg prstatus_regs[] = {
	CORE_REG_RAX, CORE_REG_RDX, CORE_REG_RCX, CORE_REG_RBX, CORE_REG_RSI, CORE_REG_RDI,
	CORE_REG_RBP, CORE_REG_RSP, CORE_REG_R8, CORE_REG_R9, CORE_REG_R10, CORE_REG_R11,
	CORE_REG_R12, CORE_REG_R13, CORE_REG_R14, CORE_REG_R15, CORE_REG_RIP,
};

#define NDWARF (int)(sizeof(dwarf_regs) / sizeof(dwarf_regs[0]))

static int dwarf_number(unsigned reg)
{
	for (int i = 0; i < NDWARF; i++)
		if ((unsigned)dwarf_regs[i] == reg)
			return i;
	return AN_INSN_NONE;
}

static void take_operand(const cs_x86_op *o, struct an_insn_op *op)
{
	memset(op, 0, sizeof(*op));
	op->reg = op->base = op->index = AN_INSN_NONE;
	switch (o->type) {
	case X86_OP_REG:
		op->type = AN_OP_REG;
		op->reg = dwarf_number(o->reg);
		break;
	case X86_OP_IMM:
		op->type = AN_OP_IMM;
		op->imm = o->imm;
		break;
	case X86_OP_MEM:
		op->type = AN_OP_MEM;
		op->base = dwarf_number(o->mem.base);
		op->other_base = o->mem.base != X86_REG_INVALID && op->base == AN_INSN_NONE;
		op->index = dwarf_number(o->mem.index);
		op->scale = o->mem.scale;
		op->disp = o->mem.disp;
		op->segment = o->mem.segment != X86_REG_INVALID;
		op->read = (o->access & CS_AC_READ) != 0;
		op->write = (o->access & CS_AC_WRITE) != 0;
		break;
	default:
		op->type = AN_OP_OTHER;
		break;
	}
}

static void take_insn(const cs_insn *ci, struct an_insn *out)
{
	memset(out, 0, sizeof(*out));
	out->address = ci->address;
	out->size = ci->size;
	snprintf(out->mnemonic, sizeof(out->mnemonic), "%s", ci->mnemonic);
	snprintf(out->text, sizeof(out->text), "%s%s%s", ci->mnemonic, ci->op_str[0] ? " " : "",
		 ci->op_str);
	const cs_x86 *x = &ci->detail->x86;
	for (uint8_t i = 0; i < x->op_count && out->nops < sizeof(out->ops) / sizeof(out->ops[0]); i++)
		take_operand(&x->operands[i], &out->ops[out->nops++]);
}

/* The readable bytes at ADDR, at most LEN: the last instruction before an
 * unmapped page must still decode. */
static size_t read_code(struct core *core, uint64_t addr, uint8_t *buf, size_t len)
{
	if (core_read_bytes(core, addr, buf, len))
		return len;
	size_t got = 0;
	while (got < len && core_read_bytes(core, addr + got, buf + got, 1))
		got++;
	return got;
}

/* The decoder and the register tables are x86_64's: another machine's
 * code is not decoded at all. */
static bool is_x86_64(struct core *core)
{
	GElf_Ehdr eh;
	return core->elf && gelf_getehdr(core->elf, &eh) && eh.e_machine == EM_X86_64;
}

size_t an_insn_decode(struct core *core, uint64_t addr, size_t span, struct an_insn *out,
		      size_t max)
{
	uint8_t buf[256];
	if (!is_x86_64(core))
		return 0;
	if (span > sizeof(buf))
		span = sizeof(buf);
	if (span < INSN_MAX_BYTES)
		span = INSN_MAX_BYTES;
	size_t len = read_code(core, addr, buf, span);
	csh h;
	if (len == 0 || cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return 0;
	size_t n = 0;
	if (cs_option(h, CS_OPT_DETAIL, CS_OPT_ON) == CS_ERR_OK) {
		cs_insn *ci = NULL;
		size_t got = cs_disasm(h, buf, len, addr, max, &ci);
		for (; n < got; n++)
			take_insn(&ci[n], &out[n]);
		cs_free(ci, got);
	}
	cs_close(&h);
	return n;
}

static bool operand_address(const struct an_insn *insn, const struct an_insn_op *op,
			    const uint64_t *regs, uint64_t *addr)
{
	if (op->segment || op->other_base)
		return false;
	uint64_t a = (uint64_t)op->disp;
	if (op->base == 16)
		a += insn->address + insn->size;
	else if (op->base != AN_INSN_NONE)
		a += regs[prstatus_regs[op->base]];
	if (op->index == 16)
		return false;
	if (op->index != AN_INSN_NONE)
		a += regs[prstatus_regs[op->index]] * (uint64_t)op->scale;
	*addr = a;
	return true;
}

const struct an_insn_op *an_insn_mem_operand(const struct an_insn *insn, const uint64_t *regs,
					     uint64_t fault, bool *at_fault)
{
	const struct an_insn_op *first = NULL;
	*at_fault = false;
	for (size_t i = 0; i < insn->nops; i++) {
		const struct an_insn_op *op = &insn->ops[i];
		if (op->type != AN_OP_MEM)
			continue;
		uint64_t a;
		if (regs && operand_address(insn, op, regs, &a) && a == fault) {
			*at_fault = true;
			return op;
		}
		if (!first)
			first = op;
	}
	return first;
}

bool an_insn_base_value(const struct an_insn_op *op, const uint64_t *regs, uint64_t *value)
{
	if (op->type != AN_OP_MEM || op->segment || op->other_base || op->base == AN_INSN_NONE ||
	    op->base == 16)
		return false;
	*value = regs[prstatus_regs[op->base]];
	return true;
}
