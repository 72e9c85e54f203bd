package symbolize

import (
	"bytes"
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/debugfile/dwarf"
	"github.com/backtrail/backtrail/debugfile/pclntab"
	"github.com/backtrail/backtrail/symcache"
)

// Source is what an index is built from: the debug information of one
// object for one architecture.
type Source struct {
	Info    symcache.Info
	DWARF   *dwarf.Data        // nil when the object has no DWARF
	Pclntab *pclntab.Table     // used when there is no DWARF; may be nil
	Symbols []debugfile.Symbol // the symbol table, any order
}

// BuildOptions tune Build. The zero value means defaults.
type BuildOptions struct {
	// Workers is the number of units converted in parallel; 0 means
	// GOMAXPROCS. The output does not depend on it.
	Workers int
	// Progress, when set, is called with the number of DWARF units done
	// and the total, from one goroutine.
	Progress func(done, total int)
}

// Build converts src into a symcache and returns its bytes. DWARF units
// are converted in parallel and merged in unit order; the symbol table
// names what DWARF does not cover and, as llvm-symbolizer does, the
// outermost frame of each address.
func Build(src *Source, opts BuildOptions) ([]byte, error) {
	b := symcache.NewBuilder(src.Info)
	var pieces []piece
	var err error
	switch {
	case src.DWARF != nil:
		pieces, err = buildDWARF(src.DWARF, b, opts)
	case src.Pclntab != nil:
		pieces, err = buildPclntab(src.Pclntab, b)
	}
	if err != nil {
		return nil, err
	}
	applySymbols(b, pieces, symbolCover(src.Symbols))
	var out bytes.Buffer
	if _, err := b.WriteTo(&out); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// buildDWARF converts every unit and returns the pieces with global
// location indices, sorted by address.
func buildDWARF(d *dwarf.Data, b *symcache.Builder, opts BuildOptions) ([]piece, error) {
	owned, err := d.UnitRanges()
	if err != nil {
		return nil, err
	}
	byUnit := make(map[int][]dwarf.UnitRange)
	var order []int
	for _, r := range owned {
		if _, ok := byUnit[r.Unit]; !ok {
			order = append(order, r.Unit)
		}
		byUnit[r.Unit] = append(byUnit[r.Unit], r)
	}
	slices.Sort(order)
	return buildUnits(d, order, byUnit, b, opts)
}

// buildUnits converts the units numbered order, each restricted to the
// addresses it owns, and adds their tables to b in that order.
func buildUnits(d *dwarf.Data, order []int, byUnit map[int][]dwarf.UnitRange, b *symcache.Builder, opts BuildOptions) ([]piece, error) {
	units := d.Units()

	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	type job struct {
		unit int
		out  *unitTables
		err  error
		done chan struct{}
	}
	jobs := make(chan *job)
	results := make(chan *job, 2*workers)
	// Tables circulate between workers and the merger, so their buffers
	// are reused; their number bounds how many converted units wait.
	free := make(chan *unitTables, cap(results)+workers)
	for range cap(free) {
		free <- tablesPool.Get().(*unitTables)
	}
	defer func() {
		for range cap(free) {
			tablesPool.Put(<-free)
		}
	}()
	// Workers take jobs in unit order; the merger consumes them in the same
	// order, so the output does not depend on scheduling.
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := converterPool.Get().(*unitConverter)
			defer func() {
				c.d, c.out = nil, nil
				converterPool.Put(c)
			}()
			c.d = d
			for j := range jobs {
				j.err = c.convert(&units[j.unit], byUnit[j.unit], j.out)
				close(j.done)
			}
		}()
	}
	go func() {
		for _, u := range order {
			j := &job{unit: u, out: <-free, done: make(chan struct{})}
			results <- j
			jobs <- j
		}
		close(jobs)
		close(results)
	}()

	var pieces []piece
	var firstErr error
	fileMap := make([]uint32, 0, 64)
	funcMap := make([]uint32, 0, 256)
	locMap := make([]uint32, 0, 1024)
	done := 0
	for j := range results {
		<-j.done
		done++
		if opts.Progress != nil {
			opts.Progress(done, len(order))
		}
		if j.err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("unit at %#x: %w", units[j.unit].Offset, j.err)
			}
			free <- j.out
			continue
		}
		t := j.out
		fileMap = fileMap[:0]
		for _, f := range t.files {
			fileMap = append(fileMap, b.File(f))
		}
		funcMap = funcMap[:0]
		for _, f := range t.funcs {
			f.DeclFile = remap(fileMap, f.DeclFile)
			funcMap = append(funcMap, b.Function(f))
		}
		locMap = locMap[:0]
		for _, l := range t.locs {
			l.File = remap(fileMap, l.File)
			l.Function = remap(funcMap, l.Function)
			l.Parent = remap(locMap, l.Parent)
			locMap = append(locMap, b.Location(l))
		}
		pieces = slices.Grow(pieces, len(t.pieces))
		for _, p := range t.pieces {
			pieces = append(pieces, piece{p.lo, p.hi, remap(locMap, p.loc)})
		}
		free <- t
	}
	wg.Wait()
	if firstErr != nil && len(pieces) == 0 {
		return nil, firstErr
	}
	// Units own disjoint addresses; only their order needs fixing.
	slices.SortFunc(pieces, func(a, b piece) int { return cmp.Compare(a.lo, b.lo) })
	return pieces, nil
}

