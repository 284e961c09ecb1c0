#include "decompress.h"

#include <errno.h>
#include <fcntl.h>
#include <lz4frame.h>
#include <lzma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

enum codec { CODEC_NONE, CODEC_ZSTD, CODEC_XZ, CODEC_LZ4, CODEC_GZIP };

enum {
	CHUNK = 1 << 20,
	BLOCK = 4096,
	/* Non-zero output allowed per input byte, beyond a floor: far above what
	 * a real core compresses to, far below what a crafted stream expands to. */
	MAX_RATIO = 512,
};
#define MIN_LIMIT ((uint64_t)256 << 20)

static enum codec detect(const unsigned char *d, size_t len)
{
	if (len >= 4 && memcmp(d, "\x28\xb5\x2f\xfd", 4) == 0)
		return CODEC_ZSTD;
	if (len >= 6 && memcmp(d, "\xfd" "7zXZ\0", 6) == 0)
		return CODEC_XZ;
	if (len >= 4 && memcmp(d, "\x04\x22\x4d\x18", 4) == 0)   /* lz4 frame format */
		return CODEC_LZ4;
	if (len >= 2 && d[0] == 0x1f && d[1] == 0x8b)
		return CODEC_GZIP;
	return CODEC_NONE;
}

bool core_is_compressed(const unsigned char *data, size_t len)
{
	return detect(data, len) != CODEC_NONE;
}

/* Decompressed output goes to an unlinked temporary file, written sparsely:
 * a core is mostly zero pages, and its size is bounded by the disk, not by
 * memory.  Only non-zero bytes count against the limit. */
struct sink {
	int fd;
	uint64_t len;
	uint64_t stored, limit;
	unsigned char *chunk;
	const char *error;
};

static int temp_file(void)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || errno != EOPNOTSUPP)
		return fd;
	char path[4096];
	snprintf(path, sizeof(path), "%s/asyncore-core-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd >= 0)
		unlink(path);
	return fd;
}

static bool all_zero(const unsigned char *p, size_t n)
{
	static const unsigned char zero[BLOCK];
	return memcmp(p, zero, n) == 0;
}

/* Append N bytes from the sink's chunk to the file. */
static bool sink_flush(struct sink *s, size_t n)
{
	for (size_t off = 0; off < n; off += BLOCK) {
		size_t k = n - off < BLOCK ? n - off : BLOCK;
		const unsigned char *p = s->chunk + off;
		if (!all_zero(p, k)) {
			s->stored += k;
			if (s->stored > s->limit) {
				s->error = "decompressed data exceeds the size limit (a compression bomb?)";
				return false;
			}
			if (pwrite(s->fd, p, k, (off_t)(s->len + off)) != (ssize_t)k) {
				s->error = "cannot write the decompressed core to the temporary directory";
				return false;
			}
		}
	}
	s->len += n;
	return true;
}

static const char *zstd_run(const unsigned char *d, size_t len, struct sink *s)
{
	ZSTD_DStream *z = ZSTD_createDStream();
	if (!z)
		return "out of memory";
	const char *err = NULL;
	ZSTD_inBuffer in = { d, len, 0 };
	size_t ret = 1;
	while (!err && (in.pos < in.size || ret != 0)) {
		ZSTD_outBuffer out = { s->chunk, CHUNK, 0 };
		ret = ZSTD_decompressStream(z, &out, &in);
		if (ZSTD_isError(ret))
			err = ZSTD_getErrorName(ret);
		else if (!sink_flush(s, out.pos))
			err = s->error;
		else if (in.pos == in.size && out.pos == 0 && ret != 0)
			err = "truncated zstd stream";
	}
	ZSTD_freeDStream(z);
	return err;
}

