#include "identity.h"

#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sha256.h"

#define FP_HEAD 4096
#define FP_BLOCK 4096
#define FP_SAMPLES 16
#define FP_NOTES_MAX (64u * 1024 * 1024)

/* Hash [OFF, OFF+LEN) of the decompressed core, clipped to its end. */
static void hash_range(struct core_sha256 *ctx, const struct core *core, uint64_t off, uint64_t len)
{
	if (off >= core->data_size)
		return;
	if (len > core->data_size - off)
		len = core->data_size - off;
	core_sha256_update(ctx, core->data + off, (size_t)len);
}

/* The program header table and the PT_NOTE segments, within budget. */
static void hash_notes(struct core_sha256 *ctx, const struct core *core)
{
	GElf_Ehdr eh;
	size_t phnum;
	uint64_t budget = FP_NOTES_MAX;
	if (!gelf_getehdr(core->elf, &eh) || elf_getphdrnum(core->elf, &phnum) != 0)
		return;
	hash_range(ctx, core, eh.e_phoff, (uint64_t)phnum * eh.e_phentsize);
	for (size_t i = 0; i < phnum && budget; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(core->elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		uint64_t len = ph.p_filesz < budget ? ph.p_filesz : budget;
		budget -= len;
		hash_range(ctx, core, ph.p_offset, len);
	}
}

static void fingerprint(const struct core *core, char hex[65])
{
	struct core_sha256 ctx;
	uint64_t sz = core->data_size;
	unsigned char le[8];
	for (int i = 0; i < 8; i++)
		le[i] = (unsigned char)(sz >> (8 * i));
	core_sha256_init(&ctx);
	core_sha256_update(&ctx, "asyncore-core-fp2", 18);   /* scheme version */
	core_sha256_update(&ctx, le, sizeof(le));
	hash_range(&ctx, core, 0, FP_HEAD);
	hash_notes(&ctx, core);
	for (uint64_t k = 1; k <= FP_SAMPLES; k++)
		hash_range(&ctx, core, sz / (FP_SAMPLES + 1) * k / FP_BLOCK * FP_BLOCK, FP_BLOCK);
	if (sz > FP_BLOCK)
		hash_range(&ctx, core, sz - FP_BLOCK, FP_BLOCK);
	core_sha256_final(&ctx, hex);
}

bool core_file_sha256(const char *path, char hex[65])
{
	struct core_sha256 ctx;
	unsigned char buf[1 << 16];
	int fd = core_open_regular(path);
	if (fd < 0)
		return false;
	core_sha256_init(&ctx);
	for (;;) {
		ssize_t got = read(fd, buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int saved = errno;
			close(fd);
			errno = saved;
			return false;
		}
		if (got == 0)
			break;
		core_sha256_update(&ctx, buf, (size_t)got);
	}
	close(fd);
	core_sha256_final(&ctx, hex);
	return true;
}

static bool all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return n > 0;
}

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789abcdef", s[i]) || s[i] == '\0')
			return false;
	return n > 0;
}

bool core_usec_iso8601(uint64_t usec, char out[32])
{
	time_t secs = (time_t)(usec / 1000000);
	struct tm tm;
	char whole[24];
	if (usec / 1000000 > (uint64_t)INT64_MAX / 2 || !gmtime_r(&secs, &tm) ||
	    strftime(whole, sizeof(whole), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		return false;
	snprintf(out, 32, "%s.%06" PRIu64 "Z", whole, usec % 1000000);
	return true;
}

/* The decimal number in S[0, N) into *OUT, at most MAX; false otherwise. */
static bool parse_decimal(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	if (!all_digits(s, n) || n > 20)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

bool core_coredump_name_parse(const char *path, struct core_coredump_name *out)
{
	static const char *const exts[] = {".zst", ".xz", ".lz4", ".gz"};
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t len = strlen(base);
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		size_t n = strlen(exts[i]);
		if (len > n && strcmp(base + len - n, exts[i]) == 0) {
			len -= n;
			break;
		}
	}
	if (len < 5 || strncmp(base, "core.", 5) != 0)
		return false;
	/* From the right: USEC, PID, BOOTID (32 hex digits), UID; COMM may hold dots. */
	const char *end = base + len, *field[4];
	size_t flen[4];
	for (int k = 0; k < 4; k++) {
		const char *dot = end;
		while (dot > base + 4 && dot[-1] != '.')
			dot--;
		if (dot <= base + 5)
			return false;
		field[k] = dot;
		flen[k] = (size_t)(end - dot);
		end = dot - 1;
	}
	uint64_t usec, pid, uid;
	if (!parse_decimal(field[0], flen[0], UINT64_MAX, &usec) ||
	    !parse_decimal(field[1], flen[1], INT32_MAX, &pid) || flen[2] != 32 ||
	    !all_hex(field[2], 32) || !parse_decimal(field[3], flen[3], UINT32_MAX, &uid))
		return false;
	memset(out, 0, sizeof(*out));
	if (!core_usec_iso8601(usec, out->crashed_at))
		return false;
	out->usec = usec;
	out->pid = (int32_t)pid;
	out->uid = (uint32_t)uid;
	memcpy(out->boot_id, field[2], 32);
	return true;
}

void core_identity(struct core *core, struct core_identity *id)
{
	memset(id, 0, sizeof(*id));
	id->has_coredump_name = core_coredump_name_parse(core->path, &id->coredump);
	if (id->has_coredump_name)
		memcpy(id->crashed_at, id->coredump.crashed_at, sizeof(id->crashed_at));
	id->file_size = core->file_size;
	id->size = core->data_size;
	fingerprint(core, id->fingerprint);
}

void core_identity_add_sha256(struct core *core, struct core_identity *id)
{
	id->has_sha256 = core_file_sha256(core->path, id->sha256);
	if (!id->has_sha256)
		core_warn(core, "%s: SHA-256 not computed: %s", core->path, strerror(errno));
}
