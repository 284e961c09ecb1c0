#include "memory.h"

#include <string.h>

/* The one bounded-read loop: how many of LEN bytes at ADDR were read before
 * the first fault, run by run as the reader serves them. */
static size_t read_upto_fault(struct core *core, uint64_t addr, void *buf, size_t len)
{
	unsigned char *p = buf;
	size_t done = 0;
	while (done < len) {
		size_t n = core->reader.ops->read(core->reader.ctx, addr + done, p + done, len - done);
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

bool core_read_bytes(struct core *core, uint64_t addr, void *buf, size_t len)
{
	return read_upto_fault(core, addr, buf, len) == len;
}

struct core_error *core_read(struct core *core, uint64_t addr, void *buf, size_t len)
{
	size_t done = read_upto_fault(core, addr, buf, len);
	return done == len ? NULL : core_error_fault(addr + done, len - done);
}

const char *core_pointer_problem(struct core *core, uint64_t addr)
{
	if (addr == 0)
		return "is NULL";
	if (addr % 8 != 0)
		return "is misaligned";
	return core_is_readable(core, addr, 8) ? "is only partly readable" : "is not readable";
}

bool core_pointer_ok(struct core *core, uint64_t addr, size_t len, size_t align)
{
	return addr != 0 && (align == 0 || addr % align == 0) && len <= UINT64_MAX - addr &&
	       core_is_readable(core, addr, len);
}

bool core_read_saved(const struct core *core, uint64_t addr, void *buf, size_t len)
{
	const struct core_reader_ops *ops = core->reader.ops;
	return ops->read_saved ? ops->read_saved(core->reader.ctx, addr, buf, len)
			       : ops->read(core->reader.ctx, addr, buf, len) == len;
}

struct core_error *core_record_start(struct core *core)
{
	const struct core_reader_ops *ops = core->reader.ops;
	return ops->record_start ? ops->record_start(core->reader.ctx) : NULL;
}

bool core_read_u64(struct core *core, uint64_t addr, uint64_t *value)
{
	return core_read_bytes(core, addr, value, sizeof(*value));
}

bool core_stopped_at(const struct core *core, uint64_t *ns)
{
	const struct core_reader_ops *ops = core->reader.ops;
	*ns = ops->stopped_ns ? ops->stopped_ns(core->reader.ctx) : 0;
	return *ns != 0;
}

bool core_read_running(const struct core *core)
{
	return core->reader.ops->running && core->reader.ops->running(core->reader.ctx);
}

void core_read_transient(struct core *core, bool on)
{
	if (core->reader.ops->transient)
		core->reader.ops->transient(core->reader.ctx, on);
}

bool core_read_u32(struct core *core, uint64_t addr, uint32_t *value)
{
	return core_read_bytes(core, addr, value, sizeof(*value));
}

bool core_is_readable(struct core *core, uint64_t addr, size_t len)
{
	unsigned char tmp[256];
	while (len > 0) {
		size_t n = len < sizeof(tmp) ? len : sizeof(tmp);
		if (!core_read_bytes(core, addr, tmp, n))
			return false;
		addr += n;
		len -= n;
	}
	return true;
}

bool core_read_string(struct core *core, uint64_t addr, char *buf, size_t max)
{
	if (max == 0)
		return false;
	size_t got = 0;
	while (got + 1 < max) {
		size_t want = max - 1 - got;
		if (want > 64)
			want = 64;
		/* Shrink the chunk at page ends so a string near an unmapped page still reads. */
		uint64_t to_page = 4096 - ((addr + got) & 4095);
		if (want > to_page)
			want = (size_t)to_page;
		if (!core_read_bytes(core, addr + got, buf + got, want))
			break;
		void *nul = memchr(buf + got, '\0', want);
		if (nul)
			return true;
		got += want;
	}
	buf[got] = '\0';
	return false;
}
