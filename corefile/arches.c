#include "arches.h"

#include <string.h>

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
