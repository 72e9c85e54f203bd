package symbolize

import "github.com/backtrail/backtrail/debugfile"

// CoverRange is one range of symbolCover's result.
type CoverRange struct {
	Lo, Hi uint64
	Name   string
}

// SymbolCover exposes symbolCover to the tests.
func SymbolCover(syms []debugfile.Symbol) []CoverRange {
	var out []CoverRange
	for _, r := range symbolCover(syms) {
		out = append(out, CoverRange{r.lo, r.hi, r.sym.Name})
	}
	return out
}
