/* Unit tests for analyzer/recursion: the cycle of return addresses a long
 * walk repeats, the cut that keeps whole periods on each side, and the
 * cycle of stored frames found again at the jump of their indexes. */
#include <stdlib.h>

#include "../../analyzer/recursion.h"

#define UNIT_GROUP "recursion"
#include "unit.h"

/* A walk: PREFIX frames of their own (the first an activation), then
 * PERIODS times the cycle of L return addresses, then SUFFIX frames; each
 * frame's CFA is its own. */
static struct dbg_frame *walk(size_t prefix, size_t l, size_t periods, size_t suffix, size_t *n)
{
	*n = prefix + l * periods + suffix;
	struct dbg_frame *f = calloc(*n, sizeof(*f));
	size_t k = 0;
	for (size_t i = 0; i < prefix; i++, k++) {
		f[k].pc = 0x9000 + i;
		f[k].activation = i == 0;
	}
	for (size_t p = 0; p < periods; p++)
		for (size_t i = 0; i < l; i++, k++)
			f[k].pc = 0x1000 + 0x10 * i;
	for (size_t i = 0; i < suffix; i++, k++)
		f[k].pc = 0x5000 + i;
	for (k = 0; k < *n; k++)
		f[k].cfa = 0x7f0000000000 + 0x20 * k;
	return f;
}

/* The kept frames read as one cycle across the cut, and the frames left out
 * are whole periods. */
static bool cut_is_sound(const struct dbg_frame *f, size_t n, const struct an_recursion_cut *c)
{
	if (c->outer - c->inner != c->repeats * c->period || c->outer > n || c->inner < c->period)
		return false;
	for (size_t i = 0; i < c->period; i++)
		if (f[c->inner - c->period + i].pc != f[c->outer + i].pc)
			return false;
	return true;
}

static void test_cycles(void)
{
	static const struct { size_t prefix, l, periods, suffix; } cases[] = {
		{1, 1, 100000, 4},    /* direct recursion, 100,000 deep */
		{1, 2, 50000, 5},     /* mutual */
		{3, 3, 1000, 2},      /* three functions, a prefix of its own */
		{1, 32, 100, 3},      /* the longest period searched */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n;
		struct dbg_frame *f = walk(cases[i].prefix, cases[i].l, cases[i].periods, cases[i].suffix, &n);
		struct an_recursion_cut c;
		char name[96];
		snprintf(name, sizeof(name), "period %zu x %zu found, cut sound", cases[i].l, cases[i].periods);
		CHECK(name, an_recursion_find(f, n, &c) && c.period == cases[i].l && cut_is_sound(f, n, &c));
		snprintf(name, sizeof(name), "period %zu: at least 8 inner and 4 outer frames kept", cases[i].l);
		CHECK(name, c.inner - cases[i].prefix >= 8 && n - c.outer - cases[i].suffix >= 4);
		snprintf(name, sizeof(name), "period %zu: the first frame left out kept as the caller",
			 cases[i].l);
		CHECK(name, c.caller.cfa == f[c.inner].cfa && c.caller.pc == f[c.inner].pc);
		size_t m = n;
		an_recursion_compact(f, &m, &c);
		snprintf(name, sizeof(name), "period %zu: compacted to the kept frames", cases[i].l);
		CHECK(name, m == n - c.repeats * c.period && f[m - 1].pc == 0x5000 + cases[i].suffix - 1);
		free(f);
	}
}

static void test_no_cycle(void)
{
	size_t n;
	struct an_recursion_cut c;
	struct dbg_frame *f = walk(2000, 1, 0, 10, &n);
	CHECK("distinct frames: no cycle", !an_recursion_find(f, n, &c));
	free(f);
	f = walk(1, 2, 5, 3, &n);
	CHECK("five periods: too few to leave any out", !an_recursion_find(f, n, &c));
	free(f);
	f = walk(1, 33, 100, 3, &n);
	CHECK("a period past the longest searched: none", !an_recursion_find(f, n, &c));
	free(f);
	CHECK("no frames", !an_recursion_find(NULL, 0, &c));
}

/* Stored frames: an activation, PERIODS times the cycle of places PCS
 * (an inline level where INLINED), the run left out, PERIODS times again,
 * one frame of its own; GAP where the indexes jump. */
static struct an_frame *stored(const uint64_t *pcs, const bool *inlined, size_t l, size_t periods,
			       size_t *n, struct an_index_gap *gap)
{
	*n = 1 + 2 * periods * l + 1;
	struct an_frame *f = calloc(*n, sizeof(*f));
	f[0] = (struct an_frame){.pc = 0x9000, .activation = true};
	for (size_t k = 1; k + 1 < *n; k++)
		f[k] = (struct an_frame){.pc = pcs[(k - 1) % l], .inlined = inlined[(k - 1) % l],
					 .inline_depth = inlined[(k - 1) % l]};
	f[*n - 1].pc = 0x5000;
	*gap = (struct an_index_gap){1 + periods * l, 0};
	return f;
}

static void test_stored_cycle(void)
{
	static const uint64_t levels[] = {0x1010, 0x1010, 0x1020};
	static const bool levels_inlined[] = {true, false, false};
	static const uint64_t abaab[] = {0xa, 0xb, 0xa, 0xa, 0xb};
	static const bool none[5];
	size_t n;
	struct an_index_gap gap;
	struct an_frame *f = stored(levels, levels_inlined, 3, 2, &n, &gap);
	gap.left_out = 3 * 1000;
	CHECK("stored: a cycle of 3 frames, one an inline level",
	      an_recursion_stored_cycle(f, n, &gap) == 3);
	gap.left_out = 3 * 1000 + 1;
	CHECK("stored: none whose count divides the frames left out",
	      an_recursion_stored_cycle(f, n, &gap) == 0);
	gap.at = 0;
	CHECK("stored: no jump, no cycle", an_recursion_stored_cycle(f, n, &gap) == 0);
	free(f);
	f = stored(abaab, none, 5, 2, &n, &gap);
	gap.left_out = 5 * 100;
	CHECK("stored: a b a a b is one cycle of 5 (a b across the jump is not one of 2)",
	      an_recursion_stored_cycle(f, n, &gap) == 5);
	free(f);
}

int main(void)
{
	test_cycles();
	test_no_cycle();
	test_stored_cycle();
	return unit_exit();
}
