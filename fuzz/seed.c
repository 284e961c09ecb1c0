/* A tiny program that crashes with SIGSEGV, for small seed cores: built
 * static and dynamic by make-seeds.sh.  With an argument it starts a second
 * thread first, so the core holds two NT_PRSTATUS notes. */
#include <pthread.h>
#include <stddef.h>
#include <unistd.h>

static volatile int *volatile target;

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

__attribute__((noinline)) static void crash(int depth)
{
	if (depth > 0) {
		crash(depth - 1);
		return;
	}
	*target = 1;
}

int main(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		pthread_t t;
		pthread_create(&t, NULL, sleeper, NULL);
		usleep(10000);
	}
	crash(3);
	return 0;
}
