/* Crash signatures: a short, stable name for "where it crashed".
 *
 * The signature is built from the crashing thread's spliced stack (native and
 * async frames), or from the frames of the bthread it was running when the
 * crash happened in one, innermost first: each frame is named by its normalised
 * function (no addresses, no template arguments, no parameter lists, no
 * anonymous-namespace, clone-suffix or per-CPU-variant noise) or, without a
 * function name, "module@0xOFFSET" (the module's file name and the pc's
 * offset from the module's start: stable across ASLR, so a stripped
 * program's crash sites still bucket apart); frames on the skip list are
 * dropped, recursion is collapsed, frames on the prefix list are kept
 * without counting (analyzer/siglists.h), and the first AN_SIGNATURE_FRAMES
 * counted names are joined after the signal name:
 *     "SIGSEGV: parse_header < read_request < handle_client < main"
 * A crash a signal handler caught is signed from the frame the fault
 * interrupted, with the caught signal's name (an_caught): the same bug with
 * and without a handler is one bucket.
 * The signature is the logical call chain: how a frame was found (native,
 * async, inlined) is not in it, so a coroutine found on the stack in one
 * build and through its async chain in another is one bucket (the same
 * function found both ways is one name).  A recursion whose run was left
 * out (an_recursion) is signed by its cycle, rotated to end at the function
 * the entering frame called, and that frame:
 *     "SIGSEGV: recursion pong < ping, entered from start_recursion"
 * the same at any depth and any stack size.  The hash is the 64-bit FNV-1a of that
 * string, as 16 lower-case hex digits: two crashes at the same place share it
 * whatever their addresses, two different places do not. */
#ifndef ANALYZER_SIGNATURE_H
#define ANALYZER_SIGNATURE_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis.h"
#include "siglists.h"

#define AN_SIGNATURE_FRAMES 5

/* What a signature is computed from: plain data, as an analysis holds it
 * or as a store reads it back. */
struct an_signature_input {
	bool has_signal;
	int signo;
	const char *signal_name;    /* NULL: "signal N" (or "no signal") */
	const struct an_frame *frames;   /* the crashing thread's, innermost first;
					    only kind, function, module and
					    module_offset are read */
	size_t nframes;
	size_t collapsed_at;        /* > 0: a recursion's run of whole cycles was
				       left out just before frames[collapsed_at] */
};

/* The three signals a signature may start with, as an analysis holds them
 * or as a store reads them back (strings borrowed). */
struct an_crash_signals {
	bool has_signal;            /* the core's own */
	int signo;
	const char *signal_name;
	int caught_signo;           /* a crash handler caught */
	const char *caught_signal_name;   /* NULL: no handler caught the crash
					     (or its signal has no name) */
	const char *go_crash;       /* a Go program's "panic" or "fatal error";
				       NULL: no Go crash */
	int go_signo;               /* the signal the Go crash came from, 0: none */
	const char *go_signal_name; /* NULL: none, or a signal without a name */
};

/* The crash signals of AN (its strings borrowed). */
struct an_crash_signals an_crash_signals_of(const struct analysis *an);

/* Set IN's signal (has_signal, signo, signal_name, borrowed from S) to the
 * one its signature starts with: a Go crash's signal, or "panic" or
 * "fatal error" (the runtime aborts whatever killed the program), else the
 * signal a crash handler caught, else the core's. */
void an_signature_set_signal(struct an_signature_input *in, const struct an_crash_signals *s);

/* Logical frames a recursion's cycle may have, at most. */
#define AN_SIGNATURE_MAX_CYCLE 128

/* The signature and its hash of IN, with LISTS (NULL: the built-in lists).
 * Returns 0 with *SIGNATURE and *HASH (caller frees both), or -1 on
 * out-of-memory (both NULL). */
int an_signature_of(const struct an_signature_input *in, const struct an_signature_lists *lists,
		    char **signature, char **hash);

/* Where a crashing thread's signature starts among its FRAMES: the frame a
 * caught fault interrupted (role AN_FRAME_CRASH_SITE), so a crash handler's
 * frames and its trampoline never enter it; 0 when there is none. */
size_t an_signature_start(const struct an_frame *frames, size_t n);

/* Compute an->signature and an->signature_hash (replacing any previous
 * values) from the crashing thread's frames with LISTS (NULL: built-in).
 * On out-of-memory both stay NULL. */
void an_signature_compute(struct analysis *an, const struct an_signature_lists *lists);

/* The name frame F has in a signature: its normalised function,
 * "module@0xOFFSET", or "??".  Returns a malloc'd string (caller frees),
 * NULL on out-of-memory. */
char *an_signature_frame_name(const struct an_frame *f);

/* The normalised form of a demangled function NAME ("void (anonymous
 * namespace)::Foo<int>::bar(int) const [clone .cold]" -> "Foo::bar").
 * Returns a malloc'd string (caller frees), NULL on out-of-memory. */
char *an_signature_normalize(const char *name);

/* 64-bit FNV-1a of the NUL-terminated string S. */
uint64_t an_signature_fnv1a(const char *s);

#endif
