/* The bytes of a core file by file offset.
 *
 * A core is read with pread() through a small page cache, not mapped: once
 * mapped, every page near one that was read counts in the process's resident
 * set (the kernel maps up to 64 KiB of page cache around each fault), so a
 * core of many small segments (a bRPC server's thousands of bthread stacks,
 * each touched once by libdwfl and by the unwinder) becomes resident whole.
 * Read through the cache, the resident cost is the cache. */
#ifndef COREFILE_IMAGE_H
#define COREFILE_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct core_image;

/* An image of the SIZE bytes of the file open at FD, which it takes over
 * (closed by core_image_destroy(), also when this fails).  NULL when out of
 * memory. */
struct core_image *core_image_create(int fd, uint64_t size);

/* Close the file and free the cache; NULL is a no-op. */
void core_image_destroy(struct core_image *img);

/* The file descriptor (owned by the image), for readers that pread
 * themselves (libelf's ELF_C_READ). */
int core_image_fd(const struct core_image *img);

/* Read LEN bytes of the file open at FD from offset OFF into BUF, across
 * short reads and interruptions; false when they cannot all be read. */
bool core_pread_full(int fd, void *buf, size_t len, uint64_t off);

/* Copy LEN bytes at file offset OFF into BUF; false when they are not all
 * in the file or the file cannot be read. */
bool core_image_read(struct core_image *img, uint64_t off, void *buf, size_t len);

/* The same without the page cache: for a reader that keeps its own window
 * over a long run of the file (the notes), whose pages it would only evict. */
bool core_image_read_direct(struct core_image *img, uint64_t off, void *buf, size_t len);

/* Map the whole image privately and read-only, and read through that
 * mapping from now on: read-only, it does not count as the process's data
 * (RLIMIT_DATA, --max-memory); core_image_writable() makes a page of it
 * writable (copy-on-write: the file never changes).  Returns the mapping,
 * owned by the image, or NULL when it cannot be mapped. */
unsigned char *core_image_map_private(struct core_image *img);

/* Make the page of the private mapping that holds file offset OFF writable
 * (only what is written there counts as the process's data); false when it
 * cannot be (no mapping, OFF outside it). */
bool core_image_writable(struct core_image *img, uint64_t off);

#endif
