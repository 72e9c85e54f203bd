package cfi_test

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/backtrail/backtrail/debugfile/cfi"
)

// section builds call frame sections by hand, for encodings and
// instructions compilers rarely write.
type section struct {
	b    []byte
	addr uint64
}

func (s *section) u8(v ...byte)  { s.b = append(s.b, v...) }
func (s *section) u32(v uint32)  { s.b = binary.LittleEndian.AppendUint32(s.b, v) }
func (s *section) u64(v uint64)  { s.b = binary.LittleEndian.AppendUint64(s.b, v) }
func (s *section) str(v string)  { s.b = append(append(s.b, v...), 0) }
func (s *section) uleb(v uint64) { s.b = binary.AppendUvarint(s.b, v) }
func (s *section) sleb(v int64) {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			s.b = append(s.b, c)
			return
		}
		s.b = append(s.b, c|0x80)
	}
}

// entry writes a length-prefixed entry whose body fill writes, and
// returns its offset.
func (s *section) entry(fill func()) int {
	off := len(s.b)
	s.u32(0)
	fill()
	binary.LittleEndian.PutUint32(s.b[off:], uint32(len(s.b)-off-4))
	return off
}

// syntheticEHFrame builds an .eh_frame at 0x10000 with one CIE (version 3,
// "zPLRS") and one FDE whose instructions use most DW_CFA_* opcodes.
func syntheticEHFrame() (s *section, cie, fde int) {
	s = &section{addr: 0x10000}
	// CIE: version 3, "zPLRS", personality pcrel|sdata4|indirect, LSDA
	// udata4, FDEs udata8 absolute.
	cie = s.entry(func() {
		s.u32(0)
		s.u8(3)
		s.str("zPLRS")
		s.uleb(1)  // code align
		s.sleb(-8) // data align
		s.uleb(16) // RA
		s.uleb(1 + 4 + 1 + 1)
		s.u8(cfi.DW_EH_PE_indirect | cfi.DW_EH_PE_pcrel | cfi.DW_EH_PE_sdata4)
		s.u32(0x100) // personality: pcrel from this field
		s.u8(cfi.DW_EH_PE_udata4)
		s.u8(cfi.DW_EH_PE_udata8)
		s.u8(byte(cfi.DW_CFA_def_cfa), 7, 8) // CFA = rsp+8
		s.u8(byte(cfi.DW_CFA_offset)|16, 1)  // ra at CFA-8
		s.u8(byte(cfi.DW_CFA_nop), byte(cfi.DW_CFA_nop))
	})
	fde = s.entry(func() {
		s.u32(uint32(len(s.b) - cie))
		s.u64(0x401000) // begin
		s.u64(0x100)    // range
		s.uleb(4)
		s.u32(0xabcd)                             // LSDA
		s.u8(byte(cfi.DW_CFA_advance_loc) | 4)    // 0x401004
		s.u8(byte(cfi.DW_CFA_def_cfa_offset), 16) // rsp+16
		s.u8(byte(cfi.DW_CFA_offset)|6, 2)        // rbp at CFA-16
		s.u8(byte(cfi.DW_CFA_remember_state))
		s.u8(byte(cfi.DW_CFA_advance_loc1), 0x10)                 // 0x401014
		s.u8(byte(cfi.DW_CFA_def_cfa_register), 6)                // rbp+16
		s.u8(byte(cfi.DW_CFA_GNU_negative_offset_extended), 3, 3) // rbx at CFA+24
		s.u8(byte(cfi.DW_CFA_GNU_args_size), 32)
		s.u8(byte(cfi.DW_CFA_val_expression), 12, 2, 0x70, 0x08) // r12 = rax+8 (DW_OP_breg0 8)
		s.u8(byte(cfi.DW_CFA_advance_loc2), 0x10, 0)             // 0x401024
		s.u8(byte(cfi.DW_CFA_restore_state))
		s.u8(byte(cfi.DW_CFA_advance_loc4), 0x0c, 0, 0, 0)             // 0x401030
		s.u8(byte(cfi.DW_CFA_def_cfa_expression), 3, 0x77, 0x10, 0x06) // DW_OP_breg7 16; DW_OP_deref
		s.u8(byte(cfi.DW_CFA_restore) | 6)                             // rbp back to the CIE (none)
		s.u8(byte(cfi.DW_CFA_undefined), 16)
		s.u8(byte(cfi.DW_CFA_set_loc))
		s.u64(0x401080)
		s.u8(byte(cfi.DW_CFA_def_cfa_sf), 7, 0x7e) // rsp + (-2)*(-8) = rsp+16
		s.u8(byte(cfi.DW_CFA_register), 3, 13)     // rbx in r13
		s.u8(byte(cfi.DW_CFA_same_value), 13)
		s.u8(byte(cfi.DW_CFA_val_offset), 14, 1)            // r14 = CFA-8
		s.u8(byte(cfi.DW_CFA_offset_extended_sf), 15, 0x7f) // r15 at CFA+8
	})
	s.u32(0) // terminator
	return s, cie, fde
}

