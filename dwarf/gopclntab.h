/* The Go runtime's own symbol table, pclntab: function names and bounds,
 * frame sizes (pcsp), files and lines, inlining, as the runtime itself
 * reads them for its tracebacks (src/runtime/symtab.go, traceback.go).  A
 * Go binary keeps it when stripped (`-ldflags='-s -w'`).
 *
 * The parser reads bytes only: everything in them is untrusted, every read
 * is bounded, and a table that lies makes a lookup fail, never crash.
 * Supported: Go 1.16/1.17 (magic 0xfffffffa), 1.18/1.19 (0xfffffff0) and
 * 1.20 and later (0xfffffff1), little-endian. */
#ifndef DWARF_GOPCLNTAB_H
#define DWARF_GOPCLNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dbg_gotab;
struct dbg_session;

/* Parse the pclntab of LEN bytes at BYTES (borrowed: they must outlive the
 * table), which lie at address VADDR.  Addresses are those the bytes hold
 * (link-time ones when they come from a file; dbg_gotab_relocate moves
 * them).  TEXT is the module's text start (moduledata.text), used only when
 * the header has none (0 when unknown).  Returns NULL with *WHY (a static
 * string) when the magic is not one supported or the header lies. */
struct dbg_gotab *dbg_gotab_parse(const void *bytes, size_t len, uint64_t vaddr, uint64_t text,
				  const char **why);
void dbg_gotab_destroy(struct dbg_gotab *t);

/* Where the function data (go:func.*, which holds the inline trees) is:
 * LEN bytes at BYTES (borrowed) lying at address ADDR, and GOFUNC, the
 * address moduledata.gofunc holds (1.18 on: funcdata are offsets from it;
 * ignored before, where they are addresses).  Without it no inlined frame
 * is known. */
void dbg_gotab_set_funcdata(struct dbg_gotab *t, uint64_t gofunc, const void *bytes, size_t len,
			    uint64_t addr);

/* Add BIAS (run-time address - the table's) to every address given to and
 * returned by T from now on: a position-independent program's load bias. */
void dbg_gotab_relocate(struct dbg_gotab *t, uint64_t bias);

/* Go's version in T's layout: 116 (1.16/1.17), 118 (1.18/1.19), 120 (1.20
 * and later). */
int dbg_gotab_layout(const struct dbg_gotab *t);

/* The runtime's special functions (its funcID), the same values whatever
 * the Go version (the numbers the binary holds differ between versions and
 * are mapped by the function's name). */
enum dbg_gofuncid {
	DBG_GOFUNC_NORMAL,
	DBG_GOFUNC_ABORT,
	DBG_GOFUNC_ASMCGOCALL,
	DBG_GOFUNC_ASYNCPREEMPT,
	DBG_GOFUNC_CGOCALLBACK,
	DBG_GOFUNC_COROSTART,
	DBG_GOFUNC_DEBUGCALLV2,
	DBG_GOFUNC_GCBGMARKWORKER,
	DBG_GOFUNC_GOEXIT,
	DBG_GOFUNC_GOGO,
	DBG_GOFUNC_GOPANIC,
	DBG_GOFUNC_HANDLEASYNCEVENT,
	DBG_GOFUNC_MCALL,
	DBG_GOFUNC_MORESTACK,
	DBG_GOFUNC_MSTART,
	DBG_GOFUNC_PANICWRAP,
	DBG_GOFUNC_RT0_GO,
	DBG_GOFUNC_RUNFINQ,
	DBG_GOFUNC_RUNTIME_MAIN,
	DBG_GOFUNC_SIGPANIC,
	DBG_GOFUNC_SYSTEMSTACK,
	DBG_GOFUNC_SYSTEMSTACK_SWITCH,
	DBG_GOFUNC_WRAPPER,         /* generated code: method wrappers, hash/eq, deferreturn */
};

/* funcFlag bits. */
enum {
	DBG_GOFLAG_TOPFRAME = 1,    /* the top of a stack: goexit, mstart, rt0_go */
	DBG_GOFLAG_SPWRITE = 2,     /* writes SP: no unwinding past it */
	DBG_GOFLAG_ASM = 4,         /* assembly (1.21 on) */
};