// Converters and tables keep big reusable buffers; pooling them makes
// converting one unit at a time (lazy indexes) as cheap as a batch.
var (
	converterPool = sync.Pool{New: func() any { return new(unitConverter) }}
	tablesPool    = sync.Pool{New: func() any { return new(unitTables) }}
)

func remap(m []uint32, i uint32) uint32 {
	if i == symcache.None {
		return i
	}
	return m[i]
}

// applySymbols adds the final ranges to b: DWARF pieces whose outermost
// function is renamed after the covering symbol when the two differ, and
// symbol-only ranges where DWARF says nothing.
func applySymbols(b *symcache.Builder, pieces []piece, cover []symRange) {
	type symInfo struct{ fn, file uint32 }
	symFunc := make(map[int]symInfo)
	infoOf := func(k int) symInfo {
		if v, ok := symFunc[k]; ok {
			return v
		}
		s := cover[k].sym
		v := symInfo{b.Function(symcache.Function{Name: s.Name, Entry: s.Addr, DeclFile: symcache.None}), symcache.None}
		if s.File != "" {
			v.file = b.File(s.File)
		}
		symFunc[k] = v
		return v
	}
	// topOf[i] is the outermost location of location i's chain; parents
	// precede children, so one pass fills it.
	locs := b.Locations()
	topOf := make([]uint32, len(locs))
	for i, l := range locs {
		if l.Parent == symcache.None {
			topOf[i] = uint32(i)
		} else {
			topOf[i] = topOf[l.Parent]
		}
	}
	type renameKey struct {
		loc uint32
		sym symInfo
	}
	renamed := make(map[renameKey]uint32)
	var rebuild func(loc uint32, sym symInfo) uint32
	rebuild = func(loc uint32, sym symInfo) uint32 {
		l := b.LocationAt(loc)
		if l.Parent == symcache.None {
			l.Function = sym.fn
			if l.File == symcache.None {
				l.File = sym.file
			}
		} else {
			l.Parent = rebuild(l.Parent, sym)
		}
		return b.Location(l)
	}
	// rename gives loc's chain the symbol's name (and file, where DWARF
	// has none) at its outermost frame, copying the chain when that
	// changes anything.
	rename := func(loc uint32, sym symInfo) uint32 {
		top := locs[topOf[loc]]
		fn := top.Function
		same := fn == sym.fn || fn != symcache.None && b.FunctionAt(fn).Name == b.FunctionAt(sym.fn).Name
		if same && (top.File != symcache.None || sym.file == symcache.None) {
			return loc
		}
		k := renameKey{loc, sym}
		if v, ok := renamed[k]; ok {
			return v
		}
		v := rebuild(loc, sym)
		renamed[k] = v
		return v
	}

	var end uint64 // end of the last range added
	started := false
	add := func(lo, hi uint64, loc uint32) {
		if lo >= hi {
			return
		}
		if started && end < lo {
			b.Range(end, symcache.None)
		}
		b.Range(lo, loc)
		end, started = hi, true
	}
	pi, si := 0, 0
	x := uint64(0)
	for pi < len(pieces) || si < len(cover) {
		// Skip to the next address anything covers.
		for pi < len(pieces) && pieces[pi].hi <= x {
			pi++
		}
		for si < len(cover) && cover[si].hi <= x {
			si++
		}
		if pi == len(pieces) && si == len(cover) {
			break
		}
		next := ^uint64(0)
		if pi < len(pieces) {
			next = min(next, max(pieces[pi].lo, x))
		}
		if si < len(cover) {
			next = min(next, max(cover[si].lo, x))
		}
		x = next
		y := ^uint64(0)
		loc := symcache.None
		inPiece := pi < len(pieces) && pieces[pi].lo <= x
		inSym := si < len(cover) && cover[si].lo <= x
		if inPiece {
			y = min(y, pieces[pi].hi)
			loc = pieces[pi].loc
		} else if pi < len(pieces) {
			y = min(y, pieces[pi].lo)
		}
		if inSym {
			y = min(y, cover[si].hi)
			sym := infoOf(si)
			if loc == symcache.None {
				loc = b.Location(symcache.Location{File: sym.file, Function: sym.fn, Parent: symcache.None})
			} else {
				loc = rename(loc, sym)
			}
		} else if si < len(cover) {
			y = min(y, cover[si].lo)
		}
		if inPiece || inSym {
			add(x, y, loc)
		}
		x = y
		if y == ^uint64(0) {
			break
		}
	}
	if started && end != ^uint64(0) {
		b.Range(end, symcache.None)
	}
}

