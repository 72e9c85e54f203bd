package cfi

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"

	"github.com/backtrail/backtrail/internal/bin"
)

// Bounds on what evaluating one FDE may build.
const (
	MaxRules      = 128 // distinct registers with a rule in one row
	MaxStateDepth = 64  // nested DW_CFA_remember_state
)

// CFARule computes the canonical frame address: the value of register Reg
// plus Offset, or, when Expr is not nil, the value of the DWARF expression
// Expr (DW_CFA_def_cfa_expression).
type CFARule struct {
	Reg    uint64
	Offset int64
	Expr   []byte
}

// RegRule says how to recover the caller's value of register Reg.
type RegRule struct {
	Reg      uint64
	Kind     RuleKind
	Offset   int64  // RuleOffset, RuleValOffset: relative to the CFA
	Register uint64 // RuleRegister: the register holding the value
	Expr     []byte // RuleExpression, RuleValExpression
}

// Row is the unwind row in force at a program counter.
type Row struct {
	Loc, End uint64 // the PCs where the row applies: [Loc, End)
	FDE      *FDE
	CFA      CFARule
	Rules    []RegRule // sorted by Reg; registers without a rule are absent
	RAReg    uint64    // the return address column
	Signal   bool      // the function is a signal trampoline (CIE augmentation S)
	ArgsSize uint64    // DW_CFA_GNU_args_size
	// RASigned says the return address is signed (AArch64 pointer
	// authentication: an odd number of DW_CFA_AARCH64_negate_ra_state);
	// the unwinder strips the signature.
	RASigned bool
}

// Rule returns the rule for reg; Kind is RuleUnspecified when the row has
// none.
func (r *Row) Rule(reg uint64) RegRule {
	i, ok := slices.BinarySearchFunc(r.Rules, reg, byReg)
	if ok {
		return r.Rules[i]
	}
	return RegRule{Reg: reg}
}

// Row returns the unwind row in force at pc in the FDE that covers it.
func (t *Table) Row(pc uint64) (*Row, error) {
	f, err := t.FDE(pc)
	if err != nil {
		return nil, err
	}
	return f.Row(pc)
}

// byReg orders rules by register, for binary search.
func byReg(x RegRule, reg uint64) int { return cmp.Compare(x.Reg, reg) }

// state is the register table while instructions run.
type state struct {
	cfa      CFARule
	rules    []RegRule
	argsSize uint64
	raSigned bool
}

func (s *state) clone() state {
	c := *s
	c.rules = slices.Clone(s.rules)
	return c
}

func (s *state) set(r RegRule) error {
	i, ok := slices.BinarySearchFunc(s.rules, r.Reg, byReg)
	if ok {
		s.rules[i] = r
		return nil
	}
	if len(s.rules) >= MaxRules {
		return fmt.Errorf("more than %d register rules", MaxRules)
	}
	s.rules = slices.Insert(s.rules, i, r)
	return nil
}

// restore sets reg's rule to its rule in init (removing it when init has
// none).
func (s *state) restore(reg uint64, init *state) error {
	if init != nil {
		for _, r := range init.rules {
			if r.Reg == reg {
				return s.set(r)
			}
		}
	}
	s.rules = slices.DeleteFunc(s.rules, func(x RegRule) bool { return x.Reg == reg })
	return nil
}

// Row returns the unwind row in force at pc, which should lie in [Begin,
// End). Cost: linear in the FDE's and its CIE's instructions.
func (f *FDE) Row(pc uint64) (*Row, error) {
	if pc < f.Begin || pc >= f.End {
		return nil, ErrNoFDE
	}
	m := machine{f: f, t: f.t, loc: f.Begin}
	if _, _, err := m.run(f.CIE.Initial, f.CIE.initOff, nil, ^uint64(0), false); err != nil {
		return nil, err
	}
	init := m.st.clone()
	// A CIE's location ops have no function to apply to: each FDE's rows
	// start at its own Begin (libunwind runs the two programs the same way).
	m.stack, m.loc = nil, f.Begin
	end, stopped, err := m.run(f.Instructions, f.instOff, &init, pc, true)
	if err != nil {
		return nil, err
	}
	if !stopped || end > f.End {
		end = f.End
	}
	return &Row{
		Loc: m.loc, End: end, FDE: f, CFA: m.st.cfa, Rules: slices.Clip(m.st.rules), RAReg: f.CIE.RAReg,
		Signal: f.CIE.Signal, ArgsSize: m.st.argsSize, RASigned: m.st.raSigned,
	}, nil
}

