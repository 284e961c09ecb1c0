/* Flight-recorder discovery and recovery (see recorder.h).
 *
 * Discovery finds the list heads; each listed ring is read into a
 * ring_header (layout-specific), then recovered slot by slot (common code):
 * heads of records, their continuation slots (format NULL, same order), and
 * slots that were still being written at the crash (in flight). */
#include "recorder.h"
#include "addrset.h"
#include "recfmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RECORDERS 1024          /* list walks stop here */
#define MAX_RING_SIZE (1u << 24)    /* larger sizes are taken as garbage */
#define MAX_WINDOW 65536            /* slots recovered per ring, at most */
#define MAX_NAME 128
#define MAX_FORMAT 1024
#define ELFE_HEAD "_ZN18FlightRecorderBase4headE"

/* Offsets of the recorder library's structures. */
struct rec_layout {
	uint64_t name, next, ring, data;                        /* recorder_info */
	uint64_t size, item_size, reader, writer, commit, overflow;    /* recorder_ring */
	uint64_t entry_size, format, order, timestamp, where, args;    /* recorder_entry */
	bool from_dwarf;
};

/* DESIGN.md's default (exported[12]), then the published library's
 * (exported[4]); without DWARF each recorder is probed against both. */
static const struct rec_layout default_layouts[] = {
	{8, 24, 128, 176, 0, 8, 16, 24, 32, 40, 64, 0, 8, 16, 24, 32, false},
	{8, 24, 64, 112, 0, 8, 16, 24, 32, 40, 64, 0, 8, 16, 24, 32, false},
};

/* One ring, whatever its layout. */
struct ring_header {
	bool elfe;
	uint64_t addr;
	char *name;
	uint64_t size, item_size, reader, writer, commit, overflow;
	bool has_size;
	uint64_t data;                  /* address of entry 0 */
	const struct rec_layout *layout;        /* entry offsets */
};

struct ctx {
	struct dbg_session *s;
	struct core *core;
	struct analysis *an;
	struct rec_layout dwarf_layout;
	bool has_dwarf_layout;
	uint64_t next_order;            /* the global order counter, if found */
	bool has_next_order;
	bool nomem;
};

/* ---------------------------------------------------------------- layouts */

static bool member(struct dbg_session *s, const char *type, const char *m, uint64_t *off)
{
	return dbg_member_offset(s, type, m, off);
}

/* The recorder library's layout from DWARF, when every member is there. */
static bool layout_from_dwarf(struct dbg_session *s, struct rec_layout *l)
{
	uint64_t info_size;
	memset(l, 0, sizeof(*l));
	bool ok = member(s, "recorder_info", "name", &l->name) &&
		  member(s, "recorder_info", "next", &l->next) &&
		  member(s, "recorder_info", "ring", &l->ring) &&
		  member(s, "recorder_ring", "size", &l->size) &&
		  member(s, "recorder_ring", "item_size", &l->item_size) &&
		  member(s, "recorder_ring", "reader", &l->reader) &&
		  member(s, "recorder_ring", "writer", &l->writer) &&
		  member(s, "recorder_ring", "commit", &l->commit) &&
		  member(s, "recorder_ring", "overflow", &l->overflow) &&
		  member(s, "recorder_entry", "format", &l->format) &&
		  member(s, "recorder_entry", "order", &l->order) &&
		  member(s, "recorder_entry", "timestamp", &l->timestamp) &&
		  member(s, "recorder_entry", "where", &l->where) &&
		  member(s, "recorder_entry", "args", &l->args) &&
		  dbg_type_size(s, "recorder_entry", &l->entry_size);
	if (!ok)
		return false;
	if (!member(s, "recorder_info", "data", &l->data)) {
		if (!dbg_type_size(s, "recorder_info", &info_size))
			return false;
		l->data = info_size;
	}
	/* Every field is read as 8 bytes below: refuse anything odd. */
	if (l->entry_size < l->args + 32 || l->entry_size > 4096 || l->data < l->ring + 48)
		return false;
	l->from_dwarf = true;
	return true;
}

/* The ELFE entry: caller return address @24 where the library has `where`. */
static const struct rec_layout elfe_entry = {
	.entry_size = 64, .format = 0, .order = 8, .timestamp = 16, .where = 24, .args = 32,
};

/* ------------------------------------------------------------- discovery */

