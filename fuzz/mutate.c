/* The mutation test over whole cores: damaged copies of real cores through
 * the analysis and the writers, in one process per chunk of mutants.
 *
 *   mutate [--seed S] [--count N] [--from K] [--time-limit SECONDS]
 *          [--save DIR] [--hot VADDR:LEN,...] [--runtimes FILE:FILE...]
 *          NAME=CORE...
 *
 * Mutant K (from K = --from on) is made from base core K % NBASES by kind
 * (K / NBASES) % NKINDS, with a random stream seeded by S and K:
 *   truncate      the file cut at a structure boundary (the ELF header, each
 *                 program header, each note's header, name and descriptor,
 *                 each PT_LOAD's start, middle and end), give or take a byte
 *   flip-notes    1-8 bytes of the notes flipped
 *   flip-headers  1-4 bytes of the ELF header and program headers flipped
 *   note-sizes    a note's namesz, descsz or type set to an edge value
 *   pointers      1-32 words of memory (near a thread's stack pointer, in
 *                 the base's --hot ranges (recorder rings, async roots), or
 *                 anywhere in a segment) set to pointer-like garbage: into
 *                 a segment (aligned or not), at its end, at the word
 *                 itself or the next one, NULL, all ones, small numbers
 *   zero          a range of the notes, of a hot range or of a segment zeroed
 * --hot names the ranges of the base that follows it; --runtimes the runtime
 * descriptions it is analysed with (its runtime's stacks are then damaged
 * too).  Each must end as `asyncore report` would end: analysed (exit 0, or
 * 1 with warnings) with a complete JSON document, a text report and an HTML
 * page, or unusable
 * (exit 2) with a one-line reason (one in MINICORE_EVERY analysed mutants
 * also through its minicore, which must be written and analysed as any
 * core); never a crash, a sanitizer report, a
 * leak, or a mutant that takes more than the time limit (in CPU time, or
 * ten times it in all).  The mutants run in
 * a child process per chunk, sharing its debug-info cache as an ingest
 * worker does; a child that dies or hangs names the mutant, which is saved
 * (--save) and the run goes on with the next one.  Exit status: 0 when every
 * mutant passed, 1 otherwise, 2 on a usage error. */
#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../corefile/minicore.h"
#include "../reports/report.h"
#include "patch.h"

#define MAX_BASES 16
#define CHUNK 250               /* mutants per child process */
#define MINICORE_EVERY 4        /* one mutant in that many is cut to its minicore too */

enum kind { K_TRUNCATE, K_FLIP_NOTES, K_FLIP_HEADERS, K_NOTE_SIZES, K_POINTERS, K_ZERO, NKINDS };
static const char *const kind_names[NKINDS] = {
	"truncate", "flip-notes", "flip-headers", "note-sizes", "pointers", "zero",
};

enum outcome { O_OK, O_WARNINGS, O_UNUSABLE, O_FAILED, NOUTCOMES };

/* A file range, and the address it holds for a PT_LOAD. */
struct span {
	uint64_t off, len, vaddr, memsz;
};

struct base {
	const char *name;
	struct an_runtimes *runtimes;   /* --runtimes, or NULL */
	struct fz_base core;
	uint64_t head_end;          /* the ELF header and program headers */
	struct span notes[8], loads[512];
	size_t nnotes, nloads;
	uint64_t note_headers[4096];
	size_t nnote_headers;
	uint64_t *bounds;           /* truncation points */
	size_t nbounds;
};

/* Counts kept across the children, in memory they share with the parent. */
struct shared {
	volatile uint64_t current;          /* the mutant running */
	volatile uint64_t started_ns;       /* when it started */
	volatile uint64_t started_cpu_ns;   /* the child's CPU time then */
	volatile uint64_t finished;         /* mutants done by the child */
	uint64_t outcomes[NOUTCOMES];
	uint64_t by_kind[NKINDS][NOUTCOMES];
	uint64_t slowest_ns, slowest;
	char failure[512];                  /* the child's last failure, for the parent */
};

