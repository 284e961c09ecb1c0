#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

struct core_error core_error_nomem = {
	.kind = CORE_ERROR_NOMEM,
	.message = "out of memory",
};

struct core_error *core_error_create(enum core_error_kind kind, const char *fmt, ...)
{
	struct core_error *err = calloc(1, sizeof(*err));
	if (!err)
		return &core_error_nomem;
	err->kind = kind;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return err;
}

struct core_error *core_error_fault(uint64_t address, size_t len)
{
	struct core_error *err = core_error_create(CORE_ERROR_FAULT,
		"cannot read %zu bytes at 0x%llx: not in the core or a mapped file",
		len, (unsigned long long)address);
	if (err != &core_error_nomem)
		err->address = address;
	return err;
}

void core_error_destroy(struct core_error *err)
{
	if (err && err != &core_error_nomem)
		free(err);
}
