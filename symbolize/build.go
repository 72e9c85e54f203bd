package symbolize

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/debugfile/dwarf"
	"github.com/backtrail/backtrail/debugfile/pclntab"
	"github.com/backtrail/backtrail/internal/mmap"
	"github.com/backtrail/backtrail/symcache"
)

// Source is what an index is built from: the debug information of one
// object for one architecture.
type Source struct {
	Info    symcache.Info
	DWARF   *dwarf.Data        // nil when the object has no DWARF
	Pclntab *pclntab.Table     // used when there is no DWARF; may be nil
	Symbols []debugfile.Symbol // the symbol table, any order

	// readSymbols, when set, reads the symbol table in place of Symbols.
	// A build from DWARF reads it while the first units are read: it is
	// hundreds of thousands of entries in a big file (1 GB corpus:
	// 45–65 ms).
	readSymbols func() ([]debugfile.Symbol, error)
}

// symbols returns the symbol table.
func (src *Source) symbols() ([]debugfile.Symbol, error) {
	if src.readSymbols != nil {
		return src.readSymbols()
	}
	return src.Symbols, nil
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

// Build converts src into a symcache and returns its bytes; see Write.
func Build(src *Source, opts BuildOptions) ([]byte, error) {
	var buf bytes.Buffer
	if err := Write(&buf, src, opts); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write converts src into a symcache written to w. DWARF units are
// converted in parallel and added in a fixed order (biggest first), so the
// output does not depend on scheduling; the symbol table names
// what DWARF does not cover and, as llvm-symbolizer does, the outermost
// frame of each address. Memory stays well below the size of the input:
// the converted tables stream to temporary storage, and the pages of the
// input's sections are handed back to the kernel as they are done with.
func Write(w io.Writer, src *Source, opts BuildOptions) error {
	b := symcache.NewBuilder(src.Info)
	defer b.Close()
	if src.DWARF != nil {
		if err := buildDWARF(src.DWARF, src.symbols, b, opts); err != nil {
			return err
		}
	} else {
		syms, err := src.symbols()
		if err != nil {
			return err
		}
		t := new(unitTables)
		if src.Pclntab != nil {
			buildPclntab(src.Pclntab, symbolCover(syms), t)
		} else {
			t.symbolOnly(symbolCover(syms), []dwarf.UnitRange{{Lo: 0, Hi: ^uint64(0)}})
		}
		t.add(b)
	}
	_, err := b.WriteTo(w)
	return err
}

// unitTables are what one unit (or the pclntab, or the symbol table alone)
// adds to a symcache, with unit-local indices: files, functions (those of
// DWARF subroutines are made once each, not looked up) and locations
// deduplicated within the unit, and runs of ranges.
type unitTables struct {
	files []string
	funcs []symcache.Function // DeclFile is a unit-local file index
	locSet
	ranges []symcache.Range // Loc is a unit-local location index

	fileIdx map[string]uint32
	funcIdx map[symcache.Function]uint32
	renamed map[renameKey]uint32
	topOf   []uint32

	compared [2]uint32 // the functions rename compared last (never equal)
	sameName bool      // whether their names are
}

// reset empties t, with room for about n locations.
func (t *unitTables) reset(n int) {
	t.files, t.funcs, t.ranges, t.topOf = t.files[:0], t.funcs[:0], t.ranges[:0], t.topOf[:0]
	t.compared = [2]uint32{}
	t.locSet.reset(n)
	if t.funcIdx == nil {
		t.fileIdx = make(map[string]uint32)
		t.funcIdx = make(map[symcache.Function]uint32)
		t.renamed = make(map[renameKey]uint32)
	}
	clear(t.fileIdx)
	clear(t.funcIdx)
	clear(t.renamed)
}

func (t *unitTables) file(path string) uint32 { return intern(t.fileIdx, &t.files, path) }

func (t *unitTables) fn(f symcache.Function) uint32 { return intern(t.funcIdx, &t.funcs, f) }

// intern returns k's index in list, appending it the first time.
func intern[K comparable](idx map[K]uint32, list *[]K, k K) uint32 {
	if i, ok := idx[k]; ok {
		return i
	}
	i := uint32(len(*list))
	*list = append(*list, k)
	idx[k] = i
	return i
}

// tableMaps are the scratch slices that map a unit's indices to the
// symcache's.
type tableMaps struct{ files, funcs, locs []uint32 }

// add adds t's tables to b.
func (t *unitTables) add(b *symcache.Builder) {
	var m tableMaps
	t.addWith(b, &m)
}

func (t *unitTables) addWith(b *symcache.Builder, m *tableMaps) {
	m.files = m.files[:0]
	for _, f := range t.files {
		m.files = append(m.files, b.File(f))
	}
	m.funcs = m.funcs[:0]
	for _, f := range t.funcs {
		f.DeclFile = remap(m.files, f.DeclFile)
		m.funcs = append(m.funcs, b.Function(f))
	}
	m.locs = m.locs[:0]
	for _, l := range t.locs {
		l.File = remap(m.files, l.File)
		l.Function = remap(m.funcs, l.Function)
		l.Parent = remap(m.locs, l.Parent)
		m.locs = append(m.locs, b.Location(l))
	}
	for _, r := range t.ranges {
		r.Loc = remap(m.locs, r.Loc)
		b.Range(r)
	}
}

func remap(m []uint32, i uint32) uint32 {
	if i == symcache.None {
		return i
	}
	return m[i]
}

// buildDWARF converts every unit, restricted to the addresses it owns, and
// adds them to b, biggest first, then the symbols of the addresses no unit
// owns.
func buildDWARF(d *dwarf.Data, symbols func() ([]debugfile.Symbol, error), b *symcache.Builder, opts BuildOptions) error {
	// Which unit owns which addresses, and the symbols and what they
	// cover, take tens of milliseconds each in a big file (1 GB corpus:
	// 90 ms, mostly page faults, and 50 + 40 ms), and no unit can be
	// converted without them. They are found while the workers read the
	// first units' entries and line tables, which needs neither.
	p := &unitPlan{ready: make(chan struct{})}
	between := make(chan *unitTables, 1)
	go func() {
		var owned []dwarf.UnitRange
		ranged := make(chan struct{})
		go func() {
			defer close(ranged)
			owned, p.err = d.UnitRanges()
		}()
		syms, symErr := symbols()
		p.cover = symbolCover(syms)
		<-ranged
		p.err = cmp.Or(p.err, symErr)
		p.byUnit = byUnit(owned)
		close(p.ready)
		// The symbols between the units are added last, but found while
		// the units convert: in a big file they are tens of thousands
		// (1 GB corpus: 80,000 in 89,000 gaps), 0.07 s that would
		// otherwise run on one core at the end.
		t := new(unitTables)
		t.symbolOnly(p.cover, gaps(owned))
		between <- t
	}()
	var order []int
	units := d.Units()
	for i, u := range units {
		if u.Type != dwarf.DW_UT_type && u.Type != dwarf.DW_UT_split_type {
			order = append(order, i)
		}
	}
	// Biggest units first, so that the last to convert, which converts
	// and merges while the other workers have nothing left, are small:
	// 2-5 % less wall time on the 51 and 200 MB corpora.
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(units[b].End-units[b].Offset, units[a].End-units[a].Offset)
	})
	var m tableMaps
	err := convertUnits(d, order, p, opts, func(_ int, t *unitTables) { t.addWith(b, &m) })
	<-p.ready // convertUnits waited for it only if there were units
	if p.err != nil {
		return p.err
	}
	if err != nil {
		return err
	}
	(<-between).addWith(b, &m)
	return nil
}

