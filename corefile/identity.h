/* A core's identity: what it is, independent of its name or compression.
 *
 * The fingerprint is the SHA-256 of, over the DECOMPRESSED core:
 *   "asyncore-core-fp2", the decompressed size (8 bytes, little-endian),
 *   the first 4 KiB (ELF header), the program header table, every PT_NOTE
 *   segment (threads' registers, siginfo, pid, auxv, NT_FILE; at most
 *   64 MiB in all), 16 blocks of 4 KiB sampled at evenly spaced offsets,
 *   and the last 4 KiB.
 * The notes alone differ between any two crashes (pid, registers, fault
 * address); the samples catch cores rewritten in place.  A core and its
 * .zst/.xz/.gz copy share one fingerprint.  Cheap on multi-GB cores: it
 * reads about 64 KiB beyond the notes.  reports/SCHEMA.md documents it.
 * A minicore's fingerprint is that of the core it was cut from (its
 * CORE_NOTE_SOURCE note), so both are one crash. */
#ifndef COREFILE_IDENTITY_H
#define COREFILE_IDENTITY_H

#include <stdbool.h>
#include <stdint.h>

#include "target.h"

/* The fields systemd-coredump writes into a core's file name,
 * core.COMM.UID.BOOTID.PID.USEC[.zst|.xz|.lz4|.gz]. */
struct core_coredump_name {
	uint32_t uid;               /* the crashed process's UID as the host sees it */
	char boot_id[33];           /* 32 lower-case hex digits */
	int32_t pid;                /* as the host sees it */
	uint64_t usec;              /* crash time, microseconds since the epoch */
	char crashed_at[32];        /* USEC as ISO 8601 UTC with microseconds */
};

struct core_identity {
	uint64_t file_size;         /* the file as given (compressed or not) */
	uint64_t size;              /* the decompressed core */
	char fingerprint[65];       /* hex */
	char crashed_at[32];        /* ISO 8601 UTC, "" when the name does not say */
	struct core_coredump_name coredump;   /* when has_coredump_name */
	bool has_coredump_name;
};

/* Parse PATH's file name as systemd-coredump writes it into *OUT; false
 * when it is not such a name (COMM may hold dots; UID, PID and USEC are
 * decimal, BOOTID 32 hex digits). */
bool core_coredump_name_parse(const char *path, struct core_coredump_name *out);

/* USEC (microseconds since the epoch) as ISO 8601 UTC with microseconds
 * ("2023-11-14T22:13:20.123456Z") into OUT; false when out of range. */
bool core_usec_iso8601(uint64_t usec, char out[32]);

/* Fill *ID for CORE: sizes, fingerprint and crash time; not the SHA-256. */
void core_identity(struct core *core, struct core_identity *id);

/* The same without the fingerprint (fingerprint ""): it reads every note
 * of the core, 660 KB for 201 threads, for the reports that show it. */
void core_identity_basic(struct core *core, struct core_identity *id);

/* Start computing the SHA-256 of CORE's file as given (it reads the whole
 * file) on a thread of its own, so that it overlaps the analysis: on a
 * large core it costs as much as the rest of a report.  The core owns the
 * computation; core_close() waits for it when no one collected it. */
void core_identity_add_sha256(struct core *core);

/* Wait for the SHA-256 core_identity_add_sha256() started and copy it
 * into HEX: true when it was computed; false when none was started, or the
 * file could not be read (then a warning is added to the core). */
bool core_identity_wait_sha256(struct core *core, char hex[65]);

/* SHA-256 of the file at PATH into HEX; false (errno set) when unreadable. */
bool core_file_sha256(const char *path, char hex[65]);

#endif
