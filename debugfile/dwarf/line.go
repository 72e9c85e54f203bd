package dwarf

import (
	"fmt"
	"slices"
	"strings"

	"github.com/backtrail/backtrail/internal/bin"
)

// LineRow is one row of a line number matrix (DWARF 5 section 6.2.2).
type LineRow struct {
	Addr          uint64
	File          uint32 // file index as the program uses it (1-based before DWARF 5)
	Line          uint32
	Column        uint32
	Discriminator uint32
	EndSequence   bool
}

// LineTable is a unit's decoded line number program. A LineTable can be
// reused across ReadLineTable calls to recycle its slices.
type LineTable struct {
	Version uint16
	Rows    []LineRow

	program    []byte
	programOff uint64 // within .debug_line
	compDir    []byte
	dirs       [][]byte
	files      []lineFile
}

type lineFile struct {
	name []byte
	dir  uint64
}

// maxLineTableEntries bounds directory and file tables: a count read from
// the header is checked against the bytes left (each entry needs at least
// one byte) and against this.
const maxLineTableEntries = 1 << 24

// ReadLineTable decodes the line number program of the unit described by ui
// into lt. Cost is linear in the program's size.
func (d *Data) ReadLineTable(ui *UnitInfo, lt *LineTable) error {
	*lt = LineTable{Rows: lt.Rows[:0], dirs: lt.dirs[:0], files: lt.files[:0], compDir: ui.CompDir}
	if !ui.HasStmtList {
		return nil
	}
	sec := d.sec.Line
	off := ui.StmtList
	if off >= uint64(len(sec)) {
		return &bin.DecodeError{Name: ".debug_line", Offset: off, Err: fmt.Sprintf("DW_AT_stmt_list of unit at %#x beyond section end %#x", ui.Unit.Offset, len(sec))}
	}
	b := bin.New(".debug_line", off, sec[off:], d.big)
	length := uint64(b.U32())
	dwarf64 := false
	if length == 0xffffffff {
		dwarf64 = true
		length = b.U64()
	}
	if b.Err() != nil || length > uint64(b.Len()) {
		return &bin.DecodeError{Name: ".debug_line", Offset: off, Err: fmt.Sprintf("unit length %#x exceeds section", length)}
	}
	endPos := b.Pos() + int(length)
	lt.program, lt.programOff = sec[off:off+uint64(endPos)], off
	b = bin.New(".debug_line", off, lt.program, d.big)
	b.Seek(endPos - int(length))
	lt.Version = b.U16()
	if lt.Version < 2 || lt.Version > 5 {
		return &bin.DecodeError{Name: ".debug_line", Offset: off, Err: fmt.Sprintf("unsupported line table version %d", lt.Version)}
	}
	addrSize := ui.Unit.AddrSize
	if lt.Version >= 5 {
		addrSize = b.U8()
		b.U8() // segment selector size
	}
	var headerLen uint64
	if dwarf64 {
		headerLen = b.U64()
	} else {
		headerLen = uint64(b.U32())
	}
	progPos := b.Pos() + int(min(headerLen, uint64(b.Len())))
	minInst := uint64(b.U8())
	maxOps := uint64(1)
	if lt.Version >= 4 {
		maxOps = uint64(b.U8())
	}
	if maxOps == 0 {
		maxOps = 1
	}
	defaultIsStmt := b.U8() != 0
	_ = defaultIsStmt
	lineBase := int64(int8(b.U8()))
	lineRange := uint64(b.U8())
	opcodeBase := b.U8()
	stdLens := b.Bytes(int(max(opcodeBase, 1)) - 1)
	if b.Err() != nil {
		return b.Err()
	}

	r := &entryReader{d: d, u: ui.Unit, sec: ".debug_line", data: sec, pos: int(off) + b.Pos(), end: int(off) + progPos,
		big: d.big, f: format{addrSize: addrSize, dwarf64: dwarf64, version: lt.Version}}
	r.strOffBase, r.addrBase = ui.r.strOffBase, ui.r.addrBase
	if lt.Version >= 5 {
		if err := lt.readV5Entries(r); err != nil {
			return err
		}
	} else {
		lt.readV4Entries(r)
	}
	if r.err != nil {
		return r.err
	}
	b.Seek(progPos)
	// Rows take about three bytes of program each. Reserving a fresh
	// array up front saves the copies of repeated doubling on big units.
	if n := (endPos - progPos) / 3; cap(lt.Rows) < n {
		lt.Rows = make([]LineRow, 0, n)
	}
	return lt.run(&b, endPos, addrSize, minInst, maxOps, lineBase, lineRange, opcodeBase, stdLens)
}

