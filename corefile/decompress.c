#include "decompress.h"

#include <lzma.h>
#include <string.h>
#include <sys/mman.h>
#include <zlib.h>
#include <zstd.h>

enum codec { CODEC_NONE, CODEC_ZSTD, CODEC_XZ, CODEC_GZIP };

static enum codec detect(const unsigned char *d, size_t len)
{
	if (len >= 4 && memcmp(d, "\x28\xb5\x2f\xfd", 4) == 0)
		return CODEC_ZSTD;
	if (len >= 6 && memcmp(d, "\xfd" "7zXZ\0", 6) == 0)
		return CODEC_XZ;
	if (len >= 2 && d[0] == 0x1f && d[1] == 0x8b)
		return CODEC_GZIP;
	return CODEC_NONE;
}

bool core_is_compressed(const unsigned char *data, size_t len)
{
	return detect(data, len) != CODEC_NONE;
}

/* An output buffer that grows by mremap. */
struct outbuf {
	unsigned char *p;
	size_t len, cap;
};

static bool outbuf_reserve(struct outbuf *b, size_t need)
{
	if (b->cap - b->len >= need)
		return true;
	size_t cap = b->cap ? b->cap : (1 << 20);
	while (cap - b->len < need)
		cap *= 2;
	void *p = b->p ? mremap(b->p, b->cap, cap, MREMAP_MAYMOVE)
		       : mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return false;
	b->p = p;
	b->cap = cap;
	return true;
}

static void outbuf_free(struct outbuf *b)
{
	if (b->p)
		munmap(b->p, b->cap);
	b->p = NULL;
}

static const char *zstd_run(const unsigned char *d, size_t len, struct outbuf *b)
{
	ZSTD_DStream *z = ZSTD_createDStream();
	if (!z)
		return "out of memory";
	const char *err = NULL;
	ZSTD_inBuffer in = { d, len, 0 };
	size_t ret = 1;
	while (in.pos < in.size || ret != 0) {
		if (!outbuf_reserve(b, 1 << 20)) { err = "out of memory"; break; }
		ZSTD_outBuffer out = { b->p + b->len, b->cap - b->len, 0 };
		ret = ZSTD_decompressStream(z, &out, &in);
		if (ZSTD_isError(ret)) { err = ZSTD_getErrorName(ret); break; }
		b->len += out.pos;
		if (in.pos == in.size && out.pos == 0 && ret != 0) { err = "truncated zstd stream"; break; }
	}
	ZSTD_freeDStream(z);
	return err;
}

static const char *xz_run(const unsigned char *d, size_t len, struct outbuf *b)
{
	lzma_stream z = LZMA_STREAM_INIT;
	if (lzma_stream_decoder(&z, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
		return "cannot start the xz decoder";
	const char *err = NULL;
	z.next_in = d;
	z.avail_in = len;
	for (;;) {
		if (!outbuf_reserve(b, 1 << 20)) { err = "out of memory"; break; }
		z.next_out = b->p + b->len;
		z.avail_out = b->cap - b->len;
		lzma_ret r = lzma_code(&z, LZMA_FINISH);
		b->len = b->cap - z.avail_out;
		if (r == LZMA_STREAM_END)
			break;
		if (r != LZMA_OK) { err = "corrupt or truncated xz stream"; break; }
	}
	lzma_end(&z);
	return err;
}

static const char *gzip_run(const unsigned char *d, size_t len, struct outbuf *b)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return "cannot start the gzip decoder";
	const char *err = NULL;
	size_t consumed = 0;
	for (;;) {
		if (!outbuf_reserve(b, 1 << 20)) { err = "out of memory"; break; }
		size_t in_now = len - consumed > (1u << 30) ? (1u << 30) : len - consumed;
		z.next_in = (unsigned char *)d + consumed;
		z.avail_in = (uInt)in_now;
		size_t room = b->cap - b->len > (1u << 30) ? (1u << 30) : b->cap - b->len;
		z.next_out = b->p + b->len;
		z.avail_out = (uInt)room;
		int r = inflate(&z, Z_NO_FLUSH);
		consumed += in_now - z.avail_in;
		b->len += room - z.avail_out;
		if (r == Z_STREAM_END)
			break;
		if (r != Z_OK && r != Z_BUF_ERROR) { err = "corrupt gzip stream"; break; }
		if (r == Z_BUF_ERROR && consumed == len) { err = "truncated gzip stream"; break; }
	}
	inflateEnd(&z);
	return err;
}

struct core_error *core_decompress(const char *path, const unsigned char *data, size_t len,
				   unsigned char **out, size_t *out_len)
{
	struct outbuf b = { 0 };
	const char *err;
	switch (detect(data, len)) {
	case CODEC_ZSTD: err = zstd_run(data, len, &b); break;
	case CODEC_XZ: err = xz_run(data, len, &b); break;
	case CODEC_GZIP: err = gzip_run(data, len, &b); break;
	default: err = "not a compressed file"; break;
	}
	if (!err && b.len == 0)
		err = "empty after decompression";
	if (err) {
		outbuf_free(&b);
		return core_error_create(CORE_ERROR_FORMAT, "%s: cannot decompress: %s", path, err);
	}
	/* Trim the mapping to the content so munmap(*OUT, *OUT_LEN) frees it all. */
	*out = b.p;
	if (b.cap > b.len) {
		size_t page = 4096, keep = (b.len + page - 1) & ~(page - 1);
		if (keep < b.cap)
			munmap(b.p + keep, b.cap - keep);
	}
	*out_len = b.len;
	return NULL;
}
