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

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../corefile/core.h"

enum {
	MAX_V8_FRAMES = 4096,       /* frames of one walk */
	MAX_SEGMENTS = 256,         /* walks of one thread */
	MAX_NAME = 1024,            /* bytes of a name or message kept */
	MAX_STRING_DEPTH = 32,      /* cons and sliced strings nested */
	MAX_LINE_ENDS = 1 << 22,
	MAX_SOURCE = 64 << 20,      /* bytes of a source searched for lines */
	MAX_SPT = 1 << 20,          /* bytes of a source position table */
	MAX_DESCRIPTORS = 1020,
	MAX_MAP_CHAIN = 64,         /* back pointers from a map to its root */
	MAX_CODE_SCAN = 1 << 20,    /* bytes before a pc searched for its code */
	MAX_INLINED = 32,           /* functions inlined into one frame */
	SCOPE_SCAN = 6,             /* slots after a ScopeInfo's locals */
	EXCEPTION_SCAN = 64 << 10,  /* bytes of stack searched for the exception */
};

/* The metadata used: X(field, symbol, required): V8's without their
 * "v8dbg_" prefix, node's (nodedbg_) whole. */
#define V8_META(X) \
	X(heap_tag, "HeapObjectTag", 1) X(heap_tag_mask, "HeapObjectTagMask", 1) \
	X(smi_tag, "SmiTag", 1) X(smi_tag_mask, "SmiTagMask", 1) X(smi_shift, "SmiShiftSize", 1) \
	X(tagged_size, "TaggedSize", 1) \
	X(is_not_string_mask, "IsNotStringMask", 1) X(encoding_mask, "StringEncodingMask", 1) \
	X(one_byte_tag, "OneByteStringTag", 1) X(repr_mask, "StringRepresentationMask", 1) \
	X(seq_tag, "SeqStringTag", 1) X(cons_tag, "ConsStringTag", 1) \
	X(sliced_tag, "SlicedStringTag", 1) X(thin_tag, "ThinStringTag", 1) \
	X(external_tag, "ExternalStringTag", 0) \
	X(external_resource, "class_ExternalString__resource__Object", 0) \
	X(node_resource_data, "nodedbg_offset_ExternalString__data__uintptr_t", 0) \
	X(fp_marker, "off_fp_context_or_frame_type", 1) X(fp_function, "off_fp_function", 1) \
	X(fp_bytecode_array, "off_fp_bytecode_array", 1) \
	X(fp_bytecode_offset, "off_fp_bytecode_offset", 1) X(fp_args, "off_fp_args", 1) \
	X(ft_entry, "frametype_EntryFrame", 1) X(ft_construct_entry, "frametype_ConstructEntryFrame", 1) \
	X(ft_construct, "frametype_ConstructFrame", 0) X(ft_exit, "frametype_ExitFrame", 0) \
	X(ho_map, "class_HeapObject__map__Map", 1) X(map_type, "class_Map__instance_type__uint16_t", 1) \
	X(map_constructor, "class_Map__constructor_or_back_pointer__Object", 1) \
	X(map_descriptors, "class_Map__instance_descriptors__DescriptorArray", 0) \
	X(map_bit_field3, "class_Map__bit_field3__int", 0) \
	X(map_size_words, "class_Map__instance_size_in_words__char", 0) \
	X(map_inobject_start, "class_Map__inobject_properties_start_or_constructor_function_index__char", 0) \
	X(own_desc_mask, "bit_field3_number_of_own_descriptors_mask", 0) \
	X(own_desc_shift, "bit_field3_number_of_own_descriptors_shift", 0) \
	X(dictionary_shift, "bit_field3_is_dictionary_map_shift", 0) \
	X(desc_header, "class_DescriptorArray__header_size__uintptr_t", 0) \
	X(desc_key, "prop_desc_key", 0) X(desc_details, "prop_desc_details", 0) \
	X(desc_value, "prop_desc_value", 0) X(desc_size, "prop_desc_size", 0) \
	X(loc_mask, "prop_location_mask", 0) X(loc_shift, "prop_location_shift", 0) \
	X(loc_field, "prop_location_Field", 0) X(loc_descriptor, "prop_location_Descriptor", 0) \
	X(index_mask, "prop_index_mask", 0) X(index_shift, "prop_index_shift", 0) \
	X(receiver_properties, "class_JSReceiver__raw_properties_or_hash__Object", 0) \
	X(fn_shared, "class_JSFunction__shared__SharedFunctionInfo", 1) \
	X(sfi_name, "class_SharedFunctionInfo__name_or_scope_info__Object", 1) \
	X(sfi_script, "class_SharedFunctionInfo__script_or_debug_info__HeapObject", 1) \
	X(script_name, "class_Script__name__Object", 1) X(script_source, "class_Script__source__Object", 0) \
	X(script_line_ends, "class_Script__line_ends__Object", 0) \
	X(fa_length, "class_FixedArrayBase__length__SMI", 1) X(fa_data, "class_FixedArray__data__uintptr_t", 1) \
	X(str_length, "class_String__length__int32_t", 1) \
	X(one_byte_chars, "class_SeqOneByteString__chars__char", 1) \
	X(two_byte_chars, "class_SeqTwoByteString__chars__char", 0) \
	X(cons_first, "class_ConsString__first__String", 0) X(cons_second, "class_ConsString__second__String", 0) \
	X(thin_actual, "class_ThinString__actual__String", 0) \
	X(sliced_parent, "class_SlicedString__parent__String", 0) \
	X(sliced_offset, "class_SlicedString__offset__SMI", 0) \
	X(bytecode_data, "class_BytecodeArray__data__uintptr_t", 0) \
	X(si_nlocals, "scopeinfo_idx_ncontextlocals", 0) X(si_first_vars, "scopeinfo_idx_first_vars", 0) \
	X(t_js_error, "type_JSError__JS_ERROR_TYPE", 0) X(t_js_object, "type_JSObject__JS_OBJECT_TYPE", 0) \
	X(t_scope_info, "type_ScopeInfo__SCOPE_INFO_TYPE", 0) \
	X(t_sfi, "type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE", 1) \
	X(t_script, "type_Script__SCRIPT_TYPE", 1) X(t_bytecode, "type_BytecodeArray__BYTECODE_ARRAY_TYPE", 0) \
	X(t_fixed_array, "type_FixedArray__FIXED_ARRAY_TYPE", 0) X(t_byte_array, "type_ByteArray__BYTE_ARRAY_TYPE", 0) \
	X(t_map, "type_Map__MAP_TYPE", 1) \
	X(t_code, "type_Code__CODE_TYPE", 0) \
	X(t_istream, "type_InstructionStream__INSTRUCTION_STREAM_TYPE", 0) \
	X(is_start, "class_InstructionStream__instruction_start__uintptr_t", 0) \
	X(code_spt, "class_Code__source_position_table__ByteArray", 0) \
	X(code_offsets, "class_Code__bytecode_offset_table__ByteArray", 0) \
	X(code_deopt, "class_Code__deoptimization_data__FixedArray", 0) \
	X(deopt_inlining, "DeoptimizationDataInliningPositionsIndex", 0) \
	X(deopt_literals, "DeoptimizationDataLiteralArrayIndex", 0) \
	X(sf_parent_fixed_array, "parent_ScopeInfo__FixedArray", 0)