// unitPlan is what converting a unit needs from the whole file: the
// addresses each unit owns and the symbols' ranges.
type unitPlan struct {
	ready  chan struct{} // closed when the fields below are set
	byUnit map[int][]dwarf.UnitRange
	cover  []symRange
	err    error // of reading which unit owns what, or the symbols
}

// mayOwn reports whether unit may own addresses: false only once the plan
// is ready and says it owns none.
func (p *unitPlan) mayOwn(unit int) bool {
	select {
	case <-p.ready:
		return p.err == nil && len(p.byUnit[unit]) > 0
	default:
		return true
	}
}

// byUnit groups owned ranges by unit.
func byUnit(owned []dwarf.UnitRange) map[int][]dwarf.UnitRange {
	m := make(map[int][]dwarf.UnitRange)
	for _, r := range owned {
		m[r.Unit] = append(m[r.Unit], r)
	}
	return m
}

// convertUnits converts the units numbered order, each restricted to the
// addresses p says it owns, on a bounded pool of workers, and calls add
// with each unit's number and tables in that order. Units that own no addresses are
// left out, and so is a unit that fails to convert; its error is returned
// when no unit converted.
func convertUnits(d *dwarf.Data, order []int, p *unitPlan, opts BuildOptions, add func(int, *unitTables)) error {
	units := d.Units()
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	type job struct {
		unit  int
		out   *unitTables
		err   error
		owner bool           // the unit owns addresses
		lines extent         // of .debug_line the unit's line program was read from
		split dwarf.Sections // of the split DWARF the unit's entries came from
		done  chan struct{}
	}
	// Tables circulate between workers and the merger, so their buffers
	// are reused; their number bounds how many converted units wait.
	free := make(chan *unitTables, workers+1)
	for range cap(free) {
		free <- tablesPool.Get().(*unitTables)
	}
	defer func() {
		for range cap(free) {
			tablesPool.Put(<-free)
		}
	}()
	jobs := make(chan *job)
	results := make(chan *job, cap(free))
	// Workers take jobs in unit order; the merger consumes them in the same
	// order, so the output does not depend on scheduling.
	var wg sync.WaitGroup
	for range workers {
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
				if !p.mayOwn(j.unit) {
					close(j.done) // not read at all: partial units, say
					continue
				}
				j.err = c.read(&units[j.unit], j.out)
				<-p.ready
				owned := p.byUnit[j.unit]
				switch {
				case p.err != nil || len(owned) == 0:
					j.err = nil // left out (buildDWARF returns p.err)
				case j.err == nil:
					j.owner = true
					c.emitOwned(owned, clipCover(p.cover, owned))
				}
				j.lines = extent{c.lt.ProgramOffset(), c.lt.ProgramOffset() + uint64(len(c.lt.Program()))}
				j.split, _ = c.ui.SplitSections()
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

	var firstErr error
	done, converted := 0, 0
	var sinceRelease uint64 // bytes of entries converted since releaseShared
	var read unitBytes
	var splitSeen uint64 // bytes of split units' entries
	info := len(d.Sections().Info)
	release, shared := info >= releaseFrom, sharedBudget(info)
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
		} else if j.owner {
			add(j.unit, j.out)
			converted++
		}
		u := &units[j.unit]
		read.info.add(extent{u.Offset, u.End})
		read.lines.add(j.lines)
		read.addSplit(j.split)
		// A split build's entries are in its split files, which only the
		// units reveal: their sizes count as the binary's would.
		splitSeen += uint64(len(j.split.Info))
		release = release || splitSeen >= releaseFrom
		if release && read.size() >= unitBudget {
			read.release(d)
		}
		sinceRelease += u.End - u.Offset + uint64(len(j.split.Info))
		if release && sinceRelease >= shared {
			releaseShared(d)
			read.releaseSplitStrings()
			sinceRelease = 0
		}
		free <- j.out
	}
	wg.Wait()
	if release {
		read.release(d)
		releaseShared(d)
		read.releaseSplitStrings()
	}
	if firstErr != nil && converted == 0 {
		return firstErr
	}
	return nil
}

