/* Minidumps (Breakpad's, Crashpad's, lldb's): a header "MDMP", then a
 * directory of streams (src/google_breakpad/common/minidump_format.h).  A
 * minidump is one more source of a crashed process's threads, memory and
 * mappings: it is read as the ELF core it describes, written through the
 * core writer (corewrite.h) with every thread's registers (NT_PRSTATUS,
 * the crashing thread first), the exception as NT_SIGINFO, the auxv, the
 * mapped files (NT_FILE), the process's name, and each memory range the
 * minidump holds, so that nothing above corefile/ knows it was one.
 *
 * Everything in the file is untrusted: each stream, count and range is
 * checked against the file; what is damaged or missing is a warning and
 * the rest is still read. */
#ifndef COREFILE_MINIDUMP_H
#define COREFILE_MINIDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct core;

/* Whether the LEN bytes at HEAD begin a minidump. */
bool core_is_minidump(const unsigned char *head, size_t len);

/* The ELF core of the minidump at FD (SIZE bytes) into a new anonymous
 * file: *OUT_FD (the caller's to close) of *OUT_SIZE bytes.  Warnings go
 * to CORE (core_warn), whose path names the minidump.  Fails with
 * CORE_ERROR_FORMAT when the file holds no usable thread list or CPU. */
struct core_error *core_minidump_convert(struct core *core, int fd, uint64_t size, int *out_fd,
					 uint64_t *out_size);

#endif
