/* What each waiting goroutine waits on, as the Go runtime itself records
 * it (Go 1.19's runtime2.go, chan.go, select.go, sema.go, netpoll.go):
 * - a channel operation (chan receive, chan send, select) queues the g's
 *   sudogs on g.waiting, linked by waitlink, each naming its channel in c;
 * - a semaphore (sync.Mutex, RWMutex, WaitGroup) queues a sudog whose elem
 *   is the semaphore's address in the tree of runtime.semtable's root for
 *   that address (the treap by prev/next, others waiting on the same
 *   address by waitlink); the sync object is the struct the semaphore is a
 *   member of, its type the sync method on the goroutine's stack;
 * - a condition variable (sync.Cond.Wait) queues a sudog of the g on the
 *   Cond's notify list (notify.head, linked by next), the Cond the
 *   receiver of Cond.Wait on the goroutine's stack;
 * - a netpoll wait (IO wait) leaves the g in its pollDesc's rg or wg, and
 *   the pollDesc keeps its fd and itself (self).
 * The global holding a channel is the data word that points at it; the
 * global holding a sync object is the data symbol around it.  Nothing is
 * named that the core does not say. */
#include "golang.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrset.h"
#include "../base/array.h"

enum {
	SEM_TAB_SIZE = 251,         /* semTabSize, sema.go */
	MAX_SUDOGS = 1024,          /* sudogs on one semaphore or Cond, bounded */
	MAX_CASES = 64,             /* a select's cases read, at most */
	MAX_TREAP = 1 << 22,
	NAME_LEN = 512,
	SCAN_CHUNK = 64 << 10,
	MAX_STACK_SCAN = 64 << 10,  /* bytes of a goroutine's stack searched */
};

/* A goroutine queued on a semaphore. */
struct sema_waiter {
	uint64_t g, addr;
};

/* A channel (or a sync.NewCond's Cond) some goroutine waits on, and the
 * global holding a pointer to it. */
struct chan_name {
	uint64_t hchan;
	char *name;
	bool looked;
};

struct waits {
	struct go_runtime *rt;
	struct sema_waiter *sema;
	size_t nsema, sema_cap;
	struct chan_name *chans;
	size_t nchans, chans_cap;
	struct an_addr_set chan_set;
	bool nomem;
};

