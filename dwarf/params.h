/* Internals of frame arguments and locals (params.c, params_eval.c,
 * params_format.c, locals.c, inherit.c); not for other modules.  Everything here borrows from libdw: it lives as
 * long as the dbg_file whose DWARF it came from (the whole batch). */
#ifndef DWARF_PARAMS_H
#define DWARF_PARAMS_H

#include <elfutils/libdw.h>

#include "internal.h"

/* A type with its typedefs and qualifiers stripped, as the value printer
 * needs it: read from the DIEs once per parameter, not once per value. */
struct dbg_scalar {
	bool ok;                    /* false: void, or a typedef loop */
	Dwarf_Die die;
	int tag;
	size_t size;                /* dwarf_aggregate_size, 0 when unknown */
	bool has_encoding;
	Dwarf_Word encoding;        /* a base type's DW_AT_encoding */
	bool char_target;           /* a pointer to a 1-byte character type */
};

/* What formatting a parameter's value takes from its type. */
struct dbg_vtype {
	bool has_type;
	bool scalar;                /* gdb shows the value, not "..." */
	bool reference;             /* a C++ reference */
	struct dbg_scalar t;        /* the type, stripped */
	struct dbg_scalar target;   /* a reference's target, stripped */
};

/* One DW_TAG_formal_parameter of a function or inlined instance, resolved
 * for one pc. */
struct dbg_param {
	const char *name;           /* borrowed from libdw; NULL: unnamed */
	Dwarf_Die type;
	bool has_type;
	struct dbg_vtype vt;        /* TYPE as the value printer needs it */
	Dwarf_Attribute loc;        /* DW_AT_location */
	bool has_loc;
	Dwarf_Op *ops;              /* the expression covering the pc, or NULL */
	size_t nops;
	Dwarf_Op *entry_ops;        /* the expression at the function's entry */
	size_t entry_nops;
	Dwarf_Attribute cval;       /* DW_AT_const_value */
	bool has_const;
	char *type_name;            /* owned */
	bool artificial;            /* DW_AT_artificial (C++ this, __closure) */
};

/* The parameters of one function level: [0] the real function, [d] the
 * d-th inlined level inside it (an_frame.inline_depth). */
struct dbg_level {
	struct dbg_param *params;
	size_t nparams;
};

enum dbg_target_kind {
	DBG_TARGET_UNREAD, DBG_TARGET_NONE, DBG_TARGET_EXPR, DBG_TARGET_SYMBOL, DBG_TARGET_ADDR
};

/* A call site's target as its DIE gives it. */
struct dbg_site_target {
	enum dbg_target_kind kind;
	Dwarf_Attribute expr;       /* DW_AT_call_target, evaluated per frame */
	const char *name;           /* a declaration's symbol */
	Dwarf_Addr addr;            /* a definition's low_pc */
};

/* One DW_TAG_call_site_parameter passed in a register. */
struct dbg_site_param {
	unsigned reg;               /* DWARF register number */
	bool has_value;             /* DW_AT_call_value, as an expression: */
	Dwarf_Attribute value;
	Dwarf_Op *ops;
	size_t nops;
};

/* What the DWARF says at one pc (memoised per file, address, activation). */
struct dbg_pc_info {
	bool has_dwarf;
	Dwarf_Addr dbias;           /* DWARF address = offline address - dbias */
	Dwarf_Die *scopes;          /* all scopes at the pc, innermost first */
	int nscopes;
	struct dbg_level *levels;
	size_t nlevels;
	Dwarf_Attribute frame_base; /* the real function's DW_AT_frame_base */
	bool has_frame_base;
	uint64_t entry;             /* the real function's entry, DWARF address */
	bool has_entry;
	bool cxx;                   /* C++ names (no "struct " prefixes) */
	bool call_site_done;        /* this pc as a return address: */
	bool has_call_site;
	Dwarf_Die call_site;        /* its DW_TAG_call_site */
	struct dbg_site_target target;  /* and where that call went */
	bool site_params_done;      /* its parameters, read on first use */
	struct dbg_site_param *site_params;
	size_t nsite_params;
	Dwarf_Addr at;              /* the DWARF address the levels are resolved at */
	struct dbg_level *locals;   /* each level's local variables (dwarf/locals.c),
				       NULL until first asked */
};

/* The pc info for runtime PC in the session (memoised); NULL when the pc is
 * in no module with a debug file. *M and *F are its module and file. */
struct dbg_pc_info *dbg_pc_info_get(struct dbg_session *s, uint64_t pc, bool activation,
				    struct dbg_module_entry **m, struct dbg_file **f);

/* An evaluation context: frame IDX of FRAMES (callers after it). */
struct dbg_eval {
	struct dbg_session *s;
	struct dbg_frame_regs *frames;
	size_t nframes, idx;
	struct dbg_module_entry *m;
	struct dbg_file *f;
	struct dbg_pc_info *info;
	int depth;                  /* entry-value nesting */
};

