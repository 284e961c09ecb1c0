/* x86_64: the System V AMD64 ABI and Linux's core layout. */
#include "arch.h"

#include <elf.h>
#include <signal.h>

#include "memory.h"

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

/* glibc's __restore_rt: mov $15, %rax; syscall (rt_sigreturn). */
static const uint8_t sigreturn_code[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };

/* struct rt_sigframe { char *pretcode; struct ucontext uc; struct siginfo
 * info; } (arch/x86/include/asm/sigframe.h): the handler returns through
 * pretcode, so the trampoline frame's stack pointer is &uc.  The ucontext's
 * uc_flags, uc_link and uc_stack (40 bytes) precede uc_mcontext, a struct
 * sigcontext (256 bytes: r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp,
 * rip, eflags, ...), then uc_sigmask (8): the siginfo follows at 304. */
enum { SIGFRAME_MCONTEXT = 40, SIGFRAME_SIGINFO = 304 };

#define R(reg, n) { CORE_REG_##reg, SIGFRAME_MCONTEXT + 8 * (n) }
static const struct core_sigframe_reg sigframe_regs[] = {
	R(R8, 0), R(R9, 1), R(R10, 2), R(R11, 3), R(R12, 4), R(R13, 5), R(R14, 6),
	R(R15, 7), R(RDI, 8), R(RSI, 9), R(RBP, 10), R(RBX, 11), R(RDX, 12), R(RAX, 13),
	R(RCX, 14), R(RSP, 15), R(RIP, 16), R(EFLAGS, 17),
};
#undef R

/* sigcontext's err, trapno and cr2 (after rip, eflags and the segment
 * words). */
enum { SIGFRAME_ERR = SIGFRAME_MCONTEXT + 152, SIGFRAME_TRAPNO = SIGFRAME_MCONTEXT + 160,
       SIGFRAME_CR2 = SIGFRAME_MCONTEXT + 176 };

/* The signal the kernel sends for a user-mode trap (arch/x86/kernel/traps.c
 * and mm/fault.c): #DE divide error, #UD invalid opcode (at the pc), #PF
 * page fault (at cr2; error code bit 0: the page was present). */
static bool trap_signal(uint64_t trapno, uint64_t err, int *signo, int *code, bool *at_trap_addr)
{
	*at_trap_addr = false;
	switch (trapno) {
	case 0:
		*signo = SIGFPE;
		*code = FPE_INTDIV;
		return true;
	case 6:
		*signo = SIGILL;
		*code = ILL_ILLOPN;
		return true;
	case 14:
		*signo = SIGSEGV;
		*code = (err & 1) ? SEGV_ACCERR : SEGV_MAPERR;
		*at_trap_addr = true;
		return true;
	default:
		return false;
	}
}

/* bRPC's bthread_jump_fcontext for linux x86_64 (src/bthread/context.cpp)
 * pushes rbp, rbx, r15, r14, r13, r12 below its return address and 8 bytes
 * of FPU control words (mxcsr, x87 cw) at the context pointer; the return
 * address is the pc it resumes at. */
static const struct core_saved_reg bthread_regs[] = {
	{ 12, 0x08 }, { 13, 0x10 }, { 14, 0x18 }, { 15, 0x20 }, { 3, 0x28 }, { 6, 0x30 },
};

/* MDRawContextAMD64: the segment registers and eflags after the register
 * home area and context_flags (@48), the integer registers from rax (@120)
 * in Windows' order, then rip (@248). */
#define C(reg, off, size) { CORE_REG_##reg, off, size }
static const struct core_context_reg minidump_regs[] = {
	C(CS, 56, 2), C(DS, 58, 2), C(ES, 60, 2), C(FS, 62, 2), C(GS, 64, 2), C(SS, 66, 2),
	C(EFLAGS, 68, 4), C(RAX, 120, 8), C(RCX, 128, 8), C(RDX, 136, 8), C(RBX, 144, 8),
	C(RSP, 152, 8), C(RBP, 160, 8), C(RSI, 168, 8), C(RDI, 176, 8), C(R8, 184, 8),
	C(R9, 192, 8), C(R10, 200, 8), C(R11, 208, 8), C(R12, 216, 8), C(R13, 224, 8),
	C(R14, 232, 8), C(R15, 240, 8), C(RIP, 248, 8),
};
#undef C
/* The system calls a blocked thread is found in, by number (the kernel's
 * arch/x86/entry/syscalls/syscall_64.tbl). */
