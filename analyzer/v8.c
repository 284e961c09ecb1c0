/* Node.js programs: V8's JavaScript frames and the crash V8 reported.
 *
 * Find: every offset, tag and type number comes from the postmortem
 * metadata node exports (v8dbg_* symbols, int values in its .data), read
 * from the process's memory or the binary; a V8 without it is a warning.
 * Enumerate: a thread's V8 frames are walked by frame pointer from each
 * native frame in V8's code (a Builtins_* symbol, or JIT code in an
 * anonymous executable mapping), classified by the slot at
 * fp + off_fp_context_or_frame_type: a frame-type marker for typed frames,
 * a Context for JavaScript frames, whose fp + off_fp_function is the
 * JSFunction.  Splice: each JavaScript frame goes after the native frame
 * running in it, named as V8's stack traces name it.  Validate: every heap
 * object is checked by its map's instance type, strings and chains are
 * bounded, and what cannot be read is left out with a warning.
 *
 * What the metadata does not name is taken from V8's own declarations,
 * each believed only when what it finds has the right type: a
 * BytecodeArray's source position table (its third tagged field after the
 * length), an InstructionStream's Code (its field after the map), an
 * InliningPosition's size (16 bytes), the data pointer V8 caches after an
 * external string's resource (checked against the resource's members), a
 * ScopeInfo's optional fields (the function's name and position, found
 * among the slots after its locals as llnode finds them), and the operand
 * scale prefixes (the first four bytecodes) for walking a baseline code's
 * bytecodes with V8's table of their sizes (a symbol of the binary). */
#include "v8.h"
#include "v8_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../corefile/core.h"

/* A metadata entry: the symbol, whether it is required. */
struct v8_meta_entry {
	const char *name;
	bool required;
};

static const struct v8_meta_entry meta_entries[NMETA] = {
#define V8_ENTRY(field, name, required) [M_##field] = { name, required },
	V8_META(V8_ENTRY)
#undef V8_ENTRY
};

/* One function a JS frame runs: the frame's own, or one inlined into its
 * optimized code (innermost first). */
struct v8_place {
	uint64_t sfi;
	int64_t position;           /* in its script; -1: unknown */
	bool exact;                 /* the code's position, not the function's start */
	bool inlined;
	bool construct;             /* called by new (its caller a construct frame) */
};

/* One V8 frame of a walk. */
struct v8_frame {
	uint64_t fp, pc;            /* pc: where the code running in it is */
	bool js;
	uint64_t function;          /* JS: the JSFunction */
	int64_t type;               /* typed: the frame type; JS: -1 */
	bool damaged;               /* neither typed nor a JavaScript function's */
};

#define V8_WARN_MAX 16

void v8_warn(struct v8 *v, const char *fmt, ...)
{
	if (v->warned++ >= V8_WARN_MAX)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	core_warn(v->core, "node: %s", buf);
}

/* ---- find: the metadata ------------------------------------------------ */

static bool meta_symbol(void *ctx, const char *name, uint64_t addr)
{
	struct v8 *v = ctx;
	bool v8dbg = strncmp(name, "v8dbg_", 6) == 0;
	v->nfound += v8dbg;
	/* V8's names go without their prefix, node's (nodedbg_) with it. */
	const char *key = v8dbg ? name + 6 : name;
	for (size_t i = 0; i < NMETA; i++) {
		if (v->have[i] || strcmp(meta_entries[i].name, key) != 0)
			continue;
		int32_t value;
		if (dbg_read_module_bytes(v->s, addr, &value, sizeof(value))) {
			v->m[i] = value;
			v->have[i] = true;
		}
		break;
	}
	return true;
}

/* The value of metadata entry FIELD, and whether the binary has it. */
/* Read the metadata; false (with a warning when V8 is there) when it is
 * absent or not what this reader knows. */
static bool meta_load(struct v8 *v)
{
	dbg_symbols_with_prefix(v->s, "v8dbg_", meta_symbol, v);
	dbg_symbols_with_prefix(v->s, "nodedbg_", meta_symbol, v);
	if (v->nfound == 0) {
		uint64_t addr, size;
		if (dbg_find_symbol(v->s, "Builtins_JSEntry", &addr, &size))
			v8_warn(v, "V8 without postmortem metadata (no v8dbg_ symbol): no JavaScript frames");
		return false;
	}
	for (size_t i = 0; i < NMETA; i++)
		if (meta_entries[i].required && !v->have[i]) {
			v8_warn(v, "V8's postmortem metadata lacks v8dbg_%s: no JavaScript frames",
				meta_entries[i].name);
			return false;
		}
	if (MV(v, tagged_size) != 8 || MV(v, heap_tag_mask) <= 0 || MV(v, smi_tag_mask) <= 0) {
		v8_warn(v, "V8's metadata says tagged values of %" PRId64 " bytes (pointer compression?): "
			"not read", MV(v, tagged_size));
		return false;
	}
	return true;
}

/* ---- the heap ---------------------------------------------------------- */

bool v8_rd(struct v8 *v, uint64_t addr, void *buf, size_t n)
{
	return addr && core_read_bytes(v->core, addr, buf, n);
}

bool v8_rd_word(struct v8 *v, uint64_t addr, uint64_t *w)
{
	return v8_rd(v, addr, w, sizeof(*w));
}

bool v8_is_heap(const struct v8 *v, uint64_t w)
{
	return (w & (uint64_t)MV(v, heap_tag_mask)) == (uint64_t)MV(v, heap_tag) && w > 0x1000;
}

static bool is_smi(const struct v8 *v, uint64_t w)
{
	return (w & (uint64_t)MV(v, smi_tag_mask)) == (uint64_t)MV(v, smi_tag);
}

/* A Smi's value: shifted past its tag and the shift V8 says. */
static int64_t smi_value(const struct v8 *v, uint64_t w)
{
	unsigned tag_bits = (unsigned)__builtin_popcountll((uint64_t)MV(v, smi_tag_mask));
	return (int64_t)w >> (MV(v, smi_shift) + tag_bits);
}

/* The tagged field at OFFSET of heap object OBJ. */
bool v8_field(struct v8 *v, uint64_t obj, int64_t offset, uint64_t *w)
{
	return v8_rd_word(v, obj - (uint64_t)MV(v, heap_tag) + (uint64_t)offset, w);
}

bool v8_smi_field(struct v8 *v, uint64_t obj, int64_t offset, int64_t *value)
{
	uint64_t w;
	if (!v8_field(v, obj, offset, &w) || !is_smi(v, w))
		return false;
	*value = smi_value(v, w);
	return true;
}

