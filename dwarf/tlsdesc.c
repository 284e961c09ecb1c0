/* A thread-local variable reached through a TLS descriptor (aarch64's
 * default TLS model for shared libraries: `adrp x0, desc; ldr x1, [x0,
 * #lo12]; add x0, x0, #lo12; blr x1`, then the thread pointer added): the
 * descriptor's relocation in the module's file says the variable's offset
 * in the module's TLS block.  The code and the relocation come from the
 * file: a qemu-user core saves neither. */
#include "internal.h"

#include <limits.h>

#define CODE_MAX 32u                /* instructions of the function searched */

static int64_t sign_extend(uint64_t v, unsigned bits)
{
	uint64_t m = 1ull << (bits - 1);
	return (int64_t)((v ^ m) - m);
}

/* The descriptor the code at FN (SIZE bytes) passes in a register: ADRP
 * of its page, then an ADD of its low 12 bits to the same register. */
static bool descriptor_of(struct dbg_session *s, uint64_t fn, uint64_t size, uint64_t *desc)
{
	uint32_t code[CODE_MAX];
	size_t n = size && size / 4 < CODE_MAX ? size / 4 : CODE_MAX;
	if (!dbg_read_module_bytes(s, fn, code, n * 4))
		return false;
	uint64_t page[32] = { 0 };
	bool have[32] = { false };
	for (size_t i = 0; i < n; i++) {
		uint32_t in = code[i];
		unsigned rd = in & 0x1f, rn = (in >> 5) & 0x1f;
		if ((in & 0x9f000000u) == 0x90000000u) {            /* ADRP */
			uint64_t imm = ((uint64_t)((in >> 5) & 0x7ffff) << 2) | ((in >> 29) & 3);
			page[rd] = ((fn + 4 * i) & ~0xfffull) + (uint64_t)(sign_extend(imm, 21) * 4096);
			have[rd] = true;
		} else if ((in & 0xffc00000u) == 0x91000000u && have[rn] && rd == rn) {  /* ADD #imm */
			*desc = page[rn] + ((in >> 10) & 0xfff);
			return true;
		} else if (in == 0xd65f03c0u) {                     /* RET */
			return false;
		}
	}
	return false;
}

/* The addend of the relocation of type TYPE at file address AT, when it
 * names no symbol (the variable is the module's own). */
static bool reloc_addend(Elf *elf, uint32_t type, uint64_t at, uint64_t *addend)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || sh.sh_entsize == 0 ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		/* What libelf loaded, not what the header claims. */
		size_t count = d->d_size / sh.sh_entsize;
		if (count > INT_MAX)
			count = INT_MAX;
		for (size_t i = 0; i < count; i++) {
			GElf_Rela r;
			if (!gelf_getrela(d, (int)i, &r) || r.r_offset != at ||
			    GELF_R_TYPE(r.r_info) != type)
				continue;
			if (GELF_R_SYM(r.r_info) != 0 || r.r_addend < 0)
				return false;
			*addend = (uint64_t)r.r_addend;
			return true;
		}
	}
	return false;
}

bool dbg_tlsdesc_offset(struct dbg_session *s, uint64_t fn, uint64_t size, uint64_t *offset)
{
	uint32_t type = s->core->arch->tlsdesc_reloc;
	uint64_t desc;
	if (!type || !descriptor_of(s, fn, size, &desc))
		return false;
	dbg_lock(s);
	Dwarf_Addr bias;
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, fn);
	Elf *elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
	bool ok = elf && desc >= bias && dwfl_addrmodule(s->dwfl, desc) == mod &&
		  reloc_addend(elf, type, desc - bias, offset);
	dbg_unlock(s);
	return ok;
}
