/* aarch64: AAPCS64 and Linux's core layout.  Frame records are {x29, x30}
 * pairs; the thread pointer is TPIDR_EL0, saved in its own note. */
#include "arch.h"

#include <elf.h>
#include <signal.h>

#include "memory.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

/* Linux's notes beside each NT_PRSTATUS (name "LINUX"): TPIDR_EL0, and the
 * masks of pointer authentication. */
#define NT_ARM_TLS_NOTE 0x401
#define NT_ARM_PAC_MASK_NOTE 0x406

static const char *const reg_names[CORE_A64_COUNT] = {
	"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10",
	"x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20",
	"x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29", "x30",
	"sp", "pc", "pstate", "tpidr_el0",
};

/* DWARF numbers 0..31 are x0..x30 and sp, pr_reg's first 32 words. */
static const unsigned char dwarf_regs[32] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
};

/* The code before RA is a branch with link: BL, BLR, or the
 * pointer-authenticating BLRAA/BLRAB/BLRAAZ/BLRABZ. */
static bool after_call(struct core *core, uint64_t ra)
{
	uint32_t insn;
	if (ra < 4 || ra % 4 != 0 || !core_read_u32(core, ra - 4, &insn))
		return false;
	return (insn & 0xfc000000u) == 0x94000000u ||      /* BL */
	       (insn & 0xfffffc1fu) == 0xd63f0000u ||      /* BLR */
	       (insn & 0xfefff800u) == 0xd63f0800u;        /* BLRAA(Z), BLRAB(Z) */
}

/* rt_sigreturn: mov x8, #139; svc #0 (the kernel's vDSO, glibc, qemu),
 * little-endian. */
static const uint8_t sigreturn_code[] = { 0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4 };

/* struct rt_sigframe at the handler's stack pointer (arch/arm64/kernel/
 * signal.c): siginfo (128 bytes), then the ucontext, whose uc_mcontext (at
 * 176: uc_flags, uc_link, uc_stack, uc_sigmask and its padding to 128
 * bytes, aligned to 16) holds fault_address, then regs[31], sp, pc, pstate:
 * the thread registers 0..33 in order. */
enum { SIGFRAME_MCONTEXT = 128 + 176, SIGFRAME_REGS = SIGFRAME_MCONTEXT + 8 };

#define R(n) { n, SIGFRAME_REGS + 8 * (n) }
static const struct core_sigframe_reg sigframe_regs[] = {
	R(0), R(1), R(2), R(3), R(4), R(5), R(6), R(7), R(8), R(9), R(10), R(11),
	R(12), R(13), R(14), R(15), R(16), R(17), R(18), R(19), R(20), R(21), R(22),
	R(23), R(24), R(25), R(26), R(27), R(28), R(29), R(30), R(31), R(32), R(33),
};
#undef R

/* Bits of a user-space code address that pointer authentication may hold
 * when the core does not say (no NT_ARM_PAC_MASK): those above a 48-bit
 * address space, the top byte included, as gdb takes them. */
#define DEFAULT_PAC_MASK 0xffff000000000000ull

static uint64_t strip_ra(const struct core *core, uint64_t ra)
{
	uint64_t mask = core->pac_insn_mask ? core->pac_insn_mask | 0xff00000000000000ull
					    : DEFAULT_PAC_MASK;
	/* Bit 55 chooses the half of the address space: kernel addresses keep
	 * their top bits set. */
	return (ra & (1ull << 55)) ? ra | mask : ra & ~mask;
}

/* bRPC's bthread_jump_fcontext for linux arm64 (src/bthread/context.cpp)
 * takes 0xb0 bytes below sp: d8..d15 at 0x00..0x38, x19..x28 at
 * 0x40..0x88, x29 and x30 at 0x90 and 0x98, and x30 again at 0xa0 as the pc
 * it resumes at (a fresh context's entry function there, `finish` in x30). */
static const struct core_saved_reg bthread_regs[] = {
	{ 19, 0x40 }, { 20, 0x48 }, { 21, 0x50 }, { 22, 0x58 }, { 23, 0x60 },
	{ 24, 0x68 }, { 25, 0x70 }, { 26, 0x78 }, { 27, 0x80 }, { 28, 0x88 },
	{ 29, 0x90 }, { 30, 0x98 },
	/* d8..d15: DWARF's v8..v15 */
	{ 72, 0x00 }, { 73, 0x08 }, { 74, 0x10 }, { 75, 0x18 }, { 76, 0x20 },
	{ 77, 0x28 }, { 78, 0x30 }, { 79, 0x38 },
};

/* MDRawContextARM64 (Crashpad's is the same): context_flags @0, cpsr @4,
 * then x0..x30, sp and pc, 8 bytes each from @8. */
#define X(n) { n, 8 + 8 * (n), 8 }
static const struct core_context_reg minidump_regs[] = {
	X(0), X(1), X(2), X(3), X(4), X(5), X(6), X(7), X(8), X(9), X(10), X(11), X(12),
	X(13), X(14), X(15), X(16), X(17), X(18), X(19), X(20), X(21), X(22), X(23), X(24),
	X(25), X(26), X(27), X(28), X(29), X(30), X(31), X(32), { CORE_A64_PSTATE, 4, 4 },
};
#undef X
/* The system calls a blocked thread is found in, by number (the kernel's
 * include/uapi/asm-generic/unistd.h). */
