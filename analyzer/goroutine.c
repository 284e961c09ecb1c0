/* Go programs: the runtime's goroutines (runtime.allgs) and OS threads
 * (runtime.allm), each goroutine's state, wait reason, creator and stack,
 * and the OS threads' stacks walked as the runtime walks them.
 *
 * Layouts come from DWARF when the binary has it, else from the table of
 * the binary's Go version (1.19); a version without a table and without
 * DWARF gives a warning and no goroutines, never wrong ones.  Everything
 * read from the core is untrusted: counts are bounded and every g is
 * checked before it is listed. */
#include "goroutine.h"

#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrset.h"
#include "frames.h"
#include "golang.h"
#include "strpool.h"
#include "../base/array.h"

enum {
	MAX_GOROUTINES = 1 << 22,
	MAX_MS = 1 << 14,
	MAX_WAIT_REASONS = 256,
	MAX_WAIT_REASON_LEN = 64,
	MAX_FUNC_NAME = 1024,
	MIN_STACK = 512,            /* a goroutine's stack is at least this */
	MAX_STACK = 1 << 30,        /* and at most the runtime's maxstacksize */
};

#define MAX_GOID (1ull << 48)
#define G_MAX_BYTES 1024        /* a g's members lie in its first bytes */
#define MAX_CUT_WARNINGS 8

/* The core's bytes, else the binary's for its constant data (a panic's
 * type and string are often there, and qemu-user's cores leave them out). */
bool go_read(struct go_runtime *rt, uint64_t addr, void *buf, size_t n)
{
	return addr && dbg_read_module_bytes(rt->s, addr, buf, n);
}

bool go_read_word(struct go_runtime *rt, uint64_t addr, uint64_t *value)
{
	return go_read(rt, addr, value, sizeof(*value));
}

bool go_func(struct go_runtime *rt, uint64_t pc, struct dbg_gofunc *f)
{
	return pc >= rt->text_start && pc < rt->text_end && dbg_gotab_func(rt->tab, pc, f);
}

/* ---- layouts ---------------------------------------------------------- */

struct go_field {
	const char *type, *member;
	size_t at;                  /* offsetof(struct go_layout, ...) */
	uint64_t v119;              /* Go 1.19's offset on 64-bit machines */
};

#define F(type, member, field, v) { type, member, offsetof(struct go_layout, field), v }
static const struct go_field go_fields[] = {
	F("runtime.g", "stack.lo", g_stack_lo, 0), F("runtime.g", "stack.hi", g_stack_hi, 8),
	F("runtime.g", "_panic", g_panic, 32), F("runtime.g", "m", g_m, 48),
	F("runtime.g", "sched.sp", g_sched_sp, 56), F("runtime.g", "sched.pc", g_sched_pc, 64),
	F("runtime.g", "sched.lr", g_sched_lr, 96), F("runtime.g", "sched.bp", g_sched_bp, 104),
	F("runtime.g", "syscallsp", g_syscallsp, 112), F("runtime.g", "syscallpc", g_syscallpc, 120),
	F("runtime.g", "atomicstatus", g_status, 144), F("runtime.g", "goid", g_goid, 152),
	F("runtime.g", "waitsince", g_waitsince, 168), F("runtime.g", "waitreason", g_waitreason, 176),
	F("runtime.g", "lockedm", g_lockedm, 232), F("runtime.g", "sig", g_sig, 240),
	F("runtime.g", "sigcode0", g_sigcode0, 272), F("runtime.g", "sigcode1", g_sigcode1, 280),
	F("runtime.g", "sigpc", g_sigpc, 288), F("runtime.g", "gopc", g_gopc, 296),
	F("runtime.g", "startpc", g_startpc, 312), F("runtime.g", "waiting", g_waiting, 328),
	F("runtime.sudog", "g", sg_g, 0), F("runtime.sudog", "next", sg_next, 8),
	F("runtime.sudog", "prev", sg_prev, 16), F("runtime.sudog", "elem", sg_elem, 24),
	F("runtime.sudog", "waitlink", sg_waitlink, 64), F("runtime.sudog", "c", sg_c, 80),
	F("runtime.semaRoot", "treap", sr_treap, 8),
	F("runtime.pollDesc", "fd", pd_fd, 8), F("runtime.pollDesc", "rg", pd_rg, 24),
	F("runtime.pollDesc", "wg", pd_wg, 32), F("runtime.pollDesc", "self", pd_self, 232),
	F("runtime.m", "g0", m_g0, 0), F("runtime.m", "procid", m_procid, 72),
	F("runtime.m", "curg", m_curg, 192),
	F("runtime.m", "alllink", m_alllink, 336),
	F("runtime._panic", "arg", p_arg, 8), F("runtime._panic", "link", p_link, 24),
	F("runtime._panic", "recovered", p_recovered, 48),
	F("runtime._type", "kind", t_kind, 23),
};
#undef F

