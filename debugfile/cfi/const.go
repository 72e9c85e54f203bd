package cfi

import "fmt"

// Constants from DWARF 5 §7.24 (call frame instructions), the LSB Core 5.0
// §10.5 (DW_EH_PE_* pointer encodings) and the GNU and ARM extensions (GCC
// include/dwarf2.def; "DWARF for the Arm 64-bit Architecture", AADWARF64
// §4.4.8 for DW_CFA_AARCH64_negate_ra_state).

// Op is a call frame instruction opcode (DW_CFA_*). The three "primary"
// opcodes keep their operand in the low six bits; Op values for them are
// the high two bits with the low six clear.
type Op uint8

// Call frame instructions.
const (
	DW_CFA_advance_loc        Op = 0x40
	DW_CFA_offset             Op = 0x80
	DW_CFA_restore            Op = 0xc0
	DW_CFA_nop                Op = 0x00
	DW_CFA_set_loc            Op = 0x01
	DW_CFA_advance_loc1       Op = 0x02
	DW_CFA_advance_loc2       Op = 0x03
	DW_CFA_advance_loc4       Op = 0x04
	DW_CFA_offset_extended    Op = 0x05
	DW_CFA_restore_extended   Op = 0x06
	DW_CFA_undefined          Op = 0x07
	DW_CFA_same_value         Op = 0x08
	DW_CFA_register           Op = 0x09
	DW_CFA_remember_state     Op = 0x0a
	DW_CFA_restore_state      Op = 0x0b
	DW_CFA_def_cfa            Op = 0x0c
	DW_CFA_def_cfa_register   Op = 0x0d
	DW_CFA_def_cfa_offset     Op = 0x0e
	DW_CFA_def_cfa_expression Op = 0x0f
	DW_CFA_expression         Op = 0x10
	DW_CFA_offset_extended_sf Op = 0x11
	DW_CFA_def_cfa_sf         Op = 0x12
	DW_CFA_def_cfa_offset_sf  Op = 0x13
	DW_CFA_val_offset         Op = 0x14
	DW_CFA_val_offset_sf      Op = 0x15
	DW_CFA_val_expression     Op = 0x16
	DW_CFA_MIPS_advance_loc8  Op = 0x1d
	// DW_CFA_AARCH64_negate_ra_state toggles whether the return address is
	// signed (AArch64 pointer authentication). It is also SPARC's
	// DW_CFA_GNU_window_save.
	DW_CFA_AARCH64_negate_ra_state      Op = 0x2d
	DW_CFA_GNU_args_size                Op = 0x2e
	DW_CFA_GNU_negative_offset_extended Op = 0x2f
)

var opNames = map[Op]string{
	DW_CFA_advance_loc: "DW_CFA_advance_loc", DW_CFA_offset: "DW_CFA_offset", DW_CFA_restore: "DW_CFA_restore",
	DW_CFA_nop: "DW_CFA_nop", DW_CFA_set_loc: "DW_CFA_set_loc", DW_CFA_advance_loc1: "DW_CFA_advance_loc1",
	DW_CFA_advance_loc2: "DW_CFA_advance_loc2", DW_CFA_advance_loc4: "DW_CFA_advance_loc4",
	DW_CFA_offset_extended: "DW_CFA_offset_extended", DW_CFA_restore_extended: "DW_CFA_restore_extended",
	DW_CFA_undefined: "DW_CFA_undefined", DW_CFA_same_value: "DW_CFA_same_value", DW_CFA_register: "DW_CFA_register",
	DW_CFA_remember_state: "DW_CFA_remember_state", DW_CFA_restore_state: "DW_CFA_restore_state",
	DW_CFA_def_cfa: "DW_CFA_def_cfa", DW_CFA_def_cfa_register: "DW_CFA_def_cfa_register",
	DW_CFA_def_cfa_offset: "DW_CFA_def_cfa_offset", DW_CFA_def_cfa_expression: "DW_CFA_def_cfa_expression",
	DW_CFA_expression: "DW_CFA_expression", DW_CFA_offset_extended_sf: "DW_CFA_offset_extended_sf",
	DW_CFA_def_cfa_sf: "DW_CFA_def_cfa_sf", DW_CFA_def_cfa_offset_sf: "DW_CFA_def_cfa_offset_sf",
	DW_CFA_val_offset: "DW_CFA_val_offset", DW_CFA_val_offset_sf: "DW_CFA_val_offset_sf",
	DW_CFA_val_expression: "DW_CFA_val_expression", DW_CFA_MIPS_advance_loc8: "DW_CFA_MIPS_advance_loc8",
	DW_CFA_AARCH64_negate_ra_state: "DW_CFA_AARCH64_negate_ra_state", DW_CFA_GNU_args_size: "DW_CFA_GNU_args_size",
	DW_CFA_GNU_negative_offset_extended: "DW_CFA_GNU_negative_offset_extended",
}

func (o Op) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return fmt.Sprintf("DW_CFA_%#x", uint8(o))
}

// Pointer encodings (DW_EH_PE_*): the low four bits give the format, the
// next three how the value applies, and 0x80 that the value is the address
// of the pointer rather than the pointer.
const (
	DW_EH_PE_absptr   = 0x00
	DW_EH_PE_uleb128  = 0x01
	DW_EH_PE_udata2   = 0x02
	DW_EH_PE_udata4   = 0x03
	DW_EH_PE_udata8   = 0x04
	DW_EH_PE_sleb128  = 0x09
	DW_EH_PE_sdata2   = 0x0a
	DW_EH_PE_sdata4   = 0x0b
	DW_EH_PE_sdata8   = 0x0c
	DW_EH_PE_pcrel    = 0x10
	DW_EH_PE_textrel  = 0x20
	DW_EH_PE_datarel  = 0x30
	DW_EH_PE_funcrel  = 0x40
	DW_EH_PE_aligned  = 0x50
	DW_EH_PE_indirect = 0x80
	DW_EH_PE_omit     = 0xff
)

// RuleKind says how a register of the caller is recovered (DWARF 5
// §6.4.1).
type RuleKind uint8

// Register rules. RuleUnspecified is the state of a register no
// instruction mentioned; unwinders treat it as RuleSameValue for
// callee-saved registers.
const (
	RuleUnspecified   RuleKind = iota
	RuleUndefined              // the register has no recoverable value (the return address column: end of stack)
	RuleSameValue              // unchanged from the callee
	RuleOffset                 // saved at address CFA+Offset
	RuleValOffset              // the value is CFA+Offset
	RuleRegister               // saved in register Reg2
	RuleExpression             // saved at the address Expr computes (CFA pushed first)
	RuleValExpression          // the value is what Expr computes (CFA pushed first)
)

var ruleNames = [...]string{"unspecified", "undefined", "same", "offset", "val_offset", "register", "expression", "val_expression"}

func (k RuleKind) String() string {
	if int(k) < len(ruleNames) {
		return ruleNames[k]
	}
	return fmt.Sprintf("RuleKind(%d)", uint8(k))
}
