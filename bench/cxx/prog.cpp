// The C++ benchmark's program: coroutines on the folly async-stack ABI
// (fixtures/folly_cpp/async_runtime.h), threads deep in generated
// template-heavy units (gen.py) and in a Boost-using shared library
// (boostlib.cpp), and a crash at the bottom of an async chain.
//
// Threads at the crash (each waits in its place until main says go):
//   crasher:  Executor::drive -> outer_coro -> middle_coro -> bulk0 (12 deep)
//             -> crash_cb -> blockingWait(inner_coro) -> leaf_coro -> crash_leaf;
//   worker:   susp_top -> susp_mid -> susp_leaf left suspended, then
//             Executor::drive -> outer2_coro -> mid2_coro -> bulk1 (20 deep);
//   bulkK:    bulkK_run, 10+K deep, K = 2..6 (5 and 6 in the library);
//   lib:      lib_area, lib_parse, lib_paths in the library;
//   main:     idle.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <pthread.h>
#include <unordered_set>

#include "async_runtime.h"
#include "boostlib.h"

using folly::coro::Task;

enum { NREADY = 10 };
static std::atomic<int> g_ready{0};
static volatile int g_go = 0;
static int *volatile g_null = nullptr;

FOLLY_NOINLINE void spin_cb(int)
{
	g_ready.fetch_add(1);
	for (;;)
		asm volatile("pause" ::: "memory");
}

FOLLY_NOINLINE void crash_leaf(int *p)
{
	asm volatile("" : : "r"(__builtin_frame_address(0)));
	g_ready.fetch_add(1);
	while (!g_go)
		asm volatile("pause");
	*p = 42;
}

Task leaf_coro()
{
	crash_leaf(g_null);
	asm volatile("" ::: "memory");
	co_return;
}

Task inner_coro()
{
	co_await leaf_coro();
	asm volatile("" ::: "memory");
}

FOLLY_NOINLINE void crash_cb(int)
{
	folly::coro::blockingWait(inner_coro());
	asm volatile("" ::: "memory");
}

Task middle_coro()
{
	bulk0_run(12, crash_cb);
	asm volatile("" ::: "memory");
	co_return;
}

Task outer_coro()
{
	co_await middle_coro();
	asm volatile("" ::: "memory");
}

Task mid2_coro()
{
	bulk1_run(20, spin_cb);
	asm volatile("" ::: "memory");
	co_return;
}

Task outer2_coro()
{
	co_await mid2_coro();
	asm volatile("" ::: "memory");
}

Task susp_leaf()
{
	co_await folly::coro::NeverEvent{};
	asm volatile("" ::: "memory");
}

Task susp_mid()
{
	co_await susp_leaf();
	asm volatile("" ::: "memory");
}

Task susp_top()
{
	co_await susp_mid();
	asm volatile("" ::: "memory");
}

FOLLY_NOINLINE void *crasher_main(void *)
{
	folly::Executor::drive(outer_coro());
	return nullptr;
}

FOLLY_NOINLINE void *worker_main(void *)
{
	folly::Executor::drive(susp_top());
	folly::Executor::drive(outer2_coro());
	return nullptr;
}

static double (*const bulk_runs[])(int, void (*)(int)) = {
	bulk2_run, bulk3_run, bulk4_run, bulk5_run, bulk6_run,
};

FOLLY_NOINLINE void *bulk_main(void *arg)
{
	int k = static_cast<int>(reinterpret_cast<intptr_t>(arg));
	bulk_runs[k](12 + k, spin_cb);
	return nullptr;
}

FOLLY_NOINLINE void *lib_main(void *arg)
{
	switch (static_cast<int>(reinterpret_cast<intptr_t>(arg))) {
	case 0:
		lib_area(40, spin_cb);
		break;
	case 1:
		lib_parse("1.5, 2.5, 3.5", spin_cb);
		break;
	default:
		lib_paths(50, spin_cb);
		break;
	}
	return nullptr;
}

int main()
{
	__folly_suspended_frame_cookie = reinterpret_cast<uintptr_t>(&folly::suspendedFrameTag);
	__folly_leaf_frame_store = new std::unordered_set<folly::AsyncStackFrame *>();
	folly::detachedRootFrame.instructionPointer = folly::detached_task();

	pthread_t t;
	if (pthread_create(&t, nullptr, worker_main, nullptr) != 0 ||
	    pthread_create(&t, nullptr, crasher_main, nullptr) != 0)
		return 1;
	for (intptr_t k = 0; k < 5; k++)
		if (pthread_create(&t, nullptr, bulk_main, reinterpret_cast<void *>(k)) != 0)
			return 1;
	for (intptr_t k = 0; k < 3; k++)
		if (pthread_create(&t, nullptr, lib_main, reinterpret_cast<void *>(k)) != 0)
			return 1;
	while (g_ready.load() < NREADY)
		asm volatile("pause");
	g_go = 1;
	for (;;)
		asm volatile("pause" ::: "memory");
}
