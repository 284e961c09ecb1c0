/* Pieces shared by the two HTML pages (html.c: one core's crash page,
 * html_top.c: the bucket page of a store).  Every page is one
 * self-contained file: inline CSS, JS and SVG, nothing loaded from outside
 * (no CDN, no web font), so it opens on a machine without network. */
#ifndef REPORTS_HTML_H
#define REPORTS_HTML_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "buckets.h"

#include "../analyzer/analysis.h"

/* S (bytes from a core, a binary or a store) as HTML text, usable in an
 * element and in a quoted attribute: & < > " ' escaped, control characters
 * other than tab and newline, C1 and bidirectional controls
 * (reports/bytes.h) and each byte that is not valid UTF-8 written as
 * U+FFFD.  At most MAX characters (0: all), then an ellipsis.  NULL
 * writes nothing. */
void rep_html_text(FILE *out, const char *s, size_t max);

/* PATH as rep_html_text() writes it, with a line-break opportunity after
 * each '/' so a long path wraps between its components on a narrow screen. */
void rep_html_path(FILE *out, const char *path);

/* The document up to <main>: <head> with TITLE (escaped), the style sheet
 * and the script. */
void rep_html_begin(FILE *out, const char *title);

/* The same with a wider <main>, for a table that needs the screen. */
void rep_html_begin_wide(FILE *out, const char *title);
/* The wait-for graph of AN's threads as an SVG (html_graph.c): nothing
 * when no thread waits behind another. */
void rep_html_wait_graph(FILE *out, const struct analysis *an);

/* Close what rep_html_begin() opened, with a footer naming the version. */
void rep_html_end(FILE *out);

/* A stack as an ordered list, innermost first: function (display name when
 * there is one), arguments, source file and line, module, pc, badges for
 * inlined, tail-call and async frames, and a marker at each native/async
 * seam.  CRASHING marks frame 0 as the crashing frame. */
void rep_html_frames(FILE *out, const struct an_frame *frames, size_t n, bool crashing);

/* On the calling thread, whether the pages written next link each frame's
 * function to a search for it (/search?q=NAME: serve's pages; a file on
 * its own links nothing outside itself).  Off until set. */
void rep_html_link_functions(bool on);

/* S percent-encoded for a URL's query (only unreserved characters left as
 * they are, so the result needs no further escaping in an attribute). */
void rep_html_url_query(FILE *out, const char *s);

struct rep_reader;

/* The bucket page of the store R reads: the LIMIT most frequent signatures
 * of its top_signatures view.  Returns 0, or -1 (with a line on stderr when
 * the store failed). */
int rep_html_top(FILE *out, struct rep_reader *r, long limit);

/* How the bucket page is written: served (each bucket linked to
 * /bucket/HASH, with FILTER's form and sort links) or a file on its own,
 * with or without each bucket's example stack. */
struct rep_bucket_page {
	bool served;
	bool example_stacks;
	const struct rep_bucket_filter *filter;
};

/* The bucket page of BUCKETS (rep_buckets_read()'s) and TOTALS: the one
 * writer of `top --format html` and serve's /.  0, or -1. */
int rep_html_buckets(FILE *out, struct rep_reader *r, json_t *buckets,
		     const struct rep_bucket_totals *totals, const struct rep_bucket_page *p);

/* A "hang" badge when CAUSE_KIND (cores.cause_kind) is a hang's or a
 * deadlock's; nothing otherwise. */
void rep_html_hang_badge(FILE *out, const char *cause_kind);

/* Parts of one bucket B (an object of rep_buckets_read()): its cause (a
 * hang's with its badge), its
 * facts (first and last seen, hash, executables, architectures), its
 * builds with their counts, its crashes per day (SVG). */
void rep_html_bucket_cause(FILE *out, json_t *b);
void rep_html_bucket_facts(FILE *out, json_t *b);
void rep_html_bucket_builds(FILE *out, json_t *b);
void rep_html_bucket_chart(FILE *out, json_t *b);

/* The crashing thread's frames of the stored core FINGERPRINT.  0, or -1
 * when the store failed (reported). */
int rep_html_example_stack(FILE *out, struct rep_reader *r, const char *fingerprint);

/* A served page's navigation: the buckets and a search box holding QUERY. */
void rep_html_site_nav(FILE *out, const char *query);

#endif
