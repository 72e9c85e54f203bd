package mmap

import "syscall"

// release drops the pages of b, which is page-aligned and inside a shared
// file mapping: MADV_DONTNEED leaves their contents in the file.
func release(b []byte) { syscall.Madvise(b, syscall.MADV_DONTNEED) }