func TestSyntheticEHFrame(t *testing.T) {
	s, cie, fde := syntheticEHFrame()
	tab, err := cfi.Parse(s.b, cfi.Options{Kind: cfi.EHFrame, Addr: s.addr})
	if err != nil || tab.ScanErr != nil {
		t.Fatalf("Parse: %v, %v", err, tab.ScanErr)
	}
	f, err := tab.FDE(0x401000)
	if err != nil {
		t.Fatal(err)
	}
	c := f.CIE
	wantPers := s.addr + uint64(cie) + 4 + 4 + 1 + 6 + 3 + 1 + 1 + 0x100
	if f.Offset != uint64(fde) || !c.Signal || c.Personality != wantPers || !c.PersonalityInd || f.LSDA != 0xabcd || c.Version != 3 {
		t.Errorf("FDE %+v CIE %+v; want personality %#x", f, c, wantPers)
	}
	type want struct {
		pc       uint64
		loc, end uint64
		cfa      string
		rules    map[uint64]cfi.RegRule
		argsSize uint64
	}
	rule := func(k cfi.RuleKind, off int64) cfi.RegRule { return cfi.RegRule{Kind: k, Offset: off} }
	ra := rule(cfi.RuleOffset, -8)
	for _, w := range []want{
		{0x401000, 0x401000, 0x401004, "r7+8", map[uint64]cfi.RegRule{16: ra}, 0},
		{0x401003, 0x401000, 0x401004, "r7+8", map[uint64]cfi.RegRule{16: ra}, 0},
		{0x401004, 0x401004, 0x401014, "r7+16", map[uint64]cfi.RegRule{16: ra, 6: rule(cfi.RuleOffset, -16)}, 0},
		{0x401014, 0x401014, 0x401024, "r6+16", map[uint64]cfi.RegRule{16: ra, 6: rule(cfi.RuleOffset, -16), 3: rule(cfi.RuleOffset, 24), 12: {Kind: cfi.RuleValExpression, Expr: []byte{0x70, 8}}}, 32},
		{0x401024, 0x401024, 0x401030, "r7+16", map[uint64]cfi.RegRule{16: ra, 6: rule(cfi.RuleOffset, -16)}, 32},
		{0x401030, 0x401030, 0x401080, "expr", map[uint64]cfi.RegRule{16: {Kind: cfi.RuleUndefined}}, 32},
		{0x4010ff, 0x401080, 0x401100, "r7+16", map[uint64]cfi.RegRule{16: {Kind: cfi.RuleUndefined}, 3: {Kind: cfi.RuleRegister, Register: 13},
			13: {Kind: cfi.RuleSameValue}, 14: rule(cfi.RuleValOffset, -8), 15: rule(cfi.RuleOffset, 8)}, 32},
	} {
		row, err := tab.Row(w.pc)
		if err != nil {
			t.Errorf("Row(%#x): %v", w.pc, err)
			continue
		}
		cfa := "expr"
		if row.CFA.Expr == nil {
			cfa = "r" + itoa(row.CFA.Reg) + "+" + itoa(uint64(row.CFA.Offset))
		}
		if row.Loc != w.loc || row.End != w.end || cfa != w.cfa || row.ArgsSize != w.argsSize || !row.Signal {
			t.Errorf("Row(%#x) = [%#x,%#x) cfa %s args %d signal %v; want [%#x,%#x) %s %d", w.pc, row.Loc, row.End, cfa, row.ArgsSize, row.Signal, w.loc, w.end, w.cfa, w.argsSize)
		}
		if len(row.Rules) != len(w.rules) {
			t.Errorf("Row(%#x): rules %+v, want %+v", w.pc, row.Rules, w.rules)
		}
		for reg, r := range w.rules {
			r.Reg = reg
			if have := row.Rule(reg); have.Kind != r.Kind || have.Offset != r.Offset || have.Register != r.Register || !slices.Equal(have.Expr, r.Expr) {
				t.Errorf("Row(%#x).Rule(%d) = %+v, want %+v", w.pc, reg, have, r)
			}
		}
	}
	for _, pc := range []uint64{0x400fff, 0x401100} {
		if _, err := tab.Row(pc); !errors.Is(err, cfi.ErrNoFDE) {
			t.Errorf("Row(%#x) error %v, want ErrNoFDE", pc, err)
		}
	}
}

func itoa(v uint64) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for ; v > 0; v /= 10 {
		b = append([]byte{byte('0' + v%10)}, b...)
	}
	return string(b)
}

