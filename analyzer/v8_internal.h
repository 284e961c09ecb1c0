/* What analyzer/v8.c and analyzer/v8_crash.c share: the metadata read,
 * the reader's state and its heap and string readers. */
#ifndef ANALYZER_V8_INTERNAL_H
#define ANALYZER_V8_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "../corefile/core.h"
#include "../dwarf/dwarf.h"

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

#define MV(v, field) ((v)->m[M_##field])
#define HAVE(v, field) ((v)->have[M_##field])

struct v8_text {
	char buf[MAX_NAME];
	size_t len;
	bool cut;
};

void v8_warn(struct v8 *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool v8_rd(struct v8 *v, uint64_t addr, void *buf, size_t n);
bool v8_rd_word(struct v8 *v, uint64_t addr, uint64_t *w);
bool v8_is_heap(const struct v8 *v, uint64_t w);
/* The tagged field at OFFSET of heap object OBJ; a Smi field's value. */
bool v8_field(struct v8 *v, uint64_t obj, int64_t offset, uint64_t *w);
bool v8_smi_field(struct v8 *v, uint64_t obj, int64_t offset, int64_t *value);
bool v8_instance_type(struct v8 *v, uint64_t obj, int64_t *type);
bool v8_is_string(struct v8 *v, uint64_t obj, int64_t *type);
/* STR's text (cut at MAX_NAME bytes) into OUT; false when it is no string
 * this reader can read. */
bool v8_string_read(struct v8 *v, uint64_t str, struct v8_text *out);
/* The name of the constructor of OBJ's map. */
bool v8_constructor_name(struct v8 *v, uint64_t obj, struct v8_text *out);
char *v8_dup_text(struct v8 *v, const char *s);

/* analyzer/v8_crash.c: the crash of crashing thread T into V->an->js. */
void v8_crash_read(struct v8 *v, struct an_thread *t);

#endif
