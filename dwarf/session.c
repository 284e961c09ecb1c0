/* A libdwfl session per core: modules reported from the core, the user's
 * binary preferred for the executable when its build-id agrees. */
#include "internal.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/array.h"
#include "../corefile/mapped.h"
#include "../base/strlist.h"
#include "unwind.h"

/* libdwfl's find_elf callback has no user argument; sessions run one at a
 * time per thread, so the active one is kept here. */
static _Thread_local struct dbg_session *active_session;

char *dbg_hex(const unsigned char *bytes, size_t len)
{
	if (len == 0)
		return NULL;
	char *hex = malloc(2 * len + 1);
	if (!hex)
		return NULL;
	for (size_t i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", bytes[i]);
	return hex;
}

static bool module_is_main(struct dbg_session *s, Dwfl_Module *mod)
{
	Dwarf_Addr low, high;
	dwfl_module_info(mod, NULL, &low, &high, NULL, NULL, NULL, NULL);
	uint64_t probe = s->core->auxv.phdr ? s->core->auxv.phdr : s->core->auxv.entry;
	return probe && probe >= low && probe < high;
}

/* Open PATH and compare its build-id with the module's; returns an fd or -1. */
static int open_checked(struct dbg_session *s, Dwfl_Module *mod, const char *modname,
			const char *path)
{
	int fd = core_open_regular(path);
	if (fd < 0)
		return -1;
	const unsigned char *want;
	GElf_Addr vaddr;
	int want_len = dwfl_module_build_id(mod, &want, &vaddr);
	if (want_len <= 0) {
		/* No build-id to go by: the main module is checked against what
		 * the core saved of it (the user's binary already was). */
		if (module_is_main(s, mod) && path != s->opts.binary && !dbg_binary_matches(s, path, NULL)) {
			close(fd);
			return -1;
		}
		return fd;
	}
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *have = NULL;
	ssize_t have_len = elf ? dwelf_elf_gnu_build_id(elf, &have) : -1;
	bool same = have_len == want_len && memcmp(have, want, (size_t)want_len) == 0;
	if (!same) {
		char *w = dbg_hex(want, (size_t)want_len);
		char *h = have_len > 0 ? dbg_hex(have, (size_t)have_len) : NULL;
		core_warn(s->core, "%s has build-id %s but the core's %s has build-id %s: not used for that module",
			 path, h ? h : "(none)", modname, w ? w : "?");
		free(w);
		free(h);
	}
	if (elf)
		elf_end(elf);
	if (!same) {
		close(fd);
		return -1;
	}
	return fd;
}

static int session_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
			    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	struct dbg_session *s = active_session;
	*elfp = NULL;
	const char *candidates[3] = { NULL, NULL, NULL };
	size_t n = 0;
	if (s && s->opts.binary && module_is_main(s, mod))
		candidates[n++] = s->opts.binary;
	if (s && modname && modname[0]) {
		/* a bare soname only where corefile/ found its file by build-id */
		const char *resolved = core_mapped_resolve(s->core, modname);
		if (resolved || modname[0] == '/')
			candidates[n++] = resolved ? resolved : modname;
	}
	for (size_t i = 0; i < n; i++) {
		int fd = open_checked(s, mod, modname, candidates[i]);
		if (fd >= 0) {
			*file_name = strdup(candidates[i]);
			return fd;
		}
	}
	int fd = dwfl_build_id_find_elf(mod, userdata, modname, base, file_name, elfp);
	/* libdwfl names no file libdebuginfod fetched: the module's file is
	 * then read from where it lies in debuginfod's cache */
	if (fd >= 0 && !*file_name)
		*file_name = dbg_fd_path(fd);
	return fd;
}

/* The cache's lookup (dwarf/inflated.c): a session's modules hold the
 * session once listed (collect_module). */
static int session_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
				  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
				  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	(void)modname;
	(void)base;
	struct dbg_session *s = *userdata;
	return dbg_find_debuginfo(mod, NULL, s ? s->cache : NULL, file_name,
				  debuglink_file, debuglink_crc, debuginfo_file_name);
}