func (lt *LineTable) readV4Entries(r *entryReader) {
	for r.pos < r.end && r.err == nil {
		s := r.read(DW_FORM_string, 0)
		if len(s.b) == 0 {
			break
		}
		lt.dirs = append(lt.dirs, s.b)
	}
	for r.pos < r.end && r.err == nil {
		s := r.read(DW_FORM_string, 0)
		if len(s.b) == 0 {
			break
		}
		dir := r.uleb()
		r.uleb() // modification time
		r.uleb() // length
		lt.files = append(lt.files, lineFile{name: s.b, dir: dir})
	}
}

func (lt *LineTable) readV5Entries(r *entryReader) error {
	for table := 0; table < 2; table++ {
		nfmt := int(r.u8())
		var fmtBuf [8][2]uint64
		fmts := fmtBuf[:0]
		for i := 0; i < nfmt && r.err == nil; i++ {
			fmts = append(fmts, [2]uint64{r.uleb(), r.uleb()})
		}
		n := r.uleb()
		if r.err != nil {
			return r.err
		}
		if n > uint64(r.end-r.pos) || n > maxLineTableEntries || nfmt == 0 && n > 0 {
			return &bin.DecodeError{Name: ".debug_line", Offset: uint64(r.pos), Err: fmt.Sprintf("entry count %d exceeds header", n)}
		}
		// n is bounded by the bytes left, so reserving it is safe and
		// saves the copies of growing entry by entry.
		if table == 0 {
			lt.dirs = slices.Grow(lt.dirs, int(n))
		} else {
			lt.files = slices.Grow(lt.files, int(n))
		}
		for i := uint64(0); i < n && r.err == nil; i++ {
			var e lineFile
			for _, f := range fmts {
				if f[1] > 0xffff || !knownForm(Form(f[1])) {
					return &bin.DecodeError{Name: ".debug_line", Offset: uint64(r.pos), Err: fmt.Sprintf("unknown form %#x in entry format", f[1])}
				}
				v := r.read(Form(f[1]), 0)
				switch f[0] {
				case DW_LNCT_path:
					e.name = r.str(v)
				case DW_LNCT_directory_index:
					e.dir, _ = constant(v)
				}
			}
			if table == 0 {
				lt.dirs = append(lt.dirs, e.name)
			} else {
				lt.files = append(lt.files, e)
			}
		}
	}
	return r.err
}

// run executes the line number program, appending rows.
func (lt *LineTable) run(b *bin.Buf, end int, addrSize uint8, minInst, maxOps uint64, lineBase int64, lineRange uint64, opcodeBase uint8, stdLens []byte) error {
	var (
		addr    uint64
		opIndex uint64
		file    uint64 = 1
		line    int64  = 1
		column  uint64
		discr   uint64
	)
	reset := func() {
		addr, opIndex, file, line, column, discr = 0, 0, 1, 1, 0, 0
	}
	emit := func(endSeq bool) {
		lt.Rows = append(lt.Rows, LineRow{Addr: addr, File: uint32(min(file, 0xffffffff)), Line: uint32(line),
			Column: uint32(min(column, 0xffffffff)), Discriminator: uint32(min(discr, 0xffffffff)), EndSequence: endSeq})
		discr = 0
	}
	advance := func(opAdvance uint64) {
		if maxOps == 1 {
			addr += minInst * opAdvance
			return
		}
		addr += minInst * ((opIndex + opAdvance) / maxOps)
		opIndex = (opIndex + opAdvance) % maxOps
	}
	for b.Pos() < end && b.Err() == nil {
		op := b.U8()
		if op >= opcodeBase {
			adj := uint64(op - opcodeBase)
			if lineRange != 0 {
				advance(adj / lineRange)
				line += lineBase + int64(adj%lineRange)
			}
			emit(false)
			continue
		}
		switch op {
		case 0:
			n := b.ULEB()
			if n == 0 || n > uint64(b.Len()) {
				if b.Err() == nil && n > uint64(b.Len()) {
					b.Errorf("extended opcode length %d exceeds program", n)
				}
				continue
			}
			next := b.Pos() + int(n)
			switch b.U8() {
			case DW_LNE_end_sequence:
				emit(true)
				reset()
			case DW_LNE_set_address:
				// The operand size follows from the opcode length, which
				// also copes with producers whose address size differs
				// from the unit's.
				switch n - 1 {
				case 1, 2, 4, 8:
					addr = b.Uint(int(n - 1))
				default:
					addr = b.Uint(int(addrSize))
				}
				opIndex = 0
			case DW_LNE_define_file:
				name := b.CString()
				dir := b.ULEB()
				lt.files = append(lt.files, lineFile{name: name, dir: dir})
			case DW_LNE_set_discriminator:
				discr = b.ULEB()
			}
			b.Seek(next)
		case DW_LNS_copy:
			emit(false)
		case DW_LNS_advance_pc:
			advance(b.ULEB())
		case DW_LNS_advance_line:
			line += b.SLEB()
		case DW_LNS_set_file:
			file = b.ULEB()
		case DW_LNS_set_column:
			column = b.ULEB()
		case DW_LNS_negate_stmt, DW_LNS_set_basic_block, DW_LNS_set_prologue_end, DW_LNS_set_epilogue_begin:
		case DW_LNS_const_add_pc:
			if lineRange != 0 {
				advance(uint64(255-opcodeBase) / lineRange)
			}
		case DW_LNS_fixed_advance_pc:
			addr += uint64(b.U16())
			opIndex = 0
		case DW_LNS_set_isa:
			b.ULEB()
		default:
			// An opcode this version does not define: skip its operands
			// as the header says.
			if int(op) <= len(stdLens) {
				for i := 0; i < int(stdLens[op-1]); i++ {
					b.ULEB()
				}
			}
		}
	}
	return b.Err()
}

