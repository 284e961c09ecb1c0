/* The bytes a core file saved, read with pread() into a bounded set of
 * pages instead of through the core's mapping: each page fault of a mapping
 * maps up to 16 neighbouring pages as well (the kernel's fault-around), so
 * that following a few hundred threads' stacks through the mapping made tens
 * of MB of the core resident, where the pages read are a few MB. */
#ifndef COREFILE_PAGES_H
#define COREFILE_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct core_pages;

/* A reader of the SIZE bytes of the file open at FD (borrowed: the caller
 * closes it after core_pages_close); NULL when out of memory. */
struct core_pages *core_pages_open(int fd, uint64_t size);

/* Release the reader; NULL is a no-op. */
void core_pages_close(struct core_pages *p);

/* Copy LEN bytes at file offset OFF into BUF; false when the file does not
 * hold them all (past its end, or a read error). */
bool core_pages_read(struct core_pages *p, uint64_t off, void *buf, size_t len);

#endif
