package dwarf

// Constants from the DWARF Debugging Information Format, versions 2 to 5
// (https://dwarfstd.org/doc/DWARF5.pdf, sections 7.5–7.28), plus the GNU
// extensions that gcc and dwz emit. Only the values this package acts on are
// named; the spelling is the specification's, so readers can look them up.

// Tag is a DW_TAG_* value.
type Tag uint32

// Tags that matter for symbolication.
const (
	DW_TAG_array_type                  Tag = 0x01
	DW_TAG_class_type                  Tag = 0x02
	DW_TAG_enumeration_type            Tag = 0x04
	DW_TAG_lexical_block               Tag = 0x0b
	DW_TAG_member                      Tag = 0x0d
	DW_TAG_pointer_type                Tag = 0x0f
	DW_TAG_compile_unit                Tag = 0x11
	DW_TAG_structure_type              Tag = 0x13
	DW_TAG_subroutine_type             Tag = 0x15
	DW_TAG_typedef                     Tag = 0x16
	DW_TAG_union_type                  Tag = 0x17
	DW_TAG_inlined_subroutine          Tag = 0x1d
	DW_TAG_base_type                   Tag = 0x24
	DW_TAG_const_type                  Tag = 0x26
	DW_TAG_enumerator                  Tag = 0x28
	DW_TAG_subprogram                  Tag = 0x2e
	DW_TAG_template_type_param         Tag = 0x2f
	DW_TAG_template_value_param        Tag = 0x30
	DW_TAG_variable                    Tag = 0x34
	DW_TAG_volatile_type               Tag = 0x35
	DW_TAG_namespace                   Tag = 0x39
	DW_TAG_partial_unit                Tag = 0x3c
	DW_TAG_type_unit                   Tag = 0x41
	DW_TAG_rvalue_reference_type       Tag = 0x42
	DW_TAG_skeleton_unit               Tag = 0x4a
	DW_TAG_formal_parameter            Tag = 0x05
	DW_TAG_reference_type              Tag = 0x10
	DW_TAG_ptr_to_member_type          Tag = 0x1f
	DW_TAG_inheritance                 Tag = 0x1c
	DW_TAG_GNU_template_parameter_pack Tag = 0x4107
)

// Attr is a DW_AT_* value.
type Attr uint32

// Attributes that matter for symbolication.
const (
	DW_AT_sibling           Attr = 0x01
	DW_AT_name              Attr = 0x03
	DW_AT_stmt_list         Attr = 0x10
	DW_AT_low_pc            Attr = 0x11
	DW_AT_high_pc           Attr = 0x12
	DW_AT_language          Attr = 0x13
	DW_AT_comp_dir          Attr = 0x1b
	DW_AT_inline            Attr = 0x20
	DW_AT_producer          Attr = 0x25
	DW_AT_abstract_origin   Attr = 0x31
	DW_AT_decl_file         Attr = 0x3a
	DW_AT_decl_line         Attr = 0x3b
	DW_AT_declaration       Attr = 0x3c
	DW_AT_specification     Attr = 0x47
	DW_AT_ranges            Attr = 0x55
	DW_AT_call_column       Attr = 0x57
	DW_AT_call_file         Attr = 0x58
	DW_AT_call_line         Attr = 0x59
	DW_AT_linkage_name      Attr = 0x6e
	DW_AT_str_offsets_base  Attr = 0x72
	DW_AT_addr_base         Attr = 0x73
	DW_AT_rnglists_base     Attr = 0x74
	DW_AT_dwo_name          Attr = 0x76
	DW_AT_MIPS_linkage_name Attr = 0x2007
	DW_AT_GNU_discriminator Attr = 0x2136
	DW_AT_GNU_dwo_name      Attr = 0x2130
	DW_AT_GNU_dwo_id        Attr = 0x2131
	DW_AT_GNU_ranges_base   Attr = 0x2132
	DW_AT_GNU_addr_base     Attr = 0x2133
)

// Form is a DW_FORM_* value.
type Form uint16

