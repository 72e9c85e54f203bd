package backtrail

import (
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
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
	gen := inAppGen.Load()
	if frames, ok := cachedFrames(r.pcs, gen); ok {
		r.frames.Store(&symbolized{gen: gen, frames: frames})
		return frames
	}
	sym := symbolizePCs(r.pcs, gen)
	rememberFrames(sym)
	r.frames.Store(sym)
	return sym.frames
}

// The address cache: the frames of one captured address, so that stacks
// sharing callers (most stacks of a program do) are symbolized from the
// frames of their addresses instead of by the runtime again. A slot holds a
// symbolized stack that indexes the address, found again among its at most
// stackCap addresses, so caching a stack's addresses allocates nothing
// beyond its frames. Bounded like the stack table; an entry of an older
// in-app generation can never match again, and the same address's next
// entry takes its slot.
const pcTableSize = 16384

var pcTable = func() *table[symbolized] {
	t := newTable[symbolized](pcTableSize)
	t.stale = func(sym *symbolized) bool { return sym.gen != inAppGen.Load() }
	return t
}()

func pcHash(pc uintptr) uint64 { return hashFinish(uint64(pc) * hashPrime) }

// index returns the position of pc among the addresses sym indexes, or -1.
func (sym *symbolized) index(pc uintptr) int {
	for i, p := range sym.pcs[:len(sym.start)-1] {
		if p == pc {
			return i
		}
	}
	return -1
}

// lookupPC returns a symbolized stack of generation gen that indexes pc,
// and pc's position in it; nil if there is none.
func lookupPC(pc uintptr, gen uint64) (*symbolized, int) {
	i := -1
	sym := pcTable.find(pcHash(pc), func(sym *symbolized) bool {
		if sym.gen != gen {
			return false
		}
		i = sym.index(pc)
		return i >= 0
	})
	return sym, i
}

// cachedFrames assembles the frames of pcs from the address cache; it
// reports false when an address is missing, or follows a signal frame and
// so is not a return address (such addresses are never cached), or when
// its cached frames end in an inlined call whose site was the next address
// there and is not here (withNext). A stack
// shares runs of callers with the stacks symbolized before it, so the
// address after one found at sym.pcs[i] is looked for at sym.pcs[i+1]
// first, and frames adjacent in one symbolized stack are copied at once.
func cachedFrames(pcs []uintptr, gen uint64) ([]Frame, bool) {
	type found struct {
		sym *symbolized
		i   int
	}
	sym, i := lookupPC(pcs[0], gen)
	if sym == nil {
		return nil, false // before at is cleared: a new stack's innermost address is often new too
	}
	var at [stackCap]found
	at[0] = found{sym, i}
	n := int(sym.start[i+1] - sym.start[i])
	for k := 1; k < len(pcs); k++ {
		pc := pcs[k]
		f := at[k-1]
		if f.sym.withNext>>f.i&1 != 0 && pc != f.sym.pcs[f.i+1] {
			return nil, false // the runtime would expand the inlined call's callers here
		}
		f.i++
		switch {
		case f.i < len(f.sym.start)-1 && f.sym.pcs[f.i] == pc:
		case pc == pcs[k-1]: // recursion: the same frames again
			f.i--
		default:
			if f.sym, f.i = lookupPC(pc, gen); f.sym == nil {
				return nil, false
			}
		}
		at[k] = f
		n += int(f.sym.start[f.i+1] - f.sym.start[f.i])
	}
	out := make([]Frame, 0, n)
	for k := 0; k < len(pcs); {
		f, next := at[k], k+1
		for next < len(pcs) && at[next].sym == f.sym && at[next].i == at[next-1].i+1 {
			next++
		}
		out = append(out, f.sym.frames[f.sym.start[f.i]:f.sym.start[f.i+next-k]]...)
		k = next
	}
	return out, true
}

// rememberFrames puts the addresses sym indexes in the address cache,
// unless a newer in-app generation has made sym stale already.
func rememberFrames(sym *symbolized) {
	gen := inAppGen.Load()
	if sym.gen != gen {
		return
	}
	for i, pc := range sym.pcs[:len(sym.start)-1] {
		if i > 0 && pc == sym.pcs[i-1] {
			continue // a run of one address needs one slot
		}
		pcTable.insert(pcHash(pc), sym, func(o *symbolized) bool { return o.gen == gen && o.index(pc) >= 0 })
	}
}

