/* Crash handlers: a program that catches its own fatal signal logs, then
 * re-raises it or aborts, and its core's signal is the handler's.  Two
 * shapes (DESIGN.md "Signal frames and crash handlers"):
 * - re-raised at once: the stack runs the handler's frames, the signal
 *   trampoline, then the interrupted frames; the kernel's signal frame at
 *   the trampoline's stack pointer holds the caught siginfo and registers;
 * - re-raised on return: the plain faulting stack, with a signal the
 *   process sent itself; the instruction at the pc is the evidence.
 * Everything read from a signal frame is checked before it is believed. */
#include "handler.h"
#include "insn.h"

#include <elf.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* Signals that end a program unless it catches them: a handler that
 * caught one is a crash handler. */
static bool is_crash_signal(int signo)
{
	switch (signo) {
	case SIGSEGV:
	case SIGBUS:
	case SIGILL:
	case SIGFPE:
	case SIGTRAP:
	case SIGSYS:
	case SIGABRT:
		return true;
	default:
		return false;
	}
}

/* si_code values the kernel or a sending process writes: SI_TKILL ..
 * SI_USER, a fault's small positive code, SI_KERNEL. */
static bool code_plausible(int code)
{
	return (code >= SI_TKILL && code <= 32) || code == SI_KERNEL;
}

/* Frame I may be a trampoline: libdwfl takes a trampoline and the frame it
 * returns to for activations (their pcs exact), and qemu-user's, which has
 * no CFI, returns to an activation. */
static bool may_be_trampoline(const struct an_thread *t, size_t i)
{
	const struct an_frame *f = &t->frames[i];
	if (f->kind != AN_FRAME_NATIVE || f->inlined || f->tailcall || f->pc == 0)
		return false;
	return f->activation || (i + 1 < t->nframes && t->frames[i + 1].activation);
}

/* Mark T's trampolines; returns how many. */
static size_t mark_trampolines(struct core *core, struct an_thread *t)
{
	size_t n = 0;
	for (size_t i = 1; i < t->nframes; i++)
		if (may_be_trampoline(t, i) && core_is_sigreturn(core, t->frames[i].pc)) {
			t->frames[i].role = AN_FRAME_TRAMPOLINE;
			n++;
		}
	return n;
}

/* The stack pointer of trampoline frame I: its own, else the CFA of the
 * handler frame it returns from. */
static bool trampoline_sp(const struct core *core, const struct an_thread *t, size_t i, uint64_t *sp)
{
	if (an_frame_reg(&t->frames[i], core->arch->dwarf_sp, sp))
		return true;
	*sp = i > 0 ? t->frames[i - 1].cfa : 0;
	return *sp != 0;
}

/* Why the signal frame SF of trampoline I cannot be believed, or NULL.
 * The interrupted pc lies in code (or is the address a jump faulted at), and
 * the frame the unwinder found past the trampoline resumes there. */
static const char *sigframe_problem(const struct core *core, const struct an_thread *t, size_t i,
				    const struct core_sigframe *sf)
{
	const struct core_arch *arch = core->arch;
	uint64_t pc = sf->regs[arch->reg_pc], sp = sf->regs[arch->reg_sp];
	if (!code_plausible(sf->code))
		return "its siginfo's code is no signal code";
	if (pc == 0 || (!core_is_executable(core, pc) && !(sf->signo == SIGSEGV && sf->addr == pc)))
		return "its saved pc is in no code";
	if (sp == 0 || sp % 8 != 0)
		return "its saved stack pointer is not one";
	const struct an_frame *next = i + 1 < t->nframes ? &t->frames[i + 1] : NULL;
	if (next && next->kind == AN_FRAME_NATIVE && next->pc != pc)
		return "the frame past it does not resume at its saved pc";
	return NULL;
}

/* Set C from the signal frame SF (its siginfo and registers). */
static void caught_from_sigframe(const struct core_sigframe *sf, struct an_caught *c)
{
	c->present = true;
	c->signo = sf->signo;
	c->signal_name = core_signal_name(sf->signo);
	c->code = sf->code;
	c->has_code = true;
	c->code_name = core_signal_code_name(sf->signo, sf->code);
	c->has_fault_address = core_signal_has_address(sf->signo, sf->code);
	c->fault_address = c->has_fault_address ? sf->addr : 0;
	for (unsigned r = 0; r < AN_THREAD_NREGS && r < CORE_MAX_REGS; r++)
		c->regs[r] = sf->regs[r];
}

