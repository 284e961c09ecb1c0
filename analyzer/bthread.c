/* bRPC bthreads: find the runtime, enumerate its TaskMeta pool, state each
 * live bthread, unwind the suspended ones from their saved context and
 * split a running one off its worker's stack.
 *
 * Everything read from the core is untrusted: each pointer is checked
 * before it is followed, each count is bounded, and a TaskMeta, queue or
 * context that cannot be trusted is reported (a warning naming the bthread
 * or the address) while the other bthreads are still listed. */
#include "bthread.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "../base/array.h"

#define POOL "butil::ResourcePool<bthread::TaskMeta>"
#define SYM_NGROUP "_ZN5butil12ResourcePoolIN7bthread8TaskMetaEE7_ngroupE"
#define SYM_BLOCK_GROUPS "_ZN5butil12ResourcePoolIN7bthread8TaskMetaEE13_block_groupsE"
#define SYM_TASK_CONTROL "_ZN7bthread14g_task_controlE"
#define SYM_MAKE_FCONTEXT "bthread_make_fcontext"
#define SYM_FINISH "finish"
#define SYM_TASK_RUNNER "_ZN7bthread9TaskGroup11task_runnerEl"

enum {
	MAX_BLOCK_GROUPS = 65536,       /* RP_MAX_BLOCK_NGROUP */
	GROUP_NBLOCK = 65536,           /* RP_GROUP_NBLOCK: the slot arithmetic */
	BLOCK_MAX_BYTES = 65536,        /* ResourcePoolBlockMaxSize */
	BLOCK_MAX_ITEMS = 256,          /* ResourcePoolBlockMaxItem */
	MAX_BLOCKS = 1 << 14,           /* blocks visited, all groups together */
	MAX_ITEMS = 1 << 20,            /* TaskMetas kept */
	MAX_TAGS = 1024,
	MAX_GROUPS_PER_TAG = 1024,      /* BTHREAD_MAX_CONCURRENCY */
	MAX_QUEUE = 1 << 20,
	MAX_GROUPS = 4096,              /* TaskGroups, all tags together */
	MAX_QUEUED = 1 << 22,           /* queue entries read, all queues together */
	MAX_ITEM_WARNINGS = 32,
	MAX_CONTEXT_SIZE = 0x100,       /* bthread_jump_fcontext's frame, of any architecture */
	STACK_TYPE_MAIN = 0,
};

/* Member offsets, from DWARF or DESIGN.md's defaults. */
struct bt_layout {
	uint64_t meta_size, block_items;
	uint64_t waiter, sleep, version_butex, tid, fn, stack, stack_type;   /* TaskMeta */
	uint64_t context, stacksize, bottom;        /* ContextualStack */
	uint64_t container;                         /* ButexWaiter */
	uint64_t nblock, blocks, nitem;             /* BlockGroup, Block */
	uint64_t cur_meta, main_stack, main_tid, group_tid;                  /* TaskGroup */
	uint64_t rq_bottom, rq_capacity, rq_buffer, rq_top;
	uint64_t rrq_count, rrq_cap, rrq_start, rrq_items;
	uint64_t tagged_ngroup, tagged_groups;      /* TaskControl */
};

struct bt_field {
	const char *type, *member;
	size_t at;                  /* offsetof(struct bt_layout, ...) */
	uint64_t fallback;          /* DESIGN.md's offset */
};

#define F(type, member, field, def) { type, member, offsetof(struct bt_layout, field), def }
static const struct bt_field bt_fields[] = {
	F("bthread::TaskMeta", "current_waiter", waiter, 0),
	F("bthread::TaskMeta", "current_sleep", sleep, 8),
	F("bthread::TaskMeta", "version_butex", version_butex, 24),
	F("bthread::TaskMeta", "tid", tid, 32),
	F("bthread::TaskMeta", "fn", fn, 48),
	F("bthread::TaskMeta", "stack", stack, 64),
	F("bthread::TaskMeta", "attr.stack_type", stack_type, 72),
	F("bthread::ContextualStack", "context", context, 8),
	F("bthread::ContextualStack", "storage.stacksize", stacksize, 24),
	F("bthread::ContextualStack", "storage.bottom", bottom, 32),
	F("bthread::ButexWaiter", "container", container, 24),
	F(POOL "::BlockGroup", "nblock", nblock, 0),
	F(POOL "::BlockGroup", "blocks", blocks, 8),
	F(POOL "::Block", "nitem", nitem, 256 * 240),
	F("bthread::TaskGroup", "_cur_meta", cur_meta, 0),
	F("bthread::TaskGroup", "_main_stack", main_stack, 256),
	F("bthread::TaskGroup", "_main_tid", main_tid, 264),
	F("bthread::TaskGroup", "_tid", group_tid, 528),
	F("bthread::TaskGroup", "_rq._bottom", rq_bottom, 320),
	F("bthread::TaskGroup", "_rq._capacity", rq_capacity, 328),
	F("bthread::TaskGroup", "_rq._buffer", rq_buffer, 336),
	F("bthread::TaskGroup", "_rq._top", rq_top, 384),
	F("bthread::TaskGroup", "_remote_rq._tasks._count", rrq_count, 448),
	F("bthread::TaskGroup", "_remote_rq._tasks._cap", rrq_cap, 452),
	F("bthread::TaskGroup", "_remote_rq._tasks._start", rrq_start, 456),
	F("bthread::TaskGroup", "_remote_rq._tasks._items", rrq_items, 464),
	F("bthread::TaskControl", "_tagged_ngroup", tagged_ngroup, 0),
	F("bthread::TaskControl", "_tagged_groups", tagged_groups, 24),
};
#undef F

/* One TaskMeta of the pool that was ever started (tid set). */
struct bt_item {
	uint64_t addr, slot, tid;
	uint64_t waiter, sleep, version_butex, fn, stack;
	uint32_t stack_type;
	bool live;
	bool queued;
	int group;                  /* index in bt_ctx.groups running it, or -1 */
};