static const struct core_syscall_name syscalls[] = {
	{ 4, "io_getevents" }, { 22, "epoll_pwait" }, { 25, "fcntl" }, { 29, "ioctl" }, { 32, "flock" },
	{ 56, "openat" }, { 57, "close" }, { 63, "read" }, { 64, "write" }, { 65, "readv" },
	{ 66, "writev" }, { 67, "pread64" }, { 68, "pwrite64" }, { 69, "preadv" }, { 70, "pwritev" },
	{ 72, "pselect6" }, { 73, "ppoll" }, { 76, "splice" }, { 82, "fsync" }, { 83, "fdatasync" },
	{ 94, "exit_group" }, { 95, "waitid" }, { 98, "futex" }, { 101, "nanosleep" },
	{ 115, "clock_nanosleep" }, { 124, "sched_yield" }, { 128, "restart_syscall" },
	{ 133, "rt_sigsuspend" }, { 137, "rt_sigtimedwait" }, { 188, "msgrcv" }, { 189, "msgsnd" },
	{ 192, "semtimedop" }, { 193, "semop" }, { 202, "accept" }, { 203, "connect" }, { 206, "sendto" },
	{ 207, "recvfrom" }, { 211, "sendmsg" }, { 212, "recvmsg" }, { 242, "accept4" },
	{ 243, "recvmmsg" }, { 260, "wait4" }, { 269, "sendmmsg" }, { 278, "getrandom" },
	{ 426, "io_uring_enter" }, { 441, "epoll_pwait2" }, { 449, "futex_waitv" },
};

/* svc #0 */
static const uint8_t syscall_insn[] = { 0x01, 0x00, 0x00, 0xd4 };

const struct core_arch core_arch_aarch64 = {
	.name = "aarch64",
	.machine = EM_AARCH64,
	.prstatus_size = 392,
	.prstatus_regs = 112,
	.nprstatus_regs = 34,
	.nregs = CORE_A64_COUNT,
	.reg_names = reg_names,
	.reg_pc = CORE_A64_PC,
	.reg_sp = CORE_A64_SP,
	.reg_fp = CORE_A64_X29,
	.reg_tp = CORE_A64_TPIDR_EL0,
	.tp_note = NT_ARM_TLS_NOTE,
	.pac_note = NT_ARM_PAC_MASK_NOTE,
	.ndwarf_regs = 32,
	.dwarf_names = reg_names,   /* DWARF's x0..x30 and sp are the thread's first 32 */
	.dwarf_regs = dwarf_regs,
	.dwarf_sp = 31,
	.dwarf_fp = 29,
	.dwarf_pc = -1,
	/* x19-x29, x30 (the return address), sp */
	.callee_saved = (0x7ffu << 19) | (1u << 30) | (1u << 31),
	.call_pushes = 0,
	.after_call = after_call,
	.ra_at_sp = false,          /* a frameless function's return address is in x30 */
	.frame_records = true,
	.dwarf_lr = 30,
	.sigreturn_code = sigreturn_code,
	.nsigreturn_code = sizeof(sigreturn_code),
	.sigframe_siginfo = 0,
	.sigframe_regs = sigframe_regs,
	.nsigframe_regs = sizeof(sigframe_regs) / sizeof(sigframe_regs[0]),
	.undefined_insn_code = ILL_ILLOPC,
	.mapping_symbols = true,
	.strip_ra = strip_ra,
	.record_below_cfa = false,
	.tls_variant1 = true,
	.tcb_dtv = 0,               /* tcbhead_t { dtv; private; } */
	.tcb_size = 16,
	/* glibc 2.36 (libthread_db's descriptors in Debian 12's
	 * libc6-arm64-cross; pthread_self is tpidr_el0 - 0x740) */
	.pthread_size = 0x740, .pthread_list = 0xc0, .pthread_tid = 0xd0,
	.pthread_specific = 0x310, .rtld_stack_used = 0x1158, .rtld_stack_user = 0x1168,
	.tlsdesc_reloc = 1031,      /* R_AARCH64_TLSDESC */
	.tp_is_pthread = false,
	.bthread_context = { .size = 0xb0, .pc_offset = 0xa0,
			     .nregs = sizeof(bthread_regs) / sizeof(bthread_regs[0]),
			     .regs = bthread_regs },
	.minidump_cpu = 12,                      /* PROCESSOR_ARCHITECTURE_ARM64 */
	.minidump_context_flag = 0x00400000,     /* MD_CONTEXT_ARM64 */
	.minidump_context_flags_offset = 0,
	.minidump_regs = minidump_regs,
	.nminidump_regs = sizeof(minidump_regs) / sizeof(minidump_regs[0]),
	.minidump_context_min = 272,
	.syscall_insn = syscall_insn,
	.nsyscall_insn = sizeof(syscall_insn),
	.syscall_nr = 8,
	.syscall_ret = 0,
	.syscall_args = { 0, 1, 2, 3, 4, 5 },
	.syscall_nr_none = false,
	.syscall_ret_arg0 = true,
	.syscalls = syscalls,
	.nsyscalls = sizeof(syscalls) / sizeof(syscalls[0]),
	.glibc_locks = { .mutex_owner = 8, .mutex_kind = 16, .mutex_size = 48,
			 .rwlock_cur_writer = 24, .rwlock_size = 56, .cond_size = 48, .sem_size = 32,
			 .barrier_size = 32 },
};
