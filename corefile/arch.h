/* What differs between the machines whose cores asyncore reads: one table
 * per architecture (arch_x86_64.c, arch_aarch64.c), chosen from the core's
 * ELF header.  Code above corefile asks the table, never the machine.
 *
 * Two register numberings meet here: a thread's registers as the kernel
 * saved them (NT_PRSTATUS pr_reg, then what other notes add, such as
 * aarch64's TPIDR_EL0), and a frame's registers by DWARF number, as the
 * unwinder and DWARF expressions name them. */
#ifndef COREFILE_ARCH_H
#define COREFILE_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct core;

/* Thread registers of the largest table (aarch64: x0..x30, sp, pc,
 * pstate, tpidr_el0). */
#define CORE_MAX_REGS 35

/* Frame registers by DWARF number, 0 .. CORE_MAX_DWARF_REGS-1, of the
 * largest table (aarch64: x0..x30, sp); a bit each in a uint32_t. */
#define CORE_MAX_DWARF_REGS 32

/* x86_64 thread registers: struct user_regs_struct order (arch_x86_64.c). */
enum core_reg {
	CORE_REG_R15, CORE_REG_R14, CORE_REG_R13, CORE_REG_R12, CORE_REG_RBP,
	CORE_REG_RBX, CORE_REG_R11, CORE_REG_R10, CORE_REG_R9, CORE_REG_R8,
	CORE_REG_RAX, CORE_REG_RCX, CORE_REG_RDX, CORE_REG_RSI, CORE_REG_RDI,
	CORE_REG_ORIG_RAX, CORE_REG_RIP, CORE_REG_CS, CORE_REG_EFLAGS,
	CORE_REG_RSP, CORE_REG_SS, CORE_REG_FS_BASE, CORE_REG_GS_BASE,
	CORE_REG_DS, CORE_REG_ES, CORE_REG_FS, CORE_REG_GS,
	CORE_REG_COUNT
};

/* aarch64 thread registers: struct user_pt_regs order (x0..x30 are 0..30),
 * then TPIDR_EL0 from NT_ARM_TLS (arch_aarch64.c). */
enum {
	CORE_A64_X29 = 29, CORE_A64_X30 = 30, CORE_A64_SP = 31, CORE_A64_PC = 32,
	CORE_A64_PSTATE = 33, CORE_A64_TPIDR_EL0 = 34, CORE_A64_COUNT = 35
};

/* A register a user-space context switch saved: DWARF number, byte offset
 * from the saved context pointer. */
struct core_saved_reg {
	unsigned short dwarf, offset;
};

/* The registers a runtime's context switch leaves on the stack it leaves
 * (bRPC's bthread_jump_fcontext, as its src/bthread/context.cpp writes
 * them per machine), relative to the context pointer it stores: the
 * callee-saved registers (some past ndwarf_regs, such as aarch64's d8..d15,
 * which the unwinder does not track), the pc it resumes at, and SIZE, the
 * bytes saved: the stack pointer once it resumes is the pointer plus SIZE. */
struct core_saved_context {
	unsigned size, pc_offset;
	unsigned nregs;
	const struct core_saved_reg *regs;
};

/* A thread register (the table's numbering) of SIZE bytes (8, 4 or 2) at
 * OFFSET in a minidump's thread context. */
struct core_context_reg {
	unsigned short reg, offset;
	unsigned char size;
};

/* A thread register (the table's numbering) a signal frame saved, at OFFSET
 * from the trampoline frame's stack pointer. */
struct core_sigframe_reg {
	unsigned short reg, offset;
};

/* A system call's number and name, as one architecture numbers it. */
struct core_syscall_name {
	unsigned short nr;
	const char *name;
};

/* The glibc 2.36 layouts (x86_64 and aarch64 alike) of the objects a
 * thread waits on, for a libc whose DWARF does not say: pthread_mutex_t's
 * __data.__owner and __kind, pthread_rwlock_t's __data.__cur_writer; and
 * the ABI's sizes of the mutex, rwlock, condition, semaphore and barrier
 * (bits/pthreadtypes-arch.h, semaphore.h). */
