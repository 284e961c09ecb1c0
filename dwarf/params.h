/* Internals of frame arguments (params.c, params_eval.c, params_format.c);
 * not for other modules.  Everything here borrows from libdw: it lives as
 * long as the dbg_file whose DWARF it came from (the whole batch). */
#ifndef DWARF_PARAMS_H
#define DWARF_PARAMS_H

#include <elfutils/libdw.h>

#include "internal.h"

/* One DW_TAG_formal_parameter of a function or inlined instance, resolved
 * for one pc. */
struct dbg_param {
	const char *name;           /* borrowed from libdw; NULL: unnamed */
	Dwarf_Die type;
	bool has_type;
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
	struct dbg_tailchain *chain;    /* set: a function the stack does not
					   hold (it tail-called), F[chain_pos] */
	size_t chain_pos;
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

/* gdb's rendering (`set print frame-arguments scalars`) of a value of TYPE
 * at LOC; malloc'd, NULL on out-of-memory. */
char *dbg_format_value(struct dbg_eval *ev, Dwarf_Die *type, bool has_type,
		       const struct dbg_loc *loc);

/* The bytes of a value of TYPE at LOC (at most 16); false when they cannot
 * be had (optimized out, unreadable, synthetic). */
bool dbg_value_bytes(struct dbg_eval *ev, Dwarf_Die *type, bool has_type, const struct dbg_loc *loc,
		     unsigned char out[16], size_t *size);

/* The C/C++ spelling of TYPE ("const char *", "struct account *"); malloc'd. */
char *dbg_type_name(Dwarf_Die *type, bool has_type, bool cxx);

/* True when TYPE (without typedefs and qualifiers) is a C++ reference. */
bool dbg_type_is_reference(Dwarf_Die *type, bool has_type);

/* True when gdb shows values of TYPE in summary mode (not "..."). */
bool dbg_type_is_scalar(Dwarf_Die *type, bool has_type);

#endif