static void layout_set(struct go_layout *L, const struct go_field *f, uint64_t v)
{
	memcpy((char *)L + f->at, &v, sizeof(v));
}

/* The layout from DWARF, every member of it; false when one is missing. */
static bool layout_from_dwarf(struct go_runtime *rt)
{
	for (size_t i = 0; i < sizeof(go_fields) / sizeof(go_fields[0]); i++) {
		uint64_t off, size;
		if (!dbg_member_find(rt->s, go_fields[i].type, go_fields[i].member, &off, &size))
			return false;
		layout_set(&rt->L, &go_fields[i], off);
		if (go_fields[i].at == offsetof(struct go_layout, g_waitreason))
			rt->L.waitreason_size = size;
	}
	return rt->L.waitreason_size >= 1 && rt->L.waitreason_size <= 8;
}

/* The major.minor of VERSION ("go1.19.8" -> 119); 0 when unknown. */
static int version_number(const char *version)
{
	unsigned major, minor;
	if (!version || sscanf(version, "go%u.%u", &major, &minor) != 2 || major != 1)
		return 0;
	return (int)(major * 100 + minor);
}

static bool layout_from_version(struct go_runtime *rt)
{
	if (version_number(rt->version) != 119)
		return false;
	for (size_t i = 0; i < sizeof(go_fields) / sizeof(go_fields[0]); i++)
		layout_set(&rt->L, &go_fields[i], go_fields[i].v119);
	rt->L.waitreason_size = 1;
	return true;
}

/* Where the members of a g end, every one of them (read as up to a word)
 * inside the bytes g_read reads: a layout from a binary's DWARF is as
 * untrusted as the core. */
static bool layout_bounded(struct go_layout *L)
{
	L->g_bytes = 0;
	for (size_t i = 0; i < sizeof(go_fields) / sizeof(go_fields[0]); i++) {
		uint64_t off;
		memcpy(&off, (const char *)L + go_fields[i].at, sizeof(off));
		if (strcmp(go_fields[i].type, "runtime.g") == 0 && off + 8 > L->g_bytes)
			L->g_bytes = off + 8;
	}
	return L->g_bytes <= G_MAX_BYTES;
}

/* ---- wait reasons ----------------------------------------------------- */

/* Go 1.19's waitReasonStrings, for a binary whose symbols are gone. */
static const char *const wait_reasons_119[] = {
	"", "GC assist marking", "IO wait", "chan receive (nil chan)", "chan send (nil chan)",
	"dumping heap", "garbage collection", "garbage collection scan", "panicwait", "select",
	"select (no cases)", "GC assist wait", "GC sweep wait", "GC scavenge wait", "chan receive",
	"chan send", "finalizer wait", "force gc (idle)", "semacquire", "sleep", "sync.Cond.Wait",
	"timer goroutine (idle)", "trace reader (blocked)", "wait for GC cycle", "GC worker (idle)",
	"preempted", "debug call",
};

static bool add_wait_reason(struct go_runtime *rt, const char *text, size_t *cap)
{
	char *copy = strdup(text);
	if (!copy || !base_array_reserve(&rt->wait_reasons, cap, rt->nwait_reasons + 1,
					 sizeof(*rt->wait_reasons))) {
		free(copy);
		return false;
	}
	rt->wait_reasons[rt->nwait_reasons++] = copy;
	return true;
}

/* runtime.waitReasonStrings, a [N]string, read from the core. */
static bool wait_reasons_from_symbol(struct go_runtime *rt)
{
	uint64_t addr, size;
	if (!dbg_find_symbol(rt->s, "runtime.waitReasonStrings", &addr, &size) || size % 16 ||
	    size / 16 > MAX_WAIT_REASONS)
		return false;
	size_t caps = 0;
	for (uint64_t i = 0; i < size / 16; i++) {
		uint64_t str[2];
		char text[MAX_WAIT_REASON_LEN + 1] = "";
		if (!go_read(rt, addr + i * 16, str, sizeof(str)) || str[1] > MAX_WAIT_REASON_LEN ||
		    (str[1] && !dbg_read_module_bytes(rt->s, str[0], text, str[1])))
			return false;
		text[str[1]] = '\0';
		if (!add_wait_reason(rt, text, &caps))
			return false;
	}
	return rt->nwait_reasons > 0;
}

