#include "identity.h"

#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../base/sha256.h"
#include "image.h"

#define FP_HEAD 4096
#define FP_BLOCK 4096
#define FP_SAMPLES 16
#define FP_NOTES_MAX (64u * 1024 * 1024)

/* Hash [OFF, OFF+LEN) of the decompressed core, clipped to its end (a
 * part that cannot be read hashes as missing). */
static void hash_range(struct base_sha256 *ctx, const struct core *core, uint64_t off, uint64_t len)
{
	unsigned char buf[1 << 16];
	if (off >= core->data_size)
		return;
	if (len > core->data_size - off)
		len = core->data_size - off;
	while (len > 0) {
		size_t n = len < sizeof(buf) ? (size_t)len : sizeof(buf);
		if (!core_image_read(core->image, off, buf, n))
			return;
		base_sha256_update(ctx, buf, n);
		off += n;
		len -= n;
	}
}

/* The program header table and the PT_NOTE segments, within budget. */
static void hash_notes(struct base_sha256 *ctx, const struct core *core)
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
	if (core->source_fingerprint[0]) {   /* a minicore is its source's crash */
		memcpy(hex, core->source_fingerprint, 65);
		return;
	}
	struct base_sha256 ctx;
	uint64_t sz = core->data_size;
	unsigned char le[8];
	for (int i = 0; i < 8; i++)
		le[i] = (unsigned char)(sz >> (8 * i));
	base_sha256_init(&ctx);
	base_sha256_update(&ctx, "asyncore-core-fp2", 18);   /* scheme version */
	base_sha256_update(&ctx, le, sizeof(le));
	hash_range(&ctx, core, 0, FP_HEAD);
	hash_notes(&ctx, core);
	for (uint64_t k = 1; k <= FP_SAMPLES; k++)
		hash_range(&ctx, core, sz / (FP_SAMPLES + 1) * k / FP_BLOCK * FP_BLOCK, FP_BLOCK);
	if (sz > FP_BLOCK)
		hash_range(&ctx, core, sz - FP_BLOCK, FP_BLOCK);
	base_sha256_final(&ctx, hex);
}

/* Hash LEN bytes of FD from OFF; false (errno set) on a read error.  A file
 * that ends early ends the hash there, as reading it to its end would. */
static bool hash_data(struct base_sha256 *ctx, int fd, uint64_t off, uint64_t len, bool *at_end)
{
	unsigned char buf[1 << 16];
	while (len > 0) {
		size_t want = len < sizeof(buf) ? (size_t)len : sizeof(buf);
		ssize_t got = pread(fd, buf, want, (off_t)off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return false;
		if (got == 0) {
			*at_end = true;
			return true;
		}
		base_sha256_update(ctx, buf, (size_t)got);
		off += (uint64_t)got;
		len -= (uint64_t)got;
	}
	return true;
}

/* Zeros, for the holes of a sparse file: a core is mostly holes, and
 * hashing them from here spares reading them. */
static void hash_zeros(struct base_sha256 *ctx, uint64_t len)
{
	static const unsigned char zeros[1 << 16];
	while (len > 0) {
		size_t n = len < sizeof(zeros) ? (size_t)len : sizeof(zeros);
		base_sha256_update(ctx, zeros, n);
		len -= n;
	}
}

/* The next data at or after OFF in FD (SIZE when only a hole is left; OFF
 * when the file system cannot tell), and where that data ends. */
static void next_data(int fd, uint64_t off, uint64_t size, uint64_t *data, uint64_t *hole)
{
	off_t d = lseek(fd, (off_t)off, SEEK_DATA);
	if (d < 0) {
		*data = errno == ENXIO ? size : off;
		*hole = size;
		return;
	}
	off_t h = lseek(fd, d, SEEK_HOLE);
	*data = (uint64_t)d < size ? (uint64_t)d : size;
	*hole = h < 0 || (uint64_t)h > size ? size : (uint64_t)h;
}

bool core_file_sha256(const char *path, char hex[65])
{
	struct base_sha256 ctx;
	struct stat st;
	int fd = core_open_regular(path);
	if (fd < 0)
		return false;
	bool ok = fstat(fd, &st) == 0, at_end = false;
	uint64_t size = ok ? (uint64_t)st.st_size : 0, off = 0;
	base_sha256_init(&ctx);
	while (ok && !at_end && off < size) {
		uint64_t data, hole;
		next_data(fd, off, size, &data, &hole);
		hash_zeros(&ctx, data - off);
		ok = hash_data(&ctx, fd, data, hole - data, &at_end);
		off = hole;
	}
	/* Whatever the file gained since fstat. */
	if (ok && !at_end)
		ok = hash_data(&ctx, fd, off, UINT64_MAX - off, &at_end);
	int saved = errno;
	close(fd);
	errno = saved;
	if (ok)
		base_sha256_final(&ctx, hex);
	return ok;
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

void core_identity_basic(struct core *core, struct core_identity *id)
{
	memset(id, 0, sizeof(*id));
	id->has_coredump_name = core_coredump_name_parse(core->path, &id->coredump);
	if (id->has_coredump_name)
		memcpy(id->crashed_at, id->coredump.crashed_at, sizeof(id->crashed_at));
	id->file_size = core->file_size;
	id->size = core->data_size;
}

void core_identity(struct core *core, struct core_identity *id)
{
	core_identity_basic(core, id);
	fingerprint(core, id->fingerprint);
}

struct core_sha256_job {
	char *path;
	pthread_t thread;
	bool started;               /* THREAD runs (else the result is already here) */
	bool ok;
	int error;                  /* errno of a failed read */
	char hex[65];
};

static void *sha256_run(void *arg)
{
	struct core_sha256_job *job = arg;
	job->ok = core_file_sha256(job->path, job->hex);
	job->error = job->ok ? 0 : errno;
	return NULL;
}

void core_identity_add_sha256(struct core *core)
{
	if (core->sha256_job)
		return;         /* already under way */
	struct core_sha256_job *job = calloc(1, sizeof(*job));
	if (job)
		job->path = strdup(core->path);
	if (!job || !job->path) {
		free(job);
		core_warn(core, "%s: SHA-256 not computed: out of memory", core->path);
		return;
	}
	job->started = pthread_create(&job->thread, NULL, sha256_run, job) == 0;
	if (!job->started)
		sha256_run(job);
	core->sha256_job = job;
}

bool core_identity_wait_sha256(struct core *core, char hex[65])
{
	struct core_sha256_job *job = core->sha256_job;
	if (!job)
		return false;
	if (job->started)
		pthread_join(job->thread, NULL);
	core->sha256_job = NULL;
	bool ok = job->ok;
	if (ok)
		memcpy(hex, job->hex, 65);
	else
		core_warn(core, "%s: SHA-256 not computed: %s", core->path, strerror(job->error));
	free(job->path);
	free(job);
	return ok;
}
