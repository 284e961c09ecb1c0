/* Unit tests for analyzer/folly: the pthread slot, the splice of native and
 * async frames and the suspended chains, over crafted cores whose memory
 * holds exactly the AsyncStackRoot/AsyncStackFrame chains each case needs.
 * The fixture program (tests/unit/data) provides the symbols; its stripped
 * copy must give the same results from .dynsym and the default layout. */
#include <elf.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analyzer/folly.h"
#include "../../analyzer/pthreads.h"
#include "craft.h"
#include "data/unit_fixture.h"

#define UNIT_GROUP "folly"
#include "unit.h"

#define HEAP 0x10000000ull          /* roots, frames, key blocks */
#define HEAP_SIZE 0x40000u
#define STACK 0x7ffd00000000ull     /* the threads' stacks */
#define STACK_SIZE 0x20000u
#define STACK_SP (STACK + 0x10000)  /* every thread's rsp */
#define TP_AREA 0x7f0000010000ull   /* thread i's struct pthread at TP_AREA + i * TP_STRIDE */
#define TP_STRIDE 0x10000u
#define SPECIFIC_1ST 0x310u         /* glibc 2.36's struct pthread */
#define SPECIFIC 0x510u
#define KEY_SEQ 1u                  /* the live key's sequence number */
#define NNATIVE 8
#define MAX_THREADS 24

struct thread_spec {
	int32_t tid;
	uint64_t fs;
	uint64_t entry;             /* the pthread_key_data {seq, data} for the key */
	uint64_t holder;
	struct dbg_frame native[NNATIVE];
};

/* A crafted core being laid out. */
struct world {
	const char *fixture;        /* the program the core maps */
	struct craft_core *c;
	uint32_t key;
	struct thread_spec threads[MAX_THREADS];
	size_t nthreads;
	bool ok;                    /* every segment could be added */
};

/* A pc inside function NAME (past its first byte, so pc-1 stays in it). */
static uint64_t pc_in(const char *name)
{
	return craft_fixture_symbol(name) + 4;
}

static void put(struct world *w, uint64_t addr, uint64_t value)
{
	craft_u64(w->c, addr, value);
}

static uint64_t alloc(struct world *w, size_t size)
{
	return craft_alloc(w->c, size);
}

static uint64_t new_root(struct world *w, uint64_t top, uint64_t next, uint64_t sfp)
{
	uint64_t r = alloc(w, sizeof(struct AsyncStackRoot));
	put(w, r + offsetof(struct AsyncStackRoot, topFrame), top);
	put(w, r + offsetof(struct AsyncStackRoot, nextRoot), next);
	put(w, r + offsetof(struct AsyncStackRoot, stackFramePtr), sfp);
	return r;
}

static void set_frame(struct world *w, uint64_t f, uint64_t parent, uint64_t ip, uint64_t root)
{
	put(w, f + offsetof(struct AsyncStackFrame, parentFrame), parent);
	put(w, f + offsetof(struct AsyncStackFrame, instructionPointer), ip);
	put(w, f + offsetof(struct AsyncStackFrame, stackRoot), root);
}

static uint64_t new_frame(struct world *w, uint64_t parent, uint64_t ip, uint64_t root)
{
	uint64_t f = alloc(w, sizeof(struct AsyncStackFrame));
	set_frame(w, f, parent, ip, root);
	return f;
}

/* The frame address of native frame I (where its saved rbp sits). */
static uint64_t fa(const struct thread_spec *t, size_t i)
{
	return t->native[i].cfa - 16;
}

/* Where x86_64 static TLS puts the executable's holder for thread
 * pointer FS: below the thread pointer by the TLS block rounded up to its
 * alignment, plus the symbol's offset in the block. */
static uint64_t static_holder(const struct world *w, uint64_t fs)
{
	uint64_t memsz = 0, align = 1, off = 0;
	craft_elf_tls(w->fixture, &memsz, &align);
	craft_elf_symbol(w->fixture, "currentThreadAsyncStackRoot", &off, NULL);
	return fs - ((memsz + align - 1) & ~(align - 1)) + off;
}

