/* The runtime-description benchmark's program: a native recursion 1,000
 * frames deep in which every frame pushes one entry on an array stack
 * (anchored in its frame, as a profiler label is) and one on a linked list
 * (placed by owner: each recurse() activation owns one entry), then the
 * innermost frame crashes.  Labels are string literals (in .rodata, read
 * from the mapped file), details are on the heap. */
#include <stdio.h>
#include <stdlib.h>

#define DEPTH 1000

struct entry {
	const char *label;
	const char *detail;
	void *sp;
	unsigned flags;
};

struct rstack {
	struct entry *frames;
	unsigned count, capacity;
};

struct lentry {
	struct lentry *next;
	const char *function;
	int line;
	unsigned flags;
};

struct lvm {
	struct lentry *top;
};

struct rstack *bench_stack;
__thread struct lvm *bench_vm;

static const char *const labels[] = {"parse", "eval", "call", "apply", "render", "layout",
				     "paint", "commit"};

__attribute__((noinline)) static void recurse(int depth)
{
	char guard;
	struct entry *e = &bench_stack->frames[bench_stack->count];
	char *detail = malloc(32);
	snprintf(detail, 32, "depth %d", depth);
	*e = (struct entry){labels[depth % 8], detail, &guard, 1};
	bench_stack->count++;
	struct lentry *l = malloc(sizeof(*l));
	*l = (struct lentry){bench_vm->top, labels[(depth + 3) % 8], depth, 1};
	bench_vm->top = l;
	if (depth == 0)
		*(volatile int *)0 = 1;
	else
		recurse(depth - 1);
	__asm__ volatile("" : : "r"(&guard) : "memory");
}

int main(void)
{
	static struct lvm vm;
	bench_stack = calloc(1, sizeof(*bench_stack));
	bench_stack->capacity = DEPTH;
	bench_stack->frames = calloc(DEPTH, sizeof(struct entry));
	bench_vm = &vm;
	recurse(DEPTH - 1);
	return 0;
}