/* The frames of a handler that ends the program with these functions. */
static bool handler_calls(const struct an_thread *t, size_t k, const char *const *names)
{
	for (size_t i = 0; i < k; i++) {
		const char *f = t->frames[i].function;
		for (const char *const *n = names; f && *n; n++)
			if (strcmp(f, *n) == 0)
				return true;
	}
	return false;
}

/* The handler's function from the frame the trampoline returns to: NULL
 * when that is libc's re-raising itself, the handler having tail-called
 * it (`signal(sig, SIG_DFL); raise(sig);` at its end). */
static const char *handler_name(const char *fn)
{
	static const char *const reraise[] = {
		"raise", "__GI_raise", "gsignal", "kill", "__kill", "__GI_kill", "tgkill", "pthread_kill",
		"__pthread_kill", "__pthread_kill_internal", "__pthread_kill_implementation", "abort",
		"__GI_abort", "_exit", "__GI__exit", "_Exit", "exit", NULL,
	};
	for (const char *const *n = reraise; fn && *n; n++)
		if (strcmp(fn, *n) == 0)
			return NULL;
	return fn;
}

/* What the handler, whose frames are T's frames before K, did with the
 * fault C it caught, by the core's own signal. */
static enum an_handler_action handler_action(const struct core *core, const struct analysis *an,
					     const struct an_thread *t, size_t k,
					     const struct an_caught *c)
{
	static const char *const exits[] = { "_exit", "__GI__exit", "_Exit", "exit", "__GI_exit",
					     "quick_exit", "__run_exit_handlers", NULL };
	static const char *const aborts[] = { "abort", "__GI_abort", NULL };
	if (core_read_running(core) || !an->has_signal)
		return AN_HANDLER_RUNNING;
	/* the handler faulted in turn: the kernel's signal (a core without a
	 * siginfo, qemu-user's: none of libc's ways to send one on top) */
	bool sent = an->has_code ? an->code <= 0 : k > 0 && !handler_name(t->frames[0].function);
	if (is_crash_signal(an->signo) && an->signo != SIGABRT && !sent)
		return AN_HANDLER_FAULTED;
	if (handler_calls(t, k, exits))
		return AN_HANDLER_EXITED;
	if (an->signo == SIGABRT && (c->signo != SIGABRT || handler_calls(t, k, aborts)))
		return AN_HANDLER_ABORTED;
	return AN_HANDLER_RERAISED;
}

/* Mark the handler's frames (before K) and the crash site (after it). */
static void mark_roles(struct an_thread *t, size_t k)
{
	for (size_t i = 0; i < k; i++)
		if (t->frames[i].role != AN_FRAME_TRAMPOLINE)
			t->frames[i].role = AN_FRAME_HANDLER;
	if (k + 1 < t->nframes)
		t->frames[k + 1].role = AN_FRAME_CRASH_SITE;
}

static bool fault_of_instruction(struct core *core, struct dbg_session *s, const uint64_t *regs,
				 int signo, struct an_caught *c);
static bool access_faults(const struct core *core, uint64_t addr, bool write, int *code);

/* A page fault whose instruction Capstone cannot decode (AVX-512's, in
 * glibc's string functions): believed when the trap address faults as its
 * error code says (bit 1: a write) and the program went on to die of that
 * same signal or an abort, or is still in the handler. */
static bool trap_fault_believed(struct core *core, struct dbg_session *s, const struct analysis *an,
				const struct core_sigframe *sf, int signo, bool at_trap_addr)
{
	struct an_insn insn;
	int code;
	bool live = core_read_running(core);
	return at_trap_addr && an_insn_decode(core, s, sf->regs[core->arch->reg_pc], 16, &insn, 1) == 0 &&
	       access_faults(core, sf->trap_addr, (sf->err & 2) != 0, &code) &&
	       (live || (an->has_signal && (an->signo == signo || an->signo == SIGABRT)));
}

/* A signal frame without a siginfo (x86_64's kernel writes none for a
 * handler without SA_SIGINFO, as faulthandler installs it): the siginfo of
 * the hardware trap its sigcontext records, believed only when the
 * interrupted instruction faults that way with the saved registers (the
 * trap number of an asynchronous signal's frame is a stale one). */
