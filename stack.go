package backtrail

import (
	"strconv"
	"strings"
	"sync/atomic"
)

// stackCap is the most frames a Stack can hold, and so the ceiling of
// SetMaxDepth. It sets the size of a Stack value (about 530 bytes), which
// Callers must zero and its caller copy: doubling it costs about 40% more
// per capture at depth 32, so the default depth is also the ceiling.
const stackCap = 64

// defaultMaxDepth is the depth Callers captures until SetMaxDepth changes it.
const defaultMaxDepth = 64

// maxDepth is read on every capture; an atomic keeps SetMaxDepth safe to
// call at any time without a lock on the hot path.
var maxDepth atomic.Int32

func init() { maxDepth.Store(defaultMaxDepth) }

// SetMaxDepth sets how many frames Callers and the trail functions capture,
// clamped to [1, 64], and returns the previous value. The default, 64, is
// also the most a Stack holds; lower it to make deep captures cheaper.
// Capture cost is linear in the depth actually walked. Safe for concurrent
// use; captures already under way keep the old value.
func SetMaxDepth(n int) int {
	n = min(max(n, 1), stackCap)
	return int(maxDepth.Swap(int32(n)))
}

// Stack is a captured call stack: the physical return addresses of the
// goroutine that captured it, innermost first, as runtime.Callers would give
// them before inline expansion. It is a value (about 530 bytes) that needs no
// allocation to capture, compare or hash; symbolize it with Frames.
//
// The zero Stack is empty. Stacks are comparable with ==, which compares
// every address. The methods take a pointer so that calling one does not
// copy the Stack; keep a captured Stack in a variable to call them.
type Stack struct {
	n         uint16
	truncated bool // the walk stopped at the depth limit, not at the goroutine's first frame
	hash      uint64
	pcs       [stackCap]uintptr
}

// Len returns the number of frames.
func (s *Stack) Len() int { return int(s.n) }

// PC returns the i'th return address, innermost first. It panics if i is
// out of range, like a slice index.
func (s *Stack) PC(i int) uintptr { return s.pcs[:s.n][i] }

// PCs returns a copy of the return addresses, innermost first. It allocates;
// use Len and PC to avoid that.
func (s *Stack) PCs() []uintptr { return append([]uintptr(nil), s.pcs[:s.n]...) }

// Truncated reports whether the capture stopped at the depth limit with
// older frames left out.
func (s *Stack) Truncated() bool { return s.truncated }

// Hash returns a 64-bit hash of the addresses, computed during capture.
// Equal stacks have equal hashes; Frames, trails and audit counts key their
// caches by it.
func (s *Stack) Hash() uint64 { return s.hash }

// String returns the symbolized stack, one "function\n\tfile:line" pair per
// frame like a Go traceback, innermost first.
func (s *Stack) String() string {
	var b strings.Builder
	for _, f := range s.Frames() {
		b.WriteString(f.Function)
		if f.Inlined {
			b.WriteString(" (inlined)")
		}
		b.WriteString("\n\t")
		b.WriteString(f.File)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(f.Line))
		b.WriteByte('\n')
	}
	return b.String()
}

// makeStack builds a Stack from addresses in pcs, for the capture fallbacks
// and for tests. It keeps at most stackCap of them.
func makeStack(pcs []uintptr, truncated bool) Stack {
	var s Stack
	n := copy(s.pcs[:], pcs)
	s.n = uint16(n)
	s.truncated = truncated || n < len(pcs)
	s.hash = hashPCs(s.pcs[:n])
	return s
}

// Hashing: FNV-1a over whole words, then a finalizer so that the low bits
// used to index tables depend on every address. The capture walk inlines the
// same two steps.
const (
	hashSeed  = 0xcbf29ce484222325
	hashPrime = 0x100000001b3
)

func hashPCs(pcs []uintptr) uint64 {
	h := uint64(hashSeed)
	for _, pc := range pcs {
		h = (h ^ uint64(pc)) * hashPrime
	}
	return hashFinish(h)
}

// hashFinish is the murmur3 64-bit finalizer.
func hashFinish(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// hashMix combines two hashes, for keys made of several parts.
func hashMix(a, b uint64) uint64 { return hashFinish(a*hashPrime ^ b) }
