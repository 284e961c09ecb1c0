/* A base core in a memfd, overwritten in place and put back: the patch mode
 * of the libFuzzer harnesses (fuzz_core, fuzz_folly, fuzz_recorder) and the
 * mutation driver (mutate.c) share it.
 *
 * The base core's bytes are indexed into regions: the ELF header, program
 * headers and notes; the bytes around each thread's stack pointer; each
 * thread's registers (NT_PRSTATUS pr_reg); each PT_LOAD's file contents (its
 * first 1 MiB); each range named in ASYNCORE_FUZZ_HOT="VADDR:LEN,..."
 * (recorder rings, folly roots, bthreads' TaskMetas and saved contexts). */
#ifndef FUZZ_PATCH_H
#define FUZZ_PATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../analyzer/driver.h"

#define FZ_MAX_REGIONS 512
#define FZ_MAX_UNDO 256

/* Which regions a base's index holds (fz_base_load's WANT). */
enum {
	FZ_REGION_HEAD = 1u << 0,       /* ELF header, program headers, notes */
	FZ_REGION_STACKS = 1u << 1,     /* around each thread's stack pointer */
	FZ_REGION_LOADS = 1u << 2,      /* each PT_LOAD's file contents */
	FZ_REGION_HOT = 1u << 3,        /* ASYNCORE_FUZZ_HOT */
	FZ_REGION_REGS = 1u << 4,       /* each thread's registers */
	FZ_REGION_ALL = 0x1f,
};

struct fz_region {
	uint64_t offset, size;      /* file range of the base core */
};

struct fz_base {
	int fd;                     /* memfd holding the (patched) core */
	const unsigned char *data;  /* the base core's pristine bytes */
	size_t size;
	struct fz_region regions[FZ_MAX_REGIONS];
	size_t nregions;
	uint64_t sps[64];           /* the threads' stack pointers */
	size_t nsps;
	struct {
		uint64_t offset;
		uint32_t len;
	} undo[FZ_MAX_UNDO];
	size_t nundo;
	uint64_t truncated;         /* size the memfd was cut to; 0: whole */
};

/* Load the core at PATH into B, indexing the regions WANT asks for; exits
 * the process with a message when it cannot. */
void fz_base_load(struct fz_base *b, const char *path, unsigned want);

/* File offset of virtual address VADDR in the base core (and the bytes of
 * its segment from there in *ROOM), or -1. */
int64_t fz_base_offset(const struct fz_base *b, uint64_t vaddr, uint64_t *room);

/* Overwrite LEN bytes at file offset AT with BYTES (remembered for
 * fz_base_restore()); false when the undo list is full or it lies outside. */
bool fz_base_write(struct fz_base *b, uint64_t at, const void *bytes, size_t len);

/* Cut the core to SIZE bytes (restored by fz_base_restore()). */
void fz_base_truncate(struct fz_base *b, uint64_t size);

/* Apply the patch list DATA[0..SIZE) (each patch: u8 region, u32 offset
 * (little-endian), u8 length, LENGTH bytes; region and offset taken modulo
 * the regions and the region's size) to B. */
void fz_base_patch(struct fz_base *b, const uint8_t *data, size_t size);

/* Put back every byte written and the size. */
void fz_base_restore(struct fz_base *b);

/* Rewrite the whole core from its pristine bytes (after a process that
 * shared the memfd died with a mutant in it); forgets the undo list. */
void fz_base_reset(struct fz_base *b);

/* DATA[0..SIZE) in a new memfd called NAME; "/proc/self/fd/N" into PATH.
 * Returns the descriptor (the caller closes it); aborts when it cannot. */
int fz_memfd(const char *name, const uint8_t *data, size_t size, char path[64]);

/* "/proc/self/fd/N" of the memfd, into BUF. */
const char *fz_base_path(const struct fz_base *b, char *buf, size_t len);

/* Analyse the core at PATH with OPTS and CACHE (may be NULL), write both
 * reports to DEVNULL, free everything.  For the harnesses. */
void fz_analyze_path(const char *path, const struct an_options *opts, struct dbg_cache *cache,
		     FILE *devnull);

/* The runtime descriptions named in ASYNCORE_FUZZ_RUNTIMES ("FILE:FILE..."),
 * loaded (exits with the reason when one does not load); NULL when the
 * variable is not set.  NAME is for messages. */
struct an_runtimes *fz_runtimes_from_env(const char *name);

/* The patch-mode harness: the base core ASYNCORE_FUZZ_BASE indexed into the
 * regions WANT asks for, analysed with OPTS after each input's patches, with
 * one debug-info cache across runs.  NAME is for messages; exits when there
 * is no base or no region to patch. */
void fz_harness_init(const char *name, unsigned want, const struct an_options *opts);
void fz_harness_run(const uint8_t *data, size_t size);

#endif
