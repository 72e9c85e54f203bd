package backtrail

import (
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Trails. A hop is the stack that handed work off (Go, AfterFunc, Wrap,
// Group.Go); a trail is the chain of hops that led to the running work,
// innermost first. Hops are interned stacks, and a trail is an interned node
// {hop, parent}, so a program that hands work off from the same places in
// the same ways allocates no new trail state at all.
//
// The running goroutine's trail is not kept in any per-goroutine table: the
// work runs under runTrail, whose frame holds a marker pointing at the node,
// and the frame-pointer walk that captures a stack finds the innermost such
// frame on the way (fpwalk_fp.go). Elsewhere a table keyed by goroutine id
// stands in (runTrailSlow).

// MaxTrailHops bounds a trail. A hand-off made under a trail this long drops
// the oldest hop, and the trail is marked truncated.
const MaxTrailHops = 16

// LabelKey is the pprof label that carries the trail of a goroutine running
// handed-off work, so goroutine profiles and, with GODEBUG=tracebacklabels=1
// (Go 1.26), crash tracebacks show where the work came from. Its value lists
// the hops innermost first as "function@hash", joined by " < ".
const LabelKey = "backtrail.trail"

// Table sizes, fixed so memory is bounded: about 4096 stacks of up to 512 B
// of addresses plus their symbolized frames, and 4096 trail nodes.
const (
	stackTableSize = 4096
	nodeTableSize  = 4096
)

var (
	stackTable = newTable[stackRecord](stackTableSize)
	nodeTable  = newTable[trailNode](nodeTableSize)
)

// stackRecord is an interned stack. Its fields never change after it is
// published, except frames, which is set on symbolization.
type stackRecord struct {
	hash      uint64
	truncated bool
	pcs       []uintptr
	frames    atomic.Pointer[symbolized]
}

// symbolized is the frames of a stack under one in-app generation; one
// pointer publishes both, so a reader never pairs frames with another
// generation's number. Frames expanded by the runtime also index their
// addresses for the address cache: the frames of pcs[i] are
// frames[start[i]:start[i+1]] for i < len(start)-1. Frames assembled from
// that cache have no index and never enter it. Immutable once published.
type symbolized struct {
	gen    uint64
	frames []Frame
	pcs    []uintptr // the stack record's addresses
	start  []uint16
	// Bit i: the frames of pcs[i] end in an inlined call whose caller is
	// the next address, pcs[i+1] (runtime.Callers lists such call sites
	// as addresses of their own), and so are pcs[i]'s frames only where
	// pcs[i+1] follows it or nothing does.
	withNext uint64
}

func (r *stackRecord) matches(s *Stack) bool {
	return r.hash == s.hash && r.truncated == s.truncated && equalPCs(r.pcs, s.pcs[:s.n])
}

// equalPCs is slices.Equal four addresses a step. A cached Frames call is
// mostly this comparison, and the one-address loop ran at half speed in
// builds that placed it across a 64-byte boundary (25 against 11 ns).
func equalPCs(a, b []uintptr) bool {
	if len(a) != len(b) {
		return false
	}
	b = b[:len(a)]
	i := 0
	for ; i+4 <= len(a); i += 4 {
		if (a[i]^b[i])|(a[i+1]^b[i+1])|(a[i+2]^b[i+2])|(a[i+3]^b[i+3]) != 0 {
			return false
		}
	}
	return slices.Equal(a[i:], b[i:])
}

// stack returns the record as a Stack value.
func (r *stackRecord) stack() Stack {
	s := Stack{n: uint16(len(r.pcs)), truncated: r.truncated, hash: r.hash}
	copy(s.pcs[:], r.pcs)
	return s
}

// lookupStack returns the interned record for s, or nil. It does not allocate.
func lookupStack(s *Stack) *stackRecord {
	return stackTable.find(s.hash, func(r *stackRecord) bool { return r.matches(s) })
}

// internStack returns the interned record for s, creating it if needed.
func internStack(s *Stack) *stackRecord {
	if r := lookupStack(s); r != nil {
		return r
	}
	return addStack(s)
}

// addStack is internStack after a lookup missed: it allocates a record
// and inserts it, unless another goroutine inserted s meanwhile.
func addStack(s *Stack) *stackRecord {
	r := &stackRecord{hash: s.hash, truncated: s.truncated, pcs: slices.Clone(s.pcs[:s.n])}
	return stackTable.insert(s.hash, r, func(o *stackRecord) bool { return o.matches(s) })
}

// trailNode is an interned trail: one hop and the trail it was made under.
// Immutable once published.
type trailNode struct {
	hash      uint64
	stack     *stackRecord
	parent    *trailNode
	depth     int  // hops in the chain, this one included
	truncated bool // older hops were dropped
	label     string
	labels    context.Context // carries the pprof label LabelKey=label
}

func (n *trailNode) matches(rec *stackRecord, parent *trailNode, truncated bool) bool {
	return n.stack == rec && n.parent == parent && n.truncated == truncated
}

// newHop returns the trail for work handed off from stack s under parent.
func newHop(s *Stack, parent *trailNode) *trailNode {
	rec := internStack(s)
	truncated := false
	if parent != nil && parent.depth >= MaxTrailHops {
		parent = truncateTrail(parent, MaxTrailHops-1)
		truncated = true
	}
	if parent != nil && parent.truncated {
		truncated = true
	}
	return internNode(rec, parent, truncated)
}

// truncateTrail returns the innermost keep hops of n as a trail.
func truncateTrail(n *trailNode, keep int) *trailNode {
	if n == nil || keep <= 0 {
		return nil
	}
	parent := truncateTrail(n.parent, keep-1)
	return internNode(n.stack, parent, true)
}

func internNode(rec *stackRecord, parent *trailNode, truncated bool) *trailNode {
	var ph uint64
	if parent != nil {
		ph = parent.hash
	}
	h := hashMix(rec.hash, ph)
	if truncated {
		h = hashMix(h, 1)
	}
	if n := nodeTable.find(h, func(n *trailNode) bool { return n.matches(rec, parent, truncated) }); n != nil {
		return n
	}
	n := &trailNode{hash: h, stack: rec, parent: parent, depth: 1, truncated: truncated}
	if parent != nil {
		n.depth = parent.depth + 1
	}
	n.label = hopLabel(rec)
	if parent != nil {
		n.label += " < " + parent.label
	} else if truncated {
		n.label += " < …"
	}
	n.labels = pprof.WithLabels(context.Background(), pprof.Labels(LabelKey, n.label))
	return nodeTable.insert(h, n, func(o *trailNode) bool { return o.matches(rec, parent, truncated) })
}

// hopLabel names a hop by the function that made it and its stack hash.
// FuncForPC names the innermost function at an inlined call site.
func hopLabel(rec *stackRecord) string {
	name := "?"
	if len(rec.pcs) > 0 {
		if f := runtime.FuncForPC(rec.pcs[0] - 1); f != nil {
			name = f.Name()
		}
	}
	return fmt.Sprintf("%s@%08x", name, uint32(rec.hash>>32))
}

// Trail returns the hand-offs that led to the running work, innermost
// first: Trail()[0] is the stack that submitted the work now running,
// Trail()[1] the stack that submitted that work, and so on. It returns nil
// outside work started through Go, AfterFunc, Wrap or a Group. At most
// MaxTrailHops stacks are returned. Trail walks the current stack and
// allocates only the result.
func Trail() []Stack {
	var out []Stack
	for n := currentTrail(); n != nil; n = n.parent {
		out = append(out, n.stack.stack())
	}
	return out
}

// The goroutine-id table, for architectures without the frame-pointer walk.
// Finding the goroutine id means formatting the goroutine header with
// runtime.Stack, about a microsecond, on every hand-off and every run.
var (
	slowTrails sync.Map // goroutine id → *trailNode
	slowInUse  atomic.Bool
)

func runTrailSlow(n *trailNode, fn func()) {
	slowInUse.Store(true)
	id := goid()
	prev, had := slowTrails.Load(id)
	slowTrails.Store(id, n)
	defer func() {
		if had {
			slowTrails.Store(id, prev)
		} else {
			slowTrails.Delete(id)
		}
	}()
	fn()
}

func currentTrailSlow() *trailNode {
	if !slowInUse.Load() {
		return nil
	}
	if v, ok := slowTrails.Load(goid()); ok {
		return v.(*trailNode)
	}
	return nil
}

// goid returns the current goroutine's id from its traceback header,
// "goroutine 18 [running]:".
func goid() uint64 {
	var buf [64]byte
	b, ok := strings.CutPrefix(string(buf[:runtime.Stack(buf[:], false)]), "goroutine ")
	if !ok {
		return 0
	}
	var id uint64
	for i := 0; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		id = id*10 + uint64(b[i]-'0')
	}
	return id
}
