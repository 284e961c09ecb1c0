/* The check of an untrusted pointer read from a core, shared by the walks
 * that follow one. */
#ifndef ANALYZER_POINTER_H
#define ANALYZER_POINTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../corefile/core.h"

/* ADDR is non-NULL, 8-aligned, and LEN bytes there are readable. */
bool an_pointer_ok(struct core *core, uint64_t addr, size_t len);

/* Why ADDR cannot be followed ("is NULL", "is misaligned", ...), for
 * warnings; a static string. */
const char *an_pointer_problem(struct core *core, uint64_t addr);

#endif