static struct {
	uint64_t seed, from, count;
	unsigned time_limit;
	const char *save_dir;
	struct base bases[MAX_BASES];
	size_t nbases;
	struct shared *shared;
	FILE *devnull;
	uint64_t failures;
} g = {.seed = 1, .count = 1000, .time_limit = 20};

/* LeakSanitizer's check after each mutant, when the build has it. */
int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;
	if (clock_gettime(clock, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* splitmix64: one random stream per mutant, the same on every machine. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t *rng, uint64_t n)
{
	return n ? next_random(rng) % n : 0;
}

/* --- the layout of a base core ---------------------------------------- */

static void add_bound(struct base *b, uint64_t at)
{
	if (at == 0 || at >= b->core.size)
		return;
	uint64_t *p = realloc(b->bounds, (b->nbounds + 1) * sizeof(*p));
	if (!p)
		abort();
	b->bounds = p;
	b->bounds[b->nbounds++] = at;
}

static void index_notes(struct base *b, const struct span *n)
{
	const unsigned char *d = b->core.data;
	uint64_t off = n->off, end = n->off + n->len;
	while (end - off >= 12 && b->nnote_headers < sizeof(b->note_headers) / 8) {
		uint32_t nh[3];
		memcpy(nh, d + off, sizeof(nh));
		uint64_t name = off + 12, desc = name + ((nh[0] + 3ull) & ~3ull);
		uint64_t next = desc + ((nh[1] + 3ull) & ~3ull);
		b->note_headers[b->nnote_headers++] = off;
		add_bound(b, off);
		add_bound(b, name);
		add_bound(b, desc);
		add_bound(b, desc + nh[1]);
		if (next > end)
			break;
		off = next;
	}
}

static void index_base(struct base *b)
{
	Elf64_Ehdr eh;
	memcpy(&eh, b->core.data, sizeof(eh));
	b->head_end = eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize;
	add_bound(b, sizeof(eh));
	for (unsigned i = 0; i <= eh.e_phnum; i++)
		add_bound(b, eh.e_phoff + (uint64_t)i * eh.e_phentsize);
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, b->core.data + eh.e_phoff + (uint64_t)i * eh.e_phentsize, sizeof(ph));
		if (ph.p_offset > b->core.size || ph.p_filesz > b->core.size - ph.p_offset)
			continue;
		struct span s = {ph.p_offset, ph.p_filesz, ph.p_vaddr, ph.p_memsz};
		if (ph.p_type == PT_NOTE && b->nnotes < sizeof(b->notes) / sizeof(b->notes[0])) {
			b->notes[b->nnotes++] = s;
			index_notes(b, &s);
		}
		if (ph.p_type == PT_LOAD && b->nloads < sizeof(b->loads) / sizeof(b->loads[0])) {
			b->loads[b->nloads++] = s;
			add_bound(b, s.off);
			add_bound(b, s.off + s.len / 2);
			add_bound(b, s.off + s.len);
		}
	}
	add_bound(b, b->core.size - 1);
}

/* --- mutations --------------------------------------------------------- */

/* A file offset inside one of SPANS (weighted by length), or UINT64_MAX. */
static uint64_t pick_in(uint64_t *rng, const struct span *spans, size_t n, uint64_t len)
{
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += spans[i].len >= len ? spans[i].len - len + 1 : 0;
	if (total == 0)
		return UINT64_MAX;
	uint64_t k = below(rng, total);
	for (size_t i = 0; i < n; i++) {
		uint64_t room = spans[i].len >= len ? spans[i].len - len + 1 : 0;
		if (k < room)
			return spans[i].off + k;
		k -= room;
	}
	return UINT64_MAX;
}

static void flip_bytes(struct base *b, uint64_t *rng, const struct span *spans, size_t n,
		       unsigned max, char *desc, size_t dlen)
{
	unsigned count = 1 + (unsigned)below(rng, max);
	size_t used = (size_t)snprintf(desc, dlen, "%u bytes at", count);
	for (unsigned i = 0; i < count; i++) {
		uint64_t at = pick_in(rng, spans, n, 1);
		if (at == UINT64_MAX)
			return;
		unsigned char c = b->core.data[at] ^ (unsigned char)(1 + below(rng, 255));
		fz_base_write(&b->core, at, &c, 1);
		if (used < dlen)
			used += (size_t)snprintf(desc + used, dlen - used, " 0x%llx", (unsigned long long)at);
	}
}