static const struct core_syscall_name syscalls[] = {
	{ 0, "read" }, { 1, "write" }, { 2, "open" }, { 3, "close" }, { 7, "poll" }, { 16, "ioctl" },
	{ 17, "pread64" }, { 18, "pwrite64" }, { 19, "readv" }, { 20, "writev" }, { 23, "select" },
	{ 24, "sched_yield" }, { 34, "pause" }, { 35, "nanosleep" }, { 42, "connect" }, { 43, "accept" },
	{ 44, "sendto" }, { 45, "recvfrom" }, { 46, "sendmsg" }, { 47, "recvmsg" }, { 61, "wait4" },
	{ 65, "semop" }, { 69, "msgsnd" }, { 70, "msgrcv" }, { 72, "fcntl" }, { 73, "flock" },
	{ 74, "fsync" }, { 75, "fdatasync" }, { 128, "rt_sigtimedwait" }, { 130, "rt_sigsuspend" },
	{ 202, "futex" }, { 208, "io_getevents" }, { 219, "restart_syscall" }, { 220, "semtimedop" },
	{ 230, "clock_nanosleep" }, { 231, "exit_group" }, { 232, "epoll_wait" }, { 247, "waitid" },
	{ 257, "openat" }, { 270, "pselect6" }, { 271, "ppoll" }, { 275, "splice" },
	{ 281, "epoll_pwait" }, { 288, "accept4" }, { 295, "preadv" }, { 296, "pwritev" },
	{ 299, "recvmmsg" }, { 307, "sendmmsg" }, { 318, "getrandom" }, { 426, "io_uring_enter" },
	{ 441, "epoll_pwait2" }, { 449, "futex_waitv" },
};

/* syscall */
static const uint8_t syscall_insn[] = { 0x0f, 0x05 };

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
	.sigreturn_code = sigreturn_code,
	.nsigreturn_code = sizeof(sigreturn_code),
	.sigframe_siginfo = SIGFRAME_SIGINFO,
	.sigframe_regs = sigframe_regs,
	.nsigframe_regs = sizeof(sigframe_regs) / sizeof(sigframe_regs[0]),
	.sigframe_trapno = SIGFRAME_TRAPNO,
	.sigframe_err = SIGFRAME_ERR,
	.sigframe_trap_addr = SIGFRAME_CR2,
	.trap_signal = trap_signal,
	.undefined_insn_code = ILL_ILLOPN,
	.bthread_context = { .size = 0x40, .pc_offset = 0x38,
			     .nregs = sizeof(bthread_regs) / sizeof(bthread_regs[0]),
			     .regs = bthread_regs },
	.minidump_cpu = 9,                       /* PROCESSOR_ARCHITECTURE_AMD64 */
	.minidump_context_flag = 0x00100000,     /* MD_CONTEXT_AMD64 */
	.minidump_context_flags_offset = 48,
	.minidump_regs = minidump_regs,
	.nminidump_regs = sizeof(minidump_regs) / sizeof(minidump_regs[0]),
	.minidump_context_min = 256,
	.syscall_insn = syscall_insn,
	.nsyscall_insn = sizeof(syscall_insn),
	.syscall_nr = CORE_REG_ORIG_RAX,
	.syscall_ret = CORE_REG_RAX,
	.syscall_args = { CORE_REG_RDI, CORE_REG_RSI, CORE_REG_RDX, CORE_REG_R10, CORE_REG_R8, CORE_REG_R9 },
	.syscall_nr_none = true,
	.syscall_ret_arg0 = false,
	.syscalls = syscalls,
	.nsyscalls = sizeof(syscalls) / sizeof(syscalls[0]),
	.glibc_locks = { .mutex_owner = 8, .mutex_kind = 16, .mutex_size = 40,
			 .rwlock_cur_writer = 24, .rwlock_size = 56, .cond_size = 48, .sem_size = 32,
			 .barrier_size = 32 },
};
