/* The Go runtime's symbol table (pclntab) read as the runtime reads it:
 * src/runtime/symtab.go (findfunc, pcvalue, funcline1, funcspdelta,
 * funcdata) and traceback.go (the inline levels of a frame).  Layouts:
 *   header: magic u32, pad u8 u8, minLC u8, ptrSize u8, nfunc, nfiles,
 *           [textStart, 1.18 on], funcname, cu, filetab, pctab, pcln offsets
 *   functab (at the pcln offset): nfunc+1 {entry, funcoff} (1.18 on: u32
 *           entry offsets from textStart; before: pointers), the last the end
 *   _func: [entry] nameoff args deferreturn pcsp pcfile pcln npcdata cuOffset
 *           [startLine, 1.20 on] funcID flag pad nfuncdata, then npcdata u32
 *           pcdata offsets, then nfuncdata funcdata (u32 offsets from
 *           moduledata.gofunc; before 1.18, pointers aligned to ptrSize). */
#include "gopclntab.h"
#include "internal.h"

#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	MAGIC_116 = 0xfffffffa,
	MAGIC_118 = 0xfffffff0,
	MAGIC_120 = 0xfffffff1,
	PCDATA_INLTREEINDEX = 2,
	FUNCDATA_INLTREE = 3,
	MAX_INLINE_DEPTH = 1024,    /* a parent chain longer than this loops */
};

struct dbg_gotab {
	const uint8_t *data;
	size_t len;
	uint64_t vaddr, text, bias;
	int layout;                 /* 116, 118, 120 */
	unsigned ptrsize, quantum;
	uint64_t nfunc;
	size_t funcnames, cutab, filetab, pctab, pcln;  /* offsets in data */
	size_t ftab_entsize;
	size_t func_fixed;          /* size of a _func before its pcdata */
	size_t off_nameoff, off_pcsp, off_pcfile, off_pcln, off_npcdata, off_cu, off_funcid,
		off_flag, off_nfuncdata;
	/* go:func.*: funcdata's bytes */
	const uint8_t *fdata;
	size_t fdata_len;
	uint64_t fdata_addr, gofunc;
	uint64_t data_start, data_end;  /* moduledata's [noptrdata, enoptrbss); 0: unknown */
};

/* ---- bounded reads -------------------------------------------------- */