struct core_glibc_locks {
	unsigned short mutex_owner, mutex_kind, mutex_size;
	unsigned short rwlock_cur_writer, rwlock_size;
	unsigned short cond_size, sem_size, barrier_size;
};

struct core_arch {
	const char *name;           /* "x86_64", "aarch64": JSON core.arch */
	uint16_t machine;           /* EM_X86_64, EM_AARCH64 */

	/* struct elf_prstatus: the same header on both (pr_pid @32 ...), then
	 * pr_reg; SIZE is the whole structure the kernel writes. */
	size_t prstatus_size;
	size_t prstatus_regs;       /* offset of pr_reg */
	unsigned nprstatus_regs;    /* words of pr_reg */

	/* Thread registers: pr_reg's, then those other notes add. */
	unsigned nregs;
	const char *const *reg_names;
	unsigned reg_pc, reg_sp, reg_fp, reg_tp;   /* indices of the roles */
	uint32_t tp_note;           /* LINUX note holding the thread pointer as one
				       word (NT_ARM_TLS); 0: it is in pr_reg */
	uint32_t pac_note;          /* LINUX note of the pointer-authentication
				       masks (NT_ARM_PAC_MASK), 0: none */
	bool tp_is_pthread;         /* the thread pointer is glibc's pthread_self()
				       (x86_64's TLS variant II); aarch64's
				       struct pthread lies below it */

	/* Frame registers by DWARF number: the unwinder's initial state is
	 * dwarf_regs[n] of the thread registers, n < ndwarf_regs. */
	unsigned ndwarf_regs;
	const char *const *dwarf_names;
	const unsigned char *dwarf_regs;
	unsigned dwarf_sp, dwarf_fp;
	int dwarf_pc;               /* the pc's DWARF number, -1 when it has none
				       (aarch64: the unwinder sets it apart) */
	uint32_t callee_saved;      /* DWARF bits a caller's frame keeps (sp, pc too) */
	unsigned call_pushes;       /* bytes a call pushes: the CFA lies that far
				       above the callee's first stack pointer */

	/* True when the code just before RA is a call instruction, as before a
	 * real return address. */
	bool (*after_call)(struct core *core, uint64_t ra);
	/* A function that keeps no frame has its return address at the stack
	 * pointer (x86_64): the unwinder's last resort takes that word when it
	 * passes after_call. */
	bool ra_at_sp;
	/* Where a frame has no CFI, the unwinder takes its caller from the
	 * frame record {caller's fp, return address} at the frame pointer, or
	 * for the innermost frame of a leaf from the link register (aarch64:
	 * libdwfl's own fallback there repeats frames). */
	bool frame_records;
	unsigned dwarf_lr;          /* the link register's DWARF number (frame_records) */
	/* Where a frame's record lies: the two words below its CFA (x86_64:
	 * the return address, then the pushed rbp), or where the frame's own
	 * frame pointer points, anywhere in the frame (aarch64's x29). */
	bool record_below_cfa;
	/* A signal handler returns to a trampoline, whose code is these bytes
	 * (glibc's __restore_rt, the kernel's vDSO __kernel_rt_sigreturn,
	 * qemu-user's page); at the trampoline frame's stack pointer lies the
	 * kernel's signal frame (struct rt_sigframe): the siginfo at
	 * sigframe_siginfo, the interrupted thread registers where
	 * sigframe_regs says.  Where the trampoline carries no CFI (qemu-user's)
	 * the unwinder takes the interrupted frame from there too. */
	const uint8_t *sigreturn_code;
	unsigned nsigreturn_code;
	unsigned sigframe_siginfo;
	const struct core_sigframe_reg *sigframe_regs;
	unsigned nsigframe_regs;
	/* A handler installed without SA_SIGINFO gets no siginfo from x86_64's
	 * kernel; its sigcontext still holds the hardware trap (trapno, error
	 * code, cr2) at these offsets from the trampoline's stack pointer
	 * (sigframe_trap 0: none), which trap_signal turns into the signal,
	 * si_code and whether the fault address is the trap address (cr2) or
	 * the pc. */
	unsigned sigframe_trapno, sigframe_err, sigframe_trap_addr;
	bool (*trap_signal)(uint64_t trapno, uint64_t err, int *signo, int *code, bool *at_trap_addr);
	int undefined_insn_code;    /* the si_code of SIGILL for an undefined
				       instruction (x86_64's ud2: ILL_ILLOPN) */
	bool mapping_symbols;       /* ELF mapping symbols ($x, $d) mark code and
				       data: no symbol lookup answers with one */
	/* The return address RA without the bits pointer authentication
	 * signed it with (aarch64's PAC); RA itself where there are none. */
	uint64_t (*strip_ra)(const struct core *core, uint64_t ra);

