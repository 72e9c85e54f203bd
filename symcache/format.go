// Package symcache reads and writes backtrail's symcache: one compact,
// versioned, little-endian file per (debug id, architecture) that maps
// addresses to source locations with their inline parents. The layout is
// specified in docs/symcache.md; section numbers below refer to it.
//
// A symcache is built once from a debug file (package symbolize does that)
// and then mapped into memory and queried in place: a lookup is a binary
// search over the range blocks, the decoding of at most one block of range
// entries and a walk of inline parents through fixed-width records, with no
// allocation.
//
// # Untrusted input
//
// Parse validates the header, every table's bounds, the files and the
// block index before it returns; each block of range entries is validated
// the first time a lookup reads it (one that fails reads as unknown
// addresses), and each index read from a record is compared with its
// table's size before use (one beyond it reads as absent). So lookups on a
// parsed File never read out of range and never panic, whatever the bytes
// were, and opening a big file costs little. Check validates everything
// at once. The parser and the lookups are fuzzed.
package symcache

import (
	"encoding/binary"
	"math/bits"
)

// Magic starts every symcache file (docs/symcache.md §2).
var Magic = [4]byte{'B', 'T', 'S', 'C'}

// Version is the layout version this package writes and reads. Any change
// to the layout increments it; a file of another version is rejected with
// ErrVersion so callers rebuild it rather than misread it.
const Version = 2

// None marks an absent index: no file, no function, no parent, no
// location.
const None = ^uint32(0)

// Language of the code a function came from (docs/symcache.md §4).
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

const (
	headerSize = 128
	fileSize   = 8 // a strref (§3)
	// blockEntries is how many range entries the writer puts in a block:
	// a lookup decodes half of them on average, and each block costs 8
	// bytes of index. The reader takes blocks of any length.
	blockEntries = 8
)

// Fields of a function record, in their order within the record (§4).
const (
	fnName = iota
	fnNameLen
	fnEntry
	fnDeclFile
	fnDeclLine
	fnLang
	fnFields
)

// Fields of a location record, in their order within the record (§5).
const (
	locFile = iota
	locLine
	locColumn
	locDiscr
	locFunction
	locParent
	locFields
)

// Flags of a range entry's first byte (§6.2); its low four bits are the
// address delta.
const (
	entLine   = 0x10
	entColumn = 0x20
	entDiscr  = 0x40
	entLoc    = 0x80
)

// header is the decoded fixed header (docs/symcache.md §2) and the table
// offsets that follow from it (§1).
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
	nBlocks    uint32
	nRanges    uint32
	entriesLen uint32
	stringsLen uint32
	funcWidths [fnFields]uint8
	locWidths  [locFields]uint8
	imageBase  uint64

	filesOff, funcsOff, locsOff, startsOff, offsOff, entriesOff, stringsOff, size uint64
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
	le.PutUint32(b[92:], h.nBlocks)
	le.PutUint32(b[96:], h.nRanges)
	le.PutUint32(b[100:], h.entriesLen)
	le.PutUint32(b[104:], h.stringsLen)
	copy(b[108:114], h.funcWidths[:])
	copy(b[114:120], h.locWidths[:])
	le.PutUint64(b[120:], h.imageBase)
}

func (h *header) decode(b []byte) {
	h.version = le.Uint32(b[4:])
	h.flags = le.Uint32(b[12:])
	copy(h.debugID[:], b[16:32])
	h.debugAge = le.Uint32(b[32:])
	h.language = Language(b[36])
	h.addrBase = le.Uint64(b[40:])
	h.arch = getRef(b[48:])
	h.codeID = getRef(b[56:])
	h.name = getRef(b[64:])
	h.producer = getRef(b[72:])
	h.nFiles = le.Uint32(b[80:])
	h.nFuncs = le.Uint32(b[84:])
	h.nLocs = le.Uint32(b[88:])
	h.nBlocks = le.Uint32(b[92:])
	h.nRanges = le.Uint32(b[96:])
	h.entriesLen = le.Uint32(b[100:])
	h.stringsLen = le.Uint32(b[104:])
	copy(h.funcWidths[:], b[108:114])
	copy(h.locWidths[:], b[114:120])
	h.imageBase = le.Uint64(b[120:])
}

func putRef(b []byte, r strRef) {
	le.PutUint32(b, r.off)
	le.PutUint32(b[4:], r.len)
}

func getRef(b []byte) strRef { return strRef{le.Uint32(b), le.Uint32(b[4:])} }

func align8(n uint64) uint64 { return (n + 7) &^ 7 }

// recordBits is the size of a packed record with the given field widths.
func recordBits(widths []uint8) uint64 {
	n := uint64(0)
	for _, w := range widths {
		n += uint64(w)
	}
	return n
}

// packedSize is the size of a packed table of n records (§1): the records'
// bits rounded up to bytes, then 8 zero bytes so that any field can be
// read with one 8-byte load.
func packedSize(n uint32, recBits uint64) uint64 {
	if n == 0 {
		return 0
	}
	return (uint64(n)*recBits+7)/8 + 8
}

// layout computes the table offsets and the file size from the counts and
// widths (docs/symcache.md §1). The widths must be at most 32 each.
func (h *header) layout() {
	off := uint64(headerSize)
	h.filesOff = off
	off = align8(off + uint64(h.nFiles)*fileSize)
	h.funcsOff = off
	off = align8(off + packedSize(h.nFuncs, recordBits(h.funcWidths[:])))
	h.locsOff = off
	off = align8(off + packedSize(h.nLocs, recordBits(h.locWidths[:])))
	h.startsOff = off
	off = align8(off + uint64(h.nBlocks)*4)
	h.offsOff = off
	off = align8(off + uint64(h.nBlocks)*4)
	h.entriesOff = off
	off = align8(off + uint64(h.entriesLen))
	h.stringsOff = off
	h.size = off + uint64(h.stringsLen)
}

// width returns the number of bits needed to store values up to max.
func width(max uint32) uint8 { return uint8(bits.Len32(max)) }