/* OBJ's instance type, through its map (a map's map has MAP_TYPE). */
bool v8_instance_type(struct v8 *v, uint64_t obj, int64_t *type)
{
	uint64_t map;
	uint16_t t;
	if (!v8_is_heap(v, obj) || !v8_field(v, obj, MV(v, ho_map), &map) || !v8_is_heap(v, map) ||
	    !v8_rd(v, map - (uint64_t)MV(v, heap_tag) + (uint64_t)MV(v, map_type), &t, sizeof(t)))
		return false;
	*type = t;
	return true;
}

static bool has_type(struct v8 *v, uint64_t obj, int64_t want)
{
	int64_t t;
	return v8_instance_type(v, obj, &t) && t == want;
}

/* ---- strings ----------------------------------------------------------- */

static void text_put(struct v8_text *t, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (t->len + 1 >= sizeof(t->buf)) {
			t->cut = true;
			return;
		}
		t->buf[t->len++] = s[i];
	}
	t->buf[t->len] = '\0';
}

static bool string_chars(struct v8 *v, uint64_t str, int64_t from, int64_t n, struct v8_text *out,
			 unsigned depth);

/* Characters [FROM, FROM + N) of a flat string whose characters are at
 * BASE (one or two bytes each), read from the core (the heap) or, with
 * MODULES, also from the mapped files (an external string's data may be
 * in a binary's read-only data).  Kept printable: others are '?'. */
static bool flat_chars(struct v8 *v, uint64_t base, bool one_byte, bool modules, int64_t from, int64_t n,
		       struct v8_text *out)
{
	unsigned width = one_byte ? 1 : 2;
	unsigned char raw[256];
	char chunk[128];
	for (int64_t at = from; at < from + n && !out->cut;) {
		size_t k = (size_t)(from + n - at) < sizeof(chunk) ? (size_t)(from + n - at) : sizeof(chunk);
		uint64_t addr = base + (uint64_t)at * width;
		if (modules ? !dbg_read_module_bytes(v->s, addr, raw, k * width) : !v8_rd(v, addr, raw, k * width))
			return false;
		for (size_t i = 0; i < k; i++) {
			unsigned c = one_byte ? raw[i] : (unsigned)(raw[2 * i] | raw[2 * i + 1] << 8);
			chunk[i] = c >= 0x20 && c < 0x7f ? (char)c : c == '\n' || c == '\t' ? (char)c : '?';
		}
		text_put(out, chunk, k);
		at += (int64_t)k;
	}
	return true;
}

/* Characters [FROM, FROM + N) of sequential string STR. */
static bool seq_chars(struct v8 *v, uint64_t str, bool one_byte, int64_t from, int64_t n,
		      struct v8_text *out)
{
	if (!one_byte && !HAVE(v, two_byte_chars))
		return false;
	uint64_t base = str - (uint64_t)MV(v, heap_tag) +
			(uint64_t)(one_byte ? MV(v, one_byte_chars) : MV(v, two_byte_chars));
	return flat_chars(v, base, one_byte, false, from, n, out);
}

static bool string_length(struct v8 *v, uint64_t str, int64_t *len)
{
	int32_t n;
	if (!v8_rd(v, str - (uint64_t)MV(v, heap_tag) + (uint64_t)MV(v, str_length), &n, sizeof(n)) || n < 0)
		return false;
	*len = n;
	return true;
}

bool v8_is_string(struct v8 *v, uint64_t obj, int64_t *type)
{
	return v8_instance_type(v, obj, type) && (*type & MV(v, is_not_string_mask)) == 0;
}

static bool cons_chars(struct v8 *v, uint64_t str, int64_t from, int64_t n, struct v8_text *out,
		       unsigned depth)
{
	uint64_t first, second;
	int64_t first_len;
	if (!HAVE(v, cons_first) || !v8_field(v, str, MV(v, cons_first), &first) ||
	    !v8_field(v, str, MV(v, cons_second), &second) || !string_length(v, first, &first_len))
		return false;
	if (from < first_len) {
		int64_t k = from + n <= first_len ? n : first_len - from;
		if (!string_chars(v, first, from, k, out, depth + 1))
			return false;
		from += k;
		n -= k;
	}
	return n == 0 || string_chars(v, second, from - first_len, n, out, depth + 1);
}

/* Where an external string's characters are: V8 caches its resource's
 * data pointer in the word after the resource (no metadata names it),
 * believed when the resource holds the same pointer among its first
 * members (node's scripts' resources do); else node's own resources'
 * data member, where nodedbg_ says. */
static bool external_data(struct v8 *v, uint64_t str, uint64_t *data)
{
	uint64_t resource, cached, member[4];
	if (!HAVE(v, external_resource) ||
	    !v8_rd_word(v, str - (uint64_t)MV(v, heap_tag) + (uint64_t)MV(v, external_resource), &resource) ||
	    !v8_rd(v, resource, member, sizeof(member)))
		return false;
	if (v8_rd_word(v, str - (uint64_t)MV(v, heap_tag) + (uint64_t)MV(v, external_resource) + 8, &cached) &&
	    cached)
		for (size_t i = 1; i < 4; i++)
			if (member[i] == cached) {
				*data = cached;
				return true;
			}
	return HAVE(v, node_resource_data) && MV(v, node_resource_data) > 0 &&
	       v8_rd_word(v, resource + (uint64_t)MV(v, node_resource_data), data) && *data;
}

static bool external_chars(struct v8 *v, uint64_t str, bool one_byte, int64_t from, int64_t n,
			   struct v8_text *out)
{
	uint64_t data;
	return external_data(v, str, &data) && flat_chars(v, data, one_byte, true, from, n, out);
}