// Program returns the bytes of the line number program read, header
// included: a view into .debug_line.
func (lt *LineTable) Program() []byte { return lt.program }

// ProgramOffset returns the offset of Program within .debug_line.
func (lt *LineTable) ProgramOffset() uint64 { return lt.programOff }

// NumFiles returns one more than the largest valid file index.
func (lt *LineTable) NumFiles() int {
	if lt.Version >= 5 {
		return len(lt.files)
	}
	return len(lt.files) + 1
}

// FilePath returns the path of file index i the way llvm-symbolizer prints
// it by default (an absolute path when the table allows): the compilation
// directory, the file's include directory and its name joined, without
// normalizing "..". It reports false when i names no file.
func (lt *LineTable) FilePath(i uint64) (string, bool) {
	var f *lineFile
	if lt.Version >= 5 {
		if i >= uint64(len(lt.files)) {
			return "", false
		}
		f = &lt.files[i]
	} else {
		if i == 0 || i > uint64(len(lt.files)) {
			return "", false
		}
		f = &lt.files[i-1]
	}
	if f.name == nil {
		return "", false
	}
	if isAbs(f.name) {
		return string(f.name), true
	}
	var dir []byte
	if lt.Version >= 5 {
		if f.dir < uint64(len(lt.dirs)) {
			dir = lt.dirs[f.dir]
		}
	} else if f.dir > 0 && f.dir <= uint64(len(lt.dirs)) {
		dir = lt.dirs[f.dir-1]
	}
	var sb strings.Builder
	sb.Grow(len(lt.compDir) + len(dir) + len(f.name) + 2)
	if len(lt.compDir) > 0 && !isAbs(dir) {
		appendPath(&sb, lt.compDir)
	}
	appendPath(&sb, dir)
	appendPath(&sb, f.name)
	return sb.String(), true
}

// isAbs reports whether p is absolute on POSIX or Windows, as debug
// information from either may be read here.
func isAbs(p []byte) bool {
	if len(p) == 0 {
		return false
	}
	if p[0] == '/' || p[0] == '\\' {
		return true
	}
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		(p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z')
}

// appendPath joins c to the path in sb with one '/' between them, dropping
// c's leading separators when sb already ends in one (the rule of LLVM's
// sys::path::append).
func appendPath(sb *strings.Builder, c []byte) {
	if len(c) == 0 {
		return
	}
	cur := sb.String()
	if len(cur) > 0 && cur[len(cur)-1] == '/' {
		for len(c) > 0 && c[0] == '/' {
			c = c[1:]
		}
	} else if len(cur) > 0 && c[0] != '/' {
		sb.WriteByte('/')
	}
	sb.Write(c)
}
