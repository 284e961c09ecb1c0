/* Unit tests for analyzer/recorder: ring recovery over crafted cores whose
 * memory holds recorder_info structures, rings and entries laid out as the
 * recorder library lays them out (tests/unit/data/unit_fixture.h), on the
 * list whose head is the fixture's `recorders`.  The stripped fixture
 * must give the same results from recorder_list() and the default layout. */
#include <elf.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analyzer/recorder.h"
#include "craft.h"
#include "data/unit_fixture.h"

#define UNIT_GROUP "recorder"
#include "unit.h"

#define HEAP 0x10000000ull
#define HEAP_SIZE 0x20000u
#define NEXT_ORDER 30               /* recorder_order: the next order handed out */
#define ENTRY sizeof(struct recorder_entry)

static uint64_t dbits(double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof(v));
	return v;
}

/* ---- laying rings out ------------------------------------------------------ */

struct rings {
	struct craft_core *c;
	uint64_t last;              /* the list's last recorder_info */
	uint64_t first;
};

static void ring_field(struct rings *w, uint64_t info, size_t field, uint64_t value)
{
	craft_u64(w->c, info + offsetof(struct recorder_info, ring) + field, value);
}

/* A recorder_info named NAME with SIZE entries, appended to the list. */
static uint64_t new_ring(struct rings *w, const char *name, uint64_t size)
{
	/* Headers of implausible sizes get one entry: their slots are never read. */
	uint64_t entries = size < 64 ? size : 1;
	uint64_t info = craft_alloc(w->c, sizeof(struct recorder_info) + entries * ENTRY);
	craft_u64(w->c, info + offsetof(struct recorder_info, name), craft_alloc_string(w->c, name));
	ring_field(w, info, offsetof(struct recorder_ring, size), size);
	ring_field(w, info, offsetof(struct recorder_ring, item_size), ENTRY);
	if (w->last)
		craft_u64(w->c, w->last + offsetof(struct recorder_info, next), info);
	else
		w->first = info;
	w->last = info;
	return info;
}

/* The ring's reader, writer and commit indices. */
static void indices(struct rings *w, uint64_t info, uint64_t reader, uint64_t writer,
		    uint64_t commit)
{
	ring_field(w, info, offsetof(struct recorder_ring, reader), reader);
	ring_field(w, info, offsetof(struct recorder_ring, writer), writer);
	ring_field(w, info, offsetof(struct recorder_ring, commit), commit);
}

/* The slot for ring index INDEX of a ring of SIZE entries. */
static uint64_t slot(uint64_t info, uint64_t size, uint64_t index)
{
	return info + offsetof(struct recorder_info, data) + (index % size) * ENTRY;
}

static void entry_field(struct rings *w, uint64_t at, size_t field, uint64_t value)
{
	craft_u64(w->c, at + field, value);
}

/* A record as the library writes it at ring index INDEX: the head slot
 * with FORMAT (a string in the heap, or the address FORMAT_ADDR when
 * FORMAT is NULL), continuation slots with no format and the same order,
 * four arguments per slot. */
static void record_at(struct rings *w, uint64_t info, uint64_t size, uint64_t index,
		      uint64_t order, const char *format, uint64_t format_addr,
		      const uint64_t *args, size_t nargs)
{
	uint64_t where = craft_alloc_string(w->c, "fn_of_order");
	size_t nslots = nargs <= 4 ? 1 : nargs <= 8 ? 2 : 3;
	for (size_t s = 0; s < nslots; s++) {
		uint64_t at = slot(info, size, index + s);
		entry_field(w, at, offsetof(struct recorder_entry, format),
			    s ? 0 : format ? craft_alloc_string(w->c, format) : format_addr);
		entry_field(w, at, offsetof(struct recorder_entry, order), order);
		entry_field(w, at, offsetof(struct recorder_entry, timestamp), 1000 + order);
		entry_field(w, at, offsetof(struct recorder_entry, where), where);
		for (size_t i = 0; i < 4; i++)
			entry_field(w, at, offsetof(struct recorder_entry, args) + 8 * i,
				    4 * s + i < nargs ? args[4 * s + i] : 0);
	}
}