static void wait_reasons_load(struct go_runtime *rt)
{
	if (wait_reasons_from_symbol(rt))
		return;
	for (size_t i = 0; i < rt->nwait_reasons; i++)
		free(rt->wait_reasons[i]);
	rt->nwait_reasons = 0;
	if (version_number(rt->version) != 119)
		return;
	size_t cap = 0;
	for (size_t i = 0; i < sizeof(wait_reasons_119) / sizeof(wait_reasons_119[0]); i++)
		if (!add_wait_reason(rt, wait_reasons_119[i], &cap))
			return;
}

/* ---- goroutines ------------------------------------------------------- */

static uint64_t word_at(const unsigned char *p, uint64_t off)
{
	uint64_t v;
	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint32_t u32_at(const unsigned char *p, uint64_t off)
{
	uint32_t v;
	memcpy(&v, p + off, sizeof(v));
	return v;
}

/* Whether the g read into P looks like one: a stack of a sane size, a
 * status the runtime has, a goid. */
static bool g_plausible(const struct go_g *g)
{
	uint64_t size = g->stack_hi - g->stack_lo;
	bool dead = g->status == GO_DEAD;
	if (g->status > GO_PREEMPTED || g->status == 5 || g->status == 7)
		return false;
	/* A dead g may have given its stack back. */
	if (!dead && (g->stack_hi <= g->stack_lo || size < MIN_STACK || size > MAX_STACK))
		return false;
	/* goids count up from 1, one per goroutine ever started. */
	return dead || (g->goid > 0 && g->goid < MAX_GOID);
}

static bool g_read(struct go_runtime *rt, uint64_t addr, struct go_g *g)
{
	const struct go_layout *L = &rt->L;
	unsigned char buf[G_MAX_BYTES];
	if (!go_read(rt, addr, buf, L->g_bytes))
		return false;
	uint32_t reason = 0;
	memcpy(&reason, buf + L->g_waitreason, L->waitreason_size < 4 ? L->waitreason_size : 4);
	*g = (struct go_g){
		.addr = addr, .goid = word_at(buf, L->g_goid),
		.status = u32_at(buf, L->g_status) & ~(uint32_t)GO_SCAN,
		.stack_lo = word_at(buf, L->g_stack_lo), .stack_hi = word_at(buf, L->g_stack_hi),
		.m = word_at(buf, L->g_m), .lockedm = word_at(buf, L->g_lockedm),
		.sched_sp = word_at(buf, L->g_sched_sp), .sched_pc = word_at(buf, L->g_sched_pc),
		.sched_lr = word_at(buf, L->g_sched_lr), .sched_bp = word_at(buf, L->g_sched_bp),
		.syscallsp = word_at(buf, L->g_syscallsp), .syscallpc = word_at(buf, L->g_syscallpc),
		.waitsince = word_at(buf, L->g_waitsince), .waitreason = reason,
		.gopc = word_at(buf, L->g_gopc), .startpc = word_at(buf, L->g_startpc),
		.panic = word_at(buf, L->g_panic), .sig = u32_at(buf, L->g_sig),
		.sigcode0 = word_at(buf, L->g_sigcode0), .sigcode1 = word_at(buf, L->g_sigcode1),
		.sigpc = word_at(buf, L->g_sigpc), .waiting = word_at(buf, L->g_waiting),
	};
	return g_plausible(g);
}

/* Where allgs is and how many it holds: the slice, else allgptr/allglen. */
static bool allgs_by_symbol(struct go_runtime *rt, uint64_t *array, uint64_t *len)
{
	uint64_t addr, size, slice[3], glen;
	if (dbg_find_symbol(rt->s, "runtime.allgs", &addr, &size) && go_read(rt, addr, slice, 24) &&
	    slice[1] <= slice[2]) {
		*array = slice[0];
		*len = slice[1];
		/* allglen follows allgs' length (allgadd): a length that
		 * disagrees with it is damage, the shorter is read. */
		if (dbg_find_symbol(rt->s, "runtime.allglen", &addr, &size) && go_read_word(rt, addr, &glen) &&
		    glen != *len) {
			core_warn(rt->core, "Go: runtime.allgs holds %" PRIu64 " goroutines, runtime.allglen says %"
				  PRIu64 "; the first %" PRIu64 " read", *len, glen, glen < *len ? glen : *len);
			if (glen < *len)
				*len = glen;
		}
		return true;
	}
	uint64_t lenaddr;
	return dbg_find_symbol(rt->s, "runtime.allgptr", &addr, &size) &&
	       dbg_find_symbol(rt->s, "runtime.allglen", &lenaddr, &size) &&
	       go_read_word(rt, addr, array) && go_read_word(rt, lenaddr, len);
}

/* Whether the slice {ARRAY, LEN, CAP} is allgs: the main goroutine
 * first (the first g the runtime makes), then gs of distinct goids. */
static bool looks_like_allgs(struct go_runtime *rt, const uint64_t slice[3])
{
	enum { CHECKED = 16 };
	uint64_t n = slice[1], ptrs[CHECKED], goids[CHECKED];
	if (!n || n > slice[2] || slice[2] > MAX_GOROUTINES || slice[0] % 8)
		return false;
	size_t k = n < CHECKED ? (size_t)n : CHECKED;
	if (!go_read(rt, slice[0], ptrs, k * sizeof(*ptrs)))
		return false;
	for (size_t i = 0; i < k; i++) {
		struct go_g g;
		if (ptrs[i] % 8 || !g_read(rt, ptrs[i], &g) || (i == 0 && g.goid != 1))
			return false;
		goids[i] = g.goid;
		for (size_t j = 0; j < i; j++)
			if (goids[j] == g.goid && g.status != GO_DEAD)
				return false;
	}
	return true;
}

/* The allgs in [START, END), read in chunks (a chunk the core lacks is
 * passed over). */
static bool scan_for_allgs(struct go_runtime *rt, uint64_t start, uint64_t end, uint64_t *array,
			   uint64_t *len)
{
	enum { CHUNK = 64 << 10 };
	unsigned char *bytes = malloc(CHUNK + 16);
	for (uint64_t at = start & ~7ull; bytes && at < end; at += CHUNK) {
		size_t n = end - at < CHUNK + 16 ? (size_t)(end - at) : CHUNK + 16;
		/* what a minicore keeps of the scan is the slice it finds */
		struct core_writer *recorder = core_record_pause(rt->core);
		bool read = n >= 24 && go_read(rt, at, bytes, n);
		core_record_resume(rt->core, recorder);
		if (!read)
			continue;
		for (size_t off = 0; off + 24 <= n && off < CHUNK; off += 8) {
			uint64_t slice[3];
			memcpy(slice, bytes + off, sizeof(slice));
			if (looks_like_allgs(rt, slice) && go_read(rt, at + off, slice, sizeof(slice))) {
				*array = slice[0];
				*len = slice[1];
				free(bytes);
				return true;
			}
		}
	}
	free(bytes);
	return false;
}

/* A stripped program's allgs: the slice in its data that holds its
 * goroutines, where its moduledata says its data is, else in the core's
 * writable segments of the executable. */
static bool allgs_by_scan(struct go_runtime *rt, uint64_t *array, uint64_t *len)
{
	uint64_t start, end;
	if (dbg_gotab_data(rt->tab, &start, &end) && end - start <= (256u << 20))
		return scan_for_allgs(rt, start, end, array, len);
	const struct dbg_module_info *main = NULL;
	for (size_t i = 0; i < dbg_module_count(rt->s) && !main; i++)
		if (dbg_module_get(rt->s, i)->is_main)
			main = dbg_module_get(rt->s, i);
	for (size_t i = 0; main && i < rt->core->nsegments; i++) {
		const struct core_segment *seg = &rt->core->segments[i];
		if ((seg->flags & PF_W) && seg->vaddr >= main->start && seg->vaddr < main->end &&
		    seg->memsz <= (256u << 20) &&
		    scan_for_allgs(rt, seg->vaddr, seg->vaddr + seg->memsz, array, len))
			return true;
	}
	return false;
}

static bool allgs_find(struct go_runtime *rt, uint64_t *array, uint64_t *len)
{
	return allgs_by_symbol(rt, array, len) || allgs_by_scan(rt, array, len);
}

static int g_order(const void *a, const void *b)
{
	const struct go_g *x = a, *y = b;
	return x->goid < y->goid ? -1 : x->goid > y->goid;
}

/* Read the N gs of ARRAY; each one that cannot be read or lies is a
 * warning and left out. */
/* Drop the gs of RT that repeat a goid (sorted by goid): a length that
 * lies reads past the array, where an old copy names the same gs. */
static void drop_repeated(struct go_runtime *rt)
{
	size_t kept = 0, dropped = 0;
	for (size_t i = 0; i < rt->ngs; i++) {
		bool repeat = kept && rt->gs[kept - 1].goid == rt->gs[i].goid &&
			      rt->gs[i].status != GO_DEAD && rt->gs[kept - 1].status != GO_DEAD;
		if (repeat)
			dropped++;
		else
			rt->gs[kept++] = rt->gs[i];
	}
	rt->ngs = kept;
	if (dropped)
		core_warn(rt->core, "Go: %zu entries of runtime.allgs repeat another goroutine's id; left out",
			  dropped);
}

/* Read the N gs of ARRAY; each one that cannot be read or lies is a
 * warning and left out, and so is a g listed twice. */
static bool allgs_read(struct go_runtime *rt, uint64_t array, uint64_t n)
{
	if (n > MAX_GOROUTINES) {
		core_warn(rt->core, "Go: runtime.allgs holds %" PRIu64 " goroutines; the first %d read",
			  n, MAX_GOROUTINES);
		n = MAX_GOROUTINES;
	}
	uint64_t *ptrs = n ? malloc(n * sizeof(*ptrs)) : NULL;
	if (n && (!ptrs || !go_read(rt, array, ptrs, n * sizeof(*ptrs)))) {
		core_warn(rt->core, "Go: runtime.allgs at 0x%" PRIx64 " (%" PRIu64 " goroutines) is not in the core",
			  array, n);
		free(ptrs);
		return false;
	}
	rt->gs = n ? calloc(n, sizeof(*rt->gs)) : NULL;
	struct an_addr_set seen = {0};
	size_t bad = 0, twice = 0;
	for (uint64_t i = 0; rt->gs && i < n; i++) {
		struct go_g *g = &rt->gs[rt->ngs];
		int added = an_addr_set_add(&seen, ptrs[i]);
		if (added == 0)
			twice++;
		else if (added > 0 && g_read(rt, ptrs[i], g))
			rt->ngs++;
		else if (added > 0 && bad++ < 8)
			core_warn(rt->core, "Go: allgs[%" PRIu64 "] = 0x%" PRIx64 " is no goroutine", i, ptrs[i]);
	}
	an_addr_set_deinit(&seen);
	free(ptrs);
	if (bad > 8)
		core_warn(rt->core, "Go: %zu entries of runtime.allgs are no goroutine", bad);
	if (twice)
		core_warn(rt->core, "Go: runtime.allgs lists %zu goroutines twice", twice);
	if (rt->ngs)
		qsort(rt->gs, rt->ngs, sizeof(*rt->gs), g_order);
	drop_repeated(rt);
	return rt->gs || !n;
}

struct go_g *go_g_at(struct go_runtime *rt, uint64_t g)
{
	for (size_t i = 0; g && i < rt->ngs; i++)
		if (rt->gs[i].addr == g)
			return &rt->gs[i];
	return NULL;
}

/* ---- Ms --------------------------------------------------------------- */

struct go_m *go_m_at(struct go_runtime *rt, uint64_t m)
{
	for (size_t i = 0; m && i < rt->nms; i++)
		if (rt->ms[i].addr == m)
			return &rt->ms[i];
	return NULL;
}

struct go_m *go_m_of_thread(struct go_runtime *rt, int32_t tid)
{
	for (size_t i = 0; i < rt->nms; i++)
		if (rt->ms[i].procid == (uint64_t)(int64_t)tid)
			return &rt->ms[i];
	return NULL;
}

static bool m_add(struct go_runtime *rt, uint64_t addr, size_t *cap)
{
	const struct go_layout *L = &rt->L;
	if (go_m_at(rt, addr) || rt->nms >= MAX_MS)
		return true;
	struct go_m m = {.addr = addr};
	if (!go_read_word(rt, addr + L->m_g0, &m.g0) || !go_read_word(rt, addr + L->m_procid, &m.procid) ||
	    !go_read_word(rt, addr + L->m_curg, &m.curg))
		return false;
	if (m.g0) {
		go_read_word(rt, m.g0 + L->g_stack_lo, &m.g0_lo);
		go_read_word(rt, m.g0 + L->g_stack_hi, &m.g0_hi);
		go_read_word(rt, m.g0 + L->g_sched_sp, &m.g0_sched_sp);
	}
	if (!base_array_reserve(&rt->ms, cap, rt->nms + 1, sizeof(*rt->ms)))
		return false;
	rt->ms[rt->nms++] = m;
	return true;
}

/* runtime.allm's list, and the Ms goroutines name (all a stripped binary
 * has). */
static void ms_read(struct go_runtime *rt)
{
	size_t cap = 0;
	uint64_t addr, size, m = 0;
	if (dbg_find_symbol(rt->s, "runtime.allm", &addr, &size))
		go_read_word(rt, addr, &m);
	for (size_t n = 0; m && n < MAX_MS; n++) {
		if (go_m_at(rt, m)) {
			core_warn(rt->core, "Go: runtime.allm's list comes back to the M at 0x%" PRIx64, m);
			break;
		}
		if (!m_add(rt, m, &cap)) {
			core_warn(rt->core, "Go: the M at 0x%" PRIx64 " in runtime.allm is not in the core", m);
			break;
		}
		if (!go_read_word(rt, m + rt->L.m_alllink, &m))
			break;
	}
	for (size_t i = 0; i < rt->ngs; i++) {
		if (rt->gs[i].m)
			m_add(rt, rt->gs[i].m, &cap);
		if (rt->gs[i].lockedm)
			m_add(rt, rt->gs[i].lockedm, &cap);
	}
}

/* ---- tasks ------------------------------------------------------------ */

static enum an_task_state task_state(uint32_t status)
{
	switch (status) {
	case GO_RUNNABLE: return AN_TASK_RUNNABLE;
	case GO_RUNNING: return AN_TASK_RUNNING;
	case GO_SYSCALL: return AN_TASK_SYSCALL;
	case GO_PREEMPTED: return AN_TASK_PREEMPTED;
	case GO_IDLE: return AN_TASK_IDLE;
	default: return AN_TASK_WAITING;   /* waiting, copystack */
	}
}

static const char *pooled(struct go_runtime *rt, const char *s)
{
	int nomem = 0;
	return an_strpool_intern(rt->an->strings, s, &nomem);
}

/* The runtime's word for G's wait, as goroutineheader prints it. */
static const char *wait_word(struct go_runtime *rt, const struct go_g *g)
{
	if (g->status == GO_COPYSTACK)
		return "copystack";
	if (g->status != GO_WAITING)
		return NULL;
	if (g->waitreason == 0)
		return "waiting";
	if (g->waitreason < rt->nwait_reasons)
		return pooled(rt, rt->wait_reasons[g->waitreason]);
	return rt->nwait_reasons ? "unknown wait reason" : NULL;
}

/* "created by": the function of the go statement, and its line as the
 * runtime prints it (at the call, one before the return address). */
static void fill_created_by(struct go_runtime *rt, const struct go_g *g, struct an_task *t)
{
	struct dbg_gofunc f;
	/* The runtime names no creator for the main goroutine. */
	if (g->goid == 1 || !g->gopc || !go_func(rt, g->gopc, &f))
		return;
	const char *file = NULL;
	int line = 0;
	t->created_by = pooled(rt, f.name);
	if (dbg_gotab_line(rt->tab, &f, g->gopc > f.entry ? g->gopc - 1 : g->gopc, &file, &line)) {
		t->created_file = pooled(rt, file);
		t->created_line = line;
	}
	t->created_pc = g->gopc;
	t->has_created_pc = true;
}

static void fill_task(struct go_runtime *rt, const struct go_g *g, struct an_task *t)
{
	struct dbg_gofunc f;
	t->runtime = "go";
	t->id = g->goid;
	t->address = g->addr;
	t->state = task_state(g->status);
	t->wait_kind = wait_word(rt, g);
	t->locked = g->lockedm != 0;
	/* waitsince is the runtime's nanotime (CLOCK_MONOTONIC), stamped when
	 * a collection scanned the goroutine's stack; "now" is known only of a
	 * process stopped live. */
	uint64_t now;
	if ((g->status == GO_WAITING || g->status == GO_SYSCALL) && g->waitsince &&
	    core_stopped_at(rt->core, &now) && now >= g->waitsince) {
		t->wait_since = (now - g->waitsince) / 1000000000u;
		t->has_wait_since = true;
	}
	t->fn_address = g->startpc;
	if (g->startpc && go_func(rt, g->startpc, &f))
		t->fn = strdup(f.name);
	fill_created_by(rt, g, t);
	struct go_m *m = (g->status == GO_RUNNING || g->status == GO_SYSCALL) ? go_m_at(rt, g->m) : NULL;
	if (m && m->procid && an_thread_by_tid(rt->an, (int32_t)m->procid)) {
		t->tid = (int32_t)m->procid;
		t->has_tid = true;
	}
}

/* Symbolize a Go walk's N frames into LIST: C frames as any native frame
 * (with the tail calls between them), Go frames without: Go's compiler
 * makes no tail calls, and looking for them costs a search of DWARF's call
 * sites per frame. */
static bool append_walk(struct go_runtime *rt, struct an_frame_list *list, const struct dbg_frame *native,
			size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct dbg_gofunc f;
		bool ok = go_func(rt, native[i].pc, &f)
			? an_frames_append_pc(list, rt->s, native[i].pc, native[i].activation, AN_FRAME_NATIVE,
					      &native[i], false)
			: an_frames_append_native_range(list, rt->s, native, n, i, i + 1);
		if (!ok)
			return false;
	}
	return true;
}

