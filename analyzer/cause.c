/* The cause of a crash, kind by kind (DESIGN.md "JSON", `cause`).  Each
 * kind is decided by evidence the core holds: the fault address against
 * the crashing thread's stack mapping and the first mapping, the pc
 * against the executable mappings, the faulting instruction (Capstone) and
 * DWARF for what it accessed, glibc's abort message, the frames of
 * std::terminate, __stack_chk_fail and malloc_printerr, and the C++
 * exception object.  Without the evidence a kind needs, the cause is the
 * plain signal's (SIGSEGV: bad_access, SIGABRT: abort, ...). */
#include "cause.h"
#include "insn.h"
#include "waitgraph.h"

#include <elf.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/strlist.h"

enum {
	STACK_GAP = 1 << 20,        /* the kernel's stack_guard_gap (256 pages) */
	STACK_REACH = 64 << 10,     /* how far below sp a frame's accesses go */
	EXPR_MAX = 256,
	TYPE_NAME_MAX = 1024,
	WHAT_MAX = 4096,
	BASE_CHAIN_MAX = 32,
};

/* libstdc++ (libsupc++/unwind-cxx.h, x86_64 LP64): the __cxa_exception
 * header lies just before the thrown object; its exceptionType is its first
 * word, its unwindHeader (an _Unwind_Exception, 16-aligned) is at 80, and
 * the header is 112 bytes.  A dependent exception (std::rethrow_exception)
 * has the same shape, its first word the primary exception's object.
 * __cxa_eh_globals begins with caughtExceptions, the header std::terminate
 * finds, which __cxa_throw and __cxa_call_terminate push before it runs. */
enum {
	CXA_TYPE = 0,
	CXA_UNWIND_HEADER = 80,
	CXA_HEADER_SIZE = 112,
	TYPE_INFO_NAME = 8,         /* std::type_info { vptr; const char *__name; } */
	SI_TYPE_INFO_BASE = 16,     /* __si_class_type_info: __base_type after them */
	EXCEPTION_MSG = 8,          /* std::logic_error/runtime_error: _M_msg after the vptr */
	COW_REP_LENGTH = 24,        /* __cow_string: _Rep {length, capacity, refcount} before the chars */
};

/* exception_class: the 8 characters "GNUCC++\0" (a dependent exception's
 * end in 1) taken as one big-endian number, as libstdc++ builds it. */
static const uint64_t CXX_CLASS = 0x474e5543432b2b00;
static const uint64_t CXX_DEPENDENT_CLASS = 0x474e5543432b2b01;

struct cause_ctx {
	struct core *core;
	struct dbg_session *s;          /* NULL: no debug information */
	struct analysis *an;
	struct an_cause *cause;
	const struct an_thread *thread; /* the crashing one, or NULL */
	/* The crash spoken of: the core's signal on the crashing thread, or
	 * the fault a crash handler caught (an_caught) and the frames it
	 * interrupted. */
	bool has_signal, has_code, has_fault;
	int signo, code;
	const char *signal_name, *code_name;
	uint64_t fault;
	const uint64_t *regs;           /* thread registers at the fault */
	const struct an_frame *frames;
	size_t nframes;
	int32_t tid;
	uint64_t pc, sp;
	struct an_insn insn;            /* the instruction at pc (fault_insn) */
	int insn_state;                 /* 0: not decoded yet, 1: decoded, -1: none */
};

/* The crashing thread's instruction at its pc, decoded once; NULL when
 * there is no thread or no instruction there. */
static const struct an_insn *fault_insn(struct cause_ctx *c)
{
	if (c->insn_state == 0)
		c->insn_state = c->thread && an_insn_decode(c->core, c->s, c->pc, 16, &c->insn, 1) == 1
			? 1 : -1;
	return c->insn_state > 0 ? &c->insn : NULL;
}

static bool set_summary(struct an_cause *c, enum an_cause_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool set_summary(struct an_cause *c, enum an_cause_kind kind, const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return false;
	free(c->summary);
	c->summary = text;
	c->kind = kind;
	return true;
}

/* ---- frames --------------------------------------------------------- */

/* NAME without its parameter list and glibc's internal alias prefix. */
static bool name_is(const char *name, const char *want)
{
	if (!name)
		return false;
	if (strncmp(name, "__GI_", 5) == 0)
		name += 5;
	size_t n = strlen(want);
	return strncmp(name, want, n) == 0 && (name[n] == '\0' || name[n] == '(');
}

static bool name_in(const char *name, const char *const *names)
{
	for (; *names; names++)
		if (name_is(name, *names))
			return true;
	return false;
}

/* The index of the innermost frame named one of NAMES, or -1. */
static long frame_named(const struct cause_ctx *c, const char *const *names)
{
	for (size_t i = 0; i < c->nframes; i++)
		if (name_in(c->frames[i].function, names))
			return (long)i;
	return -1;
}

/* The function that called frame I (the next frame with a name), or NULL. */
static const char *caller_of(const struct cause_ctx *c, long i)
{
	if (i < 0 || (size_t)i >= c->nframes)
		return NULL;
	const char *self = c->frames[i].function;
	for (size_t k = (size_t)i + 1; k < c->nframes; k++)
		if (c->frames[k].function && !(self && name_is(c->frames[k].function, self)))
			return c->frames[k].function;
	return NULL;
}

static const char *innermost_function(const struct cause_ctx *c)
{
	return c->nframes ? c->frames[0].function : NULL;
}

/* " in F" for the summaries, or "". */
static const char *in_function(const char *f, char *buf, size_t len)
{
	if (!f)
		return "";
	snprintf(buf, len, " in %s", f);
	return buf;
}

/* ---- mappings ------------------------------------------------------- */

/* The crashing thread's stack: the writable mapping holding sp, else (sp
 * ran out of it) the first writable mapping above sp within the gap. */
static const struct core_segment *stack_mapping(const struct core *core, uint64_t sp)
{
	const struct core_segment *seg = core_find_segment(core, sp);
	if (seg && (seg->flags & PF_W))
		return seg;
	for (size_t i = 0; i < core->nsegments; i++) {
		const struct core_segment *s = &core->segments[i];
		if (s->vaddr <= sp)
			continue;
		if (s->vaddr - sp > STACK_GAP + STACK_REACH)
			return NULL;
		if (s->flags & PF_W)
			return s;
	}
	return NULL;
}

/* The guard below STACK: a mapping without access that ends where the
 * stack begins (glibc's guard of a thread's stack), else the kernel's gap
 * below a stack that grows down, up to the mapping beneath. */
static void stack_guard(const struct core *core, const struct core_segment *stack, uint64_t *lo,
			bool *page)
{
	size_t i = (size_t)(stack - core->segments);
	const struct core_segment *below = i > 0 ? &core->segments[i - 1] : NULL;
	*page = below && below->vaddr + below->memsz == stack->vaddr &&
		!(below->flags & (PF_R | PF_W | PF_X));
	if (*page) {
		*lo = below->vaddr;
		return;
	}
	*lo = stack->vaddr > STACK_GAP ? stack->vaddr - STACK_GAP : 0;
	if (below && below->vaddr + below->memsz > *lo)
		*lo = below->vaddr + below->memsz;
}

static const char *size_text(uint64_t bytes, char *buf, size_t len)
{
	if (bytes % (1 << 20) == 0)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(bytes >> 20));
	else
		snprintf(buf, len, "%llu KiB", (unsigned long long)(bytes >> 10));
	return buf;
}

