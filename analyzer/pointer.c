#include "pointer.h"

bool an_pointer_ok(struct core *core, uint64_t addr, size_t len)
{
	return addr != 0 && addr % 8 == 0 && addr + len > addr && core_is_readable(core, addr, len);
}

const char *an_pointer_problem(struct core *core, uint64_t addr)
{
	if (addr == 0)
		return "is NULL";
	if (addr % 8 != 0)
		return "is misaligned";
	return core_is_readable(core, addr, 8) ? "is only partly readable" : "is not readable";
}