static bool rd8(const struct dbg_gotab *t, size_t off, uint8_t *v)
{
	if (off >= t->len)
		return false;
	*v = t->data[off];
	return true;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static bool rd32(const struct dbg_gotab *t, size_t off, uint32_t *v)
{
	if (off > t->len || t->len - off < 4)
		return false;
	*v = le32(t->data + off);
	return true;
}

static uint64_t word_at(const uint8_t *p, unsigned ptrsize)
{
	return ptrsize == 8 ? le64(p) : le32(p);
}

static bool rdword(const struct dbg_gotab *t, size_t off, uint64_t *v)
{
	if (off > t->len || t->len - off < t->ptrsize)
		return false;
	*v = word_at(t->data + off, t->ptrsize);
	return true;
}

/* A NUL-terminated string at OFF of TABLE, which starts at BASE. */
static const char *rdstr(const struct dbg_gotab *t, size_t base, uint64_t off)
{
	if (base > t->len || off >= t->len - base)
		return NULL;
	const char *s = (const char *)t->data + base + off;
	return memchr(s, '\0', t->len - base - off) ? s : NULL;
}

/* ---- the header ----------------------------------------------------- */

static void set_func_layout(struct dbg_gotab *t)
{
	/* Fields after the entry: 1.16/1.17 have a pointer-sized entry. */
	size_t e = t->layout == 116 ? t->ptrsize : 4;
	t->off_nameoff = e;
	t->off_pcsp = e + 12;
	t->off_pcfile = e + 16;
	t->off_pcln = e + 20;
	t->off_npcdata = e + 24;
	t->off_cu = e + 28;
	size_t id = e + 32 + (t->layout >= 120 ? 4 : 0);   /* 1.20 added startLine */
	t->off_funcid = id;
	t->off_flag = id + 1;
	t->off_nfuncdata = id + 3;
	t->func_fixed = id + 4;
	t->ftab_entsize = t->layout == 116 ? 2 * t->ptrsize : 8;
}

static bool region_ok(const struct dbg_gotab *t, uint64_t off, size_t *out)
{
	if (off == 0 || off >= t->len)
		return false;
	*out = (size_t)off;
	return true;
}

/* Entry I of the function table: its address (relative to the text for
 * 1.18 on) and its _func's offset from the pcln table. */
static bool ftab_entry(const struct dbg_gotab *t, uint64_t i, uint64_t *entry, uint64_t *funcoff)
{
	if (i > t->nfunc)
		return false;
	size_t off = t->pcln + (size_t)i * t->ftab_entsize;
	if (t->layout == 116)
		return rdword(t, off, entry) && rdword(t, off + t->ptrsize, funcoff);
	uint32_t e, f;
	if (!rd32(t, off, &e) || !rd32(t, off + 4, &f))
		return false;
	*entry = e;
	*funcoff = f;
	return true;
}

static uint64_t entry_addr(const struct dbg_gotab *t, uint64_t e)
{
	return (t->layout == 116 ? e : t->text + e) + t->bias;
}

/* The function table is sorted: a lookup may then search it. */
static bool ftab_sorted(const struct dbg_gotab *t)
{
	uint64_t prev = 0, e, f;
	for (uint64_t i = 0; i <= t->nfunc; i++) {
		if (!ftab_entry(t, i, &e, &f) || e < prev)
			return false;
		prev = e;
	}
	return true;
}

static const char *parse_header(struct dbg_gotab *t, uint64_t text)
{
	uint32_t magic;
	uint8_t pad1, pad2, minlc, ptrsize;
	if (!rd32(t, 0, &magic) || !rd8(t, 4, &pad1) || !rd8(t, 5, &pad2) || !rd8(t, 6, &minlc) ||
	    !rd8(t, 7, &ptrsize))
		return "too short for a pclntab header";
	if (magic == MAGIC_116)
		t->layout = 116;
	else if (magic == MAGIC_118)
		t->layout = 118;
	else if (magic == MAGIC_120)
		t->layout = 120;
	else
		return "no pclntab magic of Go 1.16 or later";
	if (pad1 || pad2 || (minlc != 1 && minlc != 2 && minlc != 4) || (ptrsize != 4 && ptrsize != 8))
		return "bad pclntab header";
	t->quantum = minlc;
	t->ptrsize = ptrsize;
	uint64_t w[8];
	size_t nw = t->layout == 116 ? 7 : 8;
	for (size_t i = 0; i < nw; i++)
		if (!rdword(t, 8 + i * ptrsize, &w[i]))
			return "truncated pclntab header";
	t->nfunc = w[0];
	size_t k = 2;
	if (t->layout != 116) {
		t->text = w[2] ? w[2] : text;
		k = 3;
	}
	if (!region_ok(t, w[k], &t->funcnames) || !region_ok(t, w[k + 1], &t->cutab) ||
	    !region_ok(t, w[k + 2], &t->filetab) || !region_ok(t, w[k + 3], &t->pctab) ||
	    !region_ok(t, w[k + 4], &t->pcln))
		return "pclntab offsets out of range";
	set_func_layout(t);
	if (t->nfunc == 0 || t->nfunc >= (t->len - t->pcln) / t->ftab_entsize)
		return "pclntab function count out of range";
	if (t->layout != 116 && !t->text)
		return "pclntab without a text start";
	if (!ftab_sorted(t))
		return "pclntab function table not sorted";
	return NULL;
}

struct dbg_gotab *dbg_gotab_parse(const void *bytes, size_t len, uint64_t vaddr, uint64_t text,
				  const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	*why = NULL;
	struct dbg_gotab *t = calloc(1, sizeof(*t));
	if (!t) {
		*why = "out of memory";
		return NULL;
	}
	t->data = bytes;
	t->len = bytes ? len : 0;
	t->vaddr = vaddr;
	*why = parse_header(t, text);
	if (*why) {
		free(t);
		return NULL;
	}
	return t;
}

void dbg_gotab_destroy(struct dbg_gotab *t)
{
	free(t);
}

void dbg_gotab_set_funcdata(struct dbg_gotab *t, uint64_t gofunc, const void *bytes, size_t len,
			    uint64_t addr)
{
	t->fdata = bytes;
	t->fdata_len = bytes ? len : 0;
	t->fdata_addr = addr;
	t->gofunc = gofunc;
}

void dbg_gotab_relocate(struct dbg_gotab *t, uint64_t bias)
{
	t->bias = bias;
}

int dbg_gotab_layout(const struct dbg_gotab *t)
{
	return t->layout;
}

bool dbg_gotab_data(const struct dbg_gotab *t, uint64_t *start, uint64_t *end)
{
	if (!t->data_start || t->data_end <= t->data_start)
		return false;
	*start = t->data_start + t->bias;
	*end = t->data_end + t->bias;
	return true;
}

void dbg_gotab_text(const struct dbg_gotab *t, uint64_t *start, uint64_t *end)
{
	uint64_t e, unused;
	*start = *end = 0;
	if (ftab_entry(t, 0, &e, &unused))
		*start = entry_addr(t, e);
	if (ftab_entry(t, t->nfunc, &e, &unused))
		*end = entry_addr(t, e);
}

size_t dbg_gotab_count(const struct dbg_gotab *t)
{
	return (size_t)t->nfunc;
}

/* ---- functions ------------------------------------------------------ */

static const struct {
	const char *name;
	enum dbg_gofuncid id;
} special_funcs[] = {
	{ "runtime.abort", DBG_GOFUNC_ABORT },
	{ "runtime.asmcgocall", DBG_GOFUNC_ASMCGOCALL },
	{ "runtime.asyncPreempt", DBG_GOFUNC_ASYNCPREEMPT },
	{ "runtime.cgocallback", DBG_GOFUNC_CGOCALLBACK },
	{ "runtime.corostart", DBG_GOFUNC_COROSTART },
	{ "runtime.debugCallV2", DBG_GOFUNC_DEBUGCALLV2 },
	{ "runtime.gcBgMarkWorker", DBG_GOFUNC_GCBGMARKWORKER },
	{ "runtime.goexit", DBG_GOFUNC_GOEXIT },
	{ "runtime.gogo", DBG_GOFUNC_GOGO },
	{ "runtime.gopanic", DBG_GOFUNC_GOPANIC },
	{ "runtime.handleAsyncEvent", DBG_GOFUNC_HANDLEASYNCEVENT },
	{ "runtime.mcall", DBG_GOFUNC_MCALL },
	{ "runtime.morestack", DBG_GOFUNC_MORESTACK },
	{ "runtime.mstart", DBG_GOFUNC_MSTART },
	{ "runtime.panicwrap", DBG_GOFUNC_PANICWRAP },
	{ "runtime.rt0_go", DBG_GOFUNC_RT0_GO },
	{ "runtime.runfinq", DBG_GOFUNC_RUNFINQ },
	{ "runtime.main", DBG_GOFUNC_RUNTIME_MAIN },
	{ "runtime.sigpanic", DBG_GOFUNC_SIGPANIC },
	{ "runtime.systemstack", DBG_GOFUNC_SYSTEMSTACK },
	{ "runtime.systemstack_switch", DBG_GOFUNC_SYSTEMSTACK_SWITCH },
};

/* The funcID's number differs between Go versions (1.23 added corostart in
 * the middle); the function it marks does not.  A marked function that is
 * none of those is generated code (the linker's "wrapper"). */
static uint8_t map_funcid(uint8_t raw, const char *name)
{
	if (raw == 0)
		return DBG_GOFUNC_NORMAL;
	for (size_t i = 0; name && i < sizeof(special_funcs) / sizeof(special_funcs[0]); i++)
		if (strcmp(name, special_funcs[i].name) == 0)
			return (uint8_t)special_funcs[i].id;
	return DBG_GOFUNC_WRAPPER;
}

bool dbg_gotab_func_at(const struct dbg_gotab *t, size_t i, struct dbg_gofunc *f)
{
	uint64_t entry, funcoff, next, unused;
	if (!t || i >= t->nfunc || !ftab_entry(t, i, &entry, &funcoff) ||
	    !ftab_entry(t, i + 1, &next, &unused) || funcoff > t->len - t->pcln ||
	    t->len - t->pcln - funcoff < t->func_fixed)
		return false;
	size_t off = t->pcln + (size_t)funcoff;
	uint32_t nameoff;
	uint8_t raw_id, flag;
	if (!rd32(t, off + t->off_nameoff, &nameoff) || !rd8(t, off + t->off_funcid, &raw_id) ||
	    !rd8(t, off + t->off_flag, &flag))
		return false;
	memset(f, 0, sizeof(*f));
	f->entry = entry_addr(t, entry);
	f->end = entry_addr(t, next);
	f->name = rdstr(t, t->funcnames, nameoff);
	if (!f->name)
		f->name = "?";
	f->funcid = map_funcid(raw_id, f->name);
	f->flag = flag;   /* a pad byte, 0, before 1.17 */
	f->index = (uint32_t)i;
	f->off = (uint32_t)off;
	return true;
}

bool dbg_gotab_func(const struct dbg_gotab *t, uint64_t pc, struct dbg_gofunc *f)
{
	uint64_t lo = 0, hi, e, unused;
	if (!t || !ftab_entry(t, 0, &e, &unused) || pc < entry_addr(t, e) ||
	    !ftab_entry(t, t->nfunc, &e, &unused) || pc >= entry_addr(t, e))
		return false;
	/* The last entry whose start is at or below pc. */
	hi = t->nfunc;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (!ftab_entry(t, mid, &e, &unused))
			return false;
		if (entry_addr(t, e) <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return dbg_gotab_func_at(t, (size_t)lo, f) && pc >= f->entry && pc < f->end;
}

bool dbg_gotab_func_named(const struct dbg_gotab *t, const char *name, struct dbg_gofunc *f)
{
	for (uint64_t i = 0; t && name && i < t->nfunc; i++)
		if (dbg_gotab_func_at(t, (size_t)i, f) && strcmp(f->name, name) == 0)
			return true;
	return false;
}

/* ---- pc-value tables -------------------------------------------------- */

/* A varint at *P (advanced), as the runtime's readvarint: a shift past 31
 * wraps. */
static bool varint(const struct dbg_gotab *t, size_t *p, uint32_t *out)
{
	uint32_t v = 0, shift = 0;
	for (;;) {
		uint8_t b;
		if (!rd8(t, *p, &b))
			return false;
		(*p)++;
		v |= (uint32_t)(b & 0x7f) << (shift & 31);
		if (!(b & 0x80))
			break;
		shift += 7;
	}
	*out = v;
	return true;
}

/* The value of the pc-value table at pctab offset OFF for TARGET in the
 * function entered at ENTRY (the table's own addresses): the runtime's
 * pcvalue, which fails (-1) on a table without TARGET. */
static bool pcvalue(const struct dbg_gotab *t, uint64_t entry, uint32_t off, uint64_t target,
		    int32_t *out)
{
	if (off == 0 || off >= t->len - t->pctab)
		return false;
	size_t p = t->pctab + off;
	uint64_t pc = entry;
	int32_t val = -1;
	for (;;) {
		uint32_t uv, pcdelta;
		uint8_t b;
		/* A zero ends the table, except at the entry (the runtime's step). */
		if (!rd8(t, p, &b) || (b == 0 && pc != entry) || !varint(t, &p, &uv) ||
		    !varint(t, &p, &pcdelta))
			return false;
		val = (int32_t)((uint32_t)val + (-(uv & 1) ^ (uv >> 1)));
		uint64_t next = pc + (uint32_t)(pcdelta * t->quantum);
		if (next < pc)
			return false;
		pc = next;
		if (target < pc) {
			*out = val;
			return true;
		}
	}
}

/* A u32 field of F's _func at offset FIELD. */
static bool func_u32(const struct dbg_gotab *t, const struct dbg_gofunc *f, size_t field,
		     uint32_t *v)
{
	return rd32(t, (size_t)f->off + field, v);
}

/* F's entry in the table's own addresses, and PC's. */
static bool table_pcs(const struct dbg_gotab *t, const struct dbg_gofunc *f, uint64_t pc,
		      uint64_t *entry, uint64_t *tpc)
{
	if (!t || !f || f->off < t->pcln || f->off >= t->len || pc < f->entry)
		return false;
	*entry = f->entry - t->bias;
	*tpc = pc - t->bias;
	return true;
}

bool dbg_gotab_spdelta(const struct dbg_gotab *t, const struct dbg_gofunc *f, uint64_t pc,
		       int64_t *delta)
{
	uint64_t entry, tpc;
	uint32_t off;
	int32_t v;
	if (!table_pcs(t, f, pc, &entry, &tpc) || !func_u32(t, f, t->off_pcsp, &off) ||
	    !pcvalue(t, entry, off, tpc, &v))
		return false;
	*delta = v;
	return true;
}

/* The file of per-CU file number FILENO of F (funcfile). */
static const char *func_file(const struct dbg_gotab *t, const struct dbg_gofunc *f, int32_t fileno)
{
	uint32_t cu, fileoff;
	if (fileno < 0 || !func_u32(t, f, t->off_cu, &cu))
		return NULL;
	uint64_t index = (uint64_t)cu + (uint32_t)fileno;
	if (index > (t->len - t->cutab) / 4 || !rd32(t, t->cutab + (size_t)index * 4, &fileoff) ||
	    fileoff == UINT32_MAX)
		return NULL;
	return rdstr(t, t->filetab, fileoff);
}

bool dbg_gotab_line(const struct dbg_gotab *t, const struct dbg_gofunc *f, uint64_t pc,
		    const char **file, int *line)
{
	uint64_t entry, tpc;
	uint32_t pcfile, pcln;
	int32_t fileno, ln;
	if (!table_pcs(t, f, pc, &entry, &tpc) || !func_u32(t, f, t->off_pcfile, &pcfile) ||
	    !func_u32(t, f, t->off_pcln, &pcln) || !pcvalue(t, entry, pcfile, tpc, &fileno) ||
	    !pcvalue(t, entry, pcln, tpc, &ln) || fileno == -1 || ln == -1)
		return false;
	const char *name = func_file(t, f, fileno);
	if (!name)
		return false;
	*file = name;
	*line = ln;
	return true;
}

/* ---- inlining ------------------------------------------------------- */

/* pcdata table TABLE of F at PC (the table's addresses): -1 when none. */
static int32_t pcdata_value(const struct dbg_gotab *t, const struct dbg_gofunc *f, uint64_t entry,
			    uint32_t table, uint64_t tpc)
{
	uint32_t npcdata, off;
	int32_t v;
	if (!func_u32(t, f, t->off_npcdata, &npcdata) || table >= npcdata ||
	    !func_u32(t, f, t->func_fixed + table * 4, &off) || !pcvalue(t, entry, off, tpc, &v))
		return -1;
	return v;
}

/* The address funcdata I of F points at, 0 when none. */
static uint64_t funcdata_addr(const struct dbg_gotab *t, const struct dbg_gofunc *f, uint8_t i)
{
	uint32_t npcdata;
	uint8_t nfuncdata;
	if (!rd8(t, f->off + t->off_nfuncdata, &nfuncdata) || i >= nfuncdata ||
	    !func_u32(t, f, t->off_npcdata, &npcdata) || npcdata > t->len / 4)
		return 0;
	size_t p = f->off + t->func_fixed + (size_t)npcdata * 4;
	if (t->layout != 116) {
		uint32_t off;
		if (!rd32(t, p + (size_t)i * 4, &off) || off == UINT32_MAX || !t->gofunc)
			return 0;
		return t->gofunc + off;
	}
	/* Before 1.18: pointers, aligned to ptrSize in memory. */
	if (t->ptrsize == 8 && ((t->vaddr + p) & 4))
		p += 4;
	uint64_t ptr;
	return rdword(t, p + (size_t)i * t->ptrsize, &ptr) ? ptr : 0;
}

struct inlined_call {
	uint8_t funcid;
	uint32_t nameoff;
	int32_t parent_pc;
};

/* Entry IX of the inline tree at ADDR (1.19: {parent int16, funcID u8, _,
 * file, line, func_ nameoff, parentPc}; 1.20 on: {funcID u8, _ [3],
 * nameOff, parentPc, startLine}). */
static bool inline_entry(const struct dbg_gotab *t, uint64_t addr, int32_t ix,
			 struct inlined_call *c)
{
	size_t size = t->layout >= 120 ? 16 : 20;
	if (ix < 0 || addr < t->fdata_addr)
		return false;
	uint64_t off = addr - t->fdata_addr + (uint64_t)ix * size;
	if (off > t->fdata_len || t->fdata_len - off < size)
		return false;
	const uint8_t *p = t->fdata + off;
	if (t->layout >= 120) {
		c->funcid = p[0];
		c->nameoff = le32(p + 4);
		c->parent_pc = (int32_t)le32(p + 8);
	} else {
		c->funcid = p[2];
		c->nameoff = le32(p + 12);
		c->parent_pc = (int32_t)le32(p + 16);
	}
	return true;
}

static void frame_at(const struct dbg_gotab *t, const struct dbg_gofunc *f, uint64_t tpc,
		     struct dbg_goframe *fr)
{
	if (!dbg_gotab_line(t, f, tpc + t->bias, &fr->file, &fr->line)) {
		fr->file = "?";
		fr->line = 0;
	}
}

size_t dbg_gotab_frames(const struct dbg_gotab *t, const struct dbg_gofunc *f, uint64_t pc,
			struct dbg_goframe *out, size_t max)
{
	uint64_t entry, tpc;
	size_t n = 0;
	if (!table_pcs(t, f, pc, &entry, &tpc) || max == 0)
		return 0;
	uint64_t tree = funcdata_addr(t, f, FUNCDATA_INLTREE);
	for (int depth = 0; tree && n < max && depth < MAX_INLINE_DEPTH; depth++) {
		struct inlined_call c;
		int32_t ix = pcdata_value(t, f, entry, PCDATA_INLTREEINDEX, tpc);
		if (ix < 0 || !inline_entry(t, tree, ix, &c))
			break;
		struct dbg_goframe *fr = &out[n++];
		fr->function = rdstr(t, t->funcnames, c.nameoff);
		if (!fr->function)
			fr->function = "?";
		fr->inlined = true;
		fr->funcid = map_funcid(c.funcid, fr->function);
		frame_at(t, f, tpc, fr);
		/* Back to an instruction of the caller: the call site. */
		tpc = entry + (uint64_t)(int64_t)c.parent_pc;
	}
	if (n < max) {
		struct dbg_goframe *fr = &out[n++];
		fr->function = f->name;
		fr->inlined = false;
		fr->funcid = f->funcid;
		frame_at(t, f, tpc, fr);
	}
	return n;
}

/* ---- build info ----------------------------------------------------- */

static const char buildinfo_magic[] = "\xff Go buildinf:";
#define BUILDINFO_MAGIC_LEN 14
#define BUILDINFO_HEADER 32
#define MAX_VERSION 256

static char *copy_version(const uint8_t *s, uint64_t n)
{
	if (n == 0 || n > MAX_VERSION || memchr(s, '\0', (size_t)n))
		return NULL;
	char *v = malloc((size_t)n + 1);
	if (v) {
		memcpy(v, s, (size_t)n);
		v[n] = '\0';
	}
	return v;
}

/* 1.18 on: the version inline after the header, a uvarint length first. */
static char *inline_version(const uint8_t *p, size_t len)
{
	uint64_t n = 0;
	size_t i = 0;
	for (unsigned shift = 0; i < len && i < 10; shift += 7) {
		uint8_t b = p[i++];
		n |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return n <= len - i ? copy_version(p + i, n) : NULL;
	}
	return NULL;
}

/* Before 1.18: a pointer to a Go string {data, len}. */
static char *pointed_version(const uint8_t *h, bool (*read)(void *, uint64_t, void *, size_t),
			     void *ctx)
{
	unsigned ps = h[14];
	uint8_t str[16], text[MAX_VERSION];
	if (!read || (ps != 4 && ps != 8) || h[15] != 0)   /* big-endian: not read */
		return NULL;
	if (!read(ctx, word_at(h + 16, ps), str, 2 * ps))
		return NULL;
	uint64_t n = word_at(str + ps, ps);
	if (n == 0 || n > sizeof(text) || !read(ctx, word_at(str, ps), text, (size_t)n))
		return NULL;
	return copy_version(text, n);
}

char *dbg_go_buildinfo_version(const void *bytes, size_t len,
			       bool (*read)(void *ctx, uint64_t addr, void *buf, size_t n),
			       void *ctx)
{
	const uint8_t *b = bytes;
	for (size_t off = 0; b && len >= BUILDINFO_HEADER && off <= len - BUILDINFO_HEADER; off += 16) {
		const uint8_t *h = b + off;
		if (memcmp(h, buildinfo_magic, BUILDINFO_MAGIC_LEN) != 0)
			continue;
		if (h[15] & 2)
			return inline_version(h + BUILDINFO_HEADER, len - off - BUILDINFO_HEADER);
		return pointed_version(h, read, ctx);
	}
	return NULL;
}

/* ---- tables of files ------------------------------------------------ */

/* An ELF file's table, once per process. */
struct gofile {
	char *path;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	uint64_t bias;
	int fd;
	Elf *elf;
	struct dbg_gotab *tab;      /* NULL: no Go program */
	const char *problem;        /* why a .gopclntab the file has is unusable */
	char *version;
	struct gofile *next;
};

static struct gofile *gofiles;
static pthread_mutex_t gofiles_lock = PTHREAD_MUTEX_INITIALIZER;

/* A segment's file bytes. */
struct seg {
	const uint8_t *bytes;
	size_t len;
	uint64_t vaddr;
	bool exec;
};

static bool elf_segment(Elf *elf, size_t i, struct seg *s)
{
	GElf_Phdr ph;
	size_t size;
	const uint8_t *image = (const uint8_t *)elf_rawfile(elf, &size);
	if (!image || !gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
	    ph.p_offset > size || ph.p_filesz > size - ph.p_offset)
		return false;
	s->bytes = image + ph.p_offset;
	s->len = (size_t)ph.p_filesz;
	s->vaddr = ph.p_vaddr;
	s->exec = ph.p_flags & PF_X;
	return true;
}

/* The segment whose file bytes hold ADDR. */
static bool elf_segment_of(Elf *elf, uint64_t addr, struct seg *out)
{
	size_t phnum;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return false;
	for (size_t i = 0; i < phnum; i++)
		if (elf_segment(elf, i, out) && addr >= out->vaddr && addr - out->vaddr < out->len)
			return true;
	return false;
}

static bool elf_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	struct seg s;
	if (!elf_segment_of(ctx, addr, &s) || s.len - (addr - s.vaddr) < n)
		return false;
	memcpy(buf, s.bytes + (addr - s.vaddr), n);
	return true;
}

/* The section whose name ends in SUFFIX (".gopclntab" is
 * ".data.rel.ro.gopclntab" in a position-independent program). */
static bool elf_section(Elf *elf, const char *suffix, struct seg *out)
{
	size_t shstrndx, n = strlen(suffix);
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		size_t len = name ? strlen(name) : 0;
		if (!name || sh.sh_type == SHT_NOBITS || len < n || strcmp(name + len - n, suffix) != 0)
			continue;
		Elf_Data *d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf)
			return false;
		out->bytes = d->d_buf;
		out->len = d->d_size;
		out->vaddr = sh.sh_addr;
		return true;
	}
	return false;
}

