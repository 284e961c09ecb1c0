/* Runtime descriptions (DESIGN.md, "Runtime descriptions"): JSON files that
 * say where a runtime keeps its own stack of frames and how its entries sit
 * among the native frames.
 *
 * A description is parsed and checked once, when it is loaded, and is
 * read-only afterwards: one set serves every analysis of a batch, on any
 * thread.  What depends on the program (member offsets from its DWARF, the
 * root's address) is resolved per analysis by analyzer/runtime_resolve.c. */
#ifndef ANALYZER_RTDESC_H
#define ANALYZER_RTDESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../corefile/error.h"

#define AN_RT_NONE SIZE_MAX         /* "no field" in an index */
#define AN_RT_MAX_DEFAULT 65536u    /* entries read from one stack */
#define AN_RT_MAX_LIMIT (1u << 20)
#define AN_RT_ENTRY_LIMIT 4096u     /* bytes of one entry or stack object */
#define AN_RT_LIST_MAX_DEFAULT 4096u /* elements read from one root list */
#define AN_RT_HOPS_LIMIT 4u         /* pointers followed in one member path */

enum an_rt_root_kind { AN_RT_ROOT_SYMBOL, AN_RT_ROOT_TLS, AN_RT_ROOT_PTHREAD_KEY };
enum an_rt_stack_kind { AN_RT_STACK_ARRAY, AN_RT_STACK_LIST };
enum an_rt_format { AN_RT_AS_STRING, AN_RT_AS_NUMBER, AN_RT_AS_HEX, AN_RT_AS_COUNTED };

/* The named decoders (README, "Runtime descriptions"): what a description
 * cannot say with members and masks. */
enum an_rt_decoder {
	AN_RT_DECODER_NONE,
	AN_RT_DECODER_BASENAME,      /* path: the part after its last '/' */
	AN_RT_DECODER_CPYTHON311_LINE, /* table, first_line, instruction, code: a line */
	AN_RT_DECODER_CPYTHON310_LINE, /* table, first_line, instruction (an index): a line */
	AN_RT_DECODER_CPYTHON_LNOTAB_LINE, /* table, first_line, offset (bytes): a line */
};
/* How root.thread names a stack object's thread. */
enum an_rt_thread_id { AN_RT_THREAD_TID, AN_RT_THREAD_PTHREAD };
#define AN_RT_DECODER_ARGS 4
enum an_rt_show { AN_RT_SHOW_SCRIPT, AN_RT_SHOW_LABEL, AN_RT_SHOW_HIDDEN };

/* A member of a described type, by name or path: "state.top" steps into a
 * nested struct, "f_code->co_name" through a pointer (a read from the core). */
struct an_rt_member {
	char *path;                 /* NULL: not given */
	char *where;                /* its JSON path, for messages ("$.stack.count") */
};

/* A named value read from each entry (entry.fields), or from a string
 * object's header (strings.NAME.fields). */
struct an_rt_field {
	char *name;
	struct an_rt_member member; /* no path: a decoder's result */
	uint64_t mask;              /* UINT64_MAX when not given */
	unsigned shift;             /* applied after the mask */
	enum an_rt_format as;       /* how a template shows it */
	size_t string;              /* AN_RT_AS_COUNTED: the index in strings */
	bool address;               /* the member's address, not its contents */
	enum an_rt_decoder decoder;
	size_t args[AN_RT_DECODER_ARGS];    /* the decoder's inputs: fields */
};

/* `if`: every FIELD has all of BITS set (no conditions: always). */
struct an_rt_cond {
	size_t field;
	uint64_t bits;
};

struct an_rt_match {
	struct an_rt_cond *conds;
	size_t nconds;
};

/* A template: text with {field} references ("{{" and "}}" are braces). */
struct an_rt_piece {
	char *text;                 /* literal text, or NULL for a field */
	size_t field;
};

struct an_rt_template {
	struct an_rt_piece *pieces;
	size_t npieces;
	bool given;
};

struct an_rt_kind {
	struct an_rt_match match;
	char *kind;                 /* as written: "script", "label", "marker", ... */
	enum an_rt_show show;
	struct an_rt_template name, detail, fallback;
	size_t anchor;              /* field holding a stack address, or AN_RT_NONE */
};

/* One form of a counted string: the first whose `if` holds decides where
 * the characters are and how wide they are. */