type symRange struct {
	lo, hi uint64
	sym    debugfile.Symbol
}

// clipCover returns the parts of cover inside the sorted ranges rs.
func clipCover(cover []symRange, rs []dwarf.UnitRange) []symRange {
	var out []symRange
	for _, r := range rs {
		i, _ := slices.BinarySearchFunc(cover, r.Lo, func(s symRange, a uint64) int { return cmp.Compare(s.hi, a+1) })
		for ; i < len(cover) && cover[i].lo < r.Hi; i++ {
			c := cover[i]
			c.lo, c.hi = max(c.lo, r.Lo), min(c.hi, r.Hi)
			if c.lo < c.hi {
				out = append(out, c)
			}
		}
	}
	return out
}

// symbolCover returns the address ranges each symbol answers for, the way
// llvm-symbolizer's symbol table lookup does: the last symbol at or below
// an address (of those at one address, the largest, then the last listed)
// answers if the address is inside its size or its size is 0.
func symbolCover(syms []debugfile.Symbol) []symRange {
	s := slices.Clone(syms)
	slices.SortStableFunc(s, func(a, b debugfile.Symbol) int {
		if c := cmp.Compare(a.Addr, b.Addr); c != 0 {
			return c
		}
		return cmp.Compare(a.Size, b.Size)
	})
	out := make([]symRange, 0, len(s))
	for i := 0; i < len(s); i++ {
		for i+1 < len(s) && s[i+1].Addr == s[i].Addr {
			i++
		}
		sym := s[i]
		hi := ^uint64(0)
		if i+1 < len(s) {
			hi = s[i+1].Addr
		}
		if sym.Size != 0 && sym.Addr+sym.Size > sym.Addr {
			hi = min(hi, sym.Addr+sym.Size)
		}
		if sym.Addr < hi {
			out = append(out, symRange{sym.Addr, hi, sym})
		}
	}
	return out
}
