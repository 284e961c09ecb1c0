#include "pages.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE_SIZE_BYTES 4096u
#define PAGE_SLOTS 2048u            /* at most 8 MiB of pages kept */
#define DIRECT_READ 65536u          /* larger reads are not kept */

struct core_pages {
	int fd;
	uint64_t size;
	uint64_t page[PAGE_SLOTS];      /* page number + 1 held in the slot; 0: none */
	unsigned char *data[PAGE_SLOTS];
	size_t len[PAGE_SLOTS];         /* bytes of the page the file has */
};

struct core_pages *core_pages_open(int fd, uint64_t size)
{
	struct core_pages *p = calloc(1, sizeof(*p));
	if (p) {
		p->fd = fd;
		p->size = size;
	}
	return p;
}

void core_pages_close(struct core_pages *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < PAGE_SLOTS; i++)
		free(p->data[i]);
	free(p);
}

/* All LEN bytes at OFF, retrying short reads; false on an error or EOF. */
static bool read_fully(int fd, uint64_t off, unsigned char *buf, size_t len)
{
	while (len > 0) {
		ssize_t got = pread(fd, buf, len, (off_t)off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return false;
		buf += got;
		off += (uint64_t)got;
		len -= (size_t)got;
	}
	return true;
}

/* The slot holding page PAGE, read in when it is not there; *OK false on
 * an error. */
static size_t page_slot(struct core_pages *p, uint64_t page, bool *ok)
{
	size_t i = (size_t)(page % PAGE_SLOTS);
	*ok = true;
	if (p->page[i] == page + 1)
		return i;
	if (!p->data[i] && !(p->data[i] = malloc(PAGE_SIZE_BYTES))) {
		*ok = false;
		return i;
	}
	uint64_t off = page * PAGE_SIZE_BYTES;
	size_t len = p->size - off < PAGE_SIZE_BYTES ? (size_t)(p->size - off) : PAGE_SIZE_BYTES;
	p->page[i] = 0;
	if (!read_fully(p->fd, off, p->data[i], len)) {
		*ok = false;
		return i;
	}
	p->page[i] = page + 1;
	p->len[i] = len;
	return i;
}

bool core_pages_read(struct core_pages *p, uint64_t off, void *buf, size_t len)
{
	if (off > p->size || len > p->size - off)
		return false;
	if (len >= DIRECT_READ)
		return read_fully(p->fd, off, buf, len);
	unsigned char *out = buf;
	while (len > 0) {
		uint64_t page = off / PAGE_SIZE_BYTES;
		size_t in_page = (size_t)(off % PAGE_SIZE_BYTES);
		bool ok;
		size_t i = page_slot(p, page, &ok);
		if (!ok || in_page >= p->len[i])
			return false;
		size_t n = p->len[i] - in_page < len ? p->len[i] - in_page : len;
		memcpy(out, p->data[i] + in_page, n);
		out += n;
		off += n;
		len -= n;
	}
	return true;
}