static bool string_chars(struct v8 *v, uint64_t str, int64_t from, int64_t n, struct v8_text *out,
			 unsigned depth)
{
	int64_t type, len;
	if (depth > MAX_STRING_DEPTH || !v8_is_string(v, str, &type) || !string_length(v, str, &len) ||
	    from < 0 || n < 0 || from + n > len)
		return false;
	int64_t repr = type & MV(v, repr_mask);
	bool one_byte = (type & MV(v, encoding_mask)) == MV(v, one_byte_tag);
	uint64_t inner;
	int64_t offset;
	if (repr == MV(v, seq_tag))
		return seq_chars(v, str, one_byte, from, n, out);
	if (repr == MV(v, cons_tag))
		return cons_chars(v, str, from, n, out, depth);
	if (repr == MV(v, thin_tag))
		return HAVE(v, thin_actual) && v8_field(v, str, MV(v, thin_actual), &inner) &&
		       string_chars(v, inner, from, n, out, depth + 1);
	if (repr == MV(v, sliced_tag))
		return HAVE(v, sliced_parent) && v8_field(v, str, MV(v, sliced_parent), &inner) &&
		       v8_smi_field(v, str, MV(v, sliced_offset), &offset) &&
		       string_chars(v, inner, offset + from, n, out, depth + 1);
	if (repr == MV(v, external_tag))
		return external_chars(v, str, one_byte, from, n, out);
	return false;
}

/* STR's text (cut at MAX_NAME bytes) into OUT; false when it is no string
 * this reader can read. */
bool v8_string_read(struct v8 *v, uint64_t str, struct v8_text *out)
{
	int64_t len, type;
	out->len = 0;
	out->cut = false;
	out->buf[0] = '\0';
	if (!v8_is_string(v, str, &type) || !string_length(v, str, &len))
		return false;
	int64_t n = len < MAX_NAME ? len : MAX_NAME - 1;
	return string_chars(v, str, 0, n, out, 0);
}

/* ---- functions and scripts --------------------------------------------- */

/* The start of a ScopeInfo's variable part: its locals' names and infos,
 * then optional fields the metadata does not describe. */
static bool scope_info_tail(struct v8 *v, uint64_t si, int64_t *at)
{
	if (!HAVE(v, si_nlocals) || !HAVE(v, si_first_vars))
		return false;
	int64_t base = HAVE(v, sf_parent_fixed_array) ? MV(v, fa_data) : MV(v, tagged_size);
	int64_t nlocals;
	if (!v8_smi_field(v, si, base + MV(v, si_nlocals) * MV(v, tagged_size), &nlocals) || nlocals < 0 ||
	    nlocals > 1 << 16)
		return false;
	*at = base + (MV(v, si_first_vars) + 2 * nlocals) * MV(v, tagged_size);
	return true;
}

/* The function's name as a ScopeInfo keeps it: the first non-empty string
 * among the optional fields after its locals, as llnode finds it (the
 * metadata says which fields exist only through flags it does not
 * describe). */
static bool scope_info_name(struct v8 *v, uint64_t si, struct v8_text *out)
{
	int64_t at;
	if (!scope_info_tail(v, si, &at))
		return false;
	for (int i = 0; i < SCOPE_SCAN; i++, at += MV(v, tagged_size)) {
		uint64_t w;
		if (v8_field(v, si, at, &w) && v8_string_read(v, w, out) && out->len > 0)
			return true;
	}
	return false;
}

/* The function's start and end positions: the first pair of Smis
 * 0 <= start <= end among the same fields. */
static bool scope_info_position(struct v8 *v, uint64_t si, int64_t *start)
{
	int64_t at;
	if (!scope_info_tail(v, si, &at))
		return false;
	for (int i = 0; i < SCOPE_SCAN + 2; i++, at += MV(v, tagged_size)) {
		int64_t a, b;
		if (v8_smi_field(v, si, at, &a) && v8_smi_field(v, si, at + MV(v, tagged_size), &b) && a >= 0 &&
		    a <= b) {
			*start = a;
			return true;
		}
	}
	return false;
}

/* SFI's name: the string it holds, or its ScopeInfo's. */
static bool function_name(struct v8 *v, uint64_t sfi, struct v8_text *out)
{
	uint64_t w;
	out->len = 0;
	out->buf[0] = '\0';
	if (!v8_field(v, sfi, MV(v, sfi_name), &w))
		return false;
	if (v8_string_read(v, w, out))
		return true;
	return HAVE(v, t_scope_info) && has_type(v, w, MV(v, t_scope_info)) && scope_info_name(v, w, out);
}

/* The name of the constructor of OBJ's map (the root map's constructor,
 * through the back pointers of its transitions). */
bool v8_constructor_name(struct v8 *v, uint64_t obj, struct v8_text *out)
{
	uint64_t map, c;
	if (!v8_field(v, obj, MV(v, ho_map), &map))
		return false;
	for (int i = 0; i < MAX_MAP_CHAIN; i++) {
		if (!v8_field(v, map, MV(v, map_constructor), &c) || !v8_is_heap(v, c))
			return false;
		if (!has_type(v, c, MV(v, t_map)))
			break;
		map = c;
	}
	uint64_t sfi;
	return v8_field(v, c, MV(v, fn_shared), &sfi) && has_type(v, sfi, MV(v, t_sfi)) &&
	       function_name(v, sfi, out) && out->len > 0;
}

/* Line and column (1-based) of POSITION in SCRIPT, from its line ends, or
 * from its source when V8 has not computed them. */
static bool line_ends_lookup(struct v8 *v, uint64_t ends, int64_t position, int *line, int *column)
{
	int64_t n;
	if (!HAVE(v, t_fixed_array) || !has_type(v, ends, MV(v, t_fixed_array)) ||
	    !v8_smi_field(v, ends, MV(v, fa_length), &n) || n <= 0 || n > MAX_LINE_ENDS)
		return false;
	int64_t lo = 0, hi = n - 1, end;
	if (!v8_smi_field(v, ends, MV(v, fa_data) + hi * MV(v, tagged_size), &end) || position > end)
		return false;
	while (lo < hi) {       /* the first line whose end is at or after POSITION */
		int64_t mid = lo + (hi - lo) / 2;
		if (!v8_smi_field(v, ends, MV(v, fa_data) + mid * MV(v, tagged_size), &end))
			return false;
		if (end < position)
			lo = mid + 1;
		else
			hi = mid;
	}
	int64_t start = 0;
	if (lo > 0 && !v8_smi_field(v, ends, MV(v, fa_data) + (lo - 1) * MV(v, tagged_size), &start))
		return false;
	start = lo > 0 ? start + 1 : 0;
	*line = (int)lo + 1;
	*column = (int)(position - start) + 1;
	return true;
}

/* Where a flat one-byte string's characters are (a sequential string's
 * own, an external one's resource's): a script's source is one of them. */
static bool flat_one_byte(struct v8 *v, uint64_t str, uint64_t *chars)
{
	int64_t type;
	if (!v8_is_string(v, str, &type) || (type & MV(v, encoding_mask)) != MV(v, one_byte_tag))
		return false;
	int64_t repr = type & MV(v, repr_mask);
	if (repr == MV(v, seq_tag)) {
		*chars = str - (uint64_t)MV(v, heap_tag) + (uint64_t)MV(v, one_byte_chars);
		return true;
	}
	return repr == MV(v, external_tag) && external_data(v, str, chars);
}

