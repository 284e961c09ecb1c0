#include "kernel.h"

#include <string.h>

#include "memory.h"

bool core_is_sigreturn(struct core *core, uint64_t pc)
{
	const struct core_arch *arch = core->arch;
	uint8_t code[16];
	size_t n = arch->nsigreturn_code;
	return n > 0 && n <= sizeof(code) && core_read_bytes(core, pc, code, n) &&
	       memcmp(code, arch->sigreturn_code, n) == 0;
}

bool core_sigframe_read(struct core *core, uint64_t sp, struct core_sigframe *out)
{
	const struct core_arch *arch = core->arch;
	unsigned char info[CORE_SIGINFO_SIZE];
	struct core_siginfo si;
	memset(out, 0, sizeof(*out));
	if (arch->nsigframe_regs == 0 || sp > UINT64_MAX - 4096 ||
	    !core_read_bytes(core, sp + arch->sigframe_siginfo, info, sizeof(info)))
		return false;
	core_siginfo_parse(info, &si);
	out->signo = si.signo;
	out->code = si.code;
	out->errno_value = si.errno_value;
	out->addr = si.addr;
	out->sender_pid = si.sender_pid;
	for (unsigned i = 0; i < arch->nsigframe_regs; i++) {
		const struct core_sigframe_reg *r = &arch->sigframe_regs[i];
		if (r->reg >= CORE_MAX_REGS || !core_read_u64(core, sp + r->offset, &out->regs[r->reg]))
			return false;
		out->known |= 1ull << r->reg;
	}
	out->has_trap = arch->sigframe_trapno &&
			core_read_u64(core, sp + arch->sigframe_trapno, &out->trapno) &&
			core_read_u64(core, sp + arch->sigframe_err, &out->err) &&
			core_read_u64(core, sp + arch->sigframe_trap_addr, &out->trap_addr);
	return true;
}

/* The kernel's restart codes an interrupted call returns (ERESTARTSYS ..
 * ERESTART_RESTARTBLOCK), and EINTR. */
static bool interrupted_return(uint64_t ret)
{
	int64_t r = (int64_t)ret;
	return r == -4 || (r <= -512 && r >= -516);
}

/* What a call that has not finished returns: a restart code or EINTR when
 * a stop interrupted it, -ENOSYS (the kernel's value at entry) while it
 * runs. */
static bool unfinished_return(uint64_t ret)
{
	return interrupted_return(ret) || (int64_t)ret == -38;
}

/* The instruction that enters the kernel ends just before PC. */
static bool after_syscall_insn(struct core *core, uint64_t pc, core_code_read_fn *read, void *ctx)
{
	const struct core_arch *arch = core->arch;
	uint8_t code[8];
	unsigned n = arch->nsyscall_insn;
	return pc >= n && (read ? read(ctx, pc - n, code, n) : core_read_bytes(core, pc - n, code, n)) &&
	       memcmp(code, arch->syscall_insn, n) == 0;
}

bool core_syscall_of(struct core *core, const uint64_t *regs, unsigned nregs, core_code_read_fn *read,
		     void *ctx, struct core_syscall *out)
{
	const struct core_arch *arch = core->arch;
	memset(out, 0, sizeof(*out));
	if (arch->nsyscall_insn == 0 || arch->nsyscall_insn > 8 || arch->reg_pc >= nregs ||
	    arch->syscall_nr >= nregs)
		return false;
	uint64_t pc = regs[arch->reg_pc], nr = regs[arch->syscall_nr];
	/* Where the number says "in no call" it is enough (the kernel sets it
	 * so on every entry but a system call's), unless the source saved no
	 * number: then, as where the number never says so, the code before
	 * the pc says it, and the return register that the call is not done. */
	bool unknown = arch->syscall_nr_none && nr == UINT64_MAX && core->syscall_nr_unsaved;
	if (arch->syscall_nr_none && nr == UINT64_MAX && !unknown)
		return false;
	if ((!arch->syscall_nr_none || unknown) && !after_syscall_insn(core, pc, read, ctx))
		return false;
	if (unknown && (arch->syscall_ret >= nregs || !unfinished_return(regs[arch->syscall_ret])))
		return false;
	out->nr = unknown ? -1 : (long)nr;
	out->name = unknown ? NULL : core_syscall_name(arch, out->nr);
	for (unsigned i = 0; i < 6; i++) {
		unsigned r = arch->syscall_args[i];
		if (r >= nregs)
			continue;
		out->args[i] = regs[r];
		out->known |= (uint8_t)(1u << i);
	}
	if (arch->syscall_ret_arg0 && interrupted_return(out->args[0]))
		out->known &= (uint8_t)~1u;
	return true;
}
