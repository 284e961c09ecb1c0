/* glibc (2.36, assert/assert.c and sysdeps/posix/libc_fatal.c) keeps
 *     struct abort_msg_s { unsigned int size; char msg[]; } *__abort_msg;
 * a GLIBC_PRIVATE symbol in libc.so.6's .dynsym.  The buffer is mmap'd and
 * `size` is the mapping's length (a multiple of the page size), so the
 * message ends at a NUL well inside it.  gdb users read it with
 * `print __abort_msg->msg`. */
#include "abortmsg.h"

#include <stdlib.h>
#include <string.h>


enum {
	ABORT_MSG_HEADER = 4,           /* unsigned int size */
	ABORT_MSG_MAX = 64 * 1024,      /* far above any assert() text */
};

/* glibc ends every message with a newline, which gdb shows as "\n"; in a
 * report header and a JSON string it is noise, so one is dropped. */
static void drop_final_newline(char *msg, size_t *len)
{
	if (*len > 0 && msg[*len - 1] == '\n')
		msg[--*len] = '\0';
}

void an_abort_message_recover(struct dbg_session *s, struct analysis *an)
{
	struct core *core = dbg_session_core(s);
	uint64_t var, size_of_var, ptr;
	uint32_t size;
	if (!dbg_find_symbol(s, "__abort_msg", &var, &size_of_var) || !core_read_u64(core, var, &ptr) ||
	    ptr == 0)
		return;
	if (!core_pointer_ok(core, ptr, ABORT_MSG_HEADER + 1, 8) || !core_read_u32(core, ptr, &size)) {
		core_warn(core, "__abort_msg 0x%llx %s: no abort message", (unsigned long long)ptr,
			core_pointer_problem(core, ptr));
		return;
	}
	if (size <= ABORT_MSG_HEADER || size > ABORT_MSG_MAX) {
		core_warn(core, "__abort_msg 0x%llx has size %u (not within %d..%d): no abort message",
			(unsigned long long)ptr, size, ABORT_MSG_HEADER + 1, ABORT_MSG_MAX);
		return;
	}
	size_t room = size - ABORT_MSG_HEADER;
	char *msg = malloc(room + 1);
	if (!msg)
		return;
	/* Read what is mapped: the NUL may come before an unreadable tail. */
	size_t got = 0;
	while (got < room) {
		size_t chunk = room - got < 256 ? room - got : 256;
		if (!core_read_bytes(core, ptr + ABORT_MSG_HEADER + got, msg + got, chunk))
			break;
		got += chunk;
		if (memchr(msg + got - chunk, '\0', chunk))
			break;
	}
	size_t len = got ? strnlen(msg, got) : 0;
	if (len == got) {
		core_warn(core, "__abort_msg 0x%llx: message not terminated within its %u bytes%s",
			(unsigned long long)ptr, size, got < room ? " that can be read" : "");
		free(msg);
		return;
	}
	drop_final_newline(msg, &len);
	an->abort_message = msg;
}
