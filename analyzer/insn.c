/* Capstone's x86_64 and aarch64 decoders over the target's memory, one
 * table per machine.  Registers are turned into DWARF numbers here, the
 * numbering the rest of the analysis (CFI, variable locations) speaks. */
#include "insn.h"

#include "../dwarf/dwarf.h"

#include <capstone/capstone.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Capstone's 64-bit x86 registers by DWARF number (x86_64 psABI), the
 * pc (rip, DWARF 16) apart. */
static const unsigned x86_64_regs[] = {
	X86_REG_RAX, X86_REG_RDX, X86_REG_RCX, X86_REG_RBX, X86_REG_RSI, X86_REG_RDI,
	X86_REG_RBP, X86_REG_RSP, X86_REG_R8, X86_REG_R9, X86_REG_R10, X86_REG_R11,
	X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15,
};

/* Capstone's aarch64 registers by DWARF number: x0..x30, sp (AAPCS64). */
static const unsigned aarch64_regs[] = {
	ARM64_REG_X0, ARM64_REG_X1, ARM64_REG_X2, ARM64_REG_X3, ARM64_REG_X4, ARM64_REG_X5,
	ARM64_REG_X6, ARM64_REG_X7, ARM64_REG_X8, ARM64_REG_X9, ARM64_REG_X10, ARM64_REG_X11,
	ARM64_REG_X12, ARM64_REG_X13, ARM64_REG_X14, ARM64_REG_X15, ARM64_REG_X16,
	ARM64_REG_X17, ARM64_REG_X18, ARM64_REG_X19, ARM64_REG_X20, ARM64_REG_X21,
	ARM64_REG_X22, ARM64_REG_X23, ARM64_REG_X24, ARM64_REG_X25, ARM64_REG_X26,
	ARM64_REG_X27, ARM64_REG_X28, ARM64_REG_X29, ARM64_REG_X30, ARM64_REG_SP,
};

struct insn_arch;
typedef void take_operands_fn(const struct insn_arch *ia, const cs_insn *ci, struct an_insn *out);
static take_operands_fn take_x86_64_operands, take_aarch64_operands;

/* What decoding one machine's code takes. */
struct insn_arch {
	uint16_t machine;           /* the core's e_machine */
	cs_arch cs_arch;
	cs_mode cs_mode;
	size_t max_bytes;           /* the longest instruction */
	const unsigned *regs;       /* Capstone's register by DWARF number */
	int nregs;
	unsigned pc;                /* Capstone's pc as an address base, 0: none */
	take_operands_fn *take_operands;
};

static const struct insn_arch insn_archs[] = {
	{ EM_X86_64, CS_ARCH_X86, CS_MODE_64, 15, x86_64_regs,
	  (int)(sizeof(x86_64_regs) / sizeof(x86_64_regs[0])), X86_REG_RIP, take_x86_64_operands },
	{ EM_AARCH64, CS_ARCH_ARM64, CS_MODE_ARM, 4, aarch64_regs,
	  (int)(sizeof(aarch64_regs) / sizeof(aarch64_regs[0])), 0, take_aarch64_operands },
};

static const struct insn_arch *insn_arch_of(const struct core *core)
{
	if (!core->arch)
		return NULL;
	for (size_t i = 0; i < sizeof(insn_archs) / sizeof(insn_archs[0]); i++)
		if (insn_archs[i].machine == core->arch->machine)
			return &insn_archs[i];
	return NULL;
}

static int dwarf_number(const struct insn_arch *ia, unsigned reg)
{
	if (ia->pc && reg == ia->pc)
		return AN_INSN_PC;
	for (int i = 0; i < ia->nregs; i++)
		if (ia->regs[i] == reg)
			return i;
	return AN_INSN_NONE;
}

static struct an_insn_op *new_operand(struct an_insn *out)
{
	if (out->nops >= sizeof(out->ops) / sizeof(out->ops[0]))
		return NULL;
	struct an_insn_op *op = &out->ops[out->nops++];
	memset(op, 0, sizeof(*op));
	op->reg = op->base = op->index = op->low_of = AN_INSN_NONE;
	return op;
}

static int low_part_of(unsigned reg);