/* A goroutine's frames, made from the walk's. */
static void task_frames(struct go_runtime *rt, struct an_task *t, struct dbg_frame *native, size_t n)
{
	struct an_frame_list list = {.pool = rt->an->strings};
	if (!append_walk(rt, &list, native, n)) {
		an_frames_list_deinit(&list);
		return;
	}
	an_frames_move_to(&list, &t->frames, &t->nframes);
}

/* Whether the walk's frames begin in C (a cgo call's), not in Go. */
static bool starts_in_c(struct go_runtime *rt, const struct dbg_frame *frames, size_t n)
{
	struct dbg_gofunc f;
	return n && !go_func(rt, frames[0].pc, &f);
}

static bool frames_from_thread(struct go_runtime *rt, const struct go_g *g, struct an_task *t,
			       struct dbg_frame **walks, size_t *nwalks, size_t *goroutine_at)
{
	if (!t->has_tid)
		return false;
	for (size_t i = 0; i < rt->an->nthreads; i++) {
		if (rt->an->threads[i].tid != t->tid || !walks[i] || goroutine_at[i] >= nwalks[i])
			continue;
		struct dbg_frame *frames = walks[i] + goroutine_at[i];
		size_t n = nwalks[i] - goroutine_at[i];
		/* In a system call the runtime shows where it entered it
		 * (syscallpc), the thread's walk only adds a cgo call's C. */
		if (g->status == GO_SYSCALL && !starts_in_c(rt, frames, n))
			return false;
		task_frames(rt, t, frames, n);
		return true;
	}
	return false;
}