// symbolizePCs expands addresses into frames and indexes them by address
// for the address cache. Recursion repeats an address, which the runtime
// would expand afresh each time, so each run of one address is expanded
// once, into a buffer on the stack, and its frames repeated in the result.
// A stack without runs is expanded straight into the result.
func symbolizePCs(pcs []uintptr, gen uint64) *symbolized {
	var frames, out []Frame // frames: each run's frames once, in order
	var first [stackCap + 1]int
	var sure bool
	if runs := countRuns(pcs); runs == len(pcs) {
		out, sure = expandPCs(newFrames(len(pcs)), pcs, first[:])
		frames = out
	} else {
		uniq := make([]uintptr, 0, runs) // CallersFrames keeps it on the heap
		for i, pc := range pcs {
			if i == 0 || pc != pcs[i-1] {
				uniq = append(uniq, pc)
			}
		}
		var buf [stackCap]Frame
		frames, sure = expandPCs(buf[:0], uniq, first[:])
	}

	// The frames of pcs[i] are out[at[i]:at[i+1]], those of its run.
	var at [stackCap + 1]int
	var withNext uint64
	total, run := 0, 0
	indexed := len(pcs) // how many leading addresses the index covers
	if !sure {
		indexed = 0
	}
	for i := range pcs {
		if i > 0 && pcs[i] != pcs[i-1] {
			run++
		}
		lo, hi := first[run], first[run+1]
		// The address after runtime.sigpanic was expanded as a faulting
		// instruction, not a return address, so neither it nor the
		// signal frame's address is indexed, nor any after them. Nor is
		// a last address whose frames end in an inlined call: the
		// runtime leaves out the outer frames there. Before another
		// address, such frames end there because that address is the
		// inlined call's site (withNext).
		if i < indexed && hi > lo {
			switch last := &frames[hi-1]; {
			case last.Function == "runtime.sigpanic" || last.Inlined && i == len(pcs)-1:
				indexed = i
			case last.Inlined:
				withNext |= 1 << i
			}
		}
		at[i] = total
		total += hi - lo
	}
	at[len(pcs)] = total
	if total > math.MaxUint16 {
		indexed = 0 // beyond what the index can locate
	}
	if out == nil {
		out = make([]Frame, total)
		run = 0
		for i := range pcs {
			if i > 0 && pcs[i] != pcs[i-1] {
				run++
			}
			copy(out[at[i]:at[i+1]], frames[first[run]:first[run+1]])
		}
	}
	if cap(out) > len(out)+len(out)/2+2 {
		out = slices.Clone(out) // it grew for many inlined calls
	}

	// One allocation for the stack's symbolized value and its index.
	x := new(struct {
		sym   symbolized
		start [stackCap + 1]uint16
	})
	for i := range indexed + 1 {
		x.start[i] = uint16(at[i])
	}
	sym := &x.sym
	sym.gen, sym.frames, sym.pcs, sym.start = gen, out[:len(out):len(out)], pcs, x.start[:indexed+1]
	sym.withNext = withNext & (1<<indexed - 1)
	return sym
}

// newFrames returns an empty slice with room for the frames of n addresses
// and a few inlined calls: its capacity is rounded up to the allocation's
// size class.
func newFrames(n int) []Frame { return slices.Grow([]Frame(nil), n+2) }

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

// expandPCs expands addresses into frames, appending them to out, each
// carrying the address it came from. The frames of pcs[i] are
// out[first[i]:first[i+1]]. It reports false if a frame could not be told
// apart from its neighbours.
//
// Most return addresses lie in a function's own code, not in a call
// inlined into it, and have one frame: runtime.FuncForPC gives its name,
// file and line for less than runtime.CallersFrames does, without the
// iterator's allocation and copies. From the first address that is not
// such (an inlined call, no symbols) on, the runtime's expander takes the
// rest of the stack: it needs the address after an inlined call's, and a
// new expander for each such address would cost more than it saves.
//
// One case needs care. A frame interrupted by a signal (a nil dereference,
// say) sits under runtime.sigpanic, and its address is the faulting
// instruction, not a return address; CallersFrames would back up one byte
// into the previous instruction. runtime.Callers stores such addresses plus
// one for this reason, and so do we when we meet sigpanic.
func expandPCs(out []Frame, pcs []uintptr, first []int) ([]Frame, bool) {
	sure := true
	fast := fastFramesOK()
	for k := 0; k < len(pcs); {
		first[k] = len(out)
		pc, n := pcs[k], 1
		if f := physicalFunc(pc, fast); f != nil {
			file, line := f.FileLine(pc - 1) // the call instruction, as CallersFrames backs up to
			out = appendFrame(out, pc, f.Name(), file, line, false)
		} else {
			var ok bool
			out, n, ok = expandRuntime(out, pcs[k:], first[k:])
			sure = sure && ok
		}
		k += n
		if last := len(out) - 1; k < len(pcs) && last >= first[k-1] && out[last].Function == "runtime.sigpanic" && !out[last].Inlined {
			next := append([]uintptr(nil), pcs[k:]...)
			next[0]++
			out, ok := expandPCs(out, next, first[k:])
			for i := first[k]; i < first[k+1]; i++ {
				out[i].PC = pcs[k] // the adjusted address is reported as captured
			}
			return out, sure && ok
		}
	}
	first[len(pcs)] = len(out)
	return out, sure
}