/* Whose stack STACK is: the main thread's holds the auxiliary vector's
 * strings (AT_EXECFN). */
static const char *stack_owner(const struct cause_ctx *c, const struct core_segment *stack,
			       char *buf, size_t len)
{
	uint64_t execfn = c->core->auxv.present ? c->core->auxv.execfn : 0;
	if (execfn >= stack->vaddr && execfn - stack->vaddr < stack->memsz)
		return "the main thread's";
	snprintf(buf, len, "thread %d's", c->tid);
	return buf;
}

static int decide_stack_overflow(struct cause_ctx *c)
{
	const struct core_segment *stack = stack_mapping(c->core, c->sp);
	if (!stack)
		return 0;
	uint64_t lo;
	bool page;
	stack_guard(c->core, stack, &lo, &page);
	uint64_t fault = c->fault;
	bool fault_in_guard = c->has_fault && fault >= lo && fault < stack->vaddr &&
			      fault + STACK_REACH >= c->sp;
	/* sp alone is the evidence when the kernel could not say where the
	 * fault was (it failed to push the signal frame: SI_KERNEL). */
	bool sp_in_guard = !c->has_fault && c->sp >= lo && c->sp < stack->vaddr;
	if (!fault_in_guard && !sp_in_guard)
		return 0;
	char h[32], hs[32], owner[64], size[32];
	const char *where = page ? "in the guard page" : "in the guard gap";
	const char *whose = stack_owner(c, stack, owner, sizeof(owner));
	size_text(stack->memsz, size, sizeof(size));
	bool ok = fault_in_guard
		? set_summary(c->cause, AN_CAUSE_STACK_OVERFLOW,
			      "fault at %s %s below %s stack (%s, sp %s)", base_hex(h, fault), where,
			      whose, size, base_hex(hs, c->sp))
		: set_summary(c->cause, AN_CAUSE_STACK_OVERFLOW,
			      "sp %s %s below %s stack (%s)", base_hex(hs, c->sp), where, whose, size);
	return ok ? 1 : -1;
}

/* The return address at sp when the bad pc was reached by a call: a word
 * in executable memory just after a call instruction.  (The unwinder has
 * no CFI for a pc in no module, so the caller is read here.) */
static bool call_return_address(struct cause_ctx *c, uint64_t *ra)
{
	static const size_t call_sizes[] = { 2, 3, 5, 6, 7 };
	if (!core_read_u64(c->core, c->sp, ra) || !core_is_executable(c->core, *ra))
		return false;
	for (size_t i = 0; i < sizeof(call_sizes) / sizeof(call_sizes[0]); i++) {
		struct an_insn insn;
		if (*ra >= call_sizes[i] &&
		    an_insn_decode(c->core, c->s, *ra - call_sizes[i], call_sizes[i], &insn, 1) == 1 &&
		    insn.size == call_sizes[i] && strcmp(insn.mnemonic, "call") == 0)
			return true;
	}
	return false;
}

/* The function holding return address RA, demangled (malloc'd), or NULL. */
static char *function_at(struct cause_ctx *c, uint64_t ra)
{
	struct dbg_location *locs;
	size_t n;
	if (!c->s)
		return NULL;
	struct core_error *err = dbg_symbolize(c->s, ra, false, &locs, &n);
	if (err) {
		core_error_destroy(err);
		return NULL;
	}
	char *name = n && locs[0].function ? strdup(locs[0].function) : NULL;
	dbg_locations_free(locs, n);
	return name;
}

static int decide_bad_jump(struct cause_ctx *c)
{
	if (!c->thread || core_is_executable(c->core, c->pc))
		return 0;
	uint64_t ra;
	char *from = call_return_address(c, &ra) ? function_at(c, ra) : NULL;
	char h[32], hr[32];
	bool ok = from ? set_summary(c->cause, AN_CAUSE_BAD_JUMP,
				     "pc %s is in no executable mapping, called from %s (return address %s)",
				     base_hex(h, c->pc), from, base_hex(hr, ra))
		       : set_summary(c->cause, AN_CAUSE_BAD_JUMP, "pc %s is in no executable mapping",
				     base_hex(h, c->pc));
	free(from);
	return ok ? 1 : -1;
}

/* What the faulting instruction's memory operand tells: how it accessed
 * memory, when DWARF says through which variable's member, and the value
 * of the pointer it went through (its base register). */
struct fault_access {
	const char *access;         /* "read", "write" or NULL */
	bool has_base;              /* base_value known */
	uint64_t base_value;
	char expr[EXPR_MAX];
};

/* The access through a register no variable is in, when the register was
 * loaded from a member of what a variable points to: "s->next->len".
 * DWARF says which variable the load's base register held at the load,
 * or at the pc while that register kept its value. */
static void describe_loaded_access(struct cause_ctx *c, const struct an_insn_op *op,
				   struct fault_access *fa)
{
	uint64_t start, end;
	struct an_load load;
	if (!dbg_function_part(c->s, c->pc, &start, &end) ||
	    !an_insn_last_load(c->core, c->s, start, end, c->pc, op->base, &load))
		return;
	if (load.base_kept &&
	    dbg_loaded_access(c->s, c->pc, load.base, (uint64_t)load.disp, (uint64_t)op->disp,
			      fa->expr, sizeof(fa->expr)))
		return;
	dbg_loaded_access(c->s, load.address, load.base, (uint64_t)load.disp, (uint64_t)op->disp,
			  fa->expr, sizeof(fa->expr));
}

