/* Unit tests for analyzer/signature.c: normalisation, skip list, and the
 * "same place -> same signature, different place -> different" property. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../analyzer/signature.h"

#define UNIT_GROUP "signature"
#include "unit.h"

static void test_normalize(void)
{
	static const char *const cases[][2] = {
		{"main", "main"},
		{"crash_here.isra.0", "crash_here"},
		{"parse.cold", "parse"},
		{"foo(int, char*)", "foo"},
		{"void (anonymous namespace)::Foo<int, std::vector<int> >::bar<char>(int) const [clone .cold]",
		 "Foo::bar"},
		{"std::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_create(unsigned long&, unsigned long)",
		 "std::basic_string::_M_create"},
		{"Widget::operator()(int) const", "Widget::operator()"},
		{"bool operator< <int>(int const&, int const&)", "operator<"},
		{"std::ostream& operator<<(std::ostream&, Foo const&)", "operator<<"},
		{"Foo::operator->()", "Foo::operator->"},
		{"operator new(unsigned long)", "operator new"},
		{"operator delete[](void*)", "operator delete[]"},
		{"run(int)::{lambda(int)#2}::operator()(int) const", "run::{lambda}::operator()"},
		{"{anonymous}::helper()", "helper"},
		{"std::vector<int>::at[abi:cxx11](unsigned long) &&", "std::vector::at"},
		{"folly::coro::Task<int> (anonymous namespace)::leaf(int) [clone .resume]", "leaf"},
		{"__GI___assert_fail", "__assert_fail"},
		{"__memmove_avx_unaligned_erms", "memmove"},
		{"__strlen_evex", "strlen"},
		{"__strcasecmp_l_avx2", "strcasecmp_l"},
		{"__memset_erms", "memset"},
		{"__avx_helper", "__avx_helper"},
		{"main::settle::<main::main::{closure#2}::{closure#0}>", "main::settle"},
		{"main::settle<main::main::{closure#2}::{closure_env#0}>", "main::settle"},
		{"<main::Ledger>::debit", "main::Ledger::debit"},
		{"<alloc::boxed::Box<dyn core::ops::function::FnOnce<(), Output = ()>> as "
		 "core::ops::function::FnOnce<()>>::call_once", "alloc::boxed::Box::call_once"},
		{"sync.(*Mutex).Lock", "sync.(*Mutex).Lock"},
		{"internal/poll.(*FD).Read", "internal/poll.(*FD).Read"},
		{"main.start.func3", "main.start.func3"},
		{"type..eq.[2]interface {}", "type..eq.[2]interface {}"},
		{"", "??"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = an_signature_normalize(cases[i][0]);
		char name[64];
		snprintf(name, sizeof(name), "normalize %zu", i);
		CHECK_STR(name, got, cases[i][1]);
		free(got);
	}
}

/* The built-in lists: whole-name matches of each list's entries. */
static void test_default_lists(void)
{
	static const struct {
		enum an_siglist list;
		const char *name;
		bool listed;
	} cases[] = {
		{AN_SIGLIST_SKIP, "abort", true},
		{AN_SIGLIST_SKIP, "__assert_fail", true},
		{AN_SIGLIST_SKIP, "std::__throw_out_of_range", true},
		{AN_SIGLIST_SKIP, "__libc_start_call_main", true},
		{AN_SIGLIST_SKIP, "main", false},
		{AN_SIGLIST_SKIP, "abort_handler", false},
		{AN_SIGLIST_SKIP, "std::panicking::panic_with_hook", true},
		{AN_SIGLIST_SKIP, "core::panicking::panic_fmt", true},
		{AN_SIGLIST_SKIP, "__rustc::rust_begin_unwind", true},
		{AN_SIGLIST_SKIP, "main::Ledger::debit", false},
		{AN_SIGLIST_PREFIX, "memcpy", true},
		{AN_SIGLIST_PREFIX, "strlen", true},
		{AN_SIGLIST_PREFIX, "__memcpy_evex_unaligned_erms", true},
		{AN_SIGLIST_PREFIX, "__strlen_avx2", true},
		{AN_SIGLIST_PREFIX, "operator new", true},
		{AN_SIGLIST_PREFIX, "operator new[]", true},
		{AN_SIGLIST_PREFIX, "__memcpy_chk", true},
		{AN_SIGLIST_PREFIX, "strlen_of_header", false},
		{AN_SIGLIST_PREFIX, "main", false},
	};
	const struct an_signature_lists *l = an_signature_lists_default();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[96];
		snprintf(name, sizeof(name), "%s %s%s", an_signature_list_name(cases[i].list),
			 cases[i].listed ? "" : "not ", cases[i].name);
		CHECK(name, an_signature_lists_match(l, cases[i].list, cases[i].name) == cases[i].listed);
	}
}

/* A one-thread analysis whose crashing stack is NAMES (innermost first);
 * a name starting with '@' is an async frame, "" a frame without a
 * function (named by module and offset); pcs are offset by BASE. */
