/* Internals shared by the dwarf/ files; not for other modules. */
#ifndef DWARF_INTERNAL_H
#define DWARF_INTERNAL_H

#include <elfutils/libdwfl.h>
#include <pthread.h>

#include "dwarf.h"

/* Symbol names read with pread from the file that libelf maps, rather
 * than through the mapping (dwarf/symnames.c): a walk over a whole table
 * through a window, single names aside.  Zeroed to begin. */
struct dbg_symnames {
	bool tried;                 /* to find and open the table */
	Elf *elf;                   /* whose string table is read */
	const char *mapped;         /* that table where libdwfl reads it */
	size_t size;
	int fd;                     /* the file, the table at OFFSET in it; -1: none */
	uint64_t offset;
	char *window;               /* the table's bytes [START, START + LEN) */
	size_t window_size;         /* the mapping's */
	size_t start, len, reads_left;
	bool window_failed;
	char *peek;                 /* a name read aside */
	size_t peek_cap;
};

/* One file's debug info, opened offline and kept for the whole batch. */
struct dbg_file {
	char *build_id;             /* hex; the cache key (or the path when unknown) */
	char *path;                 /* the ELF file */
	Dwfl *dwfl;                 /* offline session holding just this file */
	Dwfl_Module *mod;
	bool dwarf_tried;           /* DWARF is loaded on first use */
	bool has_dwarf;
	char *debuginfo;            /* where DWARF was found */
	struct dbg_memo *memo;      /* symbolization results by address */
	struct dbg_type_memo *types;
	struct dbg_symindex *symbols;   /* name -> symbol, built on first lookup */
	struct dbg_addrindex *addrs;    /* address -> sized global symbols, likewise */
	struct dbg_symnames names;      /* the names of the symbols addrs finds */
	struct dbg_prefix_matches *prefixes;   /* symbols by name prefix, as asked */
	size_t nprefixes, prefixes_cap;
	struct dbg_callsites *callsites;   /* DWARF call sites, indexed per CU on first use */
	struct dbg_param_memo *params;  /* formal parameters by address */
	struct dbg_funcmap *funcmap;    /* per CU: code address -> subprogram */
	struct dbg_cuindex *cus;        /* code address -> the units .debug_aranges omits */
	struct dbg_lines *lines;        /* line tables of the CUs in use */
	struct dbg_cache *cache;        /* that holds this file */
	bool tls_known;
	uint64_t tls_memsz, tls_align;
	bool debuginfod;            /* the DWARF came from a debuginfod server */
	int debuginfod_error;       /* errno of a failed debuginfod lookup, or 0 */
	const struct dbg_gotab *gotab;  /* a Go program's own table (gopclntab.h) */
	bool gotab_checked;
};

/* A decompressed copy of a debug file to write into the on-disk cache. */
struct dbg_pending_copy {
	int fd;                     /* the debug file */
	char *dir, *path;           /* the cache directory and the copy's path in it */
};

struct dbg_cache {
	struct dbg_file **files;
	size_t nfiles;
	struct dbg_pending_copy *copies;
	size_t ncopies, copies_cap;
	char *debuginfo_path;       /* the search path given to libdwfl */
	Dwfl_Callbacks offline_callbacks;   /* shared by every file's Dwfl */
	pthread_mutex_t lock;       /* recursive; held by every public entry that uses files */
};

/* A module's TLS block as the dynamic linker set it up (dwarf/tls.c). */
struct dbg_module_tls {
	bool tried;
	bool has_block;             /* the module has a PT_TLS */
	uint64_t image, filesz, memsz, align;   /* PT_TLS; image at its runtime address */
	uint64_t modid;             /* index in the DTV; 0 when unknown */
	uint64_t tp_offset;         /* static TLS: block = thread pointer - this
				       (variant I: + this); 0 unknown */
};

