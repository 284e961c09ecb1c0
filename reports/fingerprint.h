/* Core identity for ingest: a cheap, collision-safe fingerprint.
 *
 * Reading every byte of a sparse multi-gigabyte core to decide "already
 * ingested?" is too slow, so the fingerprint is the SHA-256 of:
 *   "asyncore-core-fp1", the file size (8 bytes, little-endian),
 *   the first 4 KiB (ELF header), the program header table,
 *   every PT_NOTE segment (threads' registers, siginfo, pid, auxv, NT_FILE;
 *   at most 64 MiB in all), 16 blocks of 4 KiB sampled at evenly spaced
 *   offsets, and the last 4 KiB.
 * The notes alone differ between any two crashes (pid, registers, fault
 * address); the samples catch cores rewritten in place.  A compressed core
 * is fingerprinted as the file it is.  See reports/SCHEMA.md. */
#ifndef REPORTS_FINGERPRINT_H
#define REPORTS_FINGERPRINT_H

#include <stddef.h>
#include <stdint.h>

struct rep_sha256 {
	uint32_t state[8];
	uint64_t length;            /* bytes hashed so far */
	unsigned char block[64];
	size_t used;
};

void rep_sha256_init(struct rep_sha256 *ctx);
void rep_sha256_update(struct rep_sha256 *ctx, const void *data, size_t len);
/* Write the digest as 64 lower-case hex digits and a NUL into HEX. */
void rep_sha256_final(struct rep_sha256 *ctx, char hex[65]);

/* Fingerprint the core at PATH into HEX (64 hex digits) and its size into
 * *SIZE.  Returns 0, or -1 with a one-line reason in WHY. */
int rep_core_fingerprint(const char *path, char hex[65], uint64_t *size, char *why, size_t whylen);

#endif
