//go:build !unix

package mmap

import (
	"errors"
	"os"
)

var errNoMmap = errors.New("mmap not supported")

func mapFile(f *os.File, n int, writable bool) ([]byte, error) { return nil, errNoMmap }
func unmap(b []byte) error                                     { return nil }