/* One function of the table.  NAME is borrowed from the table's bytes. */
struct dbg_gofunc {
	uint64_t entry, end;        /* [entry, end): its code */
	const char *name;
	uint8_t funcid;             /* enum dbg_gofuncid */
	uint8_t flag;               /* DBG_GOFLAG_* */
	uint32_t index;             /* in the table, 0 .. nfunc-1 */
	uint32_t off;               /* private: its _func in the table */
};

/* The text the table covers, [*START, *END): its first function's entry
 * and its last one's end (moduledata's minpc, maxpc). */
void dbg_gotab_text(const struct dbg_gotab *t, uint64_t *start, uint64_t *end);

/* The program's data and bss, [*START, *END) (moduledata's noptrdata ..
 * enoptrbss), where the runtime's variables are; false when unknown. */
bool dbg_gotab_data(const struct dbg_gotab *t, uint64_t *start, uint64_t *end);

/* How many functions T has. */
size_t dbg_gotab_count(const struct dbg_gotab *t);
/* Function I of T (0 .. count-1), in address order. */
bool dbg_gotab_func_at(const struct dbg_gotab *t, size_t i, struct dbg_gofunc *f);
/* The function whose code holds PC (as given: pass pc-1 for a return
 * address, except in a frame that sigpanic interrupted). */
bool dbg_gotab_func(const struct dbg_gotab *t, uint64_t pc, struct dbg_gofunc *f);
/* The function named NAME exactly ("runtime.mcall"); a walk over the table. */
bool dbg_gotab_func_named(const struct dbg_gotab *t, const char *name, struct dbg_gofunc *f);

/* The stack pointer's offset at PC in F from its value at entry (pcsp:
 * the frame's size; 0 at the entry), as the runtime's funcspdelta. */
bool dbg_gotab_spdelta(const struct dbg_gotab *t, const struct dbg_gofunc *f, uint64_t pc,
		       int64_t *delta);

/* The file and line of PC in F (the innermost inlined level's position, as
 * the runtime's funcline1); *FILE borrowed from the table. */
bool dbg_gotab_line(const struct dbg_gotab *t, const struct dbg_gofunc *f, uint64_t pc,
		    const char **file, int *line);

/* One frame as the runtime's traceback prints it; strings borrowed from
 * the table. */
struct dbg_goframe {
	const char *function;
	const char *file;           /* "?" and line 0 when the table has none */
	int line;
	bool inlined;
	uint8_t funcid;             /* enum dbg_gofuncid */
};

/* The frames at PC in F (looked up as given, as dbg_gotab_func) as the
 * runtime's traceback prints them, innermost first: each inlined level (its
 * name from the inline tree, its file:line at the pc of the level inside
 * it), then F itself; at most MAX.  Returns how many. */
size_t dbg_gotab_frames(const struct dbg_gotab *t, const struct dbg_gofunc *f, uint64_t pc,
			struct dbg_goframe *out, size_t max);

/* The Go version ("go1.19.8") from the LEN bytes of a binary's
 * .go.buildinfo section (or any bytes holding it at a 16-byte boundary);
 * malloc'd (caller frees), NULL when none.  Before Go 1.18 the header
 * points at the string: READ (may be NULL) reads N bytes at address ADDR
 * of the program into BUF. */
char *dbg_go_buildinfo_version(const void *bytes, size_t len,
			       bool (*read)(void *ctx, uint64_t addr, void *buf, size_t n),
			       void *ctx);

/* The table of the Go program in the ELF file at PATH loaded at BIAS, found
 * by its section (.gopclntab, kept by `-ldflags=-s -w`), else in its
 * loadable segments, with the function data moduledata names, and its Go
 * version in *VERSION (may be NULL; malloc'd, caller frees, NULL when
 * unknown).  NULL for a file that is no Go program.  Each file (its path,
 * identity on disk and BIAS) is read once per process and its table kept
 * until the process ends. */
const struct dbg_gotab *dbg_gotab_for_file(const char *path, uint64_t bias, char **version);

/* The same for the session's executable, at its load bias: NULL for a
 * program that is not Go. */
const struct dbg_gotab *dbg_session_gotab(struct dbg_session *s, char **version);

#endif