/* Line and column of POSITION in a flat one-byte source at CHARS, read in
 * large pieces (a running process is stopped meanwhile). */
static bool flat_lookup(struct v8 *v, uint64_t chars, int64_t position, int *line, int *column)
{
	enum { PIECE = 64 << 10 };
	unsigned char *piece = malloc(PIECE);
	if (!piece) {
		v->nomem = true;
		return false;
	}
	int l = 1;
	int64_t line_start = 0;
	bool ok = true;
	for (int64_t at = 0; at < position && ok;) {
		size_t k = position - at < PIECE ? (size_t)(position - at) : PIECE;
		ok = dbg_read_module_bytes(v->s, chars + (uint64_t)at, piece, k);
		for (size_t i = 0; ok && i < k; i++)
			if (piece[i] == '\n') {
				l++;
				line_start = at + (int64_t)i + 1;
			}
		at += (int64_t)k;
	}
	free(piece);
	*line = l;
	*column = (int)(position - line_start) + 1;
	return ok;
}

static bool source_lookup(struct v8 *v, uint64_t source, int64_t position, int *line, int *column)
{
	int64_t len;
	uint64_t chars;
	if (!string_length(v, source, &len) || position > len || position > MAX_SOURCE)
		return false;
	if (flat_one_byte(v, source, &chars))
		return flat_lookup(v, chars, position, line, column);
	int l = 1;
	int64_t line_start = 0;
	struct v8_text chunk;
	for (int64_t at = 0; at < position;) {
		int64_t k = position - at < MAX_NAME - 1 ? position - at : MAX_NAME - 1;
		chunk.len = 0;
		chunk.cut = false;
		if (!string_chars(v, source, at, k, &chunk, 0))
			return false;
		for (size_t i = 0; i < chunk.len; i++)
			if (chunk.buf[i] == '\n') {
				l++;
				line_start = at + (int64_t)i + 1;
			}
		at += k;
	}
	*line = l;
	*column = (int)(position - line_start) + 1;
	return true;
}

static bool script_position(struct v8 *v, uint64_t script, int64_t position, int *line, int *column)
{
	uint64_t w;
	if (position < 0)
		return false;
	if (HAVE(v, script_line_ends) && v8_field(v, script, MV(v, script_line_ends), &w) &&
	    line_ends_lookup(v, w, position, line, column))
		return true;
	return HAVE(v, script_source) && v8_field(v, script, MV(v, script_source), &w) &&
	       source_lookup(v, w, position, line, column);
}

/* One number of a source position table: V8's zig-zag VLQ (7 bits a byte,
 * low first).  Entries are delta-encoded pairs of code offset and
 * position; a negative code offset marks a non-statement position. */
static uint64_t spt_uint(const unsigned char *b, size_t n, size_t *i, bool *ok);

static uint64_t spt_int(const unsigned char *b, size_t n, size_t *i, bool *ok)
{
	uint64_t decoded = spt_uint(b, n, i, ok);
	return (decoded >> 1) ^ (uint64_t)-(int64_t)(decoded & 1);
}

/* An unsigned VLQ, as V8's base::VLQDecodeUnsigned reads one. */
static uint64_t spt_uint(const unsigned char *b, size_t n, size_t *i, bool *ok)
{
	uint64_t decoded = 0;
	unsigned shift = 0;
	unsigned char c;
	do {
		if (*i >= n || shift > 63) {
			*ok = false;
			return 0;
		}
		c = b[(*i)++];
		decoded |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	} while (c & 0x80);
	return decoded;
}

/* The raw SourcePosition of code offset OFFSET in TABLE (a ByteArray):
 * the last entry at or before it.  BYTECODE: a bytecode array's table. */
static bool table_position(struct v8 *v, uint64_t table, int64_t offset, bool bytecode, int64_t *raw_out)
{
	int64_t n;
	if (!HAVE(v, t_byte_array) || !has_type(v, table, MV(v, t_byte_array)) ||
	    !v8_smi_field(v, table, MV(v, fa_length), &n) || n <= 0 || n > MAX_SPT)
		return false;
	unsigned char *b = malloc((size_t)n);
	if (!b) {
		v->nomem = true;
		return false;
	}
	bool ok = v8_rd(v, table - (uint64_t)MV(v, heap_tag) + (uint64_t)(MV(v, fa_length) + MV(v, tagged_size)),
		     b, (size_t)n);
	int64_t code = 0, raw = 0;
	bool first = true, found = false;
	for (size_t i = 0; ok && i < (size_t)n;) {
		int64_t d = (int64_t)spt_int(b, (size_t)n, &i, &ok);
		int64_t p = (int64_t)spt_int(b, (size_t)n, &i, &ok);
		if (!ok)
			break;
		/* A bytecode array's first entry may be its function entry, at
		 * code offset -1 (V8's kFunctionEntryBytecodeOffset): the others
		 * count from there. */
		code = bytecode && first && d == -1 ? -1 : code + (d >= 0 ? d : -(d + 1));
		first = false;
		if (code > offset)
			break;
		raw += p;
		*raw_out = raw;
		found = true;
	}
	free(b);
	if (!ok)
		v8_warn(v, "the source position table at %#" PRIx64 " is malformed", table);
	return ok && found;
}

/* SourcePosition: bit 0 external, bits 1..30 the script offset + 1, bits
 * 31..46 the inlining id + 1. */
static int64_t raw_script_offset(int64_t raw)
{
	return ((raw >> 1) & 0x3fffffff) - 1;
}

static int64_t raw_inlining_id(int64_t raw)
{
	return ((raw >> 31) & 0xffff) - 1;
}

/* The script position of bytecode offset OFFSET of BYTECODE.  Its table
 * is the third tagged field after the array's length, as V8's
 * BytecodeArray declares it (the metadata has no symbol for it): it is
 * believed only when it is a ByteArray. */
static bool bytecode_position(struct v8 *v, uint64_t bytecode, int64_t offset, int64_t *position)
{
	uint64_t table;
	int64_t raw;
	if (!v8_field(v, bytecode, MV(v, fa_length) + 3 * MV(v, tagged_size), &table) ||
	    !table_position(v, table, offset, true, &raw) || raw_script_offset(raw) < 0)
		return false;
	*position = raw_script_offset(raw);
	return true;
}

