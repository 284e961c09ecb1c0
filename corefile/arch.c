#include "arch.h"

#include <string.h>

#include "core.h"

static const struct core_arch *const arches[] = { &core_arch_x86_64, &core_arch_aarch64 };

const struct core_arch *core_arch_for_machine(unsigned machine)
{
	for (size_t i = 0; i < sizeof(arches) / sizeof(arches[0]); i++)
		if (arches[i]->machine == machine)
			return arches[i];
	return NULL;
}

const struct core_arch *core_arch_by_name(const char *name)
{
	for (size_t i = 0; name && i < sizeof(arches) / sizeof(arches[0]); i++)
		if (strcmp(arches[i]->name, name) == 0)
			return arches[i];
	return &core_arch_x86_64;
}

const char *core_arch_reg_name(const struct core_arch *arch, unsigned n)
{
	return n < arch->nregs ? arch->reg_names[n] : "?";
}

const char *core_arch_dwarf_name(const struct core_arch *arch, unsigned n)
{
	return n < arch->ndwarf_regs ? arch->dwarf_names[n] : "?";
}

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