static void goroutine_frames(struct go_runtime *rt, const struct go_g *g, struct an_task *t,
			     struct dbg_frame **walks, size_t *nwalks, size_t *goroutine_at)
{
	if (frames_from_thread(rt, g, t, walks, nwalks, goroutine_at))
		return;
	if (g->status == GO_RUNNING) {
		t->unwind_error = strdup("running on an OS thread the core does not hold");
		return;
	}
	struct dbg_frame *frames = NULL;
	size_t n = 0;
	char *why = NULL;
	if (go_walk_parked(rt, g, &frames, &n, &why))
		task_frames(rt, t, frames, n);
	free(frames);
	t->unwind_error = why;
}

static bool build_tasks(struct go_runtime *rt, struct dbg_frame **walks, size_t *nwalks,
			size_t *goroutine_at)
{
	struct analysis *an = rt->an;
	size_t live = 0;
	for (size_t i = 0; i < rt->ngs; i++)
		live += rt->gs[i].status != GO_DEAD;
	if (!live)
		return true;
	struct an_task *tasks = realloc(an->tasks, (an->ntasks + live) * sizeof(*tasks));
	if (!tasks)
		return false;
	an->tasks = tasks;
	size_t cut = 0, first = an->ntasks;
	for (size_t i = 0; i < rt->ngs; i++) {
		const struct go_g *g = &rt->gs[i];
		if (g->status == GO_DEAD)
			continue;
		struct an_task *t = &an->tasks[an->ntasks++];
		*t = (struct an_task){0};
		fill_task(rt, g, t);
		goroutine_frames(rt, g, t, walks, nwalks, goroutine_at);
		if (t->unwind_error && cut++ < MAX_CUT_WARNINGS)
			core_warn(rt->core, "Go: goroutine %" PRIu64 ": %s", t->id, t->unwind_error);
	}
	if (cut > MAX_CUT_WARNINGS)
		core_warn(rt->core, "Go: %zu goroutines' stacks are cut short", cut);
	return go_waits_read(rt, first);
}

