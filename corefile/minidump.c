#include "minidump.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/array.h"
#include "target.h"
#include "corewrite.h"
#include "notes.h"
#include "procmaps.h"

#define MD_SIGNATURE 0x504d444du      /* "MDMP" */
#define MD_CVINFOELF_SIGNATURE 0x4270454cu   /* "BpEL": a CodeView record holding a build-id */
#define MD_MODULE_SIZE 108u
#define MD_THREAD_SIZE 48u
#define MD_STRING_MAX 4096u           /* bytes of a module name kept, at most */
#define MD_COUNT_MAX 1000000u         /* threads, modules or ranges believed, at most */
#define PAGE CORE_WRITE_PAGE

enum md_stream {
	STREAM_THREADS = 3, STREAM_MODULES = 4, STREAM_MEMORY = 5, STREAM_EXCEPTION = 6,
	STREAM_SYSTEM_INFO = 7, STREAM_MEMORY64 = 9, STREAM_MISC_INFO = 15,
	STREAM_PROC_STATUS = 0x47670004, STREAM_CMD_LINE = 0x47670006, STREAM_AUXV = 0x47670008,
	STREAM_MAPS = 0x47670009, STREAM_CRASHPAD = 0x43500001,
};

/* Bytes of the target at [addr, addr + len): the minidump's own, or a page
 * of a mapped file read from disk. */
struct md_range {
	uint64_t addr, len;
	const unsigned char *bytes;
};

struct md_thread {
	uint32_t tid;
	uint64_t teb;               /* Crashpad: the thread pointer */
	const unsigned char *context;
	uint32_t context_len;
};

struct md_module {
	uint64_t base, size;
	char *name;
	unsigned char build_id[CORE_BUILD_ID_MAX];
	size_t build_id_len;
};

struct md {
	struct core *core;
	const unsigned char *data;
	uint64_t size;
	uint32_t nstreams, streams_rva;
	const struct core_arch *arch;
	struct md_range *ranges;
	size_t nranges, ranges_cap;
	size_t nsorted;             /* ranges[0, nsorted) are sorted, without overlap */
	struct md_thread *threads;
	size_t nthreads, threads_cap;
	struct md_module *modules;
	size_t nmodules, modules_cap;
	char *maps_text;
	struct core_maps_line *maps;
	size_t nmaps, maps_cap;
	unsigned char **file_pages;  /* owned: the pages read from files */
	size_t nfile_pages, file_pages_cap;
	bool has_exception, exception_has_info;
	uint32_t exception_tid;
	int signo, code;
	uint64_t fault_addr;
	const unsigned char *exception_context;
	uint32_t exception_context_len;
	uint32_t pid, ppid, uid, gid;
	char name[16], args[80];
	const unsigned char *auxv;
	size_t auxv_len;
	unsigned char *annotations;  /* CORE_NOTE_ANNOTATIONS's desc */
	size_t annotations_len, annotations_cap, nannotations;
};