bool dbg_eval_init(struct dbg_eval *ev, struct dbg_session *s, struct dbg_frame_regs *frames,
		   size_t nframes, size_t idx, int depth);

/* Runtime address of DWARF address A in EV's module. */
uint64_t dbg_eval_runtime(const struct dbg_eval *ev, Dwarf_Addr a);

enum dbg_loc_kind {
	DBG_LOC_OPTIMIZED,          /* no value: <optimized out> */
	DBG_LOC_MEMORY,             /* the object is in memory at addr */
	DBG_LOC_VALUE,              /* the object's bytes are known */
	DBG_LOC_SYNTHETIC,          /* DW_OP_implicit_pointer */
	DBG_LOC_ERROR,              /* a read at fault failed */
	DBG_LOC_TOO_BIG,            /* composed of more pieces than we keep */
};

struct dbg_loc {
	enum dbg_loc_kind kind;
	uint64_t addr;
	unsigned char bytes[16];
	size_t len;
	uint64_t fault;
};

/* Evaluate the location expression OPS/NOPS of ATTR in EV's frame. */
void dbg_eval_location(struct dbg_eval *ev, Dwarf_Attribute *attr, Dwarf_Op *ops, size_t nops,
		       struct dbg_loc *out);

/* The value register REG had when EV's function was entered, from the
 * caller's DW_TAG_call_site_parameter; false when it cannot be known. */
bool dbg_eval_entry_reg(struct dbg_eval *ev, unsigned reg, uint64_t *value);

/* Read what the value printer needs of TYPE (HAS_TYPE false: none). */
void dbg_vtype_read(Dwarf_Die *type, bool has_type, struct dbg_vtype *vt);

/* A growable string (NOMEM: an allocation failed, the text is cut). */
struct dbg_text {
	char *s;
	size_t len, cap;
	bool nomem;
};

/* gdb's rendering (`set print frame-arguments scalars`) of a value of type
 * VT at LOC, appended to OUT with its terminating NUL. */
void dbg_format_value(struct dbg_eval *ev, const struct dbg_vtype *vt, const struct dbg_loc *loc,
		      struct dbg_text *out);

/* The bytes of a value of type VT at LOC (at most 16); false when they
 * cannot be had (optimized out, unreadable, synthetic). */
bool dbg_value_bytes(struct dbg_eval *ev, const struct dbg_vtype *vt, const struct dbg_loc *loc,
		     unsigned char out[16], size_t *size);

/* Resolve the name, type, DW_AT_const_value and DW_AT_location of DIE (a
 * parameter or a variable) into P, its expression at DWARF address AT (when
 * AT_KNOWN) and at ENTRY (when HAS_ENTRY).  The type's name and the value
 * printer's view of it are not read here. */
void dbg_param_resolve(struct dbg_param *p, Dwarf_Die *die, Dwarf_Addr at, bool at_known,
		       Dwarf_Addr entry, bool has_entry);

/* P's DW_AT_const_value as a location. */
void dbg_const_location(struct dbg_param *p, struct dbg_loc *loc);

/* What the session lends its callers (printed values, kept for the session,
 * and the arrays of the last answer); created on first use, NULL when out of
 * memory. */
struct dbg_args_out *dbg_args_out_get(struct dbg_session *s);

/* The printed value of type VT at LOC, kept in OUT for the session (one
 * string per distinct value); NULL when out of memory. */
const char *dbg_value_text(struct dbg_eval *ev, struct dbg_args_out *out,
			   const struct dbg_vtype *vt, const struct dbg_loc *loc);

/* A copy of TEXT kept in OUT for the session; NULL when out of memory. */
const char *dbg_text_keep(struct dbg_args_out *out, const char *text);

/* Room for N (> 0) locals in OUT, reused from call to call; NULL when out
 * of memory. */
struct dbg_arg *dbg_args_out_locals(struct dbg_args_out *out, size_t n);

/* A DIE of TAG is a function's scope: a subprogram or an inlined call. */
bool dbg_is_function_scope(int tag);

/* Which children of a function or block DIE dbg_children_inherit visits. */
struct dbg_children {
	int tag;                    /* only children of this tag; 0: all */
	int hops;                   /* DW_AT_abstract_origin links followed in a chain */
	size_t max_seen;            /* concrete children's origins remembered, at most */
	bool (*visit)(void *ctx, Dwarf_Die *child);     /* false: stop */
	void *ctx;
};

/* Visit the children of DIE as gdb's inherit_abstract_dies reads them:
 * DIE's own, then those of DIE's abstract origin that no child of DIE
 * stands for (dwarf/inherit.c).  False when a visit returned false or
 * memory ran out. */
bool dbg_children_inherit(Dwarf_Die *die, const struct dbg_children *how);

/* Free what dwarf/locals.c memoised in INFO. */
void dbg_locals_free(struct dbg_pc_info *info);

/* The C/C++ spelling of TYPE ("const char *", "struct account *"); malloc'd. */
char *dbg_type_name(Dwarf_Die *type, bool has_type, bool cxx);

#endif