static bool world_init(struct world *w, const char *fixture, uint32_t key)
{
	memset(w, 0, sizeof(*w));
	w->fixture = fixture;
	w->c = craft_create();
	w->key = key;
	w->ok = w->c && craft_map_executable(w->c, fixture, CRAFT_FIXTURE_BIAS) &&
		craft_heap(w->c, HEAP, HEAP_SIZE) &&
		craft_segment(w->c, STACK, STACK_SIZE, PF_R | PF_W);
	if (!w->ok) {
		craft_destroy(w->c);
		w->c = NULL;
		return false;
	}
	craft_u32(w->c, craft_fixture_symbol("folly_async_stack_root_tls_key"), key);
	if (key < 1024)
		put(w, craft_fixture_symbol("__pthread_keys") + 16 * (uint64_t)key, KEY_SEQ);
	return true;
}

/* A thread whose pthread slot for the key points at its static-TLS holder
 * (holding no root yet), with NNATIVE native frames fx_native_0..7. */
static struct thread_spec *add_thread(struct world *w, int32_t tid)
{
	if (w->nthreads == MAX_THREADS) {
		w->ok = false;
		return &w->threads[0];
	}
	struct thread_spec *t = &w->threads[w->nthreads];
	t->tid = tid;
	t->fs = TP_AREA + TP_STRIDE * w->nthreads;
	w->nthreads++;
	w->ok = craft_segment(w->c, t->fs - 0x1000, 0x2000, PF_R | PF_W) && w->ok;
	put(w, t->fs, t->fs);                   /* header.tcb */
	put(w, t->fs + 16, t->fs);              /* header.self */
	put(w, t->fs + SPECIFIC, t->fs + SPECIFIC_1ST);
	t->holder = static_holder(w, t->fs);
	put(w, t->holder, 0);
	if (w->key < 1024) {
		uint64_t block = t->fs + SPECIFIC_1ST;
		if (w->key >= 32) {
			block = alloc(w, 32 * 16);
			put(w, t->fs + SPECIFIC + 8 * (w->key / 32), block);
		}
		t->entry = block + 16 * (w->key % 32);
		put(w, t->entry, KEY_SEQ);
		put(w, t->entry + 8, t->holder);
	}
	for (size_t i = 0; i < NNATIVE; i++) {
		char name[32];
		snprintf(name, sizeof(name), "fx_native_%zu", i);
		t->native[i] = (struct dbg_frame){ .pc = pc_in(name), .activation = i == 0,
						   .cfa = STACK_SP + 0x100 * (i + 1) };
	}
	return t;
}

/* Make ROOT the thread's current AsyncStackRoot. */
static void set_root(struct world *w, const struct thread_spec *t, uint64_t root)
{
	put(w, t->holder, root);
}

/* The result of the splice over a world. */
struct outcome {
	struct craft_session cs;
	struct analysis *an;
};

static bool splice(struct world *w, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	for (size_t i = 0; i < w->nthreads; i++) {
		uint64_t regs[CORE_REG_COUNT] = { 0 };
		regs[CORE_REG_FS_BASE] = w->threads[i].fs;
		regs[CORE_REG_RSP] = STACK_SP;
		regs[CORE_REG_RIP] = w->threads[i].native[0].pc;
		craft_prstatus(craft_notes(w->c), w->threads[i].tid, i == 0 ? SIGSEGV : 0, regs);
	}
	bool opened = w->ok && craft_open(w->c, &o->cs);
	craft_destroy(w->c);
	w->c = NULL;
	if (!opened)
		return false;
	struct analysis *an = an_analysis_create();
	struct core *core = o->cs.core;
	an->threads = calloc(core->nthreads, sizeof(*an->threads));
	an->nthreads = core->nthreads;
	struct dbg_frame *stacks[MAX_THREADS];
	size_t nstacks[MAX_THREADS];
	for (size_t i = 0; i < core->nthreads && i < MAX_THREADS; i++) {
		an->threads[i].tid = core->threads[i].tid;
		memcpy(an->threads[i].regs, core->threads[i].regs, sizeof(an->threads[i].regs));
		an->threads[i].sp = core_thread_sp(core, &core->threads[i]);
		an->threads[i].has_tp = core_thread_tp(core, &core->threads[i], &an->threads[i].tp);
		stacks[i] = w->threads[i].native;
		nstacks[i] = NNATIVE;
	}
	an_pthreads_locate(o->cs.s, an);
	an_folly_splice_all(o->cs.s, an, stacks, nstacks);
	o->an = an;
	return true;
}

