/* SHA-256 (FIPS 180-4) through nettle, which uses the CPU's SHA extensions
 * where there are any (hashing a multi-GB core is the cost of `sha256`). */
#ifndef BASE_SHA256_H
#define BASE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include <nettle/sha2.h>

struct base_sha256 {
	struct sha256_ctx nettle;
};

void base_sha256_init(struct base_sha256 *ctx);
void base_sha256_update(struct base_sha256 *ctx, const void *data, size_t len);
/* Write the digest as 64 lower-case hex digits and a NUL into HEX. */
void base_sha256_final(struct base_sha256 *ctx, char hex[65]);

#endif
