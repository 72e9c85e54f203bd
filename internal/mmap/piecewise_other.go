//go:build !linux

package mmap

import "os"

// mapPiecewise maps f read-only; only Linux maps file pages in 2 MB pieces.
func mapPiecewise(f *os.File, n int) ([]byte, error) { return mapFile(f, n, false) }

func unmapPiecewise(b []byte) error { return unmap(b) }