static void describe_fault_access(struct cause_ctx *c, uint64_t fault, struct fault_access *fa)
{
	const struct an_insn *insn = fault_insn(c);
	fa->access = NULL;
	fa->has_base = false;
	fa->expr[0] = '\0';
	if (!insn)
		return;
	bool exact;
	const struct an_insn_op *op = an_insn_mem_operand(insn, c->regs, fault, &exact);
	if (!op)
		return;
	fa->access = op->write ? "write" : op->read ? "read" : NULL;
	if (!exact)
		return;
	fa->has_base = an_insn_base_value(insn, op, c->regs, &fa->base_value);
	if (c->s && op->base != AN_INSN_NONE && op->base != AN_INSN_PC && op->index == AN_INSN_NONE &&
	    !dbg_register_access(c->s, c->pc, op->base, (uint64_t)op->disp, fa->expr,
				 sizeof(fa->expr)))
		describe_loaded_access(c, op, fa);
}

/* Linux maps nothing below vm.mmap_min_addr (64 KiB by default): a fault
 * there with no decoded instruction to say more is a small offset from NULL. */
#define NULL_PAGE_LIMIT 0x10000u

/* A NULL dereference is a fault below the first mapping through a NULL
 * pointer: the instruction's base register held 0.  A wild pointer below
 * the first mapping (0x41414141 under a PIE) is not one. */
static bool through_null(uint64_t fault, const struct fault_access *fa)
{
	if (fa->has_base)
		return fa->base_value == 0;
	return fault < NULL_PAGE_LIMIT;
}

/* The address the fault was at: the signal's, else (qemu-user's cores
 * carry no NT_SIGINFO) the one the faulting instruction's memory operand
 * names in the thread's registers. */
static bool fault_address(struct cause_ctx *c, uint64_t *fault)
{
	if (c->has_fault) {
		*fault = c->fault;
		return true;
	}
	const struct an_insn *insn = fault_insn(c);
	return insn && an_insn_access_address(insn, c->regs, fault);
}

static int decide_null_dereference(struct cause_ctx *c)
{
	uint64_t fault;
	if (!fault_address(c, &fault) || c->core->nsegments == 0 ||
	    fault >= c->core->segments[0].vaddr)
		return 0;
	struct fault_access fa;
	describe_fault_access(c, fault, &fa);
	if (!through_null(fault, &fa))
		return 0;
	c->cause->access = fa.access;
	if (fa.expr[0] && !(c->cause->expression = strdup(fa.expr)))
		return -1;
	uint64_t off = fault;
	char at[48], h[32];
	if (off)
		snprintf(at, sizeof(at), "NULL + %s", base_hex(h, off));
	else
		snprintf(at, sizeof(at), "NULL");
	return set_summary(c->cause, AN_CAUSE_NULL_DEREFERENCE, "%s%s%s at %s",
			   fa.access ? fa.access : "access", fa.expr[0] ? " of " : "", fa.expr,
			   at) ? 1 : -1;
}

static int decide_bad_access(struct cause_ctx *c)
{
	char h[32], fn[512], code[48] = "";
	if (c->code_name)
		snprintf(code, sizeof(code), " (%s)", c->code_name);
	const char *in = in_function(innermost_function(c), fn, sizeof(fn));
	uint64_t fault;
	if (!fault_address(c, &fault)) {
		const struct an_insn *insn = fault_insn(c);
		bool decoded = insn != NULL;
		return set_summary(c->cause, AN_CAUSE_BAD_ACCESS, "%s%s without a fault address%s%s%s%s",
				   c->signal_name ? c->signal_name : "signal", code,
				   decoded ? " at `" : "", decoded ? insn->text : "",
				   decoded ? "`" : "", in) ? 1 : -1;
	}
	struct fault_access fa;
	describe_fault_access(c, fault, &fa);
	c->cause->access = fa.access;
	if (fa.expr[0] && !(c->cause->expression = strdup(fa.expr)))
		return -1;
	return set_summary(c->cause, AN_CAUSE_BAD_ACCESS, "%s%s%s at %s%s%s",
			   fa.access ? fa.access : "access", fa.expr[0] ? " of " : "", fa.expr,
			   base_hex(h, fault), code, in) ? 1 : -1;
}

static int decide_memory_fault(struct cause_ctx *c)
{
	int r = decide_stack_overflow(c);
	if (r == 0)
		r = decide_bad_jump(c);
	if (r == 0)
		r = decide_null_dereference(c);
	if (r == 0)
		r = decide_bad_access(c);
	return r;
}

static int decide_illegal_instruction(struct cause_ctx *c)
{
	if (c->thread && !core_is_executable(c->core, c->pc))
		return decide_bad_jump(c);
	const struct an_insn *insn = fault_insn(c);
	bool decoded = insn != NULL;
	char h[32], fn[512], code[48] = "";
	if (c->code_name)
		snprintf(code, sizeof(code), " (%s)", c->code_name);
	return set_summary(c->cause, AN_CAUSE_ILLEGAL_INSTRUCTION, "%s%s%s at %s%s%s",
			   decoded ? "`" : "illegal instruction", decoded ? insn->text : "",
			   decoded ? "`" : "", base_hex(h, c->pc), code,
			   in_function(innermost_function(c), fn, sizeof(fn))) ? 1 : -1;
}

static int decide_arithmetic(struct cause_ctx *c)
{
	static const char *const what[] = {
		[FPE_INTDIV] = "integer divide by zero", [FPE_INTOVF] = "integer overflow",
		[FPE_FLTDIV] = "floating-point divide by zero", [FPE_FLTOVF] = "floating-point overflow",
		[FPE_FLTUND] = "floating-point underflow", [FPE_FLTRES] = "inexact floating-point result",
		[FPE_FLTINV] = "invalid floating-point operation",
		[FPE_FLTSUB] = "subscript out of range",
	};
	int code = c->code;
	const char *w = c->has_code && code > 0 && (size_t)code < sizeof(what) / sizeof(what[0])
		? what[code] : NULL;
	const struct an_insn *insn = fault_insn(c);
	bool decoded = insn != NULL;
	char fn[512];
	return set_summary(c->cause, AN_CAUSE_ARITHMETIC, "%s%s%s%s%s",
			   w ? w : "arithmetic exception (SIGFPE)", decoded ? " at `" : "",
			   decoded ? insn->text : "", decoded ? "`" : "",
			   in_function(innermost_function(c), fn, sizeof(fn))) ? 1 : -1;
}

/* ---- the C++ exception being thrown --------------------------------- */

static bool module_of(struct dbg_session *s, uint64_t addr, size_t *index)
{
	for (size_t i = 0; i < dbg_module_count(s); i++) {
		const struct dbg_module_info *m = dbg_module_get(s, i);
		if (addr >= m->start && addr < m->end) {
			*index = i;
			return true;
		}
	}
	return false;
}

