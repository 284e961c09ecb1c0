/* Constant data of a loaded module read where the core lacks it: a core
 * from qemu-user (or one whose dump filter left out file-backed pages)
 * saves no read-only page of a library, but those bytes are the ones in
 * the module's file. */
#include "internal.h"

#include <string.h>

/* LEN bytes at file address VADDR of ELF's loadable segments, from the
 * file; false when they are not all in one segment's file bytes. */
static bool elf_bytes(Elf *elf, uint64_t vaddr, void *buf, size_t len)
{
	size_t phnum;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || vaddr < ph.p_vaddr ||
		    vaddr - ph.p_vaddr > ph.p_filesz || len > ph.p_filesz - (vaddr - ph.p_vaddr))
			continue;
		Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)(ph.p_offset + (vaddr - ph.p_vaddr)),
						   len, ELF_T_BYTE);
		if (!d || d->d_size != len)
			return false;
		memcpy(buf, d->d_buf, len);
		return true;
	}
	return false;
}

bool dbg_read_module_bytes(struct dbg_session *s, uint64_t addr, void *buf, size_t len)
{
	/* Not core_read_bytes: a page qemu-user left out reads as zeros. */
	if (core_read_saved(s->core, addr, buf, len))
		return true;
	dbg_lock(s);
	Dwarf_Addr bias;
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
	Elf *elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
	bool ok = elf && addr >= bias && elf_bytes(elf, addr - bias, buf, len);
	dbg_unlock(s);
	/* Else what the core makes of it (a file NT_FILE names, zeros). */
	return ok || core_read_bytes(s->core, addr, buf, len);
}

#define STRING_CHUNK 64u

bool dbg_read_module_string(struct dbg_session *s, uint64_t addr, char *buf, size_t max)
{
	size_t n = 0;
	if (max == 0)
		return false;
	while (n + 1 < max) {
		/* Chunks that end at a 64-byte boundary: a string that ends
		 * near the end of its mapping reads no byte past it. */
		size_t want = STRING_CHUNK - (size_t)((addr + n) % STRING_CHUNK);
		if (want > max - 1 - n)
			want = max - 1 - n;
		if (!dbg_read_module_bytes(s, addr + n, buf + n, want))
			break;
		void *nul = memchr(buf + n, '\0', want);
		if (nul)
			return true;
		n += want;
	}
	buf[n] = '\0';
	return false;
}
