/* Crash signatures: a short, stable name for "where it crashed".
 *
 * The signature is built from the crashing thread's spliced stack (native and
 * async frames), or from the frames of the bthread it was running when the
 * crash happened in one, innermost first: each function name is normalised (no
 * addresses, no template arguments, no parameter lists, no anonymous-namespace
 * or clone-suffix noise), frames that never explain a crash (abort, raise,
 * __assert_fail, libc start-up, signal trampolines, ...; the list is
 * an_signature_skip_list in signature.c) are dropped, recursion is collapsed,
 * and the first AN_SIGNATURE_FRAMES remaining names are joined after the
 * signal name:
 *     "SIGSEGV: parse_header < read_request < @handle_client < main"
 * (an async frame is prefixed "@").  The hash is the 64-bit FNV-1a of that
 * string, as 16 lower-case hex digits: two crashes at the same place share it
 * whatever their addresses, two different places do not. */
#ifndef ANALYZER_SIGNATURE_H
#define ANALYZER_SIGNATURE_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis.h"

#define AN_SIGNATURE_FRAMES 5

/* Compute an->signature and an->signature_hash (replacing any previous
 * values) from the crashing thread's frames.  On out-of-memory both stay
 * NULL. */
void an_signature_compute(struct analysis *an);

/* The normalised form of a demangled function NAME ("void (anonymous
 * namespace)::Foo<int>::bar(int) const [clone .cold]" -> "Foo::bar").
 * Returns a malloc'd string (caller frees), NULL on out-of-memory. */
char *an_signature_normalize(const char *name);

/* True when the normalised NAME never explains a crash (skip list). */
bool an_signature_skipped(const char *name);

/* 64-bit FNV-1a of the NUL-terminated string S. */
uint64_t an_signature_fnv1a(const char *s);

#endif
