package cfi_test

import (
	"debug/elf"
	"errors"
	"testing"

	"github.com/backtrail/backtrail/debugfile/cfi"
)

// FuzzParse parses arbitrary sections of both kinds and checks that every
// FDE found and every row computed is consistent: rows contain the PC they
// were asked for and lie inside their FDE, rules are sorted and bounded,
// lookups find an FDE that covers the PC, and errors are FormatErrors or
// ErrNoFDE.
func FuzzParse(f *testing.F) {
	for _, p := range []string{"/proc/self/exe"} {
		if ef, err := elf.Open(p); err == nil {
			if s := ef.Section(".eh_frame"); s != nil {
				if b, err := s.Data(); err == nil {
					f.Add(b[:min(len(b), 4096)], false, uint64(s.Addr))
				}
			}
			ef.Close()
		}
	}
	s, _, _ := syntheticEHFrame()
	f.Add(s.b, false, s.addr)
	f.Add([]byte{0x14, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 0, 1, 0x78, 0x10, 0x0c, 7, 8, 0x90, 1, 0, 0, 0, 0}, true, uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, debugFrame bool, addr uint64) {
		opts := cfi.Options{Kind: cfi.EHFrame, Addr: addr}
		if debugFrame {
			opts.Kind = cfi.DebugFrame
		}
		tab, err := cfi.Parse(data, opts)
		check := func(err error) {
			t.Helper()
			var fe *cfi.FormatError
			if err != nil && !errors.As(err, &fe) && !errors.Is(err, cfi.ErrNoFDE) {
				t.Fatalf("error %v (%T) is neither a FormatError nor ErrNoFDE", err, err)
			}
		}
		if err != nil {
			check(err)
			return
		}
		check(tab.ScanErr)
		n := 0
		for fde, err := range tab.All() {
			if n++; n > 1000 {
				break
			}
			if err != nil {
				check(err)
				continue
			}
			if fde.End <= fde.Begin {
				continue
			}
			for _, pc := range []uint64{fde.Begin, fde.Begin + (fde.End-fde.Begin)/2, fde.End - 1} {
				row, err := fde.Row(pc)
				if err != nil {
					check(err)
					continue
				}
				if pc < row.Loc || pc >= row.End || row.Loc < fde.Begin || row.End > fde.End {
					t.Fatalf("Row(%#x) = [%#x,%#x) in FDE [%#x,%#x)", pc, row.Loc, row.End, fde.Begin, fde.End)
				}
				if len(row.Rules) > cfi.MaxRules {
					t.Fatalf("%d rules", len(row.Rules))
				}
				for i := 1; i < len(row.Rules); i++ {
					if row.Rules[i-1].Reg >= row.Rules[i].Reg {
						t.Fatalf("rules not sorted: %+v", row.Rules)
					}
				}
				if g, err := tab.FDE(pc); err == nil && (pc < g.Begin || pc >= g.End) {
					t.Fatalf("FDE(%#x) = [%#x,%#x)", pc, g.Begin, g.End)
				} else {
					check(err)
				}
			}
		}
	})
}
