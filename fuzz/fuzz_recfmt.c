/* libFuzzer harness for the recorder-entry formatter (analyzer/recfmt.h):
 * the format strings of recorder entries come from the core, so every
 * directive the formatter accepts or refuses is fuzzed here directly.
 * Input: 12 little-endian 64-bit arguments (96 bytes), then the format. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../analyzer/recfmt.h"

/* A string "read from the core": fails for odd addresses, else a string
 * whose length depends on the address (up to a full buffer). */
static bool read_string(void *ctx, uint64_t addr, char *buf, size_t max)
{
	(void)ctx;
	if (max == 0 || (addr & 1))
		return false;
	size_t n = (size_t)(addr >> 1) % (max + 8);
	if (n >= max)
		n = max - 1;
	memset(buf, 'a' + (int)(addr % 26), n);
	buf[n] = '\0';
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t args[AN_RECFMT_MAX_ARGS] = { 0 };
	size_t head = size < sizeof(args) ? size : sizeof(args);
	memcpy(args, data, head);
	char *format = malloc(size - head + 1);
	if (!format)
		return 0;
	memcpy(format, data + head, size - head);
	format[size - head] = '\0';
	const char *rest;
	char *location = an_recfmt_split_location(format, &rest);
	size_t nargs = an_recfmt_count_args(rest);
	for (unsigned flags = 0; flags <= AN_RECFMT_LIBRARY; flags++) {
		unsigned strings = 0;
		free(an_recfmt_format(rest, args, nargs, read_string, NULL, flags, &strings));
		free(an_recfmt_format(rest, args, head / 8, NULL, NULL, flags, NULL));
	}
	free(location);
	free(format);
	return 0;
}
