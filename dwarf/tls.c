/* Thread-local variables of the executable and of shared libraries: which
 * module's TLS block holds a variable, and where that block is in a given
 * thread, through the thread's DTV and the static TLS area below its
 * thread pointer (glibc, x86_64: TLS variant II), or above the TCB at it
 * (aarch64: variant I).
 *
 * The dynamic linker's link_map of each module records the module's DTV
 * index and static TLS offset; struct link_map is private to glibc and
 * changes between versions, so its TLS fields are found by their values:
 * l_tls_initimage, l_tls_initimage_size, l_tls_blocksize and l_tls_align
 * are the module's PT_TLS (image address, file size, memory size,
 * alignment) in that order, followed by l_tls_firstbyte_offset,
 * l_tls_offset and l_tls_modid. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define LINK_MAP_MAX 4096u          /* loaded objects followed on r_debug's list */
#define LINK_MAP_SCAN 0x800u        /* bytes of a link_map searched for the TLS fields */
#define LINK_MAP_PUBLIC 5u          /* l_addr, l_name, l_ld, l_next, l_prev */
#define DTV_MAX_SLOTS (1u << 16)
#define TLS_DTV_UNALLOCATED UINT64_MAX

static uint64_t round_up(uint64_t v, uint64_t align)
{
	return align > 1 ? (v + align - 1) / align * align : v;
}

/* The module's PT_TLS from its ELF file. */
static bool module_pt_tls(struct dbg_module_entry *m, struct dbg_module_tls *t)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	size_t phnum;
	if (!elf || elf_getphdrnum(elf, &phnum) != 0)
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_TLS && ph.p_memsz > 0) {
			t->image = ph.p_vaddr + m->bias;
			t->filesz = ph.p_filesz;
			t->memsz = ph.p_memsz;
			t->align = ph.p_align ? ph.p_align : 1;
			return true;
		}
	}
	return false;
}

/* Search the link_map at LM for the module's TLS fields. */
static bool scan_link_map(struct core *core, uint64_t lm, uint64_t file_image,
			  struct dbg_module_tls *t)
{
	const struct core_arch *arch = core->arch;
	uint64_t w[LINK_MAP_SCAN / 8];
	size_t n = 0;
	while (n < LINK_MAP_SCAN / 8 && core_read_u64(core, lm + 8 * n, &w[n]))
		n++;
	for (size_t i = LINK_MAP_PUBLIC; i + 7 <= n; i++) {
		if ((w[i] != t->image && w[i] != file_image) || w[i + 1] != t->filesz ||
		    w[i + 2] != t->memsz || w[i + 3] != t->align)
			continue;
		uint64_t offset = w[i + 5], modid = w[i + 6];
		if (modid == 0 || modid >= DTV_MAX_SLOTS)
			continue;
		t->modid = modid;
		/* 0 (NO_TLS_OFFSET) and -1 (FORCED_DYNAMIC_TLS_OFFSET): no static
		 * block; variant II's blocks end at the thread pointer, variant
		 * I's start after the TCB. */
		uint64_t least = arch->tls_variant1 ? arch->tcb_size : t->memsz;
		if (offset != 0 && offset != UINT64_MAX && offset >= least && offset < (1u << 30))
			t->tp_offset = offset;
		return true;
	}
	return false;
}

/* The module's DTV index and static offset from the dynamic linker's list
 * of loaded objects (r_debug.r_map, linked by l_next). */
static void link_map_tls(struct dbg_session *s, struct dbg_module_entry *m,
			 struct dbg_module_tls *t)
{
	struct core *core = s->core;
	uint64_t r_debug, size, lm;
	bool tls;
	if (!dbg_symbol_module(s, "_r_debug", &r_debug, &size, &tls) || tls ||
	    !core_read_u64(core, r_debug + 8, &lm))
		return;
	for (unsigned n = 0; lm && n < LINK_MAP_MAX; n++) {
		uint64_t l_addr, next;
		if (lm % 8 != 0 || !core_read_u64(core, lm, &l_addr) ||
		    !core_read_u64(core, lm + 24, &next))
			return;
		if (l_addr == m->bias && scan_link_map(core, lm, t->image - m->bias, t))
			return;
		lm = next;
	}
}