/* ---- frames ------------------------------------------------------------ */

/* The frame at FP as V8 would classify it. */
static bool frame_classify(struct v8 *v, uint64_t fp, struct v8_frame *f)
{
	uint64_t marker, fn;
	f->fp = fp;
	f->js = false;
	f->type = -1;
	f->function = 0;
	f->damaged = false;
	if (!v8_rd_word(v, fp + (uint64_t)MV(v, fp_marker), &marker))
		return false;
	unsigned tag_bits = (unsigned)__builtin_popcountll((uint64_t)MV(v, smi_tag_mask));
	if (is_smi(v, marker)) {
		/* A type marker: the type shifted past the Smi tag (V8's TypeToMarker). */
		f->type = (int64_t)(marker >> tag_bits);
		return f->type < 256;
	}
	uint64_t sfi;
	if (!v8_rd_word(v, fp + (uint64_t)MV(v, fp_function), &fn) || !v8_field(v, fn, MV(v, fn_shared), &sfi) ||
	    !has_type(v, sfi, MV(v, t_sfi))) {
		f->damaged = true;   /* a context, but no function with its shared info */
		f->function = fn;
		return true;
	}
	f->js = true;
	f->function = fn;
	return true;
}

/* Walk V8's frames from FP (running PC) of thread TID within the stack
 * [LO, HI) until an entry frame, the end of the chain or MAX frames;
 * appends to *OUT.  A chain that breaks before its entry frame, and a
 * frame of no known kind, are warnings. */
static size_t chain_walk(struct v8 *v, int32_t tid, uint64_t fp, uint64_t pc, uint64_t lo, uint64_t hi,
			 struct v8_frame *out, size_t max)
{
	size_t n = 0;
	uint64_t next = fp;
	while (n < max) {
		if (fp < lo || fp + 16 > hi || (fp & 7) != 0) {
			v8_warn(v, "thread %d: V8's frame chain leaves the stack at %#" PRIx64, tid, fp);
			break;
		}
		struct v8_frame *f = &out[n];
		if (!frame_classify(v, fp, f)) {
			v8_warn(v, "thread %d: the V8 frame at %#" PRIx64 " is of no kind V8 has: the chain "
				"stops there", tid, fp);
			break;
		}
		if (f->damaged)
			v8_warn(v, "thread %d: the V8 frame at %#" PRIx64 " holds no JavaScript function "
				"(%#" PRIx64 "): left out", tid, fp, f->function);
		f->pc = pc;
		n++;
		if (!f->js && (f->type == MV(v, ft_entry) || f->type == MV(v, ft_construct_entry)))
			break;
		if (!v8_rd_word(v, fp, &next) || !v8_rd_word(v, fp + 8, &pc) || next <= fp) {
			v8_warn(v, "thread %d: V8's frame chain breaks at %#" PRIx64 " (its caller's frame "
				"pointer %#" PRIx64 ")", tid, fp, next);
			break;
		}
		fp = next;
	}
	return n;
}

/* "Type." for a method call: the receiver's constructor's name, when the
 * receiver is an object (a plain call's is undefined). */
static void receiver_type(struct v8 *v, uint64_t fp, struct v8_text *out)
{
	uint64_t receiver;
	out->len = 0;
	out->buf[0] = '\0';
	if (!v8_rd_word(v, fp + (uint64_t)MV(v, fp_args), &receiver) || !v8_is_heap(v, receiver) ||
	    !v8_constructor_name(v, receiver, out))
		out->len = 0;
}

/* The function's start, from its ScopeInfo: where a frame whose code's
 * positions cannot be read is placed. */
static bool function_start(struct v8 *v, uint64_t sfi, int64_t *position)
{
	uint64_t si;
	return v8_field(v, sfi, MV(v, sfi_name), &si) && HAVE(v, t_scope_info) &&
	       has_type(v, si, MV(v, t_scope_info)) && scope_info_position(v, si, position);
}

/* An interpreted frame's position: its bytecode offset through its
 * bytecode's table.  A baseline frame holds its bytecode too, but no
 * offset (a Smi) in the slot: false. */
static bool interpreted_position(struct v8 *v, const struct v8_frame *f, int64_t *position)
{
	uint64_t bytecode, raw;
	int64_t length;
	if (!HAVE(v, t_bytecode) || !HAVE(v, bytecode_data) ||
	    !v8_rd_word(v, f->fp + (uint64_t)MV(v, fp_bytecode_array), &bytecode) ||
	    !has_type(v, bytecode, MV(v, t_bytecode)) ||
	    !v8_rd_word(v, f->fp + (uint64_t)MV(v, fp_bytecode_offset), &raw) || !is_smi(v, raw))
		return false;
	int64_t offset = smi_value(v, raw) - (MV(v, bytecode_data) - MV(v, heap_tag));
	return offset >= 0 && v8_smi_field(v, bytecode, MV(v, fa_length), &length) && offset < length &&
	       bytecode_position(v, bytecode, offset, position);
}

static bool is_istream_map(struct v8 *v, uint64_t w)
{
	if (v->istream_map)
		return w == v->istream_map;
	int64_t t;
	if (!v8_is_heap(v, w) || !has_type(v, w, MV(v, t_map)) ||
	    !v8_rd(v, w - (uint64_t)MV(v, heap_tag) + (uint64_t)MV(v, map_type), &t, 2))
		return false;
	if ((t & 0xffff) != MV(v, t_istream))
		return false;
	v->istream_map = w;
	return true;
}

/* The Code object whose instructions hold PC, and PC's offset in them:
 * the InstructionStream found by its map below PC, whose first field
 * after its map is its Code. */
static bool code_at(struct v8 *v, uint64_t pc, uint64_t *code, int64_t *offset)
{
	if (!HAVE(v, t_istream) || !HAVE(v, t_code) || !HAVE(v, is_start))
		return false;
	uint64_t block[512];
	uint64_t at = pc & ~(uint64_t)7;
	for (uint64_t scanned = 0; scanned < MAX_CODE_SCAN; scanned += sizeof(block)) {
		uint64_t lo = at - sizeof(block) + 8;
		if (!v8_rd(v, lo, block, sizeof(block)))
			return false;
		for (size_t i = sizeof(block) / 8; i-- > 0;) {
			uint64_t stream = lo + 8 * i + (uint64_t)MV(v, heap_tag);
			uint64_t start = stream - (uint64_t)MV(v, heap_tag) + (uint64_t)MV(v, is_start);
			if (!is_istream_map(v, block[i]) || start > pc)
				continue;
			*offset = (int64_t)(pc - start);
			return v8_field(v, stream, MV(v, tagged_size), code) && has_type(v, *code, MV(v, t_code));
		}
		at = lo - 8;
	}
	return false;
}

