/* x86_64: the System V AMD64 ABI and Linux's core layout. */
#include "arch.h"

#include <elf.h>

#include "core.h"

static const char *const reg_names[CORE_REG_COUNT] = {
	"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8",
	"rax", "rcx", "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags",
	"rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs",
};

/* DWARF numbers 0..16 (16: the return address column, the pc). */
static const unsigned char dwarf_regs[17] = {
	CORE_REG_RAX, CORE_REG_RDX, CORE_REG_RCX, CORE_REG_RBX, CORE_REG_RSI,
	CORE_REG_RDI, CORE_REG_RBP, CORE_REG_RSP, CORE_REG_R8, CORE_REG_R9,
	CORE_REG_R10, CORE_REG_R11, CORE_REG_R12, CORE_REG_R13, CORE_REG_R14,
	CORE_REG_R15, CORE_REG_RIP,
};

static const char *const dwarf_names[17] = {
	"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9",
	"r10", "r11", "r12", "r13", "r14", "r15", "rip",
};

/* Length of the indirect call (FF /2) whose ModRM byte is MODRM and SIB byte
 * SIB; 0 when MODRM does not encode a call. */
static unsigned indirect_call_len(uint8_t modrm, uint8_t sib)
{
	unsigned mod = modrm >> 6, reg = (modrm >> 3) & 7, rm = modrm & 7;
	if (reg != 2)
		return 0;
	if (mod == 3)
		return 2;
	unsigned len = 2 + (rm == 4);
	if (mod == 1)
		return len + 1;
	if (mod == 2)
		return len + 4;
	if (rm == 5)
		return 6;
	return rm == 4 && (sib & 7) == 5 ? len + 4 : len;
}

/* The code before RA ends with a call instruction (direct, or FF /2 in any
 * addressing form). */
static bool after_call(struct core *core, uint64_t ra)
{
	uint8_t b[8];
	if (ra < sizeof(b) || !core_read_bytes(core, ra - sizeof(b), b, sizeof(b)))
		return false;
	if (b[3] == 0xe8)
		return true;
	for (unsigned len = 2; len <= 7; len++) {
		size_t at = sizeof(b) - len;
		if (b[at] == 0xff && indirect_call_len(b[at + 1], len > 2 ? b[at + 2] : 0) == len)
			return true;
	}
	return false;
}

static uint64_t strip_ra(const struct core *core, uint64_t ra)
{
	(void)core;
	return ra;
}

/* bRPC's bthread_jump_fcontext for linux x86_64 (src/bthread/context.cpp)
 * pushes rbp, rbx, r15, r14, r13, r12 below its return address and 8 bytes
 * of FPU control words (mxcsr, x87 cw) at the context pointer; the return
 * address is the pc it resumes at. */
static const struct core_saved_reg bthread_regs[] = {
	{ 12, 0x08 }, { 13, 0x10 }, { 14, 0x18 }, { 15, 0x20 }, { 3, 0x28 }, { 6, 0x30 },
};

const struct core_arch core_arch_x86_64 = {
	.name = "x86_64",
	.machine = EM_X86_64,
	.prstatus_size = 336,
	.prstatus_regs = 112,
	.nprstatus_regs = CORE_REG_COUNT,
	.nregs = CORE_REG_COUNT,
	.reg_names = reg_names,
	.reg_pc = CORE_REG_RIP,
	.reg_sp = CORE_REG_RSP,
	.reg_fp = CORE_REG_RBP,
	.reg_tp = CORE_REG_FS_BASE,
	.tp_note = 0,
	.ndwarf_regs = 17,
	.dwarf_names = dwarf_names,
	.dwarf_regs = dwarf_regs,
	.dwarf_sp = 7,
	.dwarf_fp = 6,
	.dwarf_pc = 16,
	/* rbx, rbp, rsp, r12-r15, rip */
	.callee_saved = (1u << 3) | (1u << 6) | (1u << 7) | (0xfu << 12) | (1u << 16),
	.call_pushes = 8,
	.after_call = after_call,
	.ra_at_sp = true,
	.frame_records = false,     /* libdwfl's x86_64 fallback walks rbp itself */
	.strip_ra = strip_ra,
	.record_below_cfa = true,
	.tls_variant1 = false,
	.tcb_dtv = 8,
	.tcb_size = 0,
	/* glibc 2.36 (libthread_db's descriptors in Debian 12's libc) */
	.pthread_size = 0x940, .pthread_list = 0x2c0, .pthread_tid = 0x2d0,
	.pthread_specific = 0x510, .rtld_stack_used = 0x10a8, .rtld_stack_user = 0x10b8,
	.tp_is_pthread = true,
	.bthread_context = { .size = 0x40, .pc_offset = 0x38,
			     .nregs = sizeof(bthread_regs) / sizeof(bthread_regs[0]),
			     .regs = bthread_regs },
};
