/* Debug information for a core: modules, unwinding, symbols, lines, inlines
 * and struct layouts, all through libdw/libdwfl.
 *
 * One dbg_session per analysed core.  Pointers returned by a session are
 * borrowed and live as long as the session unless stated otherwise.  A
 * dbg_cache may be shared by many sessions (one at a time) so that a batch of
 * cores of the same binaries parses their debug info once. */
#ifndef DWARF_DWARF_H
#define DWARF_DWARF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../corefile/core.h"

struct dbg_options {
	const char *binary;         /* executable given by the user, or NULL */
	const char *sysroot;        /* prefix for mapped-file paths, or NULL */
	const char *const *debug_dirs;  /* extra debug-info directories */
	size_t ndebug_dirs;
	unsigned max_frames;        /* 0: DBG_MAX_FRAMES_DEFAULT; past it a walk
				       goes on only along its thread's stack */
};

#define DBG_MAX_FRAMES_DEFAULT 1024

struct dbg_cache;
struct dbg_session;

/* Cache of parsed debug info keyed by build-id; NULL on out-of-memory. */
struct dbg_cache *dbg_cache_create(void);
void dbg_cache_destroy(struct dbg_cache *cache);

/* How many files the cache has opened, and how many of them had their DWARF
 * parsed (each at most once, however many sessions used it). */
void dbg_cache_stats(struct dbg_cache *cache, size_t *files, size_t *dwarf_parsed);

/* Set the cache's debug-info search path: the standard places
 * (/usr/lib/debug, a module's .debug directory) plus DIRS (copied). */
struct core_error *dbg_cache_set_debug_dirs(struct dbg_cache *cache, const char *const *dirs,
					    size_t ndirs);

/* Open a session over CORE (borrowed; must outlive the session).  CACHE may
 * be NULL.  Problems that leave the session usable (a binary whose build-id
 * differs, a module without debug info) become warnings on the core. */
struct core_error *dbg_session_open(struct core *core, const struct dbg_options *opts,
				    struct dbg_cache *cache, struct dbg_session **out);
void dbg_session_close(struct dbg_session *s);

struct core *dbg_session_core(struct dbg_session *s);

struct dbg_module_info {
	const char *path;
	uint64_t start, end;
	const char *build_id;       /* hex, NULL when unknown */
	const char *debuginfo;      /* path of the file holding DWARF, NULL if none */
	bool debuginfod;            /* that file came from a debuginfod server */
	bool is_main;               /* the executable */
};

size_t dbg_module_count(struct dbg_session *s);
const struct dbg_module_info *dbg_module_get(struct dbg_session *s, size_t i);

/* Frame registers by DWARF number, the core's architecture's (x86_64: 0 rax
 * .. 16 rip; aarch64: x0..x30, 31 sp): corefile/arch.h. */
#define DBG_NREGS CORE_MAX_DWARF_REGS

/* One native frame from CFI (or frame-pointer) unwinding. */
struct dbg_frame {
	uint64_t pc;
	bool activation;            /* pc is exact: look it up as is, not pc-1 */
	uint64_t cfa;               /* canonical frame address; 0 when unknown */
	uint64_t fp, sp;            /* frame and stack pointer in this frame, if known */
	bool has_fp, has_sp;
	/* Every register the unwinder knows in this frame, by DWARF number;
	 * bit N of regs_known says regs[N] is valid. */
	uint64_t regs[DBG_NREGS];
	uint32_t regs_known;
};

/* Unwind thread THREAD_INDEX of the core (core->threads order).  *FRAMES is
 * malloc'd (caller frees), innermost first.  Past --max-frames the walk
 * goes on while each caller's stack pointer rises inside the stack's
 * segment, so a recursion that overflowed its stack is walked to its
 * bottom; the caller decides what of it to keep.  *STOP_REASON is a malloc'd
 * message when the walk ended early (caller frees), else NULL. */
struct core_error *dbg_unwind_thread(struct dbg_session *s, size_t thread_index,
				     struct dbg_frame **frames, size_t *nframes,
				     char **stop_reason);

