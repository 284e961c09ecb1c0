/* The architectures asyncore reads, each one table (arch_x86_64.c,
 * arch_aarch64.c): found by ELF machine or by name.  Apart from arch.h,
 * which only describes a table, as the tables' code reads memory. */
#ifndef COREFILE_ARCHES_H
#define COREFILE_ARCHES_H

#include "arch.h"

/* The table for ELF machine MACHINE, or NULL when asyncore has none. */
const struct core_arch *core_arch_for_machine(unsigned machine);

/* The table named NAME ("x86_64", "aarch64"); x86_64's for NULL or an
 * unknown name (analyses stored before the architecture was recorded). */
const struct core_arch *core_arch_by_name(const char *name);

#endif
