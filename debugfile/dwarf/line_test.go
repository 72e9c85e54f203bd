package dwarf_test

// Hand-built line number programs. Expected rows follow the state machine
// of DWARF 5 section 6.2.2 and 6.2.5 (for DWARF 2–4, the same sections of
// those versions).

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/debugfile/dwarf"
)

// readLines builds a unit (DWARF version unitVersion, DW_AT_comp_dir
// compDir, DW_AT_stmt_list 0) over line and decodes its line table.
func readLines(t *testing.T, unitVersion uint16, compDir string, line []byte) (*dwarf.LineTable, error) {
	t.Helper()
	ab := (&asm{}).abbrevs(decl{abCU, dwarf.DW_TAG_compile_unit, false, []attr{
		{dwarf.DW_AT_comp_dir, dwarf.DW_FORM_string, 0},
		{dwarf.DW_AT_stmt_list, dwarf.DW_FORM_data4, 0},
	}})
	info := &asm{}
	info.unit(unitHeader{version: unitVersion, addrSize: 8}, func(a *asm) { a.uleb(abCU).str(compDir).u32(0) })
	d := mustNew(t, dwarf.Sections{Info: info.b, Abbrev: ab.b, Line: line})
	ui := readUnit(t, d, 0)
	var lt dwarf.LineTable
	err := d.ReadLineTable(ui, &lt)
	return &lt, err
}

func row(addr uint64, file, line, col uint32) dwarf.LineRow {
	return dwarf.LineRow{Addr: addr, File: file, Line: line, Column: col}
}

func endRow(addr uint64, file, line, col uint32) dwarf.LineRow {
	r := row(addr, file, line, col)
	r.EndSequence = true
	return r
}

func checkRows(t *testing.T, have, want []dwarf.LineRow) {
	t.Helper()
	if !reflect.DeepEqual(have, want) {
		t.Errorf("rows:\nhave %+v\nwant %+v", have, want)
	}
}

// TestLineVersions runs the same program under every header version.
func TestLineVersions(t *testing.T) {
	for _, v := range []uint16{2, 3, 4, 5} {
		for _, dwarf64 := range []bool{false, true} {
			t.Run(fmt.Sprintf("v%d-64=%v", v, dwarf64), func(t *testing.T) {
				h := lineHeader{version: v, addrSize: 8, minInst: 1, maxOps: 1, lineBase: -5, lineRange: 14, opcodeBase: 13,
					dirs: []string{"/inc", "rel"}, files: []lineFile{{"a.c", 0}, {"b.h", 1}, {"c.h", 2}, {"/abs/d.h", 1}}}
				if v >= 5 {
					// DWARF 5 numbers directories and files from 0, and
					// directory 0 is the compilation directory.
					h.dirs = []string{"/cd", "/inc", "rel"}
					h.files = []lineFile{{"a.c", 0}, {"a.c", 0}, {"b.h", 1}, {"c.h", 2}, {"/abs/d.h", 1}}
				}
				l := &asm{dwarf64: dwarf64}
				l.lineProgram(h, func(a *asm) {
					a.setAddress(0x1000, 8).copyRow()                    // row 1: 0x1000 a.c:1
					a.u8(13 + 2*14 + 5)                                  // special: addr += 2, line += 0
					a.setFile(2).advanceLine(9).setColumn(4).copyRow()   // 0x1002 b.h:10:4
					a.u8(dwarf.DW_LNS_const_add_pc).setFile(3).copyRow() // addr += 17
					a.u8(dwarf.DW_LNS_fixed_advance_pc).u16(0x100).extended(dwarf.DW_LNE_set_discriminator, 7).copyRow()
					a.setFile(4).advancePC(3).endSequence()
				})
				lt, err := readLines(t, 4, "/cd", l.b)
				if err != nil {
					t.Fatal(err)
				}
				if lt.Version != v {
					t.Errorf("version %d, want %d", lt.Version, v)
				}
				r := []dwarf.LineRow{
					row(0x1000, 1, 1, 0), row(0x1002, 1, 1, 0), row(0x1002, 2, 10, 4),
					row(0x1013, 3, 10, 4), row(0x1113, 3, 10, 4), endRow(0x1116, 4, 10, 4),
				}
				r[4].Discriminator = 7
				checkRows(t, lt.Rows, r)
				paths := map[uint32]string{1: "/cd/a.c", 2: "/inc/b.h", 3: "/cd/rel/c.h", 4: "/abs/d.h"}
				for i, want := range paths {
					if have, ok := lt.FilePath(uint64(i)); !ok || have != want {
						t.Errorf("FilePath(%d) = %q, %v; want %q", i, have, ok, want)
					}
				}
				bad := []uint64{5, 1 << 40}
				if v < 5 {
					bad = append(bad, 0)
				}
				for _, i := range bad {
					if have, ok := lt.FilePath(i); ok {
						t.Errorf("FilePath(%d) = %q, want none", i, have)
					}
				}
			})
		}
	}
}

