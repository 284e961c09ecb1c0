/* What the kernel left on a thread, read from the target's memory by the
 * architecture's table (arch.h): the signal frame a handler was given, and
 * the system call a thread is in (kernel.c). */
#ifndef COREFILE_KERNEL_H
#define COREFILE_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target.h"

/* The kernel's signal frame as a handler's trampoline finds it: the siginfo
 * it was given and the thread registers the signal interrupted. */
struct core_sigframe {
	int signo, code, errno_value;
	uint64_t addr;              /* si_addr where the code carries one */
	int32_t sender_pid;         /* si_pid for kill()-style codes */
	uint64_t regs[CORE_MAX_REGS];   /* the arch's thread registers; those the
					   frame does not save are 0 */
	uint64_t known;             /* bit N: regs[N] was read */
	bool has_trap;              /* the sigcontext's hardware trap was read */
	uint64_t trapno, err, trap_addr;
};

/* Whether the code at PC is ARCH's signal return trampoline. */
bool core_is_sigreturn(struct core *core, uint64_t pc);

/* Read the signal frame of the trampoline frame whose stack pointer is SP
 * into *OUT.  False when the core cannot give all of it; nothing in it is
 * validated beyond being readable. */
bool core_sigframe_read(struct core *core, uint64_t sp, struct core_sigframe *out);

/* The system call a thread is in, by its saved registers. */
struct core_syscall {
	long nr;                    /* -1: the source saved no number */
	const char *name;           /* static; NULL: a number the table lacks */
	uint64_t args[6];
	uint8_t known;              /* bit I: args[I] is the argument as given */
};

/* Reads LEN bytes of code at ADDR into BUF; false when it cannot. */
typedef bool core_code_read_fn(void *ctx, uint64_t addr, void *buf, size_t len);

/* Whether the thread whose registers are REGS (ARCH's order, NREGS of them
 * saved) is in a system call, or was interrupted in one (its pc just past
 * the instruction that enters the kernel); fills *OUT when it is.  Code is
 * read through READ(CTX, ...) where the architecture needs it (a core
 * without NT_FILE, such as qemu-user's, saves no library text: the caller
 * knows the files), through the core when READ is NULL.  A core whose
 * source saved no number (core->syscall_nr_unsaved) gives a call of number
 * -1 where the code before the pc enters the kernel and the return
 * register holds what an unfinished call returns. */
bool core_syscall_of(struct core *core, const uint64_t *regs, unsigned nregs, core_code_read_fn *read,
		     void *ctx, struct core_syscall *out);

#endif