static const char *xz_run(const unsigned char *d, size_t len, struct sink *s)
{
	lzma_stream z = LZMA_STREAM_INIT;
	if (lzma_stream_decoder(&z, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
		return "cannot start the xz decoder";
	const char *err = NULL;
	z.next_in = d;
	z.avail_in = len;
	for (;;) {
		z.next_out = s->chunk;
		z.avail_out = CHUNK;
		lzma_ret r = lzma_code(&z, LZMA_FINISH);
		if (!sink_flush(s, CHUNK - z.avail_out)) {
			err = s->error;
			break;
		}
		if (r == LZMA_STREAM_END)
			break;
		if (r != LZMA_OK) {
			err = "corrupt or truncated xz stream";
			break;
		}
	}
	lzma_end(&z);
	return err;
}

/* One or more concatenated lz4 frames, as systemd-coredump and lz4(1)
 * write them. */
static const char *lz4_run(const unsigned char *d, size_t len, struct sink *s)
{
	LZ4F_dctx *z = NULL;
	if (LZ4F_isError(LZ4F_createDecompressionContext(&z, LZ4F_VERSION)))
		return "cannot start the lz4 decoder";
	const char *err = NULL;
	size_t pos = 0;
	while (!err) {
		size_t in_n = len - pos, out_n = CHUNK;
		size_t ret = LZ4F_decompress(z, s->chunk, &out_n, d + pos, &in_n, NULL);
		if (LZ4F_isError(ret)) {
			err = "corrupt lz4 stream";
			break;
		}
		pos += in_n;
		if (!sink_flush(s, out_n))
			err = s->error;
		else if (ret == 0 && pos == len)
			break;   /* the last frame is complete */
		else if (in_n == 0 && out_n == 0)
			err = "truncated lz4 stream";
	}
	LZ4F_freeDecompressionContext(z);
	return err;
}

static const char *gzip_run(const unsigned char *d, size_t len, struct sink *s)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return "cannot start the gzip decoder";
	const char *err = NULL;
	size_t consumed = 0;
	for (;;) {
		size_t in_now = len - consumed > (1u << 30) ? (1u << 30) : len - consumed;
		z.next_in = (unsigned char *)d + consumed;
		z.avail_in = (uInt)in_now;
		z.next_out = s->chunk;
		z.avail_out = CHUNK;
		int r = inflate(&z, Z_NO_FLUSH);
		consumed += in_now - z.avail_in;
		if (!sink_flush(s, CHUNK - z.avail_out)) {
			err = s->error;
			break;
		}
		if (r == Z_STREAM_END)
			break;
		if (r != Z_OK && r != Z_BUF_ERROR) {
			err = "corrupt gzip stream";
			break;
		}
		if (r == Z_BUF_ERROR && consumed == len) {
			err = "truncated gzip stream";
			break;
		}
	}
	inflateEnd(&z);
	return err;
}

static const char *run_codec(const unsigned char *data, size_t len, struct sink *s)
{
	switch (detect(data, len)) {
	case CODEC_ZSTD: return zstd_run(data, len, s);
	case CODEC_XZ: return xz_run(data, len, s);
	case CODEC_LZ4: return lz4_run(data, len, s);
	case CODEC_GZIP: return gzip_run(data, len, s);
	default: return "not a compressed file";
	}
}

struct core_error *core_decompress(const char *path, int in_fd, size_t len, int *out_fd,
				   uint64_t *out_len)
{
	*out_fd = -1;
	struct sink s = { .fd = temp_file(), .chunk = malloc(CHUNK) };
	uint64_t limit = (uint64_t)len * MAX_RATIO;
	s.limit = limit > MIN_LIMIT ? limit : MIN_LIMIT;
	const char *err = NULL;
	void *in = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, in_fd, 0) : MAP_FAILED;
	if (in == MAP_FAILED)
		err = "cannot map the compressed file";
	else if (s.fd < 0)
		err = "cannot create a temporary file (TMPDIR)";
	else if (!s.chunk)
		err = "out of memory";
	else
		err = run_codec(in, len, &s);
	if (in != MAP_FAILED)
		munmap(in, len);
	if (!err && s.len == 0)
		err = "empty after decompression";
	if (!err && (s.len > SIZE_MAX || ftruncate(s.fd, (off_t)s.len) != 0))
		err = "cannot size the decompressed core";
	free(s.chunk);
	if (err) {
		if (s.fd >= 0)
			close(s.fd);
		return core_error_create(CORE_ERROR_FORMAT, "%s: cannot decompress: %s", path, err);
	}
	*out_fd = s.fd;
	*out_len = s.len;
	return NULL;
}