static void note_sizes(struct base *b, uint64_t *rng, char *desc, size_t dlen)
{
	static const char *const fields[] = {"namesz", "descsz", "type"};
	if (b->nnote_headers == 0)
		return;
	uint64_t at = b->note_headers[below(rng, b->nnote_headers)];
	unsigned field = (unsigned)below(rng, 3);
	uint32_t old, v;
	memcpy(&old, b->core.data + at + 4 * field, 4);
	const uint32_t edges[] = {0, 1, 3, 4, old - 1, old + 1, old * 2, 0x7fffffff, 0xffffffff,
				  0xfffffff0, (uint32_t)next_random(rng)};
	v = edges[below(rng, sizeof(edges) / sizeof(edges[0]))];
	fz_base_write(&b->core, at + 4 * field, &v, 4);
	snprintf(desc, dlen, "note at 0x%llx %s 0x%x -> 0x%x", (unsigned long long)at, fields[field],
		 old, v);
}

/* A value that looks like a pointer, for the word at address WHERE. */
static uint64_t pointer_like(const struct base *b, uint64_t *rng, uint64_t where)
{
	const struct span *s = b->nloads ? &b->loads[below(rng, b->nloads)] : NULL;
	switch (below(rng, 10)) {
	case 0: return s ? s->vaddr + (below(rng, s->memsz) & ~7ull) : 0;
	case 1: return s ? s->vaddr + below(rng, s->memsz) : 1;   /* misaligned, mostly */
	case 2: return s ? s->vaddr + s->memsz : 0;              /* just past the end */
	case 3: return s ? s->vaddr + s->memsz - 8 : 0;
	case 4: return where;                                     /* a cycle of one */
	case 5: return where + 8;
	case 6: return 0;
	case 7: return ~0ull;
	case 8: return below(rng, 4096);
	default: return next_random(rng);
	}
}

/* The address of file offset OFF, or 0. */
static uint64_t address_of(const struct base *b, uint64_t off)
{
	for (size_t i = 0; i < b->nloads; i++)
		if (off >= b->loads[i].off && off - b->loads[i].off < b->loads[i].len)
			return b->loads[i].vaddr + (off - b->loads[i].off);
	return 0;
}

static void pointers(struct base *b, uint64_t *rng, char *desc, size_t dlen)
{
	unsigned count = 1 + (unsigned)below(rng, 32);
	unsigned written = 0;
	for (unsigned i = 0; i < count; i++) {
		uint64_t addr, room, off;
		unsigned where = (unsigned)below(rng, 3);
		if (where == 0 && b->core.nsps) {
			uint64_t sp = b->core.sps[below(rng, b->core.nsps)];
			addr = (sp - 256 + below(rng, 4096 + 256)) & ~7ull;
		} else if (where == 1 && b->core.nregions) {   /* the rings and roots (--hot) */
			const struct fz_region *r = &b->core.regions[below(rng, b->core.nregions)];
			addr = address_of(b, r->offset + below(rng, r->size)) & ~7ull;
		} else if (b->nloads) {
			const struct span *s = &b->loads[below(rng, b->nloads)];
			addr = s->vaddr + (below(rng, s->len ? s->len : 1) & ~7ull);
		} else {
			return;
		}
		int64_t at = fz_base_offset(&b->core, addr, &room);
		if (at < 0 || room < 8)
			continue;
		off = (uint64_t)at;
		uint64_t v = pointer_like(b, rng, addr);
		written += fz_base_write(&b->core, off, &v, 8);
	}
	snprintf(desc, dlen, "%u words", written);
}

