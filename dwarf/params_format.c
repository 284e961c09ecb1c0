/* Values of parameters as gdb prints them in a backtrace (`set print
 * frame-arguments scalars`, C locale): integers in decimal, chars as
 * `65 'A'`, pointers in hex with `<symbol+off>` and the string for
 * character pointers (200 elements, repeats over 10 folded), enums by name
 * or as `(A | B)` for flag enums, aggregates as "...". */
#include "params.h"
#include "gopclntab.h"

#include <dwarf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/strlist.h"

#define TYPE_DEPTH_MAX 32
#define PRINT_ELEMENTS 200          /* gdb's `print elements` */
#define REPEAT_THRESHOLD 10         /* gdb's `print repeats` */

/* ---- a small growable string ---- */

/* Room for N more bytes and a NUL; false when it cannot be had. */
static bool sb_reserve(struct dbg_text *b, size_t n)
{
	if (b->nomem)
		return false;
	if (b->len + n + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + n + 1)
		cap *= 2;
	char *p = realloc(b->s, cap);
	if (!p) {
		b->nomem = true;
		return false;
	}
	b->s = p;
	b->cap = cap;
	return true;
}

static void sb_add(struct dbg_text *b, const char *s, size_t n)
{
	if (!sb_reserve(b, n))
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void sb_puts(struct dbg_text *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

static void sb_printf(struct dbg_text *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct dbg_text *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Integers are most of the values: written straight into the text,
 * without printf's machinery (a fifth of the cost of a frame's arguments). */
static void sb_unsigned(struct dbg_text *b, const char *prefix, uint64_t v, unsigned base)
{
	char tmp[BASE_DIGITS_MAX], *d = base_digits(tmp + sizeof(tmp), v, base);
	size_t plen = strlen(prefix), n = (size_t)(tmp + sizeof(tmp) - d);
	if (!sb_reserve(b, plen + n))
		return;
	memcpy(b->s + b->len, prefix, plen);
	memcpy(b->s + b->len + plen, d, n);
	b->len += plen + n;
	b->s[b->len] = '\0';
}

static void sb_signed(struct dbg_text *b, int64_t v)
{
	sb_unsigned(b, v < 0 ? "-" : "", v < 0 ? 0 - (uint64_t)v : (uint64_t)v, 10);
}

static char *sb_take(struct dbg_text *b)
{
	if (b->nomem) {
		free(b->s);
		return NULL;
	}
	if (!b->s)
		return strdup("");
	/* Values are short and many (one per argument of every frame): give
	 * back the room the doubling left. */
	char *fit = realloc(b->s, b->len + 1);
	return fit ? fit : b->s;
}

/* ---- types ---- */

static bool is_qualifier(int tag)
{
	return tag == DW_TAG_typedef || tag == DW_TAG_const_type || tag == DW_TAG_volatile_type ||
	       tag == DW_TAG_restrict_type || tag == DW_TAG_atomic_type;
}

static bool type_ref(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	return dwarf_attr_integrate(die, DW_AT_type, &a) && dwarf_formref_die(&a, out);
}

/* TYPE without typedefs and qualifiers; false for void (or a loop). */
static bool strip_type(Dwarf_Die *type, Dwarf_Die *out)
{
	*out = *type;
	for (int i = 0; i < TYPE_DEPTH_MAX; i++) {
		if (!is_qualifier(dwarf_tag(out)))
			return true;
		if (!type_ref(out, out))
			return false;
	}
	return false;
}

static uint64_t type_size(Dwarf_Die *die)
{
	Dwarf_Word size;
	return dwarf_aggregate_size(die, &size) == 0 ? size : 0;
}

static bool type_is_scalar(Dwarf_Die *type, bool has_type)
{
	Dwarf_Die t;
	if (!has_type || !strip_type(type, &t))
		return true;
	for (int i = 0; i < TYPE_DEPTH_MAX; i++) {
		int tag = dwarf_tag(&t);
		if (tag != DW_TAG_reference_type && tag != DW_TAG_rvalue_reference_type)
			break;
		Dwarf_Die target;
		if (!type_ref(&t, &target) || !strip_type(&target, &t))
			return true;
	}
	int tag = dwarf_tag(&t);
	return tag != DW_TAG_structure_type && tag != DW_TAG_union_type &&
	       tag != DW_TAG_class_type && tag != DW_TAG_array_type && tag != DW_TAG_string_type &&
	       tag != DW_TAG_set_type;
}

static void name_type(struct dbg_text *b, Dwarf_Die *type, bool has_type, bool cxx, int depth);

static void name_function(struct dbg_text *b, Dwarf_Die *fn, bool cxx, int depth, const char *inner)
{
	Dwarf_Die ret;
	name_type(b, &ret, type_ref(fn, &ret), cxx, depth + 1);
	sb_printf(b, " (%s)(", inner);
	Dwarf_Die child;
	bool first = true;
	if (dwarf_child(fn, &child) == 0) {
		do {
			int tag = dwarf_tag(&child);
			if (tag != DW_TAG_formal_parameter && tag != DW_TAG_unspecified_parameters)
				continue;
			sb_puts(b, first ? "" : ", ");
			first = false;
			Dwarf_Die pt;
			if (tag == DW_TAG_unspecified_parameters)
				sb_puts(b, "...");
			else
				name_type(b, &pt, type_ref(&child, &pt), cxx, depth + 1);
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	sb_puts(b, first && !cxx ? "void)" : ")");
}

static const char *tag_prefix(int tag, bool cxx)
{
	if (cxx)
		return "";
	switch (tag) {
	case DW_TAG_structure_type: return "struct ";
	case DW_TAG_union_type: return "union ";
	case DW_TAG_enumeration_type: return "enum ";
	default: return "";
	}
}

static void name_type(struct dbg_text *b, Dwarf_Die *type, bool has_type, bool cxx, int depth)
{
	Dwarf_Die target;
	if (!has_type || depth > TYPE_DEPTH_MAX) {
		sb_puts(b, "void");
		return;
	}
	int tag = dwarf_tag(type);
	const char *name = dwarf_diename(type);
	bool has_target = type_ref(type, &target);
	switch (tag) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type: {
		const char *sym = tag == DW_TAG_pointer_type ? "*" :
				  tag == DW_TAG_reference_type ? "&" : "&&";
		Dwarf_Die fn;
		if (has_target && strip_type(&target, &fn) && dwarf_tag(&fn) == DW_TAG_subroutine_type) {
			name_function(b, &fn, cxx, depth, sym);
			return;
		}
		name_type(b, &target, has_target, cxx, depth + 1);
		if (!b->len || (b->s[b->len - 1] != '*' && b->s[b->len - 1] != '&'))
			sb_puts(b, " ");
		sb_puts(b, sym);
		return;
	}
	case DW_TAG_const_type:
	case DW_TAG_volatile_type: {
		const char *q = tag == DW_TAG_const_type ? "const" : "volatile";
		if (has_target && dwarf_tag(&target) == DW_TAG_pointer_type) {
			name_type(b, &target, true, cxx, depth + 1);
			sb_printf(b, " %s", q);
		} else {
			sb_printf(b, "%s ", q);
			name_type(b, &target, has_target, cxx, depth + 1);
		}
		return;
	}
	case DW_TAG_array_type:
		name_type(b, &target, has_target, cxx, depth + 1);
		sb_puts(b, " []");
		return;
	case DW_TAG_subroutine_type:
		name_function(b, type, cxx, depth, "");
		return;
	default:
		sb_puts(b, tag_prefix(tag, cxx));
		sb_puts(b, name ? name : "?");
	}
}

char *dbg_type_name(Dwarf_Die *type, bool has_type, bool cxx)
{
	if (!has_type)
		return NULL;
	struct dbg_text b = { 0 };
	name_type(&b, type, has_type, cxx, 0);
	return sb_take(&b);
}

/* ---- values ---- */

static uint64_t le_bytes(const unsigned char *p, size_t size)
{
	uint64_t v = 0;
	memcpy(&v, p, size > 8 ? 8 : size);
	return v;
}

static int64_t sign_extend(uint64_t v, size_t size)
{
	if (size >= 8)
		return (int64_t)v;
	unsigned shift = 64 - 8 * (unsigned)size;
	return (int64_t)(v << shift) >> shift;
}

/* One character as gdb's print_wchar writes it between QUOTE quotes. */
static void put_char(struct dbg_text *b, unsigned char c, char quote)
{
	static const char esc[] = "\a\b\f\n\r\t\v";
	static const char letters[] = "abfnrtv";
	const char *e = c ? strchr(esc, c) : NULL;
	if (e) {
		sb_printf(b, "\\%c", letters[e - esc]);
	} else if (c >= 0x20 && c < 0x7f) {
		if (c == (unsigned char)quote || c == '\\')
			sb_puts(b, "\\");
		sb_add(b, (const char *)&c, 1);
	} else {
		sb_printf(b, "\\%03o", c);
	}
}

/* gdb's generic_printstr: runs longer than the repeat threshold become
 * `'c' <repeats N times>`, the rest quoted segments, joined by ", ". */
static void put_string(struct dbg_text *b, const unsigned char *s, size_t n)
{
	if (n == 0) {
		sb_puts(b, "\"\"");
		return;
	}
	bool in_quote = false, first = true;
	for (size_t i = 0; i < n;) {
		size_t run = 1;
		while (i + run < n && s[i + run] == s[i])
			run++;
		if (run > REPEAT_THRESHOLD) {
			sb_puts(b, in_quote ? "\", " : first ? "" : ", ");
			sb_puts(b, "'");
			put_char(b, s[i], '"');
			sb_printf(b, "' <repeats %zu times>", run);
			in_quote = false;
		} else {
			if (!in_quote)
				sb_puts(b, first ? "\"" : ", \"");
			in_quote = true;
			for (size_t k = 0; k < run; k++)
				put_char(b, s[i], '"');
		}
		first = false;
		i += run;
	}
	if (in_quote)
		sb_puts(b, "\"");
}

/* The string at ADDR as gdb's val_print_string shows it (len -1). */
static void put_cstring(struct dbg_text *b, struct core *core, uint64_t addr)
{
	unsigned char buf[PRINT_ELEMENTS];
	size_t n = 0;
	bool fault = false, nul = false;
	if (core_read_bytes(core, addr, buf, sizeof(buf))) {
		n = sizeof(buf);
	} else {
		while (n < sizeof(buf) && core_read_bytes(core, addr + n, &buf[n], 1))
			n++;
		fault = n < sizeof(buf);
	}
	const unsigned char *z = memchr(buf, 0, n);
	if (z) {
		n = (size_t)(z - buf);
		nul = true;
		fault = false;
	}
	unsigned char next;
	bool ellipsis = !nul && !fault && core_read_bytes(core, addr + n, &next, 1) && next != 0;
	if (!fault || n > 0)
		put_string(b, buf, n);
	if (ellipsis)
		sb_puts(b, "...");
	if (fault)
		sb_printf(b, "<error: Cannot access memory at address 0x%" PRIx64 ">", addr + n);
}

/* gdb names a C++ function without a linkage name ("main") by its
 * physname, "main(int, char**)": the non-artificial parameter types. */
static char *cxx_physname(struct dbg_session *s, uint64_t entry, char *name)
{
	struct dbg_module_entry *m;
	struct dbg_file *f;
	struct dbg_pc_info *info = dbg_pc_info_get(s, entry, true, &m, &f);
	if (!info || !info->cxx || !info->nlevels || strchr(name, '('))
		return name;
	struct dbg_text b = { 0 };
	sb_puts(&b, name);
	sb_puts(&b, "(");
	struct dbg_level *level = &info->levels[0];
	for (size_t i = 0, n = 0; i < level->nparams; i++) {
		if (level->params[i].artificial)
			continue;
		sb_puts(&b, n++ ? ", " : "");
		for (const char *t = level->params[i].type_name; t && *t; t++)
			if (!(*t == ' ' && (t[1] == '*' || t[1] == '&')))
				sb_add(&b, t, 1);
	}
	sb_puts(&b, ")");
	char *full = sb_take(&b);
	if (!full)
		return name;
	free(name);
	return full;
}

/* A function-scope static's symbol is its name and ".N" (GCC's "buf.1");
 * gdb names it as the source does. */
static void strip_static_suffix(char *name)
{
	char *dot = strrchr(name, '.');
	if (!dot || dot == name || !dot[1])
		return;
	for (const char *p = dot + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return;
	*dot = '\0';
}

/* A data symbol's name as gdb (13) prints it.  gdb gives a minimal symbol
 * that no other language demangles to Ada when Ada's decoding changes it,
 * and prints that decoding (ada-lang.c's ada_decode): a compiler's suffix,
 * "." and letters after the last dot, goes in brackets, "__" in the rest
 * becomes ".", and a rest that starts with '_' or '<', holds "___", or
 * decodes to an upper-case letter or a space is left alone.  Go's package
 * names are such: "runtime.sched" prints as "runtime[sched]", "runtime.m0"
 * as it is.  Only this part of the GNAT decoding is done here.  NAME is
 * replaced (malloc'd) or kept; false on out-of-memory. */
static bool gdb_data_name(char **name)
{
	const char *n = *name;
	const char *dot = strrchr(n, '.');
	if (!dot || dot == n || !dot[1] || n[0] == '_' || n[0] == '<' || strstr(n, "___"))
		return true;
	for (const char *p = dot + 1; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
			return true;
	for (const char *p = n; p < dot; p++)
		if (*p == ' ' || (*p >= 'A' && *p <= 'Z'))
			return true;
	struct dbg_text b = { 0 };
	for (const char *p = n; p < dot; p++) {
		bool sep = p[0] == '_' && p[1] == '_' && p + 2 < dot;
		sb_add(&b, sep ? "." : p, 1);
		p += sep;
	}
	sb_printf(&b, "[%s]", dot + 1);
	char *out = sb_take(&b);
	if (!out)
		return false;
	free(*name);
	*name = out;
	return true;
}

/* A Go function's name where its symbol's differs (an assembly function's
 * ABI wrapper is "runtime.raise.abi0" in the symbol table): gdb names the
 * function DWARF starts there, which is the runtime's own name.  NAME
 * (malloc'd) is replaced or kept; NULL stays NULL. */
static char *go_name(struct dbg_file *f, uint64_t entry, char *name)
{
	const struct dbg_gotab *t = name ? dbg_file_gotab(f) : NULL;
	struct dbg_gofunc fn;
	if (!t || !dbg_gotab_func(t, entry, &fn) || fn.entry != entry || strcmp(fn.name, name) == 0)
		return name;
	char *go = strdup(fn.name);
	if (!go)
		return name;
	free(name);
	return go;
}

/* " <symbol+offset>" for an address inside a symbol, as gdb's
 * print_address_symbolic (data symbols without a size are not used). */
static char *symbol_text(struct dbg_session *s, uint64_t addr)
{
	struct dbg_module_entry *m = dbg_module_for(s, addr);
	struct dbg_file *f = m ? dbg_module_file(s, m) : NULL;
	if (!f)
		return strdup("");
	Dwarf_Addr fbias = 0;
	dwfl_module_getelf(f->mod, &fbias);
	GElf_Off off;
	GElf_Sym sym;
	const char *name = dbg_file_addrinfo(f, addr - m->bias + fbias, &off, &sym);
	if (!name || (sym.st_size == 0 && GELF_ST_TYPE(sym.st_info) != STT_FUNC) ||
	    (sym.st_size && off >= sym.st_size))
		return strdup("");
	char *d = dbg_demangle(name);
	if (!d)
		return NULL;
	if (GELF_ST_BIND(sym.st_info) == STB_LOCAL && GELF_ST_TYPE(sym.st_info) == STT_OBJECT)
		strip_static_suffix(d);
	if (GELF_ST_TYPE(sym.st_info) != STT_FUNC && !(name[0] == '_' && name[1] == 'Z') &&
	    !gdb_data_name(&d)) {
		free(d);
		return NULL;
	}
	if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && !(name[0] == '_' && name[1] == 'Z'))
		d = go_name(f, addr - m->bias + fbias - off, cxx_physname(s, addr - off, d));
	struct dbg_text b = { 0 };
	if (off)
		sb_printf(&b, " <%s+%" PRIu64 ">", d, (uint64_t)off);
	else
		sb_printf(&b, " <%s>", d);
	free(d);
	return sb_take(&b);
}

#define SYMCACHE_SIZE 1024

struct dbg_symcache {
	uint64_t addr[SYMCACHE_SIZE];
	char *text[SYMCACHE_SIZE];
};

void dbg_symcache_destroy(struct dbg_symcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < SYMCACHE_SIZE; i++)
		free(c->text[i]);
	free(c);
}

/* The same few pointers (callbacks, globals) recur in frame after frame:
 * their symbol text is kept per session in a direct-mapped cache. */
static void put_symbol(struct dbg_text *b, struct dbg_session *s, uint64_t addr)
{
	if (!s->symcache)
		s->symcache = calloc(1, sizeof(*s->symcache));
	struct dbg_symcache *c = s->symcache;
	size_t i = (size_t)((addr ^ (addr >> 12)) % SYMCACHE_SIZE);
	if (c && c->text[i] && c->addr[i] == addr) {
		sb_puts(b, c->text[i]);
		return;
	}
	char *text = symbol_text(s, addr);
	if (!text) {
		b->nomem = true;
		return;
	}
	sb_puts(b, text);
	if (!c) {
		free(text);
		return;
	}
	free(c->text[i]);
	c->text[i] = text;
	c->addr[i] = addr;
}

static void put_pointer(struct dbg_text *b, struct dbg_eval *ev, const struct dbg_scalar *ptr,
			uint64_t addr)
{
	sb_unsigned(b, "0x", addr, 16);
	put_symbol(b, ev->s, addr);
	if (ptr->char_target && addr) {
		sb_puts(b, " ");
		put_cstring(b, dbg_session_core(ev->s), addr);
	}
}

/* Flag enums (every enumerator a single bit or 0) print as (A | B). */
static bool enum_is_flags(Dwarf_Die *e)
{
	Dwarf_Die c;
	if (dwarf_child(e, &c) != 0)
		return false;
	do {
		Dwarf_Attribute a;
		Dwarf_Sword v;
		if (dwarf_tag(&c) != DW_TAG_enumerator)
			continue;
		if (!dwarf_attr(&c, DW_AT_const_value, &a) || dwarf_formsdata(&a, &v) != 0 || v < 0 ||
		    __builtin_popcountll((uint64_t)v) > 1)
			return false;
	} while (dwarf_siblingof(&c, &c) == 0);
	return true;
}

static bool enum_unsigned(Dwarf_Die *e)
{
	Dwarf_Die c;
	if (dwarf_child(e, &c) != 0)
		return true;
	do {
		Dwarf_Attribute a;
		Dwarf_Sword v;
		if (dwarf_tag(&c) == DW_TAG_enumerator && dwarf_attr(&c, DW_AT_const_value, &a) &&
		    dwarf_formsdata(&a, &v) == 0 && v < 0 && a.form != DW_FORM_udata)
			return false;
	} while (dwarf_siblingof(&c, &c) == 0);
	return true;
}

/* Value of an enumerator, in the enum's width. */
static bool enumerator_value(Dwarf_Die *c, size_t size, uint64_t *v)
{
	Dwarf_Attribute a;
	Dwarf_Word w;
	if (dwarf_tag(c) != DW_TAG_enumerator || !dwarf_attr(c, DW_AT_const_value, &a) ||
	    dwarf_formudata(&a, &w) != 0)
		return false;
	*v = size >= 8 ? w : w & ((1ULL << (8 * size)) - 1);
	return true;
}

static void put_flags(struct dbg_text *b, Dwarf_Die *e, size_t size, uint64_t v)
{
	bool first = true;
	Dwarf_Die c;
	if (dwarf_child(e, &c) == 0) {
		do {
			uint64_t ev;
			if (!enumerator_value(&c, size, &ev) || ev == 0 || (v & ev) != ev)
				continue;
			sb_puts(b, first ? "(" : " | ");
			sb_puts(b, dwarf_diename(&c) ? dwarf_diename(&c) : "?");
			first = false;
			v &= ~ev;
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	if (v)
		sb_printf(b, "%sunknown: 0x%" PRIx64 ")", first ? "(" : " | ", v);
	else
		sb_puts(b, first ? "0" : ")");
}

static void put_enum(struct dbg_text *b, const struct dbg_scalar *t, const unsigned char *bytes,
		     size_t size)
{
	Dwarf_Die copy = t->die, *e = &copy;
	uint64_t v = le_bytes(bytes, size);
	if (size < 8)
		v &= (1ULL << (8 * size)) - 1;
	Dwarf_Die c;
	if (dwarf_child(e, &c) == 0) {
		do {
			uint64_t ev;
			if (enumerator_value(&c, size, &ev) && ev == v) {
				sb_puts(b, dwarf_diename(&c) ? dwarf_diename(&c) : "?");
				return;
			}
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	if (enum_is_flags(e))
		put_flags(b, e, size, v);
	else if (enum_unsigned(e))
		sb_unsigned(b, "", v, 10);
	else
		sb_signed(b, sign_extend(v, size));
}

/* gdb's %g with the format's decimal digits, and nan(0xMANTISSA). */
static void put_float(struct dbg_text *b, const unsigned char *bytes, size_t size)
{
	if (size == 4) {
		float f;
		uint32_t bits;
		memcpy(&f, bytes, 4);
		memcpy(&bits, bytes, 4);
		if (f != f)
			sb_printf(b, "%snan(0x%" PRIx32 ")", bits >> 31 ? "-" : "", bits & 0x7fffff);
		else
			sb_printf(b, "%.9g", (double)f);
	} else if (size == 8) {
		double d;
		uint64_t bits;
		memcpy(&d, bytes, 8);
		memcpy(&bits, bytes, 8);
		if (d != d)
			sb_printf(b, "%snan(0x%" PRIx64 ")", bits >> 63 ? "-" : "",
				  bits & (uint64_t)0xfffffffffffff);
		else
			sb_printf(b, "%.17g", d);
	} else if (size == 16 || size == 10) {
		long double ld = 0;
		memcpy(&ld, bytes, 10);
		if (ld != ld)
			sb_puts(b, "nan");
		else
			sb_printf(b, "%.21Lg", ld);
	} else {
		sb_puts(b, "<unsupported float>");
	}
}

static void put_char_value(struct dbg_text *b, const unsigned char *bytes, bool is_signed)
{
	unsigned char c = bytes[0];
	sb_printf(b, "%d '", is_signed ? (int)(signed char)c : (int)c);
	put_char(b, c, '\'');
	sb_puts(b, "'");
}

static void put_base(struct dbg_text *b, const struct dbg_scalar *t, const unsigned char *bytes,
		     size_t size)
{
	Dwarf_Word enc = t->has_encoding ? t->encoding : DW_ATE_signed;
	uint64_t v = le_bytes(bytes, size);
	if (size < 8)
		v &= (1ULL << (8 * size)) - 1;
	switch (enc) {
	case DW_ATE_boolean:
		if (v <= 1)
			sb_puts(b, v ? "true" : "false");
		else
			sb_unsigned(b, "", v, 10);
		return;
	case DW_ATE_float:
		put_float(b, bytes, size);
		return;
	case DW_ATE_signed_char:
	case DW_ATE_unsigned_char:
		if (size == 1) {
			put_char_value(b, bytes, enc == DW_ATE_signed_char);
			return;
		}
		break;
	case DW_ATE_signed:
		sb_signed(b, sign_extend(v, size));
		return;
	default:
		break;
	}
	sb_unsigned(b, "", v, 10);
}

/* The object's bytes: from the location, or read from memory. */
static bool value_bytes(struct dbg_text *b, struct dbg_eval *ev, const struct dbg_loc *loc,
			unsigned char *out, size_t size)
{
	if (loc->kind == DBG_LOC_MEMORY) {
		struct core *core = dbg_session_core(ev->s);
		if (core_read_bytes(core, loc->addr, out, size))
			return true;
		size_t ok = 0;
		while (ok < size && core_read_bytes(core, loc->addr + ok, out + ok, 1))
			ok++;
		sb_printf(b, "<error reading variable: Cannot access memory at address 0x%" PRIx64 ">",
			  loc->addr + ok);
		return false;
	}
	if (loc->len < size) {
		sb_puts(b, "<optimized out>");
		return false;
	}
	memcpy(out, loc->bytes, size);
	return true;
}

static void put_scalar(struct dbg_text *b, struct dbg_eval *ev, const struct dbg_scalar *t,
		       const struct dbg_scalar *target, const struct dbg_loc *loc);

/* A reference to a scalar: `@0xADDR: value`. */
static void put_reference(struct dbg_text *b, struct dbg_eval *ev, const struct dbg_scalar *target,
			  uint64_t addr)
{
	sb_unsigned(b, "@0x", addr, 16);
	sb_puts(b, ": ");
	if (!target->ok) {
		sb_puts(b, "<incomplete type>");
		return;
	}
	struct dbg_loc at = { .kind = DBG_LOC_MEMORY, .addr = addr };
	put_scalar(b, ev, target, NULL, &at);
}

/* T's value at LOC; TARGET: a reference's target (NULL inside one: C++ has
 * no reference to a reference). */
static void put_scalar(struct dbg_text *b, struct dbg_eval *ev, const struct dbg_scalar *t,
		       const struct dbg_scalar *target, const struct dbg_loc *loc)
{
	int tag = t->tag;
	bool pointer = tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type ||
		       tag == DW_TAG_rvalue_reference_type || tag == DW_TAG_ptr_to_member_type;
	if (loc->kind == DBG_LOC_SYNTHETIC) {
		sb_puts(b, pointer ? "<synthetic pointer>" : "<optimized out>");
		return;
	}
	size_t size = t->size;
	if (pointer && size == 0)
		size = 8;
	unsigned char bytes[16];
	if (size == 0 || size > sizeof(bytes)) {
		sb_puts(b, "...");
		return;
	}
	if (!value_bytes(b, ev, loc, bytes, size))
		return;
	if (tag == DW_TAG_pointer_type)
		put_pointer(b, ev, t, le_bytes(bytes, size));
	else if ((tag == DW_TAG_reference_type || tag == DW_TAG_rvalue_reference_type) && target)
		put_reference(b, ev, target, le_bytes(bytes, size));
	else if (tag == DW_TAG_reference_type || tag == DW_TAG_rvalue_reference_type)
		put_reference(b, ev, &(struct dbg_scalar){ .ok = false }, le_bytes(bytes, size));
	else if (tag == DW_TAG_enumeration_type)
		put_enum(b, t, bytes, size);
	else if (tag == DW_TAG_base_type)
		put_base(b, t, bytes, size);
	else
		sb_unsigned(b, "0x", le_bytes(bytes, size), 16);
}

/* Everything put_scalar asks of the stripped type T. */
static void scalar_read(Dwarf_Die *t, struct dbg_scalar *out)
{
	Dwarf_Attribute a;
	Dwarf_Die target, tt;
	memset(out, 0, sizeof(*out));
	out->ok = true;
	out->die = *t;
	out->tag = dwarf_tag(t);
	out->size = (size_t)type_size(t);
	out->has_encoding = dwarf_attr(t, DW_AT_encoding, &a) && dwarf_formudata(&a, &out->encoding) == 0;
	if (out->tag == DW_TAG_pointer_type && type_ref(t, &target) && strip_type(&target, &tt)) {
		Dwarf_Word enc;
		out->char_target = dwarf_tag(&tt) == DW_TAG_base_type &&
				   dwarf_attr(&tt, DW_AT_encoding, &a) && dwarf_formudata(&a, &enc) == 0 &&
				   (enc == DW_ATE_signed_char || enc == DW_ATE_unsigned_char) &&
				   type_size(&tt) == 1;
	}
}

void dbg_vtype_read(Dwarf_Die *type, bool has_type, struct dbg_vtype *vt)
{
	Dwarf_Die t, target, tt;
	memset(vt, 0, sizeof(*vt));
	vt->has_type = has_type;
	vt->scalar = type_is_scalar(type, has_type);
	if (!has_type || !strip_type(type, &t))
		return;
	scalar_read(&t, &vt->t);
	vt->reference = vt->t.tag == DW_TAG_reference_type || vt->t.tag == DW_TAG_rvalue_reference_type;
	if (vt->reference && type_ref(&t, &target) && strip_type(&target, &tt))
		scalar_read(&tt, &vt->target);
}

void dbg_format_value(struct dbg_eval *ev, const struct dbg_vtype *vt, const struct dbg_loc *loc,
		      struct dbg_text *out)
{
	if (!vt->scalar)
		sb_puts(out, "...");
	else if (loc->kind == DBG_LOC_OPTIMIZED)
		sb_puts(out, "<optimized out>");
	else if (loc->kind == DBG_LOC_ERROR)
		sb_printf(out, "<error reading variable: Cannot access memory at address 0x%" PRIx64 ">",
			  loc->fault);
	else if (loc->kind == DBG_LOC_TOO_BIG)
		sb_puts(out, "...");
	else if (!vt->t.ok)
		sb_puts(out, "<incomplete type>");
	else
		put_scalar(out, ev, &vt->t, &vt->target, loc);
	sb_add(out, "", 1);
}

bool dbg_value_bytes(struct dbg_eval *ev, const struct dbg_vtype *vt, const struct dbg_loc *loc,
		     unsigned char out[16], size_t *size)
{
	if (!vt->t.ok)
		return false;
	int tag = vt->t.tag;
	*size = vt->t.size;
	if (*size == 0 && (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type ||
			   tag == DW_TAG_rvalue_reference_type))
		*size = 8;
	if (*size == 0 || *size > 16)
		return false;
	if (loc->kind == DBG_LOC_MEMORY)
		return core_read_bytes(dbg_session_core(ev->s), loc->addr, out, *size);
	if (loc->kind != DBG_LOC_VALUE || loc->len < *size)
		return false;
	memcpy(out, loc->bytes, *size);
	return true;
}