// TestFilePath checks the joining rules of llvm-symbolizer's default
// (absolute) path style.
func TestFilePath(t *testing.T) {
	for _, tt := range []struct {
		compDir string
		dirs    []string
		file    lineFile
		want    string
	}{
		{"/cd", nil, lineFile{"a.c", 0}, "/cd/a.c"},
		{"/cd/", nil, lineFile{"a.c", 0}, "/cd/a.c"},
		{"/cd", []string{"sub/"}, lineFile{"a.c", 1}, "/cd/sub/a.c"},
		{"/cd", []string{"../up"}, lineFile{"a.c", 1}, "/cd/../up/a.c"},
		{"/cd", []string{"/usr/include"}, lineFile{"stdio.h", 1}, "/usr/include/stdio.h"},
		{"/cd", []string{"/usr/include"}, lineFile{"/abs.h", 1}, "/abs.h"},
		{"", nil, lineFile{"a.c", 0}, "a.c"},
		{"", []string{"rel"}, lineFile{"a.c", 1}, "rel/a.c"},
		{`C:\src`, nil, lineFile{"a.c", 0}, `C:\src/a.c`},
		{"/cd", []string{`D:\inc`}, lineFile{"a.h", 1}, `D:\inc/a.h`},
		{"/cd", nil, lineFile{`\\server\a.c`, 0}, `\\server\a.c`},
		{"/cd", nil, lineFile{"a.c", 7}, "/cd/a.c"}, // directory out of range: none
	} {
		l := &asm{}
		l.lineProgram(lineHeader{version: 4, minInst: 1, maxOps: 1, lineBase: -5, lineRange: 14, opcodeBase: 13, dirs: tt.dirs, files: []lineFile{tt.file}}, func(*asm) {})
		lt, err := readLines(t, 4, tt.compDir, l.b)
		if err != nil {
			t.Fatal(err)
		}
		if have, ok := lt.FilePath(1); !ok || have != tt.want {
			t.Errorf("comp dir %q, dirs %q, file %+v: FilePath = %q, %v; want %q", tt.compDir, tt.dirs, tt.file, have, ok, tt.want)
		}
	}
}

// TestDefineFile adds a file in the program (DW_LNE_define_file, DWARF 2–4).
func TestDefineFile(t *testing.T) {
	l := &asm{}
	l.lineProgram(lineHeader{version: 3, minInst: 1, lineBase: -5, lineRange: 14, opcodeBase: 13, dirs: []string{"/inc"}, files: []lineFile{{"a.c", 0}}}, func(a *asm) {
		var op asm
		op.str("gen.c").uleb(1).uleb(0).uleb(0)
		a.extended(dwarf.DW_LNE_define_file, op.b...)
		a.setAddress(0x10, 8).setFile(2).copyRow().advancePC(1).endSequence()
	})
	lt, err := readLines(t, 3, "/cd", l.b)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, lt.Rows, []dwarf.LineRow{row(0x10, 2, 1, 0), endRow(0x11, 2, 1, 0)})
	if have, ok := lt.FilePath(2); !ok || have != "/inc/gen.c" {
		t.Errorf("FilePath(2) = %q, %v; want /inc/gen.c", have, ok)
	}
}