static void module_tls_init(struct dbg_session *s, struct dbg_module_entry *m)
{
	struct dbg_module_tls *t = &m->tls;
	if (t->tried)
		return;
	t->tried = true;
	if (!module_pt_tls(m, t))
		return;
	t->has_block = true;
	link_map_tls(s, m, t);
	/* A static executable has no r_debug list: its block is the first,
	 * DTV index 1, right below the thread pointer (variant I: right
	 * after the TCB). */
	if (!t->modid && m->info.is_main) {
		t->modid = 1;
		t->tp_offset = s->core->arch->tls_variant1 ? round_up(s->core->arch->tcb_size, t->align)
							   : round_up(t->memsz, t->align);
	}
}

bool dbg_find_tls_symbol(struct dbg_session *s, const char *name, struct dbg_tls_var *var)
{
	uint64_t offset, size;
	bool tls = false;
	dbg_lock(s);
	struct dbg_module_entry *m = dbg_symbol_module(s, name, &offset, &size, &tls);
	if (m && tls) {
		var->module = (size_t)(m - s->modules);
		var->offset = offset;
		var->size = size;
	}
	dbg_unlock(s);
	return m && tls;
}

/* The block of DTV index MODID in the thread at TP: tcbhead_t.dtv (TP + 8;
 * variant I: TP) points at dtv[0] (the generation), dtv[-1] holds the number of slots,
 * dtv[MODID].pointer.val is the block, or TLS_DTV_UNALLOCATED until the
 * thread first uses a variable of a module loaded after it started. */
static enum dbg_tls_state dtv_block(struct core *core, uint64_t tp, uint64_t modid,
				    uint64_t *block)
{
	uint64_t dtv, slots, val;
	if (!core_read_u64(core, tp + core->arch->tcb_dtv, &dtv) || dtv % 8 != 0 || dtv < 16 ||
	    !core_read_u64(core, dtv - 16, &slots) || modid > slots || slots >= DTV_MAX_SLOTS ||
	    !core_read_u64(core, dtv + 16 * modid, &val) || val == 0)
		return DBG_TLS_UNKNOWN;
	if (val == TLS_DTV_UNALLOCATED)
		return DBG_TLS_UNALLOCATED;
	*block = val;
	return DBG_TLS_ADDRESS;
}

/* Whether TP points at a thread control block: x86_64's starts with a
 * pointer to itself; variant I's (aarch64) with the DTV pointer. */
static bool tcb_at(struct core *core, uint64_t tp)
{
	uint64_t w;
	if (tp == 0 || tp % 8 != 0 || !core_read_u64(core, tp, &w))
		return false;
	return core->arch->tls_variant1 ? w != 0 && w % 8 == 0 : w == tp;
}

enum dbg_tls_state dbg_tls_address(struct dbg_session *s, const struct dbg_tls_var *var,
				   uint64_t tp, uint64_t *addr, const char **why)
{
	enum dbg_tls_state state = DBG_TLS_UNKNOWN;
	uint64_t block = 0;
	*why = NULL;
	dbg_lock(s);
	struct dbg_module_entry *m = var->module < s->nmodules ? &s->modules[var->module] : NULL;
	if (m)
		module_tls_init(s, m);
	if (!m || !m->tls.has_block || var->offset >= m->tls.memsz) {
		*why = "its module has no TLS block that holds it";
	} else if (!tcb_at(s->core, tp)) {
		*why = "the thread pointer does not point at a thread control block";
	} else {
		bool above = s->core->arch->tls_variant1;
		state = m->tls.modid ? dtv_block(s->core, tp, m->tls.modid, &block) : DBG_TLS_UNKNOWN;
		if (state == DBG_TLS_UNKNOWN && m->tls.tp_offset && (above || tp >= m->tls.tp_offset)) {
			block = above ? tp + m->tls.tp_offset : tp - m->tls.tp_offset;
			state = DBG_TLS_ADDRESS;
		}
		if (state == DBG_TLS_UNKNOWN)
			*why = "neither the thread's DTV nor the static TLS area gives its module's block";
	}
	dbg_unlock(s);
	if (state == DBG_TLS_ADDRESS)
		*addr = block + var->offset;
	return state;
}