static void record(struct rings *w, uint64_t info, uint64_t size, uint64_t index, uint64_t order,
		   const char *format, const uint64_t *args, size_t nargs)
{
	record_at(w, info, size, index, order, format, 0, args, nargs);
}

/* ---- what each ring must give -------------------------------------------- */

struct ring_expect {
	const char *name;
	uint64_t recovered, in_flight, overwritten;
	const char *events;         /* "order message; ..." oldest first */
};

/* The rings of the main case (see lay_rings), and the warnings they cause. */
static const struct ring_expect expected[] = {
	{ "alpha", 3, 0, 0, "0 step 7; 2 open disk; 4 ratio 1.50" },
	{ "beta", 4, 0, 6, "1 tick 6; 3 tick 7; 5 tick 8; 7 tick 9" },
	{ "gamma", 3, 0, 0, "8 six 1 2 3 4 5 6; 9 nine 1 2 3 4 5 6 7 8 9; 10 one 1" },
	{ "delta", 3, 0, 3, "11 d 4; 12 d 5; 13 d 6" },
	{ "epsilon", 3, 2, 0, "14 e 0; 15 e 1; 16 e 2" },
	{ "zeta", 3, 1, 2, "17 z 2; 18 z 3; 19 z 4" },
	{ "eta", 1, 1, 0, "20 first" },
	{ "theta", 2, 0, 0, "21 t 0; 22 t 1" },
	{ "iota", 1, 0, 0, "23 i" },
	{ "kappa", 0, 0, (1ull << 63) - 5, "" },
	{ "lambda", 0, 0, 0, "" },
	{ "mu", 0, 0, 0, "" },
	{ "nu", 0, 0, 0, "" },
	{ "xi", 2, 0, 0, "24 (null); 25 at 0xbad00010" },
};

static const char *const expected_warnings[] = {
	"recorder epsilon: 2 slot(s) were being written at the crash (in flight)",
	"recorder zeta: 1 slot(s) were being written at the crash (in flight)",
	"recorder eta: 1 slot(s) were being written at the crash (in flight)",
	"recorder theta: writer 2 is behind reader 5 (corrupted indices)",
	"recorder iota: commit 9 is ahead of writer 1 (corrupted indices)",
	"implausible ring size 0, entries not recovered",
	"implausible ring size 1073741824, entries not recovered",
	"entry size 32, expected 64; entries not recovered",
	"recorder xi: 1 record(s) with an unreadable format",
	"recorder list: list cycles back to ",
};