static void outcome_free(struct outcome *o)
{
	an_analysis_destroy(o->an);
	craft_close(&o->cs);
}

/* The frames as short names: "n3" for fx_native_3, "a" for fx_async_a,
 * "!" after a name whose kind is wrong, "|" before a seam. */
static void describe_frames(const struct an_frame *frames, size_t n, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++) {
		const struct an_frame *f = &frames[i];
		const char *name = f->function ? f->function : "?";
		bool async = strncmp(name, "fx_async_", 9) == 0;
		bool native = strncmp(name, "fx_native_", 10) == 0;
		bool kind_ok = (f->kind == AN_FRAME_ASYNC) == async;
		len += (size_t)snprintf(buf + len, size - len, "%s%s%s%s%s", i ? " " : "",
					f->seam ? "| " : "", native ? "n" : "",
					native ? name + 10 : async ? name + 9 : name,
					kind_ok ? "" : "!");
	}
}

static const struct an_thread *thread(const struct outcome *o, int32_t tid)
{
	for (size_t i = 0; i < o->an->nthreads; i++)
		if (o->an->threads[i].tid == tid)
			return &o->an->threads[i];
	return NULL;
}

/* The thread's spliced frames are WANT (see describe_frames). */
static void check_frames(const char *what, const struct outcome *o, int32_t tid, const char *want)
{
	const struct an_thread *t = thread(o, tid);
	char got[400], name[256];
	describe_frames(t ? t->frames : NULL, t ? t->nframes : 0, got, sizeof(got));
	snprintf(name, sizeof(name), "%s: frames", what);
	CHECK_STR(name, t && t->frames ? got : NULL, want);
}

/* The thread was left for the caller to fill (no splice). */
static void check_untouched(const char *what, const struct outcome *o, int32_t tid)
{
	const struct an_thread *t = thread(o, tid);
	char name[256];
	snprintf(name, sizeof(name), "%s: no splice", what);
	CHECK(name, t && !t->frames && t->nframes == 0 && t->async_root == 0);
}

/* Exactly one warning names thread TID (0: any) and contains TEXT. */
static void check_warning(const char *what, const struct outcome *o, int32_t tid, const char *text)
{
	char name[256];
	size_t n = 0;
	for (size_t i = 0; i < o->cs.core->nwarnings; i++) {
		const char *wn = o->cs.core->warnings[i];
		char prefix[64];
		snprintf(prefix, sizeof(prefix), "folly: thread %d: ", (int)tid);
		if ((tid == 0 || strncmp(wn, prefix, strlen(prefix)) == 0) && strstr(wn, text))
			n++;
	}
	snprintf(name, sizeof(name), "%s: warns \"%s\"", what, text);
	CHECK(name, n == 1);
}

static void check_warning_count(const char *what, const struct outcome *o, size_t want)
{
	char name[256];
	snprintf(name, sizeof(name), "%s: %zu warnings in all", what, want);
	if (!CHECK(name, o->cs.core->nwarnings == want))
		for (size_t i = 0; i < o->cs.core->nwarnings; i++)
			printf("    %s\n", o->cs.core->warnings[i]);
}

/* ---- the splice, on a key in the second-level block -------------------- */

/* n0 n1 | a b | n4 | c | n7: the root registered by n2; the bottom frame's
 * root made by n2 (B), whose caller n3 (S) the async frame b stands for;
 * its next root registered by n5, whose bottom root again skips n5, n6. */
static void lay_walk(struct world *w, struct thread_spec *t)
{
	uint64_t r4 = new_root(w, 0, 0, fa(t, 5));
	uint64_t c = new_frame(w, 0, pc_in("fx_async_c"), r4);
	uint64_t r3 = new_root(w, c, 0, fa(t, 5));
	uint64_t r2 = new_root(w, 0, r3, fa(t, 2));
	uint64_t b = new_frame(w, 0, pc_in("fx_async_b"), r2);
	uint64_t a = new_frame(w, b, pc_in("fx_async_a"), 0);
	set_root(w, t, new_root(w, a, 0, fa(t, 2)));
}

