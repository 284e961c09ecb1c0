#include "arch.h"

#include <string.h>

const char *core_arch_reg_name(const struct core_arch *arch, unsigned n)
{
	return n < arch->nregs ? arch->reg_names[n] : "?";
}

const char *core_arch_dwarf_name(const struct core_arch *arch, unsigned n)
{
	return n < arch->ndwarf_regs ? arch->dwarf_names[n] : "?";
}

const char *core_syscall_name(const struct core_arch *arch, long nr)
{
	size_t lo = 0, hi = arch->nsyscalls;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (arch->syscalls[mid].nr == nr)
			return arch->syscalls[mid].name;
		if (arch->syscalls[mid].nr < nr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

long core_syscall_number(const struct core_arch *arch, const char *name)
{
	for (unsigned i = 0; name && i < arch->nsyscalls; i++)
		if (strcmp(arch->syscalls[i].name, name) == 0)
			return arch->syscalls[i].nr;
	return -1;
}