	/* glibc's thread layout.  TLS variant II (x86_64): struct pthread
	 * starts at the thread pointer with its tcbhead_t (the TCB's self
	 * pointer at 0), static TLS blocks lie below it.  Variant I (aarch64):
	 * the TCB (tcb_size bytes) is at the thread pointer, static blocks
	 * follow it, struct pthread lies right below it. */
	bool tls_variant1;
	unsigned tcb_dtv;           /* the DTV pointer's offset from the thread pointer */
	unsigned tcb_size;          /* variant I: the TCB before the first block */
	/* glibc 2.36's layout, for a libc that does not say it (its
	 * libthread_db descriptors, its DWARF): sizeof(struct pthread), the
	 * offsets of its list, tid and specific members, and of
	 * _rtld_global's _dl_stack_used and _dl_stack_user. */
	uint32_t pthread_size, pthread_list, pthread_tid, pthread_specific;
	uint32_t rtld_stack_used, rtld_stack_user;
	/* The relocation of a TLS descriptor the code resolves through
	 * ADRP/ADD (aarch64's R_AARCH64_TLSDESC), 0: none read. */
	uint32_t tlsdesc_reloc;
	struct core_saved_context bthread_context;  /* bthread_jump_fcontext's */

	/* A minidump's thread context (Breakpad's minidump_cpu_*.h): its
	 * SystemInfo processor_architecture, the CPU bit its context_flags
	 * carry at context_flags_offset, the registers it holds, and the
	 * fewest bytes that hold them (writers cut the rest: lldb's x86_64
	 * contexts are 720 bytes of Breakpad's 1232). */
	uint16_t minidump_cpu;
	uint32_t minidump_context_flag;
	unsigned minidump_context_flags_offset;
	const struct core_context_reg *minidump_regs;
	unsigned nminidump_regs;
	unsigned minidump_context_min;
	/* The system call a thread is in: the kernel saved the call's number
	 * in thread register syscall_nr (x86_64's orig_rax, which every other
	 * entry to the kernel sets to -1: syscall_nr_none; aarch64's x8, which
	 * the kernel leaves alone, so there the instruction that enters the
	 * kernel, syscall_insn, must end just before the pc) and its
	 * arguments in syscall_args.  Where syscall_ret_arg0 the return value
	 * (-ERESTARTSYS ... of an interrupted call) overwrites the first
	 * argument's register (aarch64's x0: orig_x0 is in no note). */
	const uint8_t *syscall_insn;
	unsigned nsyscall_insn;
	unsigned syscall_nr;
	unsigned char syscall_args[6];
	bool syscall_nr_none;       /* an all-ones number means "in no call", any
				   other a call */
	bool syscall_ret_arg0;
	unsigned syscall_ret;       /* the register a call returns in */
	const struct core_syscall_name *syscalls;   /* sorted by number */
	unsigned nsyscalls;
	struct core_glibc_locks glibc_locks;
};

extern const struct core_arch core_arch_x86_64;
extern const struct core_arch core_arch_aarch64;

/* ARCH's name of system call NR, or NULL. */
const char *core_syscall_name(const struct core_arch *arch, long nr);

/* ARCH's number of the system call named NAME, or -1. */
long core_syscall_number(const struct core_arch *arch, const char *name);

/* Name of thread register N, of DWARF register N ("?" past the table). */
const char *core_arch_reg_name(const struct core_arch *arch, unsigned n);
const char *core_arch_dwarf_name(const struct core_arch *arch, unsigned n);

#endif
