/* Shared by the unit tests' fixture program (unit_fixture.c, never run) and
 * the tests that read it: the types whose layout DWARF must report, the ABI
 * structures the tests lay out in crafted core memory, and the source lines
 * the fixture pins with #line. */
#ifndef TESTS_UNIT_DATA_UNIT_FIXTURE_H
#define TESTS_UNIT_DATA_UNIT_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

/* ---- dwarf/: a struct with nested, over-aligned and array members ----- */

struct fx_point {
	char tag;
	double x, y;
};

struct fx_layout {
	char kind;
	struct fx_point at;                 /* nested struct, 8-aligned */
	short count;
	_Alignas(64) unsigned char block[24];   /* over-aligned */
	union {
		int i;
		void *p;
	} any;
	struct fx_point path[3];
	char last;
};

/* Lines of unit_fixture.c (set there with #line): the call of fx_sink
 * inside fx_innermost, the statement after it, and the call sites of the
 * two inline levels. */
#define FX_LINE_SINK_CALL 1001
#define FX_LINE_AFTER_SINK 1002
#define FX_LINE_INNERMOST_CALL 2001
#define FX_LINE_MIDDLE_CALL 3001

/* ---- folly's async stack ABI (DESIGN.md) ------------------------------ */

struct AsyncStackRoot;

struct AsyncStackFrame {
	struct AsyncStackFrame *parentFrame;
	void *instructionPointer;
	struct AsyncStackRoot *stackRoot;
};

struct AsyncStackRoot {
	struct AsyncStackFrame *topFrame;
	struct AsyncStackRoot *nextRoot;
	void *stackFramePtr;
	void *returnAddress;
};

/* ---- the recorder library's ABI, 1.2.x layout (DESIGN.md) -------------- */

struct recorder_entry {
	const char *format;
	uintptr_t order;
	uintptr_t timestamp;
	const char *where;
	uintptr_t args[4];
};

struct recorder_ring {
	size_t size;
	size_t item_size;
	uintptr_t reader;
	uintptr_t writer;
	uintptr_t commit;
	uintptr_t overflow;
};

struct recorder_info {
	intptr_t trace;
	const char *name;
	const char *description;
	struct recorder_info *next;
	intptr_t exported[12];
	struct recorder_ring ring;
	struct recorder_entry data[];
};

#endif