/* The functions of an optimized frame running CODE at OFFSET: through its
 * code's source positions (at OFFSET - 1, the call in it), each inlined
 * function's from the deoptimization data DEOPT (its inlining positions, a
 * PodArray of 16-byte InliningPositions, and its literals, the inlined
 * functions' infos), out to the frame's own function SFI. */
static size_t optimized_places(struct v8 *v, uint64_t code, int64_t offset, uint64_t deopt,
			       uint64_t sfi, struct v8_place *out, size_t max)
{
	uint64_t table, inlining = 0, literals = 0;
	int64_t raw;
	if (!HAVE(v, code_spt) || !v8_field(v, code, MV(v, code_spt), &table) ||
	    !table_position(v, table, offset - 1, false, &raw))
		return 0;
	if (HAVE(v, deopt_inlining) && HAVE(v, deopt_literals)) {
		v8_field(v, deopt, MV(v, fa_data) + MV(v, deopt_inlining) * MV(v, tagged_size), &inlining);
		v8_field(v, deopt, MV(v, fa_data) + MV(v, deopt_literals) * MV(v, tagged_size), &literals);
	}
	size_t n = 0;
	int64_t count = 0;
	if (!inlining || !v8_smi_field(v, inlining, MV(v, fa_length), &count))
		count = 0;
	count /= 16;
	while (n + 1 < max) {
		int64_t id = raw_inlining_id(raw);
		if (id < 0)
			break;
		uint64_t lit;
		struct { int64_t position; int32_t function_id; } pos;
		if (id >= count ||
		    !v8_rd(v, inlining - (uint64_t)MV(v, heap_tag) + (uint64_t)(MV(v, fa_length) + MV(v, tagged_size)) +
			       (uint64_t)id * 16, &pos, 12) ||
		    pos.function_id < 0 ||
		    !v8_field(v, literals, MV(v, fa_data) + (int64_t)pos.function_id * MV(v, tagged_size), &lit))
			return 0;
		lit &= ~(uint64_t)2;   /* a weak reference's tag */
		if (!has_type(v, lit, MV(v, t_sfi)))
			return 0;
		out[n++] = (struct v8_place){.sfi = lit, .position = raw_script_offset(raw), .exact = true,
					     .inlined = true};
		raw = pos.position;
	}
	out[n++] = (struct v8_place){.sfi = sfi, .position = raw_script_offset(raw), .exact = true};
	return n;
}

/* V8's table of bytecode sizes (Bytecodes::kBytecodeSizes, a byte for
 * each operand scale and bytecode), from the binary, once. */
static bool bytecode_sizes_load(struct v8 *v)
{
	if (v->sizes_tried)
		return v->bytecode_sizes != NULL;
	v->sizes_tried = true;
	uint64_t addr, size;
	if (!dbg_find_symbol(v->s, "_ZN2v88internal11interpreter9Bytecodes14kBytecodeSizesE", &addr, &size) ||
	    size == 0 || size % 3 != 0 || size / 3 > 256)
		return false;
	uint8_t *t = malloc(size);
	if (!t) {
		v->nomem = true;
		return false;
	}
	if (!dbg_read_module_bytes(v->s, addr, t, size)) {
		free(t);
		return false;
	}
	v->bytecode_sizes = t;
	v->nbytecodes = size / 3;
	return true;
}

/* The size of the bytecode at AT of CODE[0, N), with its operand-scale
 * prefix (V8's first four bytecodes: Wide, ExtraWide and their debug
 * breaks); 0 when it cannot be told. */
static size_t bytecode_size(const struct v8 *v, const unsigned char *code, size_t n, size_t at)
{
	size_t scale = 0, prefix = 0;
	if (at < n && code[at] < 4) {
		scale = code[at] % 2 == 0 ? 1 : 2;   /* Wide: 2-byte operands, ExtraWide: 4 */
		prefix = 1;
	}
	if (at + prefix >= n || code[at + prefix] >= v->nbytecodes)
		return 0;
	size_t size = v->bytecode_sizes[scale * v->nbytecodes + code[at + prefix]];
	return size > 0 ? prefix + size : 0;
}

/* The bytecode offset baseline CODE is at OFFSET (of its instructions), as
 * V8's BytecodeOffsetIterator finds it: its table holds the length of each
 * bytecode's machine code (unsigned VLQs), the first for the prologue (at
 * bytecode offset -1), the others for the bytecodes of BYTECODE in turn. */
static bool baseline_offset(struct v8 *v, uint64_t code, uint64_t bytecode, int64_t offset, int64_t *out)
{
	uint64_t table;
	int64_t n, len;
	if (!HAVE(v, code_offsets) || !HAVE(v, bytecode_data) || !bytecode_sizes_load(v) ||
	    !v8_field(v, code, MV(v, code_offsets), &table) || !has_type(v, table, MV(v, t_byte_array)) ||
	    !v8_smi_field(v, table, MV(v, fa_length), &n) || n <= 0 || n > MAX_SPT ||
	    !v8_smi_field(v, bytecode, MV(v, fa_length), &len) || len <= 0 || len > MAX_SPT)
		return false;
	unsigned char *b = malloc((size_t)n), *bc = malloc((size_t)len);
	bool ok = b && bc &&
		  v8_rd(v, table - (uint64_t)MV(v, heap_tag) + (uint64_t)(MV(v, fa_length) + MV(v, tagged_size)),
		     b, (size_t)n) &&
		  v8_rd(v, bytecode - (uint64_t)MV(v, heap_tag) + (uint64_t)MV(v, bytecode_data), bc, (size_t)len);
	if (!b || !bc)
		v->nomem = true;
	size_t i = 0, cursor = 0;
	int64_t current = -1, end = ok ? (int64_t)spt_uint(b, (size_t)n, &i, &ok) : 0;
	while (ok && end < offset) {
		if (i >= (size_t)n || cursor >= (size_t)len) {
			ok = false;
			break;
		}
		size_t size = bytecode_size(v, bc, (size_t)len, cursor);
		end += (int64_t)spt_uint(b, (size_t)n, &i, &ok);
		current = (int64_t)cursor;
		cursor += size;
		ok = ok && size > 0;
	}
	free(b);
	free(bc);
	if (ok)
		*out = current;
	return ok;
}