/* __cxa_eh_globals of the thread whose thread pointer is TP, from the
 * code of __cxa_get_globals(), which computes it: a dynamic TLS access
 * (`lea rdi, [rip + tls_index]; call __tls_get_addr`, then an added
 * offset: the variable's offset in the module's block is the tls_index's
 * second word, relocated in the core, plus that offset) or a static one
 * (`mov rax, fs:[0]`, then an added offset). */
static bool eh_globals_from_code(struct cause_ctx *c, uint64_t tp, uint64_t *addr)
{
	uint64_t fn, size;
	if (!dbg_find_symbol(c->s, "__cxa_get_globals", &fn, &size))
		return false;
	struct an_insn insn[16];
	size_t n = an_insn_decode(c->core, c->s, fn, size && size < 96 ? size : 96, insn, 16);
	uint64_t tls_index = 0;
	int64_t extra = 0;
	bool called = false, from_tp = false;
	for (size_t i = 0; i < n; i++) {
		const struct an_insn *in = &insn[i];
		const struct an_insn_op *a = &in->ops[0], *b = &in->ops[1];
		bool two = in->nops == 2;
		if (strcmp(in->mnemonic, "ret") == 0)
			break;
		if (strcmp(in->mnemonic, "call") == 0)
			called = true;
		else if (two && strcmp(in->mnemonic, "lea") == 0 && a->type == AN_OP_REG &&
			 a->reg == 5 && b->type == AN_OP_MEM && b->base == AN_INSN_PC && !called)
			tls_index = in->address + in->size + (uint64_t)b->disp;
		else if (two && strcmp(in->mnemonic, "mov") == 0 && a->type == AN_OP_REG &&
			 a->reg == 0 && b->type == AN_OP_MEM && b->segment && b->base == AN_INSN_NONE &&
			 b->index == AN_INSN_NONE && b->disp == 0)
			from_tp = true;
		else if (two && strcmp(in->mnemonic, "add") == 0 && a->type == AN_OP_REG &&
			 a->reg == 0 && b->type == AN_OP_IMM)
			extra += b->imm;
		else if (two && strcmp(in->mnemonic, "lea") == 0 && a->type == AN_OP_REG &&
			 a->reg == 0 && b->type == AN_OP_MEM && b->base == 0 &&
			 b->index == AN_INSN_NONE && !b->segment)
			extra += b->disp;
	}
	if (from_tp) {
		*addr = tp + (uint64_t)extra;
		return true;
	}
	uint64_t offset;
	struct dbg_tls_var var = { .size = 16 };
	if (!tls_index || !called || !module_of(c->s, fn, &var.module) ||
	    !core_read_u64(c->core, tls_index + 8, &offset))
		return false;
	var.offset = offset + (uint64_t)extra;
	const char *why;
	return dbg_tls_address(c->s, &var, tp, addr, &why) == DBG_TLS_ADDRESS;
}

/* The thread's __cxa_eh_globals: libstdc++'s (anonymous)::eh_globals when
 * a symbol table names it, else through __cxa_get_globals's code. */
static bool eh_globals_address(struct cause_ctx *c, uint64_t *addr)
{
	/* A core without the thread pointer: glibc's list of threads gave it. */
	uint64_t tp = c->thread->has_tp ? c->thread->tp : c->thread->tls_tp;
	if (!tp)
		return false;
	struct dbg_tls_var var;
	const char *why;
	if (dbg_find_tls_symbol(c->s, "_ZN12_GLOBAL__N_110eh_globalsE", &var) &&
	    dbg_tls_address(c->s, &var, tp, addr, &why) == DBG_TLS_ADDRESS)
		return true;
	if (eh_globals_from_code(c, tp, addr))
		return true;
	/* aarch64: __cxa_get_globals resolves a TLS descriptor. */
	uint64_t fn, size;
	var.size = 16;
	return dbg_find_symbol(c->s, "__cxa_get_globals", &fn, &size) && module_of(c->s, fn, &var.module) &&
	       dbg_tlsdesc_offset(c->s, fn, size, &var.offset) &&
	       dbg_tls_address(c->s, &var, tp, addr, &why) == DBG_TLS_ADDRESS;
}

static bool exception_class_is(struct core *core, uint64_t header, uint64_t cls)
{
	uint64_t got;
	return core_read_u64(core, header + CXA_UNWIND_HEADER, &got) && got == cls;
}

/* The thrown object and its std::type_info from the header std::terminate
 * sees; false when it is no C++ exception or cannot be read. */
static bool thrown_object(struct cause_ctx *c, uint64_t header, uint64_t *obj, uint64_t *tinfo)
{
	if (!core_pointer_ok(c->core, header, CXA_HEADER_SIZE, 8))
		return false;
	if (exception_class_is(c->core, header, CXX_DEPENDENT_CLASS)) {
		uint64_t primary;
		if (!core_read_u64(c->core, header, &primary) || primary < CXA_HEADER_SIZE)
			return false;
		header = primary - CXA_HEADER_SIZE;
		if (!core_pointer_ok(c->core, header, CXA_HEADER_SIZE, 8))
			return false;
	}
	if (!exception_class_is(c->core, header, CXX_CLASS))
		return false;
	*obj = header + CXA_HEADER_SIZE;
	return core_read_u64(c->core, header + CXA_TYPE, tinfo) && core_pointer_ok(c->core, *tinfo, 16, 8);
}

/* The mangled name a type_info holds ("St12out_of_range"; a leading '*'
 * marks a type of internal linkage). */
static bool type_info_name(struct dbg_session *s, uint64_t tinfo, char *buf, size_t len)
{
	uint64_t name;
	/* The name is read-only data a qemu-user core does not save. */
	if (!core_read_u64(dbg_session_core(s), tinfo + TYPE_INFO_NAME, &name) || !name ||
	    !dbg_read_module_string(s, name, buf, len) || !buf[0])
		return false;
	if (buf[0] == '*')
		memmove(buf, buf + 1, strlen(buf));
	return buf[0] != '\0';
}

/* Whether TINFO is std::logic_error or std::runtime_error or derives from
 * one by single inheritance (__si_class_type_info's __base_type): those
 * keep their message in _M_msg. */
static bool has_message_base(struct cause_ctx *c, uint64_t tinfo)
{
	uint64_t si_vtable, size;
	bool have_si = dbg_find_symbol(c->s, "_ZTVN10__cxxabiv120__si_class_type_infoE", &si_vtable,
				       &size);
	for (int depth = 0; depth < BASE_CHAIN_MAX && tinfo; depth++) {
		char name[TYPE_NAME_MAX];
		if (!type_info_name(c->s, tinfo, name, sizeof(name)))
			return false;
		if (strcmp(name, "St11logic_error") == 0 || strcmp(name, "St13runtime_error") == 0)
			return true;
		uint64_t vptr;
		if (!have_si || !core_read_u64(c->core, tinfo, &vptr) || vptr != si_vtable + 16 ||
		    !core_read_u64(c->core, tinfo + SI_TYPE_INFO_BASE, &tinfo))
			return false;
	}
	return false;
}