struct bt_group {
	uint64_t addr, cur_meta, main_stack, main_tid, pthread;
};

struct bt_ctx {
	struct dbg_session *s;
	struct core *core;
	struct analysis *an;
	struct bt_layout lay;
	bool from_dwarf;
	uint64_t ngroup_sym, block_groups_sym, control_sym;
	uint64_t base_start, base_end;          /* a pc here is task_runner's caller */
	uint64_t runner_start, runner_end;      /* bthread::TaskGroup::task_runner */
	struct bt_item *items;                  /* by slot */
	size_t nitems, cap;
	size_t nblocks;
	uint64_t ngroup;                        /* the pool's block groups */
	size_t ngood, nbad;                     /* items whose tid is (not) of their slot */
	uint64_t bad_addr[MAX_ITEM_WARNINGS], bad_tid[MAX_ITEM_WARNINGS], bad_slot[MAX_ITEM_WARNINGS];
	size_t nwarned, nunwarned;              /* per-bthread warnings: given, held back */
	struct bt_group *groups;
	size_t ngroups, gcap;
	bool groups_cut;                        /* MAX_GROUPS reached */
	uint64_t *main_tids;                    /* the groups' main tasks, sorted */
	size_t nqueued;                         /* queue entries read */
	bool *thread_split;                     /* an->threads[i] already gave a bthread its frames */
	struct bt_butex *butexes;               /* every item's version_butex, sorted */
	struct an_frame_list scratch;
};

struct bt_butex {
	uint64_t butex;
	size_t item;
};

/* A warning about one bthread or TaskMeta: the first MAX_ITEM_WARNINGS are
 * given, the rest counted, so a wrecked pool cannot flood the report. */
__attribute__((format(printf, 2, 3)))
static void item_warn(struct bt_ctx *c, const char *fmt, ...)
{
	if (c->nwarned >= MAX_ITEM_WARNINGS) {
		c->nunwarned++;
		return;
	}
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	core_warn(c->core, "bthread: %s", msg);
	c->nwarned++;
}

/* ---- find ---------------------------------------------------------------- */

/* The base of every bthread stack: task_runner's return address is the
 * `finish` label inside bthread_make_fcontext (the whole function when the
 * label cannot be found there). */
static void find_base(struct bt_ctx *c)
{
	uint64_t make, make_size = 0, finish, runner, runner_size = 0;
	if (dbg_find_symbol(c->s, SYM_MAKE_FCONTEXT, &make, &make_size) && make_size) {
		if (dbg_find_symbol(c->s, SYM_FINISH, &finish, NULL) && finish >= make &&
		    finish < make + make_size) {
			c->base_start = finish;
			c->base_end = finish + 1;
		} else {
			c->base_start = make;
			c->base_end = make + make_size;
		}
	} else {
		core_warn(c->core, "bthread: %s not found: bthread stacks are unwound to their end, "
			  "not cut at task_runner", SYM_MAKE_FCONTEXT);
	}
	if (dbg_find_symbol(c->s, SYM_TASK_RUNNER, &runner, &runner_size) && runner_size) {
		c->runner_start = runner;
		c->runner_end = runner + runner_size;
	}
}

static bool find_symbols(struct bt_ctx *c)
{
	if (!dbg_find_symbol(c->s, SYM_NGROUP, &c->ngroup_sym, NULL))
		return false;           /* no bRPC here: the one lookup that costs anything */
	if (!dbg_find_symbol(c->s, SYM_BLOCK_GROUPS, &c->block_groups_sym, NULL)) {
		core_warn(c->core, "bthread: the TaskMeta pool's _ngroup is there but not its "
			  "_block_groups (%s); no bthreads listed", SYM_BLOCK_GROUPS);
		return false;
	}
	if (!dbg_find_symbol(c->s, SYM_TASK_CONTROL, &c->control_sym, NULL))
		core_warn(c->core, "bthread: bthread::g_task_control not found: running and queued "
			  "bthreads are not told from suspended ones");
	find_base(c);
	return true;
}

/* DWARF's layout when the program has bthread::TaskMeta's, else the
 * documented one (which the pool walk then has to confirm).  False when
 * the offsets cannot be right. */
static bool layout_init(struct bt_ctx *c)
{
	struct bt_layout *l = &c->lay;
	uint64_t size = 0;
	c->from_dwarf = dbg_type_size(c->s, "bthread::TaskMeta", &size);
	l->meta_size = c->from_dwarf ? size : 240;
	const char *missing = NULL;
	size_t nmissing = 0;
	for (size_t i = 0; i < sizeof(bt_fields) / sizeof(bt_fields[0]); i++) {
		const struct bt_field *f = &bt_fields[i];
		uint64_t *slot = (uint64_t *)((char *)l + f->at);
		if (c->from_dwarf && dbg_member_offset(c->s, f->type, f->member, slot))
			continue;
		*slot = f->fallback;
		if (c->from_dwarf && nmissing++ == 0)
			missing = f->member;
	}
	if (nmissing)
		core_warn(c->core, "bthread: the debug info lacks %s and %zu more members; using the "
			  "documented offsets for them", missing, nmissing - 1);
	if (l->meta_size < 64 || l->meta_size > BLOCK_MAX_BYTES) {
		core_warn(c->core, "bthread: bthread::TaskMeta is %" PRIu64 " bytes; no bthreads listed",
			  l->meta_size);
		return false;
	}
	l->block_items = BLOCK_MAX_BYTES / l->meta_size;
	if (l->block_items > BLOCK_MAX_ITEMS)
		l->block_items = BLOCK_MAX_ITEMS;
	uint64_t meta_fields[] = { l->waiter, l->sleep, l->version_butex, l->tid, l->fn, l->stack,
				   l->stack_type };
	bool ok = l->nitem >= l->block_items * l->meta_size && l->nitem < 2 * BLOCK_MAX_BYTES;
	for (size_t i = 0; i < sizeof(meta_fields) / sizeof(meta_fields[0]); i++)
		ok = ok && meta_fields[i] + 8 <= l->meta_size;
	if (!ok)
		core_warn(c->core, "bthread: the TaskMeta/Block layout of the debug info is not "
			  "bRPC's (fields past the end); no bthreads listed");
	return ok;
}