static void read_name(struct ctx *c, uint64_t ptr, struct ring_header *h)
{
	char buf[MAX_NAME];
	if (ptr && dbg_read_module_string(c->s, ptr, buf, sizeof(buf))) {
		h->name = strdup(buf);
	} else {
		snprintf(buf, sizeof(buf), "recorder@0x%llx", (unsigned long long)h->addr);
		h->name = strdup(buf);
	}
	if (!h->name)
		c->nomem = true;
}

/* Decode recorder_list(): [endbr64] [push %rbp; mov %rsp,%rbp]
 * mov disp32(%rip),%rax [pop %rbp] ret.  Sets *VAR to the address it loads. */
static bool decode_recorder_list(struct ctx *c, uint64_t fn, uint64_t *var)
{
	unsigned char b[20];
	size_t p = 0;
	bool frame = false;
	if (!core_read_bytes(c->core, fn, b, sizeof(b)))
		return false;
	if (memcmp(b, "\xf3\x0f\x1e\xfa", 4) == 0)
		p += 4;
	if (memcmp(b + p, "\x55\x48\x89\xe5", 4) == 0) {
		p += 4;
		frame = true;
	}
	if (memcmp(b + p, "\x48\x8b\x05", 3) != 0)
		return false;
	int32_t disp;
	memcpy(&disp, b + p + 3, 4);
	size_t mov_end = p + 7;
	p = mov_end;
	if (frame && b[p] == 0x5d)
		p++;
	if (b[p] != 0xc3)
		return false;
	*var = fn + mov_end + (uint64_t)(int64_t)disp;
	return true;
}

/* The library's list head: .symtab's `recorders`, else decoded from the
 * exported recorder_list().  Sets *HEAD to the first recorder_info. */
static bool find_library_head(struct ctx *c, uint64_t *head)
{
	uint64_t addr, size, fn;
	if (dbg_find_symbol(c->s, "recorders", &addr, &size) && size == 8 &&
	    core_read_u64(c->core, addr, head))
		return true;
	if (dbg_find_symbol(c->s, "recorder_list", &fn, &size) && decode_recorder_list(c, fn, &addr) &&
	    core_read_u64(c->core, addr, head))
		return true;
	return false;
}

/* ------------------------------------------------------------ ring headers */

/* Read a recorder_info's ring with layout L; false when it does not look
 * like one (item_size must be the entry size). */
static bool library_header_with(struct ctx *c, uint64_t info, const struct rec_layout *l,
				struct ring_header *h)
{
	uint64_t r = info + l->ring;
	struct core *core = c->core;
	if (!core_read_u64(core, r + l->size, &h->size) ||
	    !core_read_u64(core, r + l->item_size, &h->item_size) ||
	    !core_read_u64(core, r + l->reader, &h->reader) ||
	    !core_read_u64(core, r + l->writer, &h->writer) ||
	    !core_read_u64(core, r + l->commit, &h->commit) ||
	    !core_read_u64(core, r + l->overflow, &h->overflow))
		return false;
	h->has_size = true;
	h->data = info + l->data;
	h->layout = l;
	return h->item_size == l->entry_size;
}

static void library_header(struct ctx *c, uint64_t info, struct ring_header *h)
{
	memset(h, 0, sizeof(*h));
	h->addr = info;
	const struct rec_layout *l = c->has_dwarf_layout ? &c->dwarf_layout : &default_layouts[0];
	uint64_t name = 0;
	core_read_u64(c->core, info + l->name, &name);
	read_name(c, name, h);
	if (c->has_dwarf_layout) {
		library_header_with(c, info, l, h);
		return;
	}
	for (size_t i = 0; i < sizeof(default_layouts) / sizeof(default_layouts[0]); i++)
		if (library_header_with(c, info, &default_layouts[i], h))
			return;
	library_header_with(c, info, &default_layouts[0], h);  /* reported as garbage */
}

/* ELFE's ring size is a template constant: read it from the vtable's
 * Size() (`mov $N,%eax; ret`), else from the object's symbol size. */