/* std::logic_error/runtime_error's message: _M_msg, a copy-on-write string
 * whose characters follow its _Rep {length, capacity, refcount}; the
 * length there (within the capacity, a NUL at its end) confirms it.  A
 * message longer than WHAT_MAX is cut there and ends in "...". */
static char *exception_message(struct core *core, uint64_t obj)
{
	uint64_t chars, length, capacity;
	char end;
	if (!core_read_u64(core, obj + EXCEPTION_MSG, &chars) || chars < COW_REP_LENGTH ||
	    !core_read_u64(core, chars - COW_REP_LENGTH, &length) ||
	    !core_read_u64(core, chars - COW_REP_LENGTH + 8, &capacity) || capacity < length ||
	    chars + length < chars || !core_read_bytes(core, chars + length, &end, 1) || end != '\0')
		return NULL;
	bool cut = length >= WHAT_MAX;
	size_t keep = cut ? WHAT_MAX - 4 : (size_t)length;
	char *text = malloc(keep + (cut ? 4 : 1));
	if (!text)
		return NULL;
	if (!core_read_bytes(core, chars, text, keep) || memchr(text, '\0', keep)) {
		free(text);
		return NULL;
	}
	strcpy(text + keep, cut ? "..." : "");
	return text;
}

/* std::terminate with no exception: libsupc++'s __cxa_pure_virtual and
 * __cxa_deleted_virtual print their message and call it, from the call
 * through the vtable (an object used while being built or destroyed);
 * std::thread's destructor and move assignment, when it is joinable. */
static int decide_terminate_alone(struct cause_ctx *c)
{
	static const char *const pure[] = { "__cxa_pure_virtual", NULL };
	static const char *const deleted[] = { "__cxa_deleted_virtual", NULL };
	/* -O2 merges their calls to std::terminate: either frame may stand for
	 * the other. */
	static const char *const joinable[] = { "std::thread::~thread", "std::thread::operator=", NULL };
	const char *what = "pure virtual method called";
	long i = frame_named(c, pure);
	if (i < 0 && (i = frame_named(c, deleted)) >= 0)
		what = "deleted virtual method called";
	if (i < 0 && (i = frame_named(c, joinable)) >= 0)
		what = "terminate called without an active exception: a joinable std::thread destroyed or "
		       "assigned to";
	if (i < 0)
		return set_summary(c->cause, AN_CAUSE_ABORT, "terminate called without an active exception")
			       ? 1 : -1;
	const char *caller = caller_of(c, i);
	return set_summary(c->cause, AN_CAUSE_ABORT, "%s%s%s", what, caller ? " in " : "", caller ? caller : "")
		       ? 1 : -1;
}

static int decide_uncaught_exception(struct cause_ctx *c)
{
	/* The C++ runtime ended the program: std::terminate or its helpers,
	 * or a throw or the personality routine (whose calls to terminate are
	 * to functions a stripped libstdc++ does not name). */
	static const char *const terminate[] = {
		"std::terminate", "__cxxabiv1::__terminate", "__cxa_call_terminate",
		"__gnu_cxx::__verbose_terminate_handler", "__cxa_throw", "__cxa_rethrow",
		"std::rethrow_exception", "__gxx_personality_v0", NULL,
	};
	static const char *const terminate_only[] = { "std::terminate", NULL };
	static const char *const throwing[] = {
		"__cxa_throw", "__cxa_rethrow", "std::rethrow_exception", "__gxx_personality_v0", NULL,
	};
	uint64_t eh, header, obj, tinfo;
	char name[TYPE_NAME_MAX];
	if (!c->s || !c->thread || frame_named(c, terminate) < 0 || !eh_globals_address(c, &eh) ||
	    !core_read_u64(c->core, eh, &header))
		return 0;
	/* std::terminate with no exception caught or being thrown (a joinable
	 * std::thread destroyed, a call through a pure virtual slot, a direct
	 * call): an abort, said as libstdc++ says it. */
	if (header == 0 && frame_named(c, terminate_only) >= 0 && frame_named(c, throwing) < 0)
		return decide_terminate_alone(c);
	if (!thrown_object(c, header, &obj, &tinfo) || !type_info_name(c->s, tinfo, name, sizeof(name)))
		return 0;
	c->cause->exception_type = dbg_demangle_type(name);
	if (!c->cause->exception_type)
		return -1;
	if (has_message_base(c, tinfo))
		c->cause->exception_what = exception_message(c->core, obj);
	const char *what = c->cause->exception_what;
	return set_summary(c->cause, AN_CAUSE_UNCAUGHT_EXCEPTION, "%s%s%s", c->cause->exception_type,
			   what ? ": " : "", what ? what : "") ? 1 : -1;
}

/* ---- glibc's reasons to abort ---------------------------------------- */

/* glibc 2.36 malloc_printerr's messages begin with the function that found
 * the damage, or say what it found. */
static bool is_malloc_message(const char *msg)
{
	static const char *const prefixes[] = {
		"malloc(", "free(", "realloc(", "calloc(", "munmap_chunk(", "mremap_chunk(",
		"malloc_consolidate(", "_int_free(", "_int_malloc(", "_int_realloc(",
		"tcache_thread_shutdown(", "malloc_check_get_size", "double free or corruption",
		"corrupted size vs. prev_size", "corrupted double-linked list", NULL,
	};
	for (const char *const *p = prefixes; *p; p++)
		if (strncmp(msg, *p, strlen(*p)) == 0)
			return true;
	return false;
}

/* The first caller of frame I that is not glibc's allocator itself: the
 * program's call that found the heap damaged. */
static const char *malloc_caller(const struct cause_ctx *c, long i)
{
	static const char *const allocator[] = {
		"malloc_printerr", "_int_free", "_int_malloc", "_int_realloc", "_int_memalign",
		"malloc_consolidate", "munmap_chunk", "tcache_thread_shutdown", "__libc_free", "free",
		"__libc_malloc", "malloc", "__libc_realloc", "realloc", "__libc_calloc", "calloc",
		"__libc_memalign", "_mid_memalign", "__libc_free_hook", NULL,
	};
	if (i < 0)
		return NULL;
	for (size_t k = (size_t)i; k < c->nframes; k++)
		if (c->frames[k].function && !name_in(c->frames[k].function, allocator))
			return c->frames[k].function;
	return NULL;
}

