/* The wait-for graph drawn on one core's page (DESIGN.md "Hangs"): each
 * thread that waits behind another, or is waited behind, a node on a
 * circle; an arrow from each waiter to the holder its object records,
 * labelled with the object; a deadlock's arrows marked. */
#include "html.h"
#include "waitgroups.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

enum { MAX_NODES = 48, SIZE = 560, RADIUS = 210, NODE_R = 16 };

static const double PI = 3.14159265358979323846;

/* The holder thread T waits behind, or NULL. */
static const struct an_thread *holder_of(const struct analysis *an, const struct an_thread *t)
{
	const struct an_blocked *b = t->blocked;
	return b && b->has_owner && !b->owner_gone ? rep_thread_by_tid(an, b->owner_tid) : NULL;
}

static bool in_deadlock(const struct analysis *an, int32_t tid)
{
	for (size_t i = 0; i < an->ndeadlocks; i++)
		for (size_t k = 0; k < an->deadlocks[i].n; k++)
			if (an->deadlocks[i].threads[k] == tid)
				return true;
	return false;
}

/* The threads of the graph, at most MAX_NODES, into NODES. */
static size_t graph_nodes(const struct analysis *an, const struct an_thread **nodes)
{
	size_t n = 0;
	for (size_t i = 0; i < an->nthreads && n < MAX_NODES; i++) {
		const struct an_thread *t = &an->threads[i];
		bool waited = false;
		for (size_t k = 0; k < an->nthreads && !waited; k++)
			waited = holder_of(an, &an->threads[k]) == t;
		if (waited || holder_of(an, t))
			nodes[n++] = t;
	}
	return n;
}

static size_t node_index(const struct an_thread *const *nodes, size_t n, const struct an_thread *t)
{
	for (size_t i = 0; i < n; i++)
		if (nodes[i] == t)
			return i;
	return n;
}

static void node_xy(size_t i, size_t n, double *x, double *y)
{
	double a = 2 * PI * (double)i / (double)n - PI / 2;
	*x = SIZE / 2.0 + RADIUS * cos(a);
	*y = SIZE / 2.0 + RADIUS * sin(a);
}

static void write_edge(FILE *out, const struct an_thread *t, size_t from, size_t to, size_t n, bool cycle)
{
	double x0, y0, x1, y1;
	node_xy(from, n, &x0, &y0);
	node_xy(to, n, &x1, &y1);
	double dx = x1 - x0, dy = y1 - y0, len = sqrt(dx * dx + dy * dy);
	if (from == to) {   /* a thread relocking its own mutex */
		fprintf(out, "<path class=\"edge%s\" d=\"M%.1f %.1f c-40 -50 40 -50 %d %d\" marker-end=\"url(#arrow)\"/>\n",
			cycle ? " cycle" : "", x0 - 6, y0 - NODE_R, 12, 0);
	} else if (len > 2 * NODE_R) {
		/* bent to its right, so that A -> B and B -> A are two arrows */
		double ux = dx / len, uy = dy / len, bend = 40;
		double cx = (x0 + x1) / 2 - uy * bend, cy = (y0 + y1) / 2 + ux * bend;
		fprintf(out, "<path class=\"edge%s\" d=\"M%.1f %.1f Q%.1f %.1f %.1f %.1f\" marker-end=\"url(#arrow)\"/>\n",
			cycle ? " cycle" : "", x0 + ux * NODE_R, y0 + uy * NODE_R, cx, cy, x1 - ux * (NODE_R + 4),
			y1 - uy * (NODE_R + 4));
		x0 = x1 = cx;
		y0 = y1 = cy + 4;
	}
	const struct an_blocked *b = t->blocked;
	char at[32];
	snprintf(at, sizeof(at), "0x%" PRIx64, b->object);
	double lx = (x0 + x1) / 2;
	const char *anchor = from == to || fabs(lx - SIZE / 2.0) < 1 ? "middle" : lx < SIZE / 2.0 ? "end" : "start";
	fprintf(out, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", lx,
		from == to ? y0 - NODE_R - 40 : (y0 + y1) / 2 - 4, anchor);
	rep_html_text(out, b->object_name ? b->object_name : at, 40);
	fputs("</text>\n", out);
}

void rep_html_wait_graph(FILE *out, const struct analysis *an)
{
	const struct an_thread *nodes[MAX_NODES];
	size_t n = graph_nodes(an, nodes);
	if (n == 0)
		return;
	fprintf(out, "<div class=\"chart graph\" id=\"wait-graph\"><svg viewBox=\"0 0 %d %d\" role=\"img\" "
		"aria-label=\"wait-for graph\">\n", SIZE, SIZE);
	fputs("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"8\" "
	      "markerHeight=\"8\" orient=\"auto-start-reverse\"><path d=\"M0 0L10 5L0 10z\"/></marker></defs>\n", out);
	for (size_t i = 0; i < n; i++) {
		const struct an_thread *h = holder_of(an, nodes[i]);
		size_t to = h ? node_index(nodes, n, h) : n;
		if (to < n)
			write_edge(out, nodes[i], i, to, n, in_deadlock(an, nodes[i]->tid) && in_deadlock(an, h->tid));
	}
	for (size_t i = 0; i < n; i++) {
		double x, y;
		node_xy(i, n, &x, &y);
		const char *who = rep_thread_label(nodes[i]);
		fprintf(out, "<g class=\"node%s\" data-tid=\"%d\"><circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\"/>"
			"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>",
			in_deadlock(an, nodes[i]->tid) ? " cycle" : "", (int)nodes[i]->tid, x, y, NODE_R, x,
			y + NODE_R + 14, (int)nodes[i]->tid);
		if (who) {
			fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, y + NODE_R + 28);
			rep_html_text(out, who, 32);
			fputs("</text>", out);
		}
		fputs("</g>\n", out);
	}
	fputs("</svg></div>\n", out);
}