/* ---- enumerate ------------------------------------------------------------ */

static uint64_t get_u64(const unsigned char *p, uint64_t off)
{
	uint64_t v;
	memcpy(&v, p + off, 8);
	return v;
}

static uint32_t get_u32(const unsigned char *p, uint64_t off)
{
	uint32_t v;
	memcpy(&v, p + off, 4);
	return v;
}

/* One item of a block, read at BYTES (meta_size of them) from ADDR. */
static void add_item(struct bt_ctx *c, uint64_t slot, uint64_t addr, const unsigned char *bytes)
{
	const struct bt_layout *l = &c->lay;
	uint64_t tid = get_u64(bytes, l->tid);
	if (tid == 0)
		return;                 /* handed out, never started */
	if ((tid & 0xffffffffu) != slot) {
		if (c->nbad < MAX_ITEM_WARNINGS) {
			c->bad_addr[c->nbad] = addr;
			c->bad_tid[c->nbad] = tid;
			c->bad_slot[c->nbad] = slot;
		}
		c->nbad++;
		return;
	}
	c->ngood++;
	if (c->nitems >= MAX_ITEMS)
		return;
	if (!base_array_reserve(&c->items, &c->cap, c->nitems + 1, sizeof(*c->items)))
		return;
	struct bt_item *it = &c->items[c->nitems];
	memset(it, 0, sizeof(*it));
	it->addr = addr;
	it->slot = slot;
	it->tid = tid;
	it->waiter = get_u64(bytes, l->waiter);
	it->sleep = get_u64(bytes, l->sleep);
	it->version_butex = get_u64(bytes, l->version_butex);
	it->fn = get_u64(bytes, l->fn);
	it->stack = get_u64(bytes, l->stack);
	it->stack_type = get_u32(bytes, l->stack_type);
	it->group = -1;
	uint32_t version;
	if (!core_pointer_ok(c->core, it->version_butex, 4, 4) ||
	    !core_read_u32(c->core, it->version_butex, &version)) {
		item_warn(c, "TaskMeta 0x%" PRIx64 " (bthread 0x%" PRIx64 "): version_butex 0x%" PRIx64
			  " %s; not listed", addr, tid, it->version_butex,
			  core_pointer_problem(c->core, it->version_butex));
		return;
	}
	it->live = (tid >> 32) == version;
	c->nitems++;
}

static void walk_block(struct bt_ctx *c, uint64_t first_slot, uint64_t block, unsigned char *buf)
{
	const struct bt_layout *l = &c->lay;
	uint64_t nitem;
	if (!core_pointer_ok(c->core, block, 8, 8) || !core_read_u64(c->core, block + l->nitem, &nitem)) {
		core_warn(c->core, "bthread: TaskMeta block 0x%" PRIx64 " %s; its bthreads are not "
			  "listed", block, core_pointer_problem(c->core, block));
		return;
	}
	if (nitem > l->block_items) {
		core_warn(c->core, "bthread: TaskMeta block 0x%" PRIx64 " claims %" PRIu64 " items, more "
			  "than %" PRIu64 "; reading %" PRIu64, block, nitem, l->block_items, l->block_items);
		nitem = l->block_items;
	}
	if (!core_read_bytes(c->core, block, buf, nitem * l->meta_size)) {
		core_warn(c->core, "bthread: TaskMeta block 0x%" PRIx64 " is not readable; its bthreads "
			  "are not listed", block);
		return;
	}
	for (uint64_t i = 0; i < nitem; i++)
		add_item(c, first_slot + i, block + i * l->meta_size, buf + i * l->meta_size);
}

/* N words at ADDR into a new array (caller frees); NULL when unreadable. */
static uint64_t *read_words(struct core *core, uint64_t addr, uint64_t n)
{
	uint64_t *v = malloc(n ? n * 8 : 8);
	if (v && n && !core_read_bytes(core, addr, v, n * 8)) {
		free(v);
		return NULL;
	}
	return v;
}

static bool walk_group_blocks(struct bt_ctx *c, uint64_t g, uint64_t bg, unsigned char *buf)
{
	uint64_t nblock;
	if (!core_pointer_ok(c->core, bg, 8, 8) || !core_read_u64(c->core, bg + c->lay.nblock, &nblock)) {
		core_warn(c->core, "bthread: TaskMeta block group %" PRIu64 " at 0x%" PRIx64 " %s; its "
			  "bthreads are not listed", g, bg, core_pointer_problem(c->core, bg));
		return true;
	}
	if (nblock > GROUP_NBLOCK) {
		core_warn(c->core, "bthread: TaskMeta block group %" PRIu64 " claims %" PRIu64 " blocks; "
			  "reading %d", g, nblock, GROUP_NBLOCK);
		nblock = GROUP_NBLOCK;
	}
	uint64_t *blocks = read_words(c->core, bg + c->lay.blocks, nblock);
	if (!blocks) {
		core_warn(c->core, "bthread: the block table of TaskMeta block group 0x%" PRIx64 " is "
			  "not readable", bg);
		return true;
	}
	bool go_on = true;
	for (uint64_t b = 0; b < nblock && go_on; b++) {
		if (!blocks[b])
			continue;
		if (c->nblocks++ >= MAX_BLOCKS) {
			core_warn(c->core, "bthread: more than %d TaskMeta blocks; the rest are not read",
				  MAX_BLOCKS);
			go_on = false;
			break;
		}
		walk_block(c, (g * GROUP_NBLOCK + b) * c->lay.block_items, blocks[b], buf);
	}
	free(blocks);
	return go_on;
}