/* The functions JIT code at PC (outside every mapped file) runs for a
 * frame of SFI: an optimized code's, through its deoptimization data (a
 * FixedArray); a baseline code keeps its bytecode in that slot instead,
 * and its own table maps pcs to bytecode offsets: 0 for it, and for code
 * that cannot be found. */
static size_t jit_places(struct v8 *v, uint64_t pc, uint64_t sfi, struct v8_place *out, size_t max,
			 bool *baseline)
{
	uint64_t code, deopt;
	int64_t offset;
	*baseline = false;
	if (core_find_file(v->core, pc) || !HAVE(v, code_deopt) || !code_at(v, pc, &code, &offset) ||
	    !v8_field(v, code, MV(v, code_deopt), &deopt))
		return 0;
	if (HAVE(v, t_bytecode) && has_type(v, deopt, MV(v, t_bytecode))) {
		/* Baseline code: its bytecode in that slot, and a table from its
		 * pcs to bytecode offsets. */
		int64_t bytecode_offset = -1;
		*baseline = true;
		if (!baseline_offset(v, code, deopt, offset, &bytecode_offset) ||
		    !bytecode_position(v, deopt, bytecode_offset, &out[0].position))
			return 0;
		out[0] = (struct v8_place){.sfi = sfi, .position = out[0].position, .exact = true};
		return 1;
	}
	if (!HAVE(v, t_fixed_array) || !has_type(v, deopt, MV(v, t_fixed_array)))
		return 0;
	return optimized_places(v, code, offset, deopt, sfi, out, max);
}

/* The functions JS frame F runs, innermost first: one, or an optimized
 * frame's inlined functions and its own.  Where the code's position
 * cannot be read, the function's start. */
static size_t frame_places(struct v8 *v, const struct v8_frame *f, struct v8_place *out, size_t max)
{
	uint64_t sfi;
	bool baseline;
	if (!v8_field(v, f->function, MV(v, fn_shared), &sfi))
		return 0;
	size_t n = jit_places(v, f->pc, sfi, out, max, &baseline);
	if (n)
		return n;
	out[0] = (struct v8_place){.sfi = sfi, .position = -1};
	if (!baseline && interpreted_position(v, f, &out[0].position)) {
		out[0].exact = true;
		return 1;
	}
	if (!function_start(v, sfi, &out[0].position))
		out[0].position = -1;
	return 1;
}

char *v8_dup_text(struct v8 *v, const char *s)
{
	char *d = strdup(s);
	if (!d)
		v->nomem = true;
	return d;
}

/* The script frame of place P of JS frame F, named as V8's stack traces
 * name it: "Type.name" (the receiver's type, for the frame's own
 * function), "name" or "(anonymous)", the script's path, line, column. */
static void script_frame(struct v8 *v, const struct v8_frame *f, const struct v8_place *p,
			 struct an_frame *out)
{
	memset(out, 0, sizeof(*out));
	uint64_t script, name;
	struct v8_text fname, type, path;
	function_name(v, p->sfi, &fname);
	type.len = 0;
	type.buf[0] = '\0';
	if (!p->inlined && !p->construct)
		receiver_type(v, f->fp, &type);
	char full[2 * MAX_NAME + 16];
	/* V8 leaves out the receiver's type when the name already has one: an
	 * inferred name ("Module._load", "Module._extensions..js"). */
	if (fname.len && strchr(fname.buf, '.'))
		type.len = 0;
	if (p->construct)
		snprintf(full, sizeof(full), "new %s", fname.len ? fname.buf : "<anonymous>");
	else if (type.len)
		snprintf(full, sizeof(full), "%s.%s", type.buf, fname.len ? fname.buf : "<anonymous>");
	else
		snprintf(full, sizeof(full), "%s", fname.len ? fname.buf : "(anonymous)");
	path.len = 0;
	path.buf[0] = '\0';
	int line = 0, column = 0;
	if (v8_field(v, p->sfi, MV(v, sfi_script), &script) && has_type(v, script, MV(v, t_script))) {
		if (v8_field(v, script, MV(v, script_name), &name))
			v8_string_read(v, name, &path);
		if (!script_position(v, script, p->position, &line, &column))
			line = column = 0;
	}
	char detail[MAX_NAME + 64];
	if (line > 0)
		snprintf(detail, sizeof(detail), "%s:%d:%d%s%s", path.len ? path.buf : "<anonymous>", line,
			 column, p->exact ? "" : " (function start)", p->inlined ? " (inlined)" : "");
	else
		snprintf(detail, sizeof(detail), "%s", path.len ? path.buf : "<anonymous>");
	out->kind = AN_FRAME_SCRIPT;
	out->function = v8_dup_text(v, full);
	out->file = path.len ? v8_dup_text(v, path.buf) : NULL;
	out->line = line;
	out->runtime = v8_dup_text(v, "node");
	out->detail = v8_dup_text(v, detail);
}

/* ---- splice ------------------------------------------------------------ */

/* Whether native frame F runs V8's code: a builtin of the embedded blob
 * (Builtins_*) or code in an anonymous executable mapping (JIT code). */
static bool in_v8_code(struct v8 *v, const struct an_frame *f)
{
	if (AN_FRAME_IS_RUNTIME(f) || f->kind != AN_FRAME_NATIVE || f->inlined)
		return false;
	if (f->function)
		return strncmp(f->function, "Builtins_", 9) == 0;
	/* A live process's segments are not all listed: any readable pc
	 * outside the mapped files. */
	return !f->module && !core_find_file(v->core, f->pc) &&
	       (core_is_executable(v->core, f->pc) || core_is_readable(v->core, f->pc, 1));
}

/* The frame pointer of native frame F: its recovered frame-pointer
 * register, else the CFA less the saved fp and return address. */
static bool native_fp(struct v8 *v, const struct an_frame *f, uint64_t *fp)
{
	unsigned reg = strcmp(v->an->arch ? v->an->arch : "x86_64", "aarch64") == 0 ? 29 : 6;
	if (an_frame_reg(f, reg, fp))
		return true;
	if (!f->cfa)
		return false;
	*fp = f->cfa - 16;
	return true;
}

struct v8_walk {
	struct v8_frame *frames;
	size_t n;
	bool *shown;
};

/* A thread's new frame list, grown as JS frames are made. */
struct v8_out {
	struct an_frame *v;
	size_t n, cap;
};

