/* Unit tests for analyzer/display: readable names of GCC's coroutine
 * clones (names as `nm -C` shows them for g++ 12 -std=c++20). */
#include "../../analyzer/display.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNIT_GROUP "display"
#include "unit.h"

/* WANT NULL: the function reads as written (no display name). */
static void expect(const char *function, const char *want)
{
	char *got = an_display_name(function);
	const char *name = want ? want : function ? function : "(null)";
	if (want)
		CHECK_STR(name, got, want);
	else if (!CHECK(name, got == NULL))
		printf("    got \"%s\"\n", got);
	free(got);
}

int main(void)
{
	expect("handle_order(handle_order(Order)::_Z12handle_order5Order.Frame*) [clone .actor]",
	       "handle_order(Order) [coroutine]");
	expect("handle_order(handle_order(Order)::_Z12handle_order5Order.Frame*) [clone .destroy]",
	       "handle_order(Order) [coroutine destroy]");
	expect("ns::Svc::handle(ns::Svc::handle(int)::_ZN2ns3Svc6handleEi.Frame*) [clone .actor]",
	       "ns::Svc::handle(int) [coroutine]");
	expect("ns::Svc::tmpl(ns::Svc::tmpl<long>(long) const::_ZNK2ns3Svc4tmplIlEE4taskT_.Frame*) "
	       "[clone .actor]", "ns::Svc::tmpl<long>(long) const [coroutine]");
	expect("gen(gen<int>(int)::_Z3genIiE4taskT_.Frame*) [clone .actor]", "gen<int>(int) [coroutine]");
	expect("ns::(anonymous namespace)::anon(ns::(anonymous namespace)::anon()::"
	       "_ZN2ns12_GLOBAL__N_14anonEv.Frame*) [clone .actor]",
	       "ns::(anonymous namespace)::anon() [coroutine]");
	expect("main::{lambda(int)#1}::operator()(main::{lambda(int)#1}::operator()(int) const::"
	       "_ZZ4mainENKUliE_clEi.Frame*) [clone .actor]",
	       "main::{lambda(int)#1}::operator()(int) const [coroutine]");
	expect("ns::free_fn(ns::free_fn(int, double)::_ZN2ns7free_fnEid.Frame*) [clone .actor] "
	       "[clone .cold]", "ns::free_fn(int, double) [coroutine] [clone .cold]");
	expect("f(f(void (*)(int))::_Z1fPFviE.Frame*) [clone .actor]", "f(void (*)(int)) [coroutine]");
	/* Not coroutine clones: left as they are. */
	expect("handle_order(Order)", NULL);
	expect("foo(int) [clone .isra.0]", NULL);
	expect("foo(int) [clone .actor]", NULL);
	expect("foo(bar.Frame*) [clone .actor]", NULL);
	expect("(::_Z.Frame*) [clone .actor]", NULL);
	expect("x) [clone .actor]", NULL);
	expect(" [clone .actor]", NULL);
	expect("", NULL);
	expect(NULL, NULL);
	return unit_exit();
}