/* Every group, every block, every item: not bounded by the _nbthreads
 * statistic, which can be stale. */
static void walk_pool(struct bt_ctx *c)
{
	uint64_t ngroup;
	if (!core_read_u64(c->core, c->ngroup_sym, &ngroup)) {
		core_warn(c->core, "bthread: the TaskMeta pool's _ngroup at 0x%" PRIx64 " is not "
			  "readable; no bthreads listed", c->ngroup_sym);
		return;
	}
	if (ngroup > MAX_BLOCK_GROUPS) {
		core_warn(c->core, "bthread: the TaskMeta pool claims %" PRIu64 " block groups; reading "
			  "%d", ngroup, MAX_BLOCK_GROUPS);
		ngroup = MAX_BLOCK_GROUPS;
	}
	c->ngroup = ngroup;
	uint64_t *groups = read_words(c->core, c->block_groups_sym, ngroup);
	unsigned char *buf = malloc(c->lay.block_items * c->lay.meta_size);
	if (!groups || !buf) {
		if (buf)
			core_warn(c->core, "bthread: the TaskMeta pool's _block_groups at 0x%" PRIx64 " is "
				  "not readable; no bthreads listed", c->block_groups_sym);
		free(groups);
		free(buf);
		return;
	}
	for (uint64_t g = 0; g < ngroup; g++)
		if (groups[g] && !walk_group_blocks(c, g, groups[g], buf))
			break;
	free(groups);
	free(buf);
}

/* Without DWARF the documented layout is used only when the pool agrees
 * with it: a wrong layout puts a slot's number in almost no item's tid,
 * where a damaged TaskMeta is one item among many.  Then, either way, each
 * item that disagrees is reported. */
static bool check_slots(struct bt_ctx *c)
{
	if (c->ngood + c->nbad == 0) {
		/* Each worker's main task is in the pool once it has any group. */
		if (c->ngroup)
			core_warn(c->core, "bthread: the TaskMeta pool has %" PRIu64 " block groups but no "
				  "started TaskMeta in them%s; no bthreads listed", c->ngroup,
				  c->from_dwarf ? "" : " (without debug info: is its layout bRPC's?)");
		return false;
	}
	if (!c->from_dwarf && (c->ngood == 0 || c->nbad * 16 > c->ngood)) {
		core_warn(c->core, "bthread: no debug info for bthread::TaskMeta, and its documented "
			  "layout does not fit this core (the tid of %zu of %zu TaskMetas is not "
			  "their slot); no bthreads listed", c->nbad, c->ngood + c->nbad);
		return false;
	}
	for (size_t i = 0; i < c->nbad; i++) {
		if (i < MAX_ITEM_WARNINGS)
			item_warn(c, "TaskMeta 0x%" PRIx64 " (slot %" PRIu64 ") holds tid 0x%" PRIx64 ", "
				  "not one of its slot; not listed", c->bad_addr[i], c->bad_slot[i],
				  c->bad_tid[i]);
		else
			c->nunwarned++;
	}
	return true;
}

static struct bt_item *item_by_slot(struct bt_ctx *c, uint64_t slot)
{
	size_t lo = 0, hi = c->nitems;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->items[mid].slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nitems && c->items[lo].slot == slot ? &c->items[lo] : NULL;
}

static struct bt_item *item_by_tid(struct bt_ctx *c, uint64_t tid)
{
	struct bt_item *it = item_by_slot(c, tid & 0xffffffffu);
	return it && it->tid == tid ? it : NULL;
}

/* ---- groups: who runs, who is queued ------------------------------------- */

/* False once MAX_QUEUED entries were read (warned once): damaged capacities
 * in many groups cannot make the walk read forever. */
static bool queue_budget(struct bt_ctx *c)
{
	if (c->nqueued++ < MAX_QUEUED)
		return true;
	if (c->nqueued == MAX_QUEUED + 1)
		core_warn(c->core, "bthread: more than %d queued bthreads; the rest show as suspended or "
			  "created", MAX_QUEUED);
	return false;
}

static void mark_queued(struct bt_ctx *c, uint64_t group, uint64_t tid, const char *queue)
{
	struct bt_item *it = item_by_tid(c, tid);
	if (it && it->live)
		it->queued = true;
	else
		item_warn(c, "TaskGroup 0x%" PRIx64 "'s %s holds bthread 0x%" PRIx64 ", which is no "
			  "live bthread", group, queue, tid);
}

static void read_run_queue(struct bt_ctx *c, uint64_t group)
{
	const struct bt_layout *l = &c->lay;
	uint64_t bottom, cap, buffer, top;
	if (!core_read_u64(c->core, group + l->rq_bottom, &bottom) ||
	    !core_read_u64(c->core, group + l->rq_capacity, &cap) ||
	    !core_read_u64(c->core, group + l->rq_buffer, &buffer) ||
	    !core_read_u64(c->core, group + l->rq_top, &top))
		return;
	if (bottom == top)
		return;
	if (cap == 0 || cap > MAX_QUEUE || (cap & (cap - 1)) || bottom < top || bottom - top > cap ||
	    !core_pointer_ok(c->core, buffer, cap * 8, 8)) {
		core_warn(c->core, "bthread: TaskGroup 0x%" PRIx64 "'s run queue is damaged (top %" PRIu64
			  ", bottom %" PRIu64 ", capacity %" PRIu64 ", buffer 0x%" PRIx64 "); its bthreads "
			  "show as suspended or created", group, top, bottom, cap, buffer);
		return;
	}
	for (uint64_t i = top; i < bottom && queue_budget(c); i++) {
		uint64_t tid;
		if (core_read_u64(c->core, buffer + 8 * (i & (cap - 1)), &tid))
			mark_queued(c, group, tid, "run queue");
	}
}

