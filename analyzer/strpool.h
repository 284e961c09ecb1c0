/* Strings that many frames share (function, module and source file names:
 * a pool of 200 threads stands in the same few functions), each kept once
 * for the lifetime of the analysis that owns the pool. */
#ifndef ANALYZER_STRPOOL_H
#define ANALYZER_STRPOOL_H

#include <stddef.h>

struct an_strpool;

/* An empty pool, or NULL when out of memory. */
struct an_strpool *an_strpool_create(void);

/* Free the pool and every string it holds; NULL is a no-op. */
void an_strpool_destroy(struct an_strpool *pool);

/* The pool's copy of S (owned by POOL, never to be freed or changed by the
 * caller); NULL when S is NULL, or with *NOMEM set when out of memory. */
char *an_strpool_intern(struct an_strpool *pool, const char *s, int *nomem);

#endif