/* The registers a user-space context switch saves: enough to resume, and
 * to unwind, a stack that no thread is running.  By DWARF number of the
 * core's architecture; bit N of KNOWN says regs[N] is valid, the stack
 * pointer's among them. */
struct dbg_regs {
	uint64_t pc;                /* where it resumes: a return address */
	uint64_t regs[DBG_NREGS];
	uint32_t known;
};

/* Unwind a stack no core thread is on (a suspended user-space thread) from
 * REGS, with the same CFI unwinder as dbg_unwind_thread().  REGS->pc is a
 * return address: frame 0 is not an activation (looked up at pc-1).  The
 * walk ends before the first caller whose pc lies in [BASE_START, BASE_END)
 * (the fake return address a runtime puts at the base of its stacks; an
 * empty range never ends it) and *REACHED_BASE says whether it did; the last
 * frame's CFA then comes from that caller.  *FRAMES (malloc'd, caller frees)
 * and *STOP_REASON as for dbg_unwind_thread(). */
struct core_error *dbg_unwind_regs(struct dbg_session *s, const struct dbg_regs *regs,
				   uint64_t base_start, uint64_t base_end,
				   struct dbg_frame **frames, size_t *nframes, bool *reached_base,
				   char **stop_reason);

/* Tail calls restored between two frames, at most. */
#define DBG_MAX_TAIL_CALLS 16

/* Frames the stack does not hold because their functions left by a tail
 * call: between the frame whose call returns to CALLER_RA and the inner
 * frame, at CALLEE_PC (an activation or a return address), whose function's
 * entry is found from DWARF or the symbol table (not CALLEE_PC minus its
 * offset: a frame in a NAME.cold part is not after the entry).  Found from DWARF call-site
 * information as gdb does (a single chain of tail calls, or the part all
 * chains share; none when a call site on the way cannot be resolved).
 * PCS gets each one's pc, innermost first: the return address of its tail
 * call (look its line up at pc-1, as for a caller); *N how many, 0 for a
 * direct call or when nothing is certain. */
struct core_error *dbg_tail_calls(struct dbg_session *s, uint64_t caller_ra, uint64_t callee_pc,
				  bool callee_activation, uint64_t pcs[DBG_MAX_TAIL_CALLS], size_t *n);

/* A symbolized location; one per inline level. */
struct dbg_location {
	char *function;             /* demangled, or NULL */
	uint64_t offset;            /* pc - function entry (real frame only) */
	bool has_offset;
	char *module;               /* module path, or NULL */
	uint64_t module_offset;
	bool has_module_offset;
	char *file;
	int line;
	bool inlined;
	int inline_depth;
};

/* Symbolize PC (looked up at pc-1 unless ACTIVATION).  *LOCS is malloc'd,
 * innermost inline level first and the real function last; free with
 * dbg_locations_free().  Always yields at least one location (module and
 * offset only when nothing better is known). */
struct core_error *dbg_symbolize(struct dbg_session *s, uint64_t pc, bool activation,
				 struct dbg_location **locs, size_t *nlocs);
void dbg_locations_free(struct dbg_location *locs, size_t nlocs);

struct dbg_pc_info;
struct dbg_module_entry;
struct dbg_file;

/* What dbg_frame_args found for one frame's pc and keeps for the next
 * question about the same frame (its callee's entry values ask it again). */
struct dbg_frame_memo {
	bool valid;                 /* for PC and ACTIVATION: */
	uint64_t pc;
	bool activation;
	struct dbg_pc_info *info;
	struct dbg_module_entry *module;
	struct dbg_file *file;
	int target;                 /* where the call this frame made went:
				       0 not asked, 1 CALL_TARGET, -1 unknown */
	uint64_t call_target;
};

/* A frame as the argument evaluator sees it: its pc and the registers it
 * had.  Registers the unwinder did not restore are taken as unchanged from
 * the next inner frame (gdb's rule for registers CFI leaves unspecified). */