static void read_remote_queue(struct bt_ctx *c, uint64_t group)
{
	const struct bt_layout *l = &c->lay;
	uint32_t count, cap, start;
	uint64_t items;
	if (!core_read_u32(c->core, group + l->rrq_count, &count) ||
	    !core_read_u32(c->core, group + l->rrq_cap, &cap) ||
	    !core_read_u32(c->core, group + l->rrq_start, &start) ||
	    !core_read_u64(c->core, group + l->rrq_items, &items) || count == 0)
		return;
	if (cap > MAX_QUEUE || count > cap || start >= cap ||
	    !core_pointer_ok(c->core, items, (size_t)cap * 8, 8)) {
		core_warn(c->core, "bthread: TaskGroup 0x%" PRIx64 "'s remote queue is damaged (count %"
			  PRIu32 ", capacity %" PRIu32 ", start %" PRIu32 ", items 0x%" PRIx64 "); its "
			  "bthreads show as suspended or created", group, count, cap, start, items);
		return;
	}
	for (uint32_t i = 0; i < count && queue_budget(c); i++) {
		uint64_t tid;
		if (core_read_u64(c->core, items + 8 * (((uint64_t)start + i) % cap), &tid))
			mark_queued(c, group, tid, "remote queue");
	}
}

static void read_group(struct bt_ctx *c, uint64_t addr)
{
	const struct bt_layout *l = &c->lay;
	struct bt_group g = { .addr = addr };
	if (c->ngroups >= MAX_GROUPS) {
		if (!c->groups_cut)
			core_warn(c->core, "bthread: more than %d TaskGroups; the rest are not read",
				  MAX_GROUPS);
		c->groups_cut = true;
		return;
	}
	if (!core_pointer_ok(c->core, addr, 8, 8) ||
	    !core_read_u64(c->core, addr + l->cur_meta, &g.cur_meta) ||
	    !core_read_u64(c->core, addr + l->main_stack, &g.main_stack) ||
	    !core_read_u64(c->core, addr + l->main_tid, &g.main_tid) ||
	    !core_read_u64(c->core, addr + l->group_tid, &g.pthread)) {
		core_warn(c->core, "bthread: TaskGroup 0x%" PRIx64 " %s; its bthreads show as suspended "
			  "or created", addr, core_pointer_problem(c->core, addr));
		return;
	}
	read_run_queue(c, addr);
	read_remote_queue(c, addr);
	struct bt_item *running = NULL;
	uint64_t tid;
	/* A worker whose current task is its main task is in its own loop. */
	if (g.cur_meta && core_read_u64(c->core, g.cur_meta + l->tid, &tid) && tid != g.main_tid) {
		running = item_by_tid(c, tid);
		if (!running || running->addr != g.cur_meta || !running->live) {
			core_warn(c->core, "bthread: TaskGroup 0x%" PRIx64 " runs TaskMeta 0x%" PRIx64
				  " (tid 0x%" PRIx64 "), which is no live bthread of the pool", addr,
				  g.cur_meta, tid);
			running = NULL;
		}
	}
	if (!base_array_reserve(&c->groups, &c->gcap, c->ngroups + 1, sizeof(*c->groups)))
		return;
	if (running)
		running->group = (int)c->ngroups;
	c->groups[c->ngroups++] = g;
}

/* The begin and end pointers of a std::vector at ADDR (libstdc++: the
 * first two words), checked as an array of ELEM-byte elements. */
static bool read_vector(struct bt_ctx *c, uint64_t addr, uint64_t elem, uint64_t *begin,
			uint64_t *n)
{
	uint64_t end;
	if (!core_read_u64(c->core, addr, begin) || !core_read_u64(c->core, addr + 8, &end) ||
	    end < *begin || (end - *begin) % elem || *begin % 8)
		return false;
	*n = (end - *begin) / elem;
	return true;
}

/* TaskControl's groups: tag t has ngroup[t] of them at
 * ((TaskGroup **)(groups.begin + t * stride))[0 .. ngroup[t]). */
static void walk_groups(struct bt_ctx *c)
{
	const struct bt_layout *l = &c->lay;
	uint64_t control, nbegin, ntags, gbegin, nstrides;
	if (!c->control_sym || !core_read_u64(c->core, c->control_sym, &control) || control == 0)
		return;                 /* no TaskControl: no worker ever started */
	if (!core_pointer_ok(c->core, control, 8, 8) ||
	    !read_vector(c, control + l->tagged_ngroup, 8, &nbegin, &ntags) ||
	    !read_vector(c, control + l->tagged_groups, 1, &gbegin, &nstrides) || ntags > MAX_TAGS ||
	    (ntags && (nstrides % ntags || (nstrides / ntags) % 8 || nstrides / ntags == 0))) {
		core_warn(c->core, "bthread: bthread::g_task_control (0x%" PRIx64 ") is damaged; "
			  "running and queued bthreads are not told from suspended ones", control);
		return;
	}
	uint64_t stride = ntags ? nstrides / ntags : 0;
	for (uint64_t t = 0; t < ntags; t++) {
		uint64_t n;
		if (!core_read_u64(c->core, nbegin + 8 * t, &n))
			continue;
		if (n > MAX_GROUPS_PER_TAG || n > stride / 8) {
			core_warn(c->core, "bthread: tag %" PRIu64 " claims %" PRIu64 " TaskGroups; reading "
				  "none of them", t, n);
			continue;
		}
		uint64_t *groups = read_words(c->core, gbegin + t * stride, n);
		for (uint64_t i = 0; groups && i < n; i++)
			if (groups[i])
				read_group(c, groups[i]);
		free(groups);
	}
}

/* ---- unwind and splice ----------------------------------------------------- */