/* A root registered by n2 whose chain starts at TOP. */
static uint64_t root_at_n2(struct world *w, struct thread_spec *t, uint64_t top)
{
	uint64_t r = new_root(w, top, 0, fa(t, 2));
	set_root(w, t, r);
	return r;
}

static void test_splice(const char *fixture, const char *label)
{
	struct world w;
	struct outcome o;
	char what[128];
#define CASE(name) (snprintf(what, sizeof(what), "%s: %s", label, name), what)
	if (!CHECK(CASE("second-level key block: world laid out"), world_init(&w, fixture, 37)))
		return;

	lay_walk(&w, add_thread(&w, 101));
	add_thread(&w, 102);                                    /* holder holds NULL */
	struct thread_spec *t = add_thread(&w, 103);            /* slot empty */
	put(&w, t->entry + 8, 0);
	t = add_thread(&w, 104);                                /* stale sequence */
	root_at_n2(&w, t, new_frame(&w, 0, pc_in("fx_async_a"), 0));
	put(&w, t->entry, KEY_SEQ + 2);

	t = add_thread(&w, 105);                                /* parentFrame cycle */
	uint64_t f1 = alloc(&w, sizeof(struct AsyncStackFrame));
	uint64_t f2 = new_frame(&w, f1, pc_in("fx_async_b"), 0);
	set_frame(&w, f1, f2, pc_in("fx_async_a"), 0);
	root_at_n2(&w, t, f1);

	t = add_thread(&w, 106);                                /* misaligned parent */
	f2 = new_frame(&w, 0, pc_in("fx_async_b"), 0);
	root_at_n2(&w, t, new_frame(&w, f2 + 4, pc_in("fx_async_a"), 0));
	t = add_thread(&w, 107);                                /* unreadable parent */
	root_at_n2(&w, t, new_frame(&w, 0xdead0000, pc_in("fx_async_a"), 0));

	t = add_thread(&w, 108);                                /* nextRoot cycle */
	uint64_t r1 = alloc(&w, sizeof(struct AsyncStackRoot));
	uint64_t r2 = new_root(&w, 0, r1, fa(t, 3));
	f1 = new_frame(&w, 0, pc_in("fx_async_a"), r2);
	put(&w, r1 + offsetof(struct AsyncStackRoot, topFrame), f1);
	put(&w, r1 + offsetof(struct AsyncStackRoot, stackFramePtr), fa(t, 2));
	set_root(&w, t, r1);

	t = add_thread(&w, 109);                                /* stackFramePtr on no frame */
	set_root(&w, t, new_root(&w, new_frame(&w, 0, pc_in("fx_async_a"), 0), 0, fa(t, 2) + 8));
	t = add_thread(&w, 110);                                /* misaligned holder */
	put(&w, t->entry + 8, t->holder + 4);
	t = add_thread(&w, 111);                                /* key block unreadable */
	put(&w, t->fs + SPECIFIC + 8, 0xbad0000);
	t = add_thread(&w, 112);                                /* detached bottom frame */
	f2 = new_frame(&w, 0, pc_in("fx_async_b"), 0);
	root_at_n2(&w, t, new_frame(&w, f2, pc_in("fx_async_a"), 0));

	t = add_thread(&w, 113);                                /* a root with no frame */
	r2 = new_root(&w, new_frame(&w, 0, pc_in("fx_async_c"), 0), 0, fa(t, 4));
	set_root(&w, t, new_root(&w, 0, r2, fa(t, 1)));
	t = add_thread(&w, 114);                                /* registered by the innermost */
	set_root(&w, t, new_root(&w, new_frame(&w, 0, pc_in("fx_async_a"), 0), 0, fa(t, 0)));

	t = add_thread(&w, 115);                                /* a chain past the bound */
	uint64_t parent = 0;
	for (int i = 0; i < 1100; i++)
		parent = new_frame(&w, parent, pc_in("fx_async_d"), 0);
	root_at_n2(&w, t, parent);

	t = add_thread(&w, 116);                                /* holder not in static TLS */
	uint64_t elsewhere = alloc(&w, 8);
	put(&w, t->entry + 8, elsewhere);
	put(&w, elsewhere, new_root(&w, new_frame(&w, 0, pc_in("fx_async_a"), 0), 0, fa(t, 2)));

	if (!CHECK(CASE("second-level key block: core opened"), splice(&w, &o)))
		return;
	CHECK(CASE("key read from the core"), o.an->async_key_found && o.an->async_key == 37);
	check_frames(CASE("roots nested as blockingWait nests them"), &o, 101,
		     "n0 n1 | a b | n4 | c | n7");
	const struct an_thread *th = thread(&o, 101);
	CHECK(CASE("the thread's root is recorded"), th && th->async_root != 0);
	check_untouched(CASE("holder holds no root"), &o, 102);
	check_untouched(CASE("empty pthread slot"), &o, 103);
	check_untouched(CASE("stale key sequence number"), &o, 104);
	check_frames(CASE("parentFrame cycle"), &o, 105, "n0 n1 | a b");
	check_warning(CASE("parentFrame cycle"), &o, 105, "repeats (parentFrame cycle)");
	check_frames(CASE("misaligned parentFrame"), &o, 106, "n0 n1 | a");
	check_warning(CASE("misaligned parentFrame"), &o, 106, "is misaligned; async stack cut");
	check_frames(CASE("unreadable parentFrame"), &o, 107, "n0 n1 | a");
	check_warning(CASE("unreadable parentFrame"), &o, 107, "0xdead0000 is not readable");
	check_frames(CASE("nextRoot cycle"), &o, 108, "n0 n1 | a");
	check_warning(CASE("nextRoot cycle"), &o, 108, "repeats (nextRoot cycle); stack cut there");
	check_frames(CASE("stackFramePtr on no frame"), &o, 109, "n0 n1 n2 n3 n4 n5 n6 n7");
	check_warning(CASE("stackFramePtr on no frame"), &o, 109, "matches no frame");
	check_untouched(CASE("misaligned holder"), &o, 110);
	check_warning(CASE("misaligned holder"), &o, 110, "is misaligned");
	check_warning(CASE("misaligned holder"), &o, 110, "static TLS puts it at");
	check_untouched(CASE("unreadable key block"), &o, 111);
	check_warning(CASE("unreadable key block"), &o, 111, "key block 0xbad0000 is not readable");
	check_frames(CASE("detached bottom frame"), &o, 112, "n0 n1 | a b");
	check_frames(CASE("a root with no frame passes to the next"), &o, 113, "n0 n1 n2 n3 | c");
	check_frames(CASE("root registered by the innermost frame"), &o, 114, "n0 | a");
	th = thread(&o, 115);
	CHECK(CASE("an endless chain is cut at 1024 async frames"), th && th->nframes == 2 + 1024);
	check_warning(CASE("an endless chain"), &o, 115, "more than 1024 async frames");
	check_frames(CASE("holder outside static TLS still followed"), &o, 116, "n0 n1 | a");
	check_warning(CASE("holder outside static TLS"), &o, 116, "static TLS puts it at");
	check_warning_count(CASE("second-level key block"), &o, 10);
#undef CASE
	outcome_free(&o);
}