static bool siginfo_from_trap(struct core *core, struct dbg_session *s, const struct analysis *an,
			      struct core_sigframe *sf)
{
	const struct core_arch *arch = core->arch;
	int signo, code;
	bool at_trap_addr;
	struct an_caught c = { 0 };
	if (!sf->has_trap || !arch->trap_signal ||
	    !arch->trap_signal(sf->trapno, sf->err, &signo, &code, &at_trap_addr))
		return false;
	if (fault_of_instruction(core, s, sf->regs, signo, &c)) {
		if (at_trap_addr && c.fault_address != sf->trap_addr)
			return false;
	} else if (!trap_fault_believed(core, s, an, sf, signo, at_trap_addr)) {
		return false;
	}
	sf->signo = signo;
	sf->code = code;
	sf->addr = at_trap_addr ? sf->trap_addr : sf->regs[arch->reg_pc];
	return true;
}

/* A signal frame without a siginfo whose sigcontext records no trap
 * (aarch64's holds none without an ESR record, which qemu-user never
 * writes): the fault the interrupted instruction makes with the saved
 * registers, for the signal the program died of (or SIGSEGV, when it
 * aborted or still runs), believed only when that instruction faults. */
static bool siginfo_from_instruction(struct core *core, struct dbg_session *s,
				     const struct analysis *an, struct core_sigframe *sf)
{
	bool live = core_read_running(core);
	int signo = an->has_signal ? an->signo : 0;
	if (signo == SIGABRT || (live && !is_crash_signal(signo)))
		signo = SIGSEGV;
	struct an_caught c = { 0 };
	if (sf->has_trap || !fault_of_instruction(core, s, sf->regs, signo, &c))
		return false;
	sf->signo = c.signo;
	sf->code = c.code;
	sf->addr = c.fault_address;
	return true;
}

/* Whether the siginfo of the signal frame SF agrees with what cannot be
 * stale: the trap its sigcontext records when the interrupted instruction
 * faults that way (TRAP, NULL when it does not), else that instruction.  A
 * handler installed without SA_SIGINFO (faulthandler's) gets no siginfo:
 * the area holds whatever its stack held before. */
static bool siginfo_agrees(struct core *core, struct dbg_session *s, const struct core_sigframe *sf,
			   const struct core_sigframe *trap)
{
	if (sf->signo <= 0 || sf->signo > 64 || !code_plausible(sf->code))
		return false;
	bool with_addr = core_signal_has_address(sf->signo, sf->code);
	if (trap)
		return sf->code > 0 && (sf->signo == trap->signo || (trap->signo == SIGSEGV && sf->signo == SIGBUS)) &&
		       (!with_addr || sf->addr == trap->addr);
	if (sf->code <= 0 || !is_crash_signal(sf->signo))
		return true;
	/* the trap and the siginfo, two records, name one fault (an implicit
	 * access such as a call's push into a guard page decodes to none) */
	const struct core_arch *arch = core->arch;
	int tsig, tcode;
	bool at_trap_addr;
	if (sf->has_trap && arch->trap_signal &&
	    arch->trap_signal(sf->trapno, sf->err, &tsig, &tcode, &at_trap_addr))
		return (tsig == sf->signo || (tsig == SIGSEGV && sf->signo == SIGBUS)) &&
		       (!with_addr || !at_trap_addr || sf->addr == sf->trap_addr);
	struct an_caught c = { 0 };
	struct an_insn insn;
	uint64_t addr;
	switch (sf->signo) {
	case SIGSEGV:
	case SIGBUS:
		if (!with_addr)
			return fault_of_instruction(core, s, sf->regs, SIGSEGV, &c);
		return an_insn_decode(core, s, sf->regs[arch->reg_pc], 16, &insn, 1) == 1 &&
		       an_insn_access_address(&insn, sf->regs, &addr) && addr == sf->addr;
	case SIGILL:
	case SIGFPE:
		return fault_of_instruction(core, s, sf->regs, sf->signo, &c);
	default:
		return true;
	}
}

/* The crash signal the signal frame SF at SP of thread TID caught, into
 * SF: its siginfo where that agrees with the evidence, else the trap's, or
 * where the sigcontext records none, the interrupted instruction's fault.
 * False (with a warning when SF claims one) when it caught none. */