/* Why T's frames are missing or cut: the first reason stays on the task,
 * each becomes a warning. */
__attribute__((format(printf, 3, 4)))
static void task_problem(struct bt_ctx *c, struct an_task *t, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!t->unwind_error)
		t->unwind_error = strdup(msg);
	item_warn(c, "bthread 0x%" PRIx64 ": %s", t->id, msg);
}

struct bt_stack {
	uint64_t context, bottom;
	uint32_t size;
};

static bool read_stack(struct bt_ctx *c, uint64_t addr, struct bt_stack *st)
{
	const struct bt_layout *l = &c->lay;
	return core_pointer_ok(c->core, addr, 8, 8) &&
	       core_read_u64(c->core, addr + l->context, &st->context) &&
	       core_read_u32(c->core, addr + l->stacksize, &st->size) &&
	       core_read_u64(c->core, addr + l->bottom, &st->bottom);
}

static bool on_stack(const struct bt_stack *st, uint64_t addr, uint64_t len)
{
	return st->bottom >= st->size && addr >= st->bottom - st->size && addr <= st->bottom &&
	       st->bottom - addr >= len;
}

/* The bytes bthread_jump_fcontext saved at its context pointer (the
 * architecture's table says which registers lie where). */
static unsigned context_size(const struct bt_ctx *c)
{
	return c->core->arch->bthread_context.size;
}

/* The registers bthread_jump_fcontext left at CTX, by DWARF number: those
 * the unwinder tracks, the pc it resumes at, and the stack pointer above
 * the saved block. */
static bool read_context(struct bt_ctx *c, uint64_t ctx, struct dbg_regs *r)
{
	const struct core_arch *arch = c->core->arch;
	const struct core_saved_context *sc = &arch->bthread_context;
	unsigned char w[MAX_CONTEXT_SIZE];
	if (sc->size == 0 || sc->size > sizeof(w) || !core_pointer_ok(c->core, ctx, sc->size, 8) ||
	    !core_read_bytes(c->core, ctx, w, sc->size))
		return false;
	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < sc->nregs; i++) {
		unsigned n = sc->regs[i].dwarf;
		if (n >= arch->ndwarf_regs || n >= DBG_NREGS || sc->regs[i].offset + 8u > sc->size)
			continue;
		memcpy(&r->regs[n], w + sc->regs[i].offset, 8);
		r->known |= 1u << n;
	}
	if (sc->pc_offset + 8u <= sc->size)
		memcpy(&r->pc, w + sc->pc_offset, 8);
	r->regs[arch->dwarf_sp] = ctx + sc->size;
	r->known |= 1u << arch->dwarf_sp;
	return true;
}

/* Unwind from REGS into a frame list; *WHY says what ended it early when
 * the walk should have reached the stack's base.  False on out-of-memory. */
static bool unwind_context(struct bt_ctx *c, const struct dbg_regs *regs, bool to_base,
			   struct an_frame **frames, size_t *nframes, char **why)
{
	struct dbg_frame *native = NULL;
	size_t n = 0;
	bool reached = false;
	char *stop = NULL;
	*why = NULL;
	struct core_error *err = dbg_unwind_regs(c->s, regs, to_base ? c->base_start : 0,
						 to_base ? c->base_end : 0, &native, &n, &reached, &stop);
	if (err)
		return false;
	bool ok = an_frames_append_native(&c->scratch, c->s, native, n);
	free(native);
	if (!ok) {
		an_frames_list_deinit(&c->scratch);
		free(stop);
		return false;
	}
	an_frames_move_to(&c->scratch, frames, nframes);
	if (to_base && !reached && c->base_end > c->base_start) {
		*why = stop;
		stop = NULL;
		if (!*why)
			*why = strdup("no caller");
	}
	free(stop);
	return true;
}

/* A bthread that is not running: its stack from the context it saved. */
static void unwind_saved(struct bt_ctx *c, const struct bt_item *it, struct an_task *t)
{
	struct bt_stack st;
	struct dbg_regs regs;
	if (!read_stack(c, it->stack, &st)) {
		task_problem(c, t, "its ContextualStack 0x%" PRIx64 " %s", it->stack,
			     core_pointer_problem(c->core, it->stack));
		return;
	}
	if (st.bottom == 0) {
		task_problem(c, t, "it is not running but holds a worker's own stack 0x%" PRIx64
			     ", which has no context of its own", it->stack);
		return;
	}
	if (!on_stack(&st, st.context, context_size(c)) || !read_context(c, st.context, &regs)) {
		task_problem(c, t, "its saved context 0x%" PRIx64 " is not readable on its stack "
			     "[0x%" PRIx64 ", 0x%" PRIx64 ")", st.context, st.bottom - st.size, st.bottom);
		return;
	}
	char *why = NULL;
	if (!unwind_context(c, &regs, true, &t->frames, &t->nframes, &why)) {
		task_problem(c, t, "out of memory unwinding its stack");
		return;
	}
	if (why)
		task_problem(c, t, "unwinding from its saved context stopped before task_runner (%s)",
			     why);
	free(why);
}

static struct an_thread *thread_with_pointer(struct bt_ctx *c, uint64_t fs_base)
{
	for (size_t i = 0; i < c->an->nthreads; i++)
		if (c->an->threads[i].tp == fs_base)
			return &c->an->threads[i];
	return NULL;
}

static struct an_thread *thread_with_pthread(struct bt_ctx *c, uint64_t pthread)
{
	for (size_t i = 0; pthread && i < c->an->nthreads; i++)
		if (c->an->threads[i].pthread == pthread)
			return &c->an->threads[i];
	return NULL;
}

static bool in_range(uint64_t pc, uint64_t start, uint64_t end)
{
	return pc >= start && pc < end;
}

