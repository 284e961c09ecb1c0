/* What the files of described runtimes share (runtime_resolve.c resolves
 * each description against the program, runtime_read.c reads a stack's
 * entries, runtime_place.c places them among a thread's frames, runtime.c
 * finds the stacks from each root); not for other files. */
#ifndef ANALYZER_RUNTIME_INTERNAL_H
#define ANALYZER_RUNTIME_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "rtclaims.h"
#include "runtime.h"

#define AN_RT_CONTEXT_SIZE 160u
#define AN_RT_LINK_LIMIT (UINT64_C(1) << 20)  /* bytes into its object of a list's link */

/* A member resolved for this program: the pointers its path follows (at
 * these offsets, in order, from the object), then the member itself. */
struct an_rt_slot {
	uint64_t offset, size;
	uint64_t hops[AN_RT_HOPS_LIMIT];
	unsigned nhops;
};

/* A string kind resolved: its fields, and where each form's characters
 * start in the object. */
struct an_rt_resolved_string {
	struct an_rt_slot *fields;
	uint64_t *data;
};

struct an_rt_resolved {
	const struct an_rt_desc *d;
	uint64_t root;               /* symbol, pthread_key: the variable's address */
	struct dbg_tls_var tls;      /* tls */
	struct an_rt_slot array, count, capacity, top, next;
	bool has_capacity;
	struct an_rt_slot *list_head, *list_next;  /* root.lists */
	struct an_rt_slot thread;
	uint64_t stack_extent;       /* bytes of the stack object read */
	uint64_t entry_size;         /* array stride; list: bytes read per entry */
	uint64_t entry_align;
	struct an_rt_slot *fields;
	struct an_rt_resolved_string *strings;
};

/* What reading a member through its path found. */
enum an_rt_value_state { AN_RT_VALUE_READ, AN_RT_VALUE_NULL, AN_RT_VALUE_UNREADABLE };

/* The activations of a description's attach function that the stacks
 * placed before on one thread took (a thread running a sub-interpreter
 * inside a call of the main one has two thread states). */
struct taken {
	size_t desc;
	int32_t tid;
	size_t n;
};

struct an_runtime_session {
	struct dbg_session *s;
	struct core *core;
	struct an_rt_resolved *v;
	size_t n, cap;
	struct an_rt_claims claims;  /* the stacks shown: each once */
	struct taken *taken;
	size_t ntaken, captaken;
};

/* One entry, decoded. */
struct an_rt_entry {
	const struct an_rt_kind *kind;   /* NULL: matched no kind */
	uint64_t addr;
	char *name, *detail;
	uint64_t anchor;
	bool has_anchor;
	bool boundary;               /* matches attach.boundary: ends its activation's run */
};

/* The stack being read: its entries innermost first, and the warnings. */
struct an_rt_walk {
	struct an_runtime_session *rs;
	const struct an_rt_resolved *r;
	uint64_t obj;                /* the stack object */
	char context[AN_RT_CONTEXT_SIZE]; /* "runtime js: thread 12" */
	struct an_rt_entry *v;
	size_t n, cap;
	unsigned warned, unwarned;
	size_t unmatched;
	bool nomem;
	bool shown_before;           /* another description showed this stack */
	/* The line a decoder field gave the entry being added: decoded once
	 * however many of its templates show it (a name and a detail). */
	struct {
		bool done, ok;
		uint64_t entry;
		const struct an_rt_field *field;
		int64_t line;
	} line;
	unsigned char *table;       /* BYTES_LIMIT bytes for line tables, or NULL */
};

/* The value of SL in the object at OBJ, whose first bytes are in BUF
 * (NULL: everything from the core): the pointers of its path followed, then
 * the member read, or its address taken (ADDRESS). */
enum an_rt_value_state an_rt_slot_read(struct core *core, uint64_t obj, const unsigned char *buf,
				       const struct an_rt_slot *sl, bool address, uint64_t *v);

/* The number SL holds in the object at OBJ; false when it is not read. */
bool an_rt_read_uint(struct core *core, uint64_t obj, const struct an_rt_slot *sl, uint64_t *v);

/* V, a SIZE-byte signed integer, widened. */
int64_t an_rt_as_signed(uint64_t v, uint64_t size);

/* Read the stack object at OBJ into W's entries (W's rs and r set),
 * innermost first; what cannot be read is warned. */
void an_rt_read_stack(struct an_rt_walk *w, uint64_t obj);

/* Read the one entry at AT into W's entries (W's rs and r set); what
 * cannot be read is warned. */
void an_rt_read_entry(struct an_rt_walk *w, uint64_t at);

/* After the walk: the problems not warned one by one. */
void an_rt_walk_summary(struct an_rt_walk *w);

/* Free what W owns (not W). */
void an_rt_walk_deinit(struct an_rt_walk *w);

/* Read the stack object at OBJ and place it on T (NULL: a global root). */
void an_rt_splice_stack(struct an_runtime_session *rs, const struct an_rt_resolved *r,
			struct analysis *an, struct an_thread *t, uint64_t obj);

/* A stack object of thread TID, which is no thread of the core: its
 * entries are counted in a warning (none: a thread state never used). */
void an_rt_splice_tidless(struct an_runtime_session *rs, const struct an_rt_resolved *r,
			  uint64_t obj, uint64_t tid);

#endif
