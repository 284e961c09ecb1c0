#include "image.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* 256 pages of 4 KiB: an unwinder's reads stay within a page or two of a
 * stack, and a walk of a pool reads it in order.  Page P lives in slot
 * P % SLOTS, so consecutive pages never evict each other. */
enum { PAGE = 4096, SLOTS = 256, DIRECT_READ = 4 * PAGE };

struct core_image {
	int fd;
	uint64_t size;
	unsigned char *map;         /* core_image_map_private(), or NULL */
	unsigned char *pages;       /* SLOTS * PAGE, allocated on the first cached read */
	uint64_t tags[SLOTS];       /* page number + 1 held by each slot; 0: empty */
};

struct core_image *core_image_create(int fd, uint64_t size)
{
	struct core_image *img = calloc(1, sizeof(*img));
	if (!img) {
		close(fd);
		return NULL;
	}
	img->fd = fd;
	img->size = size;
	return img;
}

void core_image_destroy(struct core_image *img)
{
	if (!img)
		return;
	if (img->map)
		munmap(img->map, (size_t)img->size);
	free(img->pages);
	close(img->fd);
	free(img);
}

int core_image_fd(const struct core_image *img)
{
	return img->fd;
}

bool core_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	unsigned char *p = buf;
	while (len > 0) {
		ssize_t got = pread(fd, p, len, (off_t)off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return false;
		p += got;
		len -= (size_t)got;
		off += (uint64_t)got;
	}
	return true;
}

/* The slot holding page PAGE_NO, read from the file when it is not cached. */
static const unsigned char *cached_page(struct core_image *img, uint64_t page_no)
{
	if (!img->pages) {
		img->pages = malloc((size_t)SLOTS * PAGE);
		if (!img->pages)
			return NULL;
	}
	size_t slot = (size_t)(page_no % SLOTS);
	unsigned char *p = img->pages + slot * PAGE;
	if (img->tags[slot] == page_no + 1)
		return p;
	uint64_t off = page_no * PAGE;
	uint64_t left = img->size - off;
	img->tags[slot] = 0;
	if (!core_pread_full(img->fd, p, left < PAGE ? (size_t)left : PAGE, off))
		return NULL;
	img->tags[slot] = page_no + 1;
	return p;
}

bool core_image_read(struct core_image *img, uint64_t off, void *buf, size_t len)
{
	if (off > img->size || len > img->size - off)
		return false;
	if (img->map) {
		memcpy(buf, img->map + off, len);
		return true;
	}
	if (len >= DIRECT_READ)
		return core_pread_full(img->fd, buf, len, off);
	unsigned char *out = buf;
	while (len > 0) {
		const unsigned char *page = cached_page(img, off / PAGE);
		if (!page)
			return false;
		size_t in_page = (size_t)(off % PAGE);
		size_t n = PAGE - in_page < len ? PAGE - in_page : len;
		memcpy(out, page + in_page, n);
		out += n;
		off += n;
		len -= n;
	}
	return true;
}

bool core_image_read_direct(struct core_image *img, uint64_t off, void *buf, size_t len)
{
	if (off > img->size || len > img->size - off)
		return false;
	if (img->map) {
		memcpy(buf, img->map + off, len);
		return true;
	}
	return core_pread_full(img->fd, buf, len, off);
}

unsigned char *core_image_map_private(struct core_image *img)
{
	if (img->map || img->size == 0 || img->size > SIZE_MAX)
		return img->map;
	void *p = mmap(NULL, (size_t)img->size, PROT_READ, MAP_PRIVATE, img->fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	img->map = p;
	return img->map;
}

bool core_image_writable(struct core_image *img, uint64_t off)
{
	if (!img->map || off >= img->size)
		return false;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t at = ((uintptr_t)img->map + (uintptr_t)off) & ~(page - 1);
	return mprotect((void *)at, page, PROT_READ | PROT_WRITE) == 0;
}
