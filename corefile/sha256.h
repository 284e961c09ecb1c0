/* SHA-256 (FIPS 180-4): none of the libraries asyncore links offers it, so
 * it is here, checked against the FIPS test vectors (tests/unit). */
#ifndef COREFILE_SHA256_H
#define COREFILE_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct core_sha256 {
	uint32_t state[8];
	uint64_t length;            /* bytes hashed so far */
	unsigned char block[64];
	size_t used;
};

void core_sha256_init(struct core_sha256 *ctx);
void core_sha256_update(struct core_sha256 *ctx, const void *data, size_t len);
/* Write the digest as 64 lower-case hex digits and a NUL into HEX. */
void core_sha256_final(struct core_sha256 *ctx, char hex[65]);

#endif