/* ---- a key in the first block, and suspended chains ------------------- */

static void test_suspended(const char *fixture, const char *label, bool with_store)
{
	struct world w;
	struct outcome o;
	char what[128];
#define CASE(name) (snprintf(what, sizeof(what), "%s%s: %s", label, \
			     with_store ? " (leaf store)" : "", name), what)
	if (!CHECK(CASE("first key block: world laid out"), world_init(&w, fixture, 3)))
		return;
	struct thread_spec *t = add_thread(&w, 201);
	uint64_t r2 = new_root(&w, 0, 0, fa(t, 2));
	uint64_t b = new_frame(&w, 0, pc_in("fx_async_b"), r2);
	root_at_n2(&w, t, new_frame(&w, b, pc_in("fx_async_a"), 0));

	uint64_t cookie = alloc(&w, 8);
	put(&w, craft_fixture_symbol("__folly_suspended_frame_cookie"), cookie);
	uint64_t p1 = new_frame(&w, 0, pc_in("fx_async_d"), 0);
	uint64_t l1 = new_frame(&w, p1, pc_in("fx_async_c"), cookie);
	uint64_t l2 = new_frame(&w, 0, pc_in("fx_async_a"), cookie);
	uint64_t l3 = alloc(&w, sizeof(struct AsyncStackFrame));   /* its chain cycles */
	uint64_t p3 = new_frame(&w, l3, pc_in("fx_async_b"), 0);
	set_frame(&w, l3, p3, pc_in("fx_async_a"), cookie);
	new_frame(&w, 0, 0x1234, cookie);                  /* its pc is in no module */
	set_frame(&w, STACK + 0x100, 0, pc_in("fx_async_d"), cookie);  /* dead stack */
	uint64_t unmarked = new_frame(&w, 0, pc_in("fx_async_d"), 0);
	if (with_store) {
		/* std::unordered_set: before-begin next @16, count @24; node {next, value}. */
		uint64_t set = alloc(&w, 32), n1 = alloc(&w, 16), n2 = alloc(&w, 16);
		put(&w, craft_fixture_symbol("__folly_leaf_frame_store"), set);
		put(&w, set + 16, n1);
		put(&w, set + 24, 2);
		put(&w, n1, n2);
		put(&w, n1 + 8, l1);
		put(&w, n2, 0);
		put(&w, n2 + 8, unmarked);
	}
	if (!CHECK(CASE("first key block: core opened"), splice(&w, &o)))
		return;
	check_frames(CASE("key in the first block"), &o, 201, "n0 n1 | a b | n4 n5 n6 n7");
	char chains[3][256] = { "", "", "" };
	size_t n = o.an->nsuspended < 3 ? o.an->nsuspended : 3;
	for (size_t i = 0; i < n; i++) {
		const struct an_suspended *s = &o.an->suspended[i];
		size_t slot = s->leaf == l1 ? 0 : s->leaf == l2 ? 1 : s->leaf == l3 ? 2 : 3;
		if (slot < 3)
			describe_frames(s->frames, s->nframes, chains[slot], sizeof(chains[slot]));
	}
	if (with_store) {
		CHECK(CASE("the store lists the leaves"), o.an->nsuspended == 1);
		CHECK_STR(CASE("leaf from the store"), chains[0], "c d");
		check_warning(CASE("store entry without the cookie"), &o, 0,
			      "not a suspended frame");
		check_warning_count(CASE("leaf store"), &o, 1);
	} else {
		CHECK(CASE("three leaves found by the cookie"), o.an->nsuspended == 3);
		CHECK_STR(CASE("suspended chain of two"), chains[0], "c d");
		CHECK_STR(CASE("suspended leaf alone"), chains[1], "a");
		CHECK_STR(CASE("suspended chain with a cycle"), chains[2], "a b");
		check_warning(CASE("suspended chain with a cycle"), &o, 0,
			      "repeats or the chain is too long");
		check_warning_count(CASE("scan"), &o, 1);
	}