static void fill(struct analysis *an, struct an_thread *t, struct an_frame *frames,
		 const char *const *names, size_t n, uint64_t base)
{
	memset(an, 0, sizeof(*an));
	memset(t, 0, sizeof(*t));
	memset(frames, 0, n * sizeof(*frames));
	for (size_t i = 0; i < n; i++) {
		bool async = names[i][0] == '@';
		frames[i].kind = async ? AN_FRAME_ASYNC : AN_FRAME_NATIVE;
		frames[i].function = names[i][0] ? (char *)(async ? names[i] + 1 : names[i]) : NULL;
		frames[i].pc = base + 0x100 * i;
		frames[i].module = (char *)"/usr/bin/prog";
		frames[i].module_offset = 0x100 * i + 0x40;
		frames[i].has_module_offset = true;
	}
	t->tid = 42;
	t->crashing = true;
	t->frames = frames;
	t->nframes = n;
	an->threads = t;
	an->nthreads = 1;
	an->has_signal = true;
	an->signo = SIGSEGV;
	an->signal_name = "SIGSEGV";
}

static void compute_with(const char *const *names, size_t n, uint64_t base,
			 const struct an_signature_lists *lists, char **sig, char **hash)
{
	struct analysis an;
	struct an_thread t;
	struct an_frame frames[16];
	fill(&an, &t, frames, names, n, base);
	an_signature_compute(&an, lists);
	*sig = an.signature;
	*hash = an.signature_hash;
}

static void compute(const char *const *names, size_t n, uint64_t base, char **sig, char **hash)
{
	compute_with(names, n, base, NULL, sig, hash);
}

static void test_compute(void)
{
	static const char *const a[] = {"raise", "abort", "__assert_fail", "check_header(char const*)",
					"parse<int>(int)", "parse<int>(int)", "@(anonymous namespace)::serve()",
					"main", "__libc_start_call_main", "_start"};
	static const char *const b[] = {"check_body(char const*)", "parse<int>(int)", "main"};
	char *sa, *ha, *sa2, *ha2, *sb, *hb;
	compute(a, 10, 0x555555554000, &sa, &ha);
	compute(a, 10, 0x7f0000001000, &sa2, &ha2);
	compute(b, 3, 0x555555554000, &sb, &hb);
	CHECK_STR("string", sa, "SIGSEGV: check_header < parse < serve < main");
	CHECK("hash is 16 hex digits", ha && strlen(ha) == 16 && strspn(ha, "0123456789abcdef") == 16);
	CHECK("same place, other addresses: same hash", ha && ha2 && strcmp(ha, ha2) == 0);
	CHECK("different place: different hash", ha && hb && strcmp(ha, hb) != 0);
	free(sa); free(ha); free(sa2); free(ha2); free(sb); free(hb);

	static const char *const c[] = {"raise", "abort"};
	char *sc, *hc;
	compute(c, 2, 0x1000, &sc, &hc);
	CHECK_STR("nothing left", sc, "SIGSEGV: (no frames)");
	free(sc); free(hc);
}

/* How a frame was found is not in the bucket: a coroutine body on the stack
 * in one build, through its async chain in another (and both ways in a
 * third) signs alike. */
static void test_async_same_bucket(void)
{
	static const char *const native[] = {"crashHere", "leafCallee", "innerLeaf", "innerMid", "innerTop"};
	static const char *const async[] = {"crashHere", "leafCallee", "innerLeaf", "@innerMid", "@innerTop"};
	static const char *const both[] = {"crashHere", "leafCallee", "innerLeaf", "innerMid", "@innerMid",
					   "@innerTop"};
	char *s1, *h1, *s2, *h2, *s3, *h3;
	compute(native, 5, 0x1000, &s1, &h1);
	compute(async, 5, 0x1000, &s2, &h2);
	compute(both, 6, 0x1000, &s3, &h3);
	CHECK_STR("async: no mark", s2, "SIGSEGV: crashHere < leafCallee < innerLeaf < innerMid < innerTop");
	CHECK("async or native: one hash", h1 && h2 && h3 && !strcmp(h1, h2) && !strcmp(h1, h3));
	free(s1); free(h1); free(s2); free(h2); free(s3); free(h3);
}

/* A recursion's signature from the frames kept around its cut
 * (collapsed_at): the cycle rotated to end where it was entered, and the
 * entering frame, whatever frame the stack ran out in. */
static void sign_cut(const char *const *names, size_t n, size_t at, char **sig, char **hash)
{
	struct an_frame frames[16];
	struct analysis an;
	struct an_thread t;
	fill(&an, &t, frames, names, n, 0x1000);
	struct an_signature_input in = {.has_signal = true, .signo = SIGSEGV, .signal_name = "SIGSEGV",
					.frames = frames, .nframes = n, .collapsed_at = at};
	if (an_signature_of(&in, NULL, sig, hash) != 0)
		*sig = *hash = NULL;
}

