/* The program the dwarf/, folly and recorder unit tests read.  It is never
 * run: the tests map it into crafted cores and lay out the memory its
 * symbols point at.  Built at -O0 so that its line table and inline levels
 * are exactly the source's (see the Makefile's unit rules). */
#include "unit_fixture.h"

/* ---- dwarf/ ------------------------------------------------------------ */

struct fx_layout fx_layout_probe;
_Thread_local long fx_tls_counter[4];
volatile int fx_sink_count;

__attribute__((noinline)) void fx_sink(int x)
{
	fx_sink_count += x;
}

static inline __attribute__((always_inline)) void fx_innermost(int x)
{
#line FX_LINE_SINK_CALL
	fx_sink(x);
#line FX_LINE_AFTER_SINK
	fx_sink_count++;
}

static inline __attribute__((always_inline)) void fx_middle(int x)
{
#line FX_LINE_INNERMOST_CALL
	fx_innermost(x + 1);
}

void fx_outer(int x)
{
#line FX_LINE_MIDDLE_CALL
	fx_middle(x * 2);
}

/* ---- folly: the exported symbols and functions for frames to name ----- */

unsigned int folly_async_stack_root_tls_key = 0xffffffffu;
void *__folly_suspended_frame_cookie;
void *__folly_leaf_frame_store;
/* The thread_local holder the pthread slot points at (folly's static TLS
 * route); its type brings the ABI structures into the DWARF. */
_Thread_local struct AsyncStackRoot *currentThreadAsyncStackRoot;

/* glibc's key table (a static program carries it): {seq, destructor}. */
struct {
	uintptr_t seq;
	void (*destr)(void *);
} __pthread_keys[1024];

void fx_native_0(void) { fx_sink(10); }
void fx_native_1(void) { fx_sink(11); }
void fx_native_2(void) { fx_sink(12); }
void fx_native_3(void) { fx_sink(13); }
void fx_native_4(void) { fx_sink(14); }
void fx_native_5(void) { fx_sink(15); }
void fx_native_6(void) { fx_sink(16); }
void fx_native_7(void) { fx_sink(17); }
void fx_async_a(void) { fx_sink(20); }
void fx_async_b(void) { fx_sink(21); }
void fx_async_c(void) { fx_sink(22); }
void fx_async_d(void) { fx_sink(23); }

/* ---- recorder: the library's list head and global order --------------- */

static struct recorder_info *recorders;
uintptr_t recorder_order;

struct recorder_info *recorder_list(void)
{
	return recorders;
}

int main(void)
{
	fx_outer(1);
	return fx_sink_count == 0;
}