struct dbg_module_entry {
	struct dbg_module_info info;
	Dwfl_Module *mod;
	uint64_t bias;              /* runtime address - file address */
	struct dbg_file *file;      /* NULL when the file could not be opened */
	bool file_tried;
	bool debuginfod_warned;
	int runs_code;              /* an executable segment of the core is in
				       it: 0 not asked yet, 1 yes, -1 no */
	struct dbg_module_tls tls;
};

/* A function's entry by the address looked up (dbg_function_entry): every
 * frame asks for its callee's, and a pool's threads stand in the same few. */
#define DBG_ENTRY_MEMO 1024u
struct dbg_entry_memo {
	uint64_t pc;                /* the pc asked about + 1; 0: empty */
	uint64_t entry;
	bool activation;
	bool ok;
};

struct dbg_session {
	struct core *core;
	struct dbg_options opts;
	uint64_t binary_bias;       /* load bias of opts.binary in the core */
	struct dbg_cache *cache;
	bool own_cache;
	Dwfl_Callbacks callbacks;
	Dwfl *dwfl;
	bool attached;
	struct dbg_module_entry *modules;   /* sorted by start */
	size_t nmodules;
	char *symbol_name;          /* storage for dbg_symbol_name_at */
	struct dbg_tail_memo *tail_memo;   /* dbg_tail_calls results by frame pair */
	struct dbg_symcache *symcache;  /* argument pointers' "<symbol>" texts */
	struct dbg_args_out *args_out;  /* what dbg_frame_args lends */
	struct dbg_ptrmemo *call_targets;   /* a call site's target by symbol name */
	struct dbg_ptrmemo *entry_regs;     /* a DW_OP_entry_value's register */
	struct dbg_entry_memo entries[DBG_ENTRY_MEMO];   /* direct-mapped */
};

/* Hold the session's cache while its shared files are in use: sessions on
 * several threads may share one cache (a batch ingest), but a libdw handle
 * must be used by one thread at a time. */
void dbg_lock(struct dbg_session *s);
void dbg_unlock(struct dbg_session *s);

/* Whether the file at PATH is the executable the core ran, judged from what
 * the core saved (build-id, else ELF and program headers against the
 * auxiliary vector and NT_FILE); when it is not, a warning names both
 * build-ids and the difference.  *BIAS (may be NULL): its load bias. */
bool dbg_binary_matches(struct dbg_session *s, const char *path, uint64_t *bias);

/* The module defining symbol NAME (the executable first), with the
 * symbol's runtime address (for STT_TLS, *TLS set: its offset in the
 * module's TLS block) and size; NULL when no module does.  Hold the lock. */
struct dbg_module_entry *dbg_symbol_module(struct dbg_session *s, const char *name, uint64_t *addr,
					   uint64_t *size, bool *tls);

/* Whether M is a copy of a module the process runs, mapped only to be
 * read (as Rust's backtrace printer maps the program and libc's debug file):
 * another module has its build-id and an executable segment of the core,
 * M none.  A copy's symbols are not the process's (dwarf/funcstart.c). */
bool dbg_module_is_copy(struct dbg_session *s, struct dbg_module_entry *m);

/* Report the shared libraries of a core without NT_FILE from the dynamic
 * linker's list (dwarf/linkmap.c), after libdwfl reported the rest. */
void dbg_report_link_map(struct dbg_session *s);

/* A core without NT_FILE learns the read-only segments of the modules
 * reported (core_mapped_learn()), so that reads there come from the files. */
struct core_error *dbg_learn_unlisted(struct dbg_session *s);

/* The objects the core lists itself with their build-ids (core->modules:
 * a minidump's module list) that nothing reported yet, at their place:
 * session_find_elf() then finds each file as BINARY, at its path (under
 * --sysroot), or by its build-id in the debug directories and debuginfod. */
void dbg_report_listed(struct dbg_session *s);

/* The module entry holding runtime address PC, or NULL. */
struct dbg_module_entry *dbg_module_for(struct dbg_session *s, uint64_t pc);

/* The cached debug-info file of a module (opened on first use); NULL if none. */
struct dbg_file *dbg_module_file(struct dbg_session *s, struct dbg_module_entry *m);