static bool sigframe_signal(struct core *core, struct dbg_session *s, const struct analysis *an, int tid,
			    uint64_t sp, struct core_sigframe *sf)
{
	struct core_sigframe trap = *sf;
	bool from_trap = siginfo_from_trap(core, s, an, &trap);
	if (!siginfo_agrees(core, s, sf, from_trap ? &trap : NULL)) {
		if (from_trap || siginfo_from_instruction(core, s, an, &trap)) {
			*sf = trap;
		} else if (sf->signo > 0 && sf->signo <= 64 && code_plausible(sf->code)) {
			core_warn(core, "thread %d: the signal frame at 0x%llx is not believed: its siginfo (%s) "
				  "does not agree with the interrupted instruction", tid, (unsigned long long)sp,
				  core_signal_name(sf->signo));
			return false;
		} else if (sf->signo > 0 && sf->signo <= 64) {
			core_warn(core, "thread %d: the signal frame at 0x%llx is not believed: its siginfo's "
				  "code is no signal code (%d)", tid, (unsigned long long)sp, sf->code);
			return false;
		} else {
			if (sf->signo != 0 || sf->code != 0)
				core_warn(core, "thread %d: the signal frame at 0x%llx names no signal (%d)", tid,
					  (unsigned long long)sp, sf->signo);
			return false;
		}
	}
	return is_crash_signal(sf->signo);
}

/* The outermost trampoline of T whose signal frame holds a crash signal
 * the handler caught: sets AN->caught and T's roles.  Returns 1 when
 * found, 0 when not, -1 when memory ran out. */
static int caught_at_trampoline(struct core *core, struct dbg_session *s, struct analysis *an,
				struct an_thread *t)
{
	for (size_t k = t->nframes; k-- > 1;) {
		if (t->frames[k].role != AN_FRAME_TRAMPOLINE)
			continue;
		struct core_sigframe sf;
		uint64_t sp;
		if (!trampoline_sp(core, t, k, &sp) || !core_sigframe_read(core, sp, &sf)) {
			core_warn(core, "thread %d: the signal frame of frame %zu cannot be read", t->tid,
				  an_thread_frame_index(t, k));
			continue;
		}
		if (!sigframe_signal(core, s, an, t->tid, sp, &sf))
			continue;
		const char *problem = sigframe_problem(core, t, k, &sf);
		if (problem) {
			core_warn(core, "thread %d: the signal frame at 0x%llx is not believed: %s", t->tid,
				  (unsigned long long)sp, problem);
			continue;
		}
		struct an_caught *c = &an->caught;
		caught_from_sigframe(&sf, c);
		c->tid = t->tid;
		c->site = an_thread_frame_index(t, k + 1);
		c->action = handler_action(core, an, t, k, c);
		const char *fn = handler_name(t->frames[k - 1].function);
		if (fn && !(c->handler = strdup(fn)))
			return -1;
		mark_roles(t, k);
		return 1;
	}
	return 0;
}

/* ---- re-raised on return --------------------------------------------- */

/* Whether an access at ADDR (a WRITE or not) faults: below every mapping
 * (a NULL pointer), in none, in one without access, or a write to one that
 * is not writable.  Sets *CODE to SEGV_MAPERR or SEGV_ACCERR. */
static bool access_faults(const struct core *core, uint64_t addr, bool write, int *code)
{
	const struct core_segment *seg = core_find_segment(core, addr);
	*code = SEGV_MAPERR;
	if (!seg || core->nsegments == 0 || addr < core->segments[0].vaddr)
		return true;
	*code = SEGV_ACCERR;
	if (!(seg->flags & (PF_R | PF_W | PF_X)))
		return true;
	return write && !(seg->flags & PF_W);
}

/* Whether INSN's access at ADDR with REGS writes. */
static bool insn_writes(const struct an_insn *insn, const uint64_t *regs, uint64_t addr)
{
	bool exact;
	const struct an_insn_op *op = an_insn_mem_operand(insn, regs, addr, &exact);
	return op && op->write;
}

/* The fault the instruction at the pc of the thread registers REGS makes
 * with them, for the signal SIGNO: into C.  False when the instruction
 * would not fault. */
static bool fault_of_instruction(struct core *core, struct dbg_session *s, const uint64_t *regs,
				 int signo, struct an_caught *c)
{
	struct an_insn insn;
	uint64_t pc = regs[core->arch->reg_pc];
	bool decoded = an_insn_decode(core, s, pc, 16, &insn, 1) == 1;
	uint64_t addr = pc;
	int code;
	switch (signo) {
	case SIGSEGV:
	case SIGBUS:
		if (!decoded || !an_insn_access_address(&insn, regs, &addr) ||
		    !access_faults(core, addr, insn_writes(&insn, regs, addr), &code))
			return false;
		if (signo == SIGBUS)
			code = BUS_ADRERR;
		break;
	case SIGILL:
		if (decoded && strcmp(insn.mnemonic, "ud2") != 0 && strcmp(insn.mnemonic, "ud1") != 0 &&
		    strcmp(insn.mnemonic, "ud0") != 0 && strcmp(insn.mnemonic, "udf") != 0)
			return false;
		if (!decoded && !core_is_executable(core, pc))
			return false;
		code = core->arch->undefined_insn_code;
		break;
	case SIGFPE:
		if (!decoded || !an_insn_divides_by_zero(&insn, core, regs))
			return false;
		code = FPE_INTDIV;
		break;
	default:
		return false;
	}
	c->signo = signo;
	c->code = code;
	c->fault_address = addr;
	return true;
}

