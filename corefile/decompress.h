/* Decompression of cores stored compressed (.zst, .xz, .lz4, .gz), recognised by
 * their magic bytes. */
#ifndef COREFILE_DECOMPRESS_H
#define COREFILE_DECOMPRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* True when DATA starts with a zstd, xz, lz4 (frame format) or gzip magic. */
bool core_is_compressed(const unsigned char *data, size_t len);

/* Decompress DATA into an unlinked temporary file (in $TMPDIR, zero pages
 * left sparse) mapped read-only at *OUT (caller munmaps *OUT_LEN bytes).
 * Non-zero output beyond 512 times the input (at least 256 MiB) is refused
 * as a compression bomb.  PATH names the input in error messages. */
struct core_error *core_decompress(const char *path, const unsigned char *data, size_t len,
				   unsigned char **out, size_t *out_len);

#endif
