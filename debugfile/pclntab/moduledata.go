package pclntab

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/backtrail/backtrail/internal/bin"
)

// ErrNoModuledata is returned by FindModuledata when no region holds a
// moduledata that points to the table.
var ErrNoModuledata = errors.New("pclntab: no moduledata points to the table")

// Moduledata is what this package reads of runtime.firstmoduledata, the
// linker-written record of a Go module's layout. Addresses are as linked.
type Moduledata struct {
	Addr          uint64 // where the moduledata is
	MinPC, MaxPC  uint64
	Text, Etext   uint64 // runtime.text, runtime.etext
	Types, Etypes uint64 // Go 1.7+
	Rodata        uint64 // Go 1.18+
	GoFunc        uint64 // go:func.*, the base of funcdata offsets; Go 1.18+
}

// Word indexes of moduledata fields by layout, from runtime/symtab.go of each
// release. Every layout starts with a pointer to the table: the pclntable
// slice before Go 1.16, the pcHeader pointer since.
//
//	Go 1.5–1.15:  pclntable, ftab, filetab []; findfunctab, minpc, maxpc,
//	              text, etext, noptrdata..enoptrbss (8), end, gcdata, gcbss,
//	              types, etypes (1.7+)
//	Go 1.16–1.17: pcHeader; funcnametab, cutab, filetab, pctab, pclntable,
//	              ftab []; findfunctab, minpc, maxpc, text, etext, ...
//	Go 1.18–1.19: ... gcbss, types, etypes, rodata, gofunc
//	Go 1.20+:     covctrs, ecovctrs inserted after enoptrbss
type mdLayout struct {
	ftab, minpc, text, types, rodata, gofunc int
}

func layoutFor(v Version) mdLayout {
	switch v {
	case Version12:
		return mdLayout{ftab: 3, minpc: 10, text: 12, types: 25, rodata: -1, gofunc: -1}
	case Version116:
		return mdLayout{ftab: 16, minpc: 20, text: 22, types: 35, rodata: -1, gofunc: -1}
	case Version118:
		return mdLayout{ftab: 16, minpc: 20, text: 22, types: 35, rodata: 37, gofunc: 38}
	default:
		return mdLayout{ftab: 16, minpc: 20, text: 22, types: 37, rodata: 39, gofunc: 40}
	}
}

// FindModuledata finds the moduledata of the module whose table is pclntab,
// linked at address addr, by scanning mem for a pointer to it. Pass the data
// sections: since Go 1.26 .go.module (__DATA,__go_module), before that
// .noptrdata (__DATA,__noptrdata); passing more only costs time. Each
// candidate must also point to the table's function table and agree with its
// size. The cost is linear in the size of mem.
func FindModuledata(pclntab []byte, addr uint64, mem []Region) (Moduledata, error) {
	h, err := readHeader(pclntab)
	if err != nil {
		return Moduledata{}, err
	}
	return findModuledata(h, addr, mem)
}

func findModuledata(h header, addr uint64, mem []Region) (Moduledata, error) {
	l := layoutFor(h.ver)
	ps := uint64(h.ptrSize)
	words := uint64(max(l.types+2, l.gofunc+1))
	// The first field is a pointer to the table: search for its bytes.
	var pat [8]byte
	if h.big {
		binary.BigEndian.PutUint64(pat[:], addr<<(64-8*ps))
	} else {
		binary.LittleEndian.PutUint64(pat[:], addr)
	}
	if ps == 4 && addr>>32 != 0 {
		return Moduledata{}, fmt.Errorf("%w: address %#x too wide for 4-byte pointers", ErrNoModuledata, addr)
	}
	for _, r := range mem {
		for pos := 0; pos < len(r.Data); {
			k := bytes.Index(r.Data[pos:], pat[:ps])
			if k < 0 {
				break
			}
			off := uint64(pos + k)
			pos += k + 1
			// Fields are pointer-aligned in memory.
			if (r.Addr+off)%ps != 0 || uint64(len(r.Data))-off < words*ps {
				continue
			}
			if md, ok := readModuledata(h, l, r.Data[off:off+words*ps], r.Addr+off, addr); ok {
				return md, nil
			}
		}
	}
	return Moduledata{}, fmt.Errorf("%w at %#x", ErrNoModuledata, addr)
}

// readModuledata decodes and checks a candidate moduledata at p, whose first
// word is known to point to the table at addr.
func readModuledata(h header, l mdLayout, p []byte, at, addr uint64) (Moduledata, bool) {
	ps := h.ptrSize
	b := bin.New("moduledata", at, p, h.big)
	w := func(i int) uint64 {
		b.Seek(i * ps)
		return b.Uint(ps)
	}
	// Where the function table is, and how long the ftab slice is.
	ftab := addr + uint64(h.size)
	if h.ver >= Version116 {
		ftab = addr + h.offs[4]
		if w(1) != addr+h.offs[0] { // funcnametab
			return Moduledata{}, false
		}
	}
	if w(l.ftab) != ftab || w(l.ftab+1) != h.nfunc+1 {
		return Moduledata{}, false
	}
	md := Moduledata{
		Addr:  at,
		MinPC: w(l.minpc), MaxPC: w(l.minpc + 1),
		Text: w(l.text), Etext: w(l.text + 1),
		Types: w(l.types), Etypes: w(l.types + 1),
	}
	if l.gofunc >= 0 {
		md.Rodata, md.GoFunc = w(l.rodata), w(l.gofunc)
	}
	if b.Err() != nil || md.MinPC > md.MaxPC || md.Text > md.Etext || md.Types > md.Etypes {
		return Moduledata{}, false
	}
	return md, true
}