static bool elfe_size(struct ctx *c, uint64_t obj, uint64_t *size)
{
	uint64_t vtable, fn, symsize, off, addr;
	unsigned char b[16];
	if (core_read_u64(c->core, obj, &vtable) && core_read_u64(c->core, vtable + 8, &fn) &&
	    core_read_bytes(c->core, fn, b, sizeof(b))) {
		size_t p = memcmp(b, "\xf3\x0f\x1e\xfa", 4) == 0 ? 4 : 0;
		if (memcmp(b + p, "\x55\x48\x89\xe5", 4) == 0)
			p += 4;
		if (memcmp(b + p, "\x48\x89\x7d\xf8", 4) == 0)
			p += 4;
		if (b[p] == 0xb8) {
			uint32_t imm;
			memcpy(&imm, b + p + 1, 4);
			*size = imm;
			return true;
		}
	}
	const char *name = dbg_symbol_name_at(c->s, obj, &off);
	if (name && off == 0 && dbg_find_symbol(c->s, name, &addr, &symsize) && addr == obj &&
	    symsize > 40 && (symsize - 40) % 64 == 0) {
		*size = (symsize - 40) / 64;
		return true;
	}
	return false;
}

static void elfe_header(struct ctx *c, uint64_t obj, struct ring_header *h)
{
	uint32_t v[4] = {0};
	uint64_t name = 0;
	memset(h, 0, sizeof(*h));
	h->elfe = true;
	h->addr = obj;
	core_read_u64(c->core, obj + 16, &name);
	read_name(c, name, h);
	for (int i = 0; i < 4; i++)
		core_read_u32(c->core, obj + 24 + 4 * (uint64_t)i, &v[i]);
	h->reader = v[0];
	h->writer = v[1];
	h->commit = v[2];
	h->overflow = v[3];
	h->item_size = 64;
	h->has_size = elfe_size(c, obj, &h->size);
	h->data = obj + 40;
	h->layout = &elfe_entry;
}

/* --------------------------------------------------------------- recovery */

struct slot {
	uint64_t format, order, timestamp, where, args[4];
};

/* One record being assembled: its head slot and continuation arguments. */
struct raw {
	uint64_t index;
	struct slot head;
	uint64_t args[AN_RECFMT_MAX_ARGS];
	size_t nargs;
	unsigned nslots;
};

static bool read_slot(struct ctx *c, const struct ring_header *h, uint64_t index, struct slot *sl)
{
	const struct rec_layout *l = h->layout;
	unsigned char b[4096];
	if (l->entry_size > sizeof(b))
		return false;
	if (!core_read_bytes(c->core, h->data + (index % h->size) * l->entry_size, b, l->entry_size))
		return false;
	memcpy(&sl->format, b + l->format, 8);
	memcpy(&sl->order, b + l->order, 8);
	memcpy(&sl->timestamp, b + l->timestamp, 8);
	memcpy(&sl->where, b + l->where, 8);
	memcpy(sl->args, b + l->args, 32);
	return true;
}

static bool read_string_cb(void *ctx, uint64_t addr, char *buf, size_t max)
{
	struct ctx *c = ctx;
	return dbg_read_module_string(c->s, addr, buf, max);
}

/* The function of an entry: the library's `where` string, or ELFE's caller
 * return address symbolized (with its source line as the location). */
static void entry_function(struct ctx *c, const struct ring_header *h, uint64_t where,
			   struct an_event *e)
{
	char buf[256];
	if (!h->elfe) {
		if (where && dbg_read_module_string(c->s, where, buf, sizeof(buf)))
			e->function = strdup(buf);
		return;
	}
	struct dbg_location *locs = NULL;
	size_t n = 0;
	struct core_error *err = dbg_symbolize(c->s, where, false, &locs, &n);
	if (!err && n > 0) {
		e->function = an_strdup(locs[0].function);
		if (!e->location && locs[0].file && locs[0].line > 0) {
			snprintf(buf, sizeof(buf), "%s:%d", locs[0].file, locs[0].line);
			e->location = strdup(buf);
		}
	}
	core_error_destroy(err);
	dbg_locations_free(locs, n);
}

/* The message as the library shows it, less its limits: the indent mark
 * removed, a final newline dropped, %s strings read post-mortem. */
static char *format_message(struct ctx *c, const char *format, const struct raw *raw,
			    unsigned *strings_read)
{
	char *user = strdup(format);
	if (!user)
		return NULL;
	size_t pos;
	if (an_recfmt_indent_mark(user, &pos))
		memmove(user + pos, user + pos + 1, strlen(user + pos + 1) + 1);
	char *msg = an_recfmt_format(user, raw->args, raw->nargs, read_string_cb, c, 0,
				     strings_read);
	free(user);
	size_t len = msg ? strlen(msg) : 0;
	if (len && msg[len - 1] == '\n')
		msg[len - 1] = '\0';
	return msg;
}