static int module_cmp(const void *a, const void *b)
{
	const struct dbg_module_entry *x = a, *y = b;
	return x->info.start < y->info.start ? -1 : x->info.start > y->info.start;
}

/* Whether PATH names a file by its build-id: a .build-id tree's, or
 * debuginfod's cache (DIR/HEX/executable).  The module then keeps the name
 * the core gave it. */
static bool named_by_build_id(const char *path)
{
	if (strstr(path, "/.build-id/"))
		return true;
	const char *base = strrchr(path, '/');
	if (!base || strcmp(base, "/executable") != 0)
		return false;
	const char *dir = base;
	while (dir > path && dir[-1] != '/')
		dir--;
	size_t n = (size_t)(base - dir);
	return n >= 16 && strspn(dir, "0123456789abcdef") >= n;
}

static int collect_module(Dwfl_Module *mod, void **userdata, const char *name,
			  Dwarf_Addr start, void *arg)
{
	struct dbg_session *s = arg;
	*userdata = s;
	struct dbg_module_entry *m = realloc(s->modules, (s->nmodules + 1) * sizeof(*m));
	if (!m)
		return DWARF_CB_ABORT;
	s->modules = m;
	m = &m[s->nmodules];
	memset(m, 0, sizeof(*m));
	Dwarf_Addr low, high;
	const char *mainfile = NULL, *debugfile = NULL;
	Dwarf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	dwfl_module_info(mod, NULL, &low, &high, NULL, NULL, &mainfile, &debugfile);
	m->mod = mod;
	m->bias = elf ? bias : 0;
	m->info.start = start ? start : low;
	m->info.start = low;
	m->info.end = high;
	bool by_build_id = mainfile && named_by_build_id(mainfile) && name && name[0] == '/';
	char *path = strdup(mainfile && !by_build_id ? mainfile : name);
	if (path && path[0] == 0x01)
		path[0] = '/';  /* a path core_mapped_guard() blanked */
	m->info.path = path;
	const unsigned char *bid;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bid, &vaddr);
	m->info.build_id = len > 0 ? dbg_hex(bid, (size_t)len) : NULL;
	m->info.is_main = module_is_main(s, mod);
	s->nmodules++;
	return DWARF_CB_OK;
}

/* libdwfl finds the executable through its ELF header in the core; a core
 * that did not save it (coredump_filter without bit 4) lists no executable
 * at all.  A BINARY that passed check_binary() is then reported at its load
 * bias. */
static void report_binary(struct dbg_session *s, const struct core_mapped_file *exe)
{
	uint64_t probe = s->core->auxv.phdr ? s->core->auxv.phdr : s->core->auxv.entry;
	if (!s->opts.binary || !probe || dwfl_addrmodule(s->dwfl, probe))
		return;
	const char *name = exe ? exe->path : s->opts.binary;
	dwfl_report_begin_add(s->dwfl);
	if (!dwfl_report_elf(s->dwfl, name, s->opts.binary, -1, s->binary_bias, false))
		core_warn(s->core, "cannot report %s for %s: %s", s->opts.binary, name, dwfl_errmsg(-1));
	dwfl_report_end(s->dwfl, NULL, NULL);
}