static uint16_t get16(const unsigned char *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t get32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* The LEN bytes at file offset RVA, or NULL when they are not all in the file. */
static const unsigned char *md_at(const struct md *m, uint64_t rva, uint64_t len)
{
	return rva <= m->size && len <= m->size - rva ? m->data + rva : NULL;
}

bool core_is_minidump(const unsigned char *head, size_t len)
{
	return len >= 4 && get32(head) == MD_SIGNATURE;
}

/* The first stream of TYPE: its bytes and length.  False when the file
 * has none, or it lies past the end of the file (warned). */
static bool md_stream(const struct md *m, uint32_t type, const unsigned char **p, uint32_t *len)
{
	for (uint32_t i = 0; i < m->nstreams; i++) {
		const unsigned char *d = m->data + m->streams_rva + 12 * (uint64_t)i;
		if (get32(d) != type)
			continue;
		*len = get32(d + 4);
		*p = md_at(m, get32(d + 8), *len);
		if (!*p)
			core_warn(m->core, "minidump stream %u (type 0x%x) of %u bytes at %u lies past the end "
				  "of the file; ignored", i, type, *len, get32(d + 8));
		return *p != NULL;
	}
	return false;
}

/* A count of entries of SIZE bytes after a header of HEAD bytes in a
 * stream of LEN bytes, bounded by what the stream holds (warned). */
static uint64_t md_count(struct md *m, const char *what, uint64_t count, uint32_t len, uint32_t head,
			 uint32_t size)
{
	uint64_t room = len >= head ? (len - head) / size : 0;
	if (count > room || count > MD_COUNT_MAX) {
		uint64_t kept = room < MD_COUNT_MAX ? room : MD_COUNT_MAX;
		core_warn(m->core, "minidump %s list claims %llu entries, its stream holds %llu; %llu read",
			  what, (unsigned long long)count, (unsigned long long)room, (unsigned long long)kept);
		return kept;
	}
	return count;
}

/* Memory the minidump holds at [ADDR, ADDR + LEN) from file offset RVA. */
static bool add_range(struct md *m, uint64_t addr, uint64_t len, uint64_t rva)
{
	const unsigned char *bytes = md_at(m, rva, len);
	if (len == 0)
		return true;
	if (!bytes || addr > UINT64_MAX - len) {
		core_warn(m->core, "minidump memory at 0x%llx (%llu bytes at offset %llu) lies past the end "
			  "of the file or of the address space; ignored", (unsigned long long)addr,
			  (unsigned long long)len, (unsigned long long)rva);
		return true;
	}
	struct md_range *r = base_array_push(&m->ranges, &m->nranges, &m->ranges_cap, sizeof(*r));
	if (!r)
		return false;
	*r = (struct md_range){ addr, len, bytes };
	return true;
}

/* ---- the CPU ----------------------------------------------------------- */

static bool context_is(const struct core_arch *arch, const unsigned char *ctx, uint32_t len)
{
	unsigned at = arch->minidump_context_flags_offset;
	return ctx && len >= arch->minidump_context_min && len >= at + 4 &&
	       (get32(ctx + at) & arch->minidump_context_flag) != 0;
}

/* The machine from SystemInfo, else from the CPU bit of the first thread's
 * context (lldb writes a SystemInfo of zeros). */
static const struct core_arch *md_arch(struct md *m)
{
	static const struct core_arch *const arches[] = { &core_arch_x86_64, &core_arch_aarch64 };
	const unsigned char *p;
	uint32_t len;
	if (md_stream(m, STREAM_SYSTEM_INFO, &p, &len) && len >= 2) {
		uint16_t cpu = get16(p);
		for (size_t i = 0; i < 2; i++)
			if (arches[i]->minidump_cpu == cpu)
				return arches[i];
		if (cpu == 0x8003)   /* Breakpad's early ARM64 */
			return &core_arch_aarch64;
	}
	for (size_t i = 0; i < 2; i++)
		if (m->nthreads > 0 && context_is(arches[i], m->threads[0].context, m->threads[0].context_len))
			return arches[i];
	return NULL;
}

/* ---- streams ------------------------------------------------------------- */

/* The entries of SIZE bytes of the list at P (LEN bytes: a 4-byte count,
 * then the entries): the first's bytes, their number in *N (bounded,
 * warned); NULL (*N 0) when P is NULL or holds no count. */
static const unsigned char *md_entries(struct md *m, const unsigned char *p, uint32_t len,
				       const char *what, uint32_t size, uint64_t *n)
{
	*n = p && len >= 4 ? md_count(m, what, get32(p), len, 4, size) : 0;
	return *n ? p + 4 : NULL;
}

/* The list stream TYPE's entries (md_entries()). */
static const unsigned char *md_list(struct md *m, uint32_t type, const char *what, uint32_t size,
				    uint64_t *n)
{
	const unsigned char *p;
	uint32_t len = 0;
	if (!md_stream(m, type, &p, &len))
		p = NULL;
	return md_entries(m, p, len, what, size, n);
}

/* The entries of the list a location descriptor at LOC {size, RVA} names. */
static const unsigned char *md_located(struct md *m, const unsigned char *loc, const char *what,
				       uint32_t size, uint64_t *n)
{
	uint32_t len = get32(loc);
	const unsigned char *p = md_at(m, get32(loc + 4), len);
	return md_entries(m, p, len, what, size, n);
}

static bool read_threads(struct md *m)
{
	uint64_t n;
	const unsigned char *list = md_list(m, STREAM_THREADS, "thread", MD_THREAD_SIZE, &n);
	for (uint64_t i = 0; i < n; i++) {
		const unsigned char *t = list + MD_THREAD_SIZE * i;
		struct md_thread *th = base_array_push(&m->threads, &m->nthreads, &m->threads_cap, sizeof(*th));
		if (!th || !add_range(m, get64(t + 24), get32(t + 32), get32(t + 36)))
			return false;
		th->tid = get32(t);
		th->teb = get64(t + 16);
		th->context_len = get32(t + 40);
		th->context = md_at(m, get32(t + 44), th->context_len);
	}
	return true;
}

static bool read_memory(struct md *m)
{
	const unsigned char *p;
	uint32_t len;
	uint64_t n;
	const unsigned char *list = md_list(m, STREAM_MEMORY, "memory", 16, &n);
	for (uint64_t i = 0; i < n; i++) {
		const unsigned char *d = list + 16 * i;
		if (!add_range(m, get64(d), get32(d + 8), get32(d + 12)))
			return false;
	}
	if (md_stream(m, STREAM_MEMORY64, &p, &len) && len >= 16) {
		uint64_t rva = get64(p + 8);
		n = md_count(m, "memory64", get64(p), len, 16, 16);
		for (uint64_t i = 0; i < n; i++) {
			const unsigned char *d = p + 16 + 16 * i;
			uint64_t size = get64(d + 8);
			if (rva > m->size || size > m->size - rva) {
				core_warn(m->core, "minidump memory64 list: range %llu at 0x%llx lies past the end "
					  "of the file; it and the rest ignored", (unsigned long long)i,
					  (unsigned long long)get64(d));
				break;
			}
			if (!add_range(m, get64(d), size, rva))
				return false;
			rva += size;
		}
	}
	return true;
}

/* MDString at RVA (UTF-16LE) as UTF-8, NULL when unreadable (or no memory). */
static char *md_string(const struct md *m, uint32_t rva)
{
	const unsigned char *p = md_at(m, rva, 4);
	if (!p)
		return NULL;
	uint32_t bytes = get32(p);
	if (bytes > MD_STRING_MAX)
		bytes = MD_STRING_MAX;
	const unsigned char *s = md_at(m, (uint64_t)rva + 4, bytes);
	if (!s)
		return NULL;
	char *out = malloc(3 * (bytes / 2) + 1), *o = out;
	if (!out)
		return NULL;
	for (uint32_t i = 0; i + 1 < bytes; i += 2) {
		uint16_t c = get16(s + i);
		if (c < 0x80) {
			*o++ = c ? (char)c : '?';
		} else if (c < 0x800) {
			*o++ = (char)(0xc0 | c >> 6);
			*o++ = (char)(0x80 | (c & 0x3f));
		} else if (c >= 0xd800 && c < 0xe000) {
			*o++ = '?';     /* a surrogate half: names here are paths, nearly always ASCII */
		} else {
			*o++ = (char)(0xe0 | c >> 12);
			*o++ = (char)(0x80 | ((c >> 6) & 0x3f));
			*o++ = (char)(0x80 | (c & 0x3f));
		}
	}
	*o = '\0';
	return out;
}

static bool read_modules(struct md *m)
{
	uint64_t n;
	const unsigned char *list = md_list(m, STREAM_MODULES, "module", MD_MODULE_SIZE, &n);
	for (uint64_t i = 0; i < n; i++) {
		const unsigned char *d = list + MD_MODULE_SIZE * i;
		struct md_module *mod = base_array_push(&m->modules, &m->nmodules, &m->modules_cap, sizeof(*mod));
		if (!mod)
			return false;
		mod->base = get64(d);
		mod->size = get32(d + 8);
		mod->name = md_string(m, get32(d + 20));
		uint32_t cv_len = get32(d + 76);
		const unsigned char *cv = md_at(m, get32(d + 80), cv_len);
		if (cv && cv_len > 4 && get32(cv) == MD_CVINFOELF_SIGNATURE) {
			mod->build_id_len = cv_len - 4 < CORE_BUILD_ID_MAX ? cv_len - 4 : CORE_BUILD_ID_MAX;
			memcpy(mod->build_id, cv + 4, mod->build_id_len);
		}
	}
	return true;
}

/* The exception: Breakpad and Crashpad write the signal, its si_code and
 * si_addr; lldb the signal alone (code 0, the pc for the address). */
static void read_exception(struct md *m)
{
	const unsigned char *p;
	uint32_t len;
	if (!md_stream(m, STREAM_EXCEPTION, &p, &len))
		return;
	if (len < 168) {
		core_warn(m->core, "minidump exception stream of %u bytes is too short; ignored", len);
		return;
	}
	uint32_t code = get32(p + 8);
	if (code == 0 || code > 64)    /* Breakpad's "dump requested" and the like: no signal */
		return;
	m->has_exception = true;
	m->exception_tid = get32(p);
	m->signo = (int)code;
	m->code = (int)get32(p + 12);
	m->fault_addr = get64(p + 24);
	m->exception_has_info = true;
	m->exception_context_len = get32(p + 160);
	m->exception_context = md_at(m, get32(p + 164), m->exception_context_len);
}

/* Copy the line of TEXT (LEN bytes) after KEY ("Name:") into OUT (SIZE). */
static bool status_field(const char *text, size_t len, const char *key, char *out, size_t size)
{
	size_t k = strlen(key);
	for (size_t i = 0; i + k <= len; i++) {
		if ((i == 0 || text[i - 1] == '\n') && memcmp(text + i, key, k) == 0) {
			size_t j = i + k, n = 0;
			while (j < len && (text[j] == ' ' || text[j] == '\t'))
				j++;
			while (j < len && text[j] != '\n' && n + 1 < size)
				out[n++] = text[j++];
			out[n] = '\0';
			return true;
		}
	}
	return false;
}

static void read_process(struct md *m)
{
	const unsigned char *p;
	uint32_t len;
	char field[64];
	if (md_stream(m, STREAM_MISC_INFO, &p, &len) && len >= 12 && (get32(p + 4) & 1))
		m->pid = get32(p + 8);
	if (md_stream(m, STREAM_PROC_STATUS, &p, &len)) {
		const char *t = (const char *)p;
		status_field(t, len, "Name:", m->name, sizeof(m->name));
		if (!m->pid && status_field(t, len, "Tgid:", field, sizeof(field)))
			m->pid = (uint32_t)strtoul(field, NULL, 10);
		if (status_field(t, len, "PPid:", field, sizeof(field)))
			m->ppid = (uint32_t)strtoul(field, NULL, 10);
		if (status_field(t, len, "Uid:", field, sizeof(field)))
			m->uid = (uint32_t)strtoul(field, NULL, 10);
		if (status_field(t, len, "Gid:", field, sizeof(field)))
			m->gid = (uint32_t)strtoul(field, NULL, 10);
	}
	if (md_stream(m, STREAM_CMD_LINE, &p, &len)) {
		size_t n = len < sizeof(m->args) - 1 ? len : sizeof(m->args) - 1;
		for (size_t i = 0; i < n; i++)
			m->args[i] = p[i] ? (char)p[i] : ' ';
		while (n > 0 && m->args[n - 1] == ' ')
			n--;
		m->args[n] = '\0';
	}
	if (md_stream(m, STREAM_AUXV, &p, &len)) {
		m->auxv = p;
		m->auxv_len = len - len % 16;
	}
}

static bool read_maps(struct md *m)
{
	const unsigned char *p;
	uint32_t len;
	if (!md_stream(m, STREAM_MAPS, &p, &len))
		return true;
	if (!(m->maps_text = malloc((size_t)len + 1)))
		return false;
	memcpy(m->maps_text, p, len);
	m->maps_text[len] = '\0';
	for (char *line = m->maps_text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		struct core_maps_line ml;
		if (!core_maps_line_parse(line, &ml))
			continue;
		struct core_maps_line *e = base_array_push(&m->maps, &m->nmaps, &m->maps_cap, sizeof(*e));
		if (!e)
			return false;
		*e = ml;
	}
	return true;
}

/* ---- Crashpad's annotations ----------------------------------------- */

#define ANNOTATION_MAX 4096u          /* bytes of a name or value kept */

/* MinidumpUTF8String at RVA: its bytes and length (bounded), or NULL. */
static const char *utf8_at(const struct md *m, uint32_t rva, uint32_t *len)
{
	const unsigned char *p = md_at(m, rva, 4);
	*len = p ? get32(p) : 0;
	if (*len > ANNOTATION_MAX)
		*len = ANNOTATION_MAX;
	return p && md_at(m, (uint64_t)rva + 4, *len) ? (const char *)p + 4 : NULL;
}

/* One more name and value: "PREFIX: NAME" when PREFIX is not NULL. */
static bool add_annotation(struct md *m, const char *prefix, const char *name, uint32_t name_len,
			   const char *value, uint32_t value_len)
{
	if (m->nannotations >= CORE_ANNOTATIONS_MAX)
		return true;
	size_t plen = prefix ? strlen(prefix) + 2 : 0, need = plen + name_len + 1 + value_len + 1;
	if (!base_array_reserve(&m->annotations, &m->annotations_cap, m->annotations_len + need, 1))
		return false;
	char *o = (char *)m->annotations + m->annotations_len;
	if (prefix)
		o += sprintf(o, "%s: ", prefix);
	for (uint32_t i = 0; i < name_len; i++)
		*o++ = name[i] ? name[i] : ' ';
	*o++ = '\0';
	for (uint32_t i = 0; i < value_len; i++)
		*o++ = value[i] ? value[i] : ' ';
	*o++ = '\0';
	m->annotations_len = (size_t)((unsigned char *)o - m->annotations);
	m->nannotations++;
	return true;
}

/* A MinidumpSimpleStringDictionary at LOC (its size, RVA). */
static bool read_dictionary(struct md *m, const unsigned char *loc, const char *prefix)
{
	uint64_t n;
	const unsigned char *d = md_located(m, loc, "annotation", 8, &n);
	for (uint64_t i = 0; i < n; i++) {
		uint32_t klen, vlen;
		const char *k = utf8_at(m, get32(d + 8 * i), &klen), *v = utf8_at(m, get32(d + 4 + 8 * i), &vlen);
		if (k && v && !add_annotation(m, prefix, k, klen, v, vlen))
			return false;
	}
	return true;
}

/* A MinidumpAnnotationList at LOC: {name RVA, type, reserved, value RVA},
 * the strings (type 1) of them. */
static bool read_annotation_objects(struct md *m, const unsigned char *loc, const char *prefix)
{
	uint64_t n;
	const unsigned char *d = md_located(m, loc, "annotation object", 12, &n);
	for (uint64_t i = 0; i < n; i++) {
		const unsigned char *e = d + 12 * i;
		uint32_t klen, vlen;
		const char *k = utf8_at(m, get32(e), &klen), *v = utf8_at(m, get32(e + 8), &vlen);
		if (get16(e + 4) == 1 && k && v && !add_annotation(m, prefix, k, klen, v, vlen))
			return false;
	}
	return true;
}

/* The file name of module I, for its annotations' names. */
static const char *module_label(const struct md *m, uint32_t i)
{
	const char *name = i < m->nmodules && m->modules[i].name ? m->modules[i].name : "?";
	const char *slash = strrchr(name, '/');
	return slash ? slash + 1 : name;
}

/* Crashpad's MinidumpCrashpadInfo: the process's simple annotations, then
 * each module's (MinidumpModuleCrashpadInfo: its list annotations, simple
 * annotations and annotation objects), named after the module. */
static bool read_crashpad(struct md *m)
{
	const unsigned char *p;
	uint32_t len;
	if (!md_stream(m, STREAM_CRASHPAD, &p, &len) || len < 52)
		return true;
	if (!read_dictionary(m, p + 36, NULL))
		return false;
	uint64_t n;
	const unsigned char *list = md_located(m, p + 44, "module annotation", 12, &n);
	for (uint64_t i = 0; i < n; i++) {
		const unsigned char *link = list + 12 * i;
		uint32_t msize = get32(link + 4);
		const unsigned char *mi = md_at(m, get32(link + 8), msize);
		const char *label = module_label(m, get32(link));
		if (!mi || msize < 20)
			continue;
		uint64_t nl;
		const unsigned char *l = md_located(m, mi + 4, "list annotation", 4, &nl);
		for (uint64_t k = 0; k < nl; k++) {
			uint32_t vlen;
			char index[24];
			const char *v = utf8_at(m, get32(l + 4 * k), &vlen);
			snprintf(index, sizeof(index), "[%llu]", (unsigned long long)k);
			if (v && !add_annotation(m, label, index, (uint32_t)strlen(index), v, vlen))
				return false;
		}
		if (!read_dictionary(m, mi + 12, label) ||
		    (msize >= 28 && !read_annotation_objects(m, mi + 20, label)))
			return false;
	}
	return true;
}

/* ---- memory ------------------------------------------------------------ */

static int range_cmp(const void *a, const void *b)
{
	const struct md_range *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->len < y->len ? 1 : x->len > y->len ? -1 : 0;
}

/* Ranges sorted, without overlap: a range the same as one before it
 * (Breakpad lists each stack twice) is dropped silently, one that overlaps
 * another is cut to what lies past it, with a warning. */
static void sort_ranges(struct md *m)
{
	if (m->nranges)
		qsort(m->ranges, m->nranges, sizeof(*m->ranges), range_cmp);
	size_t kept = 0;
	uint64_t cut = 0;
	for (size_t i = 0; i < m->nranges; i++) {
		struct md_range r = m->ranges[i];
		if (kept > 0) {
			const struct md_range *last = &m->ranges[kept - 1];
			uint64_t end = last->addr + last->len;
			if (r.addr + r.len <= end) {
				if (r.addr != last->addr || r.len != last->len)
					cut += r.len;
				continue;
			}
			if (r.addr < end) {
				cut += end - r.addr;
				r.bytes += end - r.addr;
				r.len -= end - r.addr;
				r.addr = end;
			}
		}
		m->ranges[kept++] = r;
	}
	m->nranges = m->nsorted = kept;
	if (cut)
		core_warn(m->core, "minidump memory ranges overlap: %llu bytes held twice were read once",
			  (unsigned long long)cut);
}

/* The first sorted range that ends past ADDR (m->nsorted when none does). */
static size_t range_after(const struct md *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nsorted;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->ranges[mid].addr + m->ranges[mid].len <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The writer's reader: the bytes of every range in [ADDR, ADDR + LEN),
 * zeros between them. */
static bool read_target(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct md *m = ctx;
	bool any = false;
	memset(buf, 0, len);
	for (size_t i = range_after(m, addr); i < m->nsorted && m->ranges[i].addr < addr + len; i++) {
		const struct md_range *r = &m->ranges[i];
		uint64_t from = r->addr > addr ? r->addr : addr;
		uint64_t to = r->addr + r->len < addr + len ? r->addr + r->len : addr + len;
		memcpy((unsigned char *)buf + (from - addr), r->bytes + (from - r->addr), to - from);
		any = true;
	}
	return any;
}

/* ---- the mapped files' headers --------------------------------------- */

/* A minidump holds stacks, not the mapped files: libdwfl finds a module
 * from its ELF header and notes in the target's memory, as the kernel's
 * core keeps them.  The first page of a file mapped from offset 0 is read
 * from disk when the file there is the one that ran: its build-id is the
 * one the minidump's module list records (a file without one is taken
 * when the module records none either). */
#define NOTES_MAX 65536u

static const struct md_module *module_at(const struct md *m, uint64_t addr)
{
	for (size_t i = 0; i < m->nmodules; i++)
		if (m->modules[i].base == addr)
			return &m->modules[i];
	return NULL;
}

/* The build-id of the ELF file FD whose first page is HEAD. */
static void file_build_id(int fd, const unsigned char *head, unsigned char id[CORE_BUILD_ID_MAX],
			  size_t *len)
{
	Elf64_Ehdr eh;
	*len = 0;
	memcpy(&eh, head, sizeof(eh));
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > PAGE ||
	    eh.e_phnum > (PAGE - eh.e_phoff) / sizeof(Elf64_Phdr))
		return;
	for (unsigned i = 0; i < eh.e_phnum && *len == 0; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, head + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_NOTE || ph.p_filesz < 12 || ph.p_filesz > NOTES_MAX)
			continue;
		unsigned char *notes = malloc(ph.p_filesz);
		if (notes && pread(fd, notes, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz)
			core_notes_build_id(notes, ph.p_filesz, id, len);
		free(notes);
	}
}

/* The first page of PATH, mapped at START, kept when it is the module's. */
static bool add_file_header(struct md *m, uint64_t start, const char *path)
{
	const struct md_module *mod = module_at(m, start);
	size_t at = range_after(m, start);
	if (at < m->nsorted && m->ranges[at].addr <= start)
		return true;    /* the minidump holds it */
	int fd = core_open_regular(path);
	if (fd < 0)
		return true;
	unsigned char *page = calloc(1, PAGE);
	bool ok = page != NULL;
	unsigned char id[CORE_BUILD_ID_MAX];
	size_t id_len = 0;
	if (!page || pread(fd, page, PAGE, 0) < (ssize_t)sizeof(Elf64_Ehdr) ||
	    memcmp(page, ELFMAG, SELFMAG) != 0 || page[EI_CLASS] != ELFCLASS64)
		goto out;
	file_build_id(fd, page, id, &id_len);
	size_t want_len = mod ? mod->build_id_len : 0;
	if (id_len != want_len || (want_len && memcmp(id, mod->build_id, want_len) != 0)) {
		core_warn(m->core, "%s: not the file the minidump's process mapped at 0x%llx (its build-id "
			  "differs); its module is found by build-id alone", path, (unsigned long long)start);
		goto out;
	}
	unsigned char **slot = base_array_push(&m->file_pages, &m->nfile_pages, &m->file_pages_cap,
					       sizeof(*slot));
	struct md_range *r = slot ? base_array_push(&m->ranges, &m->nranges, &m->ranges_cap, sizeof(*r)) : NULL;
	if (!r) {
		ok = false;
		goto out;
	}
	*slot = page;
	*r = (struct md_range){ start, PAGE, page };
	page = NULL;
out:
	free(page);
	close(fd);
	return ok;
}

/* The files the process mapped: from LinuxMaps, else the module list.
 * (What a writable mapping held is not its file's: the core's
 * CORE_NOTE_HELD says so.) */
static size_t mapped_files(const struct md *m, struct core_write_file *out)
{
	size_t n = 0;
	if (m->nmaps > 0) {
		for (size_t i = 0; i < m->nmaps; i++)
			if (m->maps[i].path[0] == '/' && m->maps[i].inode != 0)
				out[n++] = (struct core_write_file){ m->maps[i].start, m->maps[i].end,
								     m->maps[i].offset, m->maps[i].path };
		return n;
	}
	for (size_t i = 0; i < m->nmodules; i++)
		if (m->modules[i].name && m->modules[i].name[0] == '/' && m->modules[i].size > 0)
			out[n++] = (struct core_write_file){ m->modules[i].base,
							     m->modules[i].base + m->modules[i].size, 0,
							     m->modules[i].name };
	return n;
}

static bool add_file_headers(struct md *m, const struct core_write_file *files, size_t n)
{
	size_t before = m->nranges;
	for (size_t i = 0; i < n; i++)
		if (files[i].offset == 0 && !add_file_header(m, files[i].start, files[i].path))
			return false;
	if (m->nranges != before)
		sort_ranges(m);
	return true;
}

/* ---- the core's notes -------------------------------------------------- */

/* Thread T's registers from its context (the exception's for the thread
 * that took it), in the table's numbering; false when the context is not
 * one of the machine's. */
static bool thread_regs(struct md *m, const struct md_thread *t, uint64_t *regs)
{
	const struct core_arch *arch = m->arch;
	const unsigned char *ctx = t->context;
	uint32_t len = t->context_len;
	if (m->has_exception && t->tid == m->exception_tid && context_is(arch, m->exception_context,
									 m->exception_context_len)) {
		ctx = m->exception_context;
		len = m->exception_context_len;
	}
	if (!context_is(arch, ctx, len)) {
		core_warn(m->core, "minidump thread %u: its context (%u bytes) is no %s context; thread "
			  "skipped", t->tid, len, arch->name);
		return false;
	}
	memset(regs, 0, CORE_MAX_REGS * sizeof(*regs));
	/* a context holds no system call's number (x86_64's orig_rax) */
	if (arch->syscall_nr_none && arch->syscall_nr < CORE_MAX_REGS)
		regs[arch->syscall_nr] = UINT64_MAX;
	for (unsigned i = 0; i < arch->nminidump_regs; i++) {
		const struct core_context_reg *r = &arch->minidump_regs[i];
		if (r->offset + r->size > len)
			continue;
		regs[r->reg] = r->size == 8 ? get64(ctx + r->offset) :
			       r->size == 4 ? get32(ctx + r->offset) : get16(ctx + r->offset);
	}
	if (arch->reg_tp < CORE_MAX_REGS)
		regs[arch->reg_tp] = t->teb;
	return true;
}

/* NT_PRSTATUS (and the thread pointer's note where the machine keeps it
 * apart): the header both machines share (pr_info, pr_cursig @12,
 * pr_pid @32 ...), then pr_reg. */
static bool note_thread(struct md *m, struct core_writer *w, const struct md_thread *t)
{
	const struct core_arch *arch = m->arch;
	uint64_t regs[CORE_MAX_REGS];
	if (!thread_regs(m, t, regs))
		return true;
	unsigned char *pr = calloc(1, arch->prstatus_size);
	if (!pr)
		return false;
	bool took = m->has_exception && t->tid == m->exception_tid;
	int32_t info[3] = { took ? m->signo : 0, 0, took ? m->code : 0 };
	int16_t cursig = took ? (int16_t)m->signo : 0;
	int32_t ids[4] = { (int32_t)t->tid, (int32_t)m->ppid, 0, 0 };
	memcpy(pr, info, sizeof(info));
	memcpy(pr + 12, &cursig, sizeof(cursig));
	memcpy(pr + 32, ids, sizeof(ids));
	memcpy(pr + arch->prstatus_regs, regs, arch->nprstatus_regs * sizeof(uint64_t));
	core_writer_add_note(w, "CORE", NT_PRSTATUS, pr, arch->prstatus_size);
	free(pr);
	if (arch->tp_note && arch->reg_tp < CORE_MAX_REGS && t->teb)
		core_writer_add_note(w, "LINUX", arch->tp_note, &regs[arch->reg_tp], 8);
	return true;
}

/* The siginfo the exception stream holds; none from a writer that kept
 * only the signal (lldb: no si_code, the pc for the fault address). */
static void note_siginfo(struct md *m, struct core_writer *w)
{
	if (!m->has_exception)
		return;
	uint64_t pc = 0;
	for (size_t i = 0; i < m->nthreads; i++) {
		uint64_t regs[CORE_MAX_REGS];
		if (m->threads[i].tid == m->exception_tid && context_is(m->arch, m->threads[i].context,
									m->threads[i].context_len) &&
		    thread_regs(m, &m->threads[i], regs))
			pc = regs[m->arch->reg_pc];
	}
	if (m->code == 0 && m->fault_addr == pc && core_signal_has_address(m->signo, 1)) {
		core_warn(m->core, "the minidump's exception record names signal %d alone (no si_code, the "
			  "pc for its address)", m->signo);
		return;
	}
	unsigned char si[CORE_SIGINFO_SIZE] = { 0 };
	int32_t head[3] = { m->signo, 0, m->code };
	memcpy(si, head, sizeof(head));
	memcpy(si + 16, &m->fault_addr, 8);
	core_writer_add_note(w, "CORE", NT_SIGINFO, si, sizeof(si));
}

/* struct elf_prpsinfo of a 64-bit Linux, the same on both machines. */
static void note_psinfo(struct md *m, struct core_writer *w)
{
	unsigned char ps[136] = { 0 };
	uint32_t ids[6] = { m->uid, m->gid, m->pid, m->ppid, 0, 0 };
	ps[1] = 'R';
	memcpy(ps + 16, ids, sizeof(ids));
	memcpy(ps + 40, m->name, strnlen(m->name, 16));
	memcpy(ps + 56, m->args, strnlen(m->args, 80));
	core_writer_add_note(w, "CORE", NT_PRPSINFO, ps, sizeof(ps));
}

/* Where module MOD ends: the last of the mappings of its file that follow
 * its base (LinuxMaps; lldb's module sizes cover part of an image), else
 * its size. */
static uint64_t module_end(const struct md *m, const struct md_module *mod)
{
	uint64_t end = mod->size <= UINT64_MAX - mod->base ? mod->base + mod->size : UINT64_MAX;
	for (size_t i = 0; mod->name && i < m->nmaps; i++)
		if (m->maps[i].start >= mod->base && m->maps[i].end > end && strcmp(m->maps[i].path, mod->name) == 0)
			end = m->maps[i].end;
	return end;
}

/* CORE_NOTE_MODULES: every module with a path, its extent and build-id. */
static bool note_modules(struct md *m, struct core_writer *w)
{
	size_t len = 0;
	for (size_t i = 0; i < m->nmodules; i++)
		if (m->modules[i].name)
			len += 20 + m->modules[i].build_id_len + strlen(m->modules[i].name) + 1;
	unsigned char *d = malloc(len ? len : 1), *o = d;
	if (!d)
		return false;
	for (size_t i = 0; i < m->nmodules; i++) {
		const struct md_module *mod = &m->modules[i];
		if (!mod->name)
			continue;
		uint64_t end = module_end(m, mod);
		uint32_t id_len = (uint32_t)mod->build_id_len;
		memcpy(o, &mod->base, 8);
		memcpy(o + 8, &end, 8);
		memcpy(o + 16, &id_len, 4);
		memcpy(o + 20, mod->build_id, id_len);
		o += 20 + id_len;
		o = (unsigned char *)stpcpy((char *)o, mod->name) + 1;
	}
	if (len)
		core_writer_add_note(w, CORE_NOTE_OWNER, CORE_NOTE_MODULES, d, len);
	free(d);
	return true;
}

/* The threads, the one that took the exception first (a report signs it). */
static bool add_notes(struct md *m, struct core_writer *w)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < m->nthreads; i++) {
			const struct md_thread *t = &m->threads[i];
			bool first = m->has_exception ? t->tid == m->exception_tid : i == 0;
			if (first == (pass == 0) && !note_thread(m, w, t))
				return false;
		}
	note_siginfo(m, w);
	note_psinfo(m, w);
	if (m->auxv_len)
		core_writer_add_note(w, "CORE", NT_AUXV, m->auxv, m->auxv_len);
	core_writer_add_note(w, CORE_NOTE_OWNER, CORE_NOTE_HELD, "", 0);
	/* Said on the core, not in a note: the core's bytes, whose hash is
	 * the minidump's fingerprint, stay those of every earlier reading. */
	m->core->syscall_nr_unsaved = m->arch->syscall_nr_none;
	if (!note_modules(m, w))
		return false;
	if (m->nannotations)
		core_writer_add_note(w, CORE_NOTE_OWNER, CORE_NOTE_ANNOTATIONS, m->annotations,
				     m->annotations_len);
	return true;
}