// TestDebugFrameV3 reads a .debug_frame with a version 3 CIE (ULEB return
// address register) and a 64-bit DWARF entry.
func TestDebugFrameV3(t *testing.T) {
	s := &section{}
	cie := s.entry(func() {
		s.u32(0xffffffff)
		s.u8(3)
		s.str("")
		s.uleb(4)
		s.sleb(-4)
		s.uleb(300) // RA column beyond a byte
		s.u8(byte(cfi.DW_CFA_def_cfa), 31, 0)
	})
	// A 64-bit FDE: length 0xffffffff, then 8-byte length and CIE pointer.
	off := len(s.b)
	s.u32(0xffffffff)
	lenAt := len(s.b)
	s.u64(0)
	s.u64(uint64(cie))
	s.u64(0x2000)
	s.u64(0x40)
	s.u8(byte(cfi.DW_CFA_advance_loc)|2, byte(cfi.DW_CFA_def_cfa_offset), 32)
	s.u8(byte(cfi.DW_CFA_offset_extended), 0xac, 0x02, 2) // reg 300 at CFA-8
	binary.LittleEndian.PutUint64(s.b[lenAt:], uint64(len(s.b)-lenAt-8))
	tab, err := cfi.Parse(s.b, cfi.Options{Kind: cfi.DebugFrame})
	if err != nil {
		t.Fatal(err)
	}
	row, err := tab.Row(0x2008)
	if err != nil {
		t.Fatal(err)
	}
	if row.FDE.Offset != uint64(off) || row.RAReg != 300 || row.Loc != 0x2008 || row.CFA.Reg != 31 || row.CFA.Offset != 32 || row.Rule(300).Offset != -8 {
		t.Errorf("row %+v", row)
	}
	if row, _ := tab.Row(0x2007); row == nil || row.CFA.Offset != 0 || row.End != 0x2008 {
		t.Errorf("row at 0x2007 %+v", row)
	}
}

// TestTolerantCIE checks that a CIE this package cannot read only loses
// its own FDEs, and that the error names the section and offset.
func TestTolerantCIE(t *testing.T) {
	s := &section{}
	good := s.entry(func() {
		s.u32(0)
		s.u8(1)
		s.str("zR")
		s.uleb(1)
		s.sleb(-8)
		s.u8(16)
		s.uleb(1)
		s.u8(cfi.DW_EH_PE_udata4)
	})
	bad := s.entry(func() {
		s.u32(0)
		s.u8(9) // unknown version
		s.str("zR")
	})
	for i, c := range []int{bad, good} {
		s.entry(func() {
			s.u32(uint32(len(s.b) - c))
			s.u32(uint32(0x1000 * (i + 1)))
			s.u32(0x10)
			s.uleb(0)
		})
	}
	tab, err := cfi.Parse(s.b, cfi.Options{Kind: cfi.EHFrame})
	if err != nil {
		t.Fatal(err)
	}
	var fe *cfi.FormatError
	if !errors.As(tab.ScanErr, &fe) || fe.Section != ".eh_frame" || fe.Off != uint64(bad) {
		t.Errorf("ScanErr = %v, want a FormatError at %#x", tab.ScanErr, bad)
	}
	if _, err := tab.FDE(0x2004); err != nil {
		t.Errorf("FDE of the good CIE: %v", err)
	}
	if _, err := tab.FDE(0x1004); !errors.Is(err, cfi.ErrNoFDE) {
		t.Errorf("FDE of the bad CIE: %v", err)
	}
}

// TestBounds checks the limits on remembered states and rules.
func TestBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		code []byte
	}{
		{"remember", slices.Repeat([]byte{byte(cfi.DW_CFA_remember_state)}, cfi.MaxStateDepth+1)},
		{"restore", []byte{byte(cfi.DW_CFA_restore_state)}},
		{"rules", func() []byte {
			var b []byte
			for r := 0; r <= cfi.MaxRules; r++ {
				b = append(b, byte(cfi.DW_CFA_undefined))
				b = binary.AppendUvarint(b, uint64(r))
			}
			return b
		}()},
		{"truncated", []byte{byte(cfi.DW_CFA_def_cfa), 0x80}},
		{"unknown", []byte{0x3f}},
	} {
		s := &section{}
		cie := s.entry(func() {
			s.u32(0)
			s.u8(1)
			s.str("")
			s.uleb(1)
			s.sleb(-8)
			s.u8(16)
		})
		s.entry(func() {
			s.u32(uint32(len(s.b) - cie))
			s.u64(0x1000)
			s.u64(0x10)
			s.u8(tc.code...)
		})
		tab, err := cfi.Parse(s.b, cfi.Options{Kind: cfi.EHFrame})
		if err != nil {
			t.Fatal(err)
		}
		_, err = tab.Row(0x1008)
		var fe *cfi.FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: Row error %v, want a FormatError", tc.name, err)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
}