static void lay_rings(struct rings *w)
{
	/* An intact ring: integers, a string read from the core, a double. */
	uint64_t r = new_ring(w, "alpha", 8);
	record(w, r, 8, 0, 0, "alpha.c:10:step %d", (uint64_t[]){ 7 }, 1);
	uint64_t disk = craft_alloc_string(w->c, "disk");
	record(w, r, 8, 1, 2, "alpha.c:11:open %s", (uint64_t[]){ disk }, 1);
	record(w, r, 8, 2, 4, "alpha.c:12:ratio %.2f", (uint64_t[]){ dbits(1.5) }, 1);
	indices(w, r, 0, 3, 3);

	/* A ring that wrapped: the last size slots of 10 written. */
	r = new_ring(w, "beta", 4);
	for (uint64_t i = 6; i < 10; i++)
		record(w, r, 4, i, 2 * i - 11, "beta.c:20:tick %u", (uint64_t[]){ i }, 1);
	indices(w, r, 0, 10, 10);

	/* Records of two and three slots. */
	r = new_ring(w, "gamma", 16);
	record(w, r, 16, 0, 8, "gamma.c:30:six %d %d %d %d %d %d",
	       (uint64_t[]){ 1, 2, 3, 4, 5, 6 }, 6);
	record(w, r, 16, 2, 9, "gamma.c:31:nine %d %d %d %d %d %d %d %d %d",
	       (uint64_t[]){ 1, 2, 3, 4, 5, 6, 7, 8, 9 }, 9);
	record(w, r, 16, 5, 10, "gamma.c:32:one %d", (uint64_t[]){ 1 }, 1);
	indices(w, r, 0, 6, 6);

	/* Wrapped onto a continuation slot whose head was overwritten. */
	r = new_ring(w, "delta", 4);
	record(w, r, 4, 2, 6, "delta.c:1:two slots %d %d %d %d %d", (uint64_t[]){ 0, 0, 0, 0, 0 }, 5);
	for (uint64_t i = 4; i < 7; i++)
		record(w, r, 4, i, 7 + i, "delta.c:2:d %d", (uint64_t[]){ i }, 1);
	indices(w, r, 0, 7, 7);

	/* In flight in a fresh ring: one slot reserved and never filled, one
	 * filled but its order (written last) still zero. */
	r = new_ring(w, "epsilon", 8);
	for (uint64_t i = 0; i < 3; i++)
		record(w, r, 8, i, 14 + i, "eps.c:1:e %d", (uint64_t[]){ i }, 1);
	record(w, r, 8, 4, 0, "eps.c:2:half written %d", (uint64_t[]){ 4 }, 1);
	indices(w, r, 0, 5, 3);

	/* In flight in a wrapped ring: the slot still holds the last lap's record. */
	r = new_ring(w, "zeta", 4);
	record(w, r, 4, 1, 3, "zeta.c:1:last lap", NULL, 0);
	for (uint64_t i = 2; i < 5; i++)
		record(w, r, 4, i, 15 + i, "zeta.c:2:z %d", (uint64_t[]){ i }, 1);
	indices(w, r, 0, 6, 5);

	/* In flight: an order past recorder_order. */
	r = new_ring(w, "eta", 8);
	record(w, r, 8, 0, 20, "eta.c:1:first", NULL, 0);
	record(w, r, 8, 1, NEXT_ORDER + 47, "eta.c:2:garbage order", NULL, 0);
	indices(w, r, 0, 2, 1);

	/* Corrupted indices: the writer behind the reader, the commit ahead
	 * of the writer, a writer near 2^63. */
	r = new_ring(w, "theta", 8);
	record(w, r, 8, 0, 21, "theta.c:1:t %d", (uint64_t[]){ 0 }, 1);
	record(w, r, 8, 1, 22, "theta.c:1:t %d", (uint64_t[]){ 1 }, 1);
	indices(w, r, 5, 2, 2);
	r = new_ring(w, "iota", 8);
	record(w, r, 8, 0, 23, "iota.c:1:i", NULL, 0);
	indices(w, r, 0, 1, 9);
	r = new_ring(w, "kappa", 4);
	indices(w, r, 0, (1ull << 63) - 1, (1ull << 63) - 1);

	/* Headers that cannot be a ring. */
	r = new_ring(w, "lambda", 0);
	indices(w, r, 0, 4, 4);
	r = new_ring(w, "mu", 1ull << 30);
	indices(w, r, 0, 4, 4);
	r = new_ring(w, "nu", 4);
	ring_field(w, r, offsetof(struct recorder_ring, item_size), 32);
	indices(w, r, 0, 1, 1);

	/* A format that cannot be read, a %s that cannot be read. */
	r = new_ring(w, "xi", 4);
	record_at(w, r, 4, 0, 24, NULL, 0xbad00000, NULL, 0);
	record(w, r, 4, 1, 25, "xi.c:1:at %s", (uint64_t[]){ 0xbad00010 }, 1);
	indices(w, r, 0, 2, 2);

	/* The list cycles back to its first recorder. */
	craft_u64(w->c, w->last + offsetof(struct recorder_info, next), w->first);
}

/* ---- checking ---------------------------------------------------------------- */

