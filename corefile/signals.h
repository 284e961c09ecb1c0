/* A signal as the kernel reports it: siginfo_t's fields, and the names of
 * signals and their si_codes (signals.c). */
#ifndef COREFILE_SIGNALS_H
#define COREFILE_SIGNALS_H

#include <stdbool.h>
#include <stdint.h>

struct core_siginfo {
	bool present;
	int signo, code, errno_value;
	uint64_t addr;              /* si_addr for SIGSEGV/SIGBUS/SIGILL/SIGFPE/SIGTRAP */
	int32_t sender_pid;         /* si_pid for kill()-style codes */
	uint32_t sender_uid;
};

/* True when a siginfo of SIGNO with si_code CODE carries a fault address:
 * SIGILL, SIGTRAP, SIGBUS, SIGFPE or SIGSEGV raised by the hardware (a
 * positive code other than SI_KERNEL), not sent by kill() or the kernel. */
bool core_signal_has_address(int signo, int code);

/* Bytes of a siginfo_t, and its fields from D (that many bytes). */
#define CORE_SIGINFO_SIZE 128
void core_siginfo_parse(const unsigned char *d, struct core_siginfo *si);

/* Name and si_code description of a signal ("SIGSEGV", "SEGV_MAPERR"). */
const char *core_signal_name(int signo);
const char *core_signal_code_name(int signo, int code);

#endif