/* The mappings: LinuxMaps's, else the modules' (code) and the memory
 * ranges outside them (the writer makes those readable). */
static void add_regions(struct md *m, struct core_writer *w)
{
	if (m->nmaps > 0) {
		for (size_t i = 0; i < m->nmaps; i++)
			core_writer_add_region(w, m->maps[i].start, m->maps[i].end, m->maps[i].flags);
		return;
	}
	uint64_t end = 0;
	for (size_t i = 0; i < m->nmodules; i++) {
		const struct md_module *mod = &m->modules[i];
		if (mod->size == 0 || mod->base > UINT64_MAX - mod->size || mod->base < end)
			continue;
		core_writer_add_region(w, mod->base, mod->base + mod->size, PF_R | PF_X);
		end = mod->base + mod->size;
	}
}

/* ---- the whole -------------------------------------------------------- */

static struct core_error *md_read(struct md *m)
{
	const unsigned char *h = md_at(m, 0, 32);
	if (!h || get32(h) != MD_SIGNATURE)
		return core_error_create(CORE_ERROR_FORMAT, "%s: not a minidump", m->core->path);
	m->nstreams = get32(h + 8);
	m->streams_rva = get32(h + 12);
	if (!md_at(m, m->streams_rva, 12 * (uint64_t)m->nstreams)) {
		uint64_t room = m->streams_rva < m->size ? (m->size - m->streams_rva) / 12 : 0;
		core_warn(m->core, "minidump stream directory claims %u streams, the file holds %llu",
			  m->nstreams, (unsigned long long)room);
		m->nstreams = (uint32_t)room;
	}
	if (!read_threads(m) || !read_memory(m) || !read_modules(m) || !read_maps(m))
		return &core_error_nomem;
	read_exception(m);
	read_process(m);
	if (!read_crashpad(m))
		return &core_error_nomem;
	if (m->nthreads == 0)
		return core_error_create(CORE_ERROR_FORMAT, "%s: the minidump holds no thread list",
					 m->core->path);
	if (!(m->arch = md_arch(m)))
		return core_error_create(CORE_ERROR_FORMAT, "%s: the minidump's CPU is neither x86_64 nor "
					 "aarch64", m->core->path);
	sort_ranges(m);
	return NULL;
}

