package symbolize

import (
	"bytes"
	"cmp"
	"slices"
	"sync"

	"github.com/backtrail/backtrail/debugfile/dwarf"
	"github.com/backtrail/backtrail/demangle"
	"github.com/backtrail/backtrail/symcache"
)

// lazyIndex answers queries on a debug file without indexing all of it:
// the unit that owns an address is converted when an address in it is
// first asked for, into a symcache of its own. Symbolizing a few addresses
// of a large binary therefore costs a few units, not the whole DWARF.
type lazyIndex struct {
	d      *dwarf.Data
	info   symcache.Info
	owned  []dwarf.UnitRange // sorted by address
	byUnit map[int][]dwarf.UnitRange
	cover  []symRange
	style  demangle.Style

	mu    sync.Mutex // guards units
	units map[int]*lazyUnit
	syms  *lazyUnit // the symbol table alone, for addresses no unit owns
}

type lazyUnit struct {
	once  sync.Once
	table *Table
	err   error
}

func newLazyIndex(d *dwarf.Data, info symcache.Info, cover []symRange, style demangle.Style) (*lazyIndex, error) {
	owned, err := d.UnitRanges()
	if err != nil {
		return nil, err
	}
	byUnit := make(map[int][]dwarf.UnitRange)
	for _, r := range owned {
		byUnit[r.Unit] = append(byUnit[r.Unit], r)
	}
	return &lazyIndex{d: d, info: info, owned: owned, byUnit: byUnit, cover: cover, style: style,
		units: make(map[int]*lazyUnit), syms: &lazyUnit{}}, nil
}

// table returns the table that answers for addr, building it on first use.
func (x *lazyIndex) table(addr uint64) (*Table, error) {
	i, found := slices.BinarySearchFunc(x.owned, addr, func(r dwarf.UnitRange, a uint64) int {
		switch {
		case r.Hi <= a:
			return -1
		case r.Lo > a:
			return 1
		}
		return 0
	})
	if !found {
		x.syms.once.Do(func() { x.syms.table, x.syms.err = x.build(nil, nil, x.cover) })
		return x.syms.table, x.syms.err
	}
	unit := x.owned[i].Unit
	x.mu.Lock()
	u := x.units[unit]
	if u == nil {
		u = &lazyUnit{}
		x.units[unit] = u
	}
	x.mu.Unlock()
	u.once.Do(func() {
		rs := x.byUnit[unit]
		u.table, u.err = x.build([]int{unit}, rs, clipCover(x.cover, rs))
	})
	return u.table, u.err
}

func (x *lazyIndex) build(units []int, owned []dwarf.UnitRange, cover []symRange) (*Table, error) {
	b := symcache.NewBuilder(x.info)
	var pieces []piece
	if len(units) > 0 {
		var err error
		pieces, err = buildUnits(x.d, units, map[int][]dwarf.UnitRange{units[0]: owned}, b, BuildOptions{Workers: 1})
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(cover, func(a, b symRange) int { return cmp.Compare(a.lo, b.lo) })
	applySymbols(b, pieces, cover)
	var out bytes.Buffer
	if _, err := b.WriteTo(&out); err != nil {
		return nil, err
	}
	sc, err := symcache.Parse(out.Bytes())
	if err != nil {
		return nil, err
	}
	return NewTable(sc, x.style), nil
}
