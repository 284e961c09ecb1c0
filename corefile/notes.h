/* Parsing of a core's PT_NOTE contents into struct core. */
#ifndef COREFILE_NOTES_H
#define COREFILE_NOTES_H

#include "target.h"

/* Parse the notes in BUF[0..LEN) (one PT_NOTE segment) into CORE: threads,
 * siginfo, psinfo, auxv and mapped files.  Malformed notes become warnings on
 * CORE; returns an error only on out-of-memory. */
struct core_error *core_parse_notes(struct core *core, const unsigned char *buf, size_t len);

/* The GNU build-id among the LEN bytes of the ELF notes at NOTES into
 * ID[0, *ID_LEN); *ID_LEN is 0 when they hold none. */
void core_notes_build_id(const unsigned char *notes, size_t len, unsigned char id[CORE_BUILD_ID_MAX],
			 size_t *id_len);

struct core_image;

/* The same for the LEN bytes of notes at file offset OFF of IMG, read
 * through a small window: never the whole segment at once (the FPU and
 * XSAVE states of thousands of threads are megabytes), and a descriptor
 * larger than the window only when it is parsed.  Also an error when they
 * cannot be read. */
struct core_error *core_parse_notes_at(struct core *core, struct core_image *img, uint64_t off,
				       size_t len);

#define CORE_SAVED_NOTES_MAX 65536u     /* bytes of a PT_NOTE searched, at most */

/* The GNU build-id (NT_GNU_BUILD_ID, owner "GNU") among the notes the core
 * saved (core_read_saved) at [AT, AT + SIZE) of the target's memory, a
 * loaded object's PT_NOTE, into ID[0, *LEN); *LEN is 0 when they hold none
 * of 1 to CORE_BUILD_ID_MAX bytes.  False when the core did not save them,
 * or SIZE is less than a note header or more than CORE_SAVED_NOTES_MAX. */
bool core_saved_build_id(const struct core *core, uint64_t at, uint64_t size,
			 unsigned char id[CORE_BUILD_ID_MAX], size_t *len);

#endif