static struct core_error *report_modules(struct dbg_session *s)
{
	struct core *core = s->core;
	const struct core_mapped_file *exe = core->auxv.phdr ? core_find_file(core, core->auxv.phdr) : NULL;
	/* The user's BINARY, once checked, is the executable: it may be the
	 * build with debug info of the stripped file the core names. */
	const char *executable = s->opts.binary ? s->opts.binary : exe ? exe->path : core_executable(core);
	struct stat st;
	if (executable && stat(executable, &st) == 0 && !S_ISREG(st.st_mode))
		executable = NULL;  /* libdwfl would open it; see core_mapped_guard() */
	/* A source that lists its modules (a minidump) is reported from that
	 * list alone: the core's segments are then only the memory it held,
	 * and libdwfl would take a few bytes held inside a module (the code
	 * around a pc) for a segment of no module. */
	dwfl_report_begin(s->dwfl);
	int n = core->nmodules ? 0 : dwfl_core_file_report(s->dwfl, core->elf, executable);
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (n < 0)
		core_warn(s->core, "cannot list the core's modules: %s", dwfl_errmsg(-1));
	report_binary(s, exe);
	dbg_report_link_map(s);
	dbg_report_listed(s);
	if (dwfl_getmodules(s->dwfl, collect_module, s, 0) != 0)
		return &core_error_nomem;
	if (s->nmodules)  /* s->modules is NULL when the core lists no module */
		qsort(s->modules, s->nmodules, sizeof(*s->modules), module_cmp);
	struct core_error *err = dbg_learn_unlisted(s);
	if (err)
		return err;
	if (s->opts.binary && exe) {
		for (size_t i = 0; i < s->nmodules; i++)
			if (s->modules[i].info.is_main && s->modules[i].info.path &&
			    strcmp(s->modules[i].info.path, s->opts.binary) == 0)
				return core_set_file_replacement(core, exe->path, s->opts.binary);
	}
	return NULL;
}

static void warn_missing_main(struct dbg_session *s)
{
	for (size_t i = 0; i < s->nmodules; i++) {
		struct dbg_module_entry *m = &s->modules[i];
		if (!m->info.is_main)
			continue;
		Dwarf_Addr bias;
		if (!dwfl_module_getelf(m->mod, &bias))
			core_warn(s->core, "executable %s not found: frames in it show addresses only "
				 "(give the binary or --sysroot)", m->info.path ? m->info.path : "?");
		return;
	}
	/* A core without NT_FILE whose pages of the executable were not saved
	 * (qemu-user's) names no module until the executable is found. */
	if (s->core->nfiles == 0) {
		const char *exe = core_executable(s->core);
		core_warn(s->core, "the core lists no files (no NT_FILE) and its executable %s was not "
			  "found: no frame can be named (give the binary, and --sysroot for its libraries)",
			  exe ? exe : "(unknown)");
	}
}

/* A BINARY argument that cannot be read, or is not the executable the core
 * ran, is dropped with a warning: the analysis goes on with what the core
 * names.  Checked before libdwfl reports modules, since libdwfl opens the
 * core's own NT_FILE path by itself when it exists and never asks for
 * BINARY then. */
static void check_binary(struct dbg_session *s)
{
	if (!s->opts.binary)
		return;
	int fd = core_open_regular(s->opts.binary);
	if (fd < 0) {
		core_warn(s->core, "binary %s: %s; not used", s->opts.binary,
			 errno == EINVAL ? "not a regular file" : strerror(errno));
		s->opts.binary = NULL;
		return;
	}
	close(fd);
	if (!dbg_binary_matches(s, s->opts.binary, &s->binary_bias))
		s->opts.binary = NULL;
}

struct core_error *dbg_session_open(struct core *core, const struct dbg_options *opts,
				    struct dbg_cache *cache, struct dbg_session **out)
{
	*out = NULL;
	struct dbg_session *s = calloc(1, sizeof(*s));
	if (!s)
		return &core_error_nomem;
	struct core_error *err = NULL;
	s->core = core;
	if (opts)
		s->opts = *opts;
	if (!s->opts.max_frames)
		s->opts.max_frames = DBG_MAX_FRAMES_DEFAULT;
	if (opts && opts->sysroot)
		core_set_sysroot(core, opts->sysroot);
	s->cache = cache;
	if (!cache) {
		s->cache = dbg_cache_create();
		s->own_cache = true;
		if (!s->cache) {
			err = &core_error_nomem;
			goto fail;
		}
	}
	err = dbg_cache_set_debug_dirs(s->cache, s->opts.debug_dirs, s->opts.ndebug_dirs);
	if (err)
		goto fail;
	s->callbacks.find_elf = session_find_elf;
	s->callbacks.find_debuginfo = session_find_debuginfo;
	s->callbacks.section_address = dwfl_offline_section_address;
	s->callbacks.debuginfo_path = &s->cache->debuginfo_path;
	s->dwfl = dwfl_begin(&s->callbacks);
	if (!s->dwfl) {
		err = core_error_create(CORE_ERROR_OTHER, "libdwfl: %s", dwfl_errmsg(-1));
		goto fail;
	}
	dbg_debuginfod_attach(s->dwfl);
	check_binary(s);
	active_session = s;
	err = report_modules(s);
	if (err)
		goto fail;
	warn_missing_main(s);
	dbg_unwind_attach(s);
	*out = s;
	return NULL;
fail:
	dbg_session_close(s);
	return err;
}