static void zero_range(struct base *b, uint64_t *rng, char *desc, size_t dlen)
{
	static const unsigned char zeros[65536];
	uint64_t len = 1ull << below(rng, 17);
	len = len > 1 ? len / 2 + below(rng, len / 2) : 1;
	struct span hot[FZ_MAX_REGIONS];
	for (size_t i = 0; i < b->core.nregions; i++)
		hot[i] = (struct span){b->core.regions[i].offset, b->core.regions[i].size, 0, 0};
	unsigned where = (unsigned)below(rng, 3);
	bool in_notes = where == 0 || b->nloads == 0, in_hot = where == 1 && b->core.nregions;
	const struct span *spans = in_notes ? b->notes : in_hot ? hot : b->loads;
	size_t n = in_notes ? b->nnotes : in_hot ? b->core.nregions : b->nloads;
	uint64_t at;
	while ((at = pick_in(rng, spans, n, len)) == UINT64_MAX && len > 1)
		len /= 2;
	if (at == UINT64_MAX)
		return;
	fz_base_write(&b->core, at, zeros, len);
	snprintf(desc, dlen, "%llu bytes at 0x%llx (%s)", (unsigned long long)len,
		 (unsigned long long)at, in_notes ? "notes" : in_hot ? "hot range" : "memory");
}

/* Make mutant K in its base (restored by fz_base_restore()); describe it. */
static struct base *make_mutant(uint64_t k, enum kind *kind, char *desc, size_t dlen)
{
	struct base *b = &g.bases[k % g.nbases];
	uint64_t rng = g.seed * 0x9e3779b97f4a7c15u ^ k;
	struct span head = {0, b->head_end, 0, 0};
	*kind = (enum kind)(k / g.nbases % NKINDS);
	desc[0] = '\0';
	switch (*kind) {
	case K_TRUNCATE: {
		uint64_t at = b->bounds[below(&rng, b->nbounds)] + below(&rng, 3) - 1;
		fz_base_truncate(&b->core, at);
		snprintf(desc, dlen, "cut to %llu bytes", (unsigned long long)at);
		break;
	}
	case K_FLIP_NOTES:
		flip_bytes(b, &rng, b->notes, b->nnotes, 8, desc, dlen);
		break;
	case K_FLIP_HEADERS:
		flip_bytes(b, &rng, &head, 1, 4, desc, dlen);
		break;
	case K_NOTE_SIZES:
		note_sizes(b, &rng, desc, dlen);
		break;
	case K_POINTERS:
		pointers(b, &rng, desc, dlen);
		break;
	case K_ZERO:
		zero_range(b, &rng, desc, dlen);
		break;
	case NKINDS:
		break;
	}
	return b;
}

/* --- one mutant through the analysis and the writers -------------------- */

static const char *const required_members[] = {
	"asyncore_version", "core", "signal", "crashing_tid", "modules", "threads", "suspended",
	"tasks", "recorders", "timeline", "signature", "warnings",
};

/* The JSON document of AN is complete: it parses, with every member. */
static bool complete_json(const struct analysis *an, char *why, size_t whylen)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		abort();
	int rc = rep_json_write(f, an,
				&(struct rep_json_options){.all_threads = true, .frame_registers = true});
	fclose(f);
	json_error_t err;
	json_t *doc = rc == 0 ? json_loadb(text, len, 0, &err) : NULL;
	bool ok = doc != NULL;
	if (rc != 0)
		snprintf(why, whylen, "the JSON writer failed");
	else if (!doc)
		snprintf(why, whylen, "the JSON document does not parse: %s", err.text);
	for (size_t i = 0; ok && i < sizeof(required_members) / sizeof(required_members[0]); i++)
		if (!json_object_get(doc, required_members[i])) {
			snprintf(why, whylen, "the JSON document lacks \"%s\"", required_members[i]);
			ok = false;
		}
	json_decref(doc);
	free(text);
	return ok;
}

/* Analyse the core at PATH (recording its reads when RECORD) and check the
 * writers; *CORE_OUT (when not NULL) keeps the open core for a minicore. */