/* ---- threads ---------------------------------------------------------- */

/* Replace each thread's frames by its walk as the runtime walks it. */
static bool threads_rewalk(struct go_runtime *rt, struct dbg_frame **walks, size_t *nwalks,
			   size_t *goroutine_at)
{
	for (size_t i = 0; i < rt->an->nthreads; i++) {
		struct an_thread *t = &rt->an->threads[i];
		char *why = NULL;
		goroutine_at[i] = SIZE_MAX;
		if (!go_walk_thread(rt, i, &walks[i], &nwalks[i], &goroutine_at[i], &why) || t->recursion) {
			free(why);
			continue;
		}
		struct an_frame_list list = {.pool = rt->an->strings};
		if (!append_walk(rt, &list, walks[i], nwalks[i])) {
			an_frames_list_deinit(&list);
			free(why);
			return false;
		}
		for (size_t j = 0; j < t->nframes; j++)
			an_frame_deinit(&t->frames[j]);
		free(t->frames);
		t->frames = NULL;
		t->nframes = 0;
		an_frames_move_to(&list, &t->frames, &t->nframes);
		free(t->unwind_error);
		t->unwind_error = why;
	}
	return true;
}

/* ---- finding the runtime ---------------------------------------------- */

/* How much of a Go program's runtime asyncore can read. */
enum go_known { GO_NONE, GO_CODE, GO_RUNTIME };