static void test_recursion(void)
{
	/* ran out in ping, in pong, and in memset called from pong */
	static const char *const a[] = {"ping", "pong", "ping", "pong", "ping", "pong", "ping", "start", "main"};
	static const char *const b[] = {"pong", "ping", "pong", "ping", "pong", "ping", "pong", "ping", "start",
					"main"};
	static const char *const c[] = {"__memset_avx2_unaligned_erms", "pong", "ping", "pong", "ping",
					"pong", "ping", "start", "main"};
	static const char *const d[] = {"descend", "descend", "descend", "descend", "run", "main"};
	char *sa, *ha, *sb, *hb, *sc, *hc, *sd, *hd, *se, *he;
	sign_cut(a, 9, 5, &sa, &ha);
	sign_cut(b, 10, 4, &sb, &hb);
	sign_cut(c, 9, 5, &sc, &hc);
	sign_cut(d, 6, 2, &sd, &hd);
	sign_cut(a, 9, 0, &se, &he);
	CHECK_STR("recursion: cycle and entering frame", sa, "SIGSEGV: recursion pong < ping, entered from start");
	CHECK("recursion: same at another depth", ha && hb && !strcmp(ha, hb));
	CHECK("recursion: same whatever frame ran out", ha && hc && !strcmp(ha, hc));
	CHECK_STR("recursion: direct", sd, "SIGSEGV: recursion descend, entered from run");
	CHECK("recursion: no cut, no recursion signature", se && !strstr(se, "recursion"));
	free(sa); free(ha); free(sb); free(hb); free(sc); free(hc); free(sd); free(hd); free(se); free(he);
}

/* Frames without a function: module@0xOFFSET, whatever the load address. */
static void test_stripped(void)
{
	static const char *const a[] = {"", "", "main"};
	char *s1, *h1, *s2, *h2;
	compute(a, 3, 0x555555554000, &s1, &h1);
	compute(a, 3, 0x7f1234560000, &s2, &h2);
	CHECK_STR("module@offset", s1, "SIGSEGV: prog@0x40 < prog@0x140 < main");
	CHECK("module@offset: same hash at another base", h1 && h2 && strcmp(h1, h2) == 0);
	free(s1); free(h1); free(s2); free(h2);

	struct an_frame f = {.pc = 0x1234};
	char *name = an_signature_frame_name(&f);
	CHECK_STR("no module: ??", name, "??");
	free(name);
}

/* Prefix-list frames do not use the frame budget. */
static void test_prefix(void)
{
	static const char *const a[] = {"__memcpy_evex_unaligned_erms", "f1", "f2", "f3", "f4",
					"f5", "f6"};
	static const char *const b[] = {"__memcpy_avx_unaligned_erms", "f1", "f2", "f3", "f4",
					"f5", "f6"};
	char *sa, *ha, *sb, *hb;
	compute(a, 7, 0x1000, &sa, &ha);
	compute(b, 7, 0x1000, &sb, &hb);
	CHECK_STR("prefix frame kept, callers counted", sa,
		  "SIGSEGV: memcpy < f1 < f2 < f3 < f4 < f5");
	CHECK("cpu variants: one bucket", ha && hb && strcmp(ha, hb) == 0);
	free(sa); free(ha); free(sb); free(hb);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* Lists from files: @defaults, comments, an added entry, a bad one. */
static void test_list_files(void)
{
	char dir[] = "/tmp/siglists-XXXXXX", path[64], why[256] = "";
	struct an_signature_lists *l = NULL;
	if (!mkdtemp(dir)) {
		CHECK("mkdtemp", false);
		return;
	}
	snprintf(path, sizeof(path), "%s/skip", dir);
	write_file(path, "# frames our handler adds\n\n@defaults\n  log_and_die  \nprog@0x(40|140)\n");
	CHECK("load", an_signature_lists_load(dir, &l, why, sizeof(why)) == 0);
	CHECK("file entry", an_signature_lists_match(l, AN_SIGLIST_SKIP, "log_and_die"));
	CHECK("@defaults kept", an_signature_lists_match(l, AN_SIGLIST_SKIP, "abort"));
	CHECK("missing prefix file: defaults", an_signature_lists_match(l, AN_SIGLIST_PREFIX, "memcpy"));
	static const char *const a[] = {"", "", "main"};
	char *s, *h;
	compute_with(a, 3, 0x1000, l, &s, &h);
	CHECK_STR("entry skips module@offset frames", s, "SIGSEGV: main");
	free(s); free(h);
	an_signature_lists_destroy(l);

	snprintf(path, sizeof(path), "%s/prefix", dir);
	write_file(path, "memcpy\nbad(\n");
	l = NULL;
	CHECK("bad expression refused", an_signature_lists_load(dir, &l, why, sizeof(why)) != 0 && !l);
	CHECK("reason names file and line", strstr(why, "/prefix:2: ") != NULL);
	remove(path);
	snprintf(path, sizeof(path), "%s/skip", dir);
	remove(path);
	rmdir(dir);
	CHECK("missing directory refused", an_signature_lists_load(dir, &l, why, sizeof(why)) != 0);
}

int main(void)
{
	test_normalize();
	test_default_lists();
	test_compute();
	test_stripped();
	test_async_same_bucket();
	test_recursion();
	test_prefix();
	test_list_files();
	CHECK("fnv1a test vector", an_signature_fnv1a("a") == 0xaf63dc4c8601ec8cULL &&
				    an_signature_fnv1a("") == 0xcbf29ce484222325ULL);
	return unit_exit();
}
