// Package mmap maps files read-only into memory, so format readers can work
// zero-copy over them, and provides writable mappings backed by unlinked
// temporary files for data that is produced once and then read many times
// (decompressed debug sections) without growing the garbage-collected
// heap. Pages of either kind can be released and are read back from their
// file when used again, so a long pass over a big file needs only the
// resident memory of what it is working on.
package mmap

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"sync"
	"unsafe"
)

// Region is a mapped byte range. Data is valid until Close.
type Region struct {
	Data      []byte
	heap      bool // a copy on the heap, where mapping was refused
	piecewise bool // mapped by mapPiecewise
}

// Open maps the whole file at path read-only. An empty file yields an empty
// Region.
func Open(path string) (*Region, error) { return open(path, false) }

// OpenPiecewise is Open for a big file read a piece at a time, whose pieces
// are released as they are done with (Release): the kernel maps only the
// pages read and their neighbours, never a whole 2 MB folio of the page
// cache, so that resident memory follows what is in use. Open's mappings
// may take 2 MB at a read, which makes lookups in a symcache faster (fewer
// TLB misses); building one from a 478 MB DWARF file whose page cache held
// such folios peaked at 460–490 MB resident that way, 210–215 MB this way,
// in the same time.
func OpenPiecewise(path string) (*Region, error) { return open(path, true) }

func open(path string, piecewise bool) (*Region, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("mmap %s: not a regular file", path)
	}
	size := fi.Size()
	if size == 0 {
		return &Region{}, nil
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("mmap %s: file too large (%d bytes)", path, size)
	}
	var data []byte
	if piecewise {
		data, err = mapPiecewise(f, int(size))
	} else {
		data, err = mapFile(f, int(size), false)
	}
	if err != nil {
		// Some file systems refuse mappings; reading is always possible.
		data, err = os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return &Region{Data: data, heap: true}, nil
	}
	r := register(data)
	r.piecewise = piecewise
	return r, nil
}

// Temp returns a zeroed, writable mapping of n bytes backed by an unlinked
// temporary file, whose pages Release can drop without losing them. Where
// no temporary file can be made or mapped, the bytes are on the heap.
func Temp(n int) (*Region, error) {
	if n == 0 {
		return &Region{}, nil
	}
	f, err := os.CreateTemp("", "mmap-*")
	if err != nil {
		return &Region{Data: make([]byte, n), heap: true}, nil
	}
	defer f.Close()
	// Unlinked, the file lives as long as its mapping. Systems that cannot
	// remove an open file keep it until the process ends.
	os.Remove(f.Name())
	if err := f.Truncate(int64(n)); err != nil {
		return &Region{Data: make([]byte, n), heap: true}, nil
	}
	data, err := mapFile(f, n, true)
	if err != nil {
		return &Region{Data: make([]byte, n), heap: true}, nil
	}
	return register(data), nil
}

// Close unmaps the region. Data must not be used afterwards.
func (r *Region) Close() error {
	if r == nil || r.Data == nil {
		return nil
	}
	data := r.Data
	r.Data = nil
	if r.heap {
		return nil
	}
	unregister(data)
	if r.piecewise {
		return unmapPiecewise(data)
	}
	return unmap(data)
}

// mapped holds the file-backed mappings made by this package, by address:
// only their pages can be released without losing what they hold. A
// symcache build of a split build maps one file per unit, thousands of
// them, and releases pages of each: finding a region is a binary search.
var mapped struct {
	mu      sync.Mutex
	regions [][]byte // sorted by address; mappings do not overlap
}

func base(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }

// regionAt returns the index of the last region starting at or below p.
func regionAt(p uintptr) int {
	i, found := slices.BinarySearchFunc(mapped.regions, p, func(r []byte, p uintptr) int { return cmp.Compare(base(r), p) })
	if found {
		return i
	}
	return i - 1
}

func register(data []byte) *Region {
	mapped.mu.Lock()
	mapped.regions = slices.Insert(mapped.regions, regionAt(base(data))+1, data)
	mapped.mu.Unlock()
	return &Region{Data: data}
}

func unregister(data []byte) {
	mapped.mu.Lock()
	defer mapped.mu.Unlock()
	if i := regionAt(base(data)); i >= 0 && base(mapped.regions[i]) == base(data) {
		mapped.regions = slices.Delete(mapped.regions, i, i+1)
	}
}

// Release tells the kernel that the pages holding b are not needed for
// now: they leave the process's resident memory and are read back from
// their file when next used, so b's contents never change. It does nothing
// unless b lies in a mapping made by Open or Temp, and on systems without
// madvise. Pages are whole: neighbours of b that share its first or last
// page are released too, at the cost of reading them again.
func Release(b []byte) {
	if len(b) == 0 {
		return
	}
	start := base(b)
	end := start + uintptr(len(b))
	mapped.mu.Lock()
	var region []byte
	if i := regionAt(start); i >= 0 && end <= base(mapped.regions[i])+uintptr(len(mapped.regions[i])) {
		region = mapped.regions[i]
	}
	mapped.mu.Unlock()
	if region == nil {
		return
	}
	// Offsets of b's first and last pages within the region, which
	// starts on a page boundary.
	rb := base(region)
	page := uintptr(os.Getpagesize())
	lo := (start - rb) &^ (page - 1)
	hi := min((end-rb+page-1)&^(page-1), uintptr(len(region)))
	release(region[lo:hi])
}