/* The re-raised-on-return shape on the crashing thread T of a core: a
 * fault signal the process sent itself, stopped at an instruction that
 * faults.  Returns 1 when found (AN->caught set), 0 when not. */
static int caught_on_return(struct core *core, struct dbg_session *s, struct analysis *an,
			    struct an_thread *t)
{
	const struct core_siginfo *si = &core->siginfo;
	if (!an->has_signal || !an->has_code || an->code > 0 || !si->present || t->nframes == 0 ||
	    t->frames[0].kind != AN_FRAME_NATIVE || (an->has_pid && si->sender_pid != an->pid))
		return 0;
	struct an_caught c = { .tid = t->tid, .on_return = true, .action = AN_HANDLER_RERAISED };
	if (!fault_of_instruction(core, s, t->regs, an->signo, &c))
		return 0;
	c.present = true;
	c.signal_name = core_signal_name(c.signo);
	c.has_code = true;
	c.code_name = core_signal_code_name(c.signo, c.code);
	c.has_fault_address = true;
	c.site = 0;
	memcpy(c.regs, t->regs, sizeof(c.regs));
	an->caught = c;
	t->frames[0].role = AN_FRAME_CRASH_SITE;
	return 1;
}

/* A SIGQUIT that another process sent, taken by a handler of thread T
 * (the runtime's dump of every goroutine): into AN->dump_request. */
static void dump_request_at(struct core *core, struct analysis *an, const struct an_thread *t)
{
	for (size_t k = t->nframes; k-- > 1 && !an->dump_request.present;) {
		struct core_sigframe sf;
		uint64_t sp;
		if (t->frames[k].role != AN_FRAME_TRAMPOLINE || !trampoline_sp(core, t, k, &sp) ||
		    !core_sigframe_read(core, sp, &sf))
			continue;
		bool sent = sf.code == SI_USER || sf.code == SI_QUEUE || sf.code == SI_TKILL;
		if (sf.signo != SIGQUIT || !sent || sf.sender_pid <= 0 || (an->has_pid && sf.sender_pid == an->pid) ||
		    sigframe_problem(core, t, k, &sf))
			continue;
		an->dump_request = (struct an_dump_request){ .present = true, .signo = sf.signo,
							     .sender_pid = sf.sender_pid, .tid = t->tid };
	}
}

/* Whether the core's own signal is one the process sent itself (the
 * runtime ending its dump with abort). */
static bool raised_by_itself(const struct core *core, const struct analysis *an)
{
	const struct core_siginfo *si = &core->siginfo;
	return an->has_signal && si->present && si->code <= 0 && an->has_pid && si->sender_pid == an->pid &&
	       (si->signo == SIGABRT || si->signo == SIGQUIT);
}

bool an_handler_find(struct core *core, struct dbg_session *s, struct analysis *an)
{
	bool live = core_read_running(core);
	size_t crashing = an_crashing_thread(an);
	int found = 0;
	bool own_signal = !live && raised_by_itself(core, an);
	an->dump_request.present = false;
	for (size_t i = 0; i < an->nthreads; i++)
		if (mark_trampolines(core, &an->threads[i]) && own_signal)
			dump_request_at(core, an, &an->threads[i]);
	if (an->dump_request.present)
		return true;   /* a dump asked for: no fault was caught */
	for (size_t i = 0; i < an->nthreads; i++) {
		struct an_thread *t = &an->threads[i];
		/* A Go program's own handler is its runtime's: the cause is its panic. */
		if (mark_trampolines(core, t) && found == 0 && !an->go.present && (live || i == crashing))
			found = caught_at_trampoline(core, s, an, t);
		if (found < 0)
			return false;
	}
	if (found == 0 && !live && !an->go.present && crashing < an->nthreads)
		found = caught_on_return(core, s, an, &an->threads[crashing]);
	return found >= 0;
}