/* ---- Rust panics ------------------------------------------------------ */

static bool has_prefix(const char *name, const char *const *prefixes)
{
	for (; name && *prefixes; prefixes++)
		if (strncmp(name, *prefixes, strlen(*prefixes)) == 0)
			return true;
	return false;
}

/* A frame of Rust's panic machinery (std's and core's, from the panic
 * macro or an unwrap to the abort), or of the abort under it. */
static bool in_panic_machinery(const char *name)
{
	static const char *const prefixes[] = {
		"core::panicking::", "std::panicking::", "core::result::unwrap_failed",
		"core::option::unwrap_failed", "core::option::expect_failed", "panic_abort::",
		"panic_unwind::", "std::sys::backtrace::__rust_end_short_backtrace", "std::rt::",
		"std::process::abort", "std::sys::pal::", "std::sys::abort_internal", "__rustc::",
		"rust_begin_unwind", "rust_panic", "__rust_start_panic", NULL,
	};
	return has_prefix(name, prefixes);
}

/* A panic of a Rust program built with panic=abort (or one that could not
 * unwind): the frames of std::panicking or core::panicking on the stack;
 * the function that panicked is the first frame past them. */
static int decide_rust_panic(struct cause_ctx *c)
{
	static const char *const entry[] = { "core::panicking::", "std::panicking::", NULL };
	size_t i = 0;
	while (i < c->nframes && !has_prefix(c->frames[i].function, entry))
		i++;
	if (i == c->nframes)
		return 0;
	while (i < c->nframes && (!c->frames[i].function || in_panic_machinery(c->frames[i].function)))
		i++;
	if (i == c->nframes)
		return set_summary(c->cause, AN_CAUSE_ABORT, "Rust panic") ? 1 : -1;
	const struct an_frame *f = &c->frames[i];
	const char *file = f->file ? strrchr(f->file, '/') : NULL;
	file = file ? file + 1 : f->file;
	if (file && f->line > 0)
		return set_summary(c->cause, AN_CAUSE_ABORT, "Rust panic in %s at %s:%d", f->function, file,
				   f->line) ? 1 : -1;
	return set_summary(c->cause, AN_CAUSE_ABORT, "Rust panic in %s", f->function) ? 1 : -1;
}

static int decide_abort(struct cause_ctx *c)
{
	static const char *const stack_chk[] = { "__stack_chk_fail", NULL };
	static const char *const printerr[] = { "malloc_printerr", NULL };
	static const char *const abort_fn[] = { "abort", NULL };
	const char *msg = c->an->abort_message;
	long chk = frame_named(c, stack_chk);
	const char *smasher = caller_of(c, chk);
	if ((msg && strstr(msg, "stack smashing detected")) || chk >= 0)
		return (smasher ? set_summary(c->cause, AN_CAUSE_STACK_SMASHING,
					      "stack smashing detected in %s", smasher)
				: set_summary(c->cause, AN_CAUSE_STACK_SMASHING, "%s",
					      msg ? msg : "stack smashing detected (__stack_chk_fail)"))
			? 1 : -1;
	if (msg && strstr(msg, "Assertion `") && strstr(msg, "' failed"))
		return set_summary(c->cause, AN_CAUSE_ASSERTION, "%s", msg) ? 1 : -1;
	if (msg && is_malloc_message(msg)) {
		const char *from = malloc_caller(c, frame_named(c, printerr));
		return set_summary(c->cause, AN_CAUSE_HEAP_CORRUPTION, "%s%s%s%s", msg,
				   from ? " (from " : "", from ? from : "", from ? ")" : "") ? 1 : -1;
	}
	long at = frame_named(c, abort_fn);
	if (msg)
		return set_summary(c->cause, AN_CAUSE_ABORT, "%s", msg) ? 1 : -1;
	int panic = decide_rust_panic(c);
	if (panic)
		return panic;
	if (at < 0)
		return 0;
	const char *caller = caller_of(c, at);
	return set_summary(c->cause, AN_CAUSE_ABORT, "abort() called%s%s", caller ? " from " : "",
			   caller ? caller : "") ? 1 : -1;
}

/* ---- the plain signal ------------------------------------------------ */

static int decide_signal(struct cause_ctx *c)
{
	const struct analysis *an = c->an;
	const struct core_siginfo *si = &c->core->siginfo;
	char code[48] = "", sender[64] = "", fn[512];
	if (c->code_name)
		snprintf(code, sizeof(code), " (%s)", c->code_name);
	if (!an->caught.present && si->present && si->signo == an->signo && si->code <= 0 &&
	    si->sender_pid > 0) {
		if (an->has_pid && si->sender_pid == an->pid)
			snprintf(sender, sizeof(sender), ", raised by the process itself");
		else
			snprintf(sender, sizeof(sender), ", sent by pid %d", si->sender_pid);
	}
	enum an_cause_kind kind = c->signo == SIGABRT ? AN_CAUSE_ABORT : AN_CAUSE_SIGNAL;
	return set_summary(c->cause, kind, "%s%s%s%s", c->signal_name ? c->signal_name : "signal",
			   code, sender, in_function(innermost_function(c), fn, sizeof(fn))) ? 1 : -1;
}

/* A signal sent by a process (kill, raise, tgkill: si_code <= 0) says
 * nothing about memory or instructions. */
static bool sent_by_process(const struct cause_ctx *c)
{
	return c->has_code && c->code <= 0;
}

static int decide(struct cause_ctx *c)
{
	if (!c->has_signal)
		return set_summary(c->cause, AN_CAUSE_SIGNAL,
				   "no fatal signal: the process was dumped while running") ? 1 : -1;
	int r = 0;
	switch (c->signo) {
	case SIGSEGV:
	case SIGBUS:
		if (!sent_by_process(c))
			r = decide_memory_fault(c);
		break;
	case SIGILL:
		if (!sent_by_process(c))
			r = decide_illegal_instruction(c);
		break;
	case SIGFPE:
		if (!sent_by_process(c))
			r = decide_arithmetic(c);
		break;
	case SIGABRT:
		r = decide_uncaught_exception(c);
		if (r == 0)
			r = decide_abort(c);
		break;
	default:
		break;
	}
	return r != 0 ? r : decide_signal(c);
}

/* The hang's cause (analyzer/waitgraph.c: a deadlock, the biggest group of
 * waiters and where their chain ends), then how the process was read:
 * WHY, "process 903 read while running, stopped for 0.2 ms at ...", or how
 * its core was dumped. */
static bool set_hang_cause(struct an_cause *c, const struct analysis *an, const char *why)
{
	enum an_cause_kind kind;
	char *summary = an_hang_summary(an, &kind);
	if (!summary)
		return false;
	bool ok = set_summary(c, kind, "%s (%s)", summary, why);
	free(summary);
	return ok;
}