// extent is a range of offsets within a section, empty when lo >= hi.
type extent struct{ lo, hi uint64 }

// add widens s to cover t.
func (s *extent) add(t extent) {
	switch {
	case t.lo >= t.hi:
	case s.lo >= s.hi:
		*s = t
	default:
		s.lo, s.hi = min(s.lo, t.lo), max(s.hi, t.hi)
	}
}

// unitBytes spans the entries and line programs of the units converted
// since their pages were last handed back to the kernel (they are read
// again from the file should anything need them), so that resident memory
// does not grow with the input; and, for a split build, the split units'
// sections, and the strings of their files.
type unitBytes struct {
	info, lines extent
	split       []dwarf.Sections
	splitSize   uint64
	// splitStrs are the split files' string sections met since they were
	// last handed back: one per .dwo file, or a package's, which all its
	// units share and which is handed back as the binary's strings are.
	splitStrs map[*byte][]byte
}

func (r unitBytes) size() uint64 {
	return r.info.hi - r.info.lo + r.lines.hi - r.lines.lo + r.splitSize
}

func (r *unitBytes) addSplit(s dwarf.Sections) {
	if s.Info == nil {
		return
	}
	r.split = append(r.split, s)
	r.splitSize += uint64(len(s.Info))
	if len(s.Str) > 0 {
		if r.splitStrs == nil {
			r.splitStrs = make(map[*byte][]byte)
		}
		r.splitStrs[&s.Str[0]] = s.Str
	}
}

