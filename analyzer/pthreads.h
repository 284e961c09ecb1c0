/* Each thread's glibc `struct pthread` and the thread pointer its TLS is
 * found from (DESIGN.md "Architectures").  A core that saved the thread
 * pointer gives both (x86_64: struct pthread is at fs_base; aarch64: right
 * below TPIDR_EL0); a core without it (qemu-user's aarch64 cores) still
 * holds glibc's lists of threads, `_rtld_global._dl_stack_used` and
 * `_dl_stack_user`, whose struct pthreads are matched to threads by tid, as
 * libthread_db does. */
#ifndef ANALYZER_PTHREADS_H
#define ANALYZER_PTHREADS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis.h"
#include "../dwarf/dwarf.h"

/* glibc's struct pthread and where _rtld_global keeps the lists of them. */
struct an_pthread_layout {
	uint64_t size;              /* sizeof(struct pthread) */
	uint64_t list, tid, specific;   /* member offsets */
	uint64_t stack_used, stack_user; /* _rtld_global's list heads */
	bool from_libc;             /* libc's libthread_db descriptors said so */
};

/* The layout from libc's `_thread_db_*` descriptors (the constants glibc
 * exports for libthread_db), else the architecture's glibc 2.36 defaults
 * (from_libc false). */
void an_pthread_layout(struct dbg_session *s, struct an_pthread_layout *l);

/* Fill every thread's tls_tp and pthread. */
void an_pthreads_locate(struct dbg_session *s, struct analysis *an);

#endif