struct dbg_frame_regs {
	uint64_t pc;
	bool activation;
	uint64_t cfa;               /* 0 when unknown */
	uint64_t regs[DBG_NREGS];
	uint32_t regs_known;
	/* Filled by dbg_frame_args as a memo (zero them once): the values the
	 * registers had at function entry, for the frames' entry values. */
	uint64_t entry_regs[DBG_NREGS];
	uint32_t entry_known, entry_failed;
	struct dbg_frame_memo memo;
};

/* One formal parameter as gdb prints it (`set print frame-arguments
 * scalars`, `set print entry-values default`).  The strings are borrowed
 * from the session and live as long as it; one printed value met again
 * (the same type at the same location) is the same string. */
struct dbg_arg {
	const char *name;
	const char *type;           /* NULL when DWARF gives none */
	const char *value;          /* "250", "0x0", "<optimized out>", "..." */
	const char *entry_value;    /* value at function entry (DW_OP_entry_value
				       through the caller's call site), or NULL */
	bool entry_equal;           /* it has the value's bytes: gdb's
				       name=name@entry=VALUE */
};

/* The formal parameters of FRAMES[0] at inline level INLINE_DEPTH (0: the
 * real function, d: the d-th level inlined into it), in DWARF order,
 * evaluated against its registers and the core's memory.  FRAMES[1..NFRAMES)
 * are its callers for entry values, innermost first, as gdb's frames are:
 * real frames and the tail-call frames between them (dbg_tail_calls), each
 * the caller of the one before it; their entry_* fields and memo memoise
 * what was found for the next call.  *ARGS is the session's until its next
 * call (the strings, as long as the session); *HAS_ARGS is false when no
 * DWARF describes the frame's function. */
struct core_error *dbg_frame_args(struct dbg_session *s, struct dbg_frame_regs *frames,
				  size_t nframes, int inline_depth, const struct dbg_arg **args,
				  size_t *nargs, bool *has_args);

/* The local variables of FRAMES[0] at inline level INLINE_DEPTH as gdb's
 * `bt full` lists them: those of every lexical block that holds the pc, the
 * innermost block first, up to and including the level's function (an
 * inlined level's outer blocks belong to the level it is inlined into);
 * in a function's own block in DWARF order, in a nested block in the order
 * of gdb's symbol dictionary; static locals included.  Values as
 * dbg_frame_args prints them (entry_value stays NULL), except that a value
 * no location holds is "<optimized out>" whatever its type and a read that
 * faults names the variable, as `bt full` does.  Lent and owned as
 * dbg_frame_args' answer; *HAS_LOCALS is false when no DWARF describes the
 * frame's function. */
struct core_error *dbg_frame_locals(struct dbg_session *s, struct dbg_frame_regs *frames,
				    size_t nframes, int inline_depth, const struct dbg_arg **locals,
				    size_t *nlocals, bool *has_locals);

/* Find a symbol by its (mangled or C) name in any module, .symtab first then
 * .dynsym; GNU-unique and TLS symbols included.  *ADDR is the runtime address
 * (for STT_TLS: the st_value offset in the module's TLS block). */
bool dbg_find_symbol(struct dbg_session *s, const char *name, uint64_t *addr, uint64_t *size);

/* Call FN(CTX, name, runtime address) for every defined, non-TLS symbol
 * whose name starts with PREFIX, in every module.  FN
 * returns false to stop.  Returns the number of calls made. */
size_t dbg_symbols_with_prefix(struct dbg_session *s, const char *prefix,
			       bool (*fn)(void *ctx, const char *name, uint64_t addr), void *ctx);

/* Name of the symbol containing ADDR (borrowed until the next call), or NULL. */
const char *dbg_symbol_name_at(struct dbg_session *s, uint64_t addr, uint64_t *offset);

/* The name of the global variable holding the object of SIZE bytes at
 * ADDR: the variable's own ("accounts_lock") when it is that object, else
 * (with MEMBERS: this reads the DWARF of the variable's module, unit by
 * unit until it is found) the member path to it from the variable's type
 * ("g_pool.lock"), into BUF (LEN bytes).  False (BUF empty) when no data
 * symbol holds ADDR or nothing says which member lies there. */