struct an_rt_string_form {
	struct an_rt_match match;   /* over the string kind's fields */
	size_t length;              /* field: the count of characters */
	char *header;               /* the characters follow a header of this type's size */
	struct an_rt_member data;   /* ... or start at this member */
	uint64_t width;             /* bytes a character: 1, 2 or 4 */
	size_t width_field;         /* ... or this field's value (AN_RT_NONE: WIDTH) */
	bool code_points;           /* each character is a code point (else UTF-8 bytes) */
};

/* `strings.NAME`: objects holding a count and their characters (CPython's
 * str and bytes), read through a field whose "as" names the kind. */
struct an_rt_string_kind {
	char *name;
	char *type;                 /* the header's type: the fields' members are in it */
	struct an_rt_field *fields;
	size_t nfields;
	struct an_rt_string_form *forms;
	size_t nforms;
};

/* `root.lists[i]`: in an object of TYPE, HEAD points at the first element
 * of a list linked by NEXT (a member of the elements' type: the next
 * list's type, the last list's the stack type). */
struct an_rt_list {
	char *type;
	struct an_rt_member head, next;
	uint64_t max;
};

/* `layout`: offsets and sizes for a program without DWARF (or overriding it). */
struct an_rt_layout_member {
	char *path;
	uint64_t offset, size;
	char *points_to;            /* a pointer member's target type, or NULL */
};

struct an_rt_layout_type {
	char *type;
	bool has_size;
	uint64_t size;
	struct an_rt_layout_member *members;
	size_t nmembers;
};

/* `offsets`: a block of member offsets the runtime keeps in its own memory
 * (CPython 3.13's _Py_DebugOffsets at the start of _PyRuntime), preferred
 * to the layout.  Each type's members hold, as their offset, where in the
 * block the member's offset is; a type's size, where its size is. */
struct an_rt_offsets {
	char *symbol;               /* the block's symbol; NULL: no block */
	char *cookie;               /* the bytes the block starts with */
	struct an_rt_layout_type *types;
	size_t ntypes;
};

struct an_rt_desc {
	char *file;                 /* where it was loaded from */
	char *name;
	char *runtime;              /* what its frames say: "runtime", else name */
	char *label;                /* what its warnings say: "RUNTIME (NAME)", or NAME */
	struct {
		enum an_rt_root_kind kind;
		char *symbol;
		bool pointer;       /* the root holds the stack object's address */
		struct an_rt_list *lists;    /* walked from the root to the stack objects */
		size_t nlists;
		struct an_rt_member thread;  /* a stack object's OS thread id */
		enum an_rt_thread_id thread_is;  /* ... or its pthread_t ("thread_is") */
		struct {            /* the root counts only when this holds */
			char *symbol;
			uint64_t size, mask, equals;
			char *module;   /* ... or the root's module is named so */
		} require;
	} root;
	struct {
		enum an_rt_stack_kind kind;
		char *type;
		struct an_rt_member array, count, capacity;    /* array stacks */
		struct an_rt_member top, next;                 /* list stacks (next: in the entry) */
		uint64_t max;
	} stack;
	struct {
		char *type;
		struct an_rt_field *fields;
		size_t nfields;
	} entry;
	struct an_rt_kind *kinds;
	size_t nkinds;
	struct an_rt_string_kind *strings;
	size_t nstrings;
	struct {
		char *function;     /* NULL: placement by anchor */
		bool has_boundary;
		struct an_rt_match boundary;
	} attach;
	struct an_rt_layout_type *layout;
	size_t nlayout;
	bool dwarf_first;           /* "prefer": "dwarf": the layout only where DWARF is not */
	struct an_rt_offsets offsets;
};

/* The loaded descriptions. */
struct an_runtimes {
	struct an_rt_desc *v;
	size_t n, cap;
};

/* An empty set; NULL on out-of-memory. */
struct an_runtimes *an_runtimes_create(void);

/* Free the set and its descriptions; NULL is a no-op. */
void an_runtimes_destroy(struct an_runtimes *set);

/* Parse and check the description at PATH and add it to SET.  A description
 * whose name is already in SET is an error, or skipped when IF_NEW (a later
 * place on the search path).  The error (caller destroys it) is one line
 * naming the file, the JSON path and the problem. */
struct core_error *an_runtimes_load(struct an_runtimes *set, const char *path, bool if_new);

/* The layout type TYPE of D, or NULL. */
const struct an_rt_layout_type *an_rt_layout_type(const struct an_rt_desc *d, const char *type);

/* The type TYPE of D's offsets block, or NULL. */
const struct an_rt_layout_type *an_rt_offsets_type(const struct an_rt_desc *d, const char *type);

#endif
