/* Readable names for frames whose demangled symbol is not what the
 * programmer wrote. */
#ifndef ANALYZER_DISPLAY_H
#define ANALYZER_DISPLAY_H

/* The readable name of FUNCTION (a demangled symbol), malloc'd, or NULL
 * when FUNCTION reads as written (or is NULL, or memory ran out).
 *
 * GCC compiles a C++20 coroutine body into clones of the ramp function
 * that take the coroutine frame:
 *   "ns::f(ns::f(int) const::_ZNK2ns1fEi.Frame*) [clone .actor]"
 * which reads as "ns::f(int) const [coroutine]"; the ".destroy" clone as
 * "ns::f(int) const [coroutine destroy]".  Other clone suffixes
 * (".cold", ".isra.0") are kept after it. */
char *an_display_name(const char *function);

#endif