bool dbg_data_name(struct dbg_session *s, uint64_t addr, uint64_t size, bool members, char *buf,
		   size_t len);

/* The data symbol (a global variable) whose bytes hold ADDR: its start
 * and size.  False when none does. */
bool dbg_data_symbol(struct dbg_session *s, uint64_t addr, uint64_t *start, uint64_t *size);

/* Byte offset of MEMBER in the struct/class TYPE ("folly::AsyncStackRoot",
 * "recorder_info", "pthread", a nested "butil::ResourcePool<T>::Block") from
 * any module's DWARF.  MEMBER may be a path through members that are records
 * ("storage.bottom", "_rq._top").  False when not found. */
bool dbg_member_offset(struct dbg_session *s, const char *type, const char *member,
		       uint64_t *offset);

/* Offset and size in bytes (0 when it has none: a flexible array) of the
 * member PATH of TYPE, from any module's DWARF: PATH is a member name or names joined by dots ("state.top", each
 * stepping into the struct the previous member is); members of anonymous
 * structs/unions and of base classes count as the record's own.  TYPE is a
 * qualified struct, class or union name, or a typedef of one.  False when
 * not found (also for a bit-field). */
bool dbg_member_find(struct dbg_session *s, const char *type, const char *path, uint64_t *offset,
		     uint64_t *size);

/* The name of the type the pointer member PATH of TYPE points at (as
 * written: a typedef's name, or the struct's; qualifiers dropped) into NAME
 * (LEN bytes), from any module's DWARF.  False when PATH is not found or
 * is no pointer to a named type. */
bool dbg_member_target(struct dbg_session *s, const char *type, const char *path, char *name,
		       size_t len);

/* As dbg_member_offset, looking first in the module that defines function
 * SYMBOL, in the CU that holds its code (a function defined beside the type,
 * as glibc's pthread_create beside struct pthread): in a program with tens
 * of MB of DWARF this spares indexing CUs that do not have it. */
bool dbg_member_offset_near(struct dbg_session *s, const char *symbol, const char *type,
			    const char *member, uint64_t *offset);

/* The expression a memory access through DWARF register REG touched at
 * PC (the faulting instruction, an activation), OFFSET bytes past the
 * register's value: where DWARF says which variable or parameter is in REG
 * at PC and what it points to, "s->bytes", "this->hdr.len" (a reference:
 * "r.len"), "*p" for a pointer to a scalar at offset 0, into BUF (LEN
 * bytes).  False (BUF empty) when DWARF does not say. */
bool dbg_register_access(struct dbg_session *s, uint64_t pc, int reg, uint64_t offset, char *buf,
			 size_t len);

/* The same for a register loaded from memory: REG held, at AT, a variable
 * or parameter pointing to a record whose member at LOAD_OFFSET is a
 * pointer to a record; what the access OFFSET bytes into that record
 * touched: "s->next->len", "r.next->len" (a reference). */
bool dbg_loaded_access(struct dbg_session *s, uint64_t at, int reg, uint64_t load_offset,
		       uint64_t offset, char *buf, size_t len);

/* The contiguous part of the function holding PC (an activation): its
 * entry part or a NAME.cold part, [*START, *END), from DWARF, else the
 * symbol table. */
bool dbg_function_part(struct dbg_session *s, uint64_t pc, uint64_t *start, uint64_t *end);

/* A C++ type's mangled name as std::type_info holds it ("St12out_of_range")
 * demangled ("std::out_of_range"); malloc'd (caller frees), a copy of NAME
 * when it does not demangle, NULL when NAME is NULL or memory ran out. */
char *dbg_demangle_type(const char *name);

/* Size in bytes of the struct/class TYPE from DWARF.  False when not found. */
bool dbg_type_size(struct dbg_session *s, const char *type, uint64_t *size);

/* A thread-local variable: its place in one module's TLS block. */
struct dbg_tls_var {
	size_t module;              /* dbg_module_get() index */
	uint64_t offset;            /* in the module's block (the symbol's st_value) */
	uint64_t size;
};