static enum outcome analyse_path(const char *path, struct base *b, struct dbg_cache *cache,
				 struct core **core_out, char *fingerprint, char *why, size_t whylen)
{
	struct an_options opts = {.runtimes = b->runtimes};
	struct analysis *an = NULL;
	struct core *core = NULL;
	struct core_identity id;
	struct core_error *err = core_open(path, &core);
	if (!err) {
		core_identity(core, &id);
		if (core_out)
			err = core_record_start(core);
		if (!err)
			err = an_analyze(core, &id, &opts, cache, &an);
	}
	if (!err && core_out) {
		*core_out = core;
		snprintf(fingerprint, 65, "%s", id.fingerprint);
	} else {
		core_close(core);
	}
	if (err) {
		bool one_line = err->message[0] && !strchr(err->message, '\n');
		if (!one_line)
			snprintf(why, whylen, "unusable without a one-line reason: '%.400s'", err->message);
		core_error_destroy(err);
		return one_line ? O_UNUSABLE : O_FAILED;
	}
	enum outcome o = an->nwarnings ? O_WARNINGS : O_OK;
	struct rep_text_options text = {.all_threads = true, .recorder_tail = 50, .source = true};
	struct rep_html_options html = {.all_threads = true, .source = true};
	if (!complete_json(an, why, whylen))
		o = O_FAILED;
	else if (rep_text_write(g.devnull, an, &text) != 0) {
		snprintf(why, whylen, "the text writer failed");
		o = O_FAILED;
	} else if (rep_html_write(g.devnull, an, &html) != 0 || fflush(g.devnull) != 0) {
		snprintf(why, whylen, "the HTML writer failed");
		o = O_FAILED;
	}
	an_analysis_destroy(an);
	return o;
}

/* The minicore of a mutant CORE (analysed, recording) must be written,
 * and analysed in turn as any core is. */
static enum outcome check_minicore(struct core *core, const char *fingerprint, struct base *b,
				   struct dbg_cache *cache, char *why, size_t whylen)
{
	char path[64];
	snprintf(path, sizeof(path), "/tmp/asyncore-mutate-%d.minicore", (int)getpid());
	struct core_error *err = core_minicore_save(core, fingerprint, path, NULL, NULL);
	core_close(core);
	if (err) {
		snprintf(why, whylen, "the minicore could not be written: %.400s", err->message);
		core_error_destroy(err);
		return O_FAILED;
	}
	enum outcome o = analyse_path(path, b, cache, NULL, NULL, why, whylen);
	unlink(path);
	if (o == O_UNUSABLE) {
		snprintf(why, whylen, "the minicore of an analysed core is unusable");
		o = O_FAILED;
	}
	return o;
}

/* Mutant B through the analysis and the writers; every MINICORE_EVERY-th
 * also through its minicore (MINICORE). */
static enum outcome analyse(struct base *b, struct dbg_cache *cache, bool minicore, char *why,
			    size_t whylen)
{
	char path[64], fingerprint[65] = "";
	struct core *core = NULL;
	enum outcome o = analyse_path(fz_base_path(&b->core, path, sizeof(path)), b, cache,
				      minicore ? &core : NULL, fingerprint, why, whylen);
	if (!core)
		return o;
	enum outcome m = check_minicore(core, fingerprint, b, cache, why, whylen);
	return m == O_FAILED ? m : o;
}

static void describe(uint64_t k, char *buf, size_t len)
{
	enum kind kind;
	char desc[256];
	struct base *b = make_mutant(k, &kind, desc, sizeof(desc));
	fz_base_restore(&b->core);
	snprintf(buf, len, "mutant %llu (%s, %s: %s)", (unsigned long long)k, b->name,
		 kind_names[kind], desc);
}

/* The child: mutants FIRST..END in turn. */
static void run_chunk(uint64_t first, uint64_t end)
{
	struct shared *s = g.shared;
	struct dbg_cache *cache = dbg_cache_create();
	for (uint64_t k = first; k < end; k++) {
		enum kind kind;
		char desc[256], why[512] = "";
		s->current = k;
		s->started_cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
		s->started_ns = now_ns();
		struct base *b = make_mutant(k, &kind, desc, sizeof(desc));
		enum outcome o = analyse(b, cache, k % MINICORE_EVERY == 0, why, sizeof(why));
		fz_base_restore(&b->core);
		if (__lsan_do_recoverable_leak_check && __lsan_do_recoverable_leak_check()) {
			snprintf(why, sizeof(why), "memory leaked (LeakSanitizer's report above)");
			o = O_FAILED;
		}
		uint64_t took = now_ns() - s->started_ns;
		if (took > s->slowest_ns) {
			s->slowest_ns = took;
			s->slowest = k;
		}
		s->outcomes[o]++;
		s->by_kind[kind][o]++;
		if (o == O_FAILED) {
			snprintf(s->failure, sizeof(s->failure), "%s", why);
			fflush(NULL);
			_exit(3);   /* the parent names the mutant and goes on */
		}
		s->finished = k + 1;
	}
	dbg_cache_destroy(cache);
	fflush(NULL);
	_exit(0);
}