/* The ELF core M describes, written to a new anonymous file. */
static struct core_error *md_write(struct md *m, int *out_fd, uint64_t *out_size)
{
	struct core_writer *w = NULL;
	struct core_write_file *files = calloc(m->nmaps + m->nmodules + 1, sizeof(*files));
	struct core_error *err = files ? core_writer_create(m->arch->machine, &w) : &core_error_nomem;
	int fd = -1;
	FILE *f = NULL;
	if (err)
		goto out;
	size_t nfiles = mapped_files(m, files);
	if (!add_file_headers(m, files, nfiles) || !add_notes(m, w)) {
		err = &core_error_nomem;
		goto out;
	}
	core_writer_add_files(w, files, nfiles);
	core_writer_whole_regions(w);
	add_regions(m, w);
	for (size_t i = 0; i < m->nranges; i++)
		core_writer_keep(w, m->ranges[i].addr, m->ranges[i].len);
	fd = memfd_create("asyncore-minidump", MFD_CLOEXEC);
	int dup_fd = fd >= 0 ? dup(fd) : -1;
	if (dup_fd < 0 || !(f = fdopen(dup_fd, "w"))) {
		if (dup_fd >= 0)
			close(dup_fd);
		err = core_error_create(CORE_ERROR_IO, "%s: cannot make the core of the minidump: %s",
					m->core->path, strerror(errno));
		goto out;
	}
	err = core_writer_write(w, read_target, m, f);
	struct stat st;
	if (!err && (fflush(f) != 0 || fstat(fd, &st) != 0))
		err = core_error_create(CORE_ERROR_IO, "%s: cannot write the core of the minidump: %s",
					m->core->path, strerror(errno));
	if (!err) {
		*out_fd = fd;
		*out_size = (uint64_t)st.st_size;
		fd = -1;
	}
out:
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	core_writer_destroy(w);
	free(files);
	return err;
}

static void md_deinit(struct md *m)
{
	for (size_t i = 0; i < m->nmodules; i++)
		free(m->modules[i].name);
	for (size_t i = 0; i < m->nfile_pages; i++)
		free(m->file_pages[i]);
	free(m->file_pages);
	free(m->modules);
	free(m->threads);
	free(m->ranges);
	free(m->maps);
	free(m->maps_text);
	free(m->annotations);
}

struct core_error *core_minidump_convert(struct core *core, int fd, uint64_t size, int *out_fd,
					 uint64_t *out_size)
{
	struct md m = { .core = core, .size = size };
	if (size == 0 || size > SIZE_MAX)
		return core_error_create(CORE_ERROR_FORMAT, "%s: not a minidump", core->path);
	void *map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return core_error_create(CORE_ERROR_IO, "%s: cannot map: %s", core->path, strerror(errno));
	m.data = map;
	struct core_error *err = md_read(&m);
	if (!err)
		err = md_write(&m, out_fd, out_size);
	md_deinit(&m);
	munmap(map, (size_t)size);
	return err;
}
