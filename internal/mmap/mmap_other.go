//go:build !unix

package mmap

import (
	"errors"
	"os"
)

var errNoMmap = errors.New("mmap not supported")

func mapFile(f *os.File, n int) ([]byte, error) { return nil, errNoMmap }
func mapAnon(n int) ([]byte, error)             { return nil, errNoMmap }
func unmap(b []byte) error                      { return nil }