/* Cache: the file for BUILD_ID (or PATH when BUILD_ID is NULL), opened once. */
struct dbg_file *dbg_cache_file(struct dbg_cache *cache, const char *build_id, const char *path);

/* DIR/.build-id/NN/REST.debug, where debug files are kept by BUILD_ID
 * (hex); malloc'd, NULL when BUILD_ID is too short or memory ran out. */
char *dbg_build_id_file(const char *dir, const char *build_id);
/* The first readable build-id file under an absolute directory of the
 * search path SEARCH (libdwfl's form); malloc'd, NULL when none is. */
char *dbg_build_id_on_path(const char *search, const char *build_id);

/* The decompressed copy of the debug file with BUILD_ID (hex) in the
 * on-disk cache (dwarf/inflated.c): its path, which may not exist, and the
 * cache's directory in *DIR (both malloc'd); NULL and *DIR NULL when the
 * cache is off or BUILD_ID is NULL. */
char *dbg_inflated_path(const char *build_id, char **dir);

/* Load F's DWARF on first use; true when it has any. */
bool dbg_file_has_dwarf(struct dbg_file *f);

/* F's Go table (gopclntab.h), at F's offline addresses; NULL when F is no
 * Go program. */
const struct dbg_gotab *dbg_file_gotab(struct dbg_file *f);

/* Where F's DWARF is (or would be found), without loading it; NULL if none.
 * Borrowed from F. */
const char *dbg_file_debuginfo_path(struct dbg_cache *cache, struct dbg_file *f);

/* dwfl_module_addrinfo(F's module, ADDR, OFF, SYM, NULL, NULL, NULL), with
 * the same answer, through an index of F's symbols by address: libdwfl
 * scans the whole symbol table for each address (16 M instructions an
 * address in a C++ program of 67,000 symbols). */
const char *dbg_file_addrinfo(struct dbg_file *f, GElf_Addr addr, GElf_Off *off, GElf_Sym *sym);

/* Symbolize file address ADDR in F (memoised). LOCS are copies the caller frees. */
struct core_error *dbg_file_symbolize(struct dbg_file *f, uint64_t addr, bool activation,
				      struct dbg_location **locs, size_t *nlocs);

/* The unit (CU DIE) whose code holds offline address ADDR of F, for units
 * .debug_aranges lists (libdwfl's dwfl_module_addrdie) and for those it
 * does not (their own ranges, dwarf/cuindex.c); *DBIAS as
 * dwfl_module_addrdie's.  Borrowed from F; NULL when no unit holds ADDR. */
Dwarf_Die *dbg_file_addrdie(struct dbg_file *f, uint64_t addr, Dwarf_Addr *dbias);
void dbg_cuindex_destroy(struct dbg_cuindex *x);

/* The scopes at offline address ADDR of F, innermost first, following the
 * concrete chain of inlined instances (not their abstract definitions):
 * *SCOPES is malloc'd (caller frees), *CUDIE and *DBIAS (DWARF address =
 * offline address - DBIAS) borrowed from F.  Returns their number, 0 when
 * no DWARF covers ADDR. */
int dbg_file_scopes(struct dbg_file *f, uint64_t addr, Dwarf_Die **cudie, Dwarf_Addr *dbias,
		    Dwarf_Die **scopes);

/* The subprogram DIE of F's CU CUDIE whose code holds DWARF address ADDR,
 * among those at the CU's level and in its namespaces (each CU is indexed
 * once).  False when none does (a lambda's operator(), inside a class). */
bool dbg_funcmap_find(struct dbg_file *f, Dwarf_Die *cudie, Dwarf_Addr addr, Dwarf_Die *sub);

void dbg_funcmap_destroy(struct dbg_funcmap *fm);

/* Line tables of F's units (dwarf/lines.c), outside F's Dwarf and bounded.
 * At: the file and *LINE of the row for DWARF address ADDR in unit CUDIE.
 * File: entry INDEX of the unit's file table.  NULL when there is none;
 * the names are valid until the next call. */