static const struct an_recorder *find_recorder(const struct analysis *an, const char *name)
{
	for (size_t i = 0; i < an->nrecorders; i++)
		if (an->recorders[i].name && strcmp(an->recorders[i].name, name) == 0)
			return &an->recorders[i];
	return NULL;
}

static void describe_events(const struct an_recorder *r, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < r->nevents && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%llu %s", i ? "; " : "",
					(unsigned long long)r->events[i].order,
					r->events[i].message ? r->events[i].message : "(null)");
}

static bool has_warning(const struct core *core, const char *text)
{
	for (size_t i = 0; i < core->nwarnings; i++)
		if (strstr(core->warnings[i], text))
			return true;
	return false;
}

/* Open the core, recover its rings; false when it could not be opened. */
static bool recover(struct craft_core *c, struct craft_session *cs, struct analysis **an)
{
	uint64_t regs[CORE_REG_COUNT] = { 0 };
	craft_prstatus(craft_notes(c), 500, SIGSEGV, regs);
	bool opened = craft_open(c, cs);
	craft_destroy(c);
	if (!opened)
		return false;
	*an = an_analysis_create();
	an_recorders_recover(cs->s, *an);
	return true;
}

static struct craft_core *new_core(const char *fixture, struct rings *w)
{
	memset(w, 0, sizeof(*w));
	w->c = craft_create();
	if (!w->c || !craft_map_executable(w->c, fixture, CRAFT_FIXTURE_BIAS) ||
	    !craft_heap(w->c, HEAP, HEAP_SIZE)) {
		craft_destroy(w->c);
		return NULL;
	}
	craft_u64(w->c, craft_fixture_symbol("recorder_order"), NEXT_ORDER);
	return w->c;
}

static void check_ring(const char *label, const struct analysis *an, const struct ring_expect *e)
{
	char name[256], got[512];
	const struct an_recorder *r = find_recorder(an, e->name);
	snprintf(name, sizeof(name), "%s: ring %s found", label, e->name);
	if (!CHECK(name, r != NULL))
		return;
	snprintf(name, sizeof(name), "%s: ring %s: %llu recovered, %llu in flight, %llu overwritten",
		 label, e->name, (unsigned long long)e->recovered, (unsigned long long)e->in_flight,
		 (unsigned long long)e->overwritten);
	if (!CHECK(name, r->recovered == e->recovered && r->nevents == e->recovered &&
				 r->in_flight == e->in_flight && r->overwritten == e->overwritten))
		printf("    got %llu recovered, %llu in flight, %llu overwritten\n",
		       (unsigned long long)r->recovered, (unsigned long long)r->in_flight,
		       (unsigned long long)r->overwritten);
	describe_events(r, got, sizeof(got));
	snprintf(name, sizeof(name), "%s: ring %s events", label, e->name);
	CHECK_STR(name, got, e->events);
}

/* One event's fields beyond its message. */
static void check_alpha(const char *label, const struct analysis *an)
{
	char name[256];
	const struct an_recorder *r = find_recorder(an, "alpha");
	const struct an_event *e = r && r->nevents == 3 ? &r->events[1] : NULL;
	snprintf(name, sizeof(name), "%s: event location, format, function, timestamp, arguments",
		 label);
	CHECK(name, e && e->location && strcmp(e->location, "alpha.c:11") == 0 && e->format &&
			    strcmp(e->format, "open %s") == 0 && e->function &&
			    strcmp(e->function, "fn_of_order") == 0 && e->timestamp == 1002 &&
			    e->nargs == 4 && e->strings_read == 1);
	snprintf(name, sizeof(name), "%s: ring header as read", label);
	CHECK(name, r && strcmp(r->layout, "recorder") == 0 && r->size == 8 && r->writer == 3 &&
			    r->commit == 3 && r->reader == 0);
}

