//go:build !linux

package main

// ignoreChildSignals does nothing where dumps are not supported.
func ignoreChildSignals() (restore func()) { return func() {} }