/* --- the parent ------------------------------------------------------- */

static void save_mutant(uint64_t k)
{
	enum kind kind;
	char desc[256], path[4096];
	if (!g.save_dir)
		return;
	struct base *b = make_mutant(k, &kind, desc, sizeof(desc));
	snprintf(path, sizeof(path), "%s/mutant-%llu-%s-%s.core", g.save_dir, (unsigned long long)k,
		 b->name, kind_names[kind]);
	uint64_t size = b->core.truncated ? b->core.truncated : b->core.size;
	unsigned char *copy = malloc(size ? size : 1);
	FILE *f = fopen(path, "wb");
	if (copy && f && pread(b->core.fd, copy, size, 0) == (ssize_t)size &&
	    fwrite(copy, 1, size, f) == size)
		fprintf(stderr, "mutate: saved as %s\n", path);
	if (f)
		fclose(f);
	free(copy);
	fz_base_restore(&b->core);
}

static void report_failure(uint64_t k, const char *what)
{
	char buf[512];
	describe(k, buf, sizeof(buf));
	fprintf(stderr, "mutate: FAIL %s: %s\n", buf, what);
	fprintf(stderr, "mutate: rerun it: mutate --seed %llu --from %llu --count 1 ...\n",
		(unsigned long long)g.seed, (unsigned long long)k);
	save_mutant(k);
	g.failures++;
}