/* Find the thread-local (STT_TLS) symbol NAME, the executable's first.
 * False when no module defines NAME as a thread-local variable. */
bool dbg_find_tls_symbol(struct dbg_session *s, const char *name, struct dbg_tls_var *var);

enum dbg_tls_state {
	DBG_TLS_ADDRESS,            /* *ADDR is the variable in that thread */
	DBG_TLS_UNALLOCATED,        /* the thread never used its module's variables */
	DBG_TLS_UNKNOWN,            /* *WHY (a static string) says why */
};

/* The address of VAR in the thread whose thread pointer (fs_base) is TP:
 * the module's block from the thread's DTV (its index found in the dynamic
 * linker's link_map), else from the module's static TLS offset below TP
 * (the executable's when nothing else says: a static program). */
enum dbg_tls_state dbg_tls_address(struct dbg_session *s, const struct dbg_tls_var *var,
				   uint64_t tp, uint64_t *addr, const char **why);

/* The executable's PT_TLS (p_memsz, p_align).  False when it has none. */
bool dbg_main_tls(struct dbg_session *s, uint64_t *memsz, uint64_t *align);

/* LEN bytes at ADDR from those the core saved, else, for constant data
 * the core did not save (qemu-user's cores keep no read-only page of a library), from
 * the file of the module loaded there.  False when neither has them. */
bool dbg_read_module_bytes(struct dbg_session *s, uint64_t addr, void *buf, size_t len);

/* As core_read_string (a NUL within MAX bytes: true), the bytes read as
 * dbg_read_module_bytes reads them: a string in a library's read-only data
 * that the core did not save comes from the library's file. */
bool dbg_read_module_string(struct dbg_session *s, uint64_t addr, char *buf, size_t max);

/* The offset in its module's TLS block of the thread-local variable whose
 * TLS descriptor the function at FN (SIZE bytes) resolves, from the
 * descriptor's relocation in the module's file (the architecture's
 * tlsdesc_reloc).  False when the code or the file does not say. */
bool dbg_tlsdesc_offset(struct dbg_session *s, uint64_t fn, uint64_t size, uint64_t *offset);

/* ---- Modules of stored cores ----------------------------------------
 * A crash store keeps each frame's module (the path the core mapped it
 * from, its build-id) and the pc's offset in it.  When the module's debug
 * info turns up after its cores were stored, those offsets are symbolized
 * again here, outside any core. */

/* A module's file held by a dbg_cache (it lives as long as the cache). */
struct dbg_file;

/* The debug info of the module with BUILD_ID (hex) that a core mapped from
 * PATH, found as a session finds a module's: when the file at PATH is
 * still there with that build-id, through the same lookup (its
 * .gnu_debuglink or file name + ".debug" in the debug directories, the
 * build-id directories, the decompressed copies, debuginfod); else (PATH
 * gone, or rebuilt since) a debug file with that build-id: its
 * decompressed copy, the build-id directories, PATH's file name + ".debug"
 * in the debug directories, debuginfod.  Returns the file (owned by CACHE)
 * when it has DWARF, else NULL.  *WARNING (malloc'd, caller frees; NULL
 * when none) names a file of the debug directories passed over because its
 * build-id is another. */
struct dbg_file *dbg_cache_find_module(struct dbg_cache *cache, const char *build_id,
				       const char *path, char **warning);

/* Where F's DWARF was found (borrowed from F). */
const char *dbg_file_debuginfo(struct dbg_file *f);

/* Symbolize the pc MODULE_OFFSET bytes past the start of F's module as a
 * core mapped it (dbg_location.module_offset), looked up at offset - 1
 * unless ACTIVATION, as dbg_symbolize() does; each location's module is a
 * copy of MODULE.  *LOCS as for dbg_symbolize(). */
struct core_error *dbg_file_symbolize_offset(struct dbg_cache *cache, struct dbg_file *f,
					     const char *module, uint64_t module_offset,
					     bool activation, struct dbg_location **locs,
					     size_t *nlocs);

#endif