// All attribute forms of DWARF 2–5 and the GNU extensions.
const (
	DW_FORM_addr           Form = 0x01
	DW_FORM_block2         Form = 0x03
	DW_FORM_block4         Form = 0x04
	DW_FORM_data2          Form = 0x05
	DW_FORM_data4          Form = 0x06
	DW_FORM_data8          Form = 0x07
	DW_FORM_string         Form = 0x08
	DW_FORM_block          Form = 0x09
	DW_FORM_block1         Form = 0x0a
	DW_FORM_data1          Form = 0x0b
	DW_FORM_flag           Form = 0x0c
	DW_FORM_sdata          Form = 0x0d
	DW_FORM_strp           Form = 0x0e
	DW_FORM_udata          Form = 0x0f
	DW_FORM_ref_addr       Form = 0x10
	DW_FORM_ref1           Form = 0x11
	DW_FORM_ref2           Form = 0x12
	DW_FORM_ref4           Form = 0x13
	DW_FORM_ref8           Form = 0x14
	DW_FORM_ref_udata      Form = 0x15
	DW_FORM_indirect       Form = 0x16
	DW_FORM_sec_offset     Form = 0x17
	DW_FORM_exprloc        Form = 0x18
	DW_FORM_flag_present   Form = 0x19
	DW_FORM_strx           Form = 0x1a
	DW_FORM_addrx          Form = 0x1b
	DW_FORM_ref_sup4       Form = 0x1c
	DW_FORM_strp_sup       Form = 0x1d
	DW_FORM_data16         Form = 0x1e
	DW_FORM_line_strp      Form = 0x1f
	DW_FORM_ref_sig8       Form = 0x20
	DW_FORM_implicit_const Form = 0x21
	DW_FORM_loclistx       Form = 0x22
	DW_FORM_rnglistx       Form = 0x23
	DW_FORM_ref_sup8       Form = 0x24
	DW_FORM_strx1          Form = 0x25
	DW_FORM_strx2          Form = 0x26
	DW_FORM_strx3          Form = 0x27
	DW_FORM_strx4          Form = 0x28
	DW_FORM_addrx1         Form = 0x29
	DW_FORM_addrx2         Form = 0x2a
	DW_FORM_addrx3         Form = 0x2b
	DW_FORM_addrx4         Form = 0x2c
	DW_FORM_GNU_addr_index Form = 0x1f01
	DW_FORM_GNU_str_index  Form = 0x1f02
	DW_FORM_GNU_ref_alt    Form = 0x1f20
	DW_FORM_GNU_strp_alt   Form = 0x1f21
)

// Unit types (DWARF 5 section 7.5.1).
const (
	DW_UT_compile       = 0x01
	DW_UT_type          = 0x02
	DW_UT_partial       = 0x03
	DW_UT_skeleton      = 0x04
	DW_UT_split_compile = 0x05
	DW_UT_split_type    = 0x06
)

// Line number program opcodes (section 6.2.5).
const (
	DW_LNS_copy               = 0x01
	DW_LNS_advance_pc         = 0x02
	DW_LNS_advance_line       = 0x03
	DW_LNS_set_file           = 0x04
	DW_LNS_set_column         = 0x05
	DW_LNS_negate_stmt        = 0x06
	DW_LNS_set_basic_block    = 0x07
	DW_LNS_const_add_pc       = 0x08
	DW_LNS_fixed_advance_pc   = 0x09
	DW_LNS_set_prologue_end   = 0x0a
	DW_LNS_set_epilogue_begin = 0x0b
	DW_LNS_set_isa            = 0x0c

	DW_LNE_end_sequence      = 0x01
	DW_LNE_set_address       = 0x02
	DW_LNE_define_file       = 0x03
	DW_LNE_set_discriminator = 0x04

	DW_LNCT_path            = 0x1
	DW_LNCT_directory_index = 0x2
	DW_LNCT_timestamp       = 0x3
	DW_LNCT_size            = 0x4
	DW_LNCT_MD5             = 0x5
)

// Range list entries (section 7.25).
const (
	DW_RLE_end_of_list   = 0x00
	DW_RLE_base_addressx = 0x01
	DW_RLE_startx_endx   = 0x02
	DW_RLE_startx_length = 0x03
	DW_RLE_offset_pair   = 0x04
	DW_RLE_base_address  = 0x05
	DW_RLE_start_end     = 0x06
	DW_RLE_start_length  = 0x07
)

// Language is a DW_LANG_* value.
type Language uint16

// Source languages that change how names are demangled or printed.
const (
	DW_LANG_C89            Language = 0x0001
	DW_LANG_C              Language = 0x0002
	DW_LANG_C_plus_plus    Language = 0x0004
	DW_LANG_C99            Language = 0x000c
	DW_LANG_ObjC           Language = 0x0010
	DW_LANG_ObjC_plus_plus Language = 0x0011
	DW_LANG_Go             Language = 0x0016
	DW_LANG_C_plus_plus_11 Language = 0x001a
	DW_LANG_Rust           Language = 0x001c
	DW_LANG_C11            Language = 0x001d
	DW_LANG_Swift          Language = 0x001e
	DW_LANG_C_plus_plus_14 Language = 0x0021
	DW_LANG_Mips_Assembler Language = 0x8001
)
