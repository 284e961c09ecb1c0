#include "sha256.h"

#include <stdio.h>

void base_sha256_init(struct base_sha256 *ctx)
{
	sha256_init(&ctx->nettle);
}

void base_sha256_update(struct base_sha256 *ctx, const void *data, size_t len)
{
	sha256_update(&ctx->nettle, len, data);
}

void base_sha256_final(struct base_sha256 *ctx, char hex[65])
{
	uint8_t digest[SHA256_DIGEST_SIZE];
	sha256_digest(&ctx->nettle, sizeof(digest), digest);
	for (size_t i = 0; i < sizeof(digest); i++)
		snprintf(hex + 2 * i, 3, "%02x", digest[i]);
}