void dbg_session_close(struct dbg_session *s)
{
	if (!s)
		return;
	if (active_session == s)
		active_session = NULL;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	dbg_symcache_destroy(s->symcache);
	dbg_args_out_destroy(s->args_out);
	free(s->call_targets);
	free(s->entry_regs);
	for (size_t i = 0; i < s->nmodules; i++) {
		free((char *)s->modules[i].info.path);
		free((char *)s->modules[i].info.build_id);
	}
	free(s->modules);
	free(s->symbol_name);
	dbg_tail_memo_destroy(s->tail_memo);
	if (s->own_cache)
		dbg_cache_destroy(s->cache);
	free(s);
}

struct core *dbg_session_core(struct dbg_session *s)
{
	return s->core;
}

size_t dbg_module_count(struct dbg_session *s)
{
	return s->nmodules;
}

const struct dbg_module_info *dbg_module_get(struct dbg_session *s, size_t i)
{
	if (i >= s->nmodules)
		return NULL;
	struct dbg_module_entry *m = &s->modules[i];
	dbg_lock(s);
	struct dbg_file *f = dbg_module_file(s, m);
	m->info.debuginfo = f ? dbg_file_debuginfo_path(s->cache, f) : NULL;
	m->info.debuginfod = f && f->debuginfod && m->info.debuginfo;
	dbg_debuginfod_warn(s, m);
	dbg_unlock(s);
	return &m->info;
}

static void module_range(const void *elem, uint64_t *start, uint64_t *end)
{
	const struct dbg_module_entry *m = elem;
	*start = m->info.start;
	*end = m->info.end;
}

struct dbg_module_entry *dbg_module_for(struct dbg_session *s, uint64_t pc)
{
	/* The entries are sorted by start and do not overlap. */
	return (struct dbg_module_entry *)base_range_find(s->modules, s->nmodules,
							  sizeof(*s->modules), pc, module_range);
}

/* The file to read a module's symbols from: the one libdwfl opened, else
 * (an ELF image libdwfl rebuilt from the core's memory) the user's binary
 * or the mapped file. */
static const char *module_file_path(struct dbg_session *s, struct dbg_module_entry *m)
{
	const char *mainfile = NULL, *name;
	name = dwfl_module_info(m->mod, NULL, NULL, NULL, NULL, NULL, &mainfile, NULL);
	if (mainfile)
		return mainfile;
	if (m->info.is_main && s->opts.binary)
		return s->opts.binary;
	return name && name[0] == '/' ? core_mapped_resolve(s->core, name) : NULL;
}

static bool same_build_id(struct dbg_session *s, struct dbg_module_entry *m, struct dbg_file *f)
{
	if (!m->info.build_id)
		return true;
	const unsigned char *bid;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(f->mod, &bid, &vaddr);
	char *hex = len > 0 ? dbg_hex(bid, (size_t)len) : NULL;
	bool same = hex && strcmp(hex, m->info.build_id) == 0;
	if (!same)
		core_warn(s->core, "%s has build-id %s but the core's %s has build-id %s: not used for that module",
			 f->path, hex ? hex : "(none)", m->info.path ? m->info.path : "?",
			 m->info.build_id);
	free(hex);
	return same;
}

struct dbg_file *dbg_module_file(struct dbg_session *s, struct dbg_module_entry *m)
{
	if (m->file_tried)
		return m->file;
	m->file_tried = true;
	const char *path = module_file_path(s, m);
	struct dbg_file *f = path ? dbg_cache_file(s->cache, m->info.build_id, path) : NULL;
	if (f && same_build_id(s, m, f))
		m->file = f;
	return m->file;
}
