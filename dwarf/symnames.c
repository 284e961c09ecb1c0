/* Symbol names for walks over a whole symbol table.
 *
 * libelf maps the files it reads, and the kernel maps a file's pages in
 * blocks around each one touched; reading every name of a table through
 * libdwfl thus leaves the whole string table resident (megabytes in a C++
 * program) for as long as the file stays open.  A walk reads the names
 * through a small window instead, filled with pread from the file libdwfl
 * mapped.  Names looked up one at a time later come from the mapping. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../corefile/core.h"
#include "../corefile/image.h"

#define WINDOW (256 * 1024)
/* A table up to this size is read whole, once: a shared library's dynamic
 * string table (300 KB for libstdc++) is not in symbol order, and read
 * through WINDOW it was read again for every name out of the window. */
#define WHOLE_TABLE (1024 * 1024)
/* Linkers write names in symbol order, so a walk reads the table about
 * once; a table read in another order stops being read through the window
 * after this many reads beyond that. */
#define EXTRA_READS 64

/* Whether the N bytes at OFFSET of the file open at FD are those of the
 * image RAW (RAW_SIZE bytes) there. */
static bool same_bytes(int fd, const char *raw, size_t raw_size, uint64_t offset, size_t n)
{
	char buf[4096];
	if (offset > raw_size || n > raw_size - offset)
		return false;
	for (size_t done = 0; done < n; done += sizeof(buf)) {
		size_t want = n - done < sizeof(buf) ? n - done : sizeof(buf);
		if (!core_pread_full(fd, buf, want, offset + done) ||
		    memcmp(buf, raw + offset + done, want) != 0)
			return false;
	}
	return true;
}

/* Whether the file open at FD is ELF's image, RAW_SIZE bytes at RAW: the
 * same size, ELF header and section headers (which libelf has read). */
static bool same_image(int fd, Elf *elf, const char *raw, size_t raw_size)
{
	struct stat st;
	GElf_Ehdr eh;
	size_t shnum;
	return fstat(fd, &st) == 0 && (uint64_t)st.st_size == raw_size && gelf_getehdr(elf, &eh) &&
	       elf_getshdrnum(elf, &shnum) == 0 && same_bytes(fd, raw, raw_size, 0, eh.e_ehsize) &&
	       same_bytes(fd, raw, raw_size, eh.e_shoff, shnum * eh.e_shentsize);
}

/* Which of MOD's files holds the image of ELF: open, in *FD, with the
 * offset of MAPPED in it in *OFFSET. */
static bool open_image(Dwfl_Module *mod, Elf *elf, const char *mapped, size_t size, int *fd,
		       uint64_t *offset)
{
	size_t raw_size;
	const char *raw = elf_rawfile(elf, &raw_size);
	if (!raw || mapped < raw || mapped >= raw + raw_size || size > raw_size - (size_t)(mapped - raw))
		return false;
	*offset = (uint64_t)(mapped - raw);
	const char *files[2] = { NULL, NULL };
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &files[0], &files[1]);
	for (int i = 0; i < 2; i++) {
		*fd = files[i] ? core_open_regular(files[i]) : -1;
		if (*fd >= 0 && same_image(*fd, elf, raw, raw_size))
			return true;
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
	return false;
}

/* The string table that NAME, SYM's name read through libdwfl, lies in:
 * the one linked from a symbol table of ELF. */
static bool find_table(struct dbg_symnames *names, Elf *elf, const char *name, const GElf_Sym *sym)
{
	const char *base = name - sym->st_name;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		GElf_Shdr str_sh;
		Elf_Scn *str = elf_getscn(elf, sh.sh_link);
		Elf_Data *data = str && gelf_getshdr(str, &str_sh) ? elf_getdata(str, NULL) : NULL;
		if (data && data->d_buf == base && data->d_size > 0 &&
		    !(str_sh.sh_flags & SHF_COMPRESSED)) {
			names->elf = elf;
			names->mapped = base;
			names->size = data->d_size;
			return true;
		}
	}
	return false;
}

/* Find the string table of the symbol table of NAME (SYM's name through
 * libdwfl, from ELF) and open the file holding it; once. */
static void open_table(struct dbg_symnames *names, Dwfl_Module *mod, Elf *elf, const char *name,
		       const GElf_Sym *sym)
{
	if (names->tried)
		return;
	names->tried = true;
	names->fd = -1;
	if (elf && find_table(names, elf, name, sym) &&
	    !open_image(mod, elf, names->mapped, names->size, &names->fd, &names->offset))
		names->fd = -1;
}

/* Whether SYM's name, NAME through libdwfl from ELF, can be read from the
 * open table. */
static bool from_table(const struct dbg_symnames *names, Elf *elf, const char *name,
		       const GElf_Sym *sym)
{
	return names->fd >= 0 && elf == names->elf && name == names->mapped + sym->st_name;
}