static void take_x86_64_operand(const struct insn_arch *ia, const cs_x86_op *o,
				struct an_insn_op *op)
{
	op->size = o->size;
	switch (o->type) {
	case X86_OP_REG:
		op->type = AN_OP_REG;
		op->reg = dwarf_number(ia, o->reg);
		op->low_of = low_part_of(o->reg);
		break;
	case X86_OP_IMM:
		op->type = AN_OP_IMM;
		op->imm = o->imm;
		break;
	case X86_OP_MEM:
		op->type = AN_OP_MEM;
		op->base = dwarf_number(ia, o->mem.base);
		op->other_base = o->mem.base != X86_REG_INVALID && op->base == AN_INSN_NONE;
		op->index = dwarf_number(ia, o->mem.index);
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

static void take_x86_64_operands(const struct insn_arch *ia, const cs_insn *ci,
				 struct an_insn *out)
{
	const cs_x86 *x = &ci->detail->x86;
	struct an_insn_op *op;
	for (uint8_t i = 0; i < x->op_count && (op = new_operand(out)); i++)
		take_x86_64_operand(ia, &x->operands[i], op);
}

/* Whether an aarch64 instruction reads or writes the memory it names, by
 * its class: Capstone 4 marks a store's address operand read and written.
 * The LSE atomics (ldadd.., swp, cas) do both. */
static void aarch64_access(const char *mnemonic, uint8_t access, struct an_insn_op *op)
{
	static const char *const atomics[] = { "add", "clr", "eor", "set", "smax", "smin",
					       "umax", "umin" };
	if (strncmp(mnemonic, "ld", 2) == 0) {
		op->read = true;
		for (size_t i = 0; i < sizeof(atomics) / sizeof(atomics[0]); i++)
			if (strncmp(mnemonic + 2, atomics[i], strlen(atomics[i])) == 0)
				op->write = true;
	} else if (strncmp(mnemonic, "st", 2) == 0) {
		op->write = true;
	} else if (strncmp(mnemonic, "swp", 3) == 0 || strncmp(mnemonic, "cas", 3) == 0) {
		op->read = op->write = true;
	} else if (strncmp(mnemonic, "prfm", 4) != 0) {
		op->read = (access & CS_AC_READ) != 0;
		op->write = (access & CS_AC_WRITE) != 0;
	}
}

/* [base, index{, extend/lsl #n}, #disp]: an index register extended from
 * 32 bits (uxtw, sxtw) is no DWARF register's whole value. */
static void take_aarch64_mem(const struct insn_arch *ia, const cs_insn *ci, const cs_arm64_op *o,
			     struct an_insn_op *op)
{
	op->type = AN_OP_MEM;
	op->base = dwarf_number(ia, o->mem.base);
	op->other_base = o->mem.base != ARM64_REG_INVALID && op->base == AN_INSN_NONE;
	op->disp = o->mem.disp;
	op->scale = 1;
	if (o->mem.index != ARM64_REG_INVALID) {
		op->index = dwarf_number(ia, o->mem.index);
		bool whole = o->ext == ARM64_EXT_INVALID || o->ext == ARM64_EXT_UXTX ||
			     o->ext == ARM64_EXT_SXTX;
		op->other_index = op->index == AN_INSN_NONE || !whole;
		if (o->shift.type == ARM64_SFT_LSL && o->shift.value < 8)
			op->scale = 1 << o->shift.value;
	}
	aarch64_access(ci->mnemonic, o->access, op);
}

static void take_aarch64_operands(const struct insn_arch *ia, const cs_insn *ci,
				  struct an_insn *out)
{
	const cs_arm64 *a = &ci->detail->arm64;
	struct an_insn_op *op;
	for (uint8_t i = 0; i < a->op_count && (op = new_operand(out)); i++) {
		const cs_arm64_op *o = &a->operands[i];
		if (o->type == ARM64_OP_REG) {
			op->type = AN_OP_REG;
			op->reg = dwarf_number(ia, o->reg);
		} else if (o->type == ARM64_OP_IMM) {
			op->type = AN_OP_IMM;
			op->imm = o->imm;
		} else if (o->type == ARM64_OP_MEM) {
			take_aarch64_mem(ia, ci, o, op);
		} else {
			op->type = AN_OP_OTHER;
		}
	}
}

static void take_insn(const struct insn_arch *ia, const struct core_arch *arch, const cs_insn *ci,
		      struct an_insn *out)
{
	memset(out, 0, sizeof(*out));
	out->arch = arch;
	out->address = ci->address;
	out->size = ci->size;
	snprintf(out->mnemonic, sizeof(out->mnemonic), "%s", ci->mnemonic);
	snprintf(out->text, sizeof(out->text), "%s%s%s", ci->mnemonic, ci->op_str[0] ? " " : "",
		 ci->op_str);
	ia->take_operands(ia, ci, out);
}

/* The readable bytes at ADDR, at most LEN: the last instruction before an
 * unmapped page must still decode. */
static size_t read_code(struct core *core, struct dbg_session *s, uint64_t addr, uint8_t *buf,
			size_t len)
{
	if (s && dbg_read_module_bytes(s, addr, buf, len))
		return len;
	if (core_read_bytes(core, addr, buf, len))
		return len;
	size_t got = 0;
	while (got < len && core_read_bytes(core, addr + got, buf + got, 1))
		got++;
	return got;
}

/* Capstone is opened with dlopen() when an instruction is decoded: linked
 * in, its relocated tables cost every run 3 MB of memory at start-up, for
 * the one instruction a crash's cause reads. */
static struct {
	cs_err (*open)(cs_arch arch, cs_mode mode, csh *handle);
	cs_err (*option)(csh handle, cs_opt_type type, size_t value);
	size_t (*disasm)(csh handle, const uint8_t *code, size_t size, uint64_t address, size_t count,
			 cs_insn **insn);
	void (*free)(cs_insn *insn, size_t count);
	cs_err (*close)(csh *handle);
	cs_err (*regs_access)(csh handle, const cs_insn *insn, cs_regs read, uint8_t *nread,
			      cs_regs write, uint8_t *nwrite);
} cs;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;

/* dl_iterate_phdr's callback: the pages of the read-only segment at the
 * start of the object loaded at *BASE (its headers, symbols and relocation
 * records) leave this process's memory. */
static int drop_first_segment(struct dl_phdr_info *info, size_t size, void *base)
{
	(void)size;
	if (info->dlpi_addr != *(ElfW(Addr) *)base)
		return 0;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || ph->p_offset != 0 || (ph->p_flags & (PF_W | PF_X)) ||
		    ph->p_vaddr % page)
			continue;
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		madvise((void *)start, (ph->p_filesz + page - 1) / page * page, MADV_DONTNEED);
	}
	return 1;
}