/* Its table, which names and walks its frames, and when the layouts and
 * allgs are known, its goroutines and Ms. */
static enum go_known runtime_open(struct go_runtime *rt)
{
	rt->tab = dbg_session_gotab(rt->s, &rt->version);
	if (!rt->tab)
		return GO_NONE;
	rt->arm64 = rt->an->arch && strcmp(rt->an->arch, "aarch64") == 0;
	dbg_gotab_text(rt->tab, &rt->text_start, &rt->text_end);
	if ((!layout_from_dwarf(rt) && !layout_from_version(rt)) || !layout_bounded(&rt->L)) {
		core_warn(rt->core, "Go %s: no DWARF and no known layout of its runtime; no goroutines listed",
			  rt->version ? rt->version : "of unknown version");
		return GO_CODE;
	}
	wait_reasons_load(rt);
	uint64_t array = 0, n = 0;
	if (!allgs_find(rt, &array, &n)) {
		core_warn(rt->core, "Go: runtime.allgs not found; no goroutines listed");
		return GO_CODE;
	}
	if (!allgs_read(rt, array, n))
		return GO_CODE;
	ms_read(rt);
	return GO_RUNTIME;
}

static void runtime_close(struct go_runtime *rt)
{
	free(rt->version);
	free(rt->gs);
	free(rt->ms);
	for (size_t i = 0; i < rt->nwait_reasons; i++)
		free(rt->wait_reasons[i]);
	free(rt->wait_reasons);
}