// release hands back the pages r spans but the split files' strings, and
// empties r of them. The units in flight that the spans reach over read
// theirs again.
func (r *unitBytes) release(d *dwarf.Data) {
	s := d.Sections()
	if r.info.lo < r.info.hi {
		mmap.Release(s.Info[r.info.lo:r.info.hi])
	}
	if r.lines.lo < r.lines.hi {
		mmap.Release(s.Line[r.lines.lo:r.lines.hi])
	}
	for _, x := range r.split {
		for _, b := range [][]byte{x.Info, x.Abbrev, x.StrOffsets, x.RngLists, x.Line} {
			mmap.Release(b)
		}
	}
	r.info, r.lines, r.split, r.splitSize = extent{}, extent{}, r.split[:0], 0
}

// releaseSplitStrings hands back the split files' strings met since the
// last call.
func (r *unitBytes) releaseSplitStrings() {
	for k, b := range r.splitStrs {
		mmap.Release(b)
		delete(r.splitStrs, k)
	}
}

// unitBudget is how many bytes of entries and line programs convert
// between releases of their pages. Released after each unit, as before,
// the 4,126 units of libc's DWARF took two madvise calls each, whose
// flushes of the TLB, and the faults on the pages neighbouring units
// shared, were a quarter of the time of building its symcache
// (bench/symcache.md, run X). Units bigger than this are still released
// one at a time.
const unitBudget = 1 << 20

// releaseFrom is the size of .debug_info from which a conversion hands
// pages back at all. Smaller DWARF stays mapped whole, at most tens of
// megabytes: the releases' flushes of the TLB, and the faults that read the
// pages again, cost more than the memory (a dump converts a few of libc's
// units one at a time, and each released the shared strings).
const releaseFrom = 16 << 20

// sharedBudget returns how many bytes of units' entries convert between
// releases of the shared sections, for info bytes of entries in all: a
// twentieth of them, and at least 8 MB. Each release costs the pages the
// next units share with the ones before (the strings of the standard
// library's names, say), read again 64 KB at a time; each megabyte of
// units between releases holds more of those sections' pages. So a build
// of more than 160 MB of entries releases twenty times, and its peak
// resident memory grows with its DWARF, as the size of what it needs does.
//
// Released after every unit, on the 334 MB cxx-350m corpus (110 MB of
// entries), the strings faulted in again made 56k page faults a build
// against 47k with 8 MB, and took 2.02–2.09 s against 1.67–1.77 s, for 12
// MB more peak resident memory (178–181 MB against 190–191 MB; with 16 MB,
// 208–211 MB for no more speed). On the 969 MB cxx-1000m (319 MB of
// entries), 16 MB took 4.22–4.66 s against 4.62–4.82 s with 8 MB, in turns,
// for 5 MB more (361–372 MB against 357–366 MB); 32 MB took as long as 16
// and held 45 MB more (bench/symcache.md, run Z).
func sharedBudget(info int) uint64 { return max(8<<20, uint64(info)/20) }

// releaseShared hands back the pages of the sections all units read from:
// the strings and the tables of addresses, string offsets and ranges. They
// are read again as the next units need them.
func releaseShared(d *dwarf.Data) {
	s := d.Sections()
	for _, b := range [][]byte{s.Str, s.LineStr, s.StrOffsets, s.Addr, s.Ranges, s.RngLists} {
		mmap.Release(b)
	}
}

// Converters and tables keep big reusable buffers; pooling them makes
// converting one unit at a time (lazy indexes) as cheap as a batch.
var (
	converterPool = sync.Pool{New: func() any { return new(unitConverter) }}
	tablesPool    = sync.Pool{New: func() any { return new(unitTables) }}
)