/* The metadata's entries, by name: M_heap_tag, ... */
enum v8_meta_index {
#define V8_INDEX(field, name, required) M_##field,
	V8_META(V8_INDEX)
#undef V8_INDEX
	NMETA
};

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

struct v8 {
	struct dbg_session *s;
	struct core *core;
	struct analysis *an;
	int64_t m[NMETA];           /* the metadata's values, by enum v8_meta_index */
	bool have[NMETA];
	size_t nfound;              /* v8dbg_ symbols seen */
	bool nomem;
	unsigned warned;            /* warnings given, bounded */
	uint64_t istream_map;       /* the map of InstructionStreams, once seen */
	uint8_t *bytecode_sizes;    /* V8's own table of bytecode sizes, by operand
				       scale (1, 2, 4) and bytecode; NULL: not read */
	size_t nbytecodes;
	bool sizes_tried;
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

static void v8_warn(struct v8 *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void v8_warn(struct v8 *v, const char *fmt, ...)
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
#define MV(v, field) ((v)->m[M_##field])
#define HAVE(v, field) ((v)->have[M_##field])

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

static bool rd(struct v8 *v, uint64_t addr, void *buf, size_t n)
{
	return addr && core_read_bytes(v->core, addr, buf, n);
}

static bool rd_word(struct v8 *v, uint64_t addr, uint64_t *w)
{
	return rd(v, addr, w, sizeof(*w));
}

static bool is_heap(const struct v8 *v, uint64_t w)
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
static bool field(struct v8 *v, uint64_t obj, int64_t offset, uint64_t *w)
{
	return rd_word(v, obj - (uint64_t)MV(v, heap_tag) + (uint64_t)offset, w);
}

static bool smi_field(struct v8 *v, uint64_t obj, int64_t offset, int64_t *value)
{
	uint64_t w;
	if (!field(v, obj, offset, &w) || !is_smi(v, w))
		return false;
	*value = smi_value(v, w);
	return true;
}

/* OBJ's instance type, through its map (a map's map has MAP_TYPE). */
static bool instance_type(struct v8 *v, uint64_t obj, int64_t *type)
{
	uint64_t map;
	uint16_t t;
	if (!is_heap(v, obj) || !field(v, obj, MV(v, ho_map), &map) || !is_heap(v, map) ||
	    !rd(v, map - (uint64_t)MV(v, heap_tag) + (uint64_t)MV(v, map_type), &t, sizeof(t)))
		return false;
	*type = t;
	return true;
}

static bool has_type(struct v8 *v, uint64_t obj, int64_t want)
{
	int64_t t;
	return instance_type(v, obj, &t) && t == want;
}

/* ---- strings ----------------------------------------------------------- */

struct v8_text {
	char buf[MAX_NAME];
	size_t len;
	bool cut;
};

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
		if (modules ? !dbg_read_module_bytes(v->s, addr, raw, k * width) : !rd(v, addr, raw, k * width))
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
	if (!rd(v, str - (uint64_t)MV(v, heap_tag) + (uint64_t)MV(v, str_length), &n, sizeof(n)) || n < 0)
		return false;
	*len = n;
	return true;
}

static bool is_string(struct v8 *v, uint64_t obj, int64_t *type)
{
	return instance_type(v, obj, type) && (*type & MV(v, is_not_string_mask)) == 0;
}

static bool cons_chars(struct v8 *v, uint64_t str, int64_t from, int64_t n, struct v8_text *out,
		       unsigned depth)
{
	uint64_t first, second;
	int64_t first_len;
	if (!HAVE(v, cons_first) || !field(v, str, MV(v, cons_first), &first) ||
	    !field(v, str, MV(v, cons_second), &second) || !string_length(v, first, &first_len))
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
	    !rd_word(v, str - (uint64_t)MV(v, heap_tag) + (uint64_t)MV(v, external_resource), &resource) ||
	    !rd(v, resource, member, sizeof(member)))
		return false;
	if (rd_word(v, str - (uint64_t)MV(v, heap_tag) + (uint64_t)MV(v, external_resource) + 8, &cached) &&
	    cached)
		for (size_t i = 1; i < 4; i++)
			if (member[i] == cached) {
				*data = cached;
				return true;
			}
	return HAVE(v, node_resource_data) && MV(v, node_resource_data) > 0 &&
	       rd_word(v, resource + (uint64_t)MV(v, node_resource_data), data) && *data;
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
	if (depth > MAX_STRING_DEPTH || !is_string(v, str, &type) || !string_length(v, str, &len) ||
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
		return HAVE(v, thin_actual) && field(v, str, MV(v, thin_actual), &inner) &&
		       string_chars(v, inner, from, n, out, depth + 1);
	if (repr == MV(v, sliced_tag))
		return HAVE(v, sliced_parent) && field(v, str, MV(v, sliced_parent), &inner) &&
		       smi_field(v, str, MV(v, sliced_offset), &offset) &&
		       string_chars(v, inner, offset + from, n, out, depth + 1);
	if (repr == MV(v, external_tag))
		return external_chars(v, str, one_byte, from, n, out);
	return false;
}

/* STR's text (cut at MAX_NAME bytes) into OUT; false when it is no string
 * this reader can read. */
static bool string_read(struct v8 *v, uint64_t str, struct v8_text *out)
{
	int64_t len, type;
	out->len = 0;
	out->cut = false;
	out->buf[0] = '\0';
	if (!is_string(v, str, &type) || !string_length(v, str, &len))
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
	if (!smi_field(v, si, base + MV(v, si_nlocals) * MV(v, tagged_size), &nlocals) || nlocals < 0 ||
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
		if (field(v, si, at, &w) && string_read(v, w, out) && out->len > 0)
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
		if (smi_field(v, si, at, &a) && smi_field(v, si, at + MV(v, tagged_size), &b) && a >= 0 &&
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
	if (!field(v, sfi, MV(v, sfi_name), &w))
		return false;
	if (string_read(v, w, out))
		return true;
	return HAVE(v, t_scope_info) && has_type(v, w, MV(v, t_scope_info)) && scope_info_name(v, w, out);
}

/* The name of the constructor of OBJ's map (the root map's constructor,
 * through the back pointers of its transitions). */
static bool constructor_name(struct v8 *v, uint64_t obj, struct v8_text *out)
{
	uint64_t map, c;
	if (!field(v, obj, MV(v, ho_map), &map))
		return false;
	for (int i = 0; i < MAX_MAP_CHAIN; i++) {
		if (!field(v, map, MV(v, map_constructor), &c) || !is_heap(v, c))
			return false;
		if (!has_type(v, c, MV(v, t_map)))
			break;
		map = c;
	}
	uint64_t sfi;
	return field(v, c, MV(v, fn_shared), &sfi) && has_type(v, sfi, MV(v, t_sfi)) &&
	       function_name(v, sfi, out) && out->len > 0;
}

/* Line and column (1-based) of POSITION in SCRIPT, from its line ends, or
 * from its source when V8 has not computed them. */
static bool line_ends_lookup(struct v8 *v, uint64_t ends, int64_t position, int *line, int *column)
{
	int64_t n;
	if (!HAVE(v, t_fixed_array) || !has_type(v, ends, MV(v, t_fixed_array)) ||
	    !smi_field(v, ends, MV(v, fa_length), &n) || n <= 0 || n > MAX_LINE_ENDS)
		return false;
	int64_t lo = 0, hi = n - 1, end;
	if (!smi_field(v, ends, MV(v, fa_data) + hi * MV(v, tagged_size), &end) || position > end)
		return false;
	while (lo < hi) {       /* the first line whose end is at or after POSITION */
		int64_t mid = lo + (hi - lo) / 2;
		if (!smi_field(v, ends, MV(v, fa_data) + mid * MV(v, tagged_size), &end))
			return false;
		if (end < position)
			lo = mid + 1;
		else
			hi = mid;
	}
	int64_t start = 0;
	if (lo > 0 && !smi_field(v, ends, MV(v, fa_data) + (lo - 1) * MV(v, tagged_size), &start))
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
	if (!is_string(v, str, &type) || (type & MV(v, encoding_mask)) != MV(v, one_byte_tag))
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
	if (HAVE(v, script_line_ends) && field(v, script, MV(v, script_line_ends), &w) &&
	    line_ends_lookup(v, w, position, line, column))
		return true;
	return HAVE(v, script_source) && field(v, script, MV(v, script_source), &w) &&
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
	    !smi_field(v, table, MV(v, fa_length), &n) || n <= 0 || n > MAX_SPT)
		return false;
	unsigned char *b = malloc((size_t)n);
	if (!b) {
		v->nomem = true;
		return false;
	}
	bool ok = rd(v, table - (uint64_t)MV(v, heap_tag) + (uint64_t)(MV(v, fa_length) + MV(v, tagged_size)),
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
	if (!field(v, bytecode, MV(v, fa_length) + 3 * MV(v, tagged_size), &table) ||
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
	if (!rd_word(v, fp + (uint64_t)MV(v, fp_marker), &marker))
		return false;
	unsigned tag_bits = (unsigned)__builtin_popcountll((uint64_t)MV(v, smi_tag_mask));
	if (is_smi(v, marker)) {
		/* A type marker: the type shifted past the Smi tag (V8's TypeToMarker). */
		f->type = (int64_t)(marker >> tag_bits);
		return f->type < 256;
	}
	uint64_t sfi;
	if (!rd_word(v, fp + (uint64_t)MV(v, fp_function), &fn) || !field(v, fn, MV(v, fn_shared), &sfi) ||
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
		if (!rd_word(v, fp, &next) || !rd_word(v, fp + 8, &pc) || next <= fp) {
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
	if (!rd_word(v, fp + (uint64_t)MV(v, fp_args), &receiver) || !is_heap(v, receiver) ||
	    !constructor_name(v, receiver, out))
		out->len = 0;
}

/* The function's start, from its ScopeInfo: where a frame whose code's
 * positions cannot be read is placed. */
static bool function_start(struct v8 *v, uint64_t sfi, int64_t *position)
{
	uint64_t si;
	return field(v, sfi, MV(v, sfi_name), &si) && HAVE(v, t_scope_info) &&
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
	    !rd_word(v, f->fp + (uint64_t)MV(v, fp_bytecode_array), &bytecode) ||
	    !has_type(v, bytecode, MV(v, t_bytecode)) ||
	    !rd_word(v, f->fp + (uint64_t)MV(v, fp_bytecode_offset), &raw) || !is_smi(v, raw))
		return false;
	int64_t offset = smi_value(v, raw) - (MV(v, bytecode_data) - MV(v, heap_tag));
	return offset >= 0 && smi_field(v, bytecode, MV(v, fa_length), &length) && offset < length &&
	       bytecode_position(v, bytecode, offset, position);
}

static bool is_istream_map(struct v8 *v, uint64_t w)
{
	if (v->istream_map)
		return w == v->istream_map;
	int64_t t;
	if (!is_heap(v, w) || !has_type(v, w, MV(v, t_map)) ||
	    !rd(v, w - (uint64_t)MV(v, heap_tag) + (uint64_t)MV(v, map_type), &t, 2))
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
		if (!rd(v, lo, block, sizeof(block)))
			return false;
		for (size_t i = sizeof(block) / 8; i-- > 0;) {
			uint64_t stream = lo + 8 * i + (uint64_t)MV(v, heap_tag);
			uint64_t start = stream - (uint64_t)MV(v, heap_tag) + (uint64_t)MV(v, is_start);
			if (!is_istream_map(v, block[i]) || start > pc)
				continue;
			*offset = (int64_t)(pc - start);
			return field(v, stream, MV(v, tagged_size), code) && has_type(v, *code, MV(v, t_code));
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
	if (!HAVE(v, code_spt) || !field(v, code, MV(v, code_spt), &table) ||
	    !table_position(v, table, offset - 1, false, &raw))
		return 0;
	if (HAVE(v, deopt_inlining) && HAVE(v, deopt_literals)) {
		field(v, deopt, MV(v, fa_data) + MV(v, deopt_inlining) * MV(v, tagged_size), &inlining);
		field(v, deopt, MV(v, fa_data) + MV(v, deopt_literals) * MV(v, tagged_size), &literals);
	}
	size_t n = 0;
	int64_t count = 0;
	if (!inlining || !smi_field(v, inlining, MV(v, fa_length), &count))
		count = 0;
	count /= 16;
	while (n + 1 < max) {
		int64_t id = raw_inlining_id(raw);
		if (id < 0)
			break;
		uint64_t lit;
		struct { int64_t position; int32_t function_id; } pos;
		if (id >= count ||
		    !rd(v, inlining - (uint64_t)MV(v, heap_tag) + (uint64_t)(MV(v, fa_length) + MV(v, tagged_size)) +
			       (uint64_t)id * 16, &pos, 12) ||
		    pos.function_id < 0 ||
		    !field(v, literals, MV(v, fa_data) + (int64_t)pos.function_id * MV(v, tagged_size), &lit))
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
	    !field(v, code, MV(v, code_offsets), &table) || !has_type(v, table, MV(v, t_byte_array)) ||
	    !smi_field(v, table, MV(v, fa_length), &n) || n <= 0 || n > MAX_SPT ||
	    !smi_field(v, bytecode, MV(v, fa_length), &len) || len <= 0 || len > MAX_SPT)
		return false;
	unsigned char *b = malloc((size_t)n), *bc = malloc((size_t)len);
	bool ok = b && bc &&
		  rd(v, table - (uint64_t)MV(v, heap_tag) + (uint64_t)(MV(v, fa_length) + MV(v, tagged_size)),
		     b, (size_t)n) &&
		  rd(v, bytecode - (uint64_t)MV(v, heap_tag) + (uint64_t)MV(v, bytecode_data), bc, (size_t)len);
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
	    !field(v, code, MV(v, code_deopt), &deopt))
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
	if (!field(v, f->function, MV(v, fn_shared), &sfi))
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

static char *dup_text(struct v8 *v, const char *s)
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
	if (field(v, p->sfi, MV(v, sfi_script), &script) && has_type(v, script, MV(v, t_script))) {
		if (field(v, script, MV(v, script_name), &name))
			string_read(v, name, &path);
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
	out->function = dup_text(v, full);
	out->file = path.len ? dup_text(v, path.buf) : NULL;
	out->line = line;
	out->runtime = dup_text(v, "node");
	out->detail = dup_text(v, detail);
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
	return probe.js || (HAVE(v, ft_exit) && probe.type == MV(v, ft_exit) && rd_word(v, fp + 8, &ra) &&
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

/* ---- the crash --------------------------------------------------------- */

static bool frame_is(const struct an_frame *f, const char *prefix)
{
	return f->function && strncmp(f->function, prefix, strlen(prefix)) == 0;
}

/* The index of T's first native frame named PREFIX..., or -1. */
static long native_named(const struct an_thread *t, const char *prefix)
{
	for (size_t i = 0; i < t->nframes; i++)
		if (!AN_FRAME_IS_RUNTIME(&t->frames[i]) && frame_is(&t->frames[i], prefix))
			return (long)i;
	return -1;
}

/* An object's own properties, as its map's descriptors list them (a
 * dictionary map's are not read). */
struct v8_props {
	uint64_t obj, descs;
	int64_t n;
	uint8_t size_words, inobject_start;
};

static bool props_open(struct v8 *v, uint64_t obj, struct v8_props *p)
{
	uint64_t map;
	int32_t bf3;
	p->obj = obj;
	if (!HAVE(v, map_descriptors) || !HAVE(v, desc_size) || !HAVE(v, index_mask) ||
	    !HAVE(v, map_size_words) || !HAVE(v, receiver_properties) || !HAVE(v, loc_field) ||
	    !field(v, obj, MV(v, ho_map), &map) || !field(v, map, MV(v, map_descriptors), &p->descs) ||
	    !rd(v, map - 1 + (uint64_t)MV(v, map_bit_field3), &bf3, sizeof(bf3)) ||
	    !rd(v, map - 1 + (uint64_t)MV(v, map_size_words), &p->size_words, 1) ||
	    !rd(v, map - 1 + (uint64_t)MV(v, map_inobject_start), &p->inobject_start, 1))
		return false;
	if (HAVE(v, dictionary_shift) && (bf3 >> MV(v, dictionary_shift)) & 1)
		return false;   /* a dictionary map: properties in a hash table */
	p->n = ((int64_t)bf3 & MV(v, own_desc_mask)) >> MV(v, own_desc_shift);
	return p->n >= 0 && p->n <= MAX_DESCRIPTORS;
}

/* Property I of P: its key and its value, in the object, in its property
 * array or in the descriptor itself.  False for an accessor's or what
 * cannot be read. */
static bool prop_at(struct v8 *v, const struct v8_props *p, int64_t i, uint64_t *key, uint64_t *value)
{
	int64_t base = MV(v, desc_header) + i * MV(v, desc_size) * MV(v, tagged_size), details;
	if (!field(v, p->descs, base + MV(v, desc_key) * MV(v, tagged_size), key) ||
	    !smi_field(v, p->descs, base + MV(v, desc_details) * MV(v, tagged_size), &details))
		return false;
	int64_t location = (details & MV(v, loc_mask)) >> MV(v, loc_shift);
	if (location == MV(v, loc_descriptor))
		return field(v, p->descs, base + MV(v, desc_value) * MV(v, tagged_size), value);
	if (location != MV(v, loc_field))
		return false;
	int64_t index = (details & MV(v, index_mask)) >> MV(v, index_shift);
	int64_t inobject = (int64_t)p->size_words - p->inobject_start;
	if (index < inobject)
		return field(v, p->obj, ((int64_t)p->inobject_start + index) * MV(v, tagged_size), value);
	uint64_t props;
	return field(v, p->obj, MV(v, receiver_properties), &props) && is_heap(v, props) &&
	       field(v, props, MV(v, fa_data) + (index - inobject) * MV(v, tagged_size), value);
}

/* The value of OBJ's own data property KEY. */
static bool own_property(struct v8 *v, uint64_t obj, const char *key, uint64_t *value)
{
	struct v8_props p;
	if (!props_open(v, obj, &p))
		return false;
	for (int64_t i = 0; i < p.n; i++) {
		uint64_t k;
		struct v8_text name;
		if (prop_at(v, &p, i, &k, value) && string_read(v, k, &name) && strcmp(name.buf, key) == 0)
			return true;
	}
	return false;
}

/* An own property of OBJ whose value is a string starting with PREFIX,
 * whatever its key (a private symbol's, as the stack V8 formats for an
 * error), into OUT. */
static bool own_string_with_prefix(struct v8 *v, uint64_t obj, const char *prefix, struct v8_text *out)
{
	struct v8_props p;
	if (!props_open(v, obj, &p))
		return false;
	for (int64_t i = 0; i < p.n; i++) {
		uint64_t k, value;
		if (prop_at(v, &p, i, &k, &value) && string_read(v, value, out) &&
		    strncmp(out->buf, prefix, strlen(prefix)) == 0)
			return true;
	}
	return false;
}

/* Whether OBJ is an exception as V8 reports one: a JSError, or (LOOSE) a
 * plain object with its own "message", as an error copied between
 * isolates (a worker's, posted to its parent) is. */
static bool is_exception(struct v8 *v, uint64_t obj, bool loose)
{
	int64_t type;
	uint64_t msg;
	if (!instance_type(v, obj, &type))
		return false;
	if (HAVE(v, t_js_error) && type == MV(v, t_js_error))
		return true;
	return loose && HAVE(v, t_js_object) && type == MV(v, t_js_object) &&
	       own_property(v, obj, "message", &msg) && is_string(v, msg, &type);
}

/* An exception among the words of [FROM, TO): a tagged pointer to one, or
 * a handle (a pointer to a slot holding one); a JSError first. */
static bool find_error(struct v8 *v, uint64_t from, uint64_t to, uint64_t *error)
{
	for (int loose = 0; loose < 2; loose++)
		for (uint64_t at = from; at + 8 <= to; at += 8) {
			uint64_t w, inner;
			if (!rd_word(v, at, &w))
				break;
			if (is_heap(v, w) && is_exception(v, w, loose)) {
				*error = w;
				return true;
			}
			if (!is_heap(v, w) && (w & 7) == 0 && w > 0x1000 && rd_word(v, w, &inner) &&
			    is_heap(v, inner) && is_exception(v, inner, loose)) {
				*error = inner;
				return true;
			}
		}
	return false;
}

/* Where the uncaught exception came from, when its own stack says: the
 * first frame of the stack V8 formatted for it ("TYPE: MESSAGE\n    at
 * NAME (PATH:LINE:COLUMN)"), as node printed it.  An exception thrown in
 * an async function surfaces far from where it was thrown. */
static void read_thrown_at(struct v8 *v, uint64_t error, struct an_js_crash *js)
{
	char head[2 * MAX_NAME + 16];
	struct v8_text stack;
	snprintf(head, sizeof(head), "%s: %s\n    at ", js->type, js->message);
	if (!own_string_with_prefix(v, error, head, &stack))
		return;
	char *line = stack.buf + strlen(head), *end = strchr(line, '\n');
	if (end)
		*end = '\0';
	char *open = strrchr(line, '(');
	size_t n = strlen(line);
	if (open && n > 0 && line[n - 1] == ')' && open > line && open[-1] == ' ') {
		line[n - 1] = '\0';
		open[-1] = '\0';
		js->thrown_in = dup_text(v, line);
		js->thrown_at = dup_text(v, open + 1);
	} else if (!end && stack.cut) {
		return;   /* the line was cut: nothing sure */
	} else {
		js->thrown_in = dup_text(v, "(anonymous)");
		js->thrown_at = dup_text(v, line);
	}
}

/* The frame that holds an uncaught exception, and how far up the stack
 * it may be: V8's Isolate::CreateMessageOrAbort under
 * --abort-on-uncaught-exception (the thrower, ThrowInternal, holds it, up
 * to its caller), or node's TriggerUncaughtException (a promise rejection
 * or an error event nobody handled: its argument, on the JavaScript
 * stack above the API call's exit frame). */
static bool uncaught_range(const struct an_thread *t, uint64_t *to)
{
	long at = native_named(t, "v8::internal::Isolate::CreateMessageOrAbort");
	size_t skip = 2;
	if (at < 0) {
		at = native_named(t, "node::errors::TriggerUncaughtException");
		skip = 1;
	}
	if (at < 0)
		return false;
	*to = t->sp + EXCEPTION_SCAN;
	for (size_t i = (size_t)at + skip; i < t->nframes; i++) {
		const struct an_frame *f = &t->frames[i];
		if (AN_FRAME_IS_RUNTIME(f) || f->cfa <= t->sp || (skip == 1 && !frame_is(f, "Builtins_")))
			continue;
		/* An API call's arguments lie above its exit frame's CFA. */
		uint64_t end = f->cfa + (skip == 1 ? 256 : 0);
		if (end < *to)
			*to = end;
		break;
	}
	return true;
}

/* The exception V8 or node was about to report as uncaught when the
 * process aborted, read from the stack of the frames that hold it. */
static void read_uncaught(struct v8 *v, struct an_thread *t)
{
	uint64_t to, error, msg, name;
	if (!uncaught_range(t, &to))
		return;
	struct an_js_crash *js = &v->an->js;
	js->present = true;
	if (!find_error(v, t->sp, to, &error)) {
		v8_warn(v, "the uncaught exception is not on the stack of its throw (not an Error?)");
		return;
	}
	struct v8_text text;
	/* An error's class: its own name when it has one (a copied error),
	 * else its constructor's. */
	if ((own_property(v, error, "name", &name) && string_read(v, name, &text) && text.len) ||
	    constructor_name(v, error, &text))
		js->type = dup_text(v, text.buf);
	if (own_property(v, error, "message", &msg) && string_read(v, msg, &text))
		js->message = dup_text(v, text.buf);
	else
		v8_warn(v, "the uncaught %s's message cannot be read", js->type ? js->type : "exception");
	if (js->type && js->message)
		read_thrown_at(v, error, js);
}

/* V8 out of memory: node's OOM handler or V8's fatal OOM on the stack,
 * in node's words: the JavaScript heap's exhaustion when the heap gave up
 * (Heap::FatalProcessOutOfMemory), else the process's. */
static void read_oom(struct v8 *v, struct an_thread *t)
{
	bool heap = native_named(t, "v8::internal::Heap::FatalProcessOutOfMemory") >= 0;
	if (!heap && native_named(t, "node::OOMErrorHandler") < 0 &&
	    native_named(t, "v8::internal::V8::FatalProcessOutOfMemory") < 0)
		return;
	v->an->js.present = true;
	v->an->js.oom = true;
	v->an->js.message = dup_text(v, heap ? "Allocation failed - JavaScript heap out of memory"
					     : "Allocation failed - process out of memory");
}

/* The crash happened in T's innermost JavaScript frame: the signature
 * starts there (an_signature_start). */
static void mark_site(struct an_thread *t)
{
	for (size_t i = 0; i < t->nframes; i++)
		if (t->frames[i].kind == AN_FRAME_SCRIPT && t->frames[i].runtime &&
		    strcmp(t->frames[i].runtime, "node") == 0 && t->frames[i].file) {
			t->frames[i].role = AN_FRAME_CRASH_SITE;
			return;
		}
}

bool an_v8_analyze(struct dbg_session *s, struct analysis *an)
{
	struct v8 v = {.s = s, .core = dbg_session_core(s), .an = an};
	if (!meta_load(&v))
		return true;
	threads_splice(&v);
	free(v.bytecode_sizes);
	if (!v.nomem && an->nthreads && !an->live) {
		struct an_thread *t = &an->threads[an_crashing_thread(an)];
		read_oom(&v, t);
		if (!an->js.present)
			read_uncaught(&v, t);
		if (an->js.present && !an->caught.present)
			mark_site(t);
	}
	return !v.nomem;
}
