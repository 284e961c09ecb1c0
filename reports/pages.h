/* The pages `asyncore serve` answers (cli/serve.c routes to them): each
 * writes one whole HTML page or JSON document to OUT and returns the HTTP
 * status it deserves (200, 404 when the store has no such bucket or core,
 * 500 when the store failed, reported on stderr).  The pages' writers are
 * the HTML writers of reports/ (the crash page of `report --format html`,
 * the bucket page of `top --format html`); every string from the store
 * goes through their escaping, every value from a request reaches the
 * store as a bound parameter. */
#ifndef REPORTS_PAGES_H
#define REPORTS_PAGES_H

#include <stdbool.h>
#include <stdio.h>

#include "buckets.h"

struct rep_reader;

/* /, /api/buckets: the buckets of F. */
int rep_page_buckets(FILE *out, struct rep_reader *r, const struct rep_bucket_filter *f, bool json);

/* /bucket/HASH, /api/bucket/HASH: one bucket's cores newest first, its
 * builds, trend and example stack. */
int rep_page_bucket(FILE *out, struct rep_reader *r, const char *hash, bool json);

/* /core/ID, /api/core/ID: the stored core whose fingerprint is ID, as the
 * crash page (`report --format html`) or the JSON report. */
int rep_page_core(FILE *out, struct rep_reader *r, const char *id, bool json);

/* /search?q=, /api/search?q=: buckets and cores whose crashing frames'
 * function, module or file, signature, cause, executable or build-id hold
 * QUERY. */
int rep_page_search(FILE *out, struct rep_reader *r, const char *query, bool json);

/* A page saying STATUS and WHY (text, escaped); JSON {"error": WHY}. */
void rep_page_error(FILE *out, int status, const char *why, bool json);

#endif