static struct an_frame *out_slot(struct v8 *v, struct v8_out *o)
{
	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 64;
		struct an_frame *grown = realloc(o->v, cap * sizeof(*grown));
		if (!grown) {
			v->nomem = true;
			return NULL;
		}
		o->v = grown;
		o->cap = cap;
	}
	return &o->v[o->n++];
}

static bool walked(const struct v8_walk *w, uint64_t fp, size_t *at)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->frames[i].fp == fp) {
			*at = i;
			return true;
		}
	return false;
}

/* Append to O the script frames of W's JS frames up to AT not yet shown;
 * returns how many. */
static size_t emit_upto(struct v8 *v, struct v8_walk *w, size_t at, struct v8_out *o)
{
	size_t k = 0;
	struct v8_place places[MAX_INLINED];
	for (size_t i = 0; i <= at && i < w->n && !v->nomem; i++) {
		if (w->shown[i] || !w->frames[i].js)
			continue;
		w->shown[i] = true;
		size_t np = frame_places(v, &w->frames[i], places, MAX_INLINED);
		/* V8's construct stub calls a constructor: its frame is the caller. */
		if (np && i + 1 < w->n && !w->frames[i + 1].js && HAVE(v, ft_construct) &&
		    w->frames[i + 1].type == MV(v, ft_construct))
			places[np - 1].construct = true;
		for (size_t j = 0; j < np; j++) {
			struct an_frame *f = out_slot(v, o);
			if (!f)
				return k;
			script_frame(v, &w->frames[i], &places[j], f);
			k++;
		}
	}
	return k;
}

/* Whether native frame F, with no name, of a mapped file, may run V8's
 * code: a builtin of a library stripped of the builtins' names (Debian's
 * libnode), whose frame pointer then holds a JavaScript frame, or an exit
 * frame (the C++ runtime's caller) that returns to JIT code (executable
 * memory of no file). */
static bool unnamed_v8_frame(struct v8 *v, const struct an_frame *f, uint64_t fp)
{
	struct v8_frame probe;
	uint64_t ra;
	if (AN_FRAME_IS_RUNTIME(f) || f->kind != AN_FRAME_NATIVE || f->inlined || f->function || !f->module ||
	    !frame_classify(v, fp, &probe))
		return false;
	return probe.js || (HAVE(v, ft_exit) && probe.type == MV(v, ft_exit) && v8_rd_word(v, fp + 8, &ra) &&
			    !core_find_file(v->core, ra) && core_is_executable(v->core, ra));
}

/* Walk thread T's V8 frames from each native frame in V8's code. */
static void thread_walk(struct v8 *v, struct an_thread *t, struct v8_walk *w)
{
	const struct core_segment *stack = core_find_segment(v->core, t->sp);
	if (!stack)
		return;
	uint64_t lo = t->sp, hi = stack->vaddr + stack->memsz;
	size_t segments = 0;
	for (size_t i = 0; i < t->nframes && w->n < MAX_V8_FRAMES && segments < MAX_SEGMENTS; i++) {
		const struct an_frame *f = &t->frames[i];
		uint64_t fp;
		size_t at;
		/* A frame without a name (JIT code, a stripped builtin) starts
		 * a walk only from a frame pointer on the stack. */
		if (!native_fp(v, f, &fp) || !(in_v8_code(v, f) || unnamed_v8_frame(v, f, fp)) ||
		    (!f->function && (fp < lo || fp + 16 > hi)) || walked(w, fp, &at))
			continue;
		w->n += chain_walk(v, t->tid, fp, f->pc, lo, hi, w->frames + w->n, MAX_V8_FRAMES - w->n);
		segments++;
	}
}

/* Splice W's JS frames into T: each after the first native frame whose
 * frame pointer is the JS frame's, with the JS frames before it in its
 * walk that no native frame had (JIT code the unwinder passed over). */
static void thread_splice(struct v8 *v, struct an_thread *t, struct v8_walk *w)
{
	struct v8_out o = {0};
	size_t made = 0;
	for (size_t i = 0; i < t->nframes && !v->nomem; i++) {
		struct an_frame *slot = out_slot(v, &o);
		if (!slot)
			break;
		*slot = t->frames[i];
		uint64_t fp;
		size_t at;
		const struct an_frame *f = &t->frames[i];
		if (!AN_FRAME_IS_RUNTIME(f) && !f->inlined && native_fp(v, f, &fp) && walked(w, fp, &at))
			made += emit_upto(v, w, at, &o);
	}
	size_t left = v->nomem ? 0 : emit_upto(v, w, w->n ? w->n - 1 : 0, &o);
	if (v->nomem) {
		/* T keeps its frames; the script frames made are freed. */
		for (size_t i = 0; i < o.n; i++)
			if (o.v[i].kind == AN_FRAME_SCRIPT && o.v[i].runtime && !strcmp(o.v[i].runtime, "node"))
				an_frame_deinit(&o.v[i]);
		free(o.v);
		return;
	}
	if (left)
		v8_warn(v, "thread %d: %zu JavaScript frames after its last native frame", t->tid, left);
	if (made + left == 0) {
		free(o.v);
		return;
	}
	free(t->frames);
	t->frames = o.v;
	t->nframes = o.n;
}

static void threads_splice(struct v8 *v)
{
	struct v8_walk w = {
		.frames = calloc(MAX_V8_FRAMES, sizeof(*w.frames)),
		.shown = calloc(MAX_V8_FRAMES, sizeof(*w.shown)),
	};
	if (!w.frames || !w.shown) {
		v->nomem = true;
		goto out;
	}
	for (size_t i = 0; i < v->an->nthreads && !v->nomem; i++) {
		struct an_thread *t = &v->an->threads[i];
		if (t->recursion)
			continue;   /* its frame indexes are the recursion's */
		w.n = 0;
		memset(w.shown, 0, MAX_V8_FRAMES * sizeof(*w.shown));
		thread_walk(v, t, &w);
		thread_splice(v, t, &w);
	}
out:
	free(w.frames);
	free(w.shown);
}

bool an_v8_analyze(struct dbg_session *s, struct analysis *an)
{
	struct v8 v = {.s = s, .core = dbg_session_core(s), .an = an};
	if (!meta_load(&v))
		return true;
	threads_splice(&v);
	free(v.bytecode_sizes);
	if (!v.nomem && an->nthreads && !an->live)
		v8_crash_read(&v, &an->threads[an_crashing_thread(an)]);
	return !v.nomem;
}