// physicalFunc returns the function whose own code holds pc, or nil when
// pc is in a call inlined into it, has no symbols, or cannot be told
// (fast is fastFramesOK's answer).
func physicalFunc(pc uintptr, fast bool) *runtime.Func {
	if !fast {
		return nil
	}
	// A return address is never a function's entry, but an address
	// under a signal frame can be, and CallersFrames does not back up
	// into the function before it. Only an aligned address can be one.
	if pc%entryAlign == 0 {
		if e := runtime.FuncForPC(pc); e == nil || e.Entry() == pc {
			return nil
		}
	}
	f := runtime.FuncForPC(pc - 1)
	if f == nil || funcInlined(f) {
		return nil
	}
	return f
}

// funcInlined reports whether f, returned by runtime.FuncForPC, describes
// a call inlined into another function. The runtime tells the two kinds
// apart by the first word of the value, which is all ones for an inlined
// call (runtime.funcinl) and a function's entry offset otherwise
// (runtime._func); fastFramesOK says whether inlineProbe found it so.
func funcInlined(f *runtime.Func) bool { return *(*uint32)(unsafe.Pointer(f)) == ^uint32(0) }

// fastFramesOK reports whether funcInlined agrees with
// runtime.CallersFrames on an address in an inlined call and on one that
// is not, so that a runtime laid out differently makes Frames slower
// rather than wrong. It probes on first use, not at start-up.
func fastFramesOK() bool {
	fastFramesOnce.Do(func() { fastFrames = inlineProbe() })
	return fastFrames
}

var (
	fastFramesOnce sync.Once
	fastFrames     bool
)

// entryAlign divides the entry address of every Go function: the Go
// linker's function alignment on the architectures where it is 16 or
// more, 1 elsewhere. inlineProbe checks it on the functions under it.
var entryAlign = func() uintptr {
	switch runtime.GOARCH {
	case "amd64", "arm64", "386", "loong64", "ppc64", "ppc64le", "s390x":
		return 16
	}
	return 1
}()

func inlineProbe() bool {
	var pcs [16]uintptr
	for _, pc := range pcs[:runtime.Callers(0, pcs[:])] {
		if f := runtime.FuncForPC(pc - 1); f != nil && f.Entry()%entryAlign != 0 {
			entryAlign = 1
		}
	}
	inl, phys := probeOuter()
	check := func(pc uintptr, inlined bool) bool {
		f := runtime.FuncForPC(pc - 1)
		fr, _ := runtime.CallersFrames([]uintptr{pc}).Next()
		return f != nil && (fr.Func == nil) == inlined && funcInlined(f) == inlined && f.Name() == fr.Function
	}
	return check(inl, true) && check(phys, false)
}

// probeOuter returns a return address in a call inlined into it
// (probeInner's call of runtime.Callers), and one in its own code.
//
//go:noinline
func probeOuter() (inlined, physical uintptr) {
	var pcs [1]uintptr
	probeInner(pcs[:])
	inlined = pcs[0]
	runtime.Callers(1, pcs[:])
	return inlined, pcs[0]
}

func probeInner(pcs []uintptr) { runtime.Callers(1, pcs) }

