/* Unit tests for dwarf/demangle.c and the function-part names of
 * dwarf/funcstart.c: names as gdb shows them.  The Rust symbols are from a
 * real rustc 1.95 build of fixtures/rust (legacy and v0 mangling), the
 * C++ ones from g++ 12. */
#include "../../dwarf/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNIT_GROUP "demangle"
#include "unit.h"

static void expect(const char *symbol, const char *want)
{
	char *got = dbg_demangle(symbol);
	CHECK_STR(symbol, got, want);
	free(got);
}

static void expect_part(const char *symbol, const char *whole)
{
	char name[256];
	snprintf(name, sizeof(name), "part of %s", symbol);
	size_t n = dbg_symbol_part_base(symbol);
	CHECK(name, n == strlen(whole) && strncmp(symbol, whole, n) == 0);
}

int main(void)
{
	/* C++: as libstdc++'s __cxa_demangle printed them before. */
	expect("_ZNSt6vectorIiSaIiEE9push_backERKi",
	       "std::vector<int, std::allocator<int> >::push_back(int const&)");
	expect("_ZN6ledger4Book4postEPNS_5EntryEPKc.cold",
	       "ledger::Book::post(ledger::Entry*, char const*) [clone .cold]");
	expect("_ZN2ns4postEPNS_1AEPKc.isra.0", "ns::post(ns::A*, char const*) [clone .isra.0]");
	expect("_ZN2ns4postEPNS_1AEPKc.llvm.123", "ns::post(ns::A*, char const*)");
	expect("_Z3foov@@VERS_1.2", "foo()");
	expect("memcpy@@GLIBC_2.14", "memcpy");
	expect("post_entry.cold", "post_entry.cold");
	expect("_Zinvalid", "_Zinvalid");
	expect("_R", "_R");
	/* Rust legacy: the hash dropped, as gdb; an LLVM suffix too. */
	expect("_ZN4main6Ledger5debit17ha10e68c1ae6c3d53E", "main::Ledger::debit");
	expect("_ZN3std3sys12thread_local6native4lazy7destroy17haf9582959568618eE.llvm.5773679738316185921",
	       "std::sys::thread_local::native::lazy::destroy");
	expect("_ZN4core3ptr131drop_in_place$LT$std..sync..poison..PoisonError$LT$std..sync..poison.."
	       "mutex..MutexGuard$LT$std..sync..mpmc..zero..Inner$GT$$GT$$GT$17h9f4e32efb7f96f99E"
	       ".llvm.6192702093784159168",
	       "core::ptr::drop_in_place<std::sync::poison::PoisonError<std::sync::poison::mutex::"
	       "MutexGuard<std::sync::mpmc::zero::Inner>>>");
	/* Rust v0. */
	expect("_RNvMCs32gj3y4fnmh_4mainNtB2_6Ledger5debit", "<main::Ledger>::debit");
	expect("_RINvCs32gj3y4fnmh_4main6settleNCNCNvB2_4mains0_00EB2_",
	       "main::settle::<main::main::{closure#2}::{closure#0}>");
	expect("_RNvMs0_NtNtNtCsjrHSEGnQ3l9_3std4sync4mpmc5wakerNtB5_9SyncWaker10disconnect"
	       ".llvm.3512523521299987531",
	       "<std::sync::mpmc::waker::SyncWaker>::disconnect");
	expect("_RNvXs0_NtNtNtCsgEmfK2I1SDS_4core3ops8function5implsRDINtB7_2FnuEp6OutputuEL_"
	       "NtB7_6FnOnce9call_once",
	       "<&dyn core::ops::function::Fn<(), Output = ()> as core::ops::function::FnOnce>"
	       "::call_once");
	/* Parts of a function. */
	expect_part("post_entry.cold", "post_entry");
	expect_part("post_entry.cold.3", "post_entry");
	expect_part("_ZN2ns4postEPNS_1AEPKc.cold", "_ZN2ns4postEPNS_1AEPKc");
	expect_part("route.part.0.cold", "route.part.0");
	expect_part("post_entry", "post_entry");
	expect_part("cold", "cold");
	expect_part(".cold", ".cold");
	expect_part("post_entry.isra.0", "post_entry.isra.0");
	return unit_exit();
}