#undef CASE
	outcome_free(&o);
}

/* ---- keys that rule the walk out ---------------------------------------- */

static void test_keys(const char *fixture, const char *label)
{
	static const struct {
		uint32_t key;
		const char *name, *warning;
	} cases[] = {
		{ 0xffffffffu, "key never created", NULL },
		{ 5000, "key beyond PTHREAD_KEYS_MAX", "holds 5000, not a pthread key" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct world w;
		struct outcome o;
		char what[128];
		snprintf(what, sizeof(what), "%s: %s", label, cases[i].name);
		if (!CHECK(what, world_init(&w, fixture, cases[i].key)))
			continue;
		struct thread_spec *t = add_thread(&w, 301);
		root_at_n2(&w, t, new_frame(&w, 0, pc_in("fx_async_a"), 0));
		if (!CHECK(what, splice(&w, &o)))
			continue;
		CHECK(what, o.an->async_key_found && o.an->async_key == cases[i].key);
		check_untouched(what, &o, 301);
		if (cases[i].warning)
			check_warning(what, &o, 0, cases[i].warning);
		check_warning_count(what, &o, cases[i].warning ? 1 : 0);
		outcome_free(&o);
	}
}

static void run(const char *path, const char *name, bool debug)
{
	(void)debug;    /* both builds must give the same results */
	test_splice(path, name);
	test_suspended(path, name, false);
	test_suspended(path, name, true);
	test_keys(path, name);
}

int main(void)
{
	craft_each_fixture(run);
	return unit_exit();
}