/* Where TH's frames stop being the bthread's: the caller frame at the
 * stack's base (its own stack), else the frame after task_runner's (a
 * bthread on its worker's stack).  0 when neither is found. */
static size_t split_point(const struct bt_ctx *c, const struct an_thread *th, bool *own_stack)
{
	*own_stack = false;
	for (size_t i = 1; i < th->nframes; i++)
		if (in_range(th->frames[i].pc, c->base_start, c->base_end)) {
			*own_stack = true;
			return i;
		}
	for (size_t i = 0; i < th->nframes; i++)
		if (!th->frames[i].inlined && in_range(th->frames[i].pc, c->runner_start, c->runner_end))
			return i + 1;
	return 0;
}

/* The worker's own frames while one of its bthreads runs on another stack:
 * from the context its main task saved when it switched away. */
static void worker_frames(struct bt_ctx *c, const struct bt_group *g, struct an_thread *th)
{
	struct bt_stack st;
	struct dbg_regs regs;
	char *why = NULL;
	free(th->unwind_error);
	th->unwind_error = NULL;
	if (!read_stack(c, g->main_stack, &st) || !read_context(c, st.context, &regs)) {
		char msg[200];
		snprintf(msg, sizeof(msg), "the context the worker's main task saved (stack 0x%" PRIx64
			 ") is not readable", g->main_stack);
		th->unwind_error = strdup(msg);
		core_warn(c->core, "bthread: thread %" PRId32 ": %s", th->tid, msg);
		return;
	}
	if (!unwind_context(c, &regs, false, &th->frames, &th->nframes, &why))
		core_warn(c->core, "bthread: thread %" PRId32 ": out of memory unwinding the worker",
			  th->tid);
	free(why);
}

static bool core_has_thread_pointers(const struct bt_ctx *c)
{
	for (size_t i = 0; i < c->an->nthreads; i++)
		if (c->an->threads[i].has_tp)
			return true;
	return false;
}

/* Without thread pointers (qemu-user's cores save none): the one thread
 * whose stack pointer lies on the running bthread's own stack.  NULL when
 * none or several do, or when the bthread runs on its worker's stack. */
static struct an_thread *thread_on_stack(struct bt_ctx *c, const struct bt_item *it)
{
	struct bt_stack st;
	struct an_thread *found = NULL;
	if (!read_stack(c, it->stack, &st) || st.bottom == 0)
		return NULL;
	for (size_t i = 0; i < c->an->nthreads; i++) {
		struct an_thread *th = &c->an->threads[i];
		if (!on_stack(&st, th->sp, 0))
			continue;
		if (found)
			return NULL;
		found = th;
	}
	return found;
}

/* A running bthread: its frames are its OS thread's, down to task_runner;
 * the thread keeps the worker's part. */
static void split_running(struct bt_ctx *c, const struct bt_item *it, struct an_task *t)
{
	const struct bt_group *g = &c->groups[it->group];
	/* The thread pointer names the worker where it is pthread_self()
	 * (x86_64); elsewhere, or in a core without thread pointers, the
	 * bthread's own stack does. */
	bool has_tp = core_has_thread_pointers(c);
	bool by_stack = !has_tp || !c->core->arch->tp_is_pthread;
	/* A pthread_t is its struct pthread: found below the thread pointer,
	 * or in glibc's list of threads (analyzer/pthreads.c), on any arch. */
	struct an_thread *th = thread_with_pthread(c, g->pthread);
	if (!th && has_tp && c->core->arch->tp_is_pthread)
		th = thread_with_pointer(c, g->pthread);
	if (!th && by_stack)
		th = thread_on_stack(c, it);
	if (!th) {
		task_problem(c, t, "its worker (pthread 0x%" PRIx64 " of TaskGroup 0x%" PRIx64 ") is no "
			     "thread of the core%s", g->pthread, g->addr,
			     !by_stack ? "" : has_tp ? " (no thread's stack pointer is on the bthread's stack)"
				     : " (the core saves no thread pointer, and no thread's stack pointer "
				       "is on the bthread's stack)");
		return;
	}
	t->tid = th->tid;
	t->has_tid = true;
	bool *split = &c->thread_split[th - c->an->threads];
	if (*split) {
		task_problem(c, t, "thread %" PRId32 " already runs another bthread (two TaskGroups name "
			     "its pthread 0x%" PRIx64 ")", th->tid, g->pthread);
		return;
	}
	*split = true;
	struct bt_stack st;
	uint64_t rsp = th->sp;
	if (it->stack != g->main_stack && read_stack(c, it->stack, &st) && st.bottom &&
	    !on_stack(&st, rsp, 0)) {
		task_problem(c, t, "thread %" PRId32 "'s stack pointer 0x%" PRIx64 " is not on its "
			     "stack [0x%" PRIx64 ", 0x%" PRIx64 "); its frames stay with the thread",
			     th->tid, rsp, st.bottom - st.size, st.bottom);
		return;
	}
	bool own;
	size_t cut = split_point(c, th, &own);
	if (cut == 0) {
		task_problem(c, t, "task_runner is not on thread %" PRId32 "'s stack; its frames stay "
			     "with the thread", th->tid);
		return;
	}
	struct an_frame *mine = malloc(cut * sizeof(*mine));
	if (!mine)
		return;
	memcpy(mine, th->frames, cut * sizeof(*mine));
	t->frames = mine;
	t->nframes = cut;
	size_t rest = th->nframes - cut;
	if (own) {
		/* Past task_runner's fake return address lies nothing of the
		 * worker's: its frames are where its main task switched away. */
		for (size_t i = cut; i < th->nframes; i++)
			an_frame_deinit(&th->frames[i]);
		free(th->frames);
		th->frames = NULL;
		th->nframes = 0;
		worker_frames(c, g, th);
	} else {
		memmove(th->frames, th->frames + cut, rest * sizeof(*th->frames));
		th->nframes = rest;
	}
}