const char *dbg_lines_at(struct dbg_file *f, Dwarf_Die *cudie, Dwarf_Addr addr, int *line);
const char *dbg_lines_file(struct dbg_file *f, Dwarf_Die *cudie, Dwarf_Word index);
void dbg_lines_destroy(struct dbg_lines *lines);
/* Rows of earlier units kept (tests: any budget; false on out-of-memory). */
bool dbg_lines_set_budget(struct dbg_file *f, size_t rows);
void dbg_memo_destroy(struct dbg_memo *memo);
void dbg_param_memo_destroy(struct dbg_param_memo *memo);
void dbg_symcache_destroy(struct dbg_symcache *cache);
void dbg_args_out_destroy(struct dbg_args_out *out);
/* dwfl_module_getsym_info, the name read through the window when it can
 * be, for walks over the table: valid until the next call, or
 * dbg_symnames_close. */
const char *dbg_symnames_get(struct dbg_symnames *names, Dwfl_Module *mod, int i, GElf_Sym *sym,
			     GElf_Addr *value);
/* The same, the name's first N bytes at least, read aside so that a name
 * dbg_symnames_get gave stays valid: until the next peek. */
const char *dbg_symnames_peek(struct dbg_symnames *names, Dwfl_Module *mod, int i, size_t n,
			      GElf_Sym *sym, GElf_Addr *value);
/* The same, the whole name read aside: until the next call. */
const char *dbg_symnames_name(struct dbg_symnames *names, Dwfl_Module *mod, int i, GElf_Sym *sym,
			      GElf_Addr *value);
void dbg_symnames_close(struct dbg_symnames *names);

void dbg_symindex_destroy(struct dbg_symindex *index);
void dbg_prefix_matches_destroy(struct dbg_prefix_matches *v, size_t n);
void dbg_addrindex_destroy(struct dbg_addrindex *index);
void dbg_type_memo_destroy(struct dbg_type_memo *memo);
void dbg_callsites_destroy(struct dbg_callsites *cs);
void dbg_tail_memo_destroy(struct dbg_tail_memo *memo);

/* Whether the function entered at runtime address ENTRY may call itself
 * through tail calls, as gdb's func_verify_no_selftailcall decides before
 * it trusts any of the function's entry values: true too when a tail call
 * on the way, or a function it reaches, cannot be resolved without a frame
 * (dwarf/callsites.c; memoised per session). */
bool dbg_tail_calls_itself(struct dbg_session *s, uint64_t entry);

/* What libdwfl's find_debuginfo callbacks do (dwarf/inflated.c): the
 * decompressed copy from CACHE's directory on disk, else the standard search
 * along CACHE's path (NULL: not known), for the module of F (NULL: a
 * session's module).  A compressed debug file found is copied decompressed
 * when the cache closes. */
int dbg_find_debuginfo(Dwfl_Module *mod, struct dbg_file *f, struct dbg_cache *cache,
		       const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		       char **debuginfo_file_name);

/* Write the decompressed copies of the debug files found (each once). */
void dbg_cache_write_copies(struct dbg_cache *cache);

/* Whether the standard search's local part could find a debug file for MOD
 * (dwarf/debugpath.c): false only when none of the files it tries exists. */
bool dbg_local_debuginfo_possible(const char *search, Dwfl_Module *mod, const char *file_name,
				  const char *debuglink, GElf_Word debuglink_crc);

/* Whether a debuginfod server is set (DEBUGINFOD_URLS). */
bool dbg_debuginfod_enabled(void);

/* debuginfod (dwarf/debuginfod.c).  Attach: give DWFL a debuginfod client
 * that shows a progress line on a terminal (when DEBUGINFOD_URLS is set).
 * Result: after the standard lookup returned FD for F (NULL: a module of a
 * session), note a failed server lookup, or name a file a server supplied
 * (*DEBUGINFO_FILE_NAME, malloc'd) and mark F as fetched.  Warn: one warning on the session's core
 * for a module whose server lookup failed other than "not found". */
