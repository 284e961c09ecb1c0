/* Decompression of cores stored compressed (.zst, .xz, .lz4, .gz), recognised by
 * their magic bytes. */
#ifndef COREFILE_DECOMPRESS_H
#define COREFILE_DECOMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* True when DATA starts with a zstd, xz, lz4 (frame format) or gzip magic. */
bool core_is_compressed(const unsigned char *data, size_t len);

/* Decompress the LEN bytes of the compressed file open at IN_FD into an
 * unlinked temporary file (in $TMPDIR, zero pages left sparse), open at
 * *OUT_FD (the caller closes it) and *OUT_LEN bytes long.  Non-zero output
 * beyond 512 times the input (at least 256 MiB) is refused as a compression
 * bomb.  PATH names the input in error messages. */
struct core_error *core_decompress(const char *path, int in_fd, size_t len, int *out_fd,
				   uint64_t *out_len);

#endif
