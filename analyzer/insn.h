/* Machine instructions of the target, decoded with Capstone: what a
 * faulting instruction accessed, and the few instruction patterns the
 * analysis reads (a TLS access in libstdc++'s __cxa_get_globals). */
#ifndef ANALYZER_INSN_H
#define ANALYZER_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../corefile/core.h"

#define AN_INSN_NONE (-1)       /* no register */

enum an_op_type { AN_OP_OTHER, AN_OP_REG, AN_OP_IMM, AN_OP_MEM };

struct an_insn_op {
	enum an_op_type type;
	int reg;                    /* AN_OP_REG: DWARF number (x86_64: 0 rax .. 15 r15, 16 rip),
				       AN_INSN_NONE for any other register */
	int64_t imm;                /* AN_OP_IMM */
	/* AN_OP_MEM: segment:[base + index * scale + disp] */
	int base, index;            /* DWARF numbers, AN_INSN_NONE when absent or other */
	bool other_base;            /* a base register outside the table above */
	bool segment;               /* an fs:/gs: override */
	int scale;
	int64_t disp;
	bool read, write;
};

struct an_insn {
	uint64_t address;
	size_t size;
	char mnemonic[32];
	char text[224];             /* "mov rax, qword ptr [rdi + 0x40]" */
	struct an_insn_op ops[4];
	size_t nops;
};

/* Decode up to MAX instructions at ADDR from the target's memory (the core,
 * or the mapped file for text it did not save), reading at most SPAN bytes;
 * stops at the first byte sequence that is no instruction.  Returns how
 * many were decoded into OUT (none for a core of another machine than
 * x86_64). */
size_t an_insn_decode(struct core *core, uint64_t addr, size_t span, struct an_insn *out,
		      size_t max);

/* The memory operand of INSN, the one at FAULT when the registers REGS
 * (NT_PRSTATUS order) say which; NULL when it has none. */
const struct an_insn_op *an_insn_mem_operand(const struct an_insn *insn, const uint64_t *regs,
					     uint64_t fault, bool *at_fault);

/* The value of the base register of OP (a memory operand of INSN) in REGS:
 * the pointer the access went through.  False when OP has no general
 * register as its base (rip-relative, absolute, a segment override). */
bool an_insn_base_value(const struct an_insn_op *op, const uint64_t *regs, uint64_t *value);

#endif