static int order_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The timeline holds every event once, by order, each pointing back at it. */
static void check_timeline(const char *label, const struct analysis *an)
{
	char name[256];
	uint64_t want[64];
	size_t n = 0;
	for (size_t i = 0; i < an->nrecorders; i++)
		for (size_t j = 0; j < an->recorders[i].nevents && n < 64; j++)
			want[n++] = an->recorders[i].events[j].order;
	qsort(want, n, sizeof(want[0]), order_cmp);
	bool ok = an->ntimeline == n && n == 25;
	for (size_t i = 0; ok && i < n; i++) {
		const struct an_timeline_entry *t = &an->timeline[i];
		ok = t->order == want[i] && t->recorder < an->nrecorders &&
		     t->event < an->recorders[t->recorder].nevents &&
		     an->recorders[t->recorder].events[t->event].order == t->order;
	}
	snprintf(name, sizeof(name), "%s: timeline merges the 25 events by order", label);
	CHECK(name, ok);
}

static void test_rings(const char *fixture, const char *label)
{
	struct rings w;
	struct craft_session cs;
	struct analysis *an = NULL;
	char name[256];
	snprintf(name, sizeof(name), "%s: fixture mapped", label);
	if (!CHECK(name, new_core(fixture, &w) != NULL))
		return;
	lay_rings(&w);
	craft_u64(w.c, craft_fixture_symbol("recorders"), w.first);
	snprintf(name, sizeof(name), "%s: crafted core opened", label);
	if (!CHECK(name, recover(w.c, &cs, &an)))
		return;
	size_t nrings = sizeof(expected) / sizeof(expected[0]);
	snprintf(name, sizeof(name), "%s: every listed ring, once", label);
	CHECK(name, an->nrecorders == nrings);
	for (size_t i = 0; i < nrings; i++)
		check_ring(label, an, &expected[i]);
	check_alpha(label, an);
	check_timeline(label, an);
	size_t nwarn = sizeof(expected_warnings) / sizeof(expected_warnings[0]);
	for (size_t i = 0; i < nwarn; i++) {
		snprintf(name, sizeof(name), "%s: warns \"%s\"", label, expected_warnings[i]);
		CHECK(name, has_warning(cs.core, expected_warnings[i]));
	}
	snprintf(name, sizeof(name), "%s: %zu warnings in all", label, nwarn);
	if (!CHECK(name, cs.core->nwarnings == nwarn))
		for (size_t i = 0; i < cs.core->nwarnings; i++)
			printf("    %s\n", cs.core->warnings[i]);
	an_analysis_destroy(an);
	craft_close(&cs);
}

/* A list whose second pointer cannot be followed: the walk stops there. */
static void test_broken_list(const char *fixture, const char *label)
{
	static const struct {
		const char *name;
		uint64_t next;          /* 0: a misaligned pointer into the heap */
	} cases[] = {
		{ "unmapped next pointer", 0xdead0000 },
		{ "misaligned next pointer", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rings w;
		struct craft_session cs;
		struct analysis *an = NULL;
		char name[256];
		snprintf(name, sizeof(name), "%s: %s", label, cases[i].name);
		if (!CHECK(name, new_core(fixture, &w) != NULL))
			continue;
		uint64_t r = new_ring(&w, "only", 4);
		record(&w, r, 4, 0, 1, "only.c:1:one", NULL, 0);
		indices(&w, r, 0, 1, 1);
		uint64_t next = cases[i].next ? cases[i].next : craft_alloc(w.c, 256) + 4;
		craft_u64(w.c, r + offsetof(struct recorder_info, next), next);
		craft_u64(w.c, craft_fixture_symbol("recorders"), r);
		if (!CHECK(name, recover(w.c, &cs, &an)))
			continue;
		CHECK(name, an->nrecorders == 1 && an->recorders[0].nevents == 1 &&
				    cs.core->nwarnings == 1 &&
				    has_warning(cs.core, "is not readable, list walk stopped"));
		an_analysis_destroy(an);
		craft_close(&cs);
	}
}

static void run(const char *path, const char *name, bool debug)
{
	(void)debug;    /* both builds must give the same results */
	test_rings(path, name);
	test_broken_list(path, name);
}

int main(void)
{
	craft_each_fixture(run);
	return unit_exit();
}