/* Without section headers: the first header of a table that validates in
 * a segment without code. */
static struct dbg_gotab *scan_segments(Elf *elf, struct seg *found)
{
	size_t phnum;
	struct seg s;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return NULL;
	for (size_t i = 0; i < phnum; i++) {
		if (!elf_segment(elf, i, &s) || s.exec)
			continue;
		for (size_t off = 0; off + 8 <= s.len; off += 8) {
			const uint8_t *p = s.bytes + off;
			if (p[0] < 0xf0 || p[1] != 0xff || p[2] != 0xff || p[3] != 0xff || p[4] || p[5])
				continue;
			struct dbg_gotab *t = dbg_gotab_parse(p, s.len - off, s.vaddr + off, 0, NULL);
			if (t) {
				*found = (struct seg){ p, s.len - off, s.vaddr + off, false };
				return t;
			}
		}
	}
	return NULL;
}

/* moduledata words */
enum { MD_TEXT = 22, MD_NOPTRDATA = 24, MD_ENOPTRBSS = 31, MD_GOFUNC_118 = 38, MD_GOFUNC_120 = 40 };

/* runtime.firstmoduledata: the words that point at the table and at its
 * function names; its text and gofunc, and where its data lies (into T). */
static bool find_moduledata(Elf *elf, struct dbg_gotab *t, uint64_t *text, uint64_t *gofunc)
{
	size_t phnum, ps = t->ptrsize, gofunc_word = t->layout >= 120 ? MD_GOFUNC_120 : MD_GOFUNC_118;
	struct seg s;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return false;
	for (size_t i = 0; i < phnum; i++) {
		if (!elf_segment(elf, i, &s) || s.exec)
			continue;
		for (size_t off = 0; off + (gofunc_word + 1) * ps <= s.len; off += ps) {
			const uint8_t *p = s.bytes + off;
			if (word_at(p, ps) != t->vaddr || word_at(p + ps, ps) != t->vaddr + t->funcnames)
				continue;
			*text = word_at(p + MD_TEXT * ps, ps);
			*gofunc = t->layout == 116 ? 0 : word_at(p + gofunc_word * ps, ps);
			t->data_start = word_at(p + MD_NOPTRDATA * ps, ps);
			t->data_end = word_at(p + MD_ENOPTRBSS * ps, ps);
			return true;
		}
	}
	return false;
}