static int u64_cmp(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

static int sema_cmp(const void *a, const void *b)
{
	return u64_cmp(((const struct sema_waiter *)a)->g, ((const struct sema_waiter *)b)->g);
}

static int chan_cmp(const void *a, const void *b)
{
	return u64_cmp(((const struct chan_name *)a)->hchan, ((const struct chan_name *)b)->hchan);
}

/* ---- semaphores --------------------------------------------------------- */

static void sema_add(struct waits *w, uint64_t g, uint64_t addr)
{
	struct sema_waiter *s = base_array_push(&w->sema, &w->nsema, &w->sema_cap, sizeof(*w->sema));
	if (!s) {
		w->nomem = true;
		return;
	}
	*s = (struct sema_waiter){g, addr};
}

/* One semaRoot's tree from ROOT: each node and the sudogs waiting on the
 * same address behind it.  SEEN bounds it (a damaged tree loops). */
static void treap_walk(struct waits *w, uint64_t root, struct an_addr_set *seen)
{
	struct go_runtime *rt = w->rt;
	const struct go_layout *L = &rt->L;
	uint64_t *stack = NULL;
	size_t n = 0, cap = 0;
	uint64_t *top = root ? base_array_push(&stack, &n, &cap, sizeof(*stack)) : NULL;
	if (top)
		*top = root;
	while (n && !w->nomem && seen->n < MAX_TREAP) {
		uint64_t node = stack[--n], elem = 0, kid[2] = {0, 0};
		if (an_addr_set_add(seen, node) <= 0 || !go_read_word(rt, node + L->sg_elem, &elem))
			continue;
		go_read_word(rt, node + L->sg_prev, &kid[0]);
		go_read_word(rt, node + L->sg_next, &kid[1]);
		for (uint64_t s = node, k = 0; s && k < MAX_SUDOGS; k++) {
			uint64_t g = 0;
			if ((s != node && an_addr_set_add(seen, s) <= 0) || !go_read_word(rt, s + L->sg_g, &g))
				break;
			if (g)
				sema_add(w, g, elem);
			if (!go_read_word(rt, s + L->sg_waitlink, &s))
				break;
		}
		for (int i = 0; i < 2; i++) {
			uint64_t *p = kid[i] ? base_array_push(&stack, &n, &cap, sizeof(*stack)) : NULL;
			if (p)
				*p = kid[i];
			else if (kid[i])
				w->nomem = true;
		}
	}
	free(stack);
}

/* Every goroutine queued on a semaphore, from runtime.semtable. */
static void semas_read(struct waits *w)
{
	struct go_runtime *rt = w->rt;
	uint64_t addr, size;
	if (!dbg_find_symbol(rt->s, "runtime.semtable", &addr, &size) || size % SEM_TAB_SIZE ||
	    size / SEM_TAB_SIZE < rt->L.sr_treap + 8)
		return;
	struct an_addr_set seen = {0};
	for (uint64_t i = 0; i < SEM_TAB_SIZE && !w->nomem; i++) {
		uint64_t treap = 0;
		if (go_read_word(rt, addr + i * (size / SEM_TAB_SIZE) + rt->L.sr_treap, &treap))
			treap_walk(w, treap, &seen);
	}
	an_addr_set_deinit(&seen);
	if (w->nsema)
		qsort(w->sema, w->nsema, sizeof(*w->sema), sema_cmp);
}

static bool sema_of(const struct waits *w, uint64_t g, uint64_t *addr)
{
	struct sema_waiter key = {g, 0};
	const struct sema_waiter *s = w->nsema ? bsearch(&key, w->sema, w->nsema, sizeof(key), sema_cmp) : NULL;
	if (s)
		*addr = s->addr;
	return s != NULL;
}

/* The sync type and the member holding the semaphore, by the sync method
 * the goroutine waits in.  Go 1.19's members; DWARF's when it has them. */
struct sync_wait {
	const char *method;         /* its frame's function */
	const char *type;           /* the object it waits on */
	const char *member;         /* the semaphore in it */
	const char *alt_member;     /* its name in other versions, or NULL */
};

static const struct sync_wait sync_waits[] = {
	{"sync.(*RWMutex).Lock", "sync.RWMutex", "writerSem", NULL},
	{"sync.(*RWMutex).RLock", "sync.RWMutex", "readerSem", NULL},
	{"sync.(*Mutex).lockSlow", "sync.Mutex", "sema", NULL},
	{"sync.(*Mutex).Lock", "sync.Mutex", "sema", NULL},
	{"sync.(*WaitGroup).Wait", "sync.WaitGroup", "state2", "sema"},
};

/* The frame index in T of the first sync method the semaphore belongs
 * to, and which one; false when none is on its stack. */
static const struct sync_wait *sync_frame(const struct an_task *t, size_t *at)
{
	for (size_t i = 0; i < t->nframes; i++)
		for (size_t k = 0; t->frames[i].function && k < sizeof(sync_waits) / sizeof(sync_waits[0]); k++)
			if (strcmp(t->frames[i].function, sync_waits[k].method) == 0) {
				*at = i;
				return &sync_waits[k];
			}
	return NULL;
}

static bool member_offset(struct go_runtime *rt, const char *type, const char *member, uint64_t *off)
{
	uint64_t size;
	return member && dbg_member_find(rt->s, type, member, off, &size);
}

/* The sync object holding semaphore SEMA that task T waits in: its
 * address and type's size.  A Mutex locked by RWMutex.Lock is the
 * RWMutex's w. */
static bool sync_object(struct go_runtime *rt, const struct an_task *t, uint64_t sema, uint64_t *object,
			uint64_t *size, const char **type)
{
	size_t at = 0;
	const struct sync_wait *sw = sync_frame(t, &at);
	uint64_t off;
	if (!sw || (!member_offset(rt, sw->type, sw->member, &off) &&
		    !member_offset(rt, sw->type, sw->alt_member, &off)) || off > sema)
		return false;
	*object = sema - off;
	*type = sw->type;
	size_t up = at + 1;
	while (up < t->nframes && t->frames[up].function && strncmp(t->frames[up].function, "sync.(*Mutex).", 14) == 0)
		up++;
	bool in_rw = strcmp(sw->type, "sync.Mutex") == 0 && up < t->nframes && t->frames[up].function &&
		     strcmp(t->frames[up].function, "sync.(*RWMutex).Lock") == 0;
	if (in_rw && member_offset(rt, "sync.RWMutex", "w", &off) && off <= *object) {
		*object -= off;
		*type = "sync.RWMutex";
	}
	return dbg_type_size(rt->s, *type, size) || (*size = 0, true);
}

/* ---- channels ----------------------------------------------------------- */

static void chan_add(struct waits *w, uint64_t hchan)
{
	int added = an_addr_set_add(&w->chan_set, hchan);
	if (added == 0)
		return;
	struct chan_name *c = added > 0 ? base_array_push(&w->chans, &w->nchans, &w->chans_cap, sizeof(*w->chans))
					: NULL;
	if (!c) {
		w->nomem = true;
		return;
	}
	*c = (struct chan_name){.hchan = hchan};
}

/* G's channels (its sudogs on g.waiting that name it) into CHANS[0, *N);
 * none when the list cannot be read whole or holds more than MAX. */
static void channels_of(struct go_runtime *rt, const struct go_g *g, uint64_t *chans, size_t *n, size_t max)
{
	const struct go_layout *L = &rt->L;
	*n = 0;
	uint64_t s = g->waiting;
	while (s) {
		uint64_t who = 0, c = 0;
		if (*n == max || !go_read_word(rt, s + L->sg_g, &who) || who != g->addr ||
		    !go_read_word(rt, s + L->sg_c, &c) || !c || !go_read_word(rt, s + L->sg_waitlink, &s)) {
			*n = 0;
			return;
		}
		chans[(*n)++] = c;
	}
}

/* The data words of [LO, HI) that point at a waited-on channel name it. */
static void scan_globals(struct waits *w, uint64_t lo, uint64_t hi)
{
	uint64_t *buf = malloc(SCAN_CHUNK);
	if (!buf) {
		w->nomem = true;
		return;
	}
	lo = (lo + 7) & ~7ull;
	for (uint64_t at = lo; at < hi && !w->nomem; at += SCAN_CHUNK) {
		size_t len = hi - at < SCAN_CHUNK ? (size_t)((hi - at) & ~7ull) : SCAN_CHUNK;
		if (!len || !go_read(w->rt, at, buf, len))
			continue;
		for (size_t i = 0; i < len / 8; i++) {
			struct chan_name key = {.hchan = buf[i]}, *c;
			c = buf[i] ? bsearch(&key, w->chans, w->nchans, sizeof(key), chan_cmp) : NULL;
			if (!c || c->looked)
				continue;
			char name[NAME_LEN];
			c->looked = true;
			if (dbg_data_name(w->rt->s, at + i * 8, 8, true, name, sizeof(name)) && !(c->name = strdup(name)))
				w->nomem = true;
		}
	}
	free(buf);
}

/* Name the channels: the runtime's data and bss (where the linker puts
 * the globals that hold pointers) searched once for all of them. */
static void channels_name(struct waits *w)
{
	static const char *const bounds[][2] = {{"runtime.data", "runtime.edata"}, {"runtime.bss", "runtime.ebss"}};
	if (!w->nchans)
		return;
	qsort(w->chans, w->nchans, sizeof(*w->chans), chan_cmp);
	for (size_t i = 0; i < 2; i++) {
		uint64_t lo, hi, size;
		if (dbg_find_symbol(w->rt->s, bounds[i][0], &lo, &size) &&
		    dbg_find_symbol(w->rt->s, bounds[i][1], &hi, &size) && hi > lo && hi - lo < (1ull << 32))
			scan_globals(w, lo, hi);
	}
}

static const char *chan_name(const struct waits *w, uint64_t hchan)
{
	struct chan_name key = {.hchan = hchan};
	const struct chan_name *c = w->nchans ? bsearch(&key, w->chans, w->nchans, sizeof(key), chan_cmp) : NULL;
	return c ? c->name : NULL;
}

/* ---- poll descriptors --------------------------------------------------- */

/* The pollDesc that records G as its reader or writer: a word of G's
 * stack that points at one whose rg or wg is G and whose self is itself. */
static bool poll_desc_of(struct go_runtime *rt, const struct go_g *g, uint64_t *pd, uint64_t *fd)
{
	const struct go_layout *L = &rt->L;
	uint64_t sp = g->sched_sp, hi = g->stack_hi;
	if (!sp || sp < g->stack_lo || sp >= hi)
		return false;
	if (hi - sp > MAX_STACK_SCAN)
		hi = sp + MAX_STACK_SCAN;
	size_t n = (size_t)((hi - sp) / 8);
	uint64_t *words = malloc(n * 8);
	bool found = false;
	if (words && go_read(rt, sp, words, n * 8))
		for (size_t i = 0; i < n && !found; i++) {
			uint64_t x = words[i], self = 0, rg = 0, wg = 0;
			if (x < 0x1000 || (x >= g->stack_lo && x < g->stack_hi) || x % 8 ||
			    !go_read_word(rt, x + L->pd_self, &self) || self != x ||
			    !go_read_word(rt, x + L->pd_rg, &rg) || !go_read_word(rt, x + L->pd_wg, &wg) ||
			    (rg != g->addr && wg != g->addr))
				continue;
			found = go_read_word(rt, x + L->pd_fd, fd);
			*pd = x;
		}
	free(words);
	return found;
}

/* ---- condition variables ------------------------------------------------ */

/* The sync.Cond G waits on: a word of its stack (Cond.Wait's receiver)
 * pointing at a Cond whose notify list (notify.head, linked by next) holds
 * a sudog of G.  The list is the runtime's own (notifyListWait). */
static bool cond_of(struct go_runtime *rt, const struct go_g *g, uint64_t head_off, uint64_t *cond)
{
	const struct go_layout *L = &rt->L;
	uint64_t sp = g->sched_sp, hi = g->stack_hi;
	if (!sp || sp < g->stack_lo || sp >= hi)
		return false;
	if (hi - sp > MAX_STACK_SCAN)
		hi = sp + MAX_STACK_SCAN;
	size_t n = (size_t)((hi - sp) / 8);
	uint64_t *words = malloc(n * 8);
	bool found = false;
	if (words && go_read(rt, sp, words, n * 8))
		for (size_t i = 0; i < n && !found; i++) {
			uint64_t s = 0;
			if (words[i] < 0x1000 || words[i] % 8 || !go_read_word(rt, words[i] + head_off, &s))
				continue;
			for (size_t k = 0; s && k < MAX_SUDOGS && !found; k++) {
				uint64_t who = 0;
				if (!go_read_word(rt, s + L->sg_g, &who))
					break;
				found = who == g->addr;
				if (!go_read_word(rt, s + L->sg_next, &s))
					break;
			}
			*cond = words[i];
		}
	free(words);
	return found;
}

/* ---- the goroutines ---------------------------------------------------- */

static bool is_word(const char *kind, const char *const *words)
{
	for (; kind && *words; words++)
		if (strcmp(kind, *words) == 0)
			return true;
	return false;
}

static const char *const chan_words[] = {"chan receive", "chan send", "select", NULL};
static const char *const sema_words[] = {"semacquire", "sync.Mutex.Lock", "sync.RWMutex.Lock",
					 "sync.RWMutex.RLock", "sync.WaitGroup.Wait", NULL};

/* A select's names: each channel's, joined, when every one has one. */
static char *names_joined(const struct waits *w, const uint64_t *chans, size_t n)
{
	char buf[NAME_LEN * 2] = "";
	size_t used = 0;
	for (size_t i = 0; i < n; i++) {
		const char *name = chan_name(w, chans[i]);
		bool repeat = false;
		for (size_t k = 0; k < i; k++)
			repeat = repeat || chans[k] == chans[i];
		if (!name)
			return NULL;
		if (!repeat)
			used += (size_t)snprintf(buf + used, used < sizeof(buf) ? sizeof(buf) - used : 0, "%s%s",
						 used ? ", " : "", name);
	}
	return used && used < sizeof(buf) ? strdup(buf) : NULL;
}

static void channel_wait(struct waits *w, const struct go_g *g, struct an_task *t)
{
	uint64_t chans[MAX_CASES];
	size_t n = 0;
	channels_of(w->rt, g, chans, &n, sizeof(chans) / sizeof(chans[0]));
	bool one = n > 0;
	for (size_t i = 1; i < n; i++)
		one = one && chans[i] == chans[0];
	if (one) {
		t->wait_address = chans[0];
		t->has_wait_address = true;
	}
	t->wait_object_name = n ? names_joined(w, chans, n) : NULL;
}

static void sema_wait(struct waits *w, const struct go_g *g, struct an_task *t)
{
	uint64_t sema, object, size = 0;
	const char *type = NULL;
	if (!sema_of(w, g->addr, &sema))
		return;
	char name[NAME_LEN];
	if (!sync_object(w->rt, t, sema, &object, &size, &type)) {
		t->wait_address = sema;   /* a semaphore of no sync object known */
		t->has_wait_address = true;
		if (dbg_data_name(w->rt->s, sema, 4, true, name, sizeof(name)) && !(t->wait_object_name = strdup(name)))
			w->nomem = true;
		return;
	}
	t->wait_address = object;
	t->has_wait_address = true;
	if (size && dbg_data_name(w->rt->s, object, size, true, name, sizeof(name)) &&
	    !(t->wait_object_name = strdup(name)))
		w->nomem = true;
}

/* A Cond's name: the global it is (or a member of), else the global that
 * points at it (sync.NewCond's). */
static void cond_name(struct waits *w, struct an_task *t)
{
	char name[NAME_LEN];
	uint64_t size = 0;
	const char *held = chan_name(w, t->wait_address);
	if (dbg_type_size(w->rt->s, "sync.Cond", &size) && size &&
	    dbg_data_name(w->rt->s, t->wait_address, size, true, name, sizeof(name)))
		held = name;
	if (held && !(t->wait_object_name = strdup(held)))
		w->nomem = true;
}

static void io_wait(struct go_runtime *rt, const struct go_g *g, struct an_task *t)
{
	uint64_t pd, fd;
	if (!poll_desc_of(rt, g, &pd, &fd) || fd > INT32_MAX)
		return;
	t->wait_address = pd;
	t->has_wait_address = true;
	t->wait_fd = (int64_t)fd;
	t->has_wait_fd = true;
}

/* The tasks of live gs, in RT's order, from FIRST. */
static void each_wait(struct waits *w, size_t first, int pass)
{
	struct go_runtime *rt = w->rt;
	size_t k = first;
	for (size_t i = 0; i < rt->ngs && k < rt->an->ntasks && !w->nomem; i++) {
		const struct go_g *g = &rt->gs[i];
		if (g->status == GO_DEAD)
			continue;
		struct an_task *t = &rt->an->tasks[k++];
		if (g->status != GO_WAITING || !t->wait_kind)
			continue;
		if (pass == 0 && strcmp(t->wait_kind, "sync.Cond.Wait") == 0) {
			uint64_t head_off, size, cond;
			if (dbg_member_find(rt->s, "sync.Cond", "notify.head", &head_off, &size) &&
			    cond_of(rt, g, head_off, &cond)) {
				t->wait_address = cond;
				t->has_wait_address = true;
				chan_add(w, cond);   /* a global may hold a pointer to it */
			}
		} else if (pass == 1 && strcmp(t->wait_kind, "sync.Cond.Wait") == 0 && t->has_wait_address) {
			cond_name(w, t);
		} else if (pass == 0 && is_word(t->wait_kind, chan_words)) {
			uint64_t chans[MAX_CASES];
			size_t n = 0;
			channels_of(rt, g, chans, &n, sizeof(chans) / sizeof(chans[0]));
			for (size_t c = 0; c < n; c++)
				chan_add(w, chans[c]);
		} else if (pass == 1 && is_word(t->wait_kind, chan_words)) {
			channel_wait(w, g, t);
		} else if (pass == 1 && is_word(t->wait_kind, sema_words)) {
			sema_wait(w, g, t);
		} else if (pass == 1 && strcmp(t->wait_kind, "IO wait") == 0) {
			io_wait(rt, g, t);
		}
	}
}

bool go_waits_read(struct go_runtime *rt, size_t first)
{
	struct waits w = {.rt = rt};
	semas_read(&w);
	each_wait(&w, first, 0);
	channels_name(&w);
	each_wait(&w, first, 1);
	for (size_t i = 0; i < w.nchans; i++)
		free(w.chans[i].name);
	free(w.chans);
	an_addr_set_deinit(&w.chan_set);
	free(w.sema);
	return !w.nomem;
}