/* Fill E from RAW; false when the format could not be read. */
static bool fill_event(struct ctx *c, const struct ring_header *h, const struct raw *raw,
		       struct an_event *e)
{
	char fmt[MAX_FORMAT];
	memset(e, 0, sizeof(*e));
	e->order = raw->head.order;
	e->timestamp = raw->head.timestamp;
	memcpy(e->args, raw->args, raw->nargs * sizeof(raw->args[0]));
	e->nargs = raw->nargs;
	bool have_format = dbg_read_module_string(c->s, raw->head.format, fmt, sizeof(fmt));
	if (have_format) {
		const char *rest;
		e->location = an_recfmt_split_location(fmt, &rest);
		e->format = strdup(rest);
		e->message = format_message(c, rest, raw, &e->strings_read);
		char *lib = an_recfmt_library_message(fmt, raw->args, raw->nargs, read_string_cb,
						      c, &e->indent_mark);
		if (lib && e->message && strcmp(lib, e->message) != 0)
			e->library_message = lib;
		else
			free(lib);
		if (!e->format || !e->message)
			c->nomem = true;
	}
	entry_function(c, h, raw->head.where, e);
	return have_format;
}

static int event_cmp(const void *a, const void *b)
{
	const struct an_event *x = a, *y = b;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Warn about indices that break the ring's invariants; false when nothing
 * can be recovered. */
static bool check_header(struct ctx *c, const struct ring_header *h)
{
	if (!h->has_size) {
		core_warn(c->core, "recorder %s at 0x%llx: ring size unknown, entries not recovered", h->name,
			(unsigned long long)h->addr);
		return false;
	}
	if (h->size == 0 || h->size > MAX_RING_SIZE) {
		core_warn(c->core, "recorder %s at 0x%llx: implausible ring size %llu, entries not recovered",
			h->name, (unsigned long long)h->addr, (unsigned long long)h->size);
		return false;
	}
	if (h->item_size != h->layout->entry_size) {
		core_warn(c->core, "recorder %s at 0x%llx: entry size %llu, expected %llu; entries not recovered",
			h->name, (unsigned long long)h->addr, (unsigned long long)h->item_size,
			(unsigned long long)h->layout->entry_size);
		return false;
	}
	if (h->writer < h->reader)
		core_warn(c->core, "recorder %s: writer %llu is behind reader %llu (corrupted indices)", h->name,
			(unsigned long long)h->writer, (unsigned long long)h->reader);
	if (h->commit > h->writer)
		core_warn(c->core, "recorder %s: commit %llu is ahead of writer %llu (corrupted indices)", h->name,
			(unsigned long long)h->commit, (unsigned long long)h->writer);
	return true;
}

/* Walk slots [START, writer) into RAWS; counts in-flight slots. */
static size_t collect_records(struct ctx *c, const struct ring_header *h, uint64_t start,
			      struct raw *raws, uint64_t *in_flight, uint64_t *unreadable)
{
	bool wrapped = h->writer > h->size;
	/* With every reserved slot committed nothing was in flight, so orders
	 * out of sequence are concurrent writers, not stale slots. */
	bool maybe_in_flight = !(h->commit == h->writer);
	uint64_t first_order = 0;
	size_t n = 0;
	bool have_cur = false;
	for (uint64_t i = start; i < h->writer; i++) {
		struct slot sl;
		if (!read_slot(c, h, i, &sl)) {
			(*unreadable)++;
			have_cur = false;
			continue;
		}
		struct raw *cur = have_cur ? &raws[n - 1] : NULL;
		if (!sl.format) {
			if (cur && sl.order == cur->head.order && cur->nslots < 3 &&
			    i == cur->index + cur->nslots) {
				memcpy(cur->args + 4 * cur->nslots, sl.args, sizeof(sl.args));
				cur->nargs = 4 * (size_t)++cur->nslots;
			} else if (!(wrapped && n == 0)) {
				(*in_flight)++;   /* reserved, never filled */
				have_cur = false;
			}
			continue;
		}
		/* The order is written last: a slot whose order is older than
		 * the window's first record still holds the last lap's order,
		 * or, in a ring that never wrapped, the zero of a slot never
		 * written. */
		bool stale = (c->has_next_order && !h->elfe && sl.order >= c->next_order) ||
			     (n > 0 && sl.order < first_order);
		if (maybe_in_flight && stale) {
			(*in_flight)++;
			have_cur = false;
			continue;
		}
		struct raw *r = &raws[n++];
		memset(r, 0, sizeof(*r));
		r->index = i;
		r->head = sl;
		memcpy(r->args, sl.args, sizeof(sl.args));
		r->nargs = 4;
		r->nslots = 1;
		if (n == 1)
			first_order = sl.order;
		have_cur = true;
	}
	return n;
}

static void recover_ring(struct ctx *c, struct ring_header *h, struct an_recorder *r)
{
	r->name = h->name;
	h->name = NULL;
	r->layout = strdup(h->elfe ? "elfe" : "recorder");
	r->address = h->addr;
	r->size = h->size;
	r->writer = h->writer;
	r->reader = h->reader;
	r->commit = h->commit;
	r->overflow = h->overflow;
	if (!r->layout || !r->name) {
		c->nomem = true;
		return;
	}
	h->name = r->name;      /* borrowed for the warnings */
	bool usable = check_header(c, h);
	h->name = NULL;
	if (!usable)
		return;
	r->overwritten = h->writer > h->size ? h->writer - h->size : 0;
	uint64_t start = r->overwritten;
	if (h->writer - start > MAX_WINDOW) {
		core_warn(c->core, "recorder %s: only the last %u of %llu slots are recovered", r->name,
			MAX_WINDOW, (unsigned long long)(h->writer - start));
		start = h->writer - MAX_WINDOW;
	}
	size_t window = (size_t)(h->writer - start);
	struct raw *raws = window ? malloc(window * sizeof(*raws)) : NULL;
	if (window && !raws) {
		c->nomem = true;
		return;
	}
	uint64_t unreadable = 0, bad_formats = 0;
	size_t n = collect_records(c, h, start, raws, &r->in_flight, &unreadable);
	if (unreadable)
		core_warn(c->core, "recorder %s: %llu of %zu slots unreadable (entries at 0x%llx)", r->name,
			(unsigned long long)unreadable, window, (unsigned long long)h->data);
	if (r->in_flight)
		core_warn(c->core, "recorder %s: %llu slot(s) were being written at the crash (in flight)",
			r->name, (unsigned long long)r->in_flight);
	r->events = n ? calloc(n, sizeof(*r->events)) : NULL;
	if (n && !r->events) {
		c->nomem = true;
		free(raws);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (!fill_event(c, h, &raws[i], &r->events[i]))
			bad_formats++;
	}
	r->nevents = n;
	r->recovered = n;
	free(raws);
	if (bad_formats)
		core_warn(c->core, "recorder %s: %llu record(s) with an unreadable format", r->name,
			(unsigned long long)bad_formats);
	if (r->nevents)  /* r->events is NULL when no slot was recovered */
		qsort(r->events, r->nevents, sizeof(r->events[0]), event_cmp);
}

/* ------------------------------------------------------------ list walks */

static struct an_recorder *new_recorder(struct ctx *c)
{
	struct analysis *an = c->an;
	struct an_recorder *v = realloc(an->recorders, (an->nrecorders + 1) * sizeof(*v));
	if (!v) {
		c->nomem = true;
		return NULL;
	}
	an->recorders = v;
	memset(&v[an->nrecorders], 0, sizeof(v[0]));
	return &v[an->nrecorders++];
}

/* Walk a list from HEAD (next pointer at NEXT_OFF), recovering each ring.
 * HEADER_LEN bytes of each node must be readable. */
/* Recover the recorder at NODE (already validated). */
static void recover_one(struct ctx *c, uint64_t node, bool elfe)
{
	struct ring_header h;
	if (elfe)
		elfe_header(c, node, &h);
	else
		library_header(c, node, &h);
	struct an_recorder *r = c->nomem ? NULL : new_recorder(c);
	if (r)
		recover_ring(c, &h, r);
	free(h.name);
}

static void walk_list(struct ctx *c, uint64_t head, bool elfe, const char *what)
{
	struct an_addr_set seen = {0};
	uint64_t next_off = elfe ? 8 : (c->has_dwarf_layout ? c->dwarf_layout.next : 24);
	size_t header_len = elfe ? 40 : 64;
	size_t count = 0;
	for (uint64_t node = head; node && !c->nomem; count++) {
		if (count == MAX_RECORDERS) {
			core_warn(c->core, "%s: more than %d recorders, list walk stopped", what, MAX_RECORDERS);
			break;
		}
		if (!core_pointer_ok(c->core, node, header_len, 8)) {
			core_warn(c->core, "%s: recorder pointer 0x%llx is not readable, list walk stopped", what,
				(unsigned long long)node);
			break;
		}
		int added = an_addr_set_add(&seen, node);
		if (added < 0)
			c->nomem = true;
		if (added <= 0) {
			if (!c->nomem)
				core_warn(c->core, "%s: list cycles back to 0x%llx, walk stopped", what,
					(unsigned long long)node);
			break;
		}
		recover_one(c, node, elfe);
		uint64_t next = 0;
		if (!core_read_u64(c->core, node + next_off, &next)) {
			core_warn(c->core, "%s: next pointer of 0x%llx unreadable", what, (unsigned long long)node);
			break;
		}
		node = next;
	}
	an_addr_set_deinit(&seen);
}

static bool first_only(void *arg, const char *name, uint64_t addr)
{
	(void)arg;
	(void)name;
	(void)addr;
	return false;
}

/* Last resort when no list head is found: every recorder_info_for_NAME. */
static bool recover_by_symbol(void *arg, const char *name, uint64_t addr)
{
	struct ctx *c = arg;
	(void)name;
	if (c->an->nrecorders >= MAX_RECORDERS || c->nomem)
		return false;
	if (core_pointer_ok(c->core, addr, 64, 8))
		recover_one(c, addr, false);
	return true;
}

static int timeline_cmp(const void *a, const void *b)
{
	const struct an_timeline_entry *x = a, *y = b;
	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	if (x->recorder != y->recorder)
		return x->recorder < y->recorder ? -1 : 1;
	return x->event < y->event ? -1 : x->event > y->event;
}

static void build_timeline(struct ctx *c)
{
	struct analysis *an = c->an;
	size_t total = 0;
	for (size_t i = 0; i < an->nrecorders; i++)
		total += an->recorders[i].nevents;
	if (!total)
		return;
	an->timeline = calloc(total, sizeof(*an->timeline));
	if (!an->timeline) {
		c->nomem = true;
		return;
	}
	for (size_t i = 0; i < an->nrecorders; i++)
		for (size_t j = 0; j < an->recorders[i].nevents; j++) {
			struct an_timeline_entry *t = &an->timeline[an->ntimeline++];
			t->order = an->recorders[i].events[j].order;
			t->timestamp = an->recorders[i].events[j].timestamp;
			t->recorder = i;
			t->event = j;
		}
	qsort(an->timeline, an->ntimeline, sizeof(an->timeline[0]), timeline_cmp);
}

void an_recorders_recover(struct dbg_session *s, struct analysis *an)
{
	struct ctx c = {.s = s, .core = dbg_session_core(s), .an = an};
	uint64_t head, addr, size;
	if (!c.core)
		return;
	bool have_head = find_library_head(&c, &head);
	bool have_infos = !have_head && dbg_symbols_with_prefix(s, "recorder_info_for_", first_only, NULL);
	if (have_head || have_infos) {
		/* Only a program that has recorders pays for the DWARF layout search. */
		c.has_dwarf_layout = layout_from_dwarf(s, &c.dwarf_layout);
		if (dbg_find_symbol(s, "recorder_order", &addr, &size) &&
		    core_read_u64(c.core, addr, &c.next_order))
			c.has_next_order = true;
	}
	if (have_head)
		walk_list(&c, head, false, "recorder list");
	else if (have_infos)
		dbg_symbols_with_prefix(s, "recorder_info_for_", recover_by_symbol, &c);
	if (dbg_find_symbol(s, ELFE_HEAD, &addr, &size) && core_read_u64(c.core, addr, &head))
		walk_list(&c, head, true, "FlightRecorderBase::head");
	build_timeline(&c);
	if (c.nomem)
		core_warn(c.core, "out of memory while recovering flight recorders");
}