void dbg_debuginfod_attach(Dwfl *dwfl);
void dbg_debuginfod_result(struct dbg_file *f, int fd, char **debuginfo_file_name);

/* The path of the file open at FD (/proc/self/fd), malloc'd; NULL when
 * unknown. */
char *dbg_fd_path(int fd);
void dbg_debuginfod_warn(struct dbg_session *s, struct dbg_module_entry *m);

/* Ask the debuginfod servers for the debug file of BUILD_ID (hex), with
 * the progress line on a terminal: an open fd and its path (*PATH,
 * malloc'd), or -errno (-ENOSYS when no server is set). */
int dbg_debuginfod_find(const char *build_id, char **path);

/* FNV-1a hash of a name (of its first LEN bytes), for the name indexes. */
size_t dbg_name_hash(const char *s);
size_t dbg_name_hash_n(const char *s, size_t len);

/* Hex string of a build-id; malloc'd, NULL when empty. */
char *dbg_hex(const unsigned char *bytes, size_t len);

/* Demangle a C++ or Rust (legacy, v0) symbol, without its ELF version and
 * an LLVM ".llvm.N" suffix (dwarf/demangle.c); malloc'd copy of NAME
 * without its version when it is not mangled.  NULL: out of memory. */
char *dbg_demangle(const char *name);

/* Rust (dwarf/rustnames.c).  Is: whether DIE is in a Rust unit.  Name: a
 * Rust subprogram's or inlined instance's name as gdb gives it, from the
 * namespaces and types its declaration is in, with its template arguments
 * ("main::settle<main::main::{closure#2}::{closure_env#0}>"); malloc'd,
 * NULL when DWARF cannot say. */
bool dbg_die_is_rust(Dwarf_Die *die);
char *dbg_rust_function_name(Dwarf_Die *die);

/* Function starts (dwarf/funcstart.c).  A function's entry: DW_AT_entry_pc,
 * else DW_AT_low_pc, else the start of its first range in DWARF order (not
 * its lowest address: GCC's NAME.cold part often lies below the entry). */
bool dbg_die_entry(Dwarf_Die *die, Dwarf_Addr *entry);
/* Length of the name of the function that symbol NAME is a part of
 * ("post_entry" of "post_entry.cold"); strlen(NAME) when it is no part. */
size_t dbg_symbol_part_base(const char *name);
/* The entry (offline address) of the function holding offline address ADDR
 * of F: from DWARF, else from the symbol table (a part's whole function). */
bool dbg_file_function_entry(struct dbg_file *f, uint64_t addr, uint64_t *entry);
/* The same at runtime PC of S (looked up at pc-1 unless ACTIVATION). */
bool dbg_function_entry(struct dbg_session *s, uint64_t pc, bool activation, uint64_t *entry);
/* Symbol NAME of F: its offline address. */
bool dbg_file_find_symbol(struct dbg_file *f, const char *name, uint64_t *addr);

/* DIE's name, also through DW_AT_abstract_origin / DW_AT_specification
 * (borrowed from libdw), or NULL. */
const char *dbg_die_name(Dwarf_Die *die);

/* DIE's attribute NAME holding a location (DW_AT_location, DW_AT_frame_base),
 * also through DW_AT_abstract_origin, into *ATTR.  A DWARF 4 unit may hold
 * one as a block (Go's do, "1 byte block: 9c"), which gdb reads as an
 * expression but libdw takes for no location: such a block whose bytes read
 * the same as an expression is given to libdw as one (DW_FORM_exprloc). */
bool dbg_location_attr(Dwarf_Die *die, unsigned name, Dwarf_Attribute *attr);

/* Whether TAG is a struct, class or union (dwarf/layout.c). */
bool dbg_is_record(int tag);

/* The type of DIE (a variable, member or inheritance entry), typedefs and
 * qualifiers peeled, into TYPE (dwarf/layout.c). */
bool dbg_die_type(Dwarf_Die *die, Dwarf_Die *type);

#endif
