// Package symcache reads and writes backtrail's symcache: one compact,
// versioned, little-endian file per (debug id, architecture) that maps
// addresses to source locations with their inline parents. The layout is
// specified in docs/symcache.md; section numbers below refer to it.
//
// A symcache is built once from a debug file (package symbolize does that)
// and then mapped into memory and queried without decoding: a lookup is a
// binary search over a sorted array followed by a walk of inline parents,
// with no allocation.
//
// # Untrusted input
//
// Parse validates the header, every table's bounds and every index stored
// in the file before it returns, so lookups on a parsed File never read out
// of range and never panic, whatever the bytes were. The parser is fuzzed.
package symcache

import "encoding/binary"

// Magic starts every symcache file (docs/symcache.md §1).
var Magic = [4]byte{'B', 'T', 'S', 'C'}

// Version is the layout version this package writes and reads. Any change
// to the layout increments it; a file of another version is rejected with
// ErrVersion so callers rebuild it rather than misread it.
const Version = 1

// None marks an absent index: no file, no function, no parent.
const None = ^uint32(0)

// Language of the code a function came from (docs/symcache.md §5).
type Language uint8

// Languages that change how names are demangled and shown.
const (
	LangUnknown Language = iota
	LangC
	LangCPlusPlus
	LangObjC
	LangObjCPlusPlus
	LangRust
	LangSwift
	LangGo
)

var langNames = [...]string{"unknown", "c", "cpp", "objc", "objcpp", "rust", "swift", "go"}

func (l Language) String() string {
	if int(l) < len(langNames) {
		return langNames[l]
	}
	return "unknown"
}

// Sizes of the fixed records (docs/symcache.md §2–§6).
const (
	headerSize = 128
	fileSize   = 8
	funcSize   = 24
	locSize    = 20
	rangeSize  = 8 // a 4-byte start in one array, a 4-byte location in another
)

// header is the decoded fixed header (docs/symcache.md §2).
type header struct {
	version    uint32
	flags      uint32
	debugID    [16]byte
	debugAge   uint32
	language   Language
	addrBase   uint64
	arch       strRef
	codeID     strRef
	name       strRef
	producer   strRef
	nFiles     uint32
	nFuncs     uint32
	nLocs      uint32
	nRanges    uint32
	stringsOff uint64
	stringsLen uint64
	imageBase  uint64
	filesOff   uint64
	funcsOff   uint64
	locsOff    uint64
	startsOff  uint64
	rlocsOff   uint64
}

type strRef struct{ off, len uint32 }

var le = binary.LittleEndian

func (h *header) encode(b []byte) {
	copy(b[0:4], Magic[:])
	le.PutUint32(b[4:], h.version)
	le.PutUint32(b[8:], headerSize)
	le.PutUint32(b[12:], h.flags)
	copy(b[16:32], h.debugID[:])
	le.PutUint32(b[32:], h.debugAge)
	b[36] = byte(h.language)
	le.PutUint64(b[40:], h.addrBase)
	putRef(b[48:], h.arch)
	putRef(b[56:], h.codeID)
	putRef(b[64:], h.name)
	putRef(b[72:], h.producer)
	le.PutUint32(b[80:], h.nFiles)
	le.PutUint32(b[84:], h.nFuncs)
	le.PutUint32(b[88:], h.nLocs)
	le.PutUint32(b[92:], h.nRanges)
	le.PutUint64(b[96:], h.stringsOff)
	le.PutUint64(b[104:], h.stringsLen)
	le.PutUint64(b[112:], h.imageBase)
	// The table offsets follow from the counts and the alignment rule
	// (§2), so they are not stored; stringsOff/len are, because the string
	// table comes last and its length is free.
}

func putRef(b []byte, r strRef) {
	le.PutUint32(b, r.off)
	le.PutUint32(b[4:], r.len)
}

func getRef(b []byte) strRef { return strRef{le.Uint32(b), le.Uint32(b[4:])} }

func align8(n uint64) uint64 { return (n + 7) &^ 7 }

// layout computes table offsets from the counts (docs/symcache.md §2).
func (h *header) layout() {
	off := uint64(headerSize)
	h.filesOff = off
	off = align8(off + uint64(h.nFiles)*fileSize)
	h.funcsOff = off
	off = align8(off + uint64(h.nFuncs)*funcSize)
	h.locsOff = off
	off = align8(off + uint64(h.nLocs)*locSize)
	h.startsOff = off
	off = align8(off + uint64(h.nRanges)*4)
	h.rlocsOff = off
	off = align8(off + uint64(h.nRanges)*4)
	h.stringsOff = off
}
