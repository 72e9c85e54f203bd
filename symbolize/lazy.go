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
	d     *dwarf.Data
	info  symcache.Info
	owned []dwarf.UnitRange // sorted by address
	plan  *unitPlan         // ready
	style demangle.Style

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
	p := &unitPlan{ready: make(chan struct{}), byUnit: byUnit(owned), cover: cover}
	close(p.ready)
	return &lazyIndex{d: d, info: info, owned: owned, plan: p, style: style,
		units: make(map[int]*lazyUnit), syms: &lazyUnit{}}, nil
}

// owner returns the unit that owns addr.
func (x *lazyIndex) owner(addr uint64) (unit int, ok bool) {
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
		return 0, false
	}
	return x.owned[i].Unit, true
}

// unit returns the state of unit's table, adding it.
func (x *lazyIndex) unit(unit int) *lazyUnit {
	x.mu.Lock()
	defer x.mu.Unlock()
	u := x.units[unit]
	if u == nil {
		u = &lazyUnit{}
		x.units[unit] = u
	}
	return u
}

// prepare converts the units that own addrs and that no query has asked
// for yet, in parallel on all cores, as a build of the whole file would:
// answered one at a time, a batch spread over a big file converted its
// units one after the other on one core. Those that fail are left to
// table, which records their error.
func (x *lazyIndex) prepare(addrs []uint64) {
	var need []int
	x.mu.Lock()
	for _, a := range addrs {
		if unit, ok := x.owner(a); ok && x.units[unit] == nil {
			need = append(need, unit)
		}
	}
	x.mu.Unlock()
	slices.Sort(need)
	if need = slices.Compact(need); len(need) < 2 {
		return
	}
	convertUnits(x.d, need, x.plan, BuildOptions{}, func(unit int, t *unitTables) {
		u := x.unit(unit)
		u.once.Do(func() { u.table, u.err = x.build(t) })
	})
}

// table returns the table that answers for addr, building it on first use.
func (x *lazyIndex) table(addr uint64) (*Table, error) {
	unit, found := x.owner(addr)
	if !found {
		x.syms.once.Do(func() {
			var t unitTables
			t.symbolOnly(x.plan.cover, gaps(x.owned))
			x.syms.table, x.syms.err = x.build(&t)
		})
		return x.syms.table, x.syms.err
	}
	u := x.unit(unit)
	u.once.Do(func() {
		var buildErr error
		err := convertUnits(x.d, []int{unit}, x.plan, BuildOptions{Workers: 1}, func(_ int, t *unitTables) {
			u.table, buildErr = x.build(t)
		})
		u.err = cmp.Or(err, buildErr)
	})
	return u.table, u.err
}

func (x *lazyIndex) build(t *unitTables) (*Table, error) {
	b := symcache.NewBuilder(x.info)
	defer b.Close()
	t.add(b)
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
