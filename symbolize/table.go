package symbolize

import (
	"sync"
	"sync/atomic"

	"github.com/backtrail/backtrail/demangle"
	"github.com/backtrail/backtrail/symcache"
)

// Frame is one source-level frame of an address: innermost first, inlined
// frames before the frame they were inlined into.
type Frame struct {
	Function      string // demangled in the Table's style; "" when unknown
	RawFunction   string // as recorded (mangled); "" when unknown
	File          string // "" when unknown
	Line          uint32 // 0 when unknown
	Column        uint32
	Discriminator uint32
	// Inlined reports that this frame's code was inlined into the next
	// frame (the one after it in the slice).
	Inlined  bool
	Entry    uint64 // start address of the function, when HasEntry
	HasEntry bool
	DeclFile string // file and line where the function is declared
	DeclLine uint32
	Language symcache.Language
}

// Table answers address queries from a symcache, demangling names once per
// function. It is safe for concurrent use.
type Table struct {
	sc    *symcache.File
	style demangle.Style
	names []atomic.Pointer[string] // demangled names by function index
}

// NewTable returns a Table over sc that demangles names in style.
func NewTable(sc *symcache.File, style demangle.Style) *Table {
	return &Table{sc: sc, style: style, names: make([]atomic.Pointer[string], sc.NumFuncs())}
}

// Symcache returns the symcache the table reads.
func (t *Table) Symcache() *symcache.File { return t.sc }

// Frames appends the frames of addr, a file address, to out and returns
// the extended slice: nothing when the address is unknown. Once each
// function's name has been demangled, it allocates only to grow out.
func (t *Table) Frames(addr uint64, out []Frame) []Frame {
	l, ok := t.sc.Lookup(addr)
	for ok {
		var p symcache.Loc
		p, ok = l.Parent()
		out = append(out, t.frame(l, ok))
		l = p
	}
	return out
}

// FramesBatch appends the frames of every address of addrs to out, as
// Frames does for each in turn, and appends to ends where each address's
// frames end in out. On a symcache much bigger than the processor's caches
// its lookups are about 3× faster than one at a time (symcache.File.LookupBatch,
// BenchmarkLookup on 125–264 MB caches); making the Frames, names included,
// costs the same either way.
func (t *Table) FramesBatch(addrs []uint64, out []Frame, ends []int) ([]Frame, []int) {
	b := batches.Get().(*symcache.Batch)
	defer batches.Put(b)
	t.sc.LookupBatch(b, addrs)
	start := 0
	for _, end := range b.Ends {
		for k := start; k < end; k++ {
			out = append(out, t.frame(b.Frames[k], k+1 < end))
		}
		ends = append(ends, len(out))
		start = end
	}
	return out, ends
}

var batches = sync.Pool{New: func() any { return new(symcache.Batch) }}

// frame returns the Frame of l; inlined says l has a parent.
func (t *Table) frame(l symcache.Loc, inlined bool) Frame {
	f := Frame{File: l.File(), Line: l.Line(), Column: l.Column(), Discriminator: l.Discriminator(), Inlined: inlined}
	if fn, ok := l.Function(); ok {
		f.RawFunction = fn.Name()
		f.Function = t.name(fn)
		f.Entry, f.HasEntry = fn.Entry()
		f.DeclFile, f.DeclLine = fn.DeclFile(), fn.DeclLine()
		f.Language = fn.Language()
	}
	return f
}

func (t *Table) name(fn symcache.Func) string {
	slot := &t.names[fn.Index()]
	if p := slot.Load(); p != nil {
		return *p
	}
	s := demangle.Demangle(fn.Name(), t.style)
	slot.Store(&s)
	return s
}