/* The window is a mapping of its own, so that its pages go back to the
 * system when the walk ends (malloc could keep them in its heap). */
static bool open_window(struct dbg_symnames *names)
{
	if (names->window || names->window_failed)
		return names->window != NULL;
	size_t size = names->size > 0 && names->size <= WHOLE_TABLE ? names->size : WINDOW;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	names->window_failed = p == MAP_FAILED;
	if (names->window_failed)
		return false;
	names->window = p;
	names->window_size = size;
	names->reads_left = names->size / (WINDOW / 2) + EXTRA_READS;
	return true;
}

static bool read_at(const struct dbg_symnames *names, char *buf, size_t n, size_t at)
{
	return core_pread_full(names->fd, buf, n, names->offset + at);
}

/* Read the window from table offset AT; false when that cannot be done. */
static bool fill_window(struct dbg_symnames *names, size_t at)
{
	size_t want = names->size - at < names->window_size ? names->size - at : names->window_size;
	if (!names->reads_left)
		return false;
	names->reads_left--;
	names->start = at;
	names->len = 0;
	if (!read_at(names, names->window, want, at))
		return false;
	names->len = want;
	return true;
}

/* The name at table offset AT if the window holds all of it. */
static const char *in_window(const struct dbg_symnames *names, size_t at)
{
	if (at < names->start || at >= names->start + names->len)
		return NULL;
	const char *s = names->window + (at - names->start);
	return memchr(s, '\0', names->start + names->len - at) ? s : NULL;
}

/* The name at table offset AT from the window, read there as needed; NULL
 * when it is not (it is longer than the window, or reads failed). */
static const char *window_name(struct dbg_symnames *names, size_t at)
{
	const char *s = in_window(names, at);
	/* From a little before, for the odd name out of order. */
	if (!s && open_window(names) &&
	    fill_window(names, at > WINDOW / 16 && names->window_size < names->size ? at - WINDOW / 16 : 0))
		s = in_window(names, at);
	return s;
}

/* At most N bytes at table offset AT, read aside and ended with a NUL. */
static const char *read_aside(struct dbg_symnames *names, size_t at, size_t n)
{
	if (n > names->size - at)
		n = names->size - at;
	if (n + 1 > names->peek_cap) {
		char *p = realloc(names->peek, n + 1);
		if (!p)
			return NULL;
		names->peek = p;
		names->peek_cap = n + 1;
	}
	if (!read_at(names, names->peek, n, at))
		return NULL;
	names->peek[n] = '\0';
	return names->peek;
}

/* libdwfl's answer for symbol I, with the string table opened on it. */
static const char *symbol(struct dbg_symnames *names, Dwfl_Module *mod, int i, GElf_Sym *sym,
			  GElf_Addr *value, Elf **elf)
{
	const char *name = dwfl_module_getsym_info(mod, i, sym, value, NULL, elf, NULL);
	if (name)
		open_table(names, mod, *elf, name, sym);
	return name;
}

const char *dbg_symnames_get(struct dbg_symnames *names, Dwfl_Module *mod, int i, GElf_Sym *sym,
			     GElf_Addr *value)
{
	Elf *elf = NULL;
	const char *name = symbol(names, mod, i, sym, value, &elf);
	const char *read = name && from_table(names, elf, name, sym) ? window_name(names, sym->st_name)
								     : NULL;
	return read ? read : name;
}

const char *dbg_symnames_peek(struct dbg_symnames *names, Dwfl_Module *mod, int i, size_t n,
			      GElf_Sym *sym, GElf_Addr *value)
{
	Elf *elf = NULL;
	const char *name = symbol(names, mod, i, sym, value, &elf);
	if (!name || !from_table(names, elf, name, sym))
		return name;
	const char *read = in_window(names, sym->st_name);
	if (!read)
		read = read_aside(names, sym->st_name, n);
	return read ? read : name;
}

const char *dbg_symnames_name(struct dbg_symnames *names, Dwfl_Module *mod, int i, GElf_Sym *sym,
			      GElf_Addr *value)
{
	Elf *elf = NULL;
	const char *name = symbol(names, mod, i, sym, value, &elf);
	if (!name || !from_table(names, elf, name, sym))
		return name;
	/* Most names are short; a long one is read again, longer. */
	for (size_t n = 256;; n *= 8) {
		const char *read = read_aside(names, sym->st_name, n);
		if (!read)
			return name;
		if (strlen(read) < n || sym->st_name + n >= names->size)
			return read;
	}
}

void dbg_symnames_close(struct dbg_symnames *names)
{
	if (names->window)
		munmap(names->window, names->window_size);
	if (names->tried && names->fd >= 0)
		close(names->fd);
	free(names->peek);
	*names = (struct dbg_symnames){ 0 };
}
