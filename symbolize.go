package backtrail

import (
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Frame is one symbolized frame, innermost first within a stack.
type Frame struct {
	// PC is the address as captured: a return address, shared by a physical
	// frame and every frame inlined into it.
	PC       uintptr
	Function string // package-qualified, as runtime.Frame spells it
	File     string
	Line     int
	Inlined  bool // a call the compiler inlined into the next frame out
	InApp    bool // the function belongs to the program, not a dependency; see SetInApp
}

// Frames returns the symbolized frames of s, innermost first, with each
// inlined call as a frame of its own. Results are cached per unique stack
// (in the bounded stack table) and per address, so a repeat costs a
// hash-table lookup, a new stack made of addresses seen before costs one
// lookup per address, and only addresses never seen go through the
// runtime's symbolizer. The returned slice is shared by every caller: do
// not modify it.
func (s *Stack) Frames() []Frame {
	if s.n == 0 {
		return nil
	}
	r := lookupStack(s)
	if r == nil {
		r = addStack(s)
	} else if f := r.frames.Load(); f != nil && f.gen == inAppGen.Load() {
		return f.frames
	}
	return r.symbolize()
}

// symbolize computes and caches r's frames.
func (r *stackRecord) symbolize() []Frame {
	sym := &symbolized{gen: inAppGen.Load()}
	frames, ok := cachedFrames(r.pcs, sym.gen)
	sym.frames = frames
	if !ok {
		sym.frames = symbolizePCs(r.pcs)
		rememberFrames(r.pcs, sym)
	}
	r.frames.Store(sym)
	return sym.frames
}

// The address cache: the frames of one captured address, so that stacks
// sharing callers (most stacks of a program do) are symbolized from the
// frames of their addresses instead of by the runtime again. Bounded like
// the stack table.
const pcTableSize = 16384

var pcTable = newTable[pcEntry](pcTableSize)

// Entries of an older in-app generation can never be looked up again, so
// new ones take their slots instead of evicting live entries, and the
// frames they hold become garbage.
func init() { pcTable.stale = func(e *pcEntry) bool { return e.sym.gen != inAppGen.Load() } }

// pcEntry locates the frames of one return address among the frames of
// the stack it was first symbolized in, which carry the in-app generation.
// It is small because a stack symbolized for the first time allocates one
// per address.
type pcEntry struct {
	pc       uintptr
	sym      *symbolized
	lo, hi   uint16 // the address's frames are sym.frames[lo:hi]
	sigpanic bool   // the frames end in runtime.sigpanic: the next address is not a return address
}

func (e *pcEntry) frames() []Frame { return e.sym.frames[e.lo:e.hi:e.hi] }

func pcHash(pc uintptr) uint64 { return hashFinish(uint64(pc) * hashPrime) }

func lookupPC(pc uintptr, gen uint64) *pcEntry {
	return pcTable.find(pcHash(pc), func(e *pcEntry) bool { return e.pc == pc && e.sym.gen == gen })
}

// cachedFrames assembles the frames of pcs from the address cache; it
// reports false when an address is missing, or follows a signal frame and
// so is not a return address.
func cachedFrames(pcs []uintptr, gen uint64) ([]Frame, bool) {
	var ents [stackCap]*pcEntry
	n := 0
	for i, pc := range pcs {
		e := lookupPC(pc, gen)
		if e == nil || e.sigpanic {
			return nil, false
		}
		ents[i] = e
		n += int(e.hi - e.lo)
	}
	out := make([]Frame, 0, n)
	for _, e := range ents[:len(pcs)] {
		out = append(out, e.frames()...)
	}
	return out, true
}

// rememberFrames stores the frames of each address of pcs, as symbolizePCs
// computed them into sym, in the address cache. A frame carries its
// captured address, which splits the frames by address; a run of one
// address (recursion) holds its frames once per repetition. The address
// after runtime.sigpanic was expanded as a faulting instruction, not a
// return address, so it and the rest are left out.
func rememberFrames(pcs []uintptr, sym *symbolized) {
	frames := sym.frames
	if len(frames) > math.MaxUint16 {
		return // beyond what an entry can locate; the stack's own cache still holds them
	}
	ents := make([]pcEntry, countRuns(pcs))
	j := 0
	for i, m := 0, 0; i < len(pcs); m++ {
		pc := pcs[i]
		run := 1
		for i+run < len(pcs) && pcs[i+run] == pc {
			run++
		}
		k := j
		for k < len(frames) && frames[k].PC == pc {
			k++
		}
		if (k-j)%run != 0 {
			break
		}
		g := j + (k-j)/run
		e := &ents[m]
		e.pc, e.sym, e.lo, e.hi = pc, sym, uint16(j), uint16(g)
		e.sigpanic = g > j && frames[g-1].Function == "runtime.sigpanic"
		pcTable.insert(pcHash(pc), e, func(o *pcEntry) bool { return o.pc == pc && o.sym.gen == sym.gen })
		if e.sigpanic {
			break
		}
		i, j = i+run, k
	}
}

// countRuns returns the number of runs of one address in pcs.
func countRuns(pcs []uintptr) int {
	runs := 0
	for i, pc := range pcs {
		if i == 0 || pc != pcs[i-1] {
			runs++
		}
	}
	return runs
}

// symbolizePCs expands addresses into frames. Recursion repeats an
// address, which the runtime would expand afresh each time, so each run of
// one address is expanded once and its frames repeated.
func symbolizePCs(pcs []uintptr) []Frame {
	runs := countRuns(pcs)
	if runs == len(pcs) {
		return expandPCs(pcs)
	}
	uniq := make([]uintptr, 0, runs)
	for i, pc := range pcs {
		if i == 0 || pc != pcs[i-1] {
			uniq = append(uniq, pc)
		}
	}
	frames := expandPCs(uniq)
	out := make([]Frame, 0, len(frames)+len(pcs)-runs)
	j := 0 // frames[j:] belong to pcs[i:]
	for i := 0; i < len(pcs); {
		pc, run := pcs[i], 1
		for i+run < len(pcs) && pcs[i+run] == pc {
			run++
		}
		k := j
		for k < len(frames) && frames[k].PC == pc {
			k++
		}
		for range run {
			out = append(out, frames[j:k]...)
		}
		i, j = i+run, k
	}
	return append(out, frames[j:]...)
}

// expandPCs expands addresses into frames with runtime.CallersFrames.
//
// One case needs care. A frame interrupted by a signal (a nil dereference,
// say) sits under runtime.sigpanic, and its address is the faulting
// instruction, not a return address; CallersFrames would back up one byte
// into the previous instruction. runtime.Callers stores such addresses plus
// one for this reason, and so do we when we meet sigpanic.
func expandPCs(pcs []uintptr) []Frame {
	out := make([]Frame, 0, len(pcs)+len(pcs)/4)
	for len(pcs) > 0 {
		ci := runtime.CallersFrames(pcs)
		k := 0 // index in pcs of the address being expanded
		restart := -1
		for {
			f, more := ci.Next()
			// Frames of one address share it; the outer frames of an
			// inlined call carry a virtual address that matches none and
			// stay with this one. Look two ahead, past an address
			// CallersFrames dropped for having no symbols.
			for j := k + 1; j < len(pcs) && j <= k+2; j++ {
				if f.PC == pcs[j]-1 || f.PC == pcs[j] {
					k = j
					break
				}
			}
			if (f.Function != "" || f.PC != 0) && !isWrapper(&f) {
				// Field by field: a Frame copied or zeroed whole takes
				// the bulk write barrier while the GC runs, two strings
				// don't.
				if len(out) == cap(out) {
					out = slices.Grow(out, 1)
				}
				out = out[:len(out)+1]
				fr := &out[len(out)-1]
				fr.PC, fr.Line = pcs[k], f.Line
				fr.Function, fr.File = f.Function, f.File
				fr.Inlined = f.Func == nil && f.Function != ""
				fr.InApp = inApp(f.Function)
			}
			if f.Function == "runtime.sigpanic" && k+1 < len(pcs) && f.Func != nil {
				restart = k + 1
				break
			}
			if !more {
				break
			}
		}
		if restart < 0 {
			break
		}
		next := append([]uintptr(nil), pcs[restart:]...)
		next[0]++
		// The adjusted address is reported as captured.
		start := len(out)
		sub := expandPCs(next)
		for i := range sub {
			if sub[i].PC == next[0] {
				sub[i].PC = pcs[restart]
			}
		}
		out = append(out[:start], sub...)
		break
	}
	return out
}

// isWrapper reports whether f is a compiler-generated wrapper: the closure
// a go or defer statement with arguments becomes ("f.gowrap1"), or a method
// wrapper ("<autogenerated>"). runtime.Callers leaves these out and so do we.
func isWrapper(f *runtime.Frame) bool {
	if f.File == "<autogenerated>" {
		return true
	}
	// Wrapper names end in a digit; most names don't.
	if n := len(f.Function); n == 0 || f.Function[n-1] < '0' || f.Function[n-1] > '9' {
		return false
	}
	i := strings.LastIndexByte(f.Function, '.')
	if i < 0 {
		return false
	}
	last := f.Function[i+1:]
	for _, p := range [...]string{"gowrap", "deferwrap"} {
		if rest, ok := strings.CutPrefix(last, p); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return false
}

// In-app rules. By default a function is in-app when its package is in the
// main module, read from the build info; SetInApp replaces the list.
var (
	inAppMu       sync.Mutex
	inAppPrefixes atomic.Pointer[[]inAppPrefix]
	inAppGen      atomic.Uint64 // bumped by SetInApp; invalidates cached frames
	inAppOnce     sync.Once
)

// SetInApp sets the module or package paths whose functions count as in-app
// (Frame.InApp, and "in_app" in reports): a function is in-app when its
// package path equals a prefix or lies below it. With no arguments it
// restores the default, the main module's path ("main" when build info is
// missing). Frames already symbolized are recomputed on next use. Safe for
// concurrent use.
func SetInApp(prefixes ...string) {
	inAppMu.Lock()
	defer inAppMu.Unlock()
	inAppOnce.Do(func() {})
	if len(prefixes) == 0 {
		prefixes = defaultInApp()
	}
	inAppPrefixes.Store(makeInApp(prefixes))
	inAppGen.Add(1)
}

// inAppPrefix is an in-app prefix with the index of its last slash (-1 for
// none): the last slash of any name that extends the prefix without
// another slash, from which inApp finds the package.
type inAppPrefix struct {
	path  string
	slash int
}

func makeInApp(prefixes []string) *[]inAppPrefix {
	p := make([]inAppPrefix, len(prefixes))
	for i, pre := range prefixes {
		p[i] = inAppPrefix{pre, strings.LastIndexByte(pre, '/')}
	}
	return &p
}

func defaultInApp() []string {
	out := []string{"main"}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path != "" {
		out = append(out, bi.Main.Path)
	}
	return out
}

// inApp reports whether function belongs to an in-app package. It runs
// for every symbolized frame, so it compares the name with each prefix
// directly and computes the package path only to confirm a match.
func inApp(function string) bool {
	p := inAppPrefixes.Load()
	if p == nil {
		inAppOnce.Do(func() {
			if inAppPrefixes.Load() == nil {
				inAppPrefixes.Store(makeInApp(defaultInApp()))
			}
		})
		p = inAppPrefixes.Load()
	}
	for _, ip := range *p {
		pre := ip.path
		if len(function) <= len(pre) || function[:len(pre)] != pre {
			continue
		}
		switch function[len(pre)] {
		case '/', '.', '_':
			// Below pre, in pre, or in pre's external test package; but
			// "a/b.v2.F" also starts with "a/b.", so check the package.
			slash := ip.slash
			if strings.IndexByte(function[len(pre):], '/') >= 0 {
				slash = strings.LastIndexByte(function, '/')
			}
			pkg := funcPackage(function, slash)
			if pkg == sdkPackage {
				return false // the SDK's own frames, even in its own tests
			}
			// pkg is a prefix of function, and so begins with pre when it
			// is at least as long.
			pkg = strings.TrimSuffix(pkg, "_test")
			if len(pkg) == len(pre) || len(pkg) > len(pre) && pkg[len(pre)] == '/' {
				return true
			}
		}
	}
	return false
}

// sdkPackage is this package's import path. Its own frames (runTrail and
// friends) are never in-app, even in its own tests.
const sdkPackage = "github.com/backtrail/backtrail"

// funcPackage returns the package path of a function name as runtime.Frame
// spells it: "example.com/a/b.(*T).M" → "example.com/a/b". slash is the
// index of the name's last '/', or -1.
func funcPackage(name string, slash int) string {
	dot := strings.IndexByte(name[slash+1:], '.')
	if dot < 0 {
		return name
	}
	return name[:slash+1+dot]
}