static char *file_version(Elf *elf)
{
	struct seg s;
	if (elf_section(elf, ".go.buildinfo", &s))
		return dbg_go_buildinfo_version(s.bytes, s.len, elf_read, elf);
	size_t phnum;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return NULL;
	for (size_t i = 0; i < phnum; i++) {
		char *v = elf_segment(elf, i, &s) && !s.exec ?
			dbg_go_buildinfo_version(s.bytes, s.len, elf_read, elf) : NULL;
		if (v)
			return v;
	}
	return NULL;
}

/* The table of G's file, its function data and version. */
static void gofile_load(struct gofile *g)
{
	struct seg tab, fdata;
	g->elf = elf_begin(g->fd, ELF_C_READ_MMAP, NULL);
	if (!g->elf || elf_kind(g->elf) != ELF_K_ELF)
		return;
	if (elf_section(g->elf, ".gopclntab", &tab))
		g->tab = dbg_gotab_parse(tab.bytes, tab.len, tab.vaddr, 0, &g->problem);
	else
		g->tab = scan_segments(g->elf, &tab);
	if (!g->tab)
		return;
	uint64_t text = 0, gofunc = 0;
	if (find_moduledata(g->elf, g->tab, &text, &gofunc)) {
		if (!g->tab->text)
			g->tab->text = text;
		/* Before 1.18 funcdata are addresses: in the table's segment. */
		if (elf_segment_of(g->elf, gofunc ? gofunc : tab.vaddr, &fdata))
			dbg_gotab_set_funcdata(g->tab, gofunc, fdata.bytes, fdata.len, fdata.vaddr);
	}
	dbg_gotab_relocate(g->tab, g->bias);
	g->version = file_version(g->elf);
}

