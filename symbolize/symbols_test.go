package symbolize_test

import (
	"slices"
	"testing"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/symbolize"
)

// TestSymbolCover checks which symbol answers for which addresses: of the
// symbols at one address the largest, then the last listed; a symbol of
// size 0 reaches the next one; otherwise the input order does not matter.
func TestSymbolCover(t *testing.T) {
	syms := []debugfile.Symbol{
		{Name: "e", Addr: 0x300, Size: 8},
		{Name: "a", Addr: 0x100, Size: 0x10},
		{Name: "b", Addr: 0x100, Size: 0x20},
		{Name: "top", Addr: ^uint64(0) - 0xf, Size: 0x100}, // its end wraps around
		{Name: "c", Addr: 0x100, Size: 0x20},               // b's address and size
		{Name: "d", Addr: 0x200},                           // size 0
		{Name: "inner", Addr: 0x110, Size: 4},
		{Name: "b2", Addr: 0x100, Size: 0x18},
	}
	want := func(at100 string) []symbolize.CoverRange {
		return []symbolize.CoverRange{
			{Lo: 0x100, Hi: 0x110, Name: at100},
			{Lo: 0x110, Hi: 0x114, Name: "inner"},
			{Lo: 0x200, Hi: 0x300, Name: "d"},
			{Lo: 0x300, Hi: 0x308, Name: "e"},
			{Lo: ^uint64(0) - 0xf, Hi: ^uint64(0), Name: "top"},
		}
	}
	rev := slices.Clone(syms)
	slices.Reverse(rev)
	for _, tc := range []struct {
		in   []debugfile.Symbol
		want []symbolize.CoverRange
	}{
		{syms, want("c")},
		{rev, want("b")},
		{nil, nil},
	} {
		if got := symbolize.SymbolCover(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("symbols %v:\nhave %x\nwant %x", tc.in, got, tc.want)
		}
	}
}