/* A hang: a running process read live, or a snapshot of one.  PAUSED_US
 * is how long its threads were stopped; TAKEN_AT when (NULL/empty:
 * unknown). */
static bool set_hang(struct an_cause *c, const struct analysis *an, uint64_t paused_us,
		     const char *taken_at)
{
	char pid[32] = "", why[160];
	if (an->has_pid)
		snprintf(pid, sizeof(pid), " %d", (int)an->pid);
	bool when = taken_at && taken_at[0];
	snprintf(why, sizeof(why), "process%s read while running, stopped for %" PRIu64 ".%03" PRIu64 " ms%s%.40s",
		 pid, paused_us / 1000, paused_us % 1000, when ? " at " : "", when ? taken_at : "");
	return set_hang_cause(c, an, why);
}

/* A core another process asked for: dumped with no fatal signal (gcore),
 * or on a signal another process sent (kill -ABRT, a watchdog's SIGABRT,
 * timeout -s ABRT: SI_USER or SI_QUEUE from a foreign pid), or by a
 * runtime's SIGQUIT dump that ends in its own abort (an->dump_request).
 * Its cause is the hang's; 0 when the core is a crash's. */
static int decide_hang_core(struct cause_ctx *c)
{
	const struct analysis *an = c->an;
	const struct core_siginfo *si = &c->core->siginfo;
	char why[192];
	if (!an->has_signal)
		return set_hang_cause(c->cause, an, "dumped while running, with no fatal signal") ? 1 : -1;
	bool sent = si->present && si->signo == an->signo && (si->code == SI_USER || si->code == SI_QUEUE) &&
		    si->sender_pid > 0 && !(an->has_pid && si->sender_pid == an->pid);
	const struct an_dump_request *q = &an->dump_request;
	if (!sent && q->present) {
		snprintf(why, sizeof(why), "dumped on %s sent by pid %d: the runtime printed its dump, then raised %s "
			 "itself", core_signal_name(q->signo), (int)q->sender_pid,
			 an->signal_name ? an->signal_name : "a signal");
		return set_hang_cause(c->cause, an, why) ? 1 : -1;
	}
	if (!sent)
		return 0;
	snprintf(why, sizeof(why), "dumped on %s sent by pid %d", an->signal_name ? an->signal_name : "a signal",
		 (int)si->sender_pid);
	return set_hang_cause(c->cause, an, why) ? 1 : -1;
}

static void cause_reset(struct an_cause *c)
{
	free(c->summary);
	free(c->exception_type);
	free(c->exception_what);
	free(c->expression);
	memset(c, 0, sizeof(*c));
}

/* C speaks of the core's signal on the crashing thread. */
static void view_core_signal(struct cause_ctx *c)
{
	const struct analysis *an = c->an;
	size_t i = an_crashing_thread(an);
	c->has_signal = an->has_signal;
	c->signo = an->signo;
	c->signal_name = an->signal_name;
	c->has_code = an->has_code;
	c->code = an->code;
	c->code_name = an->code_name;
	c->has_fault = an->has_fault_address;
	c->fault = an->fault_address;
	c->tid = an->crashing_tid;
	if (i < an->nthreads) {
		c->thread = &an->threads[i];
		c->regs = c->thread->regs;
		c->frames = c->thread->frames;
		c->nframes = c->thread->nframes;
		c->tid = c->thread->tid;
		c->pc = c->thread->pc;
		c->sp = c->thread->sp;
	}
}

/* C speaks of the fault a crash handler caught: its siginfo, the registers
 * it interrupted and the frames from the crash site out. */
static void view_caught(struct cause_ctx *c)
{
	const struct an_caught *k = &c->an->caught;
	const struct core_arch *arch = c->core->arch;
	c->has_signal = true;
	c->signo = k->signo;
	c->signal_name = k->signal_name;
	c->has_code = k->has_code;
	c->code = k->code;
	c->code_name = k->code_name;
	c->has_fault = k->has_fault_address;
	c->fault = k->fault_address;
	c->tid = k->tid;
	c->thread = an_thread_by_tid(c->an, k->tid);
	c->regs = k->regs;
	c->pc = k->regs[arch->reg_pc];
	c->sp = k->regs[arch->reg_sp];
	c->frames = NULL;
	c->nframes = 0;
	const struct an_thread *t = c->thread;
	for (size_t i = 0; t && i < t->nframes; i++)
		if (t->frames[i].role == AN_FRAME_CRASH_SITE) {
			c->frames = &t->frames[i];
			c->nframes = t->nframes - i;
			break;
		}
}

/* The crash site's function and "(file:line)" after the fault's summary,
 * for kinds whose summary does not name where it happened. */
static bool add_site(struct cause_ctx *c)
{
	enum an_cause_kind kind = c->cause->kind;
	if (!c->nframes || !c->frames[0].function ||
	    (kind != AN_CAUSE_NULL_DEREFERENCE && kind != AN_CAUSE_STACK_OVERFLOW))
		return true;
	const struct an_frame *f = &c->frames[0];
	const char *file = f->file ? strrchr(f->file, '/') : NULL;
	file = file ? file + 1 : f->file;
	/* set_summary formats before it frees the summary it replaces */
	const char *old = c->cause->summary;
	return file && f->line > 0
		? set_summary(c->cause, kind, "%s in %s (%s:%d)", old, f->function, file, f->line)
		: set_summary(c->cause, kind, "%s in %s", old, f->function);
}

/* "; caught by H, which re-raised it" after the fault's summary. */
static bool add_handler(struct cause_ctx *c)
{
	static const char *const did[] = {
		[AN_HANDLER_RERAISED] = "which re-raised it", [AN_HANDLER_ABORTED] = "which aborted",
		[AN_HANDLER_EXITED] = "which exited", [AN_HANDLER_FAULTED] = "which faulted in turn",
		[AN_HANDLER_RUNNING] = "still running it",
	};
	const struct an_caught *k = &c->an->caught;
	const char *what = (unsigned)k->action < sizeof(did) / sizeof(did[0]) ? did[k->action] : did[0];
	const char *old = c->cause->summary;
	return k->handler
		? set_summary(c->cause, c->cause->kind, "%s; caught by %s, %s", old, k->handler, what)
		: set_summary(c->cause, c->cause->kind, "%s; caught by the program's signal handler, %s",
			      old, what);
}

static int decide_caught(struct cause_ctx *c)
{
	view_caught(c);
	int r = decide(c);
	if (r > 0 && (!add_site(c) || !add_handler(c)))
		r = -1;
	return r;
}