/* Run mutants FIRST..END in one child; returns where the next child starts. */
static uint64_t supervise_chunk(uint64_t first, uint64_t end)
{
	struct shared *s = g.shared;
	s->current = first;
	s->finished = first;
	s->started_ns = now_ns();
	s->failure[0] = '\0';
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		perror("mutate: fork");
		exit(2);
	}
	if (pid == 0)
		run_chunk(first, end);
	/* A mutant hangs when it has used the time limit in CPU time (a loop),
	 * or ten times the limit in wall time (a wait); on a machine shared with
	 * busier processes, wall time alone would blame a mutant for waiting
	 * its turn. */
	clockid_t cpu_clock;
	bool has_cpu_clock = clock_getcpuclockid(pid, &cpu_clock) == 0;
	uint64_t limit = (uint64_t)g.time_limit * 1000000000u, cpu = 0, wall = 0;
	int status;
	bool hung = false;
	while (waitpid(pid, &status, WNOHANG) == 0) {
		uint64_t cpu_start = s->started_cpu_ns, wall_start = s->started_ns;
		uint64_t cpu_now = has_cpu_clock ? clock_ns(cpu_clock) : 0;
		cpu = cpu_now > cpu_start ? cpu_now - cpu_start : 0;
		wall = now_ns() - wall_start;
		if (!hung && (cpu > limit || wall > 10 * limit)) {
			hung = true;
			kill(pid, SIGKILL);
		}
		usleep(2000);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return end;
	uint64_t k = s->current;
	char what[600];
	if (hung) {
		snprintf(what, sizeof(what), "no result after %.1f s of CPU time, %.1f s in all",
			 (double)cpu / 1e9, (double)wall / 1e9);
	} else if (WIFSIGNALED(status)) {
		snprintf(what, sizeof(what), "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	} else if (WEXITSTATUS(status) == 3) {
		snprintf(what, sizeof(what), "%s", s->failure);
	} else {
		snprintf(what, sizeof(what), "exited with status %d (a sanitizer's report above?)",
			 WEXITSTATUS(status));
	}
	if (hung || WIFSIGNALED(status) || WEXITSTATUS(status) != 3) {
		s->outcomes[O_FAILED]++;
		s->by_kind[k / g.nbases % NKINDS][O_FAILED]++;
	}
	/* The child may have died with a mutant in place. */
	for (size_t i = 0; i < g.nbases; i++)
		fz_base_reset(&g.bases[i].core);
	report_failure(k, what);
	return k + 1;
}

static void print_summary(double secs)
{
	const struct shared *s = g.shared;
	uint64_t total = 0;
	for (int o = 0; o < NOUTCOMES; o++)
		total += s->outcomes[o];
	printf("mutate: %llu mutants of %zu cores (seed %llu) in %.1f s: %llu analysed (exit 0), "
	       "%llu with warnings (exit 1), %llu unusable with a reason (exit 2), %llu failed; "
	       "slowest %.2f s (mutant %llu)\n",
	       (unsigned long long)total, g.nbases, (unsigned long long)g.seed, secs,
	       (unsigned long long)s->outcomes[O_OK], (unsigned long long)s->outcomes[O_WARNINGS],
	       (unsigned long long)s->outcomes[O_UNUSABLE], (unsigned long long)s->outcomes[O_FAILED],
	       (double)s->slowest_ns / 1e9, (unsigned long long)s->slowest);
	for (int k = 0; k < NKINDS; k++)
		printf("mutate:   %-12s exit 0: %llu, exit 1: %llu, exit 2: %llu, failed: %llu\n",
		       kind_names[k], (unsigned long long)s->by_kind[k][O_OK],
		       (unsigned long long)s->by_kind[k][O_WARNINGS],
		       (unsigned long long)s->by_kind[k][O_UNUSABLE],
		       (unsigned long long)s->by_kind[k][O_FAILED]);
}

static bool parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--seed") == 0 && v)
			g.seed = strtoull(argv[++i], NULL, 0);
		else if (strcmp(a, "--count") == 0 && v)
			g.count = strtoull(argv[++i], NULL, 0);
		else if (strcmp(a, "--from") == 0 && v)
			g.from = strtoull(argv[++i], NULL, 0);
		else if (strcmp(a, "--time-limit") == 0 && v)
			g.time_limit = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (strcmp(a, "--save") == 0 && v)
			g.save_dir = argv[++i];
		else if (strcmp(a, "--hot") == 0 && v)
			setenv("ASYNCORE_FUZZ_HOT", argv[++i], 1);   /* for the next base */
		else if (strcmp(a, "--runtimes") == 0 && v)
			setenv("ASYNCORE_FUZZ_RUNTIMES", argv[++i], 1);   /* for the next base */
		else if (a[0] != '-' && strchr(a, '=') && g.nbases < MAX_BASES) {
			struct base *b = &g.bases[g.nbases++];
			char *eq = strchr(argv[i], '=');
			*eq = '\0';
			b->name = argv[i];
			fz_base_load(&b->core, eq + 1, FZ_REGION_HOT);
			b->runtimes = fz_runtimes_from_env("mutate");
			unsetenv("ASYNCORE_FUZZ_HOT");
			unsetenv("ASYNCORE_FUZZ_RUNTIMES");
			index_base(b);
			if (b->nbounds == 0) {
				fprintf(stderr, "mutate: %s: no structure to cut at\n", eq + 1);
				return false;
			}
		} else {
			return false;
		}
	}
	return g.nbases > 0 && g.time_limit > 0;
}

int main(int argc, char **argv)
{
	setenv("ASYNCORE_CACHE_DIR", "", 1);
	if (!parse_args(argc, argv)) {
		fprintf(stderr, "usage: mutate [--seed S] [--count N] [--from K] [--time-limit SECONDS] "
				"[--save DIR] [--hot VADDR:LEN,...] [--runtimes FILE:FILE...] NAME=CORE...\n");
		return 2;
	}
	g.devnull = fopen("/dev/null", "w");
	g.shared = mmap(NULL, sizeof(*g.shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			-1, 0);
	if (!g.devnull || g.shared == MAP_FAILED) {
		perror("mutate");
		return 2;
	}
	uint64_t start = now_ns(), end = g.from + g.count;
	for (uint64_t k = g.from; k < end;) {
		uint64_t chunk_end = k + CHUNK < end ? k + CHUNK : end;
		k = supervise_chunk(k, chunk_end);
	}
	print_summary((double)(now_ns() - start) / 1e9);
	return g.failures ? 1 : 0;
}
