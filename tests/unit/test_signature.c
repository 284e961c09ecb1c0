/* Unit tests for analyzer/signature.c: normalisation, skip list, and the
 * "same place -> same signature, different place -> different" property. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void test_skip(void)
{
	CHECK("skip abort", an_signature_skipped("abort"));
	CHECK("skip __assert_fail", an_signature_skipped("__assert_fail"));
	CHECK("skip std::__throw_out_of_range", an_signature_skipped("std::__throw_out_of_range"));
	CHECK("skip __libc_start_call_main", an_signature_skipped("__libc_start_call_main"));
	CHECK("keep main", !an_signature_skipped("main"));
	CHECK("keep abort_handler", !an_signature_skipped("abort_handler"));
}

/* A one-thread analysis whose crashing stack is NAMES (innermost first);
 * a name starting with '@' is an async frame; pcs are offset by BASE. */
static void fill(struct analysis *an, struct an_thread *t, struct an_frame *frames,
		 const char *const *names, size_t n, uint64_t base)
{
	memset(an, 0, sizeof(*an));
	memset(t, 0, sizeof(*t));
	memset(frames, 0, n * sizeof(*frames));
	for (size_t i = 0; i < n; i++) {
		bool async = names[i][0] == '@';
		frames[i].kind = async ? AN_FRAME_ASYNC : AN_FRAME_NATIVE;
		frames[i].function = (char *)(async ? names[i] + 1 : names[i]);
		frames[i].pc = base + 0x100 * i;
		frames[i].module = (char *)"/usr/bin/prog";
	}
	t->tid = 42;
	t->crashing = true;
	t->frames = frames;
	t->nframes = n;
	an->threads = t;
	an->nthreads = 1;
	an->has_signal = true;
	an->signo = SIGSEGV;
	an->signo = SIGSEGV;
	an->signal_name = "SIGSEGV";
}

static void compute(const char *const *names, size_t n, uint64_t base, char **sig, char **hash)
{
	struct analysis an;
	struct an_thread t;
	struct an_frame frames[16];
	fill(&an, &t, frames, names, n, base);
	an_signature_compute(&an);
	*sig = an.signature;
	*hash = an.signature_hash;
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
	CHECK_STR("string", sa, "SIGSEGV: check_header < parse < @serve < main");
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

int main(void)
{
	test_normalize();
	test_skip();
	test_compute();
	CHECK("fnv1a test vector", an_signature_fnv1a("a") == 0xaf63dc4c8601ec8cULL &&
				    an_signature_fnv1a("") == 0xcbf29ce484222325ULL);
	return unit_exit();
}