/* The kind of a Go program's panic or fatal error. */
static enum an_cause_kind go_kind(const struct an_go_crash *g)
{
	if (g->fatal)
		return strstr(g->message, "stack overflow") ? AN_CAUSE_STACK_OVERFLOW : AN_CAUSE_ABORT;
	switch (g->signo) {
	case 0: return AN_CAUSE_UNCAUGHT_EXCEPTION;
	case SIGSEGV:
	case SIGBUS: return g->sigaddr < 0x1000 ? AN_CAUSE_NULL_DEREFERENCE : AN_CAUSE_BAD_ACCESS;
	case SIGFPE: return AN_CAUSE_ARITHMETIC;
	case SIGILL: return AN_CAUSE_ILLEGAL_INSTRUCTION;
	default: return AN_CAUSE_SIGNAL;
	}
}

/* A Go program's cause: the runtime's own first line (and its signal
 * line), then the frame that faulted or panicked. */
static int decide_go(struct cause_ctx *c)
{
	const struct an_go_crash *g = &c->an->go;
	enum an_cause_kind kind = go_kind(g);
	const struct an_frame *site = NULL;
	const struct an_thread *t = c->an->nthreads ? &c->an->threads[an_crashing_thread(c->an)] : NULL;
	for (size_t i = 0; i < c->an->ntasks && !site; i++) {
		const struct an_task *task = &c->an->tasks[i];
		if (g->has_goid && task->id == g->goid && task->runtime && strcmp(task->runtime, "go") == 0)
			for (size_t j = 0; j < task->nframes && !site; j++)
				if (task->frames[j].role == AN_FRAME_CRASH_SITE)
					site = &task->frames[j];
	}
	for (size_t j = 0; t && j < t->nframes && !site; j++)
		if (t->frames[j].role == AN_FRAME_CRASH_SITE)
			site = &t->frames[j];
	const char *sig = g->signal_line ? g->signal_line : "";
	const char *file = site && site->file ? strrchr(site->file, '/') : NULL;
	file = file ? file + 1 : site ? site->file : NULL;
	bool ok;
	if (site && site->function && file && site->line > 0)
		ok = set_summary(c->cause, kind, "%s%s%s in %s (%s:%d)", g->message, *sig ? " " : "", sig,
				 site->function, file, site->line);
	else if (site && site->function)
		ok = set_summary(c->cause, kind, "%s%s%s in %s", g->message, *sig ? " " : "", sig,
				 site->function);
	else
		ok = set_summary(c->cause, kind, "%s%s%s", g->message, *sig ? " " : "", sig);
	if (ok && kind == AN_CAUSE_UNCAUGHT_EXCEPTION) {
		const char *what = strncmp(g->message, "panic: ", 7) == 0 ? g->message + 7 : g->message;
		c->cause->exception_type = an_strdup(g->value_type ? g->value_type : "panic");
		c->cause->exception_what = an_strdup(what);
		ok = c->cause->exception_type && c->cause->exception_what;
	}
	return ok ? 1 : -1;
}

/* The innermost JavaScript frame of the crashing thread with a script
 * (a builtin's has none), or NULL. */
static const struct an_frame *js_site(const struct analysis *an)
{
	const struct an_thread *t = an->nthreads ? &an->threads[an_crashing_thread(an)] : NULL;
	for (size_t i = 0; t && i < t->nframes; i++)
		if (t->frames[i].kind == AN_FRAME_SCRIPT && t->frames[i].runtime &&
		    strcmp(t->frames[i].runtime, "node") == 0 && t->frames[i].file)
			return &t->frames[i];
	return NULL;
}

/* A Node.js program's cause: the uncaught exception's class and message,
 * or V8's heap exhaustion, in the innermost JavaScript frame. */
static int decide_js(struct cause_ctx *c)
{
	const struct an_js_crash *js = &c->an->js;
	const struct an_frame *site = js_site(c->an);
	char what[4200];
	if (js->oom)
		snprintf(what, sizeof(what), "FATAL ERROR: %s", js->message ? js->message : "out of memory");
	else if (js->type && js->message)
		snprintf(what, sizeof(what), "%s: %s", js->type, js->message);
	else
		snprintf(what, sizeof(what), "%s", js->type ? js->type : "uncaught JavaScript exception");
	const char *in = site ? site->function : NULL, *detail = site ? site->detail : NULL;
	if (js->thrown_in && js->thrown_at) {
		in = js->thrown_in;   /* its own stack: where it was thrown */
		detail = js->thrown_at;
	}
	const char *where = detail ? strrchr(detail, '/') : NULL;
	where = where ? where + 1 : detail;
	enum an_cause_kind kind = js->oom ? AN_CAUSE_OOM : AN_CAUSE_UNCAUGHT_EXCEPTION;
	/* The detail's notes ("(inlined)", "(function start)") stay there. */
	const char *start = where ? strstr(where, " (") : NULL;
	int wlen = where ? (int)(start ? (size_t)(start - where) : strlen(where)) : 0;
	bool ok = in && where
		  ? set_summary(c->cause, kind, "%s in %s (%.*s)", what, in, wlen, where)
		  : set_summary(c->cause, kind, "%s", what);
	if (ok && !js->oom) {
		c->cause->exception_type = an_strdup(js->type ? js->type : "exception");
		c->cause->exception_what = js->message ? an_strdup(js->message) : NULL;
		ok = c->cause->exception_type && (!js->message || c->cause->exception_what);
	}
	return ok ? 1 : -1;
}

bool an_cause_decide(struct core *core, struct dbg_session *s, struct analysis *an)
{
	cause_reset(&an->cause);
	struct cause_ctx c = { .core = core, .s = s, .an = an, .cause = &an->cause };
	int r;
	if (an->go.present && an->go.message)
		r = decide_go(&c);
	else if (an->js.present && !core->snapshot.present)
		r = decide_js(&c);
	else if (an->caught.present)
		r = decide_caught(&c);
	else if (core->snapshot.present)
		r = set_hang(&an->cause, an, core->snapshot.paused_us, core->snapshot.taken_at) ? 1 : -1;
	else if ((r = decide_hang_core(&c)) == 0) {
		view_core_signal(&c);
		r = decide(&c);
	}
	if (r < 0) {
		cause_reset(&an->cause);
		return false;
	}
	return true;
}

bool an_cause_hang(struct analysis *an)
{
	if (an->caught.present && an->cause.summary)
		return true;   /* stopped inside a crash handler: the fault it caught */
	cause_reset(&an->cause);
	if (set_hang(&an->cause, an, an->paused_us, an->taken_at))
		return true;
	cause_reset(&an->cause);
	return false;
}