// TestVLIW advances addresses by operation index when maximum_operations_per_instruction > 1
// (DWARF 5 section 6.2.5.1): the address moves by min_inst_length for
// every max_ops operations.
func TestVLIW(t *testing.T) {
	l := &asm{}
	l.lineProgram(lineHeader{version: 4, minInst: 8, maxOps: 3, lineBase: 0, lineRange: 4, opcodeBase: 13}, func(a *asm) {
		a.setAddress(0x100, 8)
		a.u8(13 + 1*4) // op advance 1: op index 1, address unchanged
		a.u8(13 + 1*4) // op index 2
		a.u8(13 + 1*4) // op index 0, address + 8
		a.advancePC(7) // op index 1, address + 2*8
		a.u8(dwarf.DW_LNS_copy)
		a.u8(dwarf.DW_LNS_fixed_advance_pc).u16(3) // address + 3, op index 0
		a.u8(13 + 2*4 + 1)                         // op index 2, line + 1
		a.endSequence()
	})
	lt, err := readLines(t, 4, "/", l.b)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, lt.Rows, []dwarf.LineRow{
		row(0x100, 1, 1, 0), row(0x100, 1, 1, 0), row(0x108, 1, 1, 0), row(0x118, 1, 1, 0),
		row(0x11b, 1, 2, 0), endRow(0x11b, 1, 2, 0),
	})
}

// TestOpcodeBase changes the number of standard opcodes: unknown ones are
// skipped using standard_opcode_lengths, and with a small opcode_base the
// higher standard opcode numbers are special opcodes.
func TestOpcodeBase(t *testing.T) {
	t.Run("extra standard opcodes", func(t *testing.T) {
		lens := append(append([]byte(nil), standardLengths...), 2, 0) // opcodes 13 and 14
		l := &asm{}
		l.lineProgram(lineHeader{version: 4, minInst: 1, maxOps: 1, lineBase: -3, lineRange: 12, opcodeBase: 15, stdLens: lens}, func(a *asm) {
			a.setAddress(0x40, 8)
			a.u8(13).uleb(1 << 20).uleb(5) // two operands skipped
			a.u8(14)
			a.u8(15 + 3 + 12*2) // special: line += 0, addr += 2
			a.endSequence()
		})
		lt, err := readLines(t, 4, "/", l.b)
		if err != nil {
			t.Fatal(err)
		}
		checkRows(t, lt.Rows, []dwarf.LineRow{row(0x42, 1, 1, 0), endRow(0x42, 1, 1, 0)})
	})
	t.Run("opcode_base 10", func(t *testing.T) {
		l := &asm{}
		l.lineProgram(lineHeader{version: 4, minInst: 1, maxOps: 1, lineBase: 0, lineRange: 10, opcodeBase: 10, stdLens: standardLengths[:9]}, func(a *asm) {
			a.setAddress(0x40, 8)
			a.u8(dwarf.DW_LNS_set_prologue_end) // 10: special, line += 0, addr += 0
			a.u8(dwarf.DW_LNS_set_isa)          // 12: special, line += 2
			a.endSequence()
		})
		lt, err := readLines(t, 4, "/", l.b)
		if err != nil {
			t.Fatal(err)
		}
		checkRows(t, lt.Rows, []dwarf.LineRow{row(0x40, 1, 1, 0), row(0x40, 1, 3, 0), endRow(0x40, 1, 3, 0)})
	})
	t.Run("opcode_base 1", func(t *testing.T) {
		l := &asm{}
		l.lineProgram(lineHeader{version: 4, minInst: 1, maxOps: 1, lineBase: 0, lineRange: 4, opcodeBase: 1, stdLens: []byte{}}, func(a *asm) {
			a.setAddress(0x40, 8)
			a.u8(1 + 4 + 1) // special: addr += 1, line += 1
			a.endSequence()
		})
		lt, err := readLines(t, 4, "/", l.b)
		if err != nil {
			t.Fatal(err)
		}
		checkRows(t, lt.Rows, []dwarf.LineRow{row(0x41, 1, 2, 0), endRow(0x41, 1, 2, 0)})
	})
}

