/* bRPC bthreads: every live bthread of a core, with its state, the OS
 * thread running it and its stack.  DESIGN.md, "bRPC bthreads, x86_64",
 * describes the structures, the liveness and state rules, the saved
 * context and where a bthread's stack ends. */
#ifndef ANALYZER_BTHREAD_H
#define ANALYZER_BTHREAD_H

#include "analysis.h"
#include "../dwarf/dwarf.h"

/* Find bRPC's runtime in the core's modules and fill an->tasks / ntasks
 * (owned by AN) with its live bthreads: state, wait, OS thread, entry
 * function and frames.  A suspended (or queued, already run) bthread is
 * unwound from its saved context down to TaskGroup::task_runner; a running
 * one takes its OS thread's frames down to task_runner, and the thread keeps
 * the worker's own frames (from the context its main task saved).  Call it
 * after every thread's frames are filled.  Without bRPC's symbols it does
 * nothing (one symbol lookup); whatever cannot be trusted becomes a warning
 * on AN and the rest is listed. */
void an_bthread_analyze(struct dbg_session *s, struct analysis *an);

/* The bthread mutexes AN's bthreads wait on (their butexes): each waiter's
 * wait_object_name, the global holding the mutex, and its owner where bRPC
 * recorded one (analyzer/btmutex.c). */
void an_bthread_mutexes(struct dbg_session *s, struct analysis *an);

#endif