type machine struct {
	f     *FDE
	t     *Table
	st    state
	stack []state
	loc   uint64
}

// run executes code (found at section offset base). With limit, it stops
// before an advance past pc and returns the location it would have
// advanced to.
func (m *machine) run(code []byte, base uint64, init *state, pc uint64, limit bool) (next uint64, stopped bool, err error) {
	t, c := m.t, m.f.CIE
	b := bin.New(t.name, base, code, t.opts.BigEndian)
	fail := func(format string, args ...any) (uint64, bool, error) {
		return 0, false, &FormatError{t.name, b.Off(), fmt.Sprintf(format, args...)}
	}
	advance := func(delta uint64) bool {
		hi, lo := bits.Mul64(delta, c.CodeAlign)
		n, carry := bits.Add64(m.loc, lo, 0)
		if hi != 0 || carry != 0 {
			n = ^uint64(0) // beyond the address space: past any pc
		}
		if limit && n > pc {
			next = n
			return true
		}
		m.loc = n
		return false
	}
	setRule := func(r RegRule) error {
		if err := m.st.set(r); err != nil {
			return &FormatError{t.name, b.Off(), err.Error()}
		}
		return nil
	}
	for b.Len() > 0 {
		opOff := b.Off()
		op := b.U8()
		operand := uint64(op & 0x3f)
		switch Op(op & 0xc0) {
		case DW_CFA_advance_loc:
			if advance(operand) {
				return next, true, nil
			}
			continue
		case DW_CFA_offset:
			if err := setRule(RegRule{Reg: operand, Kind: RuleOffset, Offset: int64(b.ULEB()) * c.DataAlign}); err != nil {
				return 0, false, err
			}
			continue
		case DW_CFA_restore:
			if err := m.st.restore(operand, init); err != nil {
				return fail("%v", err)
			}
			continue
		}
		switch Op(op) {
		case DW_CFA_nop:
		case DW_CFA_set_loc:
			var n uint64
			if t.opts.Kind == DebugFrame {
				n = b.Uint(int(c.AddrSize))
			} else {
				n, _ = t.readPtr(&b, c.FDEEnc, t.opts.Addr+base, m.f.Begin, t.opts.DataAddr)
			}
			if b.Err() != nil {
				break
			}
			if n < m.loc {
				return fail("DW_CFA_set_loc to %#x, before the current location %#x", n, m.loc)
			}
			if limit && n > pc {
				return n, true, nil
			}
			m.loc = n
		case DW_CFA_advance_loc1:
			if d := uint64(b.U8()); b.Err() == nil && advance(d) {
				return next, true, nil
			}
		case DW_CFA_advance_loc2:
			if d := uint64(b.U16()); b.Err() == nil && advance(d) {
				return next, true, nil
			}
		case DW_CFA_advance_loc4:
			if d := uint64(b.U32()); b.Err() == nil && advance(d) {
				return next, true, nil
			}
		case DW_CFA_MIPS_advance_loc8:
			if d := b.U64(); b.Err() == nil && advance(d) {
				return next, true, nil
			}
		case DW_CFA_offset_extended:
			reg := b.ULEB()
			err = setRule(RegRule{Reg: reg, Kind: RuleOffset, Offset: int64(b.ULEB()) * c.DataAlign})
		case DW_CFA_offset_extended_sf:
			reg := b.ULEB()
			err = setRule(RegRule{Reg: reg, Kind: RuleOffset, Offset: b.SLEB() * c.DataAlign})
		case DW_CFA_GNU_negative_offset_extended:
			reg := b.ULEB()
			err = setRule(RegRule{Reg: reg, Kind: RuleOffset, Offset: -int64(b.ULEB()) * c.DataAlign})
		case DW_CFA_val_offset:
			reg := b.ULEB()
			err = setRule(RegRule{Reg: reg, Kind: RuleValOffset, Offset: int64(b.ULEB()) * c.DataAlign})
		case DW_CFA_val_offset_sf:
			reg := b.ULEB()
			err = setRule(RegRule{Reg: reg, Kind: RuleValOffset, Offset: b.SLEB() * c.DataAlign})
		case DW_CFA_restore_extended:
			reg := b.ULEB()
			if b.Err() == nil {
				err = m.st.restore(reg, init)
			}
		case DW_CFA_undefined:
			err = setRule(RegRule{Reg: b.ULEB(), Kind: RuleUndefined})
		case DW_CFA_same_value:
			err = setRule(RegRule{Reg: b.ULEB(), Kind: RuleSameValue})
		case DW_CFA_register:
			reg := b.ULEB()
			err = setRule(RegRule{Reg: reg, Kind: RuleRegister, Register: b.ULEB()})
		case DW_CFA_remember_state:
			if len(m.stack) >= MaxStateDepth {
				return fail("more than %d nested DW_CFA_remember_state", MaxStateDepth)
			}
			m.stack = append(m.stack, m.st.clone())
		case DW_CFA_restore_state:
			if len(m.stack) == 0 {
				return fail("DW_CFA_restore_state without DW_CFA_remember_state")
			}
			// The CFA rule is restored too (DWARF 5 §6.4.2.4: the whole row
			// is pushed); args_size and the RA signing state are not
			// register rules and stay as they are, as libgcc keeps them.
			top := m.stack[len(m.stack)-1]
			m.stack = m.stack[:len(m.stack)-1]
			top.argsSize, top.raSigned = m.st.argsSize, m.st.raSigned
			m.st = top
		case DW_CFA_def_cfa:
			m.st.cfa = CFARule{Reg: b.ULEB(), Offset: int64(b.ULEB())}
		case DW_CFA_def_cfa_sf:
			reg := b.ULEB()
			m.st.cfa = CFARule{Reg: reg, Offset: b.SLEB() * c.DataAlign}
		case DW_CFA_def_cfa_register:
			m.st.cfa.Reg = b.ULEB()
			m.st.cfa.Expr = nil
		case DW_CFA_def_cfa_offset:
			m.st.cfa.Offset = int64(b.ULEB())
			m.st.cfa.Expr = nil
		case DW_CFA_def_cfa_offset_sf:
			m.st.cfa.Offset = b.SLEB() * c.DataAlign
			m.st.cfa.Expr = nil
		case DW_CFA_def_cfa_expression:
			n := b.ULEB()
			if b.Err() == nil && n > uint64(b.Len()) {
				return fail("expression length %#x past the end of the instructions", n)
			}
			e := b.Bytes(int(n))
			m.st.cfa = CFARule{Expr: e[:len(e):len(e)]}
			if e == nil {
				m.st.cfa.Expr = []byte{}
			}
		case DW_CFA_expression, DW_CFA_val_expression:
			reg := b.ULEB()
			n := b.ULEB()
			if b.Err() == nil && n > uint64(b.Len()) {
				return fail("expression length %#x past the end of the instructions", n)
			}
			e := b.Bytes(int(n))
			if e == nil {
				e = []byte{}
			}
			k := RuleExpression
			if Op(op) == DW_CFA_val_expression {
				k = RuleValExpression
			}
			err = setRule(RegRule{Reg: reg, Kind: k, Expr: e})
		case DW_CFA_GNU_args_size:
			m.st.argsSize = b.ULEB()
		case DW_CFA_AARCH64_negate_ra_state:
			m.st.raSigned = !m.st.raSigned
		default:
			return 0, false, &FormatError{t.name, opOff, fmt.Sprintf("unknown call frame instruction %v", Op(op))}
		}
		if err != nil {
			return 0, false, err
		}
	}
	if err := b.Err(); err != nil {
		return 0, false, formatError(t.name, err)
	}
	return 0, false, nil
}