/* The loader read capstone's 77,000 relocation records (1.8 MB, in its
 * first segment) to load it, and nothing reads them again: their pages
 * leave this process's memory.  The segment is a read-only mapping of the
 * file, which a later read maps again as it was. */
static void drop_relocation_pages(void *lib)
{
	struct link_map *lm;
	if (dlinfo(lib, RTLD_DI_LINKMAP, &lm) == 0 && lm)
		dl_iterate_phdr(drop_first_segment, &lm->l_addr);
}

static void cs_setup(void)
{
	void *lib = dlopen("libcapstone.so.4", RTLD_NOW);
	if (!lib)
		return;
	drop_relocation_pages(lib);
	*(void **)&cs.option = dlsym(lib, "cs_option");
	*(void **)&cs.disasm = dlsym(lib, "cs_disasm");
	*(void **)&cs.free = dlsym(lib, "cs_free");
	*(void **)&cs.close = dlsym(lib, "cs_close");
	*(void **)&cs.regs_access = dlsym(lib, "cs_regs_access");
	if (cs.option && cs.disasm && cs.free && cs.close && cs.regs_access)
		*(void **)&cs.open = dlsym(lib, "cs_open");   /* last: the library is usable */
}

size_t an_insn_decode(struct core *core, struct dbg_session *s, uint64_t addr, size_t span,
		      struct an_insn *out, size_t max)
{
	uint8_t buf[256];
	const struct insn_arch *ia = insn_arch_of(core);
	if (!ia)
		return 0;
	if (span > sizeof(buf))
		span = sizeof(buf);
	if (span < ia->max_bytes)
		span = ia->max_bytes;
	size_t len = read_code(core, s, addr, buf, span);
	csh h;
	pthread_once(&cs_once, cs_setup);
	if (len == 0 || !cs.open || cs.open(ia->cs_arch, ia->cs_mode, &h) != CS_ERR_OK)
		return 0;
	size_t n = 0;
	if (cs.option(h, CS_OPT_DETAIL, CS_OPT_ON) == CS_ERR_OK) {
		cs_insn *ci = NULL;
		size_t got = cs.disasm(h, buf, len, addr, max, &ci);
		for (; n < got; n++)
			take_insn(ia, core->arch, &ci[n], &out[n]);
		cs.free(ci, got);
	}
	cs.close(&h);
	return n;
}