static bool same_file(const struct gofile *g, const char *path, const struct stat *st, uint64_t bias)
{
	return g->bias == bias && g->dev == st->st_dev && g->ino == st->st_ino &&
	       g->size == st->st_size && g->mtime.tv_sec == st->st_mtim.tv_sec &&
	       g->mtime.tv_nsec == st->st_mtim.tv_nsec && strcmp(g->path, path) == 0;
}

static struct gofile *gofile_open(const char *path, uint64_t bias)
{
	struct gofile *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	elf_version(EV_CURRENT);
	g->fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	g->path = strdup(path);
	if (g->fd < 0 || !g->path || fstat(g->fd, &st) != 0) {
		if (g->fd >= 0)
			close(g->fd);
		free(g->path);
		free(g);
		return NULL;
	}
	g->dev = st.st_dev;
	g->ino = st.st_ino;
	g->size = st.st_size;
	g->mtime = st.st_mtim;
	g->bias = bias;
	gofile_load(g);
	if (!g->tab && g->elf) {   /* nothing kept open for a program that is not Go */
		elf_end(g->elf);
		g->elf = NULL;
	}
	if (!g->tab) {
		close(g->fd);
		g->fd = -1;
	}
	return g;
}

/* The registry's entry of PATH at BIAS, read on first use; NULL when the
 * file cannot be read.  Called with gofiles_lock held. */
