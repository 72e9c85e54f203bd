// Package mmap maps files read-only into memory, so format readers can work
// zero-copy over them, and provides anonymous mappings for data that is
// produced once and then read many times (decompressed debug sections) without
// growing the garbage-collected heap.
package mmap

import (
	"fmt"
	"os"
)

// Region is a mapped byte range. Data is valid until Close.
type Region struct {
	Data []byte
	anon bool
	heap bool
}

// Open maps the whole file at path read-only. An empty file yields an empty
// Region.
func Open(path string) (*Region, error) {
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
	data, err := mapFile(f, int(size))
	if err != nil {
		// Some file systems refuse mappings; reading is always possible.
		data, err = os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return &Region{Data: data, heap: true}, nil
	}
	return &Region{Data: data}, nil
}

// Anon returns a zeroed, writable anonymous mapping of n bytes.
func Anon(n int) (*Region, error) {
	if n == 0 {
		return &Region{}, nil
	}
	data, err := mapAnon(n)
	if err != nil {
		return &Region{Data: make([]byte, n), heap: true}, nil
	}
	return &Region{Data: data, anon: true}, nil
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
	return unmap(data)
}
