/* The benchmark's shared library: an exported step and a static one, then
 * back into the executable through the callback. */
typedef void (*bench_cb)(int depth, int crash);

static volatile int lib_sink;

static void __attribute__((noinline)) lib_walk_inner(int depth, int crash, bench_cb cb)
{
	cb(depth - 1, crash);
	lib_sink = depth;
}

void lib_walk(int depth, int crash, bench_cb cb)
{
	lib_walk_inner(depth - 1, crash, cb);
	lib_sink = depth;
}