static struct gofile *gofile_get(const char *path, uint64_t bias)
{
	struct stat st;
	struct gofile *g;
	if (!path || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return NULL;
	for (g = gofiles; g && !same_file(g, path, &st, bias); g = g->next)
		;
	if (!g) {
		g = gofile_open(path, bias);
		if (g) {
			g->next = gofiles;
			gofiles = g;
		}
	}
	return g;
}

const struct dbg_gotab *dbg_gotab_for_file(const char *path, uint64_t bias, char **version)
{
	if (version)
		*version = NULL;
	pthread_mutex_lock(&gofiles_lock);
	struct gofile *g = gofile_get(path, bias);
	if (g && version && g->version)
		*version = strdup(g->version);
	pthread_mutex_unlock(&gofiles_lock);
	return g ? g->tab : NULL;
}

const struct dbg_gotab *dbg_session_gotab(struct dbg_session *s, char **version)
{
	if (version)
		*version = NULL;
	for (size_t i = 0; s && i < s->nmodules; i++) {
		struct dbg_module_entry *m = &s->modules[i];
		if (!m->info.is_main)
			continue;
		pthread_mutex_lock(&gofiles_lock);
		struct gofile *g = gofile_get(m->info.path, m->bias);
		const struct dbg_gotab *tab = g ? g->tab : NULL;
		if (g && version && g->version)
			*version = strdup(g->version);
		if (g && !tab && g->problem)
			core_warn(s->core, "%s: its Go symbol table (.gopclntab) is unusable (%s): no Go "
				  "frames named by it, no goroutines", m->info.path, g->problem);
		pthread_mutex_unlock(&gofiles_lock);
		return tab;
	}
	return NULL;
}