/* ---- the tasks ------------------------------------------------------------- */

static int butex_order(const void *a, const void *b)
{
	const struct bt_butex *x = a, *y = b;
	return x->butex < y->butex ? -1 : x->butex > y->butex;
}

/* A join waits on the joined bthread's version butex (the items are indexed
 * by it on first use). */
static const struct bt_item *item_by_version_butex(struct bt_ctx *c, uint64_t butex)
{
	if (!c->butexes) {
		c->butexes = malloc((c->nitems ? c->nitems : 1) * sizeof(*c->butexes));
		if (!c->butexes)
			return NULL;
		for (size_t i = 0; i < c->nitems; i++)
			c->butexes[i] = (struct bt_butex){ c->items[i].version_butex, i };
		qsort(c->butexes, c->nitems, sizeof(*c->butexes), butex_order);
	}
	struct bt_butex key = { butex, 0 };
	const struct bt_butex *hit = bsearch(&key, c->butexes, c->nitems, sizeof(key), butex_order);
	return hit ? &c->items[hit->item] : NULL;
}

static void fill_wait(struct bt_ctx *c, const struct bt_item *it, struct an_task *t)
{
	if (it->sleep) {
		t->wait_kind = "sleep";
		return;
	}
	if (!it->waiter)
		return;
	uint64_t butex;
	if (!core_pointer_ok(c->core, it->waiter, 8, 8) ||
	    !core_read_u64(c->core, it->waiter + c->lay.container, &butex)) {
		item_warn(c, "bthread 0x%" PRIx64 ": its current_waiter 0x%" PRIx64 " %s; what it waits "
			  "for is not known", it->tid, it->waiter, core_pointer_problem(c->core, it->waiter));
		return;
	}
	if (!butex)
		return;         /* woken, not yet running */
	const struct bt_item *joined = item_by_version_butex(c, butex);
	t->wait_kind = joined ? "join" : "butex";
	t->wait_address = butex;
	t->has_wait_address = true;
	if (joined) {
		t->wait_target = joined->tid;
		t->has_wait_target = true;
	}
}

static void fill_task(struct bt_ctx *c, const struct bt_item *it, struct an_task *t)
{
	t->runtime = "bthread";
	t->id = it->tid;
	t->address = it->addr;
	t->fn_address = it->fn;
	uint64_t off = 0;
	const char *name = it->fn ? dbg_symbol_name_at(c->s, it->fn, &off) : NULL;
	if (name && off == 0)
		t->fn = strdup(name);
	else if (name && asprintf(&t->fn, "%s+0x%" PRIx64, name, off) < 0)
		t->fn = NULL;
	if (it->group >= 0)
		t->state = AN_TASK_RUNNING;
	else if (it->queued)
		t->state = AN_TASK_READY;
	else if (it->stack)
		t->state = AN_TASK_SUSPENDED;
	else
		t->state = AN_TASK_CREATED;
	if (t->state == AN_TASK_SUSPENDED)
		fill_wait(c, it, t);
	if (t->state == AN_TASK_RUNNING)
		split_running(c, it, t);
	else if (it->stack)     /* suspended, or queued again after it ran */
		unwind_saved(c, it, t);
}

static int u64_order(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* A worker's own task (its scheduling loop), not a bthread to list. */
static bool is_main_task(struct bt_ctx *c, const struct bt_item *it)
{
	if (it->stack_type == STACK_TYPE_MAIN)
		return true;
	if (!c->main_tids && c->ngroups) {
		c->main_tids = malloc(c->ngroups * sizeof(*c->main_tids));
		for (size_t i = 0; c->main_tids && i < c->ngroups; i++)
			c->main_tids[i] = c->groups[i].main_tid;
		if (c->main_tids)
			qsort(c->main_tids, c->ngroups, sizeof(*c->main_tids), u64_order);
	}
	return c->main_tids &&
	       bsearch(&it->tid, c->main_tids, c->ngroups, sizeof(*c->main_tids), u64_order);
}

static int task_order(const void *a, const void *b)
{
	const struct an_task *x = a, *y = b;
	if (x->state != y->state)
		return x->state < y->state ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void build_tasks(struct bt_ctx *c)
{
	size_t n = 0;
	for (size_t i = 0; i < c->nitems; i++)
		n += c->items[i].live && !is_main_task(c, &c->items[i]);
	if (n == 0)
		return;
	struct an_task *tasks = calloc(n, sizeof(*tasks));
	if (!tasks) {
		core_warn(c->core, "bthread: out of memory listing %zu bthreads", n);
		return;
	}
	size_t k = 0;
	for (size_t i = 0; i < c->nitems && k < n; i++)
		if (c->items[i].live && !is_main_task(c, &c->items[i]))
			fill_task(c, &c->items[i], &tasks[k++]);
	qsort(tasks, k, sizeof(*tasks), task_order);
	c->an->tasks = tasks;
	c->an->ntasks = k;
	an_bthread_mutexes(c->s, c->an);
}

void an_bthread_analyze(struct dbg_session *s, struct analysis *an)
{
	struct bt_ctx c = { .s = s, .core = dbg_session_core(s), .an = an,
			    .scratch = { .pool = an->strings } };
	if (!c.core || !find_symbols(&c) || !layout_init(&c))
		return;
	c.thread_split = calloc(an->nthreads ? an->nthreads : 1, sizeof(*c.thread_split));
	if (!c.thread_split)
		return;
	walk_pool(&c);
	if (check_slots(&c)) {
		walk_groups(&c);
		build_tasks(&c);
	}
	if (c.nunwarned)
		core_warn(c.core, "bthread: %zu more problems with single bthreads not listed one by one",
			  c.nunwarned);
	an_frames_list_deinit(&c.scratch);
	free(c.items);
	free(c.groups);
	free(c.butexes);
	free(c.main_tids);
	free(c.thread_split);
}
