/* Backing files of a core's file mappings (NT_FILE), for the pages the
 * kernel did not save: read-only text and .rodata. */
#ifndef COREFILE_MAPPED_H
#define COREFILE_MAPPED_H

#include "target.h"

/* Set up the (empty) cache; files are opened on first use. */
struct core_error *core_mapped_init(struct core *core);
void core_mapped_deinit(struct core *core);

/* A mapped file that exists but is not a regular file (a fifo, a device)
 * would block or misbehave when opened, by us or by libdwfl, which opens
 * NT_FILE and link-map names itself.  Mark such files missing and blank
 * every copy of their path in a private copy of the core, which libdwfl
 * then reads, with a warning. */
void core_mapped_guard(struct core *core);

/* Serve up to LEN bytes at ADDR from the file mapped there, when that file
 * exists and agrees with the core.  Returns the bytes served (0: none). */
size_t core_mapped_read(struct core *core, uint64_t addr, void *buf, size_t len);

/* A file mapping the core does not list (a core without NT_FILE, as
 * qemu-user writes) but the analysis found: the file at PATH, a path on
 * this machine, is mapped at [START, END) from file offset OFFSET; it
 * serves the pages there the core did not save, as an NT_FILE mapping's
 * file does. */
struct core_error *core_mapped_learn(struct core *core, uint64_t start, uint64_t end,
				     uint64_t offset, const char *path);

/* Where the backing file of RECORDED_PATH is read from (replacement, sysroot
 * or the recorded path), or NULL when it is missing or does not match the
 * core.  Borrowed from the core. */
const char *core_mapped_resolve(struct core *core, const char *recorded_path);

/* Look up NT_FILE paths under SYSROOT first (copied). */
void core_set_sysroot(struct core *core, const char *sysroot);

/* Serve unsaved pages of the mapping recorded as RECORDED_PATH from
 * REPLACEMENT instead (a binary given on the command line). */
struct core_error *core_set_file_replacement(struct core *core, const char *recorded_path,
					     const char *replacement);

#endif