static bool add_runtime_stack(struct analysis *an, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return true;
	struct an_stack_range *r = base_array_push(&an->runtime_stacks, &an->nruntime_stacks,
						   &an->runtime_stacks_cap, sizeof(*r));
	if (r)
		*r = (struct an_stack_range){lo, hi};
	return r != NULL;
}

/* Whether the Ms' g0 stacks come from the runtime's heap: without cgo,
 * every M but the first (runtime.m0, on the process's own stack) gets one
 * from malg; with cgo, each thread's g0 runs on its pthread stack. */
static bool g0_in_heap(struct go_runtime *rt, uint64_t *m0_g0)
{
	uint64_t addr, size;
	unsigned char iscgo = 1;
	return dbg_find_symbol(rt->s, "runtime.iscgo", &addr, &size) && go_read(rt, addr, &iscgo, 1) &&
	       !iscgo && dbg_find_symbol(rt->s, "runtime.g0", m0_g0, &size);
}

/* AN's list of the stacks the runtime allocated: each live goroutine's,
 * and the heap-allocated g0 stacks. */
static bool record_runtime_stacks(struct go_runtime *rt)
{
	for (size_t i = 0; i < rt->ngs; i++)
		if (rt->gs[i].status != GO_DEAD &&
		    !add_runtime_stack(rt->an, rt->gs[i].stack_lo, rt->gs[i].stack_hi))
			return false;
	uint64_t m0_g0;
	if (!g0_in_heap(rt, &m0_g0))
		return true;
	for (size_t i = 0; i < rt->nms; i++)
		if (rt->ms[i].g0 && rt->ms[i].g0 != m0_g0 &&
		    !add_runtime_stack(rt->an, rt->ms[i].g0_lo, rt->ms[i].g0_hi))
			return false;
	return true;
}

bool an_go_analyze(struct dbg_session *s, struct analysis *an, bool tasks)
{
	struct go_runtime rt = {.s = s, .core = dbg_session_core(s), .an = an};
	bool ok = true;
	enum go_known known = runtime_open(&rt);
	if (known != GO_NONE) {
		size_t n = an->nthreads;
		struct dbg_frame **walks = calloc(n ? n : 1, sizeof(*walks));
		size_t *nwalks = calloc(n ? n : 1, sizeof(*nwalks));
		size_t *goroutine_at = calloc(n ? n : 1, sizeof(*goroutine_at));
		ok = walks && nwalks && goroutine_at && threads_rewalk(&rt, walks, nwalks, goroutine_at) &&
		     (!tasks || known != GO_RUNTIME || build_tasks(&rt, walks, nwalks, goroutine_at));
		if (ok)
			go_crash_read(&rt);
		ok = ok && (known != GO_RUNTIME || record_runtime_stacks(&rt));
		for (size_t i = 0; walks && i < n; i++)
			free(walks[i]);
		free(walks);
		free(nwalks);
		free(goroutine_at);
	}
	runtime_close(&rt);
	return ok;
}