/* The value of DWARF register N in REGS (the thread registers of ARCH). */
static bool dwarf_value(const struct core_arch *arch, int n, const uint64_t *regs, uint64_t *value)
{
	if (!arch || n < 0 || (unsigned)n >= arch->ndwarf_regs)
		return false;
	*value = regs[arch->dwarf_regs[n]];
	return true;
}

static bool operand_address(const struct an_insn *insn, const struct an_insn_op *op,
			    const uint64_t *regs, uint64_t *addr)
{
	if (op->segment || op->other_base || op->other_index || op->index == AN_INSN_PC)
		return false;
	uint64_t a = (uint64_t)op->disp, v;
	if (op->base == AN_INSN_PC)
		a += insn->address + insn->size;
	else if (op->base != AN_INSN_NONE) {
		if (!dwarf_value(insn->arch, op->base, regs, &v))
			return false;
		a += v;
	}
	if (op->index != AN_INSN_NONE) {
		if (!dwarf_value(insn->arch, op->index, regs, &v))
			return false;
		a += v * (uint64_t)op->scale;
	}
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

bool an_insn_access_address(const struct an_insn *insn, const uint64_t *regs, uint64_t *addr)
{
	for (size_t i = 0; i < insn->nops; i++)
		if (insn->ops[i].type == AN_OP_MEM)
			return operand_address(insn, &insn->ops[i], regs, addr);
	return false;
}

bool an_insn_base_value(const struct an_insn *insn, const struct an_insn_op *op,
			const uint64_t *regs, uint64_t *value)
{
	if (op->type != AN_OP_MEM || op->segment || op->other_base)
		return false;
	return dwarf_value(insn->arch, op->base, regs, value);
}

/* x86_64's general registers by DWARF number with every part of each an
 * instruction can write (writing eax zeroes the rest of rax). */
static const unsigned x86_64_parts[16][4] = {
	{ X86_REG_AL, X86_REG_AH, X86_REG_AX, X86_REG_EAX },
	{ X86_REG_DL, X86_REG_DH, X86_REG_DX, X86_REG_EDX },
	{ X86_REG_CL, X86_REG_CH, X86_REG_CX, X86_REG_ECX },
	{ X86_REG_BL, X86_REG_BH, X86_REG_BX, X86_REG_EBX },
	{ X86_REG_SIL, X86_REG_SI, X86_REG_ESI, X86_REG_RSI },
	{ X86_REG_DIL, X86_REG_DI, X86_REG_EDI, X86_REG_RDI },
	{ X86_REG_BPL, X86_REG_BP, X86_REG_EBP, X86_REG_RBP },
	{ X86_REG_SPL, X86_REG_SP, X86_REG_ESP, X86_REG_RSP },
	{ X86_REG_R8B, X86_REG_R8W, X86_REG_R8D, X86_REG_R8 },
	{ X86_REG_R9B, X86_REG_R9W, X86_REG_R9D, X86_REG_R9 },
	{ X86_REG_R10B, X86_REG_R10W, X86_REG_R10D, X86_REG_R10 },
	{ X86_REG_R11B, X86_REG_R11W, X86_REG_R11D, X86_REG_R11 },
	{ X86_REG_R12B, X86_REG_R12W, X86_REG_R12D, X86_REG_R12 },
	{ X86_REG_R13B, X86_REG_R13W, X86_REG_R13D, X86_REG_R13 },
	{ X86_REG_R14B, X86_REG_R14W, X86_REG_R14D, X86_REG_R14 },
	{ X86_REG_R15B, X86_REG_R15W, X86_REG_R15D, X86_REG_R15 },
};

/* The DWARF number of the x86_64 register whose low bytes Capstone's REG
 * is (al, ax, eax, rax of rax; not ah), or AN_INSN_NONE. */
static int low_part_of(unsigned reg)
{
	for (int n = 0; n < 16; n++)
		for (int i = 0; i < 4; i++)
			if (x86_64_parts[n][i] == reg && !(n < 4 && i == 1))
				return n;
	return AN_INSN_NONE;
}

bool an_insn_divides_by_zero(const struct an_insn *insn, struct core *core, const uint64_t *regs)
{
	if ((strcmp(insn->mnemonic, "div") != 0 && strcmp(insn->mnemonic, "idiv") != 0) ||
	    insn->nops != 1)
		return false;
	const struct an_insn_op *op = &insn->ops[0];
	unsigned size = op->size && op->size < 8 ? op->size : 8;
	uint64_t mask = size == 8 ? UINT64_MAX : (1ull << (8 * size)) - 1, v = 0, addr;
	int reg = op->low_of != AN_INSN_NONE ? op->low_of : op->reg;
	if (op->type == AN_OP_REG && reg >= 0)
		return dwarf_value(insn->arch, reg, regs, &v) && (v & mask) == 0;
	if (op->type == AN_OP_MEM && an_insn_access_address(insn, regs, &addr) &&
	    core_read_bytes(core, addr, &v, size))
		return (v & mask) == 0;
	return false;
}

/* Whether Capstone's register R is DWARF register N or a part of it
 * (aarch64: wN of xN, wsp of sp). */
static bool register_part(const struct insn_arch *ia, unsigned r, int n)
{
	if (r == ia->regs[n])
		return true;
	if (ia->machine == EM_AARCH64)
		return n < 31 ? r == ARM64_REG_W0 + (unsigned)n : r == ARM64_REG_WSP;
	for (int i = 0; i < 4; i++)
		if (x86_64_parts[n][i] == r)
			return true;
	return false;
}

static bool in_group(const cs_insn *ci, uint8_t group)
{
	for (uint8_t i = 0; i < ci->detail->groups_count; i++)
		if (ci->detail->groups[i] == group)
			return true;
	return false;
}

/* A call or a system call: it may change any register. */
static bool calls_out(const struct insn_arch *ia, const cs_insn *ci)
{
	if (in_group(ci, CS_GRP_CALL) || in_group(ci, CS_GRP_INT))
		return true;
	return ia->machine == EM_AARCH64 &&
	       (strcmp(ci->mnemonic, "bl") == 0 || strncmp(ci->mnemonic, "blr", 3) == 0 ||
		strcmp(ci->mnemonic, "svc") == 0);
}

/* An aarch64 load or store with writeback ([xN, #8]!, [xN], #8) changes
 * its base register; Capstone does not list it among those written. */
static bool writes_back(const struct insn_arch *ia, const cs_insn *ci, int n)
{
	if (ia->machine != EM_AARCH64 || !ci->detail->arm64.writeback)
		return false;
	const cs_arm64 *a = &ci->detail->arm64;
	for (uint8_t i = 0; i < a->op_count; i++)
		if (a->operands[i].type == ARM64_OP_MEM && register_part(ia, a->operands[i].mem.base, n))
			return true;
	return false;
}

/* Whether CI may change DWARF register N. */
static bool writes_register(const struct insn_arch *ia, csh h, const cs_insn *ci, int n)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	if (calls_out(ia, ci) || cs.regs_access(h, ci, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return true;
	for (uint8_t i = 0; i < nwr; i++)
		if (register_part(ia, wr[i], n))
			return true;
	return writes_back(ia, ci, n);
}

/* The code of one function part, decoded whole. */
struct part_code {
	csh h;
	cs_insn *ci;
	size_t n;
	size_t at_pc;               /* the index of the instruction at the pc */
};

static bool decode_part(struct core *core, struct dbg_session *s, uint64_t start, uint64_t end,
			uint64_t pc, struct part_code *pc_out)
{
	enum { MAX_PART = 1 << 16 };
	size_t len = end > start && end - start <= MAX_PART ? (size_t)(end - start) : 0;
	uint8_t *buf = len ? malloc(len) : NULL;
	bool ok = false;
	pc_out->n = 0;
	pc_out->ci = NULL;
	if (buf && read_code(core, s, start, buf, len) == len) {
		pc_out->n = cs.disasm(pc_out->h, buf, len, start, 0, &pc_out->ci);
		const cs_insn *last = pc_out->n ? &pc_out->ci[pc_out->n - 1] : NULL;
		ok = last && last->address + last->size == end;
	}
	free(buf);
	for (size_t i = 0; ok && i < pc_out->n; i++)
		if (pc_out->ci[i].address == pc) {
			pc_out->at_pc = i;
			return true;
		}
	return false;
}

/* Where the jump CI goes: false for an indirect one. */
static bool jump_target(const struct insn_arch *ia, const cs_insn *ci, uint64_t *target)
{
	if (ia->machine == EM_AARCH64) {
		const cs_arm64 *a = &ci->detail->arm64;
		if (a->op_count == 0 || a->operands[a->op_count - 1].type != ARM64_OP_IMM)
			return false;
		*target = (uint64_t)a->operands[a->op_count - 1].imm;
		return true;
	}
	const cs_x86 *x = &ci->detail->x86;
	if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return false;
	*target = (uint64_t)x->operands[0].imm;
	return true;
}

/* Whether a direct jump of the code lands in (FROM, TO], or the code has
 * an indirect one (its target unknown). */
static bool branch_into(const struct insn_arch *ia, const struct part_code *code, uint64_t from,
			uint64_t to)
{
	for (size_t i = 0; i < code->n; i++) {
		const cs_insn *ci = &code->ci[i];
		uint64_t target;
		if (!in_group(ci, CS_GRP_JUMP) || in_group(ci, CS_GRP_RET) || calls_out(ia, ci))
			continue;
		if (!jump_target(ia, ci, &target) || (target > from && target <= to))
			return true;
	}
	return false;
}

/* aarch64's `ldr xREG, [xBASE, #DISP]`. */
static bool aarch64_load(const struct insn_arch *ia, const cs_insn *ci, int reg,
			 struct an_load *load)
{
	const cs_arm64 *a = &ci->detail->arm64;
	if (strcmp(ci->mnemonic, "ldr") != 0 || a->op_count != 2 || a->writeback)
		return false;
	const cs_arm64_op *d = &a->operands[0], *m = &a->operands[1];
	if (d->type != ARM64_OP_REG || dwarf_number(ia, d->reg) != reg || m->type != ARM64_OP_MEM ||
	    m->mem.index != ARM64_REG_INVALID)
		return false;
	load->base = dwarf_number(ia, m->mem.base);
	load->disp = m->mem.disp;
	load->address = ci->address;
	return load->base >= 0;
}

/* `mov REG, qword ptr [BASE + DISP]`, aarch64's `ldr xREG, [xBASE, #DISP]`. */
static bool plain_load(const struct insn_arch *ia, const cs_insn *ci, int reg,
		       struct an_load *load)
{
	if (ia->machine == EM_AARCH64)
		return aarch64_load(ia, ci, reg, load);
	const cs_x86 *x = &ci->detail->x86;
	if (strcmp(ci->mnemonic, "mov") != 0 || x->op_count != 2)
		return false;
	const cs_x86_op *d = &x->operands[0], *m = &x->operands[1];
	if (d->type != X86_OP_REG || dwarf_number(ia, d->reg) != reg || m->type != X86_OP_MEM ||
	    m->size != 8 || m->mem.segment != X86_REG_INVALID || m->mem.index != X86_REG_INVALID)
		return false;
	load->base = dwarf_number(ia, m->mem.base);
	load->disp = m->mem.disp;
	load->address = ci->address;
	return load->base >= 0;
}

/* The load that last wrote REG before the pc, when every path to the pc
 * goes through it. */
static bool find_load(const struct insn_arch *ia, const struct part_code *code, int reg,
		      struct an_load *load)
{
	size_t i = code->at_pc;
	while (i > 0 && !writes_register(ia, code->h, &code->ci[i - 1], reg))
		i--;
	if (i == 0 || !plain_load(ia, &code->ci[i - 1], reg, load))
		return false;
	load->base_kept = load->base != reg;
	for (size_t j = i; j < code->at_pc && load->base_kept; j++)
		load->base_kept = !writes_register(ia, code->h, &code->ci[j], load->base);
	return !branch_into(ia, code, load->address, code->ci[code->at_pc].address);
}

bool an_insn_last_load(struct core *core, struct dbg_session *s, uint64_t start, uint64_t end,
		       uint64_t pc, int reg, struct an_load *load)
{
	const struct insn_arch *ia = insn_arch_of(core);
	struct part_code code;
	if (!ia || reg < 0 || reg >= ia->nregs)
		return false;
	pthread_once(&cs_once, cs_setup);
	if (!cs.open || cs.open(ia->cs_arch, ia->cs_mode, &code.h) != CS_ERR_OK)
		return false;
	bool found = cs.option(code.h, CS_OPT_DETAIL, CS_OPT_ON) == CS_ERR_OK &&
		     decode_part(core, s, start, end, pc, &code) && find_load(ia, &code, reg, load);
	if (code.ci)
		cs.free(code.ci, code.n);
	cs.close(&code.h);
	return found;
}
