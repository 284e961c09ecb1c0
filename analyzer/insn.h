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
#define AN_INSN_PC (-2)         /* the pc as an address base (x86_64's rip) */

enum an_op_type { AN_OP_OTHER, AN_OP_REG, AN_OP_IMM, AN_OP_MEM };

struct an_insn_op {
	enum an_op_type type;
	int reg;                    /* AN_OP_REG: DWARF number (x86_64: 0 rax .. 15 r15;
				       aarch64: 0 x0 .. 30 x30, 31 sp), AN_INSN_PC,
				       AN_INSN_NONE for any other register */
	int low_of;                 /* AN_OP_REG: the DWARF number of the register
				       whose low SIZE bytes it is (eax: rax), or
				       AN_INSN_NONE */
	unsigned size;              /* bytes the operand reads or writes */
	int64_t imm;                /* AN_OP_IMM */
	/* AN_OP_MEM: segment:[base + index * scale + disp] */
	int base, index;            /* DWARF numbers or AN_INSN_PC, AN_INSN_NONE when
				       absent or other */
	bool other_base;            /* a base register outside the table above */
	bool other_index;           /* an index outside it, or only part of one
				       (aarch64's uxtw/sxtw of a w register) */
	bool segment;               /* an fs:/gs: override */
	int scale;
	int64_t disp;
	bool read, write;
};

struct an_insn {
	const struct core_arch *arch;   /* the machine's registers (REGS order) */
	uint64_t address;
	size_t size;
	char mnemonic[32];
	char text[224];             /* "mov rax, qword ptr [rdi + 0x40]" */
	struct an_insn_op ops[4];
	size_t nops;
};

struct dbg_session;

/* Decode up to MAX instructions at ADDR from the target's memory (the core,
 * or for text it did not save the file of the module loaded there when S,
 * the session, is not NULL, else the mapped file), reading at most SPAN bytes;
 * stops at the first byte sequence that is no instruction.  Returns how
 * many were decoded into OUT (none for a core of a machine other than
 * x86_64 and aarch64). */
size_t an_insn_decode(struct core *core, struct dbg_session *s, uint64_t addr, size_t span,
		      struct an_insn *out, size_t max);

/* The memory operand of INSN, the one at FAULT when the registers REGS
 * (NT_PRSTATUS order) say which; NULL when it has none. */
const struct an_insn_op *an_insn_mem_operand(const struct an_insn *insn, const uint64_t *regs,
					     uint64_t fault, bool *at_fault);

/* The address INSN's first memory operand names in REGS: where it
 * accessed memory.  False when it has none or REGS cannot say. */
bool an_insn_access_address(const struct an_insn *insn, const uint64_t *regs, uint64_t *addr);

/* Whether INSN is an integer division whose divisor is zero with the
 * registers REGS (NT_PRSTATUS order) and the memory of CORE. */
bool an_insn_divides_by_zero(const struct an_insn *insn, struct core *core, const uint64_t *regs);

/* The value of the base register of OP (a memory operand of INSN) in REGS:
 * the pointer the access went through.  False when OP has no general
 * register as its base (rip-relative, absolute, a segment override). */
bool an_insn_base_value(const struct an_insn *insn, const struct an_insn_op *op,
			const uint64_t *regs, uint64_t *value);

/* A plain load of a whole register: REG = [BASE + DISP] at ADDRESS. */
struct an_load {
	uint64_t address;
	int base;                   /* DWARF number */
	int64_t disp;
	bool base_kept;             /* BASE (not REG) still holds its value at the pc */
};

/* The load that last wrote DWARF register REG before PC in the function
 * part [START, END) holding PC, decoded whole from START: found only when
 * it is a plain load, no direct branch of the part lands in (load, PC] and
 * the part has no indirect jump (every path to PC goes through the load). */
bool an_insn_last_load(struct core *core, struct dbg_session *s, uint64_t start, uint64_t end,
		       uint64_t pc, int reg, struct an_load *load);

#endif