// TestLineRangeZero: with line_range 0 a special opcode cannot be split
// into address and line advances. The reader appends a row without
// advancing, and terminates.
func TestLineRangeZero(t *testing.T) {
	l := &asm{}
	l.lineProgram(lineHeader{version: 4, minInst: 1, maxOps: 1, lineBase: -5, lineRange: 0, opcodeBase: 13}, func(a *asm) {
		a.setAddress(0x40, 8).u8(0x20).u8(dwarf.DW_LNS_const_add_pc).u8(0xff).endSequence()
	})
	lt, err := readLines(t, 4, "/", l.b)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, lt.Rows, []dwarf.LineRow{row(0x40, 1, 1, 0), row(0x40, 1, 1, 0), endRow(0x40, 1, 1, 0)})
}

// TestSetAddressSizes reads DW_LNE_set_address operands whose size differs
// from the unit's address size, as the opcode length says.
func TestSetAddressSizes(t *testing.T) {
	l := &asm{}
	l.lineProgram(lineHeader{version: 4, minInst: 4, maxOps: 1, lineBase: -5, lineRange: 14, opcodeBase: 13}, func(a *asm) {
		a.setAddress(0x12345678, 4).copyRow().advancePC(2).copyRow()
		a.setAddress(0x0102030405060708, 8).copyRow()
		a.setAddress(0xabcd, 2).endSequence()
	})
	lt, err := readLines(t, 4, "/", l.b)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, lt.Rows, []dwarf.LineRow{row(0x12345678, 1, 1, 0), row(0x12345680, 1, 1, 0), row(0x0102030405060708, 1, 1, 0), endRow(0xabcd, 1, 1, 0)})
}

// TestLineErrors checks that malformed tables are errors naming
// .debug_line and an offset.
func TestLineErrors(t *testing.T) {
	good := &asm{}
	good.lineProgram(lineHeader{version: 4, minInst: 1, maxOps: 1, lineBase: -5, lineRange: 14, opcodeBase: 13}, func(a *asm) {
		a.setAddress(0x40, 8).copyRow()
	})
	huge := &asm{}
	huge.lineProgram(lineHeader{version: 4, minInst: 1, maxOps: 1, lineBase: -5, lineRange: 14, opcodeBase: 13}, func(a *asm) {
		a.u8(0).uleb(1000).u8(1)
	})
	for _, tt := range []struct {
		name string
		line []byte
		want string
	}{
		{"empty section", nil, "decoding .debug_line at offset 0x0: DW_AT_stmt_list of unit at 0x0 beyond section end 0x0"},
		{"length beyond section", append([]byte{0xff, 0, 0, 0}, good.b[4:]...), "decoding .debug_line at offset 0x0: unit length 0xff exceeds section"},
		{"version 1", append(append([]byte(nil), good.b[:4]...), append([]byte{1, 0}, good.b[6:]...)...), "unsupported line table version 1"},
		{"version 6", append(append([]byte(nil), good.b[:4]...), append([]byte{6, 0}, good.b[6:]...)...), "unsupported line table version 6"},
		{"truncated header", good.b[:12], "decoding .debug_line at offset 0x"},
		{"extended opcode too long", huge.b, "decoding .debug_line at offset 0x"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			line := tt.line
			if tt.name == "truncated header" {
				line = append([]byte{8, 0, 0, 0}, line[4:]...)
			}
			_, err := readLines(t, 4, "/", line)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadLineTable = %v, want error containing %q", err, tt.want)
			}
		})
	}
}
