//go:build !linux

package main

// hugeHeap does nothing: huge pages on request are Linux's.
func hugeHeap(n int) bool { return false }