// expandRuntime expands addresses into frames with runtime.CallersFrames,
// appending them to out, up to a signal frame's address or to the end,
// and returns how many addresses it expanded. first is as for expandPCs.
func expandRuntime(out []Frame, pcs []uintptr, first []int) ([]Frame, int, bool) {
	ci := runtime.CallersFrames(pcs)
	k := -1 // index in pcs of the address being expanded
	sure := true
	inlined := false  // the last frame is an inlined call
	var entry uintptr // of the last frame's function
	for {
		f, more := ci.Next()
		// The frames of one address are its inlined calls, innermost
		// first, then its physical frame. The first carries the address
		// less one (the call instruction), or the address itself at a
		// function's entry; the outer ones of an inlined call carry the
		// address of the call inside their function, which no return
		// address can equal less one. So a frame starts the next address
		// after a physical frame, in another function, or when it
		// carries the next address less one (runtime.Callers stores
		// those addresses, and the runtime then takes them in turn). The
		// runtime drops addresses without symbols: the frame's address
		// is the first ahead that it matches.
		if k < 0 || !inlined || f.Entry != entry || k+1 < len(pcs) && f.PC == pcs[k+1]-1 {
			j := k + 1
			for j < len(pcs) && f.PC != pcs[j]-1 && f.PC != pcs[j] {
				j++
			}
			if j == len(pcs) {
				sure, j = false, max(k, 0)
			}
			for k < j {
				k++
				first[k] = len(out)
			}
		}
		inlined, entry = f.Func == nil, f.Entry
		if f.Function != "" || f.PC != 0 {
			out = appendFrame(out, pcs[k], f.Function, f.File, f.Line, f.Func == nil && f.Function != "")
		}
		if f.Function == "runtime.sigpanic" && f.Func != nil {
			return out, k + 1, sure // expandPCs adjusts the next address
		}
		if !more {
			for k < len(pcs) {
				k++
				first[k] = len(out)
			}
			return out, len(pcs), sure
		}
	}
}

// appendFrame appends the frame of function in file at line, expanded
// from pc, unless it is a wrapper.
func appendFrame(out []Frame, pc uintptr, function, file string, line int, inlined bool) []Frame {
	if isWrapper(function, file) {
		return out
	}
	// Field by field: a Frame copied whole takes the bulk write barrier
	// while the GC runs, two strings don't.
	if len(out) == cap(out) {
		out = slices.Grow(out, 1)
	}
	out = out[:len(out)+1]
	fr := &out[len(out)-1]
	fr.PC, fr.Line = pc, line
	fr.Function, fr.File = function, file
	fr.Inlined = inlined
	fr.InApp = inApp(function)
	return out
}

// isWrapper reports whether the frame of function name in file is a
// compiler-generated wrapper: the closure a go or defer statement with
// arguments becomes ("f.gowrap1"), or a method wrapper ("<autogenerated>").
// runtime.Callers leaves these out and so do we.
func isWrapper(name, file string) bool {
	if file == "<autogenerated>" {
		return true
	}
	i := len(name)
	for i > 0 && '0' <= name[i-1] && name[i-1] <= '9' {
		i--
	}
	// Wrapper names end in "wrap" and a number; most names end in neither,
	// closures in "func" and a number.
	if i == len(name) || i == 0 || name[i-1] != 'p' {
		return false
	}
	return strings.HasSuffix(name[:i], ".gowrap") || strings.HasSuffix(name[:i], ".deferwrap")
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
// another slash, from which inApp finds the package. plain says that the
// package of such a name ends at its first dot after the prefix, as it
// does unless the prefix's last element has a dot or ends in "_test".
type inAppPrefix struct {
	path  string
	slash int
	plain bool
}

func makeInApp(prefixes []string) *[]inAppPrefix {
	p := make([]inAppPrefix, len(prefixes))
	for i, pre := range prefixes {
		slash := strings.LastIndexByte(pre, '/')
		plain := !strings.Contains(pre[slash+1:], ".") && !strings.HasSuffix(pre, "_test")
		p[i] = inAppPrefix{pre, slash, plain}
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
		if len(function) <= len(pre) || len(pre) > 0 && function[0] != pre[0] || function[:len(pre)] != pre {
			continue
		}
		rest := function[len(pre):]
		if ip.plain {
			// The common cases, the general rule below taken apart: a
			// function in pre or in its external test package, with no
			// slash after pre (in "a/b.v2/c.F" the package is a/b.v2/c).
			n := -1 // the length of the package's rest
			if rest[0] == '.' {
				n = 0
			} else if strings.HasPrefix(rest, "_test.") {
				n = len("_test")
			}
			if n >= 0 && strings.IndexByte(rest[n+1:], '/') < 0 {
				return function[:len(pre)+n] != sdkPackage
			}
		}
		switch rest[0] {
		case '/', '.', '_':
			// Below pre, in pre, or in pre's external test package; but
			// "a/b.v2.F" also starts with "a/b.", so check the package.
			slash := ip.slash
			if strings.IndexByte(rest, '/') >= 0 {
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
