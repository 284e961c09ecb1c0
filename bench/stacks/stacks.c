/* Benchmark program: 200 worker threads and the main thread each descend
 * about 80 frames (static functions of the executable with inlined helpers,
 * an exported and a static function of a shared library), the workers park
 * at the bottom, then the main thread faults at the bottom of its own
 * descent: a 201-thread core with deep, mixed stacks. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define WORKERS 200
#ifndef DEPTH                /* -DDEPTH=55: ~60 frames a thread */
#define DEPTH 78            /* + the thread's entry function and park() */
#endif

typedef void (*bench_cb)(int depth, int crash);
void lib_walk(int depth, int crash, bench_cb cb);

static atomic_int parked;
static volatile int sink;

static void __attribute__((noinline)) park(int crash)
{
	if (crash)
		*(volatile int *)(size_t)(crash - 1) = 0;   /* crash == 1: NULL */
	atomic_fetch_add(&parked, 1);
	for (;;)
		pause();
}

static void walk_exe(int depth, int crash);

static inline __attribute__((always_inline)) void descend_inline(int depth, int crash)
{
	sink = depth;
	if (depth <= 0)
		park(crash);
	else
		lib_walk(depth, crash, walk_exe);
}

static inline __attribute__((always_inline)) void account(int depth, int crash)
{
	descend_inline(depth - 1, crash);
	sink = depth;
}

static void __attribute__((noinline)) walk_exe(int depth, int crash)
{
	if (depth <= 0)
		park(crash);
	else
		account(depth, crash);
	sink = depth;
}

static void *worker(void *arg)
{
	walk_exe(DEPTH, 0);
	return arg;
}

int main(void)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
#ifndef DEFAULT_STACKS   /* -DDEFAULT_STACKS: glibc's 8 MiB stacks, a sparse core */
	pthread_attr_setstacksize(&attr, 256 * 1024);
#endif
	for (int i = 0; i < WORKERS; i++) {
		pthread_t t;
		if (pthread_create(&t, &attr, worker, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}
	}
	while (atomic_load(&parked) < WORKERS)
		usleep(1000);
	usleep(100000);     /* let the last ones reach pause() */
	walk_exe(DEPTH, 1);
	return 0;
}
