/* Signal and si_code names, as in <signal.h> (Linux x86_64). */
#include "signals.h"

#include <signal.h>
#include <stddef.h>
#include <string.h>

static const char *const signal_names[] = {
	[1] = "SIGHUP", [2] = "SIGINT", [3] = "SIGQUIT", [4] = "SIGILL", [5] = "SIGTRAP",
	[6] = "SIGABRT", [7] = "SIGBUS", [8] = "SIGFPE", [9] = "SIGKILL", [10] = "SIGUSR1",
	[11] = "SIGSEGV", [12] = "SIGUSR2", [13] = "SIGPIPE", [14] = "SIGALRM", [15] = "SIGTERM",
	[16] = "SIGSTKFLT", [17] = "SIGCHLD", [18] = "SIGCONT", [19] = "SIGSTOP", [20] = "SIGTSTP",
	[21] = "SIGTTIN", [22] = "SIGTTOU", [23] = "SIGURG", [24] = "SIGXCPU", [25] = "SIGXFSZ",
	[26] = "SIGVTALRM", [27] = "SIGPROF", [28] = "SIGWINCH", [29] = "SIGIO", [30] = "SIGPWR",
	[31] = "SIGSYS",
};

bool core_signal_has_address(int signo, int code)
{
	bool faults = signo == SIGILL || signo == SIGTRAP || signo == SIGBUS || signo == SIGFPE ||
		      signo == SIGSEGV;
	return faults && code > 0 && code != SI_KERNEL;
}

const char *core_signal_name(int signo)
{
	if (signo > 0 && (size_t)signo < sizeof(signal_names) / sizeof(signal_names[0]))
		return signal_names[signo];
	return NULL;
}

static const char *generic_code_name(int code)
{
	switch (code) {
	case SI_USER: return "SI_USER";
	case SI_KERNEL: return "SI_KERNEL";
	case SI_QUEUE: return "SI_QUEUE";
	case SI_TIMER: return "SI_TIMER";
	case SI_MESGQ: return "SI_MESGQ";
	case SI_ASYNCIO: return "SI_ASYNCIO";
	case SI_SIGIO: return "SI_SIGIO";
	case SI_TKILL: return "SI_TKILL";
	default: return NULL;
	}
}

static const char *pick(const char *const *names, size_t n, int code)
{
	return code > 0 && (size_t)code < n ? names[code] : NULL;
}

#define PICK(arr, code) pick(arr, sizeof(arr) / sizeof(arr[0]), code)

const char *core_signal_code_name(int signo, int code)
{
	static const char *const segv[] = { NULL, "SEGV_MAPERR", "SEGV_ACCERR", "SEGV_BNDERR",
					    "SEGV_PKUERR", "SEGV_ACCADI", "SEGV_ADIDERR",
					    "SEGV_ADIPERR", "SEGV_MTEAERR", "SEGV_MTESERR" };
	static const char *const bus[] = { NULL, "BUS_ADRALN", "BUS_ADRERR", "BUS_OBJERR",
					   "BUS_MCEERR_AR", "BUS_MCEERR_AO" };
	static const char *const ill[] = { NULL, "ILL_ILLOPC", "ILL_ILLOPN", "ILL_ILLADR",
					   "ILL_ILLTRP", "ILL_PRVOPC", "ILL_PRVREG", "ILL_COPROC",
					   "ILL_BADSTK" };
	static const char *const fpe[] = { NULL, "FPE_INTDIV", "FPE_INTOVF", "FPE_FLTDIV",
					   "FPE_FLTOVF", "FPE_FLTUND", "FPE_FLTRES", "FPE_FLTINV",
					   "FPE_FLTSUB" };
	static const char *const trap[] = { NULL, "TRAP_BRKPT", "TRAP_TRACE", "TRAP_BRANCH",
					    "TRAP_HWBKPT" };
	if (code <= 0 || code == SI_KERNEL)
		return generic_code_name(code);
	switch (signo) {
	case SIGSEGV: return PICK(segv, code);
	case SIGBUS: return PICK(bus, code);
	case SIGILL: return PICK(ill, code);
	case SIGFPE: return PICK(fpe, code);
	case SIGTRAP: return PICK(trap, code);
	default: return NULL;
	}
}

static uint32_t u32_at(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t u64_at(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* siginfo_t (little-endian): si_signo, si_errno, si_code, then at 16 the
 * fault address, or the sender's pid and uid. */
void core_siginfo_parse(const unsigned char *d, struct core_siginfo *si)
{
	memset(si, 0, sizeof(*si));
	si->present = true;
	si->signo = (int)u32_at(d);
	si->errno_value = (int)u32_at(d + 4);
	si->code = (int)u32_at(d + 8);
	if (core_signal_has_address(si->signo, si->code))
		si->addr = u64_at(d + 16);
	if (si->code <= 0) {
		si->sender_pid = (int32_t)u32_at(d + 16);
		si->sender_uid = u32_at(d + 20);
	}
}
